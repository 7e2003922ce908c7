/**
 * The fused tile kernels (GpuSorterOptions.fuse) on the available adapter, and one sorter's
 * buffers through a sequence of blocks that grows, shrinks and grows again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuSorter, radixSortPairs } from '../indexer/sort/cpu-sorter.js';
import { closeGpu, openGpu, type GpuContext } from '../gpu/device.js';
import { DISTRIBUTIONS, makePairs } from '../gpu/distributions.js';
import { GpuSorter } from '../gpu/gpu-sorter.js';
import { hasGpu } from './helpers/gpu-available.js';
import { pairsDiffer } from './helpers/gpu.js';

const cpuSort = (pairs: Uint32Array, count: number) => radixSortPairs(pairs.slice(), count, new Uint32Array(2 * count)).slice(0, 2 * count);

async function gpuSort(sorter: GpuSorter, pairs: Uint32Array, count: number): Promise<Uint32Array> {
  let out = new Uint32Array(0);
  await sorter.sortBlock(pairs.slice(), count, (sorted) => {
    out = sorted.slice();
  });
  return out;
}

describe.runIf(hasGpu())('GpuSort with fused tile kernels', () => {
  let ctx: GpuContext;
  beforeAll(async () => {
    const opened = await openGpu();
    if (typeof opened === 'string') throw new Error(opened);
    ctx = opened;
  });
  afterAll(() => closeGpu());
  /** A sorter holding its own reference to the shared device (its dispose() releases it). */
  async function newSorter(options: ConstructorParameters<typeof GpuSorter>[1]): Promise<GpuSorter> {
    const again = await openGpu();
    if (again !== ctx) throw new Error('expected the shared device');
    const sorter = new GpuSorter(ctx, options);
    await sorter.compile();
    return sorter;
  }

  it('sorts every distribution like the CPU sorter on small tiles (local sort, flip and plain global passes, fused merges)', async () => {
    const sorter = await newSorter({ tile: 64, maxSteps: 2, fuse: true });
    for (const dist of DISTRIBUTIONS)
      for (const n of [4095, 4096, 4097, 3001, 2, 3]) {
        const pairs = makePairs(dist, n, 3 * n + dist.length);
        expect(pairsDiffer(await gpuSort(sorter, pairs, n), cpuSort(pairs, n)), `${dist} n=${n}`).toBeUndefined();
      }
    sorter.dispose();
  });

  it('sorts every distribution at 2^16 + 1 and 2^20 uniform pairs with the default tile', async () => {
    const sorter = await newSorter({ fuse: true });
    for (const dist of DISTRIBUTIONS) {
      const n = 2 ** 16 + 1;
      const pairs = makePairs(dist, n, 11);
      expect(pairsDiffer(await gpuSort(sorter, pairs, n), cpuSort(pairs, n)), `${dist} n=${n}`).toBeUndefined();
    }
    const n = 2 ** 20;
    const pairs = makePairs('uniform', n, 12);
    expect(pairsDiffer(await gpuSort(sorter, pairs, n), cpuSort(pairs, n))).toBeUndefined();
    sorter.dispose();
  });

  it('reuses one set of buffers through blocks that grow, shrink and grow (default tile)', async () => {
    const sorter = await newSorter({ fuse: true });
    const sizes = [1000, 70_000, 5, 0, 65_537, 140_001, 1, 33_333, 140_001];
    const held: number[] = [];
    for (const [i, n] of sizes.entries()) {
      const pairs = makePairs(i % 2 ? 'zipf' : 'uniform', n, i);
      expect(pairsDiffer(await gpuSort(sorter, pairs, n), cpuSort(pairs, n)), `block ${i}, n=${n}`).toBeUndefined();
      held.push(sorter.gpuBytes);
    }
    // Buffers grow only when a larger block arrives and never shrink.
    for (let i = 1; i < held.length; i++) expect(held[i]).toBeGreaterThanOrEqual(held[i - 1]!);
    expect(held[held.length - 1]).toBe(held[5]);
    sorter.dispose();
  });

  it('replaces termIDs by the term keys of the block before sorting, with and without document bases, as the CPU sorter does', async () => {
    const sorter = await newSorter({});
    for (const [i, n] of [1, 2, 4097, 70_001].entries()) {
      const pairs = makePairs('zipf', n, 20 + i);
      let maxT = 0;
      for (let k = 0; k < n; k++) maxT = Math.max(maxT, pairs[2 * k]!);
      // Keys: a permutation of the termIDs (a dictionary's ranks reverse its ids here).
      const keys = Uint32Array.from({ length: maxT + 1 }, (_, t) => maxT - t);
      const bases = i % 2 ? Uint32Array.from([0, 0, Math.floor(n / 2), 1000]) : undefined;
      let gpu = new Uint32Array(0);
      await sorter.sortBlock(pairs.slice(), n, (sorted) => {
        gpu = sorted.slice();
      }, bases, keys);
      let cpu = new Uint32Array(0);
      await new CpuSorter().sortBlock(pairs.slice(), n, (sorted) => {
        cpu = sorted.slice();
      }, bases, keys);
      expect(pairsDiffer(gpu, cpu), `n=${n}`).toBeUndefined();
      if (n > 1) expect(cpu[0]).toBe(keys[maxT]);
    }
    sorter.dispose();
  });
});
