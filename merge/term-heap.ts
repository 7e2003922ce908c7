/** A k-way merge of sorted term lists by term: segments' lexicons (segment-merge.ts) and parse workers' own (lexicon-union.ts). */
import { BinaryHeap } from './binary-heap.js';
import { compareTerms, hasHighUnits } from './term-order.js';

/** One input of the merge: its terms in code point order, the next one's place, and its rank among the inputs (which breaks ties). */
export interface TermCursor {
  readonly terms: readonly string[];
  at: number;
  readonly index: number;
}

/**
 * A min-heap of the inputs by their current term in code point order. Where no term of any input
 * has a code unit at or above U+D800 the engine's own string comparison gives that order.
 */
export class TermHeap<T extends TermCursor> extends BinaryHeap<T> {
  /** `plain`: whether every term the inputs will hold is free of such units (found from their current terms when not given). */
  constructor(inputs: readonly T[], plain = inputs.every((i) => !i.terms.some(hasHighUnits))) {
    super(
      plain
        ? (a, b) => {
            const x = a.terms[a.at]!;
            const y = b.terms[b.at]!;
            return x < y || (x === y && a.index < b.index);
          }
        : (a, b) => {
            const c = compareTerms(a.terms[a.at]!, b.terms[b.at]!);
            return c < 0 || (c === 0 && a.index < b.index);
          },
    );
    for (const input of inputs) if (input.terms.length > 0) this.push(input);
  }
}
