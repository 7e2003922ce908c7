/** A k-way merge of sorted term lists by term: segments' lexicons (segment-merge.ts) and parse workers' own (lexicon-union.ts). */
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
export class TermHeap<T extends TermCursor> {
  private readonly heap: T[] = [];
  private readonly less: (a: T, b: T) => boolean;

  constructor(inputs: readonly T[]) {
    const plain = inputs.every((i) => !i.terms.some(hasHighUnits));
    this.less = plain
      ? (a, b) => {
          const x = a.terms[a.at]!;
          const y = b.terms[b.at]!;
          return x < y || (x === y && a.index < b.index);
        }
      : (a, b) => {
          const c = compareTerms(a.terms[a.at]!, b.terms[b.at]!);
          return c < 0 || (c === 0 && a.index < b.index);
        };
    for (const input of inputs) if (input.terms.length > 0) this.push(input);
  }

  get size(): number {
    return this.heap.length;
  }

  get top(): T {
    return this.heap[0]!;
  }

  push(input: T): void {
    const h = this.heap;
    let i = h.length;
    h.push(input);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  pop(): T {
    const h = this.heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
        if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}

