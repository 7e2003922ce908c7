import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { withEnv } from './helpers/env.js';
import { DEFAULT_RANGE_BYTES, MIN_RANGE_BYTES, planTasks, rangeBytesFor, tailCutFor, WARC_GZIP_EXPANSION } from '../indexer/parse/jsonl-ranges.js';
import { buildIndex } from '../src/build.js';
import { readIndexContent } from './helpers/index-files.js';

const dir = mkdtempSync(join(tmpdir(), 'gpuindex-ranges-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** Builds with files cut into ranges of `rangeBytes` (GPUINDEX_RANGE_BYTES), or whole when undefined. */
async function build(crawl: string, rangeBytes: number | undefined, workers: number) {
  return withEnv('GPUINDEX_RANGE_BYTES', async (set) => {
    set(rangeBytes === undefined ? undefined : String(rangeBytes));
    const output = join(dir, `idx-${n++}`);
    const summary = await buildIndex({ input: crawl, output, workers, sorter: 'cpu', blockSize: 64, stem: 'none', stopwords: 'none' });
    return { summary, content: readIndexContent(output) };
  });
}

// Lines of every kind the JSONL reader tells apart; ids left out on purpose (the id is then path:line).
const line = fc.oneof(
  fc.record({ id: fc.constantFrom('a', 'b', 'c', 'd'), text: fc.constantFrom('red fox', 'blue whale sea', 'fox') }).map((o) => JSON.stringify(o)),
  fc.constantFrom('quick brown fox', 'whale', 'the sea and the fox').map((t) => JSON.stringify({ text: t })),
  fc.constantFrom('', '   ', '\t'),
  fc.constantFrom('{"text": "crlf line"}\r', '{not json', '[1, 2]', '{"title": "no text"}', '{"text": "x' + 'y'.repeat(120) + '"}'),
  fc.constant('{"text": "bad \xff\xfe utf8"}'),
);
const file = fc.array(line, { maxLength: 25 }).map((lines) => lines.join('\n'));

function writeCrawl(files: string[], bom: boolean): string {
  const crawl = join(dir, `crawl-${n++}`);
  mkdirSync(crawl);
  files.forEach((text, i) => writeFileSync(join(crawl, `f${i}.jsonl`), Buffer.concat([bom && i === 0 ? Buffer.from([0xef, 0xbb, 0xbf]) : Buffer.alloc(0), Buffer.from(text, 'latin1')])));
  return crawl;
}

describe('large JSONL files cut into line-aligned ranges', () => {
  it('plans ranges for large uncompressed JSONL files only, covering each file once', () => {
    const crawl = writeCrawl(['x'.repeat(1000), 'y'.repeat(1000), 'z'.repeat(10)], false);
    writeFileSync(join(crawl, 'big.txt'), 'w '.repeat(600));
    writeFileSync(join(crawl, 'bin.jsonl'), Buffer.concat([Buffer.from('{"text":"a"}\n'), Buffer.alloc(1200)]));
    const tasks = planTasks(crawl, ['f0.jsonl', 'f2.jsonl', 'big.txt', 'bin.jsonl'], [1000, 10, 1200, 1214], 300);
    expect(tasks.map((t) => [t.path, t.range?.start, t.range?.end, t.bytes])).toEqual([
      ['f0.jsonl', 0, 250, 250],
      ['f0.jsonl', 250, 500, 250],
      ['f0.jsonl', 500, 750, 250],
      ['f0.jsonl', 750, Infinity, 250],
      ['f2.jsonl', undefined, undefined, 10],
      ['big.txt', undefined, undefined, 1200],
      ['bin.jsonl', undefined, undefined, 1214], // a NUL byte: skipped whole as a binary file
    ]);
  });

  it('cuts the end of the crawl finer (the tail cut), also inside a file that straddles it', () => {
    const crawl = writeCrawl(['x'.repeat(1000), 'y'.repeat(1000), 'z'.repeat(80)], false);
    // 2080 bytes; the last 1060 are the tail: f1 from byte 20 on, and f2 whole (80 <= 100: one task).
    const tasks = planTasks(crawl, ['f0.jsonl', 'f1.jsonl', 'f2.jsonl'], [1000, 1000, 80], 500, { bytes: 1060, rangeBytes: 100 });
    expect(tasks.map((t) => [t.path, t.range?.start, t.range?.end, t.bytes])).toEqual([
      ['f0.jsonl', 0, 500, 500],
      ['f0.jsonl', 500, Infinity, 500],
      ['f1.jsonl', 0, 20, 20],
      ...Array.from({ length: 10 }, (_, k) => ['f1.jsonl', 20 + k * 98, k === 9 ? Infinity : 20 + (k + 1) * 98, 98]),
      ['f2.jsonl', undefined, undefined, 80],
    ]);
    expect(tailCutFor(1, 500)).toBeUndefined();
    expect(tailCutFor(15, 4 << 20)).toEqual({ bytes: 2 * 15 * (4 << 20), rangeBytes: MIN_RANGE_BYTES });
  });

  it('cuts a gzipped WARC by what it inflates to: ranges and the tail a quarter of the size in compressed bytes', () => {
    const crawl = writeCrawl(['x'.repeat(1000)], false);
    // 400 compressed bytes stand for 1600, cut at 400 / 4; the tail (the last 1000 of the 2600 the parse sees) is f0.jsonl.
    const tasks = planTasks(crawl, ['a.warc.gz', 'f0.jsonl'], [400, 1000], 400, { bytes: 1000, rangeBytes: 200 });
    expect(tasks.map((t) => [t.path, t.range?.start, t.range?.end, t.bytes])).toEqual([
      ['a.warc.gz', 0, 100, 100],
      ['a.warc.gz', 100, 200, 100],
      ['a.warc.gz', 200, 300, 100],
      ['a.warc.gz', 300, Infinity, 100],
      ['f0.jsonl', 0, 200, 200],
      ['f0.jsonl', 200, 400, 200],
      ['f0.jsonl', 400, 600, 200],
      ['f0.jsonl', 600, 800, 200],
      ['f0.jsonl', 800, Infinity, 200],
    ]);
    expect(WARC_GZIP_EXPANSION).toBe(4);
    // A small one stays whole: 90 compressed bytes stand for 360 <= 400.
    expect(planTasks(crawl, ['b.warc.gz'], [90], 400).map((t) => [t.path, t.range])).toEqual([['b.warc.gz', undefined]]);
  });

  it('sizes ranges so every worker\'s task fits its share of the bound on batches ahead of crawl order', () =>
    withEnv('GPUINDEX_RANGE_BYTES', (set) => {
      set(undefined);
      const MiB = 2 ** 20;
      // The H100 plan: 15 workers, a 16 Mi-pair block bounds 128 MiB ahead: ranges of 128 MiB / 30.
      expect(rangeBytesFor(15, 128 * MiB)).toBe(Math.floor((128 * MiB) / 30));
      expect(rangeBytesFor(2, 1024 * MiB)).toBe(DEFAULT_RANGE_BYTES); // at most the default
      expect(rangeBytesFor(64, 16 * MiB)).toBe(MIN_RANGE_BYTES); // at least 1 MiB
      expect(rangeBytesFor(1, 0)).toBe(DEFAULT_RANGE_BYTES); // one worker: nothing runs ahead
      set('300');
      expect(rangeBytesFor(15, 128 * MiB)).toBe(300);
    }));

  it('keeps a line that starts exactly where a range starts (and reads it once)', async () => {
    // Ten 16-byte lines; ranges of 32 bytes start exactly on lines 3, 5, 7 and 9.
    const lines = Array.from({ length: 10 }, (_, i) => `{"text":"w${String(i).padStart(3, '0')}"}`);
    expect(lines.every((l) => l.length === 15)).toBe(true);
    const crawl = writeCrawl([lines.join('\n') + '\n'], false);
    const cut = await build(crawl, 32, 2);
    expect(cut.summary.documents).toBe(10);
    expect(cut.content.docs.map((d) => (d as unknown[])[1])).toEqual(lines.map((_, i) => `f0.jsonl:${i + 1}`));
    expect(cut.content).toEqual((await build(crawl, undefined, 1)).content);
  });

  it('skips a line with a byte-order mark inside the file even when a range starts on it', async () => {
    // Line 3 starts at byte 32, where the second 32-byte range starts; only the file's first line may carry a BOM.
    const lines = Array.from({ length: 6 }, (_, i) => `{"text":"w${String(i).padStart(3, '0')}"}`);
    lines[2] = '\xef\xbb\xbf{"text":"w2"}';
    const crawl = writeCrawl([lines.join('\n') + '\n'], false);
    const whole = await build(crawl, undefined, 1);
    expect(whole.summary.skipped.items.map((s) => s.line)).toEqual([3]);
    const cut = await build(crawl, 32, 2);
    expect(cut.summary.skipped).toEqual(whole.summary.skipped);
    expect(cut.content).toEqual(whole.content);
  });

  it('gives the same index, the same skips and warnings (lines included) and the same path:line ids as whole files', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(file, { minLength: 1, maxLength: 3 }), fc.integer({ min: 7, max: 200 }), fc.boolean(), fc.integer({ min: 1, max: 3 }), async (files, rangeBytes, bom, workers) => {
        const crawl = writeCrawl(files, bom);
        const whole = await build(crawl, undefined, 1);
        const cut = await build(crawl, rangeBytes, workers);
        expect(cut.summary.skipped).toEqual(whole.summary.skipped);
        expect(cut.summary.warnings).toEqual(whole.summary.warnings);
        expect(cut.summary.documents).toBe(whole.summary.documents);
        expect(cut.content).toEqual(whole.content);
      }),
      { numRuns: 40 },
    );
  });
});
