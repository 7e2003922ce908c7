/**
 * The parse hot path for pure-ASCII text: finds the tokens the tokenizer's ASCII pattern would
 * find ([a-z0-9]+ runs, joined across a single apostrophe, lowercased, apostrophes dropped,
 * at most maxLength long: the tokenizer's maxTokenLength) and looks each one up in an
 * open-addressing table keyed by the raw token, hashing and comparing characters in place. A token seen before costs no
 * string allocation and no Map lookup; only a new raw token is sliced out and analysed
 * (stopwords, stemming, dictionary) through the slow path. Tested against tokenizeRaw.
 *
 * Long tokens (up to MAX_TOKEN_LENGTH_LIMIT) need nothing special: the hash runs over every
 * character, a probe compares the stored key's length first and then every character, and
 * the table stores the key string itself (never a prefix).
 */
import { MAX_TOKEN_LENGTH } from '../src/tokenizer.js';

const APOSTROPHE = 39;
export const NOT_CACHED = -2;
const INITIAL = 1 << 12;

const isWordChar = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || (c >= 65 && c <= 90);

/** raw token -> value (a TermId, or -1 for a stopword), probed with characters of the text. */
export class AsciiTermTable {
  private keys: string[] = new Array<string>(INITIAL).fill('');
  private hashes = new Int32Array(INITIAL);
  private values = new Int32Array(INITIAL);
  private mask = INITIAL - 1;
  size = 0;

  /** The value of the token text[start, end) (hash h, length len without apostrophes), or NOT_CACHED. */
  get(text: string, start: number, end: number, h: number, len: number): number {
    const keys = this.keys;
    for (let slot = h & this.mask; ; slot = (slot + 1) & this.mask) {
      const k = keys[slot]!;
      if (k.length === 0) return NOT_CACHED; // '' marks an empty slot (tokens are never empty)
      if (this.hashes[slot] !== h || k.length !== len) continue;
      let j = 0;
      let i = start;
      for (; i < end; i++) {
        let c = text.charCodeAt(i);
        if (c === APOSTROPHE) continue;
        if (c <= 90 && c >= 65) c |= 32;
        if (k.charCodeAt(j++) !== c) break;
      }
      if (i === end) return this.values[slot]!;
    }
  }

  set(key: string, h: number, value: number): void {
    if (2 * (this.size + 1) > this.keys.length) this.grow();
    let slot = h & this.mask;
    while (this.keys[slot]!.length !== 0) slot = (slot + 1) & this.mask;
    this.keys[slot] = key;
    this.hashes[slot] = h;
    this.values[slot] = value;
    this.size++;
  }

  clear(): void {
    this.keys = new Array<string>(INITIAL).fill('');
    this.hashes = new Int32Array(INITIAL);
    this.values = new Int32Array(INITIAL);
    this.mask = INITIAL - 1;
    this.size = 0;
  }

  private grow(): void {
    const { keys, hashes, values } = this;
    const cap = keys.length * 2;
    this.keys = new Array<string>(cap).fill('');
    this.hashes = new Int32Array(cap);
    this.values = new Int32Array(cap);
    this.mask = cap - 1;
    for (let s = 0; s < keys.length; s++) {
      const k = keys[s]!;
      if (k.length === 0) continue;
      let slot = hashes[s]! & this.mask;
      while (this.keys[slot]!.length !== 0) slot = (slot + 1) & this.mask;
      this.keys[slot] = k;
      this.hashes[slot] = hashes[s]!;
      this.values[slot] = values[s]!;
    }
  }
}

/**
 * Calls emit(value) for each token of the ASCII text `text`, in order; `analyse(raw)` gives the
 * value of a raw token not in the table yet (and it is then cached). Tokens longer than
 * maxLength (without apostrophes; the tokenizer's maxTokenLength) are skipped.
 */
export function scanAscii(text: string, table: AsciiTermTable, analyse: (raw: string) => number, emit: (value: number) => void, maxLength: number = MAX_TOKEN_LENGTH): void {
  const n = text.length;
  let i = 0;
  while (i < n) {
    let c = text.charCodeAt(i);
    if (!isWordChar(c)) {
      i++;
      continue;
    }
    const start = i;
    let h = -2128831035; // FNV-1a offset basis
    let len = 0;
    let apostrophes = false;
    for (;;) {
      while (i < n && isWordChar((c = text.charCodeAt(i)))) {
        h = Math.imul(h ^ (c <= 90 && c >= 65 ? c | 32 : c), 16777619);
        len++;
        i++;
      }
      if (i + 1 < n && text.charCodeAt(i) === APOSTROPHE && isWordChar(text.charCodeAt(i + 1))) {
        apostrophes = true;
        i++;
        continue;
      }
      break;
    }
    if (len > maxLength) continue;
    let value = table.get(text, start, i, h, len);
    if (value === NOT_CACHED) {
      let raw = text.slice(start, i).toLowerCase();
      if (apostrophes) raw = raw.replaceAll("'", '');
      value = analyse(raw);
      table.set(raw, h, value);
    }
    emit(value);
  }
}
