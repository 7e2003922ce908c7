/**
 * Values kept in memory between queries, least recently used first out, up to a budget of bytes
 * (each value's size as `sizeOf` tells it). The reader keeps long postings lists (ListCache) and
 * chunks of document rows (row-chunks.ts) this way.
 */
export class BudgetCache<K, V> {
  /** In order of last use, oldest first (a Map iterates in insertion order). */
  private readonly values = new Map<K, V>();
  private bytes = 0;

  /** `budget`: bytes kept at most; 0 keeps nothing. */
  constructor(
    readonly budget: number,
    private readonly sizeOf: (value: V) => number,
  ) {}

  get(key: K): V | undefined {
    const value = this.values.get(key);
    if (value !== undefined) {
      this.values.delete(key);
      this.values.set(key, value);
    }
    return value;
  }

  /** Keeps `value` (unless it alone is over the budget), dropping the least recently used; returns it. */
  put(key: K, value: V): V {
    const size = this.sizeOf(value);
    if (size > this.budget) return value;
    this.bytes += size;
    this.values.set(key, value);
    for (const [k, v] of this.values) {
      if (this.bytes <= this.budget) break;
      this.values.delete(k);
      this.bytes -= this.sizeOf(v);
    }
    return value;
  }

  /** Bytes kept now. */
  get size(): number {
    return this.bytes;
  }
}
