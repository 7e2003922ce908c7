import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TermDictionary } from '../indexer/dictionary.js';
import { DocumentInverter } from '../indexer/pipeline.js';
import { AsciiTermTable, scanAscii } from '../indexer/ascii-terms.js';
import { createTokenizer } from '../src/tokenizer.js';

/** What the tokenizer makes of a text, as raw tokens. */
function rawTokens(text: string): string[] {
  const out: string[] = [];
  createTokenizer({ stem: 'none', stopwords: 'none' }).tokenizeRaw(text, (t) => out.push(t));
  return out;
}

function fastTokens(text: string): string[] {
  const names: string[] = [];
  const out: string[] = [];
  scanAscii(text, new AsciiTermTable(), (raw) => names.push(raw) - 1, (id) => out.push(names[id]!));
  return out;
}

// ASCII text heavy in the tricky parts: case, digits, apostrophes, punctuation, long runs.
const piece = fc.oneof(
  fc.constantFrom("don't", "O'Brien's", "rock''n", "'quoted'", "it's", 'A', 'zZ9', '  ', '\n', '-', '.', "'", '42', 'x'.repeat(255), 'y'.repeat(256), "a'b'c", "end'", 'Mc' + "'".repeat(3) + 'x'),
  fc.stringMatching(/^[a-zA-Z0-9' .,;:!?\-\t]{0,12}$/),
);
const asciiText = fc.array(piece, { maxLength: 30 }).map((p) => p.join(''));

describe('the ASCII fast path of the parser', () => {
  it('finds exactly the raw tokens of the tokenizer', () => {
    fc.assert(
      fc.property(asciiText, (text) => {
        expect(fastTokens(text)).toEqual(rawTokens(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('gives the same TermIds as the tokenizer, document after document (default analysis)', () => {
    fc.assert(
      fc.property(fc.array(asciiText, { minLength: 1, maxLength: 8 }), (docs) => {
        const tokenizer = createTokenizer();
        const inverter = new DocumentInverter(tokenizer, new TermDictionary());
        const dict = new TermDictionary();
        for (const text of docs) {
          const expected: number[] = [];
          tokenizer.tokenize(text, (t) => expected.push(dict.idOf(t)));
          expect(Array.from(inverter.invert({ title: '', text }))).toEqual(expected);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('stops at the first non-ASCII character, and the inverter then analyses the whole text the Unicode way', () => {
    const table = new AsciiTermTable();
    const seen: number[] = [];
    expect(scanAscii('plain ascii text', table, () => 0, (v) => seen.push(v))).toBe(true);
    expect(seen).toHaveLength(3);
    expect(scanAscii('cafe\u0301 ok', table, () => 0, () => {})).toBe(false);
    expect(scanAscii('caf\u00e9', table, () => 0, () => {})).toBe(false);
    // Non-ASCII pieces anywhere in otherwise ASCII text: NFKC (the fi ligature becomes "fi",
    // fullwidth digits become ASCII), Unicode words, CJK, a dash between words.
    const unicodePiece = fc.constantFrom(
      '\ufb01ne', '\uff11\uff12', 'Stra\u00dfe', 'caf\u00e9', '\u65e5\u672c', '\u2014', 'na\u00efve', ' \u00a0 ',
      // Non-ASCII that only separates or joins (the normalized table path): curly quotes, U+FFFD, guillemets, U+2019 alone.
      'don\u2019t', '\u2019', '\ufffd', '\u00bb', '\u201cquoted\u201d', 'O\u2019Brien\u2019s', '\u00b7',
    );
    fc.assert(
      fc.property(fc.array(fc.oneof(piece, unicodePiece), { maxLength: 20 }), fc.array(asciiText, { maxLength: 3 }), (pieces, before) => {
        const tokenizer = createTokenizer();
        const inverter = new DocumentInverter(tokenizer, new TermDictionary());
        const dict = new TermDictionary();
        for (const text of [...before, pieces.join('')]) {
          const expected: number[] = [];
          tokenizer.tokenize(text, (t) => expected.push(dict.idOf(t)));
          expect(Array.from(inverter.invert({ title: '', text }))).toEqual(expected);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('keeps working as its table grows (20,000 distinct tokens)', () => {
    const text = Array.from({ length: 20000 }, (_, i) => `w${i} W${i % 7}`).join(' ');
    expect(fastTokens(text)).toEqual(rawTokens(text));
  });
});
