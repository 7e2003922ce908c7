import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TermDictionary } from '../indexer/fill/dictionary.js';
import { analysedTermIds, DocumentInverter, LocalTerms, rawTokenIds } from '../indexer/scan/document-inverter.js';
import { AsciiTermTable, scanAscii } from '../indexer/scan/ascii-terms.js';
import { CHUNK, chunkCuts, WasmAsciiTable } from '../indexer/scan/wasm-ascii-table.js';
import { tokenStrings } from './helpers/raw-tokens.js';
import { createTokenizer } from '../indexer/analysis/tokenizer.js';

/** What the tokenizer makes of a text, as raw tokens. */
function rawTokens(text: string): string[] {
  const out: string[] = [];
  createTokenizer({ stem: 'none', stopwords: 'none' }).tokenizeRaw(text, (t) => out.push(t));
  return out;
}

/**
 * A fresh inverter's TermIds of each text, document after document, against the tokenizer's, with
 * both analyses (`titled`: each text is its own title too, so its terms come twice).
 */
function expectTokenizersTermIds(texts: string[], islandsFrom: number, titled: boolean): void {
  for (const options of [{}, { cjk: 'bigram' as const }]) {
    const tokenizer = createTokenizer(options);
    const inverter = new DocumentInverter(tokenizer, analysedTermIds(tokenizer, new TermDictionary()), undefined, islandsFrom);
    const dict = new TermDictionary();
    for (const t of texts) {
      const expected: number[] = [];
      tokenizer.tokenize(t, (term) => expected.push(dict.idOf(term)));
      expect(Array.from(inverter.invert({ title: titled ? t : '', text: t }))).toEqual(titled ? [...expected, ...expected] : expected);
    }
  }
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
        const inverter = new DocumentInverter(tokenizer, analysedTermIds(tokenizer, new TermDictionary()));
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
        const inverter = new DocumentInverter(tokenizer, analysedTermIds(tokenizer, new TermDictionary()));
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

  it('cuts a long text that is not pure ASCII into ASCII pieces and the words around its other characters: the same TermIds as the whole text', () => {
    // Words whose analysis depends on what is around them: Greek final sigma, NFKC that makes
    // ASCII (ligature, fullwidth, superscript, NBSP), a combining mark after a space, joiners,
    // CJK runs, U+2019 between letters; ASCII between them short and long (MIN_ASCII_PIECE).
    const word = fc.constantFrom(
      '\u03a3\u0391\u03a3', '\u039f\u0394\u039f\u03a3.ab', 'x\u00b2', '\ufb01ne', '\uff21\uff22c', 'a\u00a0b', '\u0301abc', 'a\u200db', '\u65e5\u672c\u8a9e', '\u65e5 \u672c',
      'don\u2019t', 'caf\u00e9', 'Stra\u00dfe', '\ufffd', '\u201cq\u201d', '\ud83d\ude00x', 'na\u00efve\u2019s',
    );
    const gap = fc.oneof(fc.constantFrom(' ', '\n', '\t', ' \r\n '), asciiText.map((t) => ` ${t} `), fc.array(piece, { minLength: 20, maxLength: 40 }).map((p) => ` ${p.join(' ')} `));
    const text = fc.array(fc.tuple(gap, word), { minLength: 1, maxLength: 12 }).map((parts) => parts.map(([g, w]) => g + w).join('') + ' end');
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 4 }), fc.constantFrom(0, 200), (texts, islandsFrom) => expectTokenizersTermIds(texts, islandsFrom, false)),
      { numRuns: 400 },
    );
  });

  it('scans text whose only non-ASCII characters separate tokens as ASCII: the same TermIds as the Unicode analysis', () => {
    // Separators (spaces NFKC makes ' ', dashes, quotes, U+2019 as an apostrophe, pilcrow, arrows,
    // soft hyphen) beside characters that only look like separators: symbols NFKC turns into ASCII
    // (U+2122, U+2026, U+00B4, U+2024, fullwidth quote, circled letter), joiners, marks, letters, emoji.
    const other = fc.constantFrom(
      '\u00a0', '\u2003', '\u3000', '\u2014', '\u2013', '\u2019', '\u2018', '\u201c', '\u201d', '\u00b6', '\u00a7', '\u00bb', '\u2192', '\u00a9', '\u200b', '\u00ad', '\u2500',
      '\u2122', '\u2026', '\u00b4', '\u2024', '\uff02', '\u24b6', '\u200d', '\u0301', '\u00e9', '\u00df', '\u03a3', '\ud83d\ude00', '\u00bd', '\u2160',
    );
    const text = fc.array(fc.oneof(piece, other, other), { minLength: 1, maxLength: 30 }).map((p) => p.join(''));
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 4 }), fc.constantFrom(0, 200), (texts, islandsFrom) => expectTokenizersTermIds(texts, islandsFrom, true)),
      { numRuns: 3000 },
    );
  });

  it('inverts a text given as UTF-8 bytes (invertUtf8) as invert() does the decoded text, declining only a chunk\'s length with no ASCII whitespace', () => {
    // The same mix as above (separators, look-alikes, letters, marks, emoji), titled or not.
    const other = fc.constantFrom(
      '\u00a0', '\u2003', '\u3000', '\u2014', '\u2013', '\u2019', '\u2018', '\u201c', '\u201d', '\u00b6', '\u00a7', '\u00bb', '\u2192', '\u00a9', '\u200b', '\u00ad', '\u2500',
      '\u2122', '\u2026', '\u00b4', '\u2024', '\uff02', '\u24b6', '\u200d', '\u0301', '\u00e9', '\u00df', '\u03a3', '\ud83d\ude00', '\u00bd', '\u2160',
    );
    // Characters that only separate (an HTML page's usual non-ASCII): such a text is never declined.
    const separator = fc.constantFrom('\u00a0', '\u2014', '\u2013', '\u00b6', '\u201c', '\u201d', '\u2019', '\u2192');
    const mixed = fc.array(fc.oneof(piece, other), { minLength: 0, maxLength: 30 }).map((p) => p.join(''));
    const plain = fc.array(fc.oneof(piece, piece, separator), { minLength: 0, maxLength: 30 }).map((p) => p.join(''));
    // Long texts, in pieces of at most `chunk` bytes: the default, or a few bytes (cut often).
    const long = fc.array(fc.oneof(piece, other, fc.constantFrom(' ', '\n', '\r', '\t', '\f')), { minLength: 0, maxLength: 120 }).map((p) => p.join(''));
    const doc = fc.record({ title: fc.oneof(fc.constant(''), asciiText, mixed), text: fc.oneof(mixed, plain, long), plain: fc.boolean() });
    /** The longest run of bytes with no ASCII whitespace (space, tab, LF, CR) in `bytes`. */
    const longestWord = (bytes: Uint8Array): number => Math.max(0, ...Buffer.from(bytes).toString('latin1').split(/[ \t\n\r]/).map((w) => w.length));
    fc.assert(
      fc.property(fc.array(doc, { minLength: 1, maxLength: 6 }), fc.constantFrom(CHUNK, 300, 40, 9), fc.nat(7), (docs, chunk, offset) => {
        const tokenizer = createTokenizer();
        const viaString = new DocumentInverter(tokenizer, analysedTermIds(tokenizer, new TermDictionary()));
        const viaBytes = new DocumentInverter(tokenizer, analysedTermIds(tokenizer, new TermDictionary()), undefined, undefined, chunk);
        for (const d of docs) {
          const expected = Array.from(viaString.invert(d));
          const expectedTitle = viaString.titleLength;
          // At any offset in its buffer (the scan reads aligned words of it).
          const utf8 = Buffer.from(d.text, 'utf8');
          const bytes = new Uint8Array(new ArrayBuffer(offset + utf8.length + 5), offset, utf8.length);
          bytes.set(utf8);
          const inverted = viaBytes.invertUtf8(d.title, bytes);
          if (longestWord(bytes) < chunk) expect(inverted).toBeDefined();
          const actual = inverted ? Array.from(inverted) : Array.from(viaBytes.invert(d));
          expect(actual).toEqual(expected);
          expect(viaBytes.titleLength).toBe(expectedTitle);
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('inverts a UTF-8 text that lies in a buffer over 4 MiB (whose view it does not keep) as the decoded text', () => {
    const tokenizer = createTokenizer();
    const viaString = new DocumentInverter(tokenizer, analysedTermIds(tokenizer, new TermDictionary()));
    const viaBytes = new DocumentInverter(tokenizer, analysedTermIds(tokenizer, new TermDictionary()));
    const text = 'Caf\u00e9 au lait \u2014 the na\u00efve r\u00e9sum\u00e9 of '.repeat(40) + 'plain ASCII words after it '.repeat(20);
    const utf8 = Buffer.from(text, 'utf8');
    for (const size of [(4 << 20) + 64, 64 << 10]) {
      const bytes = new Uint8Array(new ArrayBuffer(size + utf8.length), size - 3, utf8.length);
      bytes.set(utf8);
      expect(Array.from(viaBytes.invertUtf8('', bytes)!)).toEqual(Array.from(viaString.invert({ title: '', text })));
    }
  });

  it('keeps working as its table grows (20,000 distinct tokens)', () => {
    const text = Array.from({ length: 20000 }, (_, i) => `w${i} W${i % 7}`).join(' ');
    expect(fastTokens(text)).toEqual(rawTokens(text));
  });
});

/** The WebAssembly scanner's raw tokens (table of `slots` slots to start with). */
function wasmTokens(text: string, table = new WasmAsciiTable(4)): string[] {
  const names: string[] = [];
  const out: string[] = [];
  const result = table.scan(text, 255, (raw) => names.push(raw) - 1, (ids) => ids.forEach((id) => out.push(names[id]!)));
  expect(result).toBe('scanned');
  return out;
}

describe('the WebAssembly ASCII scanner', () => {
  it('finds exactly the raw tokens of the tokenizer, its table growing from 4 slots inside one text', () => {
    fc.assert(
      fc.property(asciiText, (text) => {
        expect(wasmTokens(text)).toEqual(rawTokens(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps its cache across texts and through growth (20,000 distinct tokens, each analysed once)', () => {
    const table = new WasmAsciiTable(4);
    const analysed = new Map<string, number>();
    const values: number[] = [];
    const texts = [Array.from({ length: 20000 }, (_, i) => `w${i} W${i % 7}`).join(' '), 'w1 w19999 W3 new', "w5 don't Don'T"];
    for (const text of texts) {
      table.scan(text, 255, (raw) => {
        expect(analysed.has(raw)).toBe(false);
        analysed.set(raw, analysed.size);
        return analysed.size - 1;
      }, (ids) => values.push(...ids));
    }
    const expected = texts.flatMap(rawTokens).map((raw) => analysed.get(raw));
    expect(values).toEqual(expected);
    expect(table.size).toBe(analysed.size);
    // Its reported bytes follow the vocabulary: 16 B slots at most half full, plus key bytes.
    expect(table.tableBytes).toBeGreaterThanOrEqual(2 * 16 * table.size);
    expect(new WasmAsciiTable(4).tableBytes).toBeLessThan(1024);
  });

  it('leaves stopwords out, also those first met in the same text', () => {
    const stop = new Set(['the', 'of']);
    const names: string[] = [];
    const run = (text: string) => {
      const out: string[] = [];
      table.scan(text, 255, (raw) => (stop.has(raw) ? -1 : names.push(raw) - 1), (ids) => ids.forEach((id) => out.push(names[id]!)));
      return out;
    };
    const table = new WasmAsciiTable(8);
    expect(run('The end of THE story')).toEqual(['end', 'story']);
    expect(run('of the story of the end')).toEqual(['story', 'end']);
  });

  it('skips tokens longer than the limit (apostrophes not counted)', () => {
    const names: string[] = [];
    const out: string[] = [];
    new WasmAsciiTable(8).scan(`abcd abcde ab'cd ${'x'.repeat(9)} a'b'c'd`, 4, (raw) => names.push(raw) - 1, (ids) => ids.forEach((id) => out.push(names[id]!)));
    expect(out).toEqual(['abcd', 'abcd', 'abcd']);
  });

  it('cuts texts longer than a chunk between tokens, never inside one', () => {
    // Tokens of every length around the cut, with apostrophes: the cut must fall before a
    // character that is neither a word character nor an apostrophe.
    const parts: string[] = [];
    let i = 0;
    while (parts.join(' ').length < 3 * CHUNK) parts.push(`${'q'.repeat(i % 300)}'${i++}`, "it's", 'X'.repeat(i % 17));
    const text = parts.join(' ');
    const cuts = chunkCuts(text)!;
    expect(cuts.length).toBeGreaterThan(3);
    let start = 0;
    for (const cut of cuts) {
      expect(cut - start).toBeLessThanOrEqual(CHUNK);
      expect(text.slice(start, cut).length).toBeGreaterThan(0);
      if (cut < text.length) expect(text[cut]).toBe(' ');
      start = cut;
    }
    expect(wasmTokens(text)).toEqual(rawTokens(text));
  });

  it('declines text that is not pure ASCII, and a chunk with no place to cut, analysing nothing', () => {
    const table = new WasmAsciiTable(8);
    const analyse = () => {
      throw new Error('analysed');
    };
    expect(table.scan('plain words then caf\u00e9', 255, analyse, () => {})).toBe('not-ascii');
    expect(table.scan('\u00ff', 255, analyse, () => {})).toBe('not-ascii');
    expect(table.scan(`ok ${"a'".repeat(CHUNK)}`, 255, analyse, () => {})).toBe('uncut');
    expect(table.size).toBe(0);
  });

  it('starts over with an empty table when an analysis throws (no pending value is ever emitted)', () => {
    const table = new WasmAsciiTable(8);
    expect(() => table.scan('one two three', 255, (raw) => {
      if (raw === 'two') throw new Error('full');
      return 7;
    }, () => {})).toThrow('full');
    expect(table.size).toBe(0);
    const values: number[] = [];
    table.scan('one two', 255, (raw) => raw.length, (ids) => values.push(...ids));
    expect(values).toEqual([3, 3]);
  });

  it("numbers new raw tokens itself in a parse worker's table (ScanNumbering): the local ids and raw tokens of the JS analysis", () => {
    // Stopwords (ASCII ones in the table from the start), tokens too long, apostrophes, text
    // that is not ASCII (numbered by the JS side through the same list), repeats.
    const piece = fc.constantFrom('the', 'The', "don't", 'a', 'whale', 'WHALES', "o'clock", 'naïve', 'café', 'x'.repeat(300), 'über', 'of', 'ship', '42', 'i', ' ', '\n', '.', "'");
    const doc = fc.array(piece, { maxLength: 20 }).map((p) => p.join(' '));
    fc.assert(
      fc.property(fc.array(doc, { minLength: 1, maxLength: 12 }), (docs) => {
        const run = (numbered: boolean) => {
          const tokenizer = createTokenizer();
          const terms = new LocalTerms();
          // A LocalTerms: the scanner numbers its own tokens; the same numbering as a function: it does not.
          const inverter = new DocumentInverter(tokenizer, numbered ? terms : rawTokenIds(tokenizer, terms));
          const tokens: string[] = [];
          const ids = docs.map((text) => {
            const docIds = Array.from(inverter.invert({ title: 'The Title', text }));
            tokens.push(...tokenStrings(terms.takeUnsent()));
            return docIds;
          });
          expect(terms.count).toBe(tokens.length);
          return { ids, tokens };
        };
        const numbered = run(true);
        expect(numbered).toEqual(run(false));
        expect(numbered.tokens.filter((t) => createTokenizer().isStopword(t))).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps its stopwords and goes on numbering from the token list after clear()', () => {
    const terms = new LocalTerms();
    const table = new WasmAsciiTable(8, { terms, stopwords: ['the', 'of', "don't"] });
    const scan = (text: string) => {
      const values: number[] = [];
      table.scan(text, 255, () => {
        throw new Error('a numbering table analyses nothing');
      }, (ids) => values.push(...ids));
      return values;
    };
    expect(scan('the whale of the sea')).toEqual([0, 1]);
    terms.add('from-elsewhere');
    expect(scan('whale ship')).toEqual([0, 3]);
    table.clear();
    expect(scan('of the whale')).toEqual([4]);
    expect(tokenStrings(terms.takeUnsent())).toEqual(['whale', 'sea', 'from-elsewhere', 'ship', 'whale']);
    expect(tokenStrings(terms.takeUnsent())).toEqual([]);
    expect(terms.count).toBe(5);
  });

  it('is what the inverter uses, and the JS scan (GPUINDEX_ASCII_SCAN=js) gives the same TermIds', () => {
    const docs = ["The cat's whiskers", 'naïve café and the cat', 'CATS cat Cat', 'x'.repeat(300) + ' whisker'];
    const invert = () => {
      const inverter = new DocumentInverter(createTokenizer(), analysedTermIds(createTokenizer(), new TermDictionary()));
      return { ids: docs.map((text) => Array.from(inverter.invert({ title: 'Title', text }))), wasm: inverter.wasmScan };
    };
    const wasm = invert();
    process.env.GPUINDEX_ASCII_SCAN = 'js';
    try {
      const js = invert();
      expect(wasm.wasm).toBe(true);
      expect(js.wasm).toBe(false);
      expect(wasm.ids).toEqual(js.ids);
    } finally {
      delete process.env.GPUINDEX_ASCII_SCAN;
    }
  });
});
