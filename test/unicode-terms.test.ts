import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TermDictionary } from '../indexer/fill/dictionary.js';
import { analysedTermIds, DocumentInverter, UNICODE_TABLE_AFTER_UNITS } from '../indexer/scan/document-inverter.js';
import { scanUnicodeTerms, UnicodeTermTable } from '../indexer/scan/unicode-terms.js';
import { CHAR_CJK, CHAR_JOINER, CHAR_MARK, CHAR_OTHER, CHAR_START, createTokenizer, unicodeCharClass, type TokenizerOptions } from '../indexer/analysis/tokenizer.js';

const RAW = { stem: 'none', stopwords: 'none' } as const;

/** The tokenizer's raw tokens of a text (its regex scan). */
function rawTokens(text: string, options: TokenizerOptions = RAW): string[] {
  const out: string[] = [];
  createTokenizer(options).tokenizeRaw(text, (t) => out.push(t));
  return out;
}

/** The same through the table scan, on the tokenizer's normalized text; also the order in which new raw tokens were analysed. */
function tableTokens(text: string, options: TokenizerOptions = RAW, table = new UnicodeTermTable(), analysed: string[] = []): { tokens: string[]; analysed: string[] } {
  const tokenizer = createTokenizer(options);
  const tokens: string[] = [];
  scanUnicodeTerms(tokenizer.normalizeNonAscii(text), table, tokenizer.options.cjk === 'bigram', tokenizer.maxTokenLength, (raw) => analysed.push(raw) - 1, (id) => tokens.push(analysed[id]!));
  return { tokens, analysed };
}

// Pieces heavy in what the Unicode pattern decides: scripts, combining marks, CJK runs (BMP and
// supplementary), joiners in and out of words, variation selectors and the keycap mark, emoji,
// lone surrogates, characters NFKC changes (fullwidth, ligatures, math letters), ß.
const piece = fc.oneof(
  fc.constantFrom(
    'São Paulo', 'Straße', 'STRASSE', 'naïve', 'e\u0301', '\u0301a', 'a\u0301\u0301b', 'Привет', 'Ελληνικά', 'العربية', '٣٤', 'हिन्दी', 'क्\u200Dष', 'می\u200Cخواهم',
    '한국어', '東京', 'ひらがな', 'カタカナ', '漢字かな交じり', 'ガ', 'か\u3099', '\u3099', '𠀀𠀁', '𠀀', '東', '1\uFE0F\u20E3', 'a\uFE0Fb', '😀', 'a😀b', '\uD800', '\uDC00', 'x\uD800y',
    'ＡＢＣ１２３', 'ﬁne', '𝐀𝐁', '𐌰𐌱', "don't", 'O’Brien', "a''b", "'x", "x'", 'a\u200Cb', '\u200Dz', 'z\u200D', 'a\u200C\u200Db', "a'\u0301", "a'東", 'é’é',
    'x'.repeat(254) + 'é', 'é'.repeat(256), ' ', '\n', '-', '.', '—', '«»', 'ǅ', 'ǉ', 'İ', 'ς',
  ),
  fc.string({ unit: fc.constantFrom('a', 'Z', '9', ' ', "'", '’', '\u200C', '\u200D', 'é', '\u0301', '東', 'か', 'ア', '한', 'ж', '\uFE0F', '\u20E3', '😀', '𠀀', '\uD800', '-'), maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 6 }),
);
const text = fc.array(piece, { maxLength: 24 }).map((p) => p.join(''));

describe('the Unicode parse path (unicode-terms.ts)', () => {
  it('classifies characters as the Unicode pattern does', () => {
    expect(['a', '9', 'é', 'ж', '한', '٣', '𐌰'].map((c) => unicodeCharClass(c.codePointAt(0)!))).toEqual(Array(7).fill(CHAR_START));
    expect(['\u0301', '\u093F'].map((c) => unicodeCharClass(c.codePointAt(0)!))).toEqual([CHAR_MARK, CHAR_MARK]);
    expect(['東', 'か', 'ア', '𠀀', '\u3099'].map((c) => unicodeCharClass(c.codePointAt(0)!))).toEqual(Array(5).fill(CHAR_CJK));
    expect(["'", '’', '\u200C', '\u200D'].map((c) => unicodeCharClass(c.codePointAt(0)!))).toEqual(Array(4).fill(CHAR_JOINER));
    expect([' ', '-', '\uFE0F', '\u20E3', '😀', '\uD800'].map((c) => unicodeCharClass(c.codePointAt(0)!))).toEqual(Array(6).fill(CHAR_OTHER));
  });

  it('finds exactly the raw tokens of the tokenizer, CJK as unigrams and as bigrams, at several token length limits', () => {
    for (const options of [RAW, { ...RAW, cjk: 'bigram' }, { ...RAW, maxTokenLength: 1 }, { ...RAW, cjk: 'bigram', maxTokenLength: 3 }, { ...RAW, maxTokenLength: 4 }] as TokenizerOptions[]) {
      fc.assert(
        fc.property(text, (t) => {
          expect(tableTokens(t, options).tokens).toEqual(rawTokens(t, options));
        }),
        { numRuns: 800 },
      );
    }
  });

  it('analyses each distinct raw token once, in order of first occurrence, across texts sharing a table', () => {
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 5 }), (texts) => {
        const table = new UnicodeTermTable();
        const seen: string[] = [];
        for (const t of texts) expect(tableTokens(t, RAW, table, seen).tokens).toEqual(rawTokens(t));
        const expected = [...new Set(texts.flatMap((t) => rawTokens(t)))];
        expect(seen).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('gives the same TermIds as the tokenizer document after document (default analysis: stopwords, Porter on Latin words only), by the table from the start, after a switch from the regex, and by the regex', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(text, fc.constantFrom('', ' the running whales', " o'brien’s")), { minLength: 1, maxLength: 6 }), fc.constantFrom(0, 1, 40, UNICODE_TABLE_AFTER_UNITS), (docs, after) => {
        const tokenizer = createTokenizer();
        const inverter = new DocumentInverter(tokenizer, analysedTermIds(tokenizer, new TermDictionary()), after);
        const dict = new TermDictionary();
        for (const [t, tail] of docs) {
          const doc = t + tail;
          const expected: number[] = [];
          tokenizer.tokenize(doc, (term) => expected.push(dict.idOf(term)));
          expect(Array.from(inverter.invert({ title: '', text: doc }))).toEqual(expected);
        }
      }),
      { numRuns: 600 },
    );
  });

  it('keeps tokens of many code units and a table that grows past its first size', () => {
    const words = Array.from({ length: 20000 }, (_, i) => `ж${i.toString(36)}é`);
    const t = words.join(' ') + ' ' + words.slice(0, 10).join('\u200C') + ' 東京' + 'я'.repeat(300);
    const { tokens, analysed } = tableTokens(t);
    expect(tokens).toEqual(rawTokens(t));
    expect(analysed.length).toBe(20000 + 1 + 2);
  });
});
