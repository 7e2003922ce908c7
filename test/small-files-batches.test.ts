/**
 * Small files that share a batch (ParseWorkerInit.smallFilesTogether): a crawl of folders of
 * small files gives, byte for byte, the index of one batch a file (GPUINDEX_SMALL_FILES_TOGETHER=0)
 * and of the in-process parse of the same documents, with 1, 2 and 5 workers and the workers'
 * own lexicons; every bad file gives one warning line and is counted; the parse plan's sizes
 * are exact where the plan cuts files.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../src/build.js';
import { readIndexContent } from './helpers/index-files.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-small-batches-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let n = 0;
const fresh = (name: string) => join(work, `${name}-${n++}`);

interface CrawlShape {
  seed: number;
  /** Files in each folder (a folder of 0 is an empty folder). */
  folders: number[];
  /** How deep each folder is nested (0: at the root). */
  depths: number[];
  /** Every how many files one is bad (0: none). */
  badEvery: number;
}

/** Bad files: each must give exactly one line naming it (a skip, or a warning for a document indexed anyway). */
const BAD_KINDS = ['empty', 'binary', 'invalid-utf8', 'bad-gzip', 'broken-link'] as const;

/** Writes the crawl; returns the bad files' paths (relative to the crawl). */
function writeCrawl(dir: string, shape: CrawlShape): string[] {
  let s = shape.seed >>> 0 || 1;
  const rnd = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const words = Array.from({ length: 300 }, (_, i) => `v${(i * 7919) % 1009}k${i % 11}`);
  const text = (len: number) => Array.from({ length: len }, () => words[Math.floor(rnd() ** 2 * words.length)]).join(' ');
  const bad: string[] = [];
  mkdirSync(dir, { recursive: true });
  shape.folders.forEach((files, f) => {
    const rel = [...Array.from({ length: shape.depths[f] ?? 0 }, (_, d) => `n${d}`), `f${String(f).padStart(2, '0')}`].join('/');
    mkdirSync(join(dir, rel), { recursive: true });
    for (let i = 0; i < files; i++) {
      const name = `${rel}/p${String(i).padStart(3, '0')}`;
      if (shape.badEvery > 0 && i % shape.badEvery === shape.badEvery - 1) {
        const kind = BAD_KINDS[Math.floor(rnd() * BAD_KINDS.length)]!;
        const path = `${name}.${kind === 'bad-gzip' ? 'txt.gz' : 'txt'}`;
        bad.push(path);
        if (kind === 'empty') writeFileSync(join(dir, path), '');
        else if (kind === 'binary') writeFileSync(join(dir, path), Buffer.from([0x61, 0x00, 0x62]));
        else if (kind === 'invalid-utf8') writeFileSync(join(dir, path), Buffer.concat([Buffer.from(text(4)), Buffer.from([0x20, 0xc3, 0x28, 0x20]), Buffer.from(text(3))]));
        else if (kind === 'bad-gzip') writeFileSync(join(dir, path), Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x01, 0x02]));
        else symlinkSync(join(dir, 'nowhere', path), join(dir, path));
        continue;
      }
      const len = 1 + Math.floor(rnd() * (i % 9 === 0 ? 150 : 30));
      const r = rnd();
      if (r < 0.2) writeFileSync(join(dir, `${name}.html`), `<html><head><title>${text(3)}</title><script>var q = 1;</script></head><body><p>${text(len)}</p></body></html>`);
      else if (r < 0.35) writeFileSync(join(dir, `${name}.md`), `# ${text(2)}\n\n${text(len)}\n`);
      else if (r < 0.4) writeFileSync(join(dir, `${name}.jsonl`), [1, 2].map((k) => JSON.stringify({ id: `${name}-${k}`, text: text(len) })).join('\n') + '\n');
      else writeFileSync(join(dir, `${name}.txt`), text(len) + '\n');
    }
  });
  return bad;
}

async function build(input: string, workers: number, env: Record<string, string> = {}, blockSize = 1 << 20) {
  Object.assign(process.env, env);
  try {
    const lines: string[] = [];
    const output = fresh('idx');
    const summary = await buildIndex({ input, output, workers, blockSize, pipeline: 'cpu', stem: 'none', stopwords: 'none', onWarning: (m) => lines.push(m) });
    return { summary, lines, content: readIndexContent(output) };
  } finally {
    for (const k of Object.keys(env)) delete process.env[k];
  }
}

/** Every build the files batches may take: worker counts, the workers' own lexicons, blocks small enough to split them. */
const VARIANTS: [workers: number, env: Record<string, string>, blockSize?: number][] = [
  [1, {}],
  [2, {}],
  [5, {}],
  [2, {}, 97],
  [2, { GPUINDEX_WORKER_LEXICONS: '1' }],
  [5, { GPUINDEX_WORKER_LEXICONS: '1', GPUINDEX_WORKER_BLOCK_PAIRS: '300' }],
];

async function expectSameAsOneBatchAFile(dir: string, bad: string[], variants = VARIANTS): Promise<void> {
  const perFile = await build(dir, 1, { GPUINDEX_SMALL_FILES_TOGETHER: '0' });
  // One line per bad file, naming it, and each counted.
  for (const path of bad) expect(perFile.lines.filter((l) => l.startsWith(`skipped ${path}:`) || l.startsWith(`warning ${path}:`)), path).toHaveLength(1);
  const skippedBad = bad.filter((p) => perFile.lines.some((l) => l.startsWith(`skipped ${p}:`)));
  expect(perFile.summary.skipped.count).toBe(skippedBad.length);
  for (const [workers, env, blockSize] of variants) {
    const together = await build(dir, workers, env, blockSize);
    expect(together.content, `${workers} workers ${JSON.stringify(env)}`).toEqual(perFile.content);
    expect(together.lines).toEqual(perFile.lines);
    expect(together.summary.skipped).toEqual(perFile.summary.skipped);
    expect(together.summary.documents).toBe(perFile.summary.documents);
  }
}

describe('small files sharing a batch', () => {
  it('give the index of one batch a file, and of the in-process parse of the same documents', async () => {
    const dir = fresh('crawl');
    const bad = writeCrawl(dir, { seed: 5, folders: [40, 0, 7, 120, 1, 33], depths: [0, 1, 2, 0, 3, 1], badEvery: 9 });
    // A file larger than the small-file reader's buffer, between small ones.
    writeFileSync(join(dir, 'f03', 'p050-large.txt'), `head words ${'-'.repeat((1 << 20) + 10)} tail words\n`);
    expect(bad.length).toBeGreaterThan(15);
    await expectSameAsOneBatchAFile(dir, bad);

    const reference = await build(dir, 2);
    const { readCorpus } = await import('../indexer/corpus/index.js');
    const docs: { id: string; title: string; text: string }[] = [];
    for await (const item of readCorpus(dir)) if (item.kind === 'doc') docs.push({ id: item.doc.externalId, title: item.doc.title, text: item.doc.text });
    const output = fresh('idx');
    await buildIndex({ input: docs, output, stem: 'none', stopwords: 'none', sorter: 'cpu' });
    const inProcess = readIndexContent(output);
    expect(inProcess.postings.equals(reference.content.postings)).toBe(true);
    expect(inProcess.terms).toEqual(reference.content.terms);
    // The same documents in the same order (the in-process table has no paths): ids and lengths.
    const idsAndLengths = (rows: unknown[]) => rows.map((r) => [(r as unknown[])[1], (r as unknown[])[3]]);
    expect(idsAndLengths(reference.content.docs)).toEqual(idsAndLengths(inProcess.docs));
    expect(reference.summary.documents).toBe(docs.length);
  });

  it('give the same index for random folders of small files (fuzzed: counts, nesting, bad files, workers)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1e6 }),
        fc.array(fc.integer({ min: 0, max: 80 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 6, maxLength: 6 }),
        fc.constantFrom(0, 2, 7),
        fc.integer({ min: 0, max: VARIANTS.length - 1 }),
        async (seed, folders, depths, badEvery, variant) => {
          const dir = fresh('crawl');
          const bad = writeCrawl(dir, { seed, folders, depths, badEvery });
          await expectSameAsOneBatchAFile(dir, bad, [VARIANTS[variant]!]);
        },
      ),
      { numRuns: 8 },
    );
  });
});

describe('the plan\'s file sizes', () => {
  it('are exact for files the plan may cut and for few files, and a sampled mean for many small ones', async () => {
    const { plannedFileSizes, SIZE_SAMPLE_FILES } = await import('../indexer/parse/file-sizes.js');
    const dir = fresh('sizes');
    mkdirSync(dir);
    const files: string[] = [];
    const count = SIZE_SAMPLE_FILES * 3 + 5;
    for (let i = 0; i < count; i++) {
      const name = `p${String(i).padStart(5, '0')}.txt`;
      writeFileSync(join(dir, name), 'x'.repeat(i % 100));
      files.push(name);
    }
    writeFileSync(join(dir, 'big.jsonl'), '{"text":"a"}\n'.repeat(1000));
    writeFileSync(join(dir, 'w.warc.gz'), gzipSync('WARC/1.0\r\n'));
    files.push('big.jsonl', 'w.warc.gz', 'missing.jsonl');
    const sizes = plannedFileSizes(dir, files);
    expect(sizes.slice(-3)).toEqual([statSync(join(dir, 'big.jsonl')).size, statSync(join(dir, 'w.warc.gz')).size, 0]);
    // The mean of 0..99 is 49.5: a sample spread over the files comes within a few bytes of it.
    const estimate = sizes[0]!;
    expect(new Set(sizes.slice(0, count))).toEqual(new Set([estimate]));
    expect(Math.abs(estimate - 49.5)).toBeLessThan(3);
    // Few files: every one exact.
    expect(plannedFileSizes(dir, files.slice(0, 10))).toEqual(files.slice(0, 10).map((f) => statSync(join(dir, f)).size));
  });

  it('take the exact size of the same files as the format of each path says (the cache by extension; fuzzed names)', async () => {
    const { mayBeCut } = await import('../indexer/parse/file-sizes.js');
    const { formatOf } = await import('../indexer/corpus/formats.js');
    const reference = (path: string) => {
      const fmt = formatOf(path);
      return fmt !== undefined && ((fmt.format === 'jsonl' && !fmt.gzip) || (fmt.format === 'warc' && fmt.gzip));
    };
    const piece = fc.constantFrom('a', 'x.y', '.', '.gz', '.GZ', '.Gz', 'gz', '.jsonl', '.JSONL', '.ndjson', '.warc', '.Warc', '.wet', '.txt', '.json', '/', 'd.jsonl/', '.warc/', '');
    const path = fc.array(piece, { maxLength: 6 }).map((p) => p.join(''));
    // Several paths a run: an extension cached by one path is then asked again for the next.
    fc.assert(fc.property(fc.array(path, { minLength: 1, maxLength: 8 }), (paths) => paths.every((p) => mayBeCut(p) === reference(p))), { numRuns: 2000 });
    for (const p of ['big.jsonl', 'w.warc.gz', 'W.WARC.GZ', 'a.jsonl.gz', 'a.warc', 'a.txt', 'd.jsonl/a.txt', 'd.warc/x.gz', '.jsonl', 'x.gz'])
      expect([p, mayBeCut(p)]).toEqual([p, reference(p)]);
  });
});

describe('the parse pool with small files together', () => {
  it('hands back batches spanning several files, every task once and in crawl order, with the documents of one batch a file', async () => {
    const { ParsePool } = await import('../indexer/parse/parse-pool.js');
    const { createTokenizer } = await import('../indexer/analysis/tokenizer.js');
    const { listCorpusFiles } = await import('../indexer/corpus/index.js');
    const dir = fresh('pool');
    writeCrawl(dir, { seed: 3, folders: [60, 25, 90], depths: [0, 1, 0], badEvery: 11 });
    const { files } = await listCorpusFiles(dir);
    const tasks = files.map((path) => ({ path, bytes: 100 }));
    const run = async (together: boolean) => {
      const pool = new ParsePool(tasks, 2, { root: dir, corpus: {}, tokenizer: createTokenizer().options, batchPairs: 256, credits: 2, smallFilesTogether: together }, 1 << 20);
      const batches: { seq: number; part: number; last: boolean; endSeq: number; ids: string[]; skips: string[] }[] = [];
      for await (const arrival of pool.batches()) {
        const { batch } = arrival;
        batches.push({ seq: batch.seq, part: batch.part, last: batch.last, endSeq: batch.endSeq ?? batch.seq, ids: [...batch.externalIds], skips: batch.skips.map((s) => s.path) });
        pool.consumed(arrival);
      }
      await pool.close();
      return batches;
    };
    const perFile = await run(false);
    const together = await run(true);
    expect(perFile.every((b) => b.endSeq === b.seq)).toBe(true);
    // Fewer batches, some of many files; each starts where the one before ended.
    expect(together.length).toBeLessThan(perFile.length / 2);
    expect(Math.max(...together.map((b) => b.endSeq - b.seq))).toBeGreaterThan(10);
    let next = 0;
    for (const b of together) {
      expect(b.seq).toBe(b.part === 0 ? next : next - 1);
      next = b.last ? b.endSeq + 1 : b.seq + 1;
    }
    expect(next).toBe(tasks.length);
    // The same documents and skips in the same order.
    expect(together.flatMap((b) => b.ids)).toEqual(perFile.flatMap((b) => b.ids));
    expect(together.flatMap((b) => b.skips)).toEqual(perFile.flatMap((b) => b.skips));
  });
});
