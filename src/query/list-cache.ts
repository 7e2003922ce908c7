/**
 * Postings lists kept in memory between queries, least recently used first out, up to a budget
 * of bytes. A query log repeats its frequent terms, whose lists are the long ones: a 1 GB crawl's
 * most frequent term has a 600 KB list, read whole from postings.bin by each query that holds it
 * (a query's pruning then decodes a few % of its blocks).
 */
export class ListCache {
  /** In order of last use, oldest first (a Map iterates in insertion order). */
  private readonly lists = new Map<string, Uint8Array>();
  private bytes = 0;

  /** `budget`: bytes kept at most; 0 keeps nothing. */
  constructor(readonly budget: number) {}

  get(key: string): Uint8Array | undefined {
    const list = this.lists.get(key);
    if (list) {
      this.lists.delete(key);
      this.lists.set(key, list);
    }
    return list;
  }

  /** Keeps `list` (unless it alone is over the budget), dropping the least recently used; returns it. */
  put(key: string, list: Uint8Array): Uint8Array {
    if (list.length > this.budget) return list;
    this.bytes += list.length;
    this.lists.set(key, list);
    for (const [k, l] of this.lists) {
      if (this.bytes <= this.budget) break;
      this.lists.delete(k);
      this.bytes -= l.length;
    }
    return list;
  }

  /** Bytes kept now. */
  get size(): number {
    return this.bytes;
  }
}
