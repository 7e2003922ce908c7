/**
 * The order of terms in an index: termIDs are the terms' ranks in code point order (the order of
 * their UTF-8 bytes, SQLite's BINARY collation, Lucene's and CIFF's order). A lexicographic
 * numbering depends only on the set of terms, not on where each was first seen, so every
 * producer of a lexicon (a build with any number of workers, a run, a segment, a merge of
 * segments with documents deleted) numbers the same terms the same way, and lexicons merge by
 * term in one pass.
 *
 * Runs are sorted by a key that is the term's rank among the terms of the build's dictionary at
 * the moment the block was sealed (TermDictionary.lexKeys); a run records how many terms that
 * dictionary held (its key space). Ranks among a prefix of the dictionary keep their order in
 * the final one, so a run's keys map to final termIDs by one forward walk (KeyWalk).
 */

const HIGH_SURROGATE = 0xd800;

/** A UTF-16 code unit's weight in code point order: surrogates above U+E000..U+FFFF. */
const weight = (c: number): number => (c >= 0xe000 ? c - 0x800 : c + 0x2000);

/** Code point order of two strings (JavaScript's own `<` is UTF-16 code unit order). */
export function compareTerms(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return x >= HIGH_SURROGATE && y >= HIGH_SURROGATE ? weight(x) - weight(y) : x - y;
  }
  return a.length - b.length;
}

/** Whether code unit order and code point order can disagree on `s` (it has a unit at or above U+D800). */
export const hasHighUnits = (s: string): boolean => /[\ud800-\uffff]/.test(s);

/**
 * Sorts `terms` in place in code point order. The engine's own string sort (no comparator) is
 * several times faster and agrees with code point order unless a term has a code unit at or
 * above U+D800. Returns whether some term has one.
 */
export function sortTerms(terms: string[]): boolean {
  if (terms.some(hasHighUnits)) {
    terms.sort(compareTerms);
    return true;
  }
  terms.sort();
  return false;
}

/** The ids of `terms` (terms[id]) in code point order of the terms. */
export function termOrderOf(terms: readonly string[]): Uint32Array {
  const sorted = terms.slice();
  sortTerms(sorted);
  const id = new Map(terms.map((t, i) => [t, i]));
  return Uint32Array.from(sorted, (t) => id.get(t)!);
}

/**
 * Maps the keys of one run (ranks among the dictionary's first `keySpace` terms) to final
 * termIDs (positions in `order`, every term of the dictionary in code point order), for keys
 * asked in non-decreasing order: the walk moves forward through `order`, counting the entries
 * below keySpace. A run sealed with the whole dictionary maps each key to itself.
 */
export class KeyWalk {
  private readonly identity: boolean;
  private key: number;
  private pos: number;

  /**
   * Starts at position `startPos` of `order`, which holds key `startKey` of this run (see
   * keysBefore). `finals`: the final termID of each position (a worker's lexicon, see
   * run-lexicons.ts); without it the position is the termID.
   */
  constructor(
    private readonly order: Uint32Array,
    private readonly keySpace: number,
    startPos = 0,
    startKey = 0,
    private readonly finals?: Uint32Array,
  ) {
    this.identity = keySpace >= order.length;
    this.key = startKey;
    this.pos = startPos;
    if (!this.identity) this.skipForeign();
  }

  /** Moves pos to the next entry of this run's key space, at or after pos. */
  private skipForeign(): void {
    const order = this.order;
    const n = this.keySpace;
    let p = this.pos;
    while (p < order.length && order[p]! >= n) p++;
    this.pos = p;
  }

  /** The final termID of `key`; keys must come in non-decreasing order. */
  toFinal(key: number): number {
    if (this.identity) return this.finals ? this.finals[key]! : key;
    if (key < this.key) throw new Error(`term keys out of order (${key} after ${this.key})`);
    const order = this.order;
    const n = this.keySpace;
    let p = this.pos;
    let k = this.key;
    while (k < key) {
      p++;
      while (p < order.length && order[p]! >= n) p++;
      k++;
    }
    if (p >= order.length) throw new Error(`term key ${key} is outside the run's key space of ${n}`);
    this.pos = p;
    this.key = k;
    return this.finals ? this.finals[p]! : p;
  }
}

/**
 * For a run of key space `keySpace`: the number of its keys below each final termID of
 * `termIds` (ascending), i.e. the key a KeyWalk starting at that termID starts with. `finals`
 * as in KeyWalk.
 */
export function keysBefore(order: Uint32Array, keySpace: number, termIds: readonly number[], finals?: Uint32Array): number[] {
  const finalAt = (p: number) => (finals ? finals[p]! : p);
  const out: number[] = [];
  let count = 0;
  let p = 0;
  const all = keySpace >= order.length;
  for (const target of termIds) {
    for (; p < order.length && finalAt(p) < target; p++) if (all || order[p]! < keySpace) count++;
    out.push(count);
  }
  return out;
}
