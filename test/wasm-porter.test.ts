import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { WasmStemmer } from '../indexer/scan/wasm-ascii-table.js';
import { porterStem } from '../indexer/analysis/porter-stemmer.js';
import { createTokenizer } from '../indexer/analysis/tokenizer.js';

/** A stemmer of strings: WasmStemmer.stemRange over the string's UTF-8 bytes. */
function wasmStemmer(): { stem(token: string): string | undefined } {
  const s = new WasmStemmer();
  return {
    stem: (token) => {
      const bytes = Buffer.from(token, 'utf8');
      return s.stemRange(bytes, 0, bytes.length);
    },
  };
}

/** What the tokenizer makes of an ASCII raw token: Porter with a letter and at most 255 characters, else as it is. */
const expected = (w: string): string => (/[a-z]/.test(w) && w.length <= 255 ? porterStem(w) : w);

// Endings every step of the stemmer looks at, so that fast-check's words reach all its rules.
const endings = ['s', 'es', 'ies', 'sses', 'ed', 'eed', 'ing', 'y', 'ational', 'tional', 'enci', 'anci', 'izer', 'abli', 'bli', 'alli', 'entli', 'eli', 'ousli', 'ization', 'ation', 'ator', 'alism', 'iveness', 'fulness', 'ousness', 'aliti', 'iviti', 'biliti', 'logi', 'icate', 'ative', 'alize', 'iciti', 'ical', 'ful', 'ness', 'al', 'ance', 'ence', 'er', 'ic', 'able', 'ible', 'ant', 'ement', 'ment', 'ent', 'sion', 'tion', 'ou', 'ism', 'ate', 'iti', 'ous', 'ive', 'ize', 'e', 'll', 'at', 'bl', 'iz'];
const word = fc
  .tuple(fc.stringMatching(/^[aeiouybcdlmnrstwxz0-9]{0,9}$/), fc.constantFrom('', ...endings), fc.constantFrom('', ...endings))
  .map(([stem, a, b]) => stem + a + b);

describe('the WebAssembly Porter stemmer of the parse workers', () => {
  it('stems exactly like the JS stemmer (natural\'s, quirks included) on generated words', () => {
    const s = wasmStemmer();
    fc.assert(
      fc.property(word, (w) => {
        expect(s.stem(w)).toBe(expected(w));
      }),
      { numRuns: 20000 },
    );
  });

  it('stems every word of the sample crawl, with every ending, like the JS stemmer', () => {
    const s = wasmStemmer();
    const words = new Set(readFileSync('corpus-samples/moby-dick/chapters.jsonl', 'utf8').toLowerCase().match(/[a-z0-9]+/g));
    expect(words.size).toBeGreaterThan(10000);
    let checked = 0;
    for (const w of words) {
      for (const e of ['', ...endings]) {
        expect(s.stem(w + e)).toBe(expected(w + e));
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(600000);
  });

  it('leaves digit-only and over-long tokens as they are, and refuses anything but [a-z0-9]', () => {
    const s = wasmStemmer();
    expect(s.stem('2002')).toBe('2002');
    expect(s.stem('x'.repeat(300) + 'ing')).toBe('x'.repeat(300) + 'ing');
    expect(s.stem('relational')).toBe('relat');
    // U+0171 and U+0161: their low bytes are 'q' and 'a' (a Latin-1 write would have taken them).
    for (const w of ['café', 'Running', "don't", 'ţest', 'a-b', 'q\u0171', '\u0161', '']) expect(s.stem(w)).toBe(w === '' ? '' : undefined);
    expect(s.stem('x'.repeat(5000))).toBe('x'.repeat(5000));
    expect(s.stem('x'.repeat(5000) + 'é')).toBeUndefined();
  });

  it("with the tokenizer's analysis as the fallback, gives the tokenizer's term for every raw token", () => {
    const s = wasmStemmer();
    const tokenizer = createTokenizer();
    const raws = ['running', 'cafés', 'naïve', 'москва', '東', 'relational', '2002', 'abc123', 'x'.repeat(300) + 'ing', 'ponies', 'ǆungla'];
    for (const raw of raws) expect(s.stem(raw) ?? tokenizer.analyzeToken(raw)).toBe(tokenizer.analyzeToken(raw));
  });
});
