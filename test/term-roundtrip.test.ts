/**
 * Term strings survive every round trip: quotes, backslashes, NUL, emoji and 10 kB terms go
 * through the index writer, the reader (lexicon, lookups, postings), verify and CIFF export
 * unchanged; a build with a raised maxTokenLength keeps (and finds) a 10,000-character token.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../src/build.js';
import { UserError } from '../src/shared/errors.js';
import { openIndex } from '../src/reader.js';
import { createTokenizer, MAX_TOKEN_LENGTH, MAX_TOKEN_LENGTH_LIMIT, resolveTokenizerOptions } from '../indexer/analysis/tokenizer.js';
import { exportCiff } from '../src/ciff/ciff.js';
import { INDEX_DB, POSTINGS_FILE } from '../merge/index-store.js';
import { LEXICON_FILE } from '../merge/lexicon-file.js';
import { contentsIn, documentTable } from './helpers/index-contents.js';
import { writeManifest } from '../merge/manifest.js';
import { writeRunFile } from '../merge/runs.js';
import { verifyIndex } from '../merge/verify.js';
import { writeIndex } from '../merge/write-index.js';
import { AsciiTermTable, scanAscii } from '../indexer/scan/ascii-terms.js';
import { TermDictionary } from '../indexer/fill/dictionary.js';
import { analysedTermIds, DocumentInverter } from '../indexer/scan/document-inverter.js';
import { readCiff } from './helpers/ciff-reader.js';
import { codePointOrder } from './helpers/naive-inversion.js';
import { radixSortPairs } from '../indexer/sort/cpu-sorter.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-terms-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let serial = 0;
const fresh = (name: string): string => join(work, `${name}-${serial++}`);

// ---------------------------------------------------------------------------------------------
// Layer (b): the index writer with hand-made runs, read back through the reader and CIFF.

const DOCS = 3;
/** The docIDs of term i's postings (1 or 2 documents). */
const docsOf = (i: number): number[] => (i % 2 === 0 ? [i % DOCS] : [...new Set([i % DOCS, (i + 1) % DOCS])].sort((a, b) => a - b));

/**
 * Writes an index whose terms are exactly `terms` (term i has the postings docsOf(i)), through two
 * runs sorted by term keys, as a build's blocks are, and the heap merge.
 */
function writeTermIndex(terms: readonly string[], formatVersion: 3 | 4 = 4): string {
  const dir = fresh('written');
  mkdirSync(dir);
  const pairs: number[] = [];
  const lengths = new Array<number>(DOCS).fill(0);
  terms.forEach((_, i) => {
    for (const d of docsOf(i)) {
      pairs.push(i, d);
      lengths[d]!++;
    }
  });
  // Two runs, each sealed with the terms seen so far and sorted by (key, docID): the merge has
  // to interleave them and map the first run's keys.
  const dictionary = new TermDictionary();
  const all = Uint32Array.from(pairs);
  const half = 2 * Math.floor(all.length / 4);
  const runPaths: string[] = [];
  for (const [k, part] of [all.slice(0, half), all.slice(half)].entries()) {
    if (part.length === 0) continue;
    for (let i = 0; i < part.length; i += 2) dictionary.idOf(terms[part[i]!]!);
    const keys = dictionary.lexKeys();
    const sorted = radixSortPairs(part, part.length / 2, new Uint32Array(part.length), keys);
    const path = join(dir, `run-${k}.bin`);
    writeRunFile(path, sorted, part.length / 2, keys.length);
    runPaths.push(path);
  }
  expect(dictionary.terms).toEqual(terms);
  const documents = documentTable(lengths.map((length, docId) => ({ externalId: `doc-${docId}`, path: '<test>', length })));
  writeIndex(dir, runPaths, contentsIn(dir, terms, documents, { tokenizer: { stem: 'none', stopwords: 'none', cjk: 'unigram' } }, false, formatVersion), 1 << 24);
  for (const p of runPaths) rmSync(p);
  writeManifest(dir, [INDEX_DB, POSTINGS_FILE], formatVersion);
  return dir;
}

/** Every way back to the term strings gives exactly `terms`. */
function expectRoundTrip(dir: string, terms: readonly string[]): void {
  const sorted = [...terms].sort(codePointOrder);
  const reader = openIndex(dir);
  try {
    terms.forEach((t, i) => {
      const e = reader.lexiconEntry(t);
      expect(e, `lexicon entry of term ${i}`).toBeDefined();
      expect(e!.term === t).toBe(true);
      expect(e!.termId).toBe(sorted.indexOf(t));
      expect(e!.df).toBe(docsOf(i).length);
      expect(Array.from(reader.postingsOf(t).docIds)).toEqual(docsOf(i));
    });
    const listed = [...reader.lexicon()].map((e) => e.term);
    expect(listed.length).toBe(terms.length);
    expect(listed.every((t, i) => t === sorted[i])).toBe(true);
    const ciffPath = `${dir}.ciff`;
    exportCiff(reader, ciffPath, 'terms');
    const ciff = readCiff(ciffPath);
    expect(ciff.lists.map((l) => l.term)).toEqual(sorted);
    for (const l of ciff.lists) expect(l.postings.map((p) => p.docid)).toEqual(docsOf(terms.indexOf(l.term)));
    rmSync(ciffPath);
  } finally {
    reader.close();
  }
  expect(verifyIndex(dir)).toMatchObject({ terms: terms.length, documents: DOCS });
  if (!existsSync(join(dir, LEXICON_FILE))) {
    // Format 3: the stored value is the whole string, NUL and all (not cut at the first NUL by a C API).
    const db = new Database(join(dir, INDEX_DB), { readonly: true });
    try {
      const stored = db.prepare('SELECT term_id AS id, typeof(term) AS type, length(CAST(term AS BLOB)) AS bytes FROM terms').all() as { id: number; type: string; bytes: number }[];
      expect(stored.length).toBe(terms.length);
      for (const r of stored) {
        expect(r.type).toBe('text');
        expect(r.bytes).toBe(Buffer.byteLength(sorted[r.id]!, 'utf8'));
      }
    } finally {
      db.close();
    }
  }
}

const HOSTILE_TERMS = [
  "it's",
  'say "hi"',
  `'"'`,
  'back\\slash',
  '\\',
  "'; DROP TABLE terms; --",
  'nul\u0000inside',
  '\u0000',
  '\u0000\u0000',
  'trailing\u0000',
  'nul', // a prefix of 'nul\0inside': must stay a different term
  '😀🐋',
  'ab\u{1F600}cd',
  '\u{10FFFF}',
  'tab\tnew\nline\r',
  '%_*?[',
  'x'.repeat(10_000),
  'é'.repeat(10_000),
  'y'.repeat(9_999) + '\u0000',
  'a',
];

describe('term strings through the index writer, reader, verify and CIFF (layer b)', () => {
  it('keeps quotes, backslashes, NUL, emoji and 10 kB terms exactly (lexicon.bin, and format 3\'s SQLite lexicon)', () => {
    expectRoundTrip(writeTermIndex(HOSTILE_TERMS), HOSTILE_TERMS);
    expectRoundTrip(writeTermIndex(HOSTILE_TERMS, 3), HOSTILE_TERMS);
  });

  it('keeps any random Unicode strings exactly (property)', () => {
    const term = fc.oneof(
      { weight: 8, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 24 }) },
      { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom('\u0000', "'", '"', '\\', 'é', '😀'), minLength: 1, maxLength: 6 }) },
      { weight: 1, arbitrary: fc.tuple(fc.string({ unit: 'binary', maxLength: 4 }), fc.integer({ min: 256, max: 10_000 })).map(([s, n]) => s + 'q'.repeat(n) + s) },
    );
    fc.assert(
      fc.property(fc.uniqueArray(term, { minLength: 1, maxLength: 20 }), (terms) => {
        const dir = writeTermIndex(terms);
        expectRoundTrip(dir, terms);
        rmSync(dir, { recursive: true });
      }),
      { numRuns: 100 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// The maxTokenLength option.

const LONG_ASCII = 'abcdefghij'.repeat(1_000);
const LONG_ACCENT = 'é'.repeat(10_000);
const DOCUMENTS = [
  { id: 'long-ascii', text: `The whale ${LONG_ASCII} harpoon.` }, // pure ASCII: the parser's fast path
  { id: 'long-accent', text: `An ocean, ${LONG_ACCENT} sailor!` }, // non-ASCII: the tokenizer's Unicode scan
  { id: 'plain', text: 'the whale and the sea' },
];

function writeCrawl(): string {
  const dir = fresh('crawl');
  mkdirSync(dir);
  writeFileSync(join(dir, 'docs.jsonl'), DOCUMENTS.map((d) => JSON.stringify(d)).join('\n') + '\n');
  return dir;
}

async function build(input: 'crawl' | 'documents', maxTokenLength?: number): Promise<string> {
  const output = fresh(`index-${input}`);
  await buildIndex({
    input: input === 'crawl' ? writeCrawl() : DOCUMENTS,
    output,
    sorter: 'cpu',
    workers: 2,
    ...(maxTokenLength === undefined ? {} : { maxTokenLength }),
  });
  return output;
}

describe('maxTokenLength: a full build keeps a 10,000-character token', () => {
  for (const input of ['crawl', 'documents'] as const) {
    it(`maxTokenLength 20000 (${input === 'crawl' ? 'crawl, parse workers' : 'documents, main thread'}): lexicon, search, verify and CIFF have the exact term`, async () => {
      const dir = await build(input, 20_000);
      const reader = openIndex(dir);
      try {
        expect((reader.settings.tokenizer as { maxTokenLength?: number }).maxTokenLength).toBe(20_000);
        for (const [term, id] of [
          [LONG_ASCII, 'long-ascii'],
          [LONG_ACCENT, 'long-accent'],
        ] as const) {
          const e = reader.lexiconEntry(term);
          expect(e?.term === term).toBe(true);
          expect(e!.df).toBe(1);
          expect(reader.analyze(term)).toEqual([term]); // the reader's tokenizer has the saved limit
          const hits = reader.search(term);
          expect(hits.map((h) => h.externalId)).toEqual([id]);
          // Case is folded like any token; the query finds the same term.
          expect(reader.search(term.toUpperCase()).map((h) => h.externalId)).toEqual([id]);
        }
        for (const w of ['whale', 'harpoon', 'ocean', 'sailor', 'sea']) expect(reader.lexiconEntry(reader.analyze(w)[0]!), w).toBeDefined();
        expect(verifyIndex(dir).documents).toBe(3);
        const ciffPath = `${dir}.ciff`;
        exportCiff(reader, ciffPath, 'long');
        const lists = readCiff(ciffPath).lists;
        const docIdOf = (id: string) => [...reader.documents()].find((d) => d.externalId === id)!.docId;
        expect(lists.find((l) => l.term === LONG_ASCII)?.postings).toEqual([{ docid: docIdOf('long-ascii'), tf: 1 }]);
        expect(lists.find((l) => l.term === LONG_ACCENT)?.postings).toEqual([{ docid: docIdOf('long-accent'), tf: 1 }]);
      } finally {
        reader.close();
      }
    });
  }

  it('the default limit drops the 10 kB tokens and indexes the other words', async () => {
    const dir = await build('crawl');
    const reader = openIndex(dir);
    try {
      expect(reader.settings.tokenizer).toEqual({ stem: 'porter', stopwords: 'english', cjk: 'unigram', titleWeight: 2 });
      expect(reader.lexiconEntry(LONG_ASCII)).toBeUndefined();
      expect(reader.lexiconEntry(LONG_ACCENT)).toBeUndefined();
      expect(reader.search(LONG_ASCII)).toEqual([]);
      for (const w of ['whale', 'harpoon', 'ocean', 'sailor', 'sea']) expect(reader.lexiconEntry(reader.analyze(w)[0]!), w).toBeDefined();
      expect(reader.search('harpoon').map((h) => h.externalId)).toEqual(['long-ascii']);
      expect(reader.search('sailor').map((h) => h.externalId)).toEqual(['long-accent']);
      expect([...reader.lexicon()].every((e) => e.term.length <= MAX_TOKEN_LENGTH)).toBe(true);
      expect(verifyIndex(dir).documents).toBe(3);
    } finally {
      reader.close();
    }
  });

  it('the CLI flag --max-token-length reaches the build and search', () => {
    const cli = new URL('../dist/src/cli.js', import.meta.url).pathname;
    const run = (...args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: { ...process.env, GPUINDEX_DEBUG: '' } });
    const crawl = writeCrawl();
    const out = fresh('cli');
    const b = run('build', crawl, '-o', out, '--sorter', 'cpu', '--max-token-length', '20000', '-q');
    expect(b.stderr).toBe('');
    expect(b.status).toBe(0);
    const s = run('search', out, LONG_ACCENT, '--json');
    expect(s.status).toBe(0);
    expect(JSON.parse(s.stdout).map((h: { externalId: string }) => h.externalId)).toEqual(['long-accent']);
    const bad = run('build', crawl, '-o', fresh('cli-bad'), '--max-token-length', '0');
    expect(bad.status).not.toBe(0);
    expect(bad.stderr.trim()).toMatch(/^gpuindex: --max-token-length must be an integer from 1 to 65536, got 0$/);
  });
});

describe('maxTokenLength in the tokenizer and the ASCII fast path', () => {
  it('accepts 1 .. 65536 and rejects anything else with a one-line UserError', () => {
    expect(resolveTokenizerOptions({ maxTokenLength: 1 }).maxTokenLength).toBe(1);
    expect(resolveTokenizerOptions({ maxTokenLength: MAX_TOKEN_LENGTH_LIMIT }).maxTokenLength).toBe(65_536);
    // The default (given or not) is not recorded: default settings, and index bytes, are as before.
    expect(resolveTokenizerOptions({ maxTokenLength: MAX_TOKEN_LENGTH })).toEqual({ stem: 'porter', stopwords: 'english', cjk: 'unigram' });
    expect(createTokenizer().maxTokenLength).toBe(255);
    for (const bad of [0, -1, 65_537, 1.5, Number.NaN, Infinity, '300', true]) {
      let err: unknown;
      try {
        resolveTokenizerOptions({ maxTokenLength: bad as number });
      } catch (e) {
        err = e;
      }
      expect(err, String(bad)).toBeInstanceOf(UserError);
      expect((err as Error).message).toMatch(/^--max-token-length must be an integer from 1 to 65536, got [^\n]+$/);
    }
  });

  it('drops exactly the tokens longer than the limit, in every script', () => {
    const terms = (text: string, maxTokenLength: number) => {
      const out: string[] = [];
      createTokenizer({ stem: 'none', stopwords: 'none', cjk: 'bigram', maxTokenLength }).tokenize(text, (t) => out.push(t));
      return out;
    };
    expect(terms(`${'a'.repeat(300)} ${'b'.repeat(301)} ok`, 300)).toEqual(['a'.repeat(300), 'ok']);
    expect(terms(`${'é'.repeat(300)} ${'è'.repeat(301)} ok`, 300)).toEqual(['é'.repeat(300), 'ok']);
    expect(terms("don't stops", 4)).toEqual(['dont']); // counted without the apostrophe
    expect(terms('ab abc 中文 𠀀', 2)).toEqual(['ab', '中文', '𠀀']);
    expect(terms('ab abc 中文 𠀀', 1)).toEqual([]); // a CJK bigram is 2 units, U+20000 alone is 2
    expect(terms(`x ${'y'.repeat(65_536)} ${'z'.repeat(65_537)}`, 65_536)).toEqual(['x', 'y'.repeat(65_536)]);
  });

  it('keeps tokens over 255 units unstemmed, and analyses adversarial long tokens in linear time', () => {
    const tok = createTokenizer({ maxTokenLength: MAX_TOKEN_LENGTH_LIMIT });
    const long = 'ba'.repeat(200) + 'ational'; // Porter would rewrite the suffix
    expect(tok.analyzeToken(long)).toBe(long);
    expect(tok.analyzeToken('relational')).toBe('relat');
    // A Latin run ending in another script backtracks quadratically in the Latin-word test,
    // a consonant run is quadratic in Porter: seconds each at 64 Ki units without the length gate.
    const t0 = performance.now();
    for (const text of ['a'.repeat(MAX_TOKEN_LENGTH_LIMIT - 1) + 'ж', 'bcd'.repeat(21_845)]) {
      const out: string[] = [];
      tok.tokenize(text, (t) => out.push(t));
      expect(out).toEqual([text]);
    }
    expect(performance.now() - t0).toBeLessThan(2_000);
  });

  it('the ASCII fast path finds the same tokens as the tokenizer for any limit (property)', () => {
    const piece = fc.oneof(
      fc.constantFrom("don't", "O'Brien's", 'A', ' ', '\n', '-', "'", 'x'.repeat(7), "a'b'c"),
      fc.stringMatching(/^[a-zA-Z0-9' .,]{0,12}$/),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 20 }).map((p) => p.join('')), fc.integer({ min: 1, max: 10 }), (text, max) => {
        const expected: string[] = [];
        createTokenizer({ stem: 'none', stopwords: 'none', maxTokenLength: max }).tokenizeRaw(text, (t) => expected.push(t));
        const names: string[] = [];
        const got: string[] = [];
        scanAscii(text, new AsciiTermTable(), (raw) => names.push(raw) - 1, (id) => got.push(names[id]!), max);
        expect(got).toEqual(expected);
      }),
      { numRuns: 1000 },
    );
  });

  it('the parser (fast path and table) keeps a long ASCII token whole, once per distinct token', () => {
    const tokenizer = createTokenizer({ stem: 'none', stopwords: 'none', maxTokenLength: 20_000 });
    const dictionary = new TermDictionary();
    const inverter = new DocumentInverter(tokenizer, analysedTermIds(tokenizer, dictionary));
    const a = 'q'.repeat(10_000);
    const b = 'q'.repeat(9_999) + 'r'; // same length, same prefix: must not share a table slot
    const ids = Array.from(inverter.invert({ text: `${a} ${b} ${a.toUpperCase()} ${'q'.repeat(20_001)} ${b}` }));
    expect(dictionary.terms).toEqual([a, b]);
    expect(ids).toEqual([0, 1, 0, 1]);
  });
});
