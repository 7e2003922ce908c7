/**
 * Strings -> dense ids (0, 1, 2, ... in the order added), where the strings themselves are the
 * caller's: `keys[id]`. An open-addressing table of ids by each string's FNV-1a hash, the hashes
 * kept by id so that growing rehashes without reading the strings again.
 *
 * Why not a Map: numbering a fresh string (a term seen for the first time) took a V8 Map about
 * 700 ns on the 2-core development machine at 600,000 strings (its own hash of the new string,
 * then a probe among all the entries and the entry's storage), this about 250 ns; an entry costs
 * 8-16 bytes here against about 40; and a Map stops at 2^24 entries (runtime/big-map.ts).
 */
export class StringIds {
  /** id + 1 of the string in each slot; 0: empty. */
  private slots = new Int32Array(1 << 10);
  private mask = (1 << 10) - 1;
  /** Each id's hash. */
  private hashes = new Int32Array(1 << 9);
  private count = 0;

  constructor(private readonly keys: readonly string[]) {}

  get size(): number {
    return this.count;
  }

  /** The id of `key`, or -1. */
  find(key: string): number {
    return this.slots[this.slotOf(key, hashOf(key))]! - 1;
  }

  /** The id of `key`, numbering it (the next id) if new; the caller then sets keys[id] = key. */
  idOf(key: string): number {
    const h = hashOf(key);
    const p = this.slotOf(key, h);
    if (this.slots[p] !== 0) return this.slots[p]! - 1;
    const id = this.count++;
    if (id >= this.hashes.length) {
      const grown = new Int32Array(2 * this.hashes.length);
      grown.set(this.hashes);
      this.hashes = grown;
    }
    this.hashes[id] = h;
    this.slots[p] = id + 1;
    // At most half full: doubled, every id placed again by its kept hash.
    if (2 * this.count > this.slots.length) this.rehash(2 * this.slots.length);
    return id;
  }

  /** The slot that holds `key` (hash `h`), or the empty one where it would go. */
  private slotOf(key: string, h: number): number {
    const keys = this.keys;
    for (let p = h & this.mask; ; p = (p + 1) & this.mask) {
      const v = this.slots[p]!;
      if (v === 0 || (this.hashes[v - 1] === h && keys[v - 1] === key)) return p;
    }
  }

  private rehash(size: number): void {
    const slots = new Int32Array(size);
    const mask = size - 1;
    for (let id = 0; id < this.count; id++) {
      let p = this.hashes[id]! & mask;
      while (slots[p] !== 0) p = (p + 1) & mask;
      slots[p] = id + 1;
    }
    this.slots = slots;
    this.mask = mask;
  }
}

/** FNV-1a over the string's UTF-16 code units. */
function hashOf(s: string): number {
  let h = 0x811c9dc5 | 0;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h ^ (h >>> 15);
}
