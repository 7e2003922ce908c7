import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../src/build.js';
import { asDocId, NO_KEY_SPACE } from '../src/shared/types.js';
import { termOrderOf } from '../merge/term-order.js';
import { TermDictionary } from '../indexer/fill/dictionary.js';
import { radixSortPairs } from '../indexer/sort/cpu-sorter.js';
import { decodePostings } from '../merge/postings-codec.js';
import { sha256OfFile } from '../merge/manifest.js';
import { RunCursor, writeRunFile } from '../merge/runs.js';
import { pairRangesFor, splitTermRanges } from '../merge/term-ranges.js';
import { writeIndex, writeIndexParallel, type IndexContents } from '../merge/write-index.js';
import { MERGE_THREAD_SCRIPT } from '../merge/parallel-merge.js';
import { startThreads, stopStartedThreads, threadsWaiting } from '../runtime/worker-script.js';
import { contentsIn, documentTable } from './helpers/index-contents.js';
import { readIndexContent } from './helpers/index-files.js';

const dir = mkdtempSync(join(tmpdir(), 'gpuindex-pmerge-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** Term names whose code point order is their id order: runs keyed by termID are in term order. */
const termName = (i: number): string => `t${String(i).padStart(4, '0')}`;

/** Writes BSBI-like runs: run r holds docIDs [r*docsPerRun, (r+1)*docsPerRun), pairs sorted. */
function writeRuns(runs: [number, number][][]): string[] {
  const folder = join(dir, `runs-${n++}`);
  mkdirSync(folder);
  return runs.map((pairs, i) => {
    const sorted = [...pairs].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    const path = join(folder, `run-${i}.bin`);
    writeRunFile(path, new Uint32Array(sorted.flat()), sorted.length, NO_KEY_SPACE);
    return path;
  });
}

/** Contents of `termCount` terms and `docCount` documents, their rows to go into a fresh index.sqlite in `out`. */
function contents(out: string, termCount: number, docCount: number): IndexContents {
  const docs = documentTable(Array.from({ length: docCount }, (_, i) => ({ externalId: `d${i}`, path: 'p.jsonl', length: 3 })));
  return contentsIn(out, Array.from({ length: termCount }, (_, i) => termName(i)), docs, { test: true });
}

/** The runs' termIDs renumbered densely in order (a dictionary gives every id it hands out a pair), and how many there are. */
function denseTerms(blocks: [number, number][][]): { blocks: [number, number][][]; terms: number } {
  const used = [...new Set(blocks.flat().map(([t]) => t))].sort((a, b) => a - b);
  const rank = new Map(used.map((t, i) => [t, i]));
  return { blocks: blocks.map((pairs) => pairs.map(([t, d]) => [rank.get(t)!, d] as [number, number])), terms: used.length };
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
  it('gives the same postings.bin, lexicon.bin and index.sqlite bytes as the single-threaded merge, for any thread count and waves of ranges (fuzzed)', async () => {
    await fc.assert(
      fc.asyncProperty(runsArb, fc.integer({ min: 2, max: 7 }), fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 5 }), async (sparse, threads, memoryKiB, waves) => {
        const { blocks, terms } = denseTerms(sparse);
        // Block r owns docIDs 10r..10r+9, as blocks filled in crawl order do.
        const paths = writeRuns(blocks.map((pairs, r) => pairs.map(([t, d]) => [t, 10 * r + d] as [number, number])));
        const one = freshDir();
        const many = freshDir();
        const a = writeIndex(one, paths, contents(one, terms, 10 * blocks.length), memoryKiB * 1024);
        process.env.GPUINDEX_MERGE_WAVES = String(waves);
        const b = await writeIndexParallel(many, paths, contents(many, terms, 10 * blocks.length), memoryKiB * 1024, threads).finally(() => delete process.env.GPUINDEX_MERGE_WAVES);
        expect(readFileSync(join(many, 'postings.bin'))).toEqual(readFileSync(join(one, 'postings.bin')));
        expect(readFileSync(join(many, 'lexicon.bin'))).toEqual(readFileSync(join(one, 'lexicon.bin')));
        expect(readFileSync(join(many, 'index.sqlite'))).toEqual(readFileSync(join(one, 'index.sqlite')));
        const { threadsMs, appendMs, ...counted } = b.merge;
        expect(threadsMs).toBeGreaterThanOrEqual(0);
        expect(appendMs).toBeGreaterThanOrEqual(0);
        expect({ ...counted, threads: 0, segmentPops: 0 }).toEqual({ ...a.merge, threads: 0, segmentPops: 0 });
        expect(b.merge.threads).toBeLessThanOrEqual(threads);
        expect(readdirSync(many).sort()).toEqual(['index.sqlite', 'lexicon.bin', 'postings.bin']);
        // The SHA-256 for MANIFEST.json, computed while writing: that of the bytes on disk.
        expect(a.postingsSha256).toBe(sha256OfFile(join(one, 'postings.bin')));
        expect(b.postingsSha256).toBe(a.postingsSha256);
      }),
      { numRuns: 40 },
    );
  });

  it('gives the same index.sqlite bytes however many rows went in ahead of the merge (during the parse), batch by batch', async () => {
    // Nine batches of 100 documents; batch b first uses terms 4b .. 4b+3 (36 terms).
    const paths = writeRuns([Array.from({ length: 900 }, (_, d) => [4 * Math.floor(d / 100) + (d % 4), d] as [number, number])]);
    const docsOf = (b: number) => Array.from({ length: 100 }, (_, i) => ({ externalId: `d${100 * b + i}`, path: b < 4 ? 'a.jsonl' : 'b.jsonl', length: 1 }));
    const termsOf = (b: number) => Array.from({ length: 4 }, (_, i) => termName(4 * b + i));
    // All rows at the end, documents then terms: the same content, in another order.
    const plain = freshDir();
    const allDocs = documentTable(Array.from({ length: 9 }, (_, b) => docsOf(b)).flat());
    const allTerms = Array.from({ length: 9 }, (_, b) => termsOf(b)).flat();
    writeIndex(plain, paths, contentsIn(plain, allTerms, allDocs, { test: true }), 1 << 20);
    let reference: string | undefined;
    for (const [pieces, threads] of [[0, 1], [1, 1], [2, 3], [5, 1], [100, 2]] as const) {
      // The fill reports each batch; `pieces` rows pieces are written after each batch.
      const out = freshDir();
      const table = documentTable([]);
      const terms: string[] = [];
      const c = contentsIn(out, terms, table, { test: true });
      for (let b = 0; b < 9; b++) {
        for (const d of docsOf(b)) table.add(d.externalId, d.path, d.length);
        terms.push(...termsOf(b));
        c.rows.batchFilled();
        for (let k = 0; k < pieces; k++) c.rows.writeSome();
      }
      if (pieces === 100) expect(c.rows.count).toBe(900);
      const rest = { ...c, termCount: terms.length, order: termOrderOf(terms), documentCount: table.count, totalTokens: table.totalTokens };
      if (threads > 1) await writeIndexParallel(out, paths, rest, 1 << 20, threads);
      else writeIndex(out, paths, rest, 1 << 20);
      // The first (nothing ahead) is the reference for the bytes.
      reference ??= out;
      expect(readFileSync(join(out, 'index.sqlite'))).toEqual(readFileSync(join(reference, 'index.sqlite')));
      expect(readFileSync(join(out, 'postings.bin'))).toEqual(readFileSync(join(plain, 'postings.bin')));
      expect(readIndexContent(out)).toEqual(readIndexContent(plain));
    }
  });

  it('with releaseWritten, drops the strings of the rows it wrote: the same index.sqlite bytes', () => {
    const paths = writeRuns([Array.from({ length: 600 }, (_, d) => [d % 11, d] as [number, number])]);
    const fill = () => documentTable(Array.from({ length: 600 }, (_, d) => ({ externalId: `doc-${d}`, path: `f${d >> 7}.jsonl`, length: 1 + (d % 3) })));
    const terms = Array.from({ length: 11 }, (_, i) => termName(i));
    const plain = freshDir();
    writeIndex(plain, paths, contentsIn(plain, terms, fill()), 1 << 20);
    const table = fill();
    const out = freshDir();
    const c = contentsIn(out, terms, table, {}, true);
    c.rows.writeSome();
    expect(table.externalIds.slice(0, 256).every((s) => s === '')).toBe(true);
    expect(table.externalIds[256]).toBe('doc-256');
    expect(table.lengthOf(asDocId(5))).toBe(3);
    writeIndex(out, paths, c, 1 << 20);
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
    await expect(writeIndexParallel(out, paths, contents(out, 400, 10000), 1 << 20, 3)).rejects.toThrow(/run file is truncated/);
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

  it('takes merge threads started ahead of it (and the same bytes); those it leaves are stopped', async () => {
    const { blocks, terms } = denseTerms([
      [[1, 0], [2, 1], [3, 2], [1, 5]],
      [[2, 0], [3, 4], [4, 6]],
      [[1, 3], [4, 1], [5, 9]],
    ]);
    const paths = writeRuns(blocks.map((pairs, r) => pairs.map(([t, d]) => [t, 10 * r + d] as [number, number])));
    const cold = freshDir();
    const warm = freshDir();
    const a = await writeIndexParallel(cold, paths, contents(cold, terms, 30), 1 << 20, 3);
    startThreads(MERGE_THREAD_SCRIPT, 5);
    expect(threadsWaiting(MERGE_THREAD_SCRIPT)).toBe(5);
    const b = await writeIndexParallel(warm, paths, contents(warm, terms, 30), 1 << 20, 3);
    expect(threadsWaiting(MERGE_THREAD_SCRIPT)).toBe(5 - b.merge.threads);
    expect(b.merge.threads).toBeGreaterThan(1);
    for (const f of ['postings.bin', 'lexicon.bin', 'index.sqlite']) expect(readFileSync(join(warm, f))).toEqual(readFileSync(join(cold, f)));
    expect(b.postingsSha256).toBe(a.postingsSha256);
    stopStartedThreads();
    expect(threadsWaiting(MERGE_THREAD_SCRIPT)).toBe(0);
    // Those beyond what a merge will take go at once; the rest wait.
    startThreads(MERGE_THREAD_SCRIPT, 4);
    stopStartedThreads(MERGE_THREAD_SCRIPT, 2);
    expect(threadsWaiting(MERGE_THREAD_SCRIPT)).toBe(2);
    stopStartedThreads(MERGE_THREAD_SCRIPT);
    expect(threadsWaiting(MERGE_THREAD_SCRIPT)).toBe(0);
  });

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

  it('reports the runs read once every range is merged (three waves of ranges): removing them then changes nothing', async () => {
    const blocks = [0, 1, 2, 3].map((r) => Array.from({ length: 3000 }, (_, i) => [i % 700, 4 * i + r] as [number, number]).sort((x, y) => x[0] - y[0] || x[1] - y[1]));
    const paths = writeRuns(blocks);
    const plain = freshDir();
    const early = freshDir();
    const a = await writeIndexParallel(plain, paths, contents(plain, 700, 12000), 1 << 20, 3);
    let calls = 0;
    process.env.GPUINDEX_MERGE_WAVES = '3';
    const b = await writeIndexParallel(early, paths, { ...contents(early, 700, 12000), onRunsRead: () => (calls++, paths.forEach((p) => rmSync(p))) }, 1 << 20, 3).finally(() => delete process.env.GPUINDEX_MERGE_WAVES);
    expect(calls).toBe(1);
    expect(b.merge.threads).toBe(3);
    for (const f of ['postings.bin', 'lexicon.bin', 'index.sqlite']) expect(readFileSync(join(early, f))).toEqual(readFileSync(join(plain, f)));
    expect(b.postingsSha256).toBe(a.postingsSha256);
  });

  it('leaves nothing beside the index once built with merge threads (the runs removed while the merge finishes)', async () => {
    const parent = join(dir, 'beside');
    mkdirSync(parent);
    const s = await buildIndex({ input: crawl, output: join(parent, 'idx'), workers: 2, sorter: 'cpu', blockSize: 5000, mergeThreads: 3 });
    expect(s.merge.threads).toBe(3);
    expect(s.blocks).toBeGreaterThan(1);
    expect(readdirSync(parent)).toEqual(['idx']);
    expect(readdirSync(join(parent, 'idx')).filter((f) => f.includes('run'))).toEqual([]);
  });

  it('refuses a bad thread count before parsing', async () => {
    await expect(buildIndex({ input: crawl, output: join(dir, 'b0'), mergeThreads: 0 })).rejects.toThrow('--merge-threads must be an integer from 1 to 256, got 0');
  });
});

describe('runs keyed by term order', () => {
  /** Random terms, ASCII and not (accents, CJK, astral symbols), so code point order matters. */
  const termArb = fc.string({ unit: fc.constantFrom('a', 'b', 'z', 'é', '中', '\uffee', '😀', '𝔘'), minLength: 1, maxLength: 4 });

  it('merge blocks sealed at different dictionary sizes into lists in code point order, for any thread count (fuzzed)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.tuple(termArb, fc.integer({ min: 0, max: 9 })), { minLength: 1, maxLength: 60 }), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 2, max: 5 }),
        async (blocks, threads) => {
          const dictionary = new TermDictionary();
          const folder = join(dir, `keyed-${n++}`);
          mkdirSync(folder);
          const expected = new Map<string, Map<number, number>>();
          const paths = blocks.map((block, r) => {
            // Block r owns docIDs 10r..10r+9 and is sealed once its terms are in the dictionary.
            const pairs = new Uint32Array(2 * block.length);
            block.forEach(([term, d], i) => {
              pairs[2 * i] = dictionary.idOf(term);
              pairs[2 * i + 1] = 10 * r + d;
              const tfs = expected.get(term) ?? new Map<number, number>();
              tfs.set(10 * r + d, (tfs.get(10 * r + d) ?? 0) + 1);
              expected.set(term, tfs);
            });
            const keys = dictionary.lexKeys();
            const sorted = radixSortPairs(pairs, block.length, new Uint32Array(2 * block.length), keys);
            const path = join(folder, `run-${r}.bin`);
            writeRunFile(path, sorted, block.length, keys.length);
            return path;
          });
          const docCount = 10 * blocks.length;
          const make = (out: string): IndexContents => ({ ...contentsIn(out, dictionary.terms, documentTable(Array.from({ length: docCount }, (_, i) => ({ externalId: `d${i}`, path: 'p', length: 1 })))), order: dictionary.order() });
          const one = freshDir();
          const many = freshDir();
          writeIndex(one, paths, make(one), 1 << 16);
          await writeIndexParallel(many, paths, make(many), 1 << 16, threads);
          expect(readFileSync(join(many, 'postings.bin'))).toEqual(readFileSync(join(one, 'postings.bin')));
          expect(readFileSync(join(many, 'index.sqlite'))).toEqual(readFileSync(join(one, 'index.sqlite')));
          // Against a naive inversion: terms in code point order (UTF-8 byte order), their lists.
          const content = readIndexContent(one);
          const rows = content.terms as [number, string, number, number, number, number][];
          const byBytes = [...expected.keys()].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
          expect(rows.map((r) => r[1])).toEqual(byBytes);
          for (const [, term, df, , offset, length] of rows) {
            const list = decodePostings(content.postings.subarray(offset, offset + length), df);
            expect(Array.from(list.docIds, (d, i) => [d, list.tfs[i]])).toEqual([...expected.get(term)!.entries()].sort((a, b) => a[0] - b[0]));
          }
        },
      ),
      { numRuns: 25 },
    );
  });
});
