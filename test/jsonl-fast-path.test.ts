import fc from 'fast-check';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TermDictionary } from '../indexer/fill/dictionary.js';
import { analysedTermIds, DocumentInverter } from '../indexer/scan/document-inverter.js';
import { jsonlFastPath, SPAN_KINDS } from '../indexer/scan/jsonl-fast-path.js';
import { WasmAsciiTable } from '../indexer/scan/wasm-ascii-table.js';
import { readCorpusFile, resolveFields, type CorpusItem, type FieldNames } from '../indexer/corpus/index.js';
import { createTokenizer } from '../indexer/analysis/tokenizer.js';

/** A parser's inverter with its own dictionary (TermIds are numbered in order of first sight). */
function inverterWithDictionary(): { inverter: DocumentInverter; dictionary: TermDictionary } {
  const tokenizer = createTokenizer();
  const dictionary = new TermDictionary();
  return { inverter: new DocumentInverter(tokenizer, analysedTermIds(tokenizer, dictionary)), dictionary };
}

/** What the ordinary way (JSON.parse, documentFromJson, inverter) makes of a file, doc by doc, as terms. */
async function documents(path: string, fast: boolean, fields?: FieldNames): Promise<{ items: unknown[]; fastLines: number }> {
  const { inverter, dictionary } = inverterWithDictionary();
  const handler = fast ? jsonlFastPath(resolveFields({ fields }), inverter) : undefined;
  if (fast) expect(handler).toBeDefined();
  const items: unknown[] = [];
  let fastLines = 0;
  for await (const item of readCorpusFile(dir, path, { fields }, undefined, handler) as AsyncIterable<CorpusItem>) {
    if (item.kind === 'skip') {
      items.push(item);
      continue;
    }
    const d = item.doc;
    if (d.termIds) fastLines++;
    const termIds = d.termIds ?? inverter.invert(d);
    items.push({ externalId: d.externalId, line: d.line, idFromLine: d.idFromLine ?? false, warning: d.warning, bytes: d.bytes, terms: Array.from(termIds, (id) => dictionary.terms[id]), ids: Array.from(termIds) });
  }
  return { items, fastLines };
}

const dir = mkdtempSync(join(tmpdir(), 'gpuindex-jsonl-fast-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let fileNo = 0;
function file(lines: readonly string[]): string {
  const name = `f${fileNo++}.jsonl`;
  writeFileSync(join(dir, name), lines.join('\n') + '\n');
  return name;
}

async function expectSameAsOrdinary(lines: readonly string[], fields?: FieldNames): Promise<number> {
  const path = file(lines);
  const slow = await documents(path, false, fields);
  const fast = await documents(path, true, fields);
  expect(fast.items).toEqual(slow.items);
  return fast.fastLines;
}

// Values that exercise the scanner: ASCII prose, escapes of every kind, \u escapes, non-ASCII,
// apostrophes next to escapes, control characters (escaped by JSON.stringify).
const textPiece = fc.oneof(
  fc.constantFrom("don't", "rock'\"n", 'the WHALE', 'a\\b', 'tab\there', 'line\nbreak', 'q"uote', 'sl/ash', '\u0001\u001f', 'café', 'naïve’s', '東京', '\u2019tis', 'x'.repeat(300), '\ud800', '½', 'Ａ', "end'", '\r\n', '42', '4.5e3', 'a\ufffdb', "x'\ufffd'y", '\ufffd\ufffd', 'caf\ufffd\\n'),
  fc.stringMatching(/^[a-zA-Z0-9' .,;:!?\\"\-\t\n]{0,16}$/),
  fc.string({ maxLength: 6 }),
);
const text = fc.array(textPiece, { maxLength: 12 }).map((p) => p.join(''));
const scalar = fc.oneof(text, fc.integer(), fc.double(), fc.constantFrom(true, false, null));
const value = fc.oneof({ depthSize: 'small' }, scalar, fc.array(scalar, { maxLength: 3 }), fc.dictionary(fc.constantFrom('a', 'text', 'id'), scalar, { maxKeys: 3 }));
const key = fc.constantFrom('id', 'docid', '_id', 'url', 'title', 'text', 'body', 'contents', 'other', 'téxt', '');
/** A JSON object line with repeated keys allowed (JSON.parse keeps the last), in random spacing. */
const objectLine = fc
  .tuple(fc.array(fc.tuple(key, value), { maxLength: 6 }), fc.constantFrom('', ' ', '\t', '  '))
  .map(([members, ws]) => `${ws}{${ws}${members.map(([k, v]) => `${JSON.stringify(k)}${ws}:${ws}${JSON.stringify(v)}`).join(`${ws},${ws}`)}${ws}}${ws}`);

describe('the JSONL fast path (WebAssembly validation and scan of the line)', () => {
  it('gives the documents, ids and TermIds of JSON.parse and the ordinary analysis, line after line', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(objectLine, { minLength: 1, maxLength: 8 }), async (lines) => {
        await expectSameAsOrdinary(lines);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses every line JSON.parse refuses, so the reader words the error', async () => {
    const mutated = fc.tuple(objectLine, fc.nat(), fc.constantFrom('', '"', '}', '{', ',', ':', '\\', '\u0000', 'x', '01', '-', '.', 'tru', ']', '\\u12', '\\x')).map(([line, at, s]) => {
      const i = line.length === 0 ? 0 : at % line.length;
      return line.slice(0, i) + s + line.slice(i + 1);
    });
    await fc.assert(
      fc.asyncProperty(fc.array(mutated, { minLength: 1, maxLength: 6 }), async (lines) => {
        // Lines with a raw newline would be two lines: keep them one line each.
        await expectSameAsOrdinary(lines.map((l) => l.replace(/[\n\r]/g, ' ')));
      }),
      { numRuns: 300 },
    );
  });

  it('takes the ordinary mail-like lines itself', async () => {
    const lines = [
      JSON.stringify({ id: 'm/1', title: 'Re: New Sequences', text: "Date: Wed, 21 Aug 2002\nFrom: Chris <cwg@deepeddy.com>\n\n| I can't reproduce this \"error\".\\n" }),
      JSON.stringify({ id: 'm/2', title: '', text: 'plain' }),
      JSON.stringify({ id: 3, title: 'numbered id', text: 'seven whales' }),
      JSON.stringify({ title: 'no id', text: 'falls back to path:line', extra: { nested: [1, { deep: 'x' }] } }),
      JSON.stringify({ id: 'm/5', text: 'first', body: 'and second text fields, joined' }),
      JSON.stringify({ id: 'dup', text: 'overwritten', title: 't', text2: 1, ...{ text: 'last one wins' } }).replace('"text":"last one wins"', '"text":"overwritten","text":"last one wins"'),
    ];
    expect(await expectSameAsOrdinary(lines)).toBe(lines.length);
  });

  it('leaves to the ordinary way what it cannot vouch for, and still agrees', async () => {
    const lines = [
      '{"t\\u0065xt": "an escaped key"}',
      '{"id": "n", "title": 12, "text": "a number as title"}',
      '{"id": "a", "text": ["an", "array", 3]}',
      '{"id": "x", "title": "no text field"}',
      '[1, 2]',
      '"a string"',
      '{"id": "deep", "text": "ok", "x": ' + '['.repeat(80) + ']'.repeat(80) + '}',
      '{"id": "bad" "text": "missing comma"}',
      '{"id": "y", "text": "trailing"} x',
    ];
    expect(await expectSameAsOrdinary(lines)).toBe(0);
  });

  it('decodes \\u escapes and non-ASCII pieces alone, with the same TermIds', async () => {
    const lines = [
      JSON.stringify({ id: 'u1', title: 'Caf\u00e9 society', text: 'plain ASCII text after a non-ASCII title' }),
      '{"id": "u2", "title": "ascii title", "text": "escaped \\u0041BC and \\u00e9t\\u00e9"}',
      JSON.stringify({ id: 'u3', text: 'Straße über 東京 and the whale’s tail' }),
    ];
    expect(await expectSameAsOrdinary(lines)).toBe(lines.length);
  });

  it('keeps text whose only non-ASCII character is U+FFFD in the scanner, as a separator', async () => {
    const table = new WasmAsciiTable(8);
    expect(table.setJsonKeys(['text'])).toBe(true);
    const kindOf = (text: string): number => table.parseJsonLine(Buffer.from(JSON.stringify({ text })))![0]!;
    expect(kindOf('damaged\ufffd\ufffdmail')).toBe(SPAN_KINDS.ESCAPED);
    expect(kindOf('plain')).toBe(SPAN_KINDS.PLAIN);
    expect(kindOf('caf\u00e9 \ufffd')).toBe(SPAN_KINDS.DECODE);
    expect(kindOf('\ufffd caf\u00e9')).toBe(SPAN_KINDS.DECODE);
    expect(kindOf('\ufffe')).toBe(SPAN_KINDS.DECODE);
    const lines = [
      JSON.stringify({ id: 'r1', title: 'Re:\ufffdoffer', text: 'don\ufffdt miss\ufffd\ufffdthis\nit\'s\ufffd\ufffd\ufffdfree' }),
      JSON.stringify({ id: 'r2', text: "rock'\ufffd'n roll\ufffd" + 'x'.repeat(300) + '\ufffdend' }),
      JSON.stringify({ id: 'r3', text: 'mixed \ufffd and caf\u00e9' }),
    ];
    expect(await expectSameAsOrdinary(lines)).toBe(lines.length);
  });

  it("reads a line's later pieces right after scanning an earlier one grew the scanner's memory", async () => {
    // Growing a WebAssembly memory detaches every view of it: the title's scan can grow it (the
    // raw-token table doubling), and the text's span was then read from a detached view.
    const original = WasmAsciiTable.prototype.scanLineSpan;
    let grown = 0;
    WasmAsciiTable.prototype.scanLineSpan = function (this: WasmAsciiTable, ...args: Parameters<WasmAsciiTable['scanLineSpan']>) {
      original.apply(this, args);
      (this as unknown as { x: { memory: { grow(pages: number): number } } }).x.memory.grow(1);
      grown++;
    };
    try {
      const lines = [
        JSON.stringify({ id: 'g1', title: 'A whale of a title', text: 'and the text after it, scanned once the memory grew' }),
        JSON.stringify({ id: 'g2', title: 'Second', text: 'first text field', body: 'second text field' }),
      ];
      expect(await expectSameAsOrdinary(lines, { text: ['text', 'body'] })).toBe(lines.length);
      expect(grown).toBeGreaterThanOrEqual(5);
    } finally {
      WasmAsciiTable.prototype.scanLineSpan = original;
    }
  });

  it('reads the fields --fields names', async () => {
    const fields = { id: ['docno'], title: ['headline'], text: ['abstract', 'body'] };
    const lines = [
      JSON.stringify({ docno: 'd1', headline: 'Moby Dick', abstract: 'a whale', body: 'of a tale', text: 'not read' }),
      JSON.stringify({ docno: 7, headline: null, abstract: true, body: 'literal fields are skipped' }),
    ];
    expect(await expectSameAsOrdinary(lines, fields)).toBe(lines.length);
  });

  it('is off with GPUINDEX_JSONL_FAST=0', () => {
    const saved = process.env.GPUINDEX_JSONL_FAST;
    process.env.GPUINDEX_JSONL_FAST = '0';
    try {
      expect(jsonlFastPath(resolveFields({}), inverterWithDictionary().inverter)).toBeUndefined();
    } finally {
      if (saved === undefined) delete process.env.GPUINDEX_JSONL_FAST;
      else process.env.GPUINDEX_JSONL_FAST = saved;
    }
  });
});

describe('the synchronous JSONL reader of the parse workers', () => {
  async function both(root: string, path: string, range?: { start: number; end: number }) {
    const { readPlainJsonlSync } = await import('../indexer/corpus/index.js');
    const syncCounts: unknown[] = [];
    const asyncCounts: unknown[] = [];
    const sync = [...readPlainJsonlSync(root, path, {}, range && { ...range, onEnd: (c) => syncCounts.push(c) })!];
    const streamed: CorpusItem[] = [];
    for await (const item of readCorpusFile(root, path, {}, range && { ...range, onEnd: (c) => asyncCounts.push(c) })) streamed.push(item);
    return { sync, streamed, syncCounts, asyncCounts };
  }

  it('reads the same items, skips and range counts as the stream reader', async () => {
    const fixtures = ['test/fixtures/corpus/bad', 'test/fixtures/corpus/formats'];
    const big = file([
      '\ufeff' + JSON.stringify({ id: 'bom', text: 'first line after a byte order mark' }),
      '',
      '   ',
      JSON.stringify({ id: 'crlf', text: 'a line ending in CR LF' }) + '\r',
      '{"id": "bad json"',
      ...Array.from({ length: 7000 }, (_, i) => JSON.stringify({ id: `d${i}`, text: `document ${i} `.repeat(40 + (i % 50)) })),
      JSON.stringify({ id: 'last', text: 'no newline after me' }),
    ]);
    // The last line without its newline.
    writeFileSync(join(dir, big), readFileSync(join(dir, big)).subarray(0, -1));
    const cases: [string, string][] = [...fixtures.flatMap((root) => readdirSync(root).filter((f) => f.endsWith('.jsonl')).map((f) => [root, f] as [string, string])), [dir, big]];
    expect(cases.length).toBeGreaterThan(4);
    for (const [root, path] of cases) {
      const r = await both(root, path);
      expect(r.sync).toEqual(r.streamed);
    }
    const size = statSync(join(dir, big)).size;
    expect(size).toBeGreaterThan(4 << 20); // read in 1 MiB chunks, lines across them
    for (const cut of [1, 777, 1 << 20, (1 << 20) + 3, size - 5]) {
      for (const range of [{ start: 0, end: cut }, { start: cut, end: Infinity }]) {
        const r = await both(dir, big, range);
        expect(r.sync).toEqual(r.streamed);
        expect(r.syncCounts).toEqual(r.asyncCounts);
      }
    }
  });

  it('is only for plain .jsonl (gzip and other formats go as a stream)', async () => {
    const { readPlainJsonlSync } = await import('../indexer/corpus/index.js');
    expect(readPlainJsonlSync('test/fixtures/corpus/formats', 'docs.jsonl.gz')).toBeUndefined();
    expect(readPlainJsonlSync('test/fixtures/corpus/formats', 'array.json')).toBeUndefined();
    expect([...readPlainJsonlSync('test/fixtures/corpus/formats', 'missing.jsonl')!]).toEqual([{ kind: 'skip', skip: { path: 'missing.jsonl', reason: expect.stringMatching(/ENOENT/) } }]);
  });
});
