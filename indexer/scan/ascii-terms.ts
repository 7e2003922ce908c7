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
 * the table stores every character of the key (never a prefix).
 */
import { MAX_TOKEN_LENGTH } from '../analysis/tokenizer.js';
import { TermSlots } from './term-slots.js';

export const APOSTROPHE = 39;
/** U+2019, an apostrophe too in the tokenizer's ASCII pattern (only met with nonAsciiSeparates). */
const RIGHT_QUOTE = 0x2019;
const APOSTROPHES = /['\u2019]/g;
const isApostrophe = (c: number, rightQuoteToo: boolean): boolean => c === APOSTROPHE || (rightQuoteToo && c === RIGHT_QUOTE);
const NON_ASCII = /[^\x00-\x7f]/g;
export const NOT_CACHED = -2;
const INITIAL = 1 << 12;
/** A parser's table: 65,536 slots (1 MiB) hold 32,768 raw tokens before the first growth. */
export const PARSER_TABLE_SLOTS = 1 << 16;

/** [A-Za-z0-9]: the characters of the tokenizer's ASCII tokens. */
export const isWordChar = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || (c >= 65 && c <= 90);

/**
 * raw token -> value (a TermId, or -1 for a stopword), probed with characters of the text; the
 * keys' characters sit in one byte pool (raw tokens of ASCII text are ASCII): a probe touches
 * one slot and one run of bytes instead of a string object, measured 28 % faster scanning than a
 * table of JS strings (2-core machine). Slots: TermSlots.
 */
export class AsciiTermTable extends TermSlots<Uint8Array> {
  /**
   * `initialSlots` (a power of two): a parser's table starts large (PARSER_TABLE_SLOTS), as
   * growing it from 4,096 slots was 6 % of a worker's first batch, when all its vocabulary is new.
   */
  constructor(initialSlots = INITIAL) {
    super(initialSlots, (n) => new Uint8Array(n), 8);
  }

  /** The value of the token text[start, end) (hash h, length len without apostrophes), or NOT_CACHED. */
  get(text: string, start: number, end: number, h: number, len: number): number {
    const slots = this.slots;
    const chars = this.pool;
    const mask = this.mask;
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const b = slot << 2;
      const keyLength = slots[b + 1]!;
      if (keyLength === 0) return NOT_CACHED;
      if (slots[b] !== h || keyLength !== len) continue;
      let j = slots[b + 2]!;
      let i = start;
      if (end - start === len) {
        // No apostrophe inside (the common case): a plain compare.
        for (; i < end; i++) {
          let c = text.charCodeAt(i);
          if (c <= 90 && c >= 65) c |= 32;
          if (chars[j++] !== c) break;
        }
      } else {
        for (; i < end; i++) {
          let c = text.charCodeAt(i);
          if (c === APOSTROPHE || c === RIGHT_QUOTE) continue;
          if (c <= 90 && c >= 65) c |= 32;
          if (chars[j++] !== c) break;
        }
      }
      if (i === end) return slots[b + 3]!;
    }
  }
}

/**
 * Calls emit(value) for each token of the ASCII text `text`, in order; `analyse(raw)` gives the
 * value of a raw token not in the table yet (and it is then cached). Tokens longer than
 * maxLength (without apostrophes; the tokenizer's maxTokenLength) are skipped.
 *
 * `nonAsciiSeparates`: the text is already normalized (Tokenizer.normalizeNonAscii, and needsUnicodeScan said no) and its
 * non-ASCII characters are never part of a token: they separate tokens, except U+2019, which
 * joins like an apostrophe; the scan then never stops early.
 *
 * Otherwise it returns false, at once, on the first non-ASCII character: such text needs the tokenizer's
 * Unicode analysis (NFKC first), and the caller discards what was emitted so far. Testing here
 * rather than with a regex over the text first saves one pass over every ASCII document (the
 * common case). Nothing is analysed (no term numbered) before the stop: a token not in the
 * table first has the rest of the text checked, once.
 */
export function scanAscii(
  text: string,
  table: AsciiTermTable,
  analyse: (raw: string) => number,
  emit: (value: number) => void,
  maxLength: number = MAX_TOKEN_LENGTH,
  nonAsciiSeparates = false,
): boolean {
  const n = text.length;
  let i = 0;
  let restIsAscii = nonAsciiSeparates;
  while (i < n) {
    let c = text.charCodeAt(i);
    if (!isWordChar(c)) {
      if (c > 127 && !nonAsciiSeparates) return false;
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
      if (i + 1 < n && isApostrophe(text.charCodeAt(i), nonAsciiSeparates) && isWordChar(text.charCodeAt(i + 1))) {
        apostrophes = true;
        i++;
        continue;
      }
      break;
    }
    if (len > maxLength) continue;
    let value = table.get(text, start, i, h, len);
    if (value === NOT_CACHED) {
      // analyse() may number a new term: only once the rest of the text is known to be ASCII,
      // or a text that turns out not to be would leave a term it does not contain.
      if (!restIsAscii) {
        NON_ASCII.lastIndex = i;
        if (NON_ASCII.test(text)) return false;
        restIsAscii = true;
      }
      let raw = text.slice(start, i).toLowerCase();
      if (apostrophes) raw = raw.replace(APOSTROPHES, '');
      value = analyse(raw);
      table.set(raw, h, value);
    }
    emit(value);
  }
  return true;
}
