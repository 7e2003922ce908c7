/**
 * The parse path for text the ASCII scanners cannot take (letters of other scripts, CJK): finds
 * the raw tokens of the tokenizer's Unicode pattern (UNICODE_TOKEN in src/tokenizer.ts) in
 * normalized text by walking its code units with a table of character classes, and looks each
 * one up in an open-addressing table keyed by the raw token, hashed and compared in place, as
 * AsciiTermTable does for ASCII. A token seen before costs no string, no regex match and no Map
 * lookup; only a new raw token is sliced out and analysed. The regex loop this replaces took
 * ~1.7 s of a worker's 4.9 s on the multilingual crawl (V8 profile, one worker, 2-core machine). Tested against
 * tokenizeRaw (test/unicode-terms.test.ts).
 */
import { CHAR_CJK, CHAR_JOINER, CHAR_MARK, CHAR_OTHER, CHAR_START, JOINERS, unicodeCharClass } from '../analysis/tokenizer.js';
import { NOT_CACHED } from './ascii-terms.js';
import { TermSlots } from './term-slots.js';

/**
 * A code point's class and width in one number: CHAR_* | units << 3 (so >= 8 for a real entry).
 * The table of BMP code units holds these, 0 for a unit not classified yet and HIGH_SURROGATE
 * for a high surrogate (whose class is the pair's): both < 8 send a lookup the slow way.
 */
const HIGH_SURROGATE = 6;
const ONE_UNIT = 1 << 3;
const TWO_UNITS = 2 << 3;
/**
 * Classes of BMP code units, each found on first sight (a regex test costs ~1 us, and a crawl
 * meets a few thousand distinct characters); one table for the thread.
 */
const bmpClasses = new Uint8Array(0x10000).fill(HIGH_SURROGATE, 0xd800, 0xdc00);
/** Classes of supplementary-plane code points met so far (emoji, rare Han). */
const astralClasses = new Map<number, number>();

/** Class and width (CHAR_* | units << 3) of the code point at s[i] (i < n). */
function classAt(s: string, i: number, n: number): number {
  const c = s.charCodeAt(i);
  const kw = bmpClasses[c]!;
  return kw >= ONE_UNIT ? kw : classSlow(s, i, n, c, kw);
}

function classSlow(s: string, i: number, n: number, c: number, kw: number): number {
  if (kw === 0) return (bmpClasses[c] = unicodeCharClass(c) | ONE_UNIT);
  // A high surrogate: with a low one after it, a supplementary code point; alone, no token's.
  const d = i + 1 < n ? s.charCodeAt(i + 1) : 0;
  if (d < 0xdc00 || d > 0xdfff) return CHAR_OTHER | ONE_UNIT;
  const cp = ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
  let a = astralClasses.get(cp);
  if (a === undefined) astralClasses.set(cp, (a = unicodeCharClass(cp) | TWO_UNITS));
  return a;
}

const isWordClass = (kw: number): boolean => (kw & 7) === CHAR_START || (kw & 7) === CHAR_MARK;

/** A joiner's code unit (all are BMP characters, classified when the scan met them). */
const isJoinerUnit = (c: number): boolean => (bmpClasses[c]! & 7) === CHAR_JOINER;
const FNV_BASIS = -2128831035;
const FNV_PRIME = 16777619;
const INITIAL = 1 << 14;

/**
 * raw token -> value (a TermId, or -1 for a stopword), probed with code units of the text, the
 * keys in one pool of UTF-16 code units (joiners left out, as in the terms). Slots: TermSlots.
 */
export class UnicodeTermTable extends TermSlots<Uint16Array> {
  constructor() {
    super(INITIAL, (n) => new Uint16Array(n), 4);
  }

  /** The value of the token text[start, end) (hash h, `len` units without joiners; `joined`: it has some), or NOT_CACHED. */
  get(text: string, start: number, end: number, h: number, len: number, joined: boolean): number {
    const { slots, pool, mask } = this;
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const b = slot << 2;
      const keyLength = slots[b + 1]!;
      if (keyLength === 0) return NOT_CACHED;
      if (slots[b] !== h || keyLength !== len) continue;
      let j = slots[b + 2]!;
      let i = start;
      for (; i < end; i++) {
        const c = text.charCodeAt(i);
        if (joined && isJoinerUnit(c)) continue;
        if (pool[j++] !== c) break;
      }
      if (i === end) return slots[b + 3]!;
    }
  }
}

/**
 * Calls emit(value) for each raw token of `normalized` (Tokenizer.normalizeNonAscii's output),
 * in order: the tokens tokenizeRaw gives for the text, CJK runs as unigrams or (bigrams) as
 * overlapping pairs of code points. analyse(raw) gives the value of a raw token not in the table
 * yet, which is then cached. Tokens longer than maxLength code units (after joiners are removed)
 * are skipped.
 */
export function scanUnicodeTerms(
  normalized: string,
  table: UnicodeTermTable,
  bigrams: boolean,
  maxLength: number,
  analyse: (raw: string) => number,
  emit: (value: number) => void,
): void {
  const s = normalized;
  const n = s.length;
  /** Emits the token s[start, end) (hash h, len units without joiners). */
  const token = (start: number, end: number, h: number, len: number, joined: boolean): void => {
    if (len > maxLength) return;
    let value = table.get(s, start, end, h, len, joined);
    if (value === NOT_CACHED) {
      let raw = s.slice(start, end);
      if (joined) raw = raw.replace(JOINERS, '');
      value = analyse(raw);
      table.set(raw, h, value);
    }
    emit(value);
  };
  /** FNV-1a of s[start, end), all units (no joiners in a CJK token). */
  const hashOf = (start: number, end: number): number => {
    let h = FNV_BASIS;
    for (let i = start; i < end; i++) h = Math.imul(h ^ s.charCodeAt(i), FNV_PRIME);
    return h;
  };

  let i = 0;
  while (i < n) {
    let kw = classAt(s, i, n);
    const k = kw & 7;
    if (k === CHAR_START) {
      // WORD_START WORD_CHAR* (JOINER WORD_CHAR+)*, greedy.
      const start = i;
      let h = FNV_BASIS;
      let len = 0;
      let joined = false;
      for (;;) {
        do {
          h = Math.imul(h ^ s.charCodeAt(i), FNV_PRIME);
          if (kw >= TWO_UNITS) {
            h = Math.imul(h ^ s.charCodeAt(i + 1), FNV_PRIME);
            len += 2;
            i += 2;
          } else {
            len++;
            i++;
          }
        } while (i < n && isWordClass((kw = classAt(s, i, n))));
        // s[i] (if any) is not a word character; kw is its class. A joiner continues the word
        // only with a word character after it.
        if (i + 1 < n && (kw & 7) === CHAR_JOINER) {
          const next = classAt(s, i + 1, n);
          if (isWordClass(next)) {
            joined = true;
            i++;
            kw = next;
            continue;
          }
        }
        break;
      }
      token(start, i, h, len, joined);
      continue;
    }
    if (k === CHAR_CJK) {
      // A run of CJK code points: each one a token, or each overlapping pair (a lone one stays a unigram).
      let prev = i;
      i += kw >> 3;
      kw = i < n ? classAt(s, i, n) : 0;
      if (!bigrams || (kw & 7) !== CHAR_CJK) token(prev, i, hashOf(prev, i), i - prev, false);
      while ((kw & 7) === CHAR_CJK) {
        const end = i + (kw >> 3);
        if (bigrams) {
          token(prev, end, hashOf(prev, end), end - prev, false);
          prev = i;
        } else token(i, end, hashOf(i, end), end - i, false);
        i = end;
        kw = i < n ? classAt(s, i, n) : 0;
      }
      continue;
    }
    i += kw >> 3;
  }
}
