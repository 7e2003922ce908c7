import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { firstPairAtOrAfter, readKeySamples, runFileBytes, sampleStrideOf, writeRunFile, writeRunFileAsync } from '../merge/runs.js';
import { pairRangesFor } from '../merge/term-ranges.js';

const dir = mkdtempSync(join(tmpdir(), 'gpuindex-run-samples-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** Sorted pairs: `count` keys drawn from [0, keys), docIDs ascending within a key. */
function sortedPairs(count: number, keys: number, seed: number): Uint32Array {
  let s = seed >>> 0 || 1;
  const next = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0), s);
  const ks = Array.from({ length: count }, () => next() % keys).sort((a, b) => a - b);
  const out = new Uint32Array(2 * count);
  ks.forEach((k, i) => ((out[2 * i] = k), (out[2 * i + 1] = i)));
  return out;
}

/** The first pair whose key is >= key, by scanning every pair. */
function naiveFirst(pairs: Uint32Array, count: number, key: number): number {
  for (let i = 0; i < count; i++) if (pairs[2 * i]! >= key) return i;
  return count;
}

describe('run key samples', () => {
  it('a run file is its header, its pairs and the key of every stride-th pair, written sync or async', async () => {
    for (const count of [0, 1, 63, 4096, 4097, 4096 * 64, 4096 * 64 + 1]) {
      const pairs = sortedPairs(count, 1000, count + 1);
      const a = join(dir, `bytes-${n++}.bin`);
      const b = join(dir, `bytes-${n++}.bin`);
      expect(writeRunFile(a, pairs, count, 77)).toBe(runFileBytes(count));
      expect(await writeRunFileAsync(b, pairs, count, 77)).toBe(runFileBytes(count));
      const bytes = readFileSync(a);
      expect(readFileSync(b).equals(bytes)).toBe(true);
      expect(bytes.length).toBe(16 + 8 * count + 4 * Math.ceil(count / sampleStrideOf(count)));
      expect(Buffer.from(bytes.subarray(16, 16 + 8 * count)).equals(Buffer.from(pairs.buffer, 0, 8 * count))).toBe(true);
      const stride = sampleStrideOf(count);
      const tail = new Uint32Array(bytes.buffer.slice(bytes.byteOffset + 16 + 8 * count, bytes.byteOffset + bytes.length));
      expect(tail.length).toBe(Math.ceil(count / stride));
      expect(tail.every((k, i) => k === pairs[2 * i * stride])).toBe(true);
    }
    // Every key of a run of up to 4,096 pairs; past that at most 4,096 samples, a power of two apart.
    expect(sampleStrideOf(4096)).toBe(1);
    expect(sampleStrideOf(4097)).toBe(2);
    expect(sampleStrideOf(4096 * 64)).toBe(64);
    expect(sampleStrideOf(4096 * 64 + 1)).toBe(128);
    expect(sampleStrideOf(1 << 28)).toBe(1 << 16);
  });

  it('firstPairAtOrAfter and pairRangesFor agree with a scan of every pair (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 40000 }), fc.integer({ min: 1, max: 3000 }), fc.integer({ min: 1, max: 2 ** 31 }), fc.array(fc.integer({ min: 0, max: 3100 }), { minLength: 1, maxLength: 12 }), (count, keys, seed, probes) => {
        const pairs = sortedPairs(count, keys, seed);
        const path = join(dir, `prop-${n++}.bin`);
        writeRunFile(path, pairs, count, keys);
        const fd = openSync(path, 'r');
        try {
          const samples = readKeySamples(fd, path, count);
          for (const key of probes) expect(firstPairAtOrAfter(fd, path, count, samples, key)).toBe(naiveFirst(pairs, count, key));
        } finally {
          closeSync(fd);
        }
        const bounds = [...new Set(probes)].sort((a, b) => a - b);
        for (let i = 0; i < bounds.length; i++) {
          const [range] = pairRangesFor([path], bounds[i]!, bounds[i + 1]);
          expect(range).toEqual({ start: bounds[i] === 0 ? 0 : naiveFirst(pairs, count, bounds[i]!), end: i + 1 < bounds.length ? naiveFirst(pairs, count, bounds[i + 1]!) : count });
        }
        rmSync(path);
      }),
      { numRuns: 150 },
    );
  });
});
