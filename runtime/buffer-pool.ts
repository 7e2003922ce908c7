/**
 * Large ArrayBuffers a thread hands from one build to the next (a live writer's feed thread
 * builds a segment a second): a fresh buffer pays its page faults again as it is first written,
 * ~5.7 us a 4 KiB page on the 2-core VM, 23 ms for a 16 MiB block and as much for the sort's
 * scratch. Buffers given back are reused by the next take of at most their size; their contents
 * are whatever was left in them.
 */
export class BufferPool {
  private readonly free: ArrayBuffer[] = [];

  /** `keep`: the most buffers held while unused (the rest are left to the collector). */
  constructor(private readonly keep = 4) {}

  /** A buffer of at least `bytes` bytes: the smallest free one that is large enough, else a new one. */
  take(bytes: number): ArrayBuffer {
    let best = -1;
    for (let i = 0; i < this.free.length; i++) {
      const b = this.free[i]!;
      if (b.byteLength >= bytes && (best < 0 || b.byteLength < this.free[best]!.byteLength)) best = i;
    }
    return best >= 0 ? this.free.splice(best, 1)[0]! : new ArrayBuffer(bytes);
  }

  /** A buffer the caller no longer uses (nor any view of it). */
  give(buffer: ArrayBuffer): void {
    if (buffer.byteLength === 0 || this.free.includes(buffer)) return;
    this.free.push(buffer);
    if (this.free.length > this.keep) this.free.sort((a, b) => b.byteLength - a.byteLength).length = this.keep;
  }
}
