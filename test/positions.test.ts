import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { buildIndex } from '../src/build.js';
import { verifyIndex } from '../merge/verify.js';
import { sha256OfFile } from '../merge/manifest.js';
import { readIndexContent, type IndexContent } from './helpers/index-files.js';
import { naivePositions, naivePositionsFileV3, readPositions, sortedEntries, tokenStreams } from './helpers/positions.js';
import { withEnv } from './helpers/env.js';
import { generateCorpus } from '../src/gen-corpus.js';
import { AbortError } from '../src/shared/errors.js';
import { resumeDirFor } from '../src/output.js';
import { hasGpu } from './helpers/gpu-available.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-pos-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let serial = 0;

/** Few distinct words, stopwords among them, so that terms repeat within and across documents. */
const VOCABULARY = ['white', 'whale', 'the', 'of', 'ship', 'sea', 'ahab', 'and', 'whales', 'sailing', 'café', 'x1'];
const word = fc.constantFrom(...VOCABULARY);
const text = fc.array(word, { maxLength: 25 }).map((w) => w.join(' '));
const doc = fc.record({ title: fc.oneof(fc.constant(''), fc.array(word, { minLength: 1, maxLength: 5 }).map((w) => w.join(' '))), text });
const crawl = fc.array(doc, { minLength: 1, maxLength: 25 });

type Doc = { title: string; text: string };

function writeCrawl(docs: readonly Doc[], files = 3): string {
  const dir = join(work, `crawl-${serial++}`);
  mkdirSync(dir);
  const per = Math.ceil(docs.length / files);
  for (let f = 0; f * per < docs.length; f++) {
    const lines = docs.slice(f * per, (f + 1) * per).map((d, i) => JSON.stringify({ id: `d${f * per + i}`, title: d.title, text: d.text }));
    writeFileSync(join(dir, `part-${f}.jsonl`), lines.join('\n') + '\n');
  }
  return dir;
}

describe('--positions: positions.bin equals a naive scan of the token streams', () => {
  it('documents given to the API: random crawls, title weights, blocks that split documents', async () => {
    await fc.assert(
      fc.asyncProperty(crawl, fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 3 }), async (docs, blockSize, titleWeight) => {
        const out = join(work, `api-${serial++}`);
        await buildIndex({ input: docs.map((d, i) => ({ id: `d${i}`, ...d })), output: out, blockSize, titleWeight, sorter: 'cpu', positions: true });
        const built = readPositions(out);
        const naive = naivePositions(tokenStreams(docs, {}));
        expect(sortedEntries(built.positions)).toEqual(sortedEntries(naive.positions));
        expect(built.titleLengths).toEqual(naive.titleLengths);
        verifyIndex(out);
      }),
      { numRuns: 30 },
    );
  });

  it('crawl folders: the same positions.bin bytes with 1, 2 and 5 workers (5: lexicons of their own), and the naive positions', async () => {
    await fc.assert(
      fc.asyncProperty(crawl, fc.integer({ min: 8, max: 64 }), async (docs, blockSize) => {
        const dir = writeCrawl(docs);
        const naive = naivePositions(tokenStreams(docs, {}));
        const bytes: Buffer[] = [];
        for (const workers of [1, 2, 5]) {
          const out = join(work, `crawl-idx-${serial++}`);
          await buildIndex({ input: dir, output: out, blockSize, workers, sorter: 'cpu', positions: true });
          const built = readPositions(out);
          expect(sortedEntries(built.positions)).toEqual(sortedEntries(naive.positions));
          expect(built.titleLengths).toEqual(naive.titleLengths);
          bytes.push(readFileSync(join(out, 'positions.bin')));
        }
        expect(bytes[1]!.equals(bytes[0]!)).toBe(true);
        expect(bytes[2]!.equals(bytes[0]!)).toBe(true);
      }),
      { numRuns: 8 },
    );
  });

  it('a folder of titled .html pages and untitled ASCII .txt files, interleaved: the naive positions (a .txt after a titled page has no title)', async () => {
    const ascii = fc.array(fc.constantFrom('white', 'whale', 'the', 'ship', 'sea', 'ahab', 'x1'), { minLength: 1, maxLength: 12 }).map((w) => w.join(' '));
    const page = fc.record({ html: fc.constant(true), title: ascii, text: ascii });
    const note = fc.record({ html: fc.constant(false), title: fc.constant(''), text: ascii });
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(page, note), { minLength: 2, maxLength: 12 }), async (docs) => {
        const dir = join(work, `mixed-${serial++}`);
        mkdirSync(dir);
        docs.forEach((d, i) => {
          const name = `f${String(i).padStart(3, '0')}`;
          if (d.html) writeFileSync(join(dir, `${name}.html`), `<html><head><title>${d.title}</title></head><body><p>${d.text}</p></body></html>`);
          else writeFileSync(join(dir, `${name}.txt`), `${d.text}\n`);
        });
        const out = join(work, `mixed-idx-${serial++}`);
        await buildIndex({ input: dir, output: out, workers: 1, sorter: 'cpu', positions: true });
        const built = readPositions(out);
        const naive = naivePositions(tokenStreams(docs, {}));
        expect(sortedEntries(built.positions)).toEqual(sortedEntries(naive.positions));
        expect(built.titleLengths).toEqual(naive.titleLengths);
        verifyIndex(out);
      }),
      { numRuns: 15 },
    );
  });

  it('long lists (thousands of postings a term, past every growth of the merge\'s columns) and postings of more than 64 positions: the naive positions, and verify\'s checks', async () => {
    const docs = Array.from({ length: 4500 }, (_, i) => ({ title: i % 5 ? '' : 'whale', text: `${i % 7 ? 'white' : 'sea'} whale ${'ship '.repeat(i % 3)}sea${i % 1000 === 0 ? ' whale'.repeat(100 + i / 100) : ''}` }));
    const out = join(work, `long-${serial++}`);
    await buildIndex({ input: docs.map((d, i) => ({ id: `d${i}`, ...d })), output: out, blockSize: 7000, titleWeight: 2, sorter: 'cpu', positions: true });
    expect(sortedEntries(readPositions(out).positions)).toEqual(sortedEntries(naivePositions(tokenStreams(docs, {})).positions));
    verifyIndex(out);
  });

  it('merge threads: each writes its term range\'s positions part; positions.bin has the same bytes for any worker and merge-thread count (two waves of ranges a thread)', async () => {
    let parallelBuilds = 0;
    process.env.GPUINDEX_MERGE_WAVES = '2';
    onTestFinished(() => void delete process.env.GPUINDEX_MERGE_WAVES);
    await fc.assert(
      fc.asyncProperty(crawl, fc.integer({ min: 8, max: 64 }), fc.integer({ min: 2, max: 6 }), async (docs, blockSize, mergeThreads) => {
        const dir = writeCrawl(docs);
        const naive = naivePositions(tokenStreams(docs, {}));
        let first: { positions: Buffer; postings: Buffer } | undefined;
        for (const [workers, threads] of [[1, 1], [1, mergeThreads], [2, mergeThreads], [5, 1], [5, mergeThreads]] as const) {
          const out = join(work, `mt-idx-${serial++}`);
          const summary = await buildIndex({ input: dir, output: out, blockSize, workers, sorter: 'cpu', positions: true, mergeThreads: threads });
          expect(summary.merge.threads).toBeLessThanOrEqual(threads);
          if (summary.merge.threads > 1) parallelBuilds++;
          const built = { positions: readFileSync(join(out, 'positions.bin')), postings: readFileSync(join(out, 'postings.bin')) };
          if (!first) {
            first = built;
            expect(sortedEntries(readPositions(out).positions)).toEqual(sortedEntries(naive.positions));
          }
          expect(built.postings.equals(first.postings)).toBe(true);
          expect(built.positions.equals(first.positions)).toBe(true);
          expect(readdirSync(out).filter((f) => f.includes('.part-'))).toEqual([]);
          verifyIndex(out);
        }
      }),
      { numRuns: 8 },
    );
    // Small crawls may hold too few terms to split: most builds above still ran on several threads.
    expect(parallelBuilds).toBeGreaterThan(8);
  });

  it('merge threads on a crawl of many terms: every thread count gives the one-thread positions.bin, documents split across blocks', async () => {
    const words = Array.from({ length: 300 }, (_, i) => `w${i.toString(36)}`);
    const docs = Array.from({ length: 120 }, (_, i) => ({ title: i % 3 ? `${words[i % 300]} ${words[(i * 7) % 300]}` : '', text: Array.from({ length: 40 + (i % 17) }, (_, j) => words[(i * 13 + j * j) % 300]).join(' ') }));
    const dir = writeCrawl(docs, 4);
    const naive = naivePositions(tokenStreams(docs, {}));
    const build = async (workers: number, mergeThreads: number) => {
      const out = join(work, `mt-many-${serial++}`);
      const summary = await buildIndex({ input: dir, output: out, blockSize: 301, workers, sorter: 'cpu', positions: true, mergeThreads, titleWeight: 2 });
      expect(summary.merge.threads).toBe(mergeThreads);
      return { out, bytes: readFileSync(join(out, 'positions.bin')) };
    };
    const one = await build(1, 1);
    const built = readPositions(one.out);
    expect(sortedEntries(built.positions)).toEqual(sortedEntries(naive.positions));
    for (const [workers, threads] of [[1, 2], [1, 7], [2, 3], [5, 5]] as const) expect((await build(workers, threads)).bytes.equals(one.bytes)).toBe(true);
  });

  it('positions.bin is the format-3 bytes a naive encoder writes from a token scan, for any worker count, block size and merge-thread count; postings.bin and index.sqlite\'s rows are the one-thread build\'s and the plain build\'s', async () => {
    // A larger vocabulary than VOCABULARY's, so that the terms split into several merge threads' ranges.
    const manyWord = fc.constantFrom(...VOCABULARY, ...Array.from({ length: 80 }, (_, i) => `w${i.toString(36)}`));
    const manyDoc = fc.record({
      title: fc.oneof(fc.constant(''), fc.array(manyWord, { minLength: 1, maxLength: 4 }).map((w) => w.join(' '))),
      text: fc.array(manyWord, { maxLength: 60 }).map((w) => w.join(' ')),
    });
    let parallelBuilds = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(manyDoc, { minLength: 1, maxLength: 40 }), fc.integer({ min: 16, max: 200 }), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 2, max: 5 }), async (docs, blockSize, titleWeight, mergeThreads) => {
        const dir = writeCrawl(docs);
        const naive = naivePositions(tokenStreams(docs, {}));
        let reference: IndexContent | undefined;
        for (const [workers, threads] of [[1, 1], [1, mergeThreads], [2, mergeThreads], [5, mergeThreads]] as const) {
          const out = join(work, `naive-bytes-${serial++}`);
          const summary = await buildIndex({ input: dir, output: out, blockSize, workers, sorter: 'cpu', positions: true, mergeThreads: threads, titleWeight });
          if (summary.merge.threads > 1) parallelBuilds++;
          const content = readIndexContent(out);
          const termsInIdOrder = content.terms.map((row) => (row as [number, string])[1]);
          const expected = naivePositionsFileV3(naive.positions, naive.titleLengths, naive.ends, termsInIdOrder, titleWeight);
          expect(readFileSync(join(out, 'positions.bin')).equals(expected)).toBe(true);
          if (!reference) {
            reference = content;
            const plain = join(work, `naive-plain-${serial++}`);
            await buildIndex({ input: dir, output: plain, blockSize, workers: 2, sorter: 'cpu', mergeThreads, titleWeight });
            const p = readIndexContent(plain);
            expect(p.postings.equals(content.postings)).toBe(true);
            expect(p.terms).toEqual(content.terms);
            expect(p.docs).toEqual(content.docs);
            continue;
          }
          expect(content.postings.equals(reference.postings)).toBe(true);
          expect(content.lexiconFile?.equals(reference.lexiconFile!) ?? reference.lexiconFile === null).toBe(true);
          expect(content.terms).toEqual(reference.terms);
          expect(content.docs).toEqual(reference.docs);
          expect(content.stats).toEqual(reference.stats);
        }
      }),
      { numRuns: 10 },
    );
    // Of the 30 builds on several threads asked for, a crawl too small to split runs on one: most did not.
    expect(parallelBuilds).toBeGreaterThan(15);
  });

  it('workers with lexicons of their own at 2 workers (GPUINDEX_WORKER_LEXICONS=1): the same bytes', async () => {
    const docs = Array.from({ length: 60 }, (_, i) => ({ title: i % 3 ? `whale ${i % 5} ship` : '', text: Array.from({ length: 30 + (i % 11) }, (_, j) => VOCABULARY[(i * 7 + j * 3) % VOCABULARY.length]).join(' ') }));
    const dir = writeCrawl(docs, 4);
    const build = async () => {
      const out = join(work, `wl-${serial++}`);
      await buildIndex({ input: dir, output: out, blockSize: 97, workers: 2, sorter: 'cpu', positions: true });
      return readFileSync(join(out, 'positions.bin'));
    };
    const shared = await withEnv('GPUINDEX_WORKER_LEXICONS', async (set) => {
      set('0');
      return build();
    });
    const own = await withEnv('GPUINDEX_WORKER_LEXICONS', async (set) => {
      set('1');
      return build();
    });
    expect(own.equals(shared)).toBe(true);
  });
});

describe.runIf(hasGpu())('--positions with the GPU sorter', () => {
  it('Indexgpu and Indexgpu+ (shared dictionary, and workers with lexicons of their own) write the CPU sorter\'s positions.bin', async () => {
    const docs = Array.from({ length: 80 }, (_, i) => ({ title: i % 4 ? `ahab ${i % 7} whale` : '', text: Array.from({ length: 25 + (i % 13) }, (_, j) => VOCABULARY[(i * 5 + j * 7) % VOCABULARY.length]).join(' ') }));
    const dir = writeCrawl(docs, 5);
    const naive = naivePositions(tokenStreams(docs, {}));
    const build = async (o: Partial<Parameters<typeof buildIndex>[0]>) => {
      const out = join(work, `gpu-${serial++}`);
      const summary = await buildIndex({ input: dir, output: out, blockSize: 211, positions: true, ...o });
      return { summary, bytes: readFileSync(join(out, 'positions.bin')), postings: readFileSync(join(out, 'postings.bin')), out };
    };
    const cpu = await build({ pipeline: 'cpu', workers: 2 });
    expect(sortedEntries(readPositions(cpu.out).positions)).toEqual(sortedEntries(naive.positions));
    for (const o of [{ pipeline: 'gpu', workers: 2 }, { pipeline: 'gpu+', workers: 2 }, { pipeline: 'gpu+', workers: 5 }] as const) {
      const gpu = await build(o);
      expect(gpu.summary.sorter).toBe('gpu');
      expect(gpu.postings.equals(cpu.postings)).toBe(true);
      expect(gpu.bytes.equals(cpu.bytes)).toBe(true);
    }
  });
});

describe('--positions leaves the rest of the index as it is', () => {
  it('postings.bin, the lexicon, documents and statistics are the same bytes; only the settings name positions', async () => {
    const docs = Array.from({ length: 40 }, (_, i) => ({ title: i % 2 ? 'the white whale' : '', text: Array.from({ length: 20 + i }, (_, j) => VOCABULARY[(i + j * 5) % VOCABULARY.length]).join(' ') }));
    const dir = writeCrawl(docs);
    const plain = join(work, `plain-${serial++}`);
    const withPositions = join(work, `pos-${serial++}`);
    await buildIndex({ input: dir, output: plain, workers: 2, sorter: 'cpu' });
    await buildIndex({ input: dir, output: withPositions, workers: 2, sorter: 'cpu', positions: true });
    expect(existsSync(join(plain, 'positions.bin'))).toBe(false);
    const a = readIndexContent(plain);
    const b = readIndexContent(withPositions);
    expect(b.postings.equals(a.postings)).toBe(true);
    expect(b.terms).toEqual(a.terms);
    expect(b.docs).toEqual(a.docs);
    expect(b.stats).toEqual(a.stats);
    expect(readFileSync(join(plain, 'impacts.bin')).equals(readFileSync(join(withPositions, 'impacts.bin')))).toBe(true);
    expect(Object.keys(JSON.parse(readFileSync(join(withPositions, 'MANIFEST.json'), 'utf8')).files)).toContain('positions.bin');
  });

  it('verify reads positions.bin: damage under a matching checksum is found and named', async () => {
    const out = join(work, `v-${serial++}`);
    await buildIndex({ input: [{ id: 'a', title: 'white whale', text: 'the whale and the white sea whale' }], output: out, sorter: 'cpu', positions: true });
    expect(verifyIndex(out).terms).toBeGreaterThan(0);
    const path = join(out, 'positions.bin');
    const bytes = readFileSync(path);
    // The first term ("sea", at 5: the title's 2 terms, the gap, then "whale white sea") moved to 2,
    // the title's gap. Its document's bound is 7 (positions 0 .. 6) and its tf 1: Rice parameter 2,
    // so 5 is the bits 1 0 (quotient 1) 1 0 (low bits 01, least significant first), 2 is 0 0 1.
    const dataAt = 24 + 2 * 1;
    expect(bytes[dataAt]).toBe(0b0101);
    bytes[dataAt] = 0b100;
    writeFileSync(path, bytes);
    const manifestPath = join(out, 'MANIFEST.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    manifest.files['positions.bin'].sha256 = sha256OfFile(path);
    writeFileSync(manifestPath, JSON.stringify(manifest));
    expect(() => verifyIndex(out)).toThrow(/^positions\.bin: term "sea" \(termID 0\): position 2 at docID 0 is the gap after its title/);
  });

});

describe('--resume with --positions', () => {
  const BLOCK = 4000;
  const opts = { pipeline: 'cpu' as const, blockSize: BLOCK, positions: true, titleWeight: 2 };
  type Checkpoint = { run: string; positionsSha256?: string; documents: number };
  const checkpointsOf = (output: string): Checkpoint[] => JSON.parse(readFileSync(join(resumeDirFor(output), 'resume.json'), 'utf8')).checkpoints;
  let crawlDir: string | undefined;
  /** A crawl of titled documents that makes dozens of runs of BLOCK pairs. */
  const generated = async () => {
    if (!crawlDir) {
      crawlDir = join(work, `gen-${serial++}`);
      await generateCorpus({ size: '1MB', seed: 5, files: 4, threads: 1, output: crawlDir });
    }
    return crawlDir;
  };
  /** An output whose parent folder exists (the resume folder goes beside it). */
  const outputIn = (name: string) => {
    const parent = join(work, `${name}-${serial++}`);
    mkdirSync(parent);
    return join(parent, 'index');
  };
  const everything = (dir: string) => ({ ...readIndexContent(dir), positions: readFileSync(join(dir, 'positions.bin')) });

  /** A --resume build aborted once `k` blocks are sorted; its checkpoints stay behind. */
  async function interrupt(input: string, output: string, workers: number, k = 3): Promise<Checkpoint[]> {
    const controller = new AbortController();
    const build = buildIndex({ input, output, ...opts, workers, resume: true, signal: controller.signal, onProgress: (e) => void (e.stage === 'parse' && e.blocksSorted >= k && controller.abort()) });
    await expect(build).rejects.toBeInstanceOf(AbortError);
    const saved = checkpointsOf(output);
    expect(saved.length).toBeGreaterThanOrEqual(k);
    for (const c of saved) expect(sha256OfFile(join(resumeDirFor(output), 'runs', c.run.replace(/\.bin$/, '.pos')))).toBe(c.positionsSha256);
    return saved;
  }

  it('an interrupted build resumed (1 and 2 workers) writes the fresh build\'s index and positions.bin byte for byte; a damaged positions file drops its checkpoint and the later ones', async () => {
    const input = await generated();
    const fresh = join(work, `fresh-${serial++}`);
    const summary = await buildIndex({ input, output: fresh, ...opts, workers: 1 });
    const reference = everything(fresh);
    for (const workers of [1, 2]) {
      const output = outputIn('resumed');
      const saved = await interrupt(input, output, workers);
      // Interrupted mid-build: the resumed build writes runs of its own.
      expect(saved.length).toBeLessThan(summary.blocks);
      const resumed = await buildIndex({ input, output, ...opts, workers, resume: true });
      expect(resumed.resumed).toEqual({ runs: saved.length, documents: saved.at(-1)!.documents });
      expect(everything(output)).toEqual(reference);
      verifyIndex(output);
    }
    const output = outputIn('damaged');
    const saved = await interrupt(input, output, 1, 4);
    const pos = join(resumeDirFor(output), 'runs', saved[1]!.run.replace(/\.bin$/, '.pos'));
    const bytes = readFileSync(pos);
    bytes[bytes.length >> 1]! ^= 0xff;
    writeFileSync(pos, bytes);
    const resumed = await buildIndex({ input, output, ...opts, workers: 1, resume: true });
    expect(resumed.notices).toContain(`resume: ${saved[1]!.run} or its delta is missing or damaged; resuming before it`);
    expect(resumed.resumed).toEqual({ runs: 1, documents: saved[0]!.documents });
    expect(everything(output)).toEqual(reference);
  });

  it('checkpoints of a build without positions are not reused by one with them', async () => {
    const input = await generated();
    const output = outputIn('mixed');
    const controller = new AbortController();
    const plain = buildIndex({ input, output, ...opts, positions: false, workers: 1, resume: true, signal: controller.signal, onProgress: (e) => void (e.stage === 'parse' && e.blocksSorted >= 3 && controller.abort()) });
    await expect(plain).rejects.toBeInstanceOf(AbortError);
    expect(checkpointsOf(output).length).toBeGreaterThanOrEqual(2);
    const resumed = await buildIndex({ input, output, ...opts, workers: 1, resume: true });
    expect(resumed.resumed).toEqual({ runs: 0, documents: 0 });
    expect(resumed.notices).toContain('resume: not reusing the earlier state: it was made from a different crawl or different settings');
    const fresh = join(work, `fresh-${serial++}`);
    await buildIndex({ input, output: fresh, ...opts, workers: 1 });
    expect(everything(output)).toEqual(everything(fresh));
  });
});
