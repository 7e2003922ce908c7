import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../src/build.js';
import { DocumentTable } from '../indexer/documents.js';
import { asDocId } from '../src/types.js';
import { DocumentRowsAhead } from '../merge/document-rows-ahead.js';
import { IndexStoreWriter } from '../merge/index-store.js';
import { sha256OfFile } from '../merge/manifest.js';
import { RunCursor, writeRunFile } from '../merge/runs.js';
import { pairRangesFor, splitTermRanges } from '../merge/term-ranges.js';
import { writeIndex, writeIndexParallel, type IndexContents } from '../merge/write-index.js';
import { readIndexContent } from './helpers/index-files.js';

const dir = mkdtempSync(join(tmpdir(), 'gpuindex-pmerge-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** Writes BSBI-like runs: run r holds docIDs [r*docsPerRun, (r+1)*docsPerRun), pairs sorted. */
function writeRuns(runs: [number, number][][]): string[] {
  const folder = join(dir, `runs-${n++}`);
  mkdirSync(folder);
  return runs.map((pairs, i) => {
    const sorted = [...pairs].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    const path = join(folder, `run-${i}.bin`);
    writeRunFile(path, new Uint32Array(sorted.flat()), sorted.length);
    return path;
  });
}

function contents(termCount: number, docCount: number): IndexContents {
  return {
    terms: Array.from({ length: termCount }, (_, i) => `t${i}`),
    documents: Array.from({ length: docCount }, (_, i) => ({ docId: i, externalId: `d${i}`, path: 'p.jsonl', length: 3 })),
    documentCount: docCount,
    totalTokens: 3 * docCount,
    settings: { test: true },
  };
}

function freshDir(): string {
  const d = join(dir, `out-${n++}`);
  mkdirSync(d);
  return d;
}

/** Runs of up to `runs` blocks over `terms` terms, skewed towards small termIDs (Zipf-like). */
const runsArb = fc.integer({ min: 1, max: 5 }).chain((runCount) =>
  fc.array(fc.array(fc.tuple(fc.integer({ min: 0, max: 40 }).map((x) => Math.floor((x * x) / 20)), fc.integer({ min: 0, max: 9 })), { maxLength: 300 }), {
    minLength: runCount,
    maxLength: runCount,
  }),
);

describe('parallel merge', () => {
  it('gives the same postings.bin and index.sqlite bytes as the single-threaded merge, for any thread count (fuzzed)', async () => {
    await fc.assert(
      fc.asyncProperty(runsArb, fc.integer({ min: 2, max: 7 }), fc.integer({ min: 1, max: 64 }), async (blocks, threads, memoryKiB) => {
        // Block r owns docIDs 10r..10r+9, as blocks filled in crawl order do.
        const paths = writeRuns(blocks.map((pairs, r) => pairs.map(([t, d]) => [t, 10 * r + d] as [number, number])));
        const c = contents(81, 10 * blocks.length);
        const one = freshDir();
        const many = freshDir();
        const a = writeIndex(one, paths, c, memoryKiB * 1024);
        const b = await writeIndexParallel(many, paths, c, memoryKiB * 1024, threads);
        expect(readFileSync(join(many, 'postings.bin'))).toEqual(readFileSync(join(one, 'postings.bin')));
        expect(readFileSync(join(many, 'index.sqlite'))).toEqual(readFileSync(join(one, 'index.sqlite')));
        const { threadsMs, appendMs, ...counted } = b.merge;
        expect(threadsMs).toBeGreaterThanOrEqual(0);
        expect(appendMs).toBeGreaterThanOrEqual(0);
        expect({ ...counted, threads: 0, segmentPops: 0 }).toEqual({ ...a.merge, threads: 0, segmentPops: 0 });
        expect(b.merge.threads).toBeLessThanOrEqual(threads);
        expect(readdirSync(many).sort()).toEqual(['index.sqlite', 'postings.bin']);
        // The SHA-256 for MANIFEST.json, computed while writing: that of the bytes on disk.
        expect(a.postingsSha256).toBe(sha256OfFile(join(one, 'postings.bin')));
        expect(b.postingsSha256).toBe(a.postingsSha256);
      }),
      { numRuns: 40 },
    );
  });

  it('gives the same index.sqlite bytes when document rows went in ahead of the merge (during the parse)', async () => {
    const paths = writeRuns([Array.from({ length: 900 }, (_, d) => [d % 37, d] as [number, number])]);
    const table = new DocumentTable();
    for (let d = 0; d < 900; d++) table.add(`d${d}`, d < 400 ? 'a.jsonl' : 'b.jsonl', 1);
    const base: IndexContents = { terms: Array.from({ length: 37 }, (_, i) => `t${i}`), documents: table.records(), documentCount: 900, totalTokens: 900, settings: { test: true } };
    const plain = freshDir();
    writeIndex(plain, paths, base, 1 << 20);
    for (const [pieces, threads] of [[1, 1], [2, 3], [4, 1]] as const) {
      const out = freshDir();
      const ahead = new DocumentRowsAhead(new IndexStoreWriter(join(out, 'index.sqlite')), table);
      let more = true;
      for (let k = 0; k < pieces && more; k++) more = ahead.writeSome();
      expect(ahead.count).toBe(Math.min(900, 256 * pieces));
      const rest = { ...base, documents: ahead.rest(), store: ahead.store };
      if (threads > 1) await writeIndexParallel(out, paths, rest, 1 << 20, threads);
      else writeIndex(out, paths, rest, 1 << 20);
      expect(readFileSync(join(out, 'index.sqlite'))).toEqual(readFileSync(join(plain, 'index.sqlite')));
      expect(readFileSync(join(out, 'postings.bin'))).toEqual(readFileSync(join(plain, 'postings.bin')));
    }
  });

  it('with releaseWritten, drops the strings of the rows it wrote: same index.sqlite bytes, and the released rows cannot be read again', () => {
    const paths = writeRuns([Array.from({ length: 600 }, (_, d) => [d % 11, d] as [number, number])]);
    const fill = () => {
      const table = new DocumentTable();
      for (let d = 0; d < 600; d++) table.add(`doc-${d}`, `f${d >> 7}.jsonl`, 1 + (d % 3));
      return table;
    };
    const base = (table: DocumentTable): IndexContents => ({ terms: Array.from({ length: 11 }, (_, i) => `t${i}`), documents: table.records(), documentCount: 600, totalTokens: 1200, settings: {} });
    const plain = freshDir();
    writeIndex(plain, paths, base(fill()), 1 << 20);
    const table = fill();
    const out = freshDir();
    const ahead = new DocumentRowsAhead(new IndexStoreWriter(join(out, 'index.sqlite')), table, true);
    ahead.writeSome();
    expect(table.externalIds.slice(0, 256).every((s) => s === '')).toBe(true);
    expect(table.externalIds[256]).toBe('doc-256');
    expect(table.lengthOf(asDocId(5))).toBe(3);
    expect(() => table.records(100).next()).toThrow('document strings below 256 were released; records from 100 asked for');
    writeIndex(out, paths, { ...base(table), documents: ahead.rest(), store: ahead.store }, 1 << 20);
    expect(readFileSync(join(out, 'index.sqlite'))).toEqual(readFileSync(join(plain, 'index.sqlite')));
  });

  it('splits terms into ranges of about equal pair counts that partition every run', () => {
    // Term t has 1 + (t % 7) pairs in each of 3 runs.
    const blocks = [0, 1, 2].map((r) => Array.from({ length: 500 }, (_, t) => Array.from({ length: 1 + (t % 7) }, (_, k) => [t, 100 * r + k] as [number, number])).flat());
    const paths = writeRuns(blocks);
    const starts = splitTermRanges(paths, 4);
    expect(starts).toHaveLength(4);
    expect(starts[0]).toBe(0);
    expect([...starts].sort((x, y) => x - y)).toEqual(starts);
    const total = blocks.reduce((s, b) => s + b.length, 0);
    const sizes = starts.map((s, i) => pairRangesFor(paths, s, starts[i + 1]));
    // Each run's ranges are contiguous and cover it.
    for (let r = 0; r < 3; r++) {
      expect(sizes[0]![r]!.start).toBe(0);
      for (let i = 1; i < starts.length; i++) expect(sizes[i]![r]!.start).toBe(sizes[i - 1]![r]!.end);
      expect(sizes[starts.length - 1]![r]!.end).toBe(blocks[r]!.length);
    }
    for (const ranges of sizes) {
      const pairs = ranges.reduce((s, x) => s + x.end - x.start, 0);
      expect(Math.abs(pairs - total / 4)).toBeLessThan(total * 0.05);
    }
  });

  it('uses one range when every pair has the same term', () => {
    const paths = writeRuns([Array.from({ length: 50 }, (_, d) => [9, d] as [number, number])]);
    expect(splitTermRanges(paths, 8)).toEqual([0]);
  });

  it('a cursor over a pair range reads exactly those pairs', () => {
    const [path] = writeRuns([Array.from({ length: 20 }, (_, i) => [i, i] as [number, number])]);
    const c = new RunCursor(path!, 3, { start: 5, end: 12 });
    const seen: number[] = [];
    while (!c.done) {
      seen.push(c.termId);
      c.advance();
    }
    expect(c.count).toBe(7);
    expect(seen).toEqual([5, 6, 7, 8, 9, 10, 11]);
  });

  it('a damaged run fails the merge with the reason and leaves no part files behind', async () => {
    const paths = writeRuns([Array.from({ length: 4000 }, (_, i) => [i % 400, i] as [number, number]), Array.from({ length: 4000 }, (_, i) => [i % 400, 5000 + i] as [number, number])]);
    truncateSync(paths[1]!, 16 + 8 * 3000);
    const out = freshDir();
    await expect(writeIndexParallel(out, paths, contents(400, 10000), 1 << 20, 3)).rejects.toThrow(/run file is truncated/);
    expect(readdirSync(out).filter((f) => f.startsWith('postings.part'))).toEqual([]);
  });
});

describe('merge threads in a build', () => {
  const crawl = join(dir, 'crawl');
  mkdirSync(crawl);
  const words = ['whale', 'ship', 'sea', 'captain', 'harpoon', 'ocean', 'storm', 'sailor', 'deck', 'mast'];
  for (let f = 0; f < 3; f++) {
    const lines = Array.from({ length: 400 }, (_, i) => JSON.stringify({ id: `${f}-${i}`, text: Array.from({ length: 30 }, (_, k) => `${words[(i * k + f) % 10]}${(i + k) % 37}`).join(' ') }));
    writeFileSync(join(crawl, `part-${f}.jsonl`), lines.join('\n') + '\n');
  }

  it('gives the same index with 1 and 3 merge threads', async () => {
    const one = join(dir, 'b1');
    const three = join(dir, 'b3');
    const s1 = await buildIndex({ input: crawl, output: one, workers: 2, sorter: 'cpu', blockSize: 5000, mergeThreads: 1 });
    const s3 = await buildIndex({ input: crawl, output: three, workers: 2, sorter: 'cpu', blockSize: 5000, mergeThreads: 3 });
    expect(s1.merge.threads).toBe(1);
    expect(s3.merge.threads).toBe(3);
    expect(readIndexContent(three)).toEqual(readIndexContent(one));
    expect(readFileSync(join(three, 'index.sqlite'))).toEqual(readFileSync(join(one, 'index.sqlite')));
  });

  it('refuses a bad thread count before parsing', async () => {
    await expect(buildIndex({ input: crawl, output: join(dir, 'b0'), mergeThreads: 0 })).rejects.toThrow('--merge-threads must be an integer from 1 to 256, got 0');
  });
});
