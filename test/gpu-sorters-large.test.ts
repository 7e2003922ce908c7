/**
 * Every GPU sorter at the top of the tested range: each distribution at 2^20 and 2^20 + 1 pairs
 * (a power of two, and one pair past it, which pads to 2^21 where a sorter pads), exact against
 * the CPU radix sort. The sorters' own tests cover 0 .. 2^16 + 1 with every distribution.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdaptiveSorter } from '../gpu/adaptive-sorter.js';
import { closeGpu, openGpu, type GpuContext } from '../gpu/device.js';
import { DISTRIBUTIONS, makePairs } from '../gpu/distributions.js';
import { GpuSorter } from '../gpu/gpu-sorter.js';
import { OddEvenSorter } from '../gpu/oddeven-sorter.js';
import { RadixSorter } from '../gpu/radix-sorter.js';
import { hasGpu } from './helpers/gpu-available.js';
import { cpuSorted, gpuSorted, pairsDiffer } from './helpers/gpu.js';

const SORTERS = {
  bsn: (ctx: GpuContext) => new GpuSorter(ctx),
  radix: (ctx: GpuContext) => new RadixSorter(ctx),
  adaptive: (ctx: GpuContext) => new AdaptiveSorter(ctx),
  oddeven: (ctx: GpuContext) => new OddEvenSorter(ctx),
};

describe.skipIf(!hasGpu())('every GPU sorter, every distribution, at 2^20 and 2^20 + 1 pairs', () => {
  let ctx: GpuContext;
  beforeAll(async () => {
    const c = await openGpu();
    if (typeof c === 'string') throw new Error(c);
    ctx = c;
  });
  afterAll(() => closeGpu());

  for (const [name, make] of Object.entries(SORTERS)) {
    it(name, async () => {
      // Each sorter holds the device once: its dispose() lets go of that hold (closeGpu), not the suite's.
      const own = await openGpu();
      if (typeof own === 'string') throw new Error(own);
      const sorter = make(own);
      await sorter.compile();
      try {
        for (const dist of DISTRIBUTIONS) {
          for (const n of [2 ** 20, 2 ** 20 + 1]) {
            const pairs = makePairs(dist, n, n ^ dist.length);
            expect(pairsDiffer(await gpuSorted(sorter, pairs, n), cpuSorted(pairs, n)), `${name} ${dist} n=${n}`).toBeUndefined();
          }
        }
      } finally {
        sorter.dispose();
      }
    }, 600_000);
  }
});
