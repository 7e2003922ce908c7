/**
 * The tokenizer: Unicode-aware and allocation-light (one regex `exec` loop over the
 * normalized text, a Map cache for stems).
 *
 * Analysis, in order:
 *  1. NFKC (skipped for pure-ASCII text, which NFKC leaves unchanged), then `toLowerCase()`;
 *     `ß` (and `ẞ`) become `ss`, so "Straße" and "STRASSE" meet at "strasse".
 *  2. Tokens are runs of letters, digits and combining marks of any script (`\p{L}\p{N}\p{M}`),
 *     starting with a letter or digit: "São Paulo" gives `são`, `paulo`; Devanagari, Arabic and
 *     Hangul words stay whole. Emoji, symbols and punctuation are not tokens; neither are
 *     variation selectors or the keycap mark, so "1️⃣" is `1`.
 *  3. An apostrophe (' or ’) between two word characters joins them: "don't" -> `dont`,
 *     "O'Brien" -> `obrien`, "whale's" -> `whales` (then stemmed to `whale`). A zero-width
 *     (non-)joiner inside a word is removed the same way (Persian, Indic scripts).
 *  4. Han, Hiragana and Katakana are never part of a word: each run of them becomes single
 *     characters (cjk: 'unigram', the default) or overlapping bigrams (cjk: 'bigram'; a run of
 *     one character stays a unigram). Hangul is written with spaces and stays in words.
 *  5. Tokens longer than `maxTokenLength` UTF-16 units (default MAX_TOKEN_LENGTH = 255: base64
 *     blobs, minified junk) are dropped. The length is counted after steps 1-3, on the raw token.
 *  6. Stopwords (natural's English list, copied in english-stopwords.ts; a file; or none) are
 *     removed, then the Porter stemmer (natural's) is applied to Latin-script tokens only;
 *     other scripts are never stemmed. Tokens longer than MAX_TOKEN_LENGTH (possible only with
 *     a larger `maxTokenLength`) are not stemmed either: they are kept exactly as scanned
 *     (Porter and the Latin-script test take time quadratic in the length, seconds for a
 *     64 Ki-unit token).
 */
import { readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { UserError } from '../../src/shared/errors.js';
import { checkEach, integerFrom, oneOf, wrongType, type Check } from '../../src/shared/check.js';
// natural's Porter stemmer, reimplemented without regexes (same output, tested against it; ~8x faster).
import { porterStem } from './porter-stemmer.js';
import { ENGLISH_STOPWORDS } from './english-stopwords.js';

export type { TokenizerOptions } from '../../src/shared/options.js';
import { DEFAULT_TITLE_WEIGHT, MAX_TITLE_WEIGHT, type TokenizerOptions } from '../../src/shared/options.js';

/**
 * The options a tokenizer was made with, defaults filled in. `maxTokenLength` is present only
 * when it is not the default (255), and `titleWeight` only when it is not 1, so the settings
 * saved in an index built with that analysis are the same as before the options existed.
 */
export type ResolvedTokenizerOptions = Required<Omit<TokenizerOptions, 'maxTokenLength' | 'titleWeight'>> & Pick<TokenizerOptions, 'maxTokenLength' | 'titleWeight'>;

export interface Tokenizer {
  /** Calls emit(term) for each term of text, in order; returns the number of terms emitted. */
  tokenize(text: string, emit: (term: string) => void): number;
  /**
   * The first half of tokenize(): the raw tokens (normalized, lowercased, CJK split) before
   * stopwords and stemming. With analyzeToken() a caller can cache the whole analysis per
   * distinct raw token, e.g. raw token -> TermId in one hash lookup (indexer/pipeline.ts).
   */
  tokenizeRaw(text: string, emit: (raw: string) => void): void;
  /**
   * Step 1 of the analysis for text with non-ASCII characters (NFKC, lowercase, ß -> ss), for a
   * caller that scans the normalized text itself: if needsUnicodeScan() says no, its raw tokens
   * are the ASCII pattern's (`[a-z0-9]+` joined by ' or U+2019: most such text in practice,
   * with curly quotes, dashes, U+FFFD from damaged mail); else UNICODE_TOKEN's (the CHAR_* classes).
   */
  normalizeNonAscii(text: string): string;
  /** Whether normalized text has a non-ASCII character that can be part of a token. */
  needsUnicodeScan(normalized: string): boolean;
  /** tokenizeRaw() of text whose normalizeNonAscii() is `normalized` and needs the Unicode scan, without normalizing again. */
  tokenizeUnicodeRaw(normalized: string, emit: (raw: string) => void): void;
  /** The second half: the term of a raw token, or null for a stopword. Uncached. */
  analyzeToken(raw: string): string | null;
  /** Whether analyzeToken(raw) is null: the parse workers drop stopwords and leave stemming to the main thread. */
  isStopword(raw: string): boolean;
  /** The raw tokens isStopword() is true for (the stopword list, analysed like text). */
  readonly stopwords: ReadonlySet<string>;
  readonly options: ResolvedTokenizerOptions;
  /** The resolved token length limit (options.maxTokenLength, or MAX_TOKEN_LENGTH). */
  readonly maxTokenLength: number;
}

export const DEFAULT_TOKENIZER_OPTIONS: Readonly<ResolvedTokenizerOptions> = Object.freeze({ stem: 'porter', stopwords: 'english', cjk: 'unigram' });

/** The default maxTokenLength: longer tokens are dropped (Lucene's standard tokenizer uses the same limit). Also the longest token stemmed. */
export const MAX_TOKEN_LENGTH = 255;
/** The largest maxTokenLength accepted. */
export const MAX_TOKEN_LENGTH_LIMIT = 65536;

/** Each tokenizer option's check (no I/O: resolveTokenizerOptions reads a stopword file). */
export const TOKENIZER_OPTION_CHECKS: { readonly [K in keyof TokenizerOptions]-?: Check } = {
  stem: oneOf(['porter', 'none']),
  stopwords: (name, value) => {
    if (typeof value !== 'string' || value === '') throw wrongType(name, 'english, none or a file', value);
  },
  cjk: oneOf(['unigram', 'bigram']),
  maxTokenLength: integerFrom(1, MAX_TOKEN_LENGTH_LIMIT),
  titleWeight: integerFrom(1, MAX_TITLE_WEIGHT),
};

/** The options' CLI flags, which their messages name (the CLI and the library share them). */
const TOKENIZER_FLAGS: Readonly<Record<keyof TokenizerOptions, string>> = { stem: '--stem', stopwords: '--stopwords', cjk: '--cjk', maxTokenLength: '--max-token-length', titleWeight: '--title-weight' };

/** Checks each tokenizer option given in `o` (a build's or a writer's options). Throws UserError with one line. */
export function checkTokenizerOptions(o: TokenizerOptions): void {
  checkEach(o, TOKENIZER_OPTION_CHECKS, TOKENIZER_FLAGS);
}

/**
 * Fills in the defaults and checks the options. A stopword file is resolved to an absolute path
 * (so a saved index finds it again) and must be readable. Throws UserError with one line.
 */
export function resolveTokenizerOptions(o: TokenizerOptions = {}): ResolvedTokenizerOptions {
  if (o === null || typeof o !== 'object') throw new UserError('tokenizer options must be an object');
  checkTokenizerOptions(o);
  const stem = o.stem ?? DEFAULT_TOKENIZER_OPTIONS.stem;
  const cjk = o.cjk ?? DEFAULT_TOKENIZER_OPTIONS.cjk;
  let stopwords = o.stopwords ?? DEFAULT_TOKENIZER_OPTIONS.stopwords;
  if (stopwords !== 'english' && stopwords !== 'none') {
    stopwords = resolvePath(stopwords);
    readStopwordFile(stopwords, o.stopwords as string);
  }
  const maxTokenLength = o.maxTokenLength ?? MAX_TOKEN_LENGTH;
  const titleWeight = o.titleWeight ?? 1;
  return { stem, stopwords, cjk, ...(maxTokenLength === MAX_TOKEN_LENGTH ? {} : { maxTokenLength }), ...(titleWeight === 1 ? {} : { titleWeight }) };
}

/**
 * A new build's analysis options: the title weight defaults to DEFAULT_TITLE_WEIGHT. (Options
 * read back from an index's settings are not passed through this: there an absent weight is 1,
 * what the index was built with before the option existed.)
 */
export function withTitleWeightDefault<T extends TokenizerOptions>(o: T): T {
  return o.titleWeight === undefined ? { ...o, titleWeight: DEFAULT_TITLE_WEIGHT } : o;
}

function readStopwordFile(path: string, given: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new UserError(`--stopwords must be english, none or a readable file: cannot read ${given} (${code})`);
  }
}

// ---------------------------------------------------------------------------------------------
// Character classes (the `v` flag: set subtraction and intersection).

const CJK = String.raw`[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}]`;
/** Characters that never join a token: variation selectors and the emoji keycap mark. */
const NEVER = String.raw`[\p{Variation_Selector}\u20E3]`;
const CJK_CHAR = String.raw`[[[\p{L}\p{N}\p{M}]&&${CJK}]--${NEVER}]`;
const WORD_START = String.raw`[[\p{L}\p{N}]--${CJK}]`;
const WORD_CHAR = String.raw`[[\p{L}\p{N}\p{M}]--${CJK}--${NEVER}]`;
/** Inside a word only: apostrophes and zero-width (non-)joiners, removed from the term. */
const JOINER = String.raw`['\u2019\u200C\u200D]`;

/**
 * Code points a repetition of UNICODE_TOKEN takes at most: an unbounded one overflowed the
 * regex's backtracking stack on a run of about 4 M letters with no space (a CJK or Cyrillic line
 * of 12 MB), and the build ended in an internal error. A longer run continues past the match
 * (scanUnicode): a CJK run in the next match, its bigram across the cut kept; a word is then
 * longer than any --max-token-length (65,536 units at most) and is skipped whole.
 */
export const UNICODE_RUN_CAP = 65_536;

/** UNICODE_TOKEN with repetitions of at most `cap` (2 or more) code points (tests take a small cap). */
export function unicodeTokenPattern(cap: number): RegExp {
  return new RegExp(`(${CJK_CHAR}{1,${cap}})|${WORD_START}${WORD_CHAR}{0,${cap}}(?:(${JOINER})${WORD_CHAR}{1,${cap}}){0,${cap}}`, 'gv');
}

/** The rest of a word cut at the cap: word characters, and joiners with one after them. */
export function wordRestPattern(cap: number): RegExp {
  return new RegExp(`(?:${WORD_CHAR}|${JOINER}(?=${WORD_CHAR})){1,${cap}}`, 'yv');
}

/** Group 1: a CJK run. Otherwise a word; group 2 is set when it contains a joiner. */
const UNICODE_TOKEN = unicodeTokenPattern(UNICODE_RUN_CAP);
const WORD_REST = wordRestPattern(UNICODE_RUN_CAP);
/** The joiners, to remove them from a term (String.replace resets the global regex's lastIndex). */
export const JOINERS = /['\u2019\u200C\u200D]/g;
/**
 * For text whose only non-ASCII characters (after NFKC) are not word characters (dashes, curly
 * quotes: most English prose): the same tokens from a much cheaper ASCII pattern.
 */
const ASCII_TOKEN = /[a-z0-9]+(?:(['\u2019])[a-z0-9]+)*/g;
const APOSTROPHES = /['\u2019]/g;
const NON_ASCII = /[^\x00-\x7f]/;
const NON_ASCII_RUN = /[^\x00-\x7f]+/g;
const WORD_OR_JOINER = new RegExp(`[${WORD_CHAR}${CJK_CHAR}\\u200C\\u200D]`, 'v');

/** Whether normalized text has a non-ASCII character that can be part of a token (checked run by run: fast for prose). */
function needsUnicodeScan(s: string): boolean {
  const re = NON_ASCII_RUN;
  re.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(s)) !== null) if (WORD_OR_JOINER.test(m[0])) return true;
  return false;
}
// Code point classes of UNICODE_TOKEN, for scanners that walk the text themselves
// (indexer/unicode-terms.ts) instead of running the regex: made from the same character classes,
// so the two cannot drift apart (and test/unicode-terms.test.ts checks them against each other).
/** Not part of any token (space, punctuation, symbols, emoji, lone surrogates, NEVER). */
export const CHAR_OTHER = 1;
/** Starts a word and continues one: a letter or digit outside Han, Hiragana and Katakana. */
export const CHAR_START = 2;
/** Continues a word but does not start one: a combining mark (not NEVER, not CJK). */
export const CHAR_MARK = 3;
/** A Han, Hiragana or Katakana letter, digit or mark: a token of its own (unigram) or half a bigram. */
export const CHAR_CJK = 4;
/** ' U+2019 ZWNJ ZWJ: joins two word characters and is removed from the term. */
export const CHAR_JOINER = 5;
const CJK_CHAR_ONE = new RegExp(`^${CJK_CHAR}$`, 'v');
const WORD_START_ONE = new RegExp(`^${WORD_START}$`, 'v');
const WORD_CHAR_ONE = new RegExp(`^${WORD_CHAR}$`, 'v');
const JOINER_ONE = new RegExp(`^${JOINER}$`, 'v');

/** The class of code point `cp` in UNICODE_TOKEN (CHAR_*). Uncached: a regex test or three. */
export function unicodeCharClass(cp: number): number {
  const ch = String.fromCodePoint(cp);
  if (JOINER_ONE.test(ch)) return CHAR_JOINER;
  if (CJK_CHAR_ONE.test(ch)) return CHAR_CJK;
  if (WORD_START_ONE.test(ch)) return CHAR_START;
  if (WORD_CHAR_ONE.test(ch)) return CHAR_MARK;
  return CHAR_OTHER;
}

/** Porter applies to tokens made of Latin letters (and digits, marks), with at least one letter. */
const LATIN_WORD = /^[\p{scx=Latin}\p{N}\p{M}]*\p{scx=Latin}[\p{scx=Latin}\p{N}\p{M}]*$/u;
const STEM_CACHE_LIMIT = 1 << 20;
/**
 * Whether Porter applies: a Latin-script token of at most MAX_TOKEN_LENGTH units. The length
 * test comes first: LATIN_WORD backtracks quadratically on a long Latin run ending in another
 * script, and Porter itself is quadratic on long consonant runs.
 */
const stemmable = (t: string): boolean => t.length <= MAX_TOKEN_LENGTH && LATIN_WORD.test(t);

/** Step 1 for text with non-ASCII characters: NFKC, lowercase, ß -> ss. */
function normalizeNonAscii(text: string): string {
  const s = text.normalize('NFKC').toLowerCase();
  return s.includes('ß') ? s.replaceAll('ß', 'ss') : s;
}

/** Normalizes text (NFKC unless ASCII, lowercase, ß -> ss) and splits it into raw terms (before stopwords and stemming), dropping those longer than maxLength. */
function scan(text: string, bigrams: boolean, maxLength: number, put: (t: string) => void): void {
  let s: string;
  if (!NON_ASCII.test(text)) s = text.toLowerCase();
  else {
    s = normalizeNonAscii(text);
    if (needsUnicodeScan(s)) return scanUnicode(s, bigrams, maxLength, put);
  }
  const re = ASCII_TOKEN;
  re.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(s)) !== null) {
    let t = m[0];
    if (m[1] !== undefined) t = t.replace(APOSTROPHES, '');
    if (t.length <= maxLength) put(t);
  }
}

function scanUnicode(s: string, bigrams: boolean, maxLength: number, put: (t: string) => void): void {
  scanUnicodeWith(UNICODE_TOKEN, WORD_REST, UNICODE_RUN_CAP, s, bigrams, maxLength, put);
}

/**
 * scanUnicode over `re` (unicodeTokenPattern(cap)) and `rest` (wordRestPattern(cap)): the raw
 * tokens of the unbounded pattern, whatever the runs' lengths.
 */
export function scanUnicodeWith(re: RegExp, rest: RegExp, cap: number, s: string, bigrams: boolean, maxLength: number, put: (t: string) => void): void {
  // A CJK unigram is at most 2 units, a bigram 4: only a tiny maxLength drops any.
  const putCjk = maxLength >= 4 ? put : (t: string) => t.length <= maxLength && put(t);
  /** The last code point of a CJK run cut at the cap, and where its continuation starts. */
  let carry = '';
  let carryAt = -1;
  re.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(s)) !== null) {
    const run = m[1];
    if (run !== undefined) {
      const continued = carryAt === m.index;
      if (!bigrams) {
        for (const c of run) putCjk(c);
        continue;
      }
      const chars = Array.from(run);
      if (continued) putCjk(carry + chars[0]!);
      else if (chars.length === 1) putCjk(chars[0]!);
      for (let i = 0; i + 1 < chars.length; i++) putCjk(chars[i]! + chars[i + 1]!);
      [carry, carryAt] = chars.length === cap ? [chars[cap - 1]!, re.lastIndex] : ['', -1];
      continue;
    }
    let t = m[0];
    if (t.length >= cap) {
      // Cut at the cap if the word goes on: then it is too long to be a term, all of it.
      let end = re.lastIndex;
      rest.lastIndex = end;
      while (rest.test(s)) end = rest.lastIndex; // a failed sticky test resets lastIndex
      if (end > re.lastIndex) {
        re.lastIndex = end;
        continue;
      }
    }
    if (m[2] !== undefined) t = t.replace(JOINERS, '');
    if (t.length <= maxLength) put(t);
  }
}

/** The terms of a stopword list, analysed like the text (so "Don't" in a file stops `dont`). */
function stopwordSet(words: Iterable<string>, bigrams: boolean, maxLength: number): Set<string> {
  const set = new Set<string>();
  for (const w of words) {
    const line = w.trim();
    if (line === '' || line.startsWith('#')) continue;
    scan(line, bigrams, maxLength, (t) => set.add(t));
  }
  return set;
}

export function createTokenizer(options: TokenizerOptions = {}): Tokenizer {
  const resolved = resolveTokenizerOptions(options);
  const bigrams = resolved.cjk === 'bigram';
  const maxLength = resolved.maxTokenLength ?? MAX_TOKEN_LENGTH;
  const stop =
    resolved.stopwords === 'none'
      ? new Set<string>()
      : resolved.stopwords === 'english'
        ? stopwordSet(ENGLISH_STOPWORDS, bigrams, maxLength)
        : stopwordSet(readStopwordFile(resolved.stopwords, resolved.stopwords).split(/\r?\n/), bigrams, maxLength);
  const stemming = resolved.stem === 'porter';

  let count = 0;
  let sink: (term: string) => void = () => {};
  let put: (t: string) => void;
  if (stemming) {
    // One lookup per token: the stem, or null for a stopword (seeded again whenever the cache is cut).
    const cache = new Map<string, string | null>();
    const seed = (): void => {
      for (const w of stop) cache.set(w, null);
    };
    seed();
    put = (t) => {
      let s = cache.get(t);
      if (s === undefined) {
        s = stemmable(t) ? porterStem(t) : t;
        if (cache.size >= STEM_CACHE_LIMIT) {
          cache.clear();
          seed();
        }
        cache.set(t, s);
      }
      if (s !== null) {
        count++;
        sink(s);
      }
    };
  } else if (stop.size > 0) {
    put = (t) => {
      if (!stop.has(t)) {
        count++;
        sink(t);
      }
    };
  } else {
    put = (t) => {
      count++;
      sink(t);
    };
  }

  return {
    options: resolved,
    maxTokenLength: maxLength,
    tokenizeRaw(text: string, emit: (raw: string) => void): void {
      scan(text, bigrams, maxLength, emit);
    },
    normalizeNonAscii,
    needsUnicodeScan,
    tokenizeUnicodeRaw(normalized: string, emit: (raw: string) => void): void {
      scanUnicode(normalized, bigrams, maxLength, emit);
    },
    isStopword(raw: string): boolean {
      return stop.has(raw);
    },
    stopwords: stop,
    analyzeToken(raw: string): string | null {
      if (stop.has(raw)) return null;
      return stemming && stemmable(raw) ? porterStem(raw) : raw;
    },
    /** Not re-entrant: emit must not call tokenize on the same tokenizer. */
    tokenize(text: string, emit: (term: string) => void): number {
      count = 0;
      sink = emit;
      try {
        scan(text, bigrams, maxLength, put);
      } finally {
        sink = () => {};
      }
      return count;
    },
  };
}
