/**
 * Parse workers that keep their own lexicons and fill, sort and write their own blocks
 * (indexer/pipeline/worker-lexicons-pipeline.ts) give the index the shared dictionary gives,
 * byte for byte: any worker count, any block size (documents split across blocks), the CPU
 * sorter in the workers or GpuSort on its thread, and every merge thread count. The merge's
 * pieces are checked against naive references: the lexicon union against a sort of the set of
 * terms, and runs of interleaved documents against an in-memory inversion.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../src/build.js';
import { byteLexicon, termsOfTexts, textChunks, textsOfRange, uniteLexicons } from '../merge/lexicon-union.js';
import { writeRunFile } from '../merge/runs.js';
import { mergeRuns } from '../merge/heap-merge.js';
import { radixSortPairs } from '../indexer/sort/cpu-sorter.js';
import { TermDictionary } from '../indexer/fill/dictionary.js';
import { useWorkerLexicons, workerBlockPairs } from '../indexer/pipeline/worker-lexicons-pipeline.js';
import { readIndexContent } from './helpers/index-files.js';
import { hasGpu } from './helpers/gpu-available.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-wlex-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
// Every build here writes lexicon.bin's blocks on the merge threads, whatever its vocabulary (the default waits for 65,536 terms),
// and its merge threads take waves of three ranges each (the default waits for 1 GiB of runs).
beforeAll(() => {
  process.env.GPUINDEX_LEXICON_PARTS_MIN_TERMS = '0';
  process.env.GPUINDEX_MERGE_WAVES = '3';
});
afterAll(() => {
  delete process.env.GPUINDEX_LEXICON_PARTS_MIN_TERMS;
  delete process.env.GPUINDEX_MERGE_WAVES;
});
afterEach(() => {
  delete process.env.GPUINDEX_WORKER_LEXICONS;
  delete process.env.GPUINDEX_WORKER_BLOCK_PAIRS;
  delete process.env.GPUINDEX_GENERATION_TERMS;
});
let n = 0;
const fresh = (name: string) => join(work, `${name}-${n++}`);
const byUtf8 = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
/** A seeded generator (mulberry32): the same lists on every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Words ASCII and not (accents, CJK, astral), common and rare, so workers' lexicons overlap in part. */
const WORDS = [...Array.from({ length: 200 }, (_, i) => `w${(i * 7919) % 1009}`), 'naïve', 'émile', 'straße', '鯨', '海', '𝔘nicode', 'zebra', 'running', 'runs', 'ran'];

function writeCrawl(dir: string, seed: number, files: number, docsPerFile: number): void {
  mkdirSync(join(dir, 'small'), { recursive: true });
  let s = seed >>> 0 || 1;
  const rnd = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const text = (len: number) => Array.from({ length: len }, () => (rnd() < 0.05 ? `rare${Math.floor(rnd() * 1e6)}` : WORDS[Math.floor(rnd() ** 2 * WORDS.length)])).join(' ');
  for (let f = 0; f < files; f++) {
    const lines = Array.from({ length: docsPerFile }, (_, d) => JSON.stringify({ id: `f${f}-d${d}`, title: `title ${text(2)}`, text: text(1 + Math.floor(rnd() * 80)) }));
    writeFileSync(join(dir, `part-${f}.jsonl`), lines.join('\n') + '\n');
  }
  // Small files of other kinds, which go to workers in groups.
  for (let i = 0; i < 12; i++) {
    writeFileSync(join(dir, 'small', `page-${i}.html`), `<html><head><title>${text(3)}</title></head><body><p>${text(20)}</p><script>var x = "hidden";</script></body></html>`);
    writeFileSync(join(dir, 'small', `note-${i}.txt`), text(15));
  }
}

const crawl = join(work, 'crawl');
beforeAll(() => writeCrawl(crawl, 11, 6, 60));

async function build(input: string, opts: Partial<Parameters<typeof buildIndex>[0]>, env: Record<string, string> = {}) {
  Object.assign(process.env, env);
  try {
    const output = fresh('idx');
    const summary = await buildIndex({ input, output, ...opts });
    return { summary, content: readIndexContent(output), postings: readFileSync(join(output, 'postings.bin')), lexicon: readFileSync(join(output, 'lexicon.bin')) };
  } finally {
    for (const k of Object.keys(env)) delete process.env[k];
  }
}

describe('workers with lexicons of their own', () => {
  it('is chosen with 4 workers or more, never with --resume, and forced by GPUINDEX_WORKER_LEXICONS', () => {
    expect(useWorkerLexicons(1, false)).toBe(false);
    expect(useWorkerLexicons(3, false)).toBe(false);
    expect(useWorkerLexicons(4, false)).toBe(true);
    expect(useWorkerLexicons(64, true)).toBe(false);
    process.env.GPUINDEX_WORKER_LEXICONS = '1';
    expect(useWorkerLexicons(2, false)).toBe(true);
    expect(useWorkerLexicons(1, false)).toBe(false);
    process.env.GPUINDEX_WORKER_LEXICONS = '0';
    expect(useWorkerLexicons(16, false)).toBe(false);
  });

  it('shares the plan\'s blocks out between the workers, never above the block size', () => {
    expect(workerBlockPairs(1 << 24, 16, 2, 2)).toBe(1 << 20);
    expect(workerBlockPairs(1 << 20, 1, 2, 1)).toBe(1 << 20);
    expect(workerBlockPairs(1 << 20, 1024, 2, 2)).toBe(1 << 16);
    expect(workerBlockPairs(1000, 64, 2, 2)).toBe(1000);
  });

  it('gives the shared dictionary\'s index byte for byte with 2, 3 and 5 workers, any block size, any merge threads', async () => {
    const shared = await build(crawl, { workers: 1, sorter: 'cpu', blockSize: 5000 }, { GPUINDEX_WORKER_LEXICONS: '0' });
    expect(shared.summary.blocks).toBeGreaterThan(2);
    for (const [workers, blockPairs, mergeThreads] of [
      [2, 7, 1],
      [3, 100, 3],
      [5, 3000, 2],
      [3, 1, 1],
    ] as const) {
      const own = await build(crawl, { workers, sorter: 'cpu', blockSize: 5000, mergeThreads }, { GPUINDEX_WORKER_LEXICONS: '1', GPUINDEX_WORKER_BLOCK_PAIRS: String(blockPairs) });
      expect(own.summary.workers).toBe(workers);
      expect(own.summary.terms).toBe(shared.summary.terms);
      expect(own.summary.blocks).toBeGreaterThan(workers);
      expect(own.postings.equals(shared.postings)).toBe(true);
      // With several merge threads each writes its range's lexicon.bin blocks: the same file.
      expect(own.lexicon.equals(shared.lexicon), `${workers} workers, ${mergeThreads} merge threads: lexicon.bin`).toBe(true);
      expect(own.content).toEqual(shared.content);
    }
  });

  it('closes lexicon generations to disk and still gives the shared dictionary\'s index byte for byte', async () => {
    const shared = await build(crawl, { workers: 1, sorter: 'cpu', blockSize: 5000 }, { GPUINDEX_WORKER_LEXICONS: '0' });
    for (const [workers, blockPairs, generationTerms] of [
      [3, 700, 1],
      [2, 50, 37],
      [4, 3000, 150],
    ] as const) {
      const own = await build(
        crawl,
        { workers, sorter: 'cpu', blockSize: 5000, mergeThreads: 2 },
        { GPUINDEX_WORKER_LEXICONS: '1', GPUINDEX_WORKER_BLOCK_PAIRS: String(blockPairs), GPUINDEX_GENERATION_TERMS: String(generationTerms) },
      );
      // Every worker closed generations: more lexicons than workers, each with runs of its own.
      expect(own.summary.lexiconGenerations).toBeGreaterThan(2 * workers);
      expect(own.summary.blocks).toBeGreaterThanOrEqual(own.summary.lexiconGenerations! - workers);
      expect(own.summary.terms).toBe(shared.summary.terms);
      expect(own.postings.equals(shared.postings)).toBe(true);
      expect(own.lexicon.equals(shared.lexicon), `${workers} workers: lexicon.bin`).toBe(true);
      expect(own.content).toEqual(shared.content);
    }
  });

  it('gives the same index for random crawls (fuzzed: files, documents, worker counts, block sizes, lexicon generations)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1e6 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 2, max: 4 }),
        fc.integer({ min: 1, max: 400 }),
        fc.option(fc.integer({ min: 1, max: 300 })),
        async (seed, files, docs, workers, blockPairs, generationTerms) => {
          const dir = fresh('crawl');
          writeCrawl(dir, seed, files, docs);
          const shared = await build(dir, { workers: 1, sorter: 'cpu' }, { GPUINDEX_WORKER_LEXICONS: '0' });
          const own = await build(
            dir,
            { workers, sorter: 'cpu' },
            { GPUINDEX_WORKER_LEXICONS: '1', GPUINDEX_WORKER_BLOCK_PAIRS: String(blockPairs), ...(generationTerms !== null ? { GPUINDEX_GENERATION_TERMS: String(generationTerms) } : {}) },
          );
          expect(own.content).toEqual(shared.content);
          expect(own.lexicon.equals(shared.lexicon)).toBe(true);
        },
      ),
      { numRuns: 8 },
    );
  });

  it.runIf(hasGpu())('hands blocks to GpuSort (Indexgpu and Indexgpu+) and gives the same index', async () => {
    const shared = await build(crawl, { workers: 1, sorter: 'cpu', blockSize: 5000 }, { GPUINDEX_WORKER_LEXICONS: '0' });
    for (const pipeline of ['gpu', 'gpu+'] as const) {
      for (const generations of [{}, { GPUINDEX_GENERATION_TERMS: '60' }]) {
        const own = await build(crawl, { workers: 3, pipeline, blockSize: 5000 }, { GPUINDEX_WORKER_LEXICONS: '1', GPUINDEX_WORKER_BLOCK_PAIRS: '700', ...generations });
        expect(own.summary.sorter).toBe('gpu');
        expect(own.content).toEqual(shared.content);
      }
    }
  });
});

describe('the merge of workers\' runs', () => {
  const termArb = fc.string({ unit: fc.constantFrom('a', 'b', 'z', 'é', '中', '\uffee', '😀'), minLength: 1, maxLength: 3 });

  it('unites sorted lexicons into the sorted set of their terms, each term at its rank, on 1 to 4 threads, by the scan, the heap, and the scan giving way to the heap', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.uniqueArray(termArb, { maxLength: 20 }), { maxLength: 6 }), fc.integer({ min: 1, max: 4 }), fc.constantFrom(undefined, 0, 3), async (lists, threads, scanProbeTerms) => {
        const sorted = lists.map((l) => [...l].sort(byUtf8));
        const union = await uniteLexicons(sorted.map((l) => byteLexicon(l)), threads, 0, scanProbeTerms);
        const { finals } = union;
        const terms = [...termsOfTexts(union.texts)];
        expect(union.count).toBe(terms.length);
        const expected = [...new Set(lists.flat())].sort(byUtf8);
        expect(terms).toEqual(expected);
        sorted.forEach((l, w) => l.forEach((t, p) => expect(terms[finals[w]![p]!]).toBe(t)));
      }),
      { numRuns: 60 },
    );
  });

  it('unites terms that share their first 8 bytes or end within them, as a naive sort does', async () => {
    // The union compares terms by their first 8 bytes first: long terms over a 2-letter alphabet
    // share those bytes often, and prefixes of each other end inside them or right after.
    // Every 'a'/'b' word of 7 to 10 letters, dealt to three lists: neighbours differ in their last byte only.
    const words = [7, 8, 9, 10].flatMap((n) => Array.from({ length: 2 ** n }, (_, i) => i.toString(2).padStart(n, '0').replace(/0/g, 'a').replace(/1/g, 'b')));
    const dealt = [0, 1, 2].map((r) => words.filter((_, i) => i % 3 === r).sort(byUtf8));
    for (const scanProbeTerms of [undefined, 0, 100]) {
      const all = await uniteLexicons(dealt.map((l) => byteLexicon(l)), 1, 0, scanProbeTerms);
      const allTerms = [...termsOfTexts(all.texts)];
      expect(allTerms).toEqual([...words].sort(byUtf8));
      dealt.forEach((l, w) => l.forEach((t, p) => expect(allTerms[all.finals[w]![p]!]).toBe(t)));
    }
    const longArb = fc.oneof(fc.string({ unit: fc.constantFrom('a', 'b'), minLength: 7, maxLength: 10 }), fc.string({ unit: fc.constantFrom('a', 'b', 'é', '😀'), minLength: 0, maxLength: 14 }));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.uniqueArray(longArb, { maxLength: 30 }), { maxLength: 5 }), fc.integer({ min: 1, max: 3 }), fc.constantFrom(undefined, 0, 5), async (lists, threads, scanProbeTerms) => {
        const sorted = lists.map((l) => [...l].sort(byUtf8));
        const union = await uniteLexicons(sorted.map((l) => byteLexicon(l)), threads, 0, scanProbeTerms);
        const terms = [...termsOfTexts(union.texts)].slice(0, union.count);
        expect(terms).toEqual([...new Set(lists.flat())].sort(byUtf8));
        sorted.forEach((l, w) => l.forEach((t, p) => expect(terms[union.finals[w]![p]!]).toBe(t)));
      }),
      { numRuns: 80 },
    );
  });

  it('unites lists longer than the chunks a range reads and the pieces it returns, as a naive sort does', async () => {
    // Ranges read 1,024 terms of a list at a time and return 65,536 terms a piece: these lists
    // cross both many times, and high code units (which change the order) sit past the first chunks.
    const rnd = seeded(11);
    const words = (n: number) => Array.from({ length: n }, () => {
      const w = Math.floor(rnd() * 400_000).toString(36);
      const r = rnd();
      return r < 0.01 ? `${w}😀` : r < 0.02 ? `${w}\uffee` : r < 0.03 ? `中${w}` : w;
    });
    const lists = [words(90_000), words(40_000), words(3), words(70_000)].map((l) => [...new Set(l)].sort(byUtf8));
    const expected = [...new Set(lists.flat())].sort(byUtf8);
    for (const [threads, scanProbeTerms] of [[1, undefined], [1, 0], [3, undefined], [3, 0]] as const) {
      const union = await uniteLexicons(lists.map((l) => byteLexicon(l)), threads, 1000, scanProbeTerms);
      const terms = [...termsOfTexts(union.texts)];
      expect(union.count).toBe(expected.length);
      expect(terms).toEqual(expected);
      lists.forEach((l, w) => l.forEach((t, p) => {
        if (terms[union.finals[w]![p]!] !== t) expect(terms[union.finals[w]![p]!]).toBe(t);
      }));
    }
  });

  it('hands the united terms out in chunks of any size, every term once and in order', () => {
    fc.assert(
      fc.property(fc.array(fc.array(termArb, { minLength: 1, maxLength: 12 }), { maxLength: 5 }), fc.integer({ min: 0, max: 20 }), (lists, chunkChars) => {
        const texts = lists.map((l) => l.join('\0'));
        const chunks = [...textChunks(texts, chunkChars)];
        expect(chunks.flat()).toEqual(lists.flat());
        // A chunk ends at the first separator at or past chunkChars characters.
        for (const c of chunks) expect(c.slice(0, -1).join('\0').length).toBeLessThan(Math.max(1, chunkChars));
      }),
      { numRuns: 300 },
    );
  });

  it('cuts the united terms at any termIDs into texts of the same form (a merge thread\'s range)', () => {
    fc.assert(
      fc.property(fc.array(fc.array(termArb, { minLength: 1, maxLength: 12 }), { maxLength: 5 }), fc.nat(), fc.nat(), (lists, x, y) => {
        const texts = lists.map((l) => l.join('\0'));
        const all = lists.flat();
        const [from, to] = [x % (all.length + 1), y % (all.length + 1)].sort((a, b) => a - b) as [number, number];
        const range = textsOfRange(texts, lists.map((l) => l.length), from, to);
        expect([...textChunks(range, 3)].flat()).toEqual(all.slice(from, to));
      }),
      { numRuns: 300 },
    );
  });

  it('merges runs of interleaved documents, split documents included, into a naive inversion', async () => {
    await fc.assert(
      fc.asyncProperty(
        // Documents in crawl order, each a bag of terms and the worker that parsed it.
        fc.array(fc.tuple(fc.array(termArb, { minLength: 1, maxLength: 6 }), fc.integer({ min: 0, max: 2 })), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 9 }),
        async (docs, blockPairs) => {
          const folder = fresh('runs');
          mkdirSync(folder);
          const workers = [0, 1, 2].map(() => ({ dictionary: new TermDictionary(), docIds: [] as number[], pairs: [] as number[] }));
          const runs: string[] = [];
          const owners: number[] = [];
          const seal = (w: number) => {
            const x = workers[w]!;
            if (x.pairs.length === 0) return;
            const count = x.pairs.length / 2;
            const keys = x.dictionary.lexKeys();
            const sorted = radixSortPairs(Uint32Array.from(x.pairs), count, new Uint32Array(2 * count), keys);
            const path = join(folder, `run-${runs.length}.bin`);
            writeRunFile(path, sorted, count, keys.length);
            runs.push(path);
            owners.push(w);
            x.pairs = [];
          };
          const expected = new Map<string, Map<number, number>>();
          docs.forEach(([terms, w], docId) => {
            const x = workers[w]!;
            const local = x.docIds.length;
            x.docIds.push(docId);
            for (const t of terms) {
              x.pairs.push(x.dictionary.idOf(t), local);
              const tfs = expected.get(t) ?? new Map<number, number>();
              tfs.set(docId, (tfs.get(docId) ?? 0) + 1);
              expected.set(t, tfs);
              if (x.pairs.length / 2 >= blockPairs) seal(w); // may split the document
            }
          });
          [0, 1, 2].forEach(seal);
          const lexicons = workers.map((x) => {
            const order = x.dictionary.order();
            return { order, terms: Array.from(order, (id) => x.dictionary.terms[id]!) };
          });
          const union = await uniteLexicons(lexicons.map((l) => byteLexicon(l.terms)));
          const unionTerms = [...termsOfTexts(union.texts)];
          const runLexicons = lexicons.map((l, w) => ({ order: l.order, finals: union.finals[w]!, docIds: Uint32Array.from(workers[w]!.docIds) }));
          const got: [string, [number, number][]][] = [];
          mergeRuns(runs, 3, (termId, docIds, tfs, df) => got.push([unionTerms[termId]!, Array.from(docIds.subarray(0, df), (d, i) => [d, tfs[i]!])]), undefined, runs.map((_, i) => ({ lexicon: runLexicons[owners[i]!]! })));
          const want = [...expected.keys()].sort(byUtf8).map((t) => [t, [...expected.get(t)!.entries()].sort((a, b) => a[0] - b[0])]);
          expect(got).toEqual(want);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('a failure after the last batch', () => {
  it('a worker that cannot write its last run fails the wait for the workers to finish, with the reason, instead of leaving it pending (its lexicon came first)', async () => {
    const { ParsePool } = await import('../indexer/parse/parse-pool.js');
    const { createTokenizer } = await import('../indexer/analysis/tokenizer.js');
    const dir = fresh('one-file');
    mkdirSync(dir);
    writeFileSync(join(dir, 'a.jsonl'), JSON.stringify({ id: 'a', text: 'whale sea ship' }) + '\n');
    // A block far larger than the crawl: the only run is the last one, written after every batch.
    const ownLexicon = { worker: 0, runDir: join(dir, 'missing-run-folder'), blockPairs: 1 << 16, blocks: 1, sortHere: true };
    const pool = new ParsePool([{ path: 'a.jsonl', bytes: 40 }], 1, { root: dir, corpus: {}, tokenizer: createTokenizer({}).options, batchPairs: 1024, credits: 8, ownLexicon }, 1 << 20);
    try {
      let batches = 0;
      for await (const arrival of pool.batches()) {
        batches++;
        pool.consumed(arrival);
      }
      expect(batches).toBe(1);
      await expect(pool.lexiconsSent).resolves.toBeUndefined();
      await expect(pool.workersFinished).rejects.toThrow(/missing-run-folder/);
    } finally {
      await pool.close();
    }
  });
});
