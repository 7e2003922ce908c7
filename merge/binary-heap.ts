/** A binary min-heap under a caller's order: the term heap of lexicon merges and the pair-order heap of the positions merge. */
export class BinaryHeap<T> {
  private readonly heap: T[] = [];

  constructor(private readonly less: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.heap.length;
  }

  get top(): T {
    return this.heap[0]!;
  }

  /** The entry after the top in heap order (the lesser of its children), or undefined. */
  second(): T | undefined {
    const h = this.heap;
    if (h.length < 2) return undefined;
    return h.length === 2 || this.less(h[1]!, h[2]!) ? h[1] : h[2];
  }

  push(x: T): void {
    const h = this.heap;
    let i = h.length;
    h.push(x);
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
      this.siftTop();
    }
    return top;
  }

  /** Restores heap order after the top entry's key grew in place. */
  siftTop(): void {
    const h = this.heap;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
      if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}
