import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { groupAtOrAfter, readKeySamples, readRunHeader, RunCursor, sampleStrideOf, writeRunFile, writeRunFileAsync, type PairRange, type PostingsColumns } from '../merge/runs.js';
import { pairRangesFor } from '../merge/term-ranges.js';

const dir = mkdtempSync(join(tmpdir(), 'gpuindex-run-samples-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** Sorted pairs: `count` keys drawn from [0, keys), documents ascending within a key, repeats and wide gaps among them. */
function sortedPairs(count: number, keys: number, seed: number, docSpan = 1 << 20, huge = true): Uint32Array {
  let s = seed >>> 0 || 1;
  const next = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0), s);
  const pairs = Array.from({ length: count }, () => [next() % keys, huge && next() % 4 === 0 ? 0xffffffff - (next() % 3) : next() % docSpan] as const);
  pairs.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return Uint32Array.from(pairs.flat());
}

/** The reference encoding, byte by byte: a varint is 7 bits a byte, low first. */
function varint(v: number): number[] {
  const out: number[] = [];
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return out;
}

/** A run file as its format says, from the pairs alone. */
function referenceRun(pairs: Uint32Array, count: number, keySpace: number): Buffer {
  const body: number[] = [];
  const samples: number[] = [];
  const stride = sampleStrideOf(count);
  let mark = 0;
  let prevKey = 0;
  for (let p = 0; p < count; ) {
    const key = pairs[2 * p]!;
    let e = p;
    while (e < count && pairs[2 * e] === key) e++;
    if (p >= mark) {
      samples.push(key, p, body.length, 0);
      mark = (Math.floor(p / stride) + 1) * stride;
    }
    body.push(...varint(key - prevKey), ...varint(e - p));
    let doc = 0;
    for (; p < e; p++) {
      body.push(...varint(pairs[2 * p + 1]! - doc));
      doc = pairs[2 * p + 1]!;
    }
    prevKey = key;
  }
  const header = Buffer.alloc(16);
  header.write('GPIXRUN4', 0, 'latin1');
  header.writeUInt32LE(count, 8);
  header.writeUInt32LE(keySpace, 12);
  const trailer = Buffer.alloc(12);
  trailer.writeUInt32LE(samples.length / 4, 0);
  trailer.writeUInt32LE(body.length, 4);
  return Buffer.concat([header, Buffer.from(body), Buffer.from(Uint32Array.from(samples).buffer), trailer]);
}

/** The first pair whose key is >= key, by scanning every pair. */
function naiveFirst(pairs: Uint32Array, count: number, key: number): number {
  for (let i = 0; i < count; i++) if (pairs[2 * i]! >= key) return i;
  return count;
}

/** Postings columns that grow by doubling, as the merge's do. */
function columns(): PostingsColumns {
  const c: PostingsColumns = {
    docIds: new Uint32Array(1),
    tfs: new Uint32Array(1),
    df: 0,
    reserve(k: number) {
      if (k <= c.docIds.length) return;
      const size = Math.max(k, 2 * c.docIds.length);
      const d = new Uint32Array(size);
      d.set(c.docIds.subarray(0, c.df));
      const t = new Uint32Array(size);
      t.set(c.tfs.subarray(0, c.df));
      c.docIds = d;
      c.tfs = t;
    },
  };
  return c;
}

/** Every pair a cursor yields over `range` of the run at `path`. */
function cursorPairs(path: string, chunkPairs: number, range?: PairRange): number[] {
  const c = new RunCursor(path, chunkPairs, range);
  const out: number[] = [];
  while (!c.done) {
    out.push(c.termId, c.docId);
    c.advance();
  }
  c.release();
  return out;
}

describe('run files', () => {
  it('a run file is its header, its term groups of varints, its samples and trailer, written sync or async', async () => {
    for (const count of [0, 1, 63, 4096, 4097, 4096 * 64, 4096 * 64 + 1, 300_000]) {
      for (const keys of [1, 7, 1000, 2 ** 31]) {
        const pairs = sortedPairs(count, keys, count + keys);
        const a = join(dir, `bytes-${n++}.bin`);
        const b = join(dir, `bytes-${n++}.bin`);
        const expected = referenceRun(pairs, count, 77);
        expect(writeRunFile(a, pairs, count, 77)).toBe(expected.length);
        expect(await writeRunFileAsync(b, pairs, count, 77)).toBe(expected.length);
        expect(readFileSync(a).equals(expected)).toBe(true);
        expect(readFileSync(b).equals(expected)).toBe(true);
        expect(cursorPairs(a, 4096)).toEqual([...pairs]);
        rmSync(a);
        rmSync(b);
      }
    }
    // Every group of a run of up to 4,096 pairs sampled; past that a mark every power-of-two stride.
    expect(sampleStrideOf(4096)).toBe(1);
    expect(sampleStrideOf(4097)).toBe(2);
    expect(sampleStrideOf(4096 * 64)).toBe(64);
    expect(sampleStrideOf(4096 * 64 + 1)).toBe(128);
    expect(sampleStrideOf(1 << 28)).toBe(1 << 16);
  });

  it('groupAtOrAfter, pairRangesFor and cursors over those ranges agree with a scan of every pair (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 40000 }),
        fc.integer({ min: 1, max: 3000 }),
        fc.integer({ min: 1, max: 2 ** 31 }),
        fc.array(fc.integer({ min: 0, max: 3100 }), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 5000 }),
        (count, keys, seed, probes, chunkPairs) => {
          const pairs = sortedPairs(count, keys, seed, 64);
          const path = join(dir, `prop-${n++}.bin`);
          writeRunFile(path, pairs, count, keys);
          const fd = openSync(path, 'r');
          try {
            const header = readRunHeader(fd, path);
            const samples = readKeySamples(fd, path, header);
            for (const key of probes) expect(groupAtOrAfter(fd, path, header, samples, key).pair).toBe(naiveFirst(pairs, count, key));
          } finally {
            closeSync(fd);
          }
          const bounds = [...new Set(probes)].sort((a, b) => a - b);
          for (let i = 0; i < bounds.length; i++) {
            const [range] = pairRangesFor([path], bounds[i]!, bounds[i + 1]);
            const start = bounds[i] === 0 ? 0 : naiveFirst(pairs, count, bounds[i]!);
            const end = i + 1 < bounds.length ? naiveFirst(pairs, count, bounds[i + 1]!) : count;
            expect([range!.start, range!.end]).toEqual([start, end]);
            // A cursor from the range's group, and one told only its pairs, read the same pairs.
            const expected = [...pairs.subarray(2 * start, 2 * end)];
            expect(cursorPairs(path, chunkPairs, range)).toEqual(expected);
            expect(cursorPairs(path, chunkPairs, { start, end })).toEqual(expected);
          }
          rmSync(path);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('takeTerm counts each term\'s postings as a scan of the pairs does, across chunk and read boundaries (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 }), fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 70000 }), fc.constantFrom(4, 130, 1 << 14, 1 << 21), fc.boolean(), (seed, keys, chunkPairs, docSpan, mapped) => {
        // Few keys, so groups run over many chunks and reads; gaps of every varint length.
        const count = 60000 + (seed % 140000);
        const pairs = sortedPairs(count, keys, seed, docSpan, !mapped);
        const path = join(dir, `take-${n++}.bin`);
        writeRunFile(path, pairs, count, keys);
        const map = mapped ? (d: number) => (d * 7 + 3) % 2 ** 32 : (d: number) => d;
        // The reference: (term, document, occurrences) in run order.
        const expected: number[] = [];
        for (let i = 0; i < count; ) {
          let j = i + 1;
          while (j < count && pairs[2 * j] === pairs[2 * i] && pairs[2 * j + 1] === pairs[2 * i + 1]) j++;
          expected.push(pairs[2 * i]!, map(pairs[2 * i + 1]!), j - i);
          i = j;
        }
        // A worker's lexicon: keys in order, its document numbers mapped to docIDs.
        const lexicon = { order: Uint32Array.from({ length: keys }, (_, i) => i), docIds: Uint32Array.from({ length: docSpan }, (_, d) => map(d)) };
        const c = new RunCursor(path, chunkPairs, undefined, mapped ? { lexicon } : undefined);
        const got: number[] = [];
        const out = columns();
        while (!c.done) {
          const term = c.termId;
          out.df = 0;
          c.takeTerm(out);
          for (let i = 0; i < out.df; i++) got.push(term, out.docIds[i]!, out.tfs[i]!);
        }
        c.release();
        rmSync(path);
        expect(got).toEqual(expected);
      }),
      { numRuns: 40 },
    );
  });

  it('a cut or damaged run file is an error, never other pairs', () => {
    const count = 20000;
    const pairs = sortedPairs(count, 500, 9);
    const path = join(dir, `damaged-${n++}.bin`);
    writeRunFile(path, pairs, count, 500);
    const whole = readFileSync(path);
    for (const cut of [whole.length - 1, whole.length - 13, 16 + 100, 20]) {
      writeFileSync(path, whole.subarray(0, cut));
      expect(() => cursorPairs(path, 1024)).toThrow(/truncated|damaged|not a gpuindex run file/);
    }
    // The body one byte short, the trailer adjusted to match: the last group's documents are missing.
    const trailer = Buffer.from(whole.subarray(whole.length - 12));
    const bodyBytes = trailer.readUInt32LE(4);
    const samples = whole.subarray(16 + bodyBytes, whole.length - 12);
    trailer.writeUInt32LE(bodyBytes - 1, 4);
    writeFileSync(path, Buffer.concat([whole.subarray(0, 16 + bodyBytes - 1), samples, trailer]));
    expect(() => cursorPairs(path, 1024)).toThrow(/truncated|damaged/);
  });
});
