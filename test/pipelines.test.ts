import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../src/build.js';
import { readIndexContent } from './helpers/index-files.js';
import { hasGpu } from './helpers/gpu-available.js';
import { withEnv } from './helpers/env.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-pipe-'));
const crawl = join(work, 'crawl');
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A crawl of several JSONL files with a shared vocabulary, so terms recur across files and workers. */
beforeAll(() => {
  mkdirSync(join(crawl, 'a'), { recursive: true });
  const words = Array.from({ length: 300 }, (_, i) => `w${(i * 7919) % 1009}x${i % 13}`);
  let seed = 7;
  const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  for (let f = 0; f < 7; f++) {
    const lines: string[] = [];
    for (let d = 0; d < 40; d++) {
      const n = 5 + Math.floor(rnd() * 60);
      const text = Array.from({ length: n }, () => words[Math.floor(rnd() ** 2 * words.length)]).join(' ');
      lines.push(JSON.stringify({ id: `f${f}-d${d}`, title: `doc ${f} ${d}`, text }));
    }
    writeFileSync(join(crawl, f < 3 ? 'a' : '', `part-${f}.jsonl`), lines.join('\n') + '\n');
  }
});

let n = 0;
async function build(opts: Partial<Parameters<typeof buildIndex>[0]>) {
  const output = join(work, `idx-${n++}`);
  const summary = await buildIndex({ input: crawl, output, blockSize: 97, stem: 'none', stopwords: 'none', ...opts });
  return { summary, content: readIndexContent(output), impacts: readFileSync(join(output, 'impacts.bin')) };
}

describe('schedules and workers', () => {
  it('gives byte-identical postings, lexicon and documents with 1, 2 and 3 workers', async () => {
    const one = await build({ pipeline: 'cpu', workers: 1 });
    const two = await build({ pipeline: 'cpu', workers: 2 });
    const three = await build({ pipeline: 'cpu', workers: 3, blockSize: 1000 });
    expect(one.summary.documents).toBe(280);
    expect(one.summary.blocks).toBeGreaterThan(10);
    expect(two.content).toEqual(one.content);
    expect(three.content).toEqual(one.content);
  });

  it('the crawl in one block: the parse workers write postings.bin (in parts, with 2 and 3) and its impacts, the lexicon comes from the tally, and the index is the same as from many runs', async () => {
    const runs = await build({ pipeline: 'cpu', workers: 1 });
    for (const workers of [1, 2, 3]) {
      // A block this small is written by one worker unless the threshold says otherwise. Filled
      // past an eighth, the CPU sorter has its scratch ready, which the parts' copy replaces.
      const one = await withEnv('GPUINDEX_PARTS_MIN_PAIRS', (set) => {
        set('0');
        return build({ pipeline: 'cpu', workers, blockSize: runs.summary.pairs + 1 });
      });
      expect(one.summary.blocks).toBe(1);
      expect(one.summary.runBytes).toBe(0);
      expect(one.content).toEqual(runs.content);
      expect(one.impacts.equals(runs.impacts), `${workers} workers: impacts.bin`).toBe(true);
    }
  });

  it('gives the same index as the in-process parse of the same documents', async () => {
    const viaWorkers = await build({ pipeline: 'cpu', workers: 2 });
    const { readCorpus } = await import('../indexer/corpus/index.js');
    const docs: { id: string; title: string; text: string }[] = [];
    for await (const item of readCorpus(crawl)) if (item.kind === 'doc') docs.push({ id: item.doc.externalId, title: item.doc.title, text: item.doc.text });
    const output = join(work, `idx-${n++}`);
    await buildIndex({ input: docs, output, blockSize: 97, stem: 'none', stopwords: 'none', sorter: 'cpu' });
    const inProcess = readIndexContent(output);
    expect(inProcess.postings.equals(viaWorkers.content.postings)).toBe(true);
    expect(inProcess.terms).toEqual(viaWorkers.content.terms);
  });

  it.runIf(hasGpu())('Indexcpu, Indexgpu and Indexgpu+ agree byte for byte', async () => {
    const cpu = await build({ pipeline: 'cpu', workers: 2 });
    const gpu = await build({ pipeline: 'gpu', workers: 2 });
    const gpuPlus = await build({ pipeline: 'gpu+', workers: 2 });
    expect(gpu.summary.pipeline).toBe('gpu');
    expect(gpuPlus.summary.pipeline).toBe('gpu+');
    expect(gpu.summary.sorter).toBe('gpu');
    expect(gpu.content).toEqual(cpu.content);
    expect(gpuPlus.content).toEqual(cpu.content);
  });

  it.runIf(hasGpu())('Indexgpu+ with the tail split handing the last blocks over early gives the same index', async () => {
    const cpu = await build({ pipeline: 'cpu', workers: 2, blockSize: 20000 });
    process.env.GPUINDEX_TAIL_MIN_PAIRS = '100';
    try {
      const gpuPlus = await build({ pipeline: 'gpu+', workers: 2, blockSize: 20000 });
      // All ~10 K pairs fit one block; the split hands blocks over as the crawl nears its end.
      expect(cpu.summary.blocks).toBe(1);
      expect(gpuPlus.summary.blocks).toBeGreaterThan(cpu.summary.blocks);
      expect(gpuPlus.content).toEqual(cpu.content);
    } finally {
      delete process.env.GPUINDEX_TAIL_MIN_PAIRS;
    }
  });
});

/**
 * A crawl of many small files (batches of several files go in one message, files in groups):
 * 12 folders of .txt, .html and .md pages of 1 to 120 words, among them an empty file, a binary
 * one, a gzipped one, a JSONL file and a file larger than the small-file reader's buffer (1 MiB).
 */
describe('many small files', () => {
  const smallCrawl = join(work, 'small-files');
  beforeAll(() => {
    const words = Array.from({ length: 400 }, (_, i) => `s${(i * 104729) % 1013}q${i % 17}`);
    let seed = 11;
    const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const text = (n: number) => Array.from({ length: n }, () => words[Math.floor(rnd() ** 2 * words.length)]).join(' ');
    for (let d = 0; d < 12; d++) {
      const dir = join(smallCrawl, `d${String(d).padStart(2, '0')}`);
      mkdirSync(dir, { recursive: true });
      for (let f = 0; f < 50; f++) {
        const n = 1 + Math.floor(rnd() * (f % 7 === 0 ? 120 : 25));
        const name = `f${String(f).padStart(2, '0')}`;
        if (f % 5 === 1) writeFileSync(join(dir, `${name}.html`), `<html><head><title>${text(3)}</title><script>var ${text(1)};</script></head><body><p>${text(n)}</p><div>${text(2)}</div></body></html>`);
        else if (f % 5 === 2) writeFileSync(join(dir, `${name}.md`), `# ${text(2)}\n\n${text(n)}\n`);
        else writeFileSync(join(dir, `${name}.txt`), text(n) + '\n');
      }
    }
    writeFileSync(join(smallCrawl, 'd03', 'empty.txt'), '');
    writeFileSync(join(smallCrawl, 'd04', 'binary.txt'), Buffer.from([0x61, 0x00, 0x62]));
    writeFileSync(join(smallCrawl, 'd05', 'packed.txt.gz'), gzipSync(text(40)));
    writeFileSync(join(smallCrawl, 'd06', 'lines.jsonl'), Array.from({ length: 30 }, (_, i) => JSON.stringify({ id: `line-${i}`, text: text(10) })).join('\n') + '\n');
    writeFileSync(join(smallCrawl, 'd07', 'large.txt'), `${text(30)} ${'-'.repeat((1 << 20) + 100)} ${text(30)}\n`);
  });

  const buildSmall = async (workers: number, blockSize: number) => {
    const output = join(work, `idx-${n++}`);
    const summary = await buildIndex({ input: smallCrawl, output, blockSize, stem: 'none', stopwords: 'none', pipeline: 'cpu', workers });
    return { summary, content: readIndexContent(output) };
  };

  it('gives byte-identical indexes with 1, 2 and 3 workers, and the in-process parse of the same documents', async () => {
    const one = await buildSmall(1, 97);
    expect(one.summary.documents).toBe(12 * 50 + 1 + 30 + 1);
    expect(one.summary.skipped.count).toBe(2);
    expect(one.summary.blocks).toBeGreaterThan(20);
    for (const [workers, blockSize] of [[2, 97], [3, 97], [3, 1 << 20]] as const) {
      const other = await buildSmall(workers, blockSize);
      expect(other.content).toEqual(one.content);
      expect(other.summary.skipped).toEqual(one.summary.skipped);
    }
    const { readCorpus } = await import('../indexer/corpus/index.js');
    const docs: { id: string; title: string; text: string }[] = [];
    for await (const item of readCorpus(smallCrawl)) if (item.kind === 'doc') docs.push({ id: item.doc.externalId, title: item.doc.title, text: item.doc.text });
    const output = join(work, `idx-${n++}`);
    await buildIndex({ input: docs, output, blockSize: 97, stem: 'none', stopwords: 'none', sorter: 'cpu' });
    const inProcess = readIndexContent(output);
    expect(inProcess.postings.equals(one.content.postings)).toBe(true);
    expect(inProcess.terms).toEqual(one.content.terms);
    // Same documents in the same order: ids and lengths (the in-process table has no paths).
    const idsAndLengths = (rows: unknown[]) => rows.map((r) => [(r as unknown[])[1], (r as unknown[])[3]]);
    expect(idsAndLengths(inProcess.docs)).toEqual(idsAndLengths(one.content.docs));
  });
});
