/**
 * The k best (docID, score) pairs seen so far: a min-heap whose root is the worst kept (lowest
 * score, then highest docID), so ties rank by the lower docID whatever order documents come in.
 */
export class TopK {
  // Plain arrays, filled in order: V8 keeps them on its heap, where a typed array of k > 8
  // doubles is a separate allocation (a query makes several heaps).
  private readonly docs: number[] = [];
  private readonly scores: number[] = [];
  size = 0;

  constructor(readonly k: number) {}

  /** The score a new document must beat once the heap is full (-Infinity before). */
  get threshold(): number {
    return this.size < this.k ? -Infinity : this.scores[0]!;
  }

  /** (d1, s1) ranks below (d2, s2). */
  private static below(s1: number, d1: number, s2: number, d2: number): boolean {
    return s1 < s2 || (s1 === s2 && d1 > d2);
  }

  push(doc: number, score: number): void {
    const { docs, scores } = this;
    if (this.size < this.k) {
      let i = this.size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!TopK.below(score, doc, scores[parent]!, docs[parent]!)) break;
        docs[i] = docs[parent]!;
        scores[i] = scores[parent]!;
        i = parent;
      }
      docs[i] = doc;
      scores[i] = score;
      return;
    }
    if (!TopK.below(scores[0]!, docs[0]!, score, doc)) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= this.size) break;
      const c = l + 1 < this.size && TopK.below(scores[l + 1]!, docs[l + 1]!, scores[l]!, docs[l]!) ? l + 1 : l;
      if (!TopK.below(scores[c]!, docs[c]!, score, doc)) break;
      docs[i] = docs[c]!;
      scores[i] = scores[c]!;
      i = c;
    }
    docs[i] = doc;
    scores[i] = score;
  }

  /** [docId, score] best first. */
  sorted(): [number, number][] {
    const out: [number, number][] = [];
    for (let i = 0; i < this.size; i++) out.push([this.docs[i]!, this.scores[i]!]);
    return out.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  }
}
