/**
 * impacts.bin, however it is made: by a pass over postings.bin on one thread or several (term
 * ranges), or by the merge itself (one thread, or each merge thread its range), is one file.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../src/build.js';
import fc from 'fast-check';
import { IMPACTS_FILE, writeImpacts, writeImpactsAt, writeImpactsFile, writeImpactsParallel } from '../merge/impacts.js';
import type { Impacts } from '../merge/impact-blocks.js';

const dir = mkdtempSync(join(tmpdir(), 'gpuindex-impacts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('impacts on threads', () => {
  it('give impacts.bin byte for byte as one thread does, with the lengths given or read, for 1 to 5 threads', async () => {
    const crawl = join(dir, 'crawl');
    mkdirSync(crawl);
    // Frequent terms (lists of many blocks) and rare ones, documents of varied lengths.
    const lines = Array.from({ length: 900 }, (_, d) => JSON.stringify({ id: `d${d}`, text: Array.from({ length: 5 + ((d * 37) % 90) }, (_, k) => `w${(d * k) % 400} common${k % 3}`).join(' ') }));
    writeFileSync(join(crawl, 'a.jsonl'), lines.join('\n') + '\n');
    const index = join(dir, 'index');
    // One block: the parse worker that writes postings.bin computes the impacts from its bytes.
    await buildIndex({ input: crawl, output: index, workers: 1, sorter: 'cpu' });
    const one = join(dir, 'one');
    mkdirSync(one);
    for (const f of ['index.sqlite', 'lexicon.bin', 'postings.bin']) copyFileSync(join(index, f), join(one, f));
    writeImpacts(one);
    const reference = readFileSync(join(one, IMPACTS_FILE));
    expect(readFileSync(join(index, IMPACTS_FILE))).toEqual(reference);
    for (const threads of [1, 2, 3, 5]) {
      rmSync(join(one, IMPACTS_FILE));
      await writeImpactsParallel(one, threads, undefined, 0);
      expect(readFileSync(join(one, IMPACTS_FILE)), `${threads} threads`).toEqual(reference);
    }
    // Several runs: the merge builds the impacts (on 1 and on 3 merge threads).
    for (const mergeThreads of [1, 3]) {
      const merged = join(dir, `merged-${mergeThreads}`);
      const s = await buildIndex({ input: crawl, output: merged, workers: 1, sorter: 'cpu', blockSize: 5000, mergeThreads });
      expect(s.blocks).toBeGreaterThan(3);
      expect(s.merge.threads).toBe(mergeThreads);
      expect(readFileSync(join(merged, 'postings.bin'))).toEqual(readFileSync(join(index, 'postings.bin')));
      expect(readFileSync(join(merged, IMPACTS_FILE)), `${mergeThreads} merge threads`).toEqual(reference);
      expect(readdirSync(merged).filter((f) => f.includes('.part-'))).toEqual([]);
    }
  });
});

/** Impacts of `terms` terms with random blocks and pairs (offsets from 0, as a range's). */
function randomImpacts(terms: number, seed: number): Impacts {
  let x = seed >>> 0 || 1;
  const rnd = (n: number) => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) % n);
  const blocksOf = Array.from({ length: terms }, () => 1 + rnd(3));
  const blocks = blocksOf.reduce((a, b) => a + b, 0);
  const pairsOf = Array.from({ length: blocks }, () => 1 + rnd(4));
  const pairs = pairsOf.reduce((a, b) => a + b, 0);
  const firstBlock = new Uint32Array(terms + 1);
  for (let t = 0; t < terms; t++) firstBlock[t + 1] = firstBlock[t]! + blocksOf[t]!;
  const firstPair = new Uint32Array(blocks + 1);
  for (let b = 0; b < blocks; b++) firstPair[b + 1] = firstPair[b]! + pairsOf[b]!;
  const words = (n: number) => Uint32Array.from({ length: n }, () => rnd(1e9));
  return { blockSize: 128, firstBlock, lastDoc: words(blocks), gapsAt: words(blocks), tfsAt: words(blocks), firstPair, pairTf: words(pairs), pairLength: words(pairs) };
}

/** The file of the parts joined naively: every column concatenated, the offset columns shifted. */
function naiveFile(parts: Impacts[]): Buffer {
  const cat = (pick: (p: Impacts) => Uint32Array) => {
    const out: number[] = [];
    for (const p of parts) for (const v of pick(p)) out.push(v);
    return out;
  };
  const shifted = (pick: (p: Impacts) => Uint32Array, count: (p: Impacts) => number) => {
    const out: number[] = [];
    let base = 0;
    for (const p of parts) {
      for (const v of pick(p).subarray(0, pick(p).length - 1)) out.push(v + base);
      base += count(p);
    }
    out.push(base);
    return out;
  };
  const header = Buffer.alloc(32);
  Buffer.from('GPIXIMP1', 'latin1').copy(header);
  const [terms, blocks, pairs] = [cat((p) => p.firstBlock.subarray(1)).length, cat((p) => p.lastDoc).length, cat((p) => p.pairTf).length];
  header.writeUInt32LE(128, 8);
  header.writeUInt32LE(terms, 12);
  header.writeUInt32LE(blocks, 16);
  header.writeUInt32LE(pairs, 20);
  const columns = [
    shifted((p) => p.firstBlock, (p) => p.lastDoc.length),
    cat((p) => p.lastDoc),
    cat((p) => p.gapsAt),
    cat((p) => p.tfsAt),
    shifted((p) => p.firstPair, (p) => p.pairTf.length),
    cat((p) => p.pairTf),
    cat((p) => p.pairLength),
  ];
  return Buffer.concat([header, ...columns.map((c) => Buffer.from(Uint32Array.from(c).buffer))]);
}

describe('impacts.bin from term ranges', () => {
  it('writes the ranges as one file, their offsets rebased, without joining them (fuzzed, and past a rebase chunk)', () => {
    const out = mkdtempSync(join(tmpdir(), 'gpuindex-impact-parts-'));
    let n = 0;
    /** Writes the parts, those at odd places as files of their own (a merge thread's), and checks the result. */
    const check = (parts: Impacts[]) => {
      const d = join(out, String(n++));
      mkdirSync(d);
      const given = parts.map((p, i) => {
        if (i % 2 === 0) return p;
        const path = join(d, `part-${i}`);
        writeImpactsAt(path, [p]);
        return path;
      });
      writeImpactsFile(d, given);
      expect(readFileSync(join(d, IMPACTS_FILE)).equals(naiveFile(parts))).toBe(true);
      // The part files are gone once written.
      expect(given.filter((g) => typeof g === 'string' && existsSync(g))).toEqual([]);
    };
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 1, max: 1e6 })), { minLength: 1, maxLength: 5 }), (specs) => check(specs.map(([terms, seed]) => randomImpacts(terms, seed)))),
      { numRuns: 100 },
    );
    // Offset columns longer than a rebase chunk (65,536 values), in a part after the first.
    check([randomImpacts(3, 1), randomImpacts(70000, 2), randomImpacts(40000, 3), randomImpacts(70000, 4)]);
  });
});

describe('files past readFileSync\'s 2 GiB', () => {
  it('readWords reads a file in chunks into aligned words, whatever the chunk', async () => {
    const { readWords } = await import('../merge/impacts.js');
    const path = join(mkdtempSync(join(tmpdir(), 'gpuindex-words-')), 'words');
    const data = Buffer.from(Array.from({ length: 4099 }, (_, i) => (i * 7) & 0xff));
    writeFileSync(path, data);
    for (const chunk of [1, 3, 4096, 1 << 20]) {
      const { bytes, words } = readWords(path, chunk);
      expect(bytes.equals(data)).toBe(true);
      expect(words.length).toBe(1024);
      expect(words[1]).toBe(data.readUInt32LE(4));
    }
  });
});
