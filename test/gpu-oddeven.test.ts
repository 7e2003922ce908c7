import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyDocBases } from '../indexer/fill/doc-bases.js';
import { closeGpu, openGpu, type GpuContext } from '../gpu/device.js';
import { DISTRIBUTIONS, makePairs } from '../gpu/distributions.js';
import { oddEvenGlobalSteps, OddEvenSorter } from '../gpu/oddeven-sorter.js';
import { hasGpu } from './helpers/gpu-available.js';
import { bigIntSorted, pairsDiffer } from './helpers/gpu.js';

describe('the odd-even merge sort plan', () => {
  it('runs every step of the stages beyond the tile, one dispatch each', () => {
    expect(oddEvenGlobalSteps(64, 64)).toEqual([]);
    expect(oddEvenGlobalSteps(65, 64)).toEqual([6, 5, 4, 3, 2, 1, 0].map((logK) => ({ logP: 6, logK })));
    // 2^20 pairs, tiles of 2^11: stages p = 2^11 .. 2^19, log2(p) + 1 steps each
    expect(oddEvenGlobalSteps(2 ** 20, 2048)).toHaveLength(12 + 13 + 14 + 15 + 16 + 17 + 18 + 19 + 20);
  });
});

describe.runIf(hasGpu())('the odd-even merge sort on the available adapter', () => {
  let ctx: GpuContext;
  beforeAll(async () => {
    const opened = await openGpu();
    if (typeof opened === 'string') throw new Error(opened);
    ctx = opened;
  });
  afterAll(() => closeGpu());

  async function sort(sorter: OddEvenSorter, pairs: Uint32Array, count: number, docBases?: Uint32Array): Promise<Uint32Array> {
    let out = new Uint32Array(0);
    const input = pairs.slice();
    await sorter.sortBlock(input, count, (sorted) => {
      out = sorted.slice();
    }, docBases);
    expect(pairsDiffer(input, pairs)).toBeUndefined();
    return out;
  }

  it('sorts every distribution at sizes 0 .. 2^12 + 1 with a 64-pair tile (tile stages and global steps)', async () => {
    const sorter = new OddEvenSorter(ctx, { tile: 64 });
    await sorter.compile();
    const sizes = [0, 1, 2, 3, 5, 63, 64, 65, 127, 128, 129, 1000, 4095, 4096, 4097];
    for (const dist of DISTRIBUTIONS) {
      for (const n of sizes) {
        const pairs = makePairs(dist, n, n + dist.length);
        expect(pairsDiffer(await sort(sorter, pairs, n), bigIntSorted(pairs, n)), `${dist} n=${n}`).toBeUndefined();
      }
    }
  });

  it('sorts with the default tile: every distribution at 2^16 ± 1, and 2^20 zipfian pairs', async () => {
    const sorter = new OddEvenSorter(ctx);
    await sorter.compile();
    for (const dist of DISTRIBUTIONS) {
      for (const n of [sorter.tile + 1, 65535, 65537]) {
        const pairs = makePairs(dist, n, n);
        expect(pairsDiffer(await sort(sorter, pairs, n), bigIntSorted(pairs, n)), `${dist} n=${n}`).toBeUndefined();
      }
    }
    const n = 2 ** 20;
    const pairs = makePairs('zipf', n, 3);
    expect(pairsDiffer(await sort(sorter, pairs, n), bigIntSorted(pairs, n))).toBeUndefined();
  });

  it('adds document bases on the GPU first', async () => {
    const sorter = new OddEvenSorter(ctx, { tile: 64 });
    await sorter.compile();
    const n = 3001;
    const pairs = makePairs('uniform', n, 8);
    for (let i = 0; i < 2 * n; i += 2) pairs[i + 1] = pairs[i + 1]! % 1000;
    const docBases = Uint32Array.from([0, 0, 1000, 1000, 2000, 2000, 3000, 3000]);
    const whole = pairs.slice();
    applyDocBases(whole, n, docBases);
    expect(pairsDiffer(await sort(sorter, pairs, n, docBases), bigIntSorted(whole, n))).toBeUndefined();
  });
});
