/**
 * The union of parse workers' own lexicons, by term: the index's terms in code point order
 * (termIDs are their ranks), and for each worker where each of its terms landed (finals, in the
 * order of the worker's sorted terms). A k-way merge of the sorted lists through the term heap
 * that segment merges use: each term is compared, never hashed or sorted again.
 */
import { TermHeap, type TermCursor } from './term-heap.js';

export interface LexiconUnion {
  /** Every distinct term, in code point order. */
  terms: string[];
  /** finals[w][p]: the termID of worker w's p-th term in code point order. */
  finals: Uint32Array[];
}

export function uniteLexicons(lists: readonly (readonly string[])[]): LexiconUnion {
  const cursors: TermCursor[] = lists.map((terms, index) => ({ terms, at: 0, index }));
  const finals = lists.map((l) => new Uint32Array(l.length));
  const terms: string[] = [];
  const heap = new TermHeap(cursors);
  const popped: TermCursor[] = [];
  while (heap.size > 0) {
    const term = heap.top.terms[heap.top.at]!;
    const t = terms.length;
    terms.push(term);
    popped.length = 0;
    while (heap.size > 0 && heap.top.terms[heap.top.at] === term) popped.push(heap.pop());
    for (const c of popped) {
      finals[c.index]![c.at] = t;
      if (++c.at < c.terms.length) heap.push(c);
    }
  }
  return { terms, finals };
}
