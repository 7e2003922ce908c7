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
import { IMPACTS_FILE, openImpacts, readImpacts, writeImpactsAt, writeImpactsFile } from '../merge/impacts.js';
import { writeImpacts, writeImpactsParallel } from '../merge/segment-impacts.js';
import { ImpactsBuilder, impactsByTerm, type Impacts, type TermImpacts } from '../merge/impact-blocks.js';
import { withEnv } from './helpers/env.js';

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
      // The merge encodes its impacts into records as it goes (every few blocks here): the same file.
      for (const every of ['1', '7']) {
        const encoded = join(dir, `merged-${mergeThreads}-every-${every}`);
        await withEnv('GPUINDEX_IMPACTS_ENCODE_BLOCKS', async (set) => {
          set(every);
          await buildIndex({ input: crawl, output: encoded, workers: 1, sorter: 'cpu', blockSize: 5000, mergeThreads });
        });
        expect(readFileSync(join(encoded, IMPACTS_FILE)), `${mergeThreads} merge threads, encoded every ${every} blocks`).toEqual(reference);
      }
    }
  });

  it('a builder that encodes its records as it goes writes the file of one that keeps its arrays, from any first termID (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.tuple(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 9 })), { minLength: 1, maxLength: 300 }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 0, max: 1000 }),
        fc.integer({ min: 1, max: 6 }),
        (lists, firstTerm, every) => {
          const lengths = Uint32Array.from({ length: 20000 }, (_, d) => 1 + ((d * 7919) % 500));
          const kept = new ImpactsBuilder(lengths);
          const encoding = new ImpactsBuilder(lengths, { firstTerm, every });
          for (const list of lists) {
            let doc = 0;
            const docIds = Uint32Array.from(list, ([gap]) => (doc += gap));
            const tfs = Uint32Array.from(list, ([, tf]) => tf);
            kept.add(docIds, tfs, list.length);
            encoding.add(docIds, tfs, list.length);
          }
          const a = join(dir, `kept-${firstTerm}-${every}`);
          const b = join(dir, `encoded-${firstTerm}-${every}`);
          rmSync(a, { force: true });
          rmSync(b, { force: true });
          writeImpactsAt(a, [kept.finish()], firstTerm);
          const finished = encoding.finish();
          expect('encoded' in finished).toBe(lists.reduce((n, l) => n + Math.ceil(l.length / 128), 0) >= every);
          writeImpactsAt(b, [finished], firstTerm);
          expect(readFileSync(b)).toEqual(readFileSync(a));
        },
      ),
      { numRuns: 150 },
    );
  });
});

/**
 * Impacts of `terms` terms with random blocks and pairs (offsets from 0, as a range's), shaped as
 * the builders make them: within a term lastDoc, gapsAt and tfsAt ascend and the first gapsAt is
 * 0; within a block the pairs ascend in tf and length. Values reach past 2^28, so varints of
 * every width occur.
 */
function randomImpacts(terms: number, seed: number): Impacts {
  let x = seed >>> 0 || 1;
  const rnd = (n: number) => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) % n);
  const wide = () => [rnd(100), rnd(20000), rnd(1 << 22), rnd(1 << 29)][rnd(4)]!;
  const firstBlock = [0];
  const [lastDoc, gapsAt, tfsAt, firstPair, pairTf, pairLength]: number[][] = [[], [], [], [], [], []];
  for (let t = 0; t < terms; t++) {
    const n = 1 + rnd(3);
    let [doc, gaps, tfs] = [wide(), 0, wide()];
    for (let k = 0; k < n; k++) {
      if (k > 0) [doc, gaps, tfs] = [doc + 1 + rnd(1000), gaps + 1 + rnd(500), tfs + 1 + rnd(500)];
      lastDoc.push(doc);
      gapsAt.push(gaps);
      tfsAt.push(tfs);
      firstPair.push(pairTf.length);
      let [tf, length] = [1 + wide(), wide()];
      for (let q = 1 + rnd(4); q > 0; q--, tf += rnd(5), length += 1 + rnd(300)) {
        pairTf.push(tf);
        pairLength.push(length);
      }
    }
    firstBlock.push(lastDoc.length);
  }
  firstPair.push(pairTf.length);
  const u32 = (a: number[]) => Uint32Array.from(a);
  return { blockSize: 128, firstBlock: u32(firstBlock), lastDoc: u32(lastDoc), gapsAt: u32(gapsAt), tfsAt: u32(tfsAt), firstPair: u32(firstPair), pairTf: u32(pairTf), pairLength: u32(pairLength) };
}

/** The parts joined naively: every array concatenated, the offset arrays shifted. */
function naiveJoin(parts: Impacts[]): Impacts {
  const cat = (pick: (p: Impacts) => Uint32Array) => Uint32Array.from(parts.flatMap((p) => [...pick(p)]));
  const shifted = (pick: (p: Impacts) => Uint32Array, count: (p: Impacts) => number) => {
    const out: number[] = [];
    let base = 0;
    for (const p of parts) {
      for (const v of pick(p).subarray(0, pick(p).length - 1)) out.push(v + base);
      base += count(p);
    }
    out.push(base);
    return Uint32Array.from(out);
  };
  return {
    blockSize: 128,
    firstBlock: shifted((p) => p.firstBlock, (p) => p.lastDoc.length),
    lastDoc: cat((p) => p.lastDoc),
    gapsAt: cat((p) => p.gapsAt),
    tfsAt: cat((p) => p.tfsAt),
    firstPair: shifted((p) => p.firstPair, (p) => p.pairTf.length),
    pairTf: cat((p) => p.pairTf),
    pairLength: cat((p) => p.pairLength),
  };
}

/** One term's blocks as plain arrays from its first block (pairs counted from its first pair). */
function termArrays(ti: TermImpacts) {
  const blocks = (a: Uint32Array) => [...a.subarray(ti.first, ti.end)];
  const p0 = ti.firstPair[ti.first]!;
  const p1 = ti.firstPair[ti.end]!;
  return {
    lastDoc: blocks(ti.lastDoc),
    gapsAt: blocks(ti.gapsAt),
    tfsAt: blocks(ti.tfsAt),
    firstPair: [...ti.firstPair.subarray(ti.first, ti.end + 1)].map((q) => q - p0),
    pairTf: [...ti.pairTf.subarray(p0, p1)],
    pairLength: [...ti.pairLength.subarray(p0, p1)],
  };
}

/** 0 .. n - 1 in an order drawn from `seed`. */
function shuffled(n: number, seed: number): number[] {
  const a = Array.from({ length: n }, (_, i) => i);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = n - 1; i > 0; i--) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    const j = x % (i + 1);
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

/** Impacts as plain arrays, for equality. */
const plain = (im: Impacts) => Object.fromEntries(Object.entries(im).map(([k, v]) => [k, v instanceof Uint32Array ? [...v] : v]));

describe('impacts.bin from term ranges', () => {
  it('writes the ranges as one file that reads back as their arrays joined, without joining them (fuzzed)', () => {
    const out = mkdtempSync(join(tmpdir(), 'gpuindex-impact-parts-'));
    let n = 0;
    /** Writes the parts, those at odd places as files of their own (a merge thread's), and checks the result. */
    const check = (parts: Impacts[]) => {
      const d = join(out, String(n++));
      mkdirSync(d);
      const given = parts.map((p, i) => {
        if (i % 2 === 0) return p;
        const path = join(d, `part-${i}`);
        // A merge thread's part names its range's first termID.
        writeImpactsAt(path, [p], parts.slice(0, i).reduce((a, q) => a + q.firstBlock.length - 1, 0));
        return path;
      });
      writeImpactsFile(d, given);
      const joined = naiveJoin(parts);
      const terms = joined.firstBlock.length - 1;
      expect(plain(readImpacts(d, terms)!)).toEqual(plain(joined));
      // Each term decoded alone through the term index, in a random order: the joined arrays' range.
      const byTerm = openImpacts(d, terms)!;
      const view = impactsByTerm(joined);
      for (const t of shuffled(terms, n)) expect(termArrays(byTerm.term(t)), `termID ${t}`).toEqual(termArrays(view.term(t)));
      // The same file as the joined arrays written in one piece.
      const whole = join(out, String(n++));
      mkdirSync(whole);
      writeImpactsFile(whole, joined);
      expect(readFileSync(join(d, IMPACTS_FILE)).equals(readFileSync(join(whole, IMPACTS_FILE)))).toBe(true);
      // The part files are gone once written.
      expect(given.filter((g) => typeof g === 'string' && existsSync(g))).toEqual([]);
    };
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 1, max: 1e6 })), { minLength: 1, maxLength: 5 }), (specs) => check(specs.map(([terms, seed]) => randomImpacts(terms, seed)))),
      { numRuns: 100 },
    );
    // A part written for another place in the term order is refused.
    const d = join(out, String(n++));
    mkdirSync(d);
    writeImpactsAt(join(d, 'part'), [randomImpacts(5, 9)], 3);
    expect(() => writeImpactsFile(d, [randomImpacts(4, 8), join(d, 'part')])).toThrow(/a part from termID 3 where termID 4 comes next/);
    // Parts longer than a copy chunk (1 MiB of body), after the first.
    check([randomImpacts(3, 1), randomImpacts(70000, 2), randomImpacts(40000, 3), randomImpacts(70000, 4)]);
  });

  it('refuses a body that does not decode to its header: cut, extended, or any byte changed so', () => {
    const d = mkdtempSync(join(tmpdir(), 'gpuindex-impact-bad-'));
    const im = randomImpacts(30, 7);
    writeImpactsFile(d, im);
    const path = join(d, IMPACTS_FILE);
    const good = readFileSync(path);
    const terms = im.firstBlock.length - 1;
    // Counts in the header that the body cannot hold are refused before anything is allocated for them.
    const huge = Buffer.from(good);
    huge.writeUInt32LE(0xffffffff, 16);
    for (const bytes of [good.subarray(0, good.length - 1), Buffer.concat([good, Buffer.of(0)]), huge]) {
      writeFileSync(path, bytes);
      expect(() => readImpacts(d, terms)).toThrow(/impacts\.bin/);
    }
    // A changed byte either fails to decode or decodes to other arrays (verify catches those).
    fc.assert(
      fc.property(fc.integer({ min: 32, max: good.length - 1 }), fc.integer({ min: 1, max: 255 }), (at, xor) => {
        const bytes = Buffer.from(good);
        bytes[at]! ^= xor;
        writeFileSync(path, bytes);
        // Decoded a term at a time (as search does), every term either decodes or fails in one line, and soon.
        try {
          const byTerm = openImpacts(d, terms)!;
          for (let t = 0; t < terms; t++) {
            try {
              byTerm.term(t);
            } catch (err) {
              expect(String(err)).toMatch(/impacts\.bin/);
            }
          }
        } catch (err) {
          expect(String(err)).toMatch(/impacts\.bin/);
        }
        let read: Impacts | undefined;
        try {
          read = readImpacts(d, terms);
        } catch (err) {
          expect(String(err)).toMatch(/impacts\.bin/);
          return;
        }
        expect(plain(read!)).not.toEqual(plain(im));
      }),
      { numRuns: 200 },
    );
  });

  it('reads format 1 (u32 columns), as earlier indexes hold it', () => {
    const d = mkdtempSync(join(tmpdir(), 'gpuindex-impact-v1-'));
    const im = randomImpacts(25, 11);
    const terms = im.firstBlock.length - 1;
    const header = Buffer.alloc(32);
    Buffer.from('GPIXIMP1', 'latin1').copy(header);
    [128, terms, im.lastDoc.length, im.pairTf.length].forEach((v, i) => header.writeUInt32LE(v, 8 + 4 * i));
    const columns = [im.firstBlock, im.lastDoc, im.gapsAt, im.tfsAt, im.firstPair, im.pairTf, im.pairLength];
    writeFileSync(join(d, IMPACTS_FILE), Buffer.concat([header, ...columns.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength))]));
    expect(plain(readImpacts(d, terms)!)).toEqual(plain(im));
    const byTerm = openImpacts(d, terms)!;
    for (let t = 0; t < terms; t++) expect(termArrays(byTerm.term(t))).toEqual(termArrays(impactsByTerm(im).term(t)));
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
