import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../src/build.js';
import { MAX_WORKERS_A_GPU_THREAD } from '../src/build/plan.js';
import { generateCorpus } from '../src/gen-corpus.js';
import { listCorpusFiles } from '../indexer/corpus/index.js';
import { expectedCrawlPairs, PAIRS_PER_BYTE } from '../indexer/plan/crawl-pairs.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-choice-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let serial = 0;

/** The crawl's listing and each file's exact size. */
async function filesOf(crawl: string): Promise<{ files: string[]; sizes: number[] }> {
  const listing = await listCorpusFiles(crawl);
  return { files: listing.files, sizes: listing.files.map((f) => statSync(join(listing.base, f)).size) };
}

describe('expectedCrawlPairs', () => {
  it('counts each stored byte at its format\'s rate: text, markup (HTML, WARC), and either gzipped', () => {
    const files = ['a.jsonl', 'b/c.warc.gz', 'd.HTML', 'e.txt.gz', 'f.md', 'g.warc'];
    const sizes = [1000, 100, 200, 50, 10, 300];
    const { text, html, textGzip, htmlGzip } = PAIRS_PER_BYTE;
    expect(expectedCrawlPairs(files, sizes)).toBe(Math.ceil(1010 * text + 100 * htmlGzip + 500 * html + 50 * textGzip));
    expect(expectedCrawlPairs([], [])).toBe(0);
  });

  const crawls: Record<string, string> = {};
  beforeAll(async () => {
    crawls['moby-dick (JSONL, gzipped JSONL)'] = 'corpus-samples/moby-dick';
    crawls['moby-dick chapters (HTML)'] = 'corpus-samples/moby-dick/html';
    crawls['postgresql-docs (.warc.gz)'] = 'corpus-samples/postgresql-docs';
    const synthetic = join(work, 'synthetic');
    await generateCorpus({ size: '3MB', seed: 5, output: synthetic, files: 3, threads: 1 });
    crawls['synthetic JSONL'] = synthetic;
    // The densest text gzipped: the synthetic crawl's files as .jsonl.gz.
    const gz = join(work, 'synthetic-gz');
    mkdirSync(gz);
    for (const f of readdirSync(synthetic)) writeFileSync(join(gz, `${f}.gz`), gzipSync(readFileSync(join(synthetic, f))));
    crawls['synthetic JSONL gzipped'] = gz;
  });

  // Moby-Dick's chapters as HTML are the densest pages measured: 3x the HTML rate.
  it('is within 3.5x of the pairs real builds give, for every format of the samples', async () => {
    for (const [name, crawl] of Object.entries(crawls)) {
      const { files, sizes } = await filesOf(crawl);
      const summary = await buildIndex({ input: crawl, output: join(work, `rate-${serial++}`), pipeline: 'cpu', workers: 1 });
      const expected = expectedCrawlPairs(files, sizes);
      expect(summary.pairs, name).toBeGreaterThan(0);
      expect(expected / summary.pairs, name).toBeGreaterThan(1 / 3.5);
      expect(expected / summary.pairs, name).toBeLessThan(3.5);
    }
  });
});

describe('the default choice of sorter', () => {
  const crawl = join(work, 'small');
  beforeAll(async () => {
    await generateCorpus({ size: '400KB', seed: 9, output: crawl, files: 8, threads: 1 });
  });
  /** Whether the build asked for a GPU: it sorted on one, or said why it could not. */
  const askedForGpu = (s: { pipeline: string; notices: string[] }) => s.pipeline === 'gpu+' || s.notices.some((n) => n.startsWith('no GPU'));

  it('sorts a crawl the parse workers hold in their blocks on the CPU, without asking for a GPU', async () => {
    const s = await buildIndex({ input: crawl, output: join(work, `choice-${serial++}`), workers: 4 });
    expect(s.pipeline).toBe('cpu');
    expect(askedForGpu(s)).toBe(false);
    // Held indeed: one block a worker, the one each sorts itself.
    expect(s.blocks).toBeLessThanOrEqual(4);
    // So does an explicit auto: it is the default, named.
    const named = await buildIndex({ input: crawl, output: join(work, `choice-${serial++}`), workers: 4, pipeline: 'auto', sorter: 'auto' });
    expect(askedForGpu(named)).toBe(false);
  });

  it('asks for a GPU when the crawl overfills the blocks, or one dictionary numbers the terms', async () => {
    const overfilled = await buildIndex({ input: crawl, output: join(work, `choice-${serial++}`), workers: 4, blockSize: 100 });
    expect(askedForGpu(overfilled)).toBe(true);
    // One worker: the shared dictionary's blocks all go to the sorter, the last one too.
    const shared = await buildIndex({ input: crawl, output: join(work, `choice-${serial++}`), workers: 1 });
    expect(askedForGpu(shared)).toBe(true);
  });

  it('sorts on the CPU, without asking for a GPU, with more workers than one GPU thread keeps up with', async () => {
    // Blocks of 100 pairs: the crawl overfills them, so the worker count alone decides.
    const many = await buildIndex({ input: crawl, output: join(work, `choice-${serial++}`), workers: MAX_WORKERS_A_GPU_THREAD + 1, blockSize: 100, memory: '4GiB' });
    expect([many.pipeline, askedForGpu(many)]).toEqual(['cpu', false]);
    const some = await buildIndex({ input: crawl, output: join(work, `choice-${serial++}`), workers: MAX_WORKERS_A_GPU_THREAD, blockSize: 100, memory: '4GiB' });
    expect(askedForGpu(some)).toBe(true);
  });

  it('asks nothing of the crawl when a sorter is named: --sorter cpu never opens a GPU', async () => {
    const s = await buildIndex({ input: crawl, output: join(work, `choice-${serial++}`), workers: 4, blockSize: 100, sorter: 'cpu' });
    expect([s.pipeline, askedForGpu(s)]).toEqual(['cpu', false]);
  });

  it('gives the same index either way', async () => {
    const a = join(work, `choice-${serial++}`);
    const b = join(work, `choice-${serial++}`);
    await buildIndex({ input: crawl, output: a, workers: 4 });
    await buildIndex({ input: crawl, output: b, workers: 4, blockSize: 100 });
    expect(readFileSync(join(a, 'postings.bin')).equals(readFileSync(join(b, 'postings.bin')))).toBe(true);
  });
});
