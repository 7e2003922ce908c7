/**
 * A Map past V8's limit of 2^24 entries (a Map refuses its 16,777,217th key: "Map maximum size
 * exceeded"): a chain of Maps, a new one started when the last is full. A crawl's vocabulary
 * passes that many terms, so the term dictionaries use this. Keys are found in the first Map
 * that has them; with one Map (every crawl of fewer terms) a lookup is one Map lookup.
 */
import { integerFromEnv } from './env-knobs.js';

export const MAP_LIMIT = 2 ** 24 - 1;

/** Entries per Map: MAP_LIMIT, or GPUINDEX_MAP_LIMIT (tests cross the boundary with a small crawl). */
const entriesPerMap = (): number => integerFromEnv('GPUINDEX_MAP_LIMIT', 1, MAP_LIMIT) ?? MAP_LIMIT;

export class BigMap<K, V> {
  private readonly maps: Map<K, V>[] = [new Map()];
  private last: Map<K, V> = this.maps[0]!;

  /** `limit`: entries per Map (tests lower it to cross a boundary with few keys). */
  constructor(private readonly limit = entriesPerMap()) {}

  get(key: K): V | undefined {
    const maps = this.maps;
    if (maps.length === 1) return this.last.get(key);
    for (let i = 0; i < maps.length; i++) {
      const v = maps[i]!.get(key);
      if (v !== undefined || maps[i]!.has(key)) return v;
    }
    return undefined;
  }

  has(key: K): boolean {
    for (const m of this.maps) if (m.has(key)) return true;
    return false;
  }

  set(key: K, value: V): this {
    if (this.maps.length > 1) {
      for (const m of this.maps)
        if (m.has(key)) {
          m.set(key, value);
          return this;
        }
    } else if (this.last.has(key)) {
      this.last.set(key, value);
      return this;
    }
    if (this.last.size >= this.limit) {
      this.last = new Map();
      this.maps.push(this.last);
    }
    this.last.set(key, value);
    return this;
  }

  delete(key: K): boolean {
    for (const m of this.maps) if (m.delete(key)) return true;
    return false;
  }

  get size(): number {
    let n = 0;
    for (const m of this.maps) n += m.size;
    return n;
  }

  clear(): void {
    this.maps.length = 1;
    this.last = this.maps[0]!;
    this.last.clear();
  }

  *entries(): IterableIterator<[K, V]> {
    for (const m of this.maps) yield* m.entries();
  }

  *keys(): IterableIterator<K> {
    for (const m of this.maps) yield* m.keys();
  }
}
