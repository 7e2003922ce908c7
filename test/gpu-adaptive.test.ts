import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adaptiveExtraBytes, adaptivePhases, adaptivePlan, AdaptiveSorter } from '../gpu/adaptive-sorter.js';
import { closeGpu, openGpu, type GpuContext } from '../gpu/device.js';
import { DISTRIBUTIONS, makePairs } from '../gpu/distributions.js';
import { GpuSorter } from '../gpu/gpu-sorter.js';
import { hasGpu } from './helpers/gpu-available.js';
import { gpuSortedStaged, cpuSorted, gpuSorted, pairsDiffer } from './helpers/gpu.js';

describe('the adaptive bitonic sort plan', () => {
  it('sorts the tiles, makes them trees, then per level j: j - s global stages and one workgroup pass, then traverses', () => {
    expect(adaptivePlan(0, 64, 6)).toEqual([]);
    expect(adaptivePlan(1, 64, 6)).toEqual([]);
    expect(adaptivePlan(64, 64, 6)).toEqual([{ kind: 'local-sort', level: 6, stage: 0, units: 1 }]);
    // the tile sort covers the pairs only: tiles of padding are made by the node pass
    expect(adaptivePlan(2 ** 16 + 1, 2048, 9).slice(0, 2)).toEqual([
      { kind: 'local-sort', level: 11, stage: 0, units: 33 },
      { kind: 'nodes', level: 11, stage: 0, units: 2 ** 17 },
    ]);
    // 65 pairs: padded to 128, two tiles, one level (7) with one global stage (7 - 6)
    expect(adaptivePlan(65, 64, 6)).toEqual([
      { kind: 'local-sort', level: 6, stage: 0, units: 2 },
      { kind: 'nodes', level: 6, stage: 0, units: 128 },
      { kind: 'merge-stage', level: 7, stage: 0, units: 1 },
      { kind: 'merge-local', level: 7, stage: 1, units: 2 },
      { kind: 'traverse', level: 7, stage: 0, units: 8 },
    ]);
    // 2^20 pairs, tiles of 4096, subtrees of 2^9: levels 13 .. 20, (j - 9) + 1 dispatches each
    const plan = adaptivePlan(2 ** 20, 4096, 9);
    expect(plan).toHaveLength(2 + [13, 14, 15, 16, 17, 18, 19, 20].reduce((s, j) => s + j - 9 + 1, 0) + 1);
    // stage k of level j: one La/Ua instance per 2^(j-k) nodes
    for (const s of plan.filter((d) => d.kind === 'merge-stage')) expect(s.units).toBe(2 ** 20 / 2 ** (s.level - s.stage));
    expect(plan.filter((d) => d.kind === 'merge-local').every((s) => s.units === 2 ** 11)).toBe(true);
  });

  it('does O(n log n) work: under 2N La/Ua phases a merge level, where the network compares N/2 pairs j times at level j', () => {
    for (const logN of [10, 16, 20, 24]) {
      const N = 2 ** logN;
      const levels = logN - 12;
      if (levels <= 0) {
        expect(adaptivePhases(N, 4096)).toBe(0);
        continue;
      }
      const phases = adaptivePhases(N, 4096);
      expect(phases).toBeLessThan(2 * N * levels);
      expect(phases).toBeGreaterThan(N * levels); // stage 0 alone walks j phases; the last stage N/2 of 1
      let networkCompares = 0;
      for (let j = 13; j <= logN; j++) networkCompares += (N / 2) * j;
      expect(phases).toBeLessThan(networkCompares);
    }
    // padded to the next power of two
    expect(adaptivePhases(2 ** 16 + 1, 4096)).toBe(adaptivePhases(2 ** 17, 4096));
  });

  it('holds 16 bytes a padded node and 8 bytes per 2^s nodes beyond the network', () => {
    expect(adaptiveExtraBytes(2 ** 20, 9)).toBe(16 * 2 ** 20 + 8 * 2 ** 11);
    expect(adaptiveExtraBytes(2 ** 20 + 1, 9)).toBe(16 * 2 ** 21 + 8 * 2 ** 12);
    expect(adaptiveExtraBytes(100, 6)).toBe(16 * 128 + 8 * 2);
  });
});

describe.runIf(hasGpu())('the adaptive bitonic sort on the available adapter', () => {
  let ctx: GpuContext;
  beforeAll(async () => {
    const opened = await openGpu();
    if (typeof opened === 'string') throw new Error(opened);
    ctx = opened;
  });
  afterAll(() => closeGpu());

  async function compiled(tile?: number, profile = false): Promise<AdaptiveSorter> {
    const sorter = new AdaptiveSorter(ctx, { tile, profile });
    await sorter.compile();
    return sorter;
  }

  it('sorts every distribution at sizes 0 .. 2^12 + 1 with a 64-pair tile (tile sort, global and workgroup stages, traversal)', async () => {
    const sorter = await compiled(64);
    expect(sorter.localLog).toBe(6);
    const sizes = [0, 1, 2, 3, 5, 15, 16, 17, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1000, 4095, 4096, 4097];
    for (const dist of DISTRIBUTIONS) {
      for (const n of sizes) {
        const pairs = makePairs(dist, n, n + dist.length);
        expect(pairsDiffer(await gpuSorted(sorter, pairs, n), cpuSorted(pairs, n)), `${dist} n=${n}`).toBeUndefined();
      }
    }
  });

  it('sorts random small blocks with many equal pairs and pairs equal to the padding (16-pair tiles)', async () => {
    const sorter = await compiled(16);
    const word = fc.constantFrom(0, 1, 2, 7, 0x7fffffff, 0xfffffffe, 0xffffffff);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(word, word), { maxLength: 300 }), async (list) => {
        const pairs = Uint32Array.from(list.flat());
        const n = list.length;
        expect(pairsDiffer(await gpuSorted(sorter, pairs, n), cpuSorted(pairs, n))).toBeUndefined();
      }),
      { numRuns: 100 },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.nat(0xffffffff), fc.nat(0xffffffff)), { maxLength: 200 }), async (list) => {
        const pairs = Uint32Array.from(list.flat());
        expect(pairsDiffer(await gpuSorted(sorter, pairs, list.length), cpuSorted(pairs, list.length))).toBeUndefined();
      }),
      { numRuns: 30 },
    );
  });

  it('sorts every distribution at 2^16 - 1, 2^16 and 2^16 + 1 with the default tile, in the planned dispatches', async () => {
    const sorter = await compiled();
    for (const dist of DISTRIBUTIONS) {
      for (const n of [2 ** 16 - 1, 2 ** 16, 2 ** 16 + 1]) {
        const pairs = makePairs(dist, n, n);
        let out = new Uint32Array(0);
        const timing = await sorter.sortBlock(pairs.slice(), n, (sorted) => {
          out = sorted.slice();
        });
        expect(pairsDiffer(out, cpuSorted(pairs, n)), `${dist} n=${n}`).toBeUndefined();
        expect(timing.passes).toBe(adaptivePlan(n, sorter.tile, sorter.localLog).length);
      }
    }
  });

  it('sorts large blocks: 2^20 zipfian, 2^20 - 1 reverse, 2^17 + 1 few-terms', async () => {
    const sorter = await compiled();
    for (const [dist, n] of [['zipf', 2 ** 20], ['reverse', 2 ** 20 - 1], ['few-terms', 2 ** 17 + 1]] as const) {
      const pairs = makePairs(dist, n, 5);
      expect(pairsDiffer(await gpuSorted(sorter, pairs, n), cpuSorted(pairs, n)), `${dist} n=${n}`).toBeUndefined();
    }
  });

  it('sorts with 2-D grids (at most 3 workgroups along x; the last row has workgroups past the work)', async () => {
    const narrow: GpuContext = { ...ctx, limits: { ...ctx.limits, maxComputeWorkgroupsPerDimension: 3 } };
    const sorter = new AdaptiveSorter(narrow, { tile: 16 });
    await sorter.compile();
    for (const n of [5000, 2 ** 13]) {
      const pairs = makePairs('uniform', n, n);
      expect(pairsDiffer(await gpuSorted(sorter, pairs, n), cpuSorted(pairs, n)), `n=${n}`).toBeUndefined();
    }
  });

  it('times each kind of dispatch in profile mode', async () => {
    const sorter = await compiled(64, true);
    const n = 5000;
    const timing = await sorter.sortBlock(makePairs('uniform', n, 1), n, () => {});
    if (ctx.hasTimestamps) expect(Object.keys(timing.byKind ?? {}).sort()).toEqual(['local-sort', 'merge-local', 'merge-stage', 'nodes', 'traverse']);
    expect(timing.passes).toBe(adaptivePlan(n, 64, 6).length);
  });

  it('adds document bases on the GPU first', async () => {
    const sorter = await compiled(64);
    const n = 3001;
    const pairs = makePairs('uniform', n, 8);
    for (let i = 0; i < 2 * n; i += 2) pairs[i + 1] = pairs[i + 1]! % 1000;
    const docBases = Uint32Array.from([0, 0, 1000, 1000, 2000, 2000, 3000, 3000]);
    expect(pairsDiffer(await gpuSorted(sorter, pairs, n, docBases), cpuSorted(pairs, n, docBases))).toBeUndefined();
  });

  it('sorts a block written straight into the staging buffer, and holds its trees beyond the network', async () => {
    const again = await openGpu(); // the sorter's dispose() gives up one user of the shared device
    if (typeof again === 'string') throw new Error(again);
    const s = new AdaptiveSorter(again);
    await s.compile();
    try {
      for (const n of [1000, 4096, 777]) {
        const pairs = makePairs('gaussian', n, n);
        const out = await gpuSortedStaged(s, pairs, n);
        expect(pairsDiffer(out, cpuSorted(pairs, n))).toBeUndefined();
      }
      // The smallest buffers hold 2^13 pairs: 3 block-sized ones in GpuSorter, the trees here.
      const network = new GpuSorter(again);
      expect(s.gpuBytesFor(1000) - network.gpuBytesFor(1000)).toBe(adaptiveExtraBytes(2 ** 13, s.localLog));
      expect(s.gpuBytes).toBeGreaterThanOrEqual(3 * 8 * 2 ** 13 + adaptiveExtraBytes(2 ** 13, s.localLog));
      // Its largest block: the node values (12 bytes a node, padded to 2^k) fit one binding.
      const limit = Math.min(ctx.limits.maxStorageBufferBindingSize, ctx.limits.maxBufferSize);
      expect(s.maxPairs).toBeLessThanOrEqual(network.maxPairs);
      expect(12 * s.maxPairs).toBeLessThanOrEqual(limit);
      expect(24 * s.maxPairs).toBeGreaterThan(limit);
      await expect(s.sortBlock(new Uint32Array(0), s.maxPairs + 1, () => {})).rejects.toThrow(RangeError);
    } finally {
      s.dispose();
    }
  });
});
