/**
 * The tokenizer: Unicode-aware, allocation-light.
 *
 *  - NFKC, then lowercase (ß stays ß: toLowerCase keeps it, and no case folding to "ss").
 *  - Tokens are runs of letters, digits and combining marks of any script (\p{L}\p{N}\p{M}),
 *    so "São Paulo" gives "são", "paulo" and Devanagari/Arabic words stay whole.
 *  - An apostrophe between two letters joins them: "don't" -> "dont", "O'Brien" -> "obrien".
 *  - Han, Hiragana and Katakana are split into single characters (or overlapping bigrams with
 *    cjk: 'bigram'); Hangul is written with spaces and stays in words.
 *  - Emoji and punctuation are not tokens.
 *  - Stopwords (natural's English list, or a file) are removed before stemming; the Porter
 *    stemmer (natural) applies only to plain a-z tokens, never to other scripts.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { UserError } from './errors.js';

// Deep imports: natural's index pulls in every module (and prints a dotenv banner on stdout).
const require = createRequire(import.meta.url);
const porter = require('natural/lib/natural/stemmers/porter_stemmer') as { stem(word: string): string };
const englishStopwords = (require('natural/lib/natural/util/stopwords') as { words: string[] }).words;

export interface TokenizerOptions {
  stem?: 'porter' | 'none';
  /** 'english', 'none', or the path of a file with one stopword a line. */
  stopwords?: 'english' | 'none' | string;
  cjk?: 'unigram' | 'bigram';
}

export interface Tokenizer {
  /** Calls emit(term) for each term of text, in order; returns the number of terms. */
  tokenize(text: string, emit: (term: string) => void): number;
  readonly options: Required<TokenizerOptions>;
}

export function resolveTokenizerOptions(o: TokenizerOptions = {}): Required<TokenizerOptions> {
  const stem = o.stem ?? 'porter';
  const stopwords = o.stopwords ?? 'english';
  const cjk = o.cjk ?? 'unigram';
  if (stem !== 'porter' && stem !== 'none') throw new UserError(`--stem must be porter or none, got "${stem}"`);
  if (cjk !== 'unigram' && cjk !== 'bigram') throw new UserError(`--cjk must be unigram or bigram, got "${cjk}"`);
  if (typeof stopwords !== 'string' || stopwords === '') throw new UserError('--stopwords must be english, none or a file');
  return { stem, stopwords, cjk };
}

const TOKEN = /[\p{L}\p{N}\p{M}]+/gu;
const NON_ASCII = /[^\x00-\x7f]/;
const APOSTROPHE_IN_WORD = /([\p{L}\p{N}\p{M}])['\u2019]+(?=[\p{L}\p{N}])/gu;
const CJK = /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}]/u;
const CJK_OR_RUN = /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}]|[^\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}]+/gu;
const PLAIN_ASCII_WORD = /^[a-z]+$/;
const STEM_CACHE_LIMIT = 1 << 20;

function normalizeTerm(t: string): string {
  return t.normalize('NFKC').toLowerCase().replace(/['\u2019]/g, '');
}

function loadStopwords(choice: string): Set<string> {
  if (choice === 'none') return new Set();
  if (choice === 'english') return new Set(englishStopwords.map(normalizeTerm));
  let text: string;
  try {
    text = readFileSync(choice, 'utf8');
  } catch (err) {
    throw new UserError(`cannot read the stopword file ${choice}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  return new Set(
    text
      .split(/\r?\n/)
      .map((l) => normalizeTerm(l.trim()))
      .filter(Boolean),
  );
}

export function createTokenizer(options: TokenizerOptions = {}): Tokenizer {
  const resolved = resolveTokenizerOptions(options);
  const stop = loadStopwords(resolved.stopwords);
  const stemming = resolved.stem === 'porter';
  const bigrams = resolved.cjk === 'bigram';
  const stems = new Map<string, string>();

  const stemOf = (t: string): string => {
    let s = stems.get(t);
    if (s === undefined) {
      s = PLAIN_ASCII_WORD.test(t) ? porter.stem(t) : t;
      if (stems.size >= STEM_CACHE_LIMIT) stems.clear();
      stems.set(t, s);
    }
    return s;
  };

  let count = 0;
  let sink: (term: string) => void = () => {};
  const put = (t: string): void => {
    if (stop.has(t)) return;
    sink(stemming ? stemOf(t) : t);
    count++;
  };

  /** A token containing CJK characters: non-CJK runs stay words, CJK runs become unigrams or bigrams. */
  const putMixed = (token: string): void => {
    let run = '';
    const flushRun = () => {
      if (run.length === 0) return;
      const chars = Array.from(run);
      if (!bigrams || chars.length === 1) for (const c of chars) put(c);
      else for (let i = 0; i + 1 < chars.length; i++) put(chars[i]! + chars[i + 1]!);
      run = '';
    };
    for (const m of token.matchAll(CJK_OR_RUN)) {
      const piece = m[0];
      if (CJK.test(piece)) run += piece;
      else {
        flushRun();
        put(piece);
      }
    }
    flushRun();
  };

  return {
    options: resolved,
    tokenize(text: string, emit: (term: string) => void): number {
      count = 0;
      sink = emit;
      let s = text;
      const ascii = !NON_ASCII.test(s);
      if (!ascii) s = s.normalize('NFKC');
      s = s.toLowerCase();
      if (s.includes("'") || s.includes('\u2019')) s = s.replace(APOSTROPHE_IN_WORD, '$1');
      TOKEN.lastIndex = 0;
      let m: RegExpExecArray | null;
      while ((m = TOKEN.exec(s)) !== null) {
        const t = m[0];
        if (!ascii && CJK.test(t)) putMixed(t);
        else put(t);
      }
      return count;
    },
  };
}
