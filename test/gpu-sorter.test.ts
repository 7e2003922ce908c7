import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunSink } from '../indexer/sort/run-sink.js';
import { StageClock } from '../indexer/pipeline/stage-clock.js';
import { applyDocBases } from '../indexer/fill/doc-bases.js';
import { planSort, stepCount } from '../gpu/bitonic-plan.js';
import { GpuSorter, type GpuSorterOptions } from '../gpu/gpu-sorter.js';
import { closeGpu, openGpu, type GpuContext } from '../gpu/device.js';
import { hasGpu } from './helpers/gpu-available.js';
import { gpuSortedStaged, cpuSorted, pairsDiffer, readRunPairs } from './helpers/gpu.js';
import { DISTRIBUTIONS, makePairs } from '../gpu/distributions.js';
import { RunWriteError } from '../src/shared/types.js';

describe('the bitonic pass plan', () => {
  it('covers every network step exactly once, tiles first, flips first in each stage', () => {
    const tile = 16;
    for (const n of [2, 16, 17, 1000, 1 << 12]) {
      for (const maxSteps of [1, 2, 3, 5]) {
        const plan = planSort(n, tile, maxSteps);
        let steps = 0;
        for (const p of plan) steps += p.kind === 'local-sort' ? stepCount(tile) : p.kind === 'local-merge' ? Math.log2(tile) : p.m;
        const padded = 2 ** Math.ceil(Math.log2(Math.max(n, tile)));
        expect(steps).toBe(stepCount(padded));
        expect(plan[0]).toEqual({ kind: 'local-sort' });
        for (const p of plan) if (p.kind === 'global') expect(p.flip).toBe(p.jHi === p.k / 2);
      }
    }
  });
  it('needs far fewer passes than one dispatch per step', () => {
    expect(planSort(2 ** 24, 4096, 4).length).toBe(37);
    expect(stepCount(2 ** 24)).toBe(300);
    expect(planSort(0, 4096, 4)).toEqual([]);
    expect(planSort(1, 4096, 4)).toEqual([]);
  });
});

const gpuOk = hasGpu();

describe.runIf(gpuOk)('GpuSort on the available adapter', () => {
  let ctx: GpuContext;
  beforeAll(async () => {
    const opened = await openGpu();
    if (typeof opened === 'string') throw new Error(opened);
    ctx = opened;
  });
  afterAll(() => closeGpu());

  async function gpuSort(sorter: GpuSorter, pairs: Uint32Array, count: number): Promise<Uint32Array> {
    let out = new Uint32Array(0);
    const input = pairs.slice();
    await sorter.sortBlock(input, count, (sorted) => {
      out = sorted.slice();
    });
    expect(pairsDiffer(input, pairs)).toBeUndefined(); // the host block is never written
    return out;
  }

  it('adds document bases on the GPU before sorting (a block filled batch by batch), leaving the host block as it was', async () => {
    const sorter = new GpuSorter(ctx, { tile: 64, maxSteps: 2 });
    await sorter.compile();
    for (const n of [1, 3001, 4096, 70_000]) {
      const pairs = makePairs(DISTRIBUTIONS[0]!, n, n);
      // Batches of 1000 pairs whose documents are numbered from 0; bases grow like DocIds do.
      const bases: number[] = [];
      for (let start = 0, base = 0; start < n; start += 1000, base += 1500) bases.push(start, base);
      for (let i = 0; i < 2 * n; i += 2) pairs[i + 1] = pairs[i + 1]! % 1500;
      const docBases = Uint32Array.from(bases);
      const input = pairs.slice();
      let out = new Uint32Array(0);
      await sorter.sortBlock(input, n, (sorted) => {
        out = sorted.slice();
      }, docBases);
      expect(pairsDiffer(input, pairs)).toBeUndefined();
      const whole = pairs.slice();
      applyDocBases(whole, n, docBases);
      expect(pairsDiffer(out, cpuSorted(whole, n)), `n=${n}`).toBeUndefined();
    }
  });

  it('sorts every distribution exactly like the CPU sorter, with small tiles so every pass kind runs', async () => {
    // tile 64 and 2 steps per pass: 2^12 pairs need local sort, flip and plain global passes, local merges.
    const sorter = new GpuSorter(ctx, { tile: 64, maxSteps: 2 });
    await sorter.compile();
    for (const dist of DISTRIBUTIONS) {
      for (const n of [4096, 4095, 4097, 3001]) {
        const pairs = makePairs(dist, n, n + dist.length);
        expect(pairsDiffer(await gpuSort(sorter, pairs, n), cpuSorted(pairs, n)), `${dist} n=${n}`).toBeUndefined();
      }
    }
  });

  it('sorts sizes 0, 1, 2, 3, odd, 2^k-1, 2^k, 2^k+1 with the default tile, reusing its buffers', async () => {
    const sorter = new GpuSorter(ctx, { maxSteps: 3 });
    await sorter.compile();
    const sizes = [0, 1, 2, 3, 5, 255, 256, 257, 4095, 4096, 4097, 12345, 65535, 65536, 65537, 2 ** 17 + 1, 1000, 7];
    for (const n of sizes) {
      const pairs = makePairs('uniform', n, n);
      expect(pairsDiffer(await gpuSort(sorter, pairs, n), cpuSorted(pairs, n)), `n=${n}`).toBeUndefined();
    }
    const bytesAfterGrowth = sorter.gpuBytes;
    for (let i = 0; i < 20; i++) {
      const pairs = makePairs(i % 2 ? 'zipf' : 'few-terms', 5000 + i, i);
      expect(pairsDiffer(await gpuSort(sorter, pairs, 5000 + i), cpuSorted(pairs, 5000 + i))).toBeUndefined();
    }
    expect(sorter.gpuBytes).toBe(bytesAfterGrowth); // no new buffers for smaller blocks
  });

  it('sorts a block written straight into the staging buffer (zero-copy upload)', async () => {
    const sorter = new GpuSorter(ctx, { tile: 64, maxSteps: 2 });
    for (const n of [1000, 4096, 777]) {
      const pairs = makePairs('gaussian', n, n);
      const out = await gpuSortedStaged(sorter, pairs, n);
      expect(out).toEqual(cpuSorted(pairs, n));
    }
    const view = await sorter.stagingBlock(10);
    await expect(sorter.sortBlock(new Uint32Array(20), 10, () => {})).rejects.toThrow(/a staging block is outstanding/);
    await sorter.sortBlock(view, 0, () => {}); // gives the staging block back
    const pairs = makePairs('uniform', 300, 3);
    expect(await gpuSort(sorter, pairs, 300)).toEqual(cpuSorted(pairs, 300));
  });

  it('sorts 2^20 zipfian pairs (a block larger than the tile at every level)', async () => {
    const sorter = new GpuSorter(ctx);
    await sorter.compile();
    const n = 2 ** 20;
    const pairs = makePairs('zipf', n, 99);
    const timing = await sorter.sortBlock(pairs.slice(), n, (sorted) => {
      expect(pairsDiffer(sorted, cpuSorted(pairs, n))).toBeUndefined();
    });
    expect(timing.passes).toBe(planSort(n, sorter.tile, sorter.maxSteps).length);
  });
});

/** A RunSink over a small-tile GpuSorter writing into a fresh folder, with its warnings collected. */
async function faultSink(options: GpuSorterOptions = {}) {
  const opened = await openGpu();
  if (typeof opened === 'string') throw new Error(opened);
  const dir = mkdtempSync(join(tmpdir(), 'gpuindex-fault-'));
  const warnings: string[] = [];
  const sink = new RunSink(new GpuSorter(opened, { tile: 64, maxSteps: 2, ...options }), dir, new StageClock(), (w) => warnings.push(w));
  return { opened, dir, warnings, sink };
}

describe.runIf(gpuOk)('GPU faults during a build', () => {
  it('a device lost mid-build: the remaining blocks are sorted on the CPU, one warning, same runs', async () => {
    const { opened, dir, warnings, sink } = await faultSink();
    const blocks = [makePairs('zipf', 3000, 1), makePairs('uniform', 3000, 2), makePairs('few-terms', 3000, 3)];
    // Blocks filled batch by batch: the second half of each adds a document base (on the GPU, then on the CPU).
    const docBases = Uint32Array.from([0, 0, 1500, 777]);
    const whole = blocks.map((b) => {
      const w = b.slice();
      applyDocBases(w, 3000, docBases);
      return w;
    });
    try {
      await sink.sortAndWrite(blocks[0]!.slice(), 3000, docBases);
      expect(sink.sorterKind).toBe('gpu');
      opened.device.destroy(); // the test hook: the device goes away between two blocks
      await new Promise((r) => setTimeout(r, 50));
      await sink.sortAndWrite(blocks[1]!.slice(), 3000, docBases);
      await sink.sortAndWrite(blocks[2]!.slice(), 3000, docBases);
      expect(sink.sorterKind).toBe('cpu');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/^GPU failed \(.+\); sorting the remaining blocks on the CPU$/);
      sink.runPaths.forEach((p, i) => expect(readRunPairs(p)).toEqual(cpuSorted(whole[i]!, 3000)));
      // The lost device is never handed out again: the next open gets a fresh one.
      const again = await openGpu();
      if (typeof again === 'string') throw new Error(again);
      expect(again.device).not.toBe(opened.device);
      closeGpu();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.runIf(gpuOk)('GPU faults before and during a sort', () => {
  it('a kernel the driver rejects: no GPU sorter, with the reason (the build then sorts on the CPU)', async () => {
    const { openGpuSorter } = await import('../gpu/index.js');
    const opened = await openGpuSorter({ allowSoftware: true, transformKernel: (wgsl) => wgsl.replace('fn less(', 'fn less(broken ') });
    expect(typeof opened).toBe('string');
    expect(opened).toMatch(/^GPU kernel compilation failed: .*error: expected ':' for parameter/);
    expect(opened).not.toMatch(/\n/); // one line: it becomes the build's notice
    const { chooseSorter } = await import('../indexer/sort/sorters.js');
    // auto with no usable GPU falls back with one notice; here lavapipe is declined as software.
    const chosen = await chooseSorter('auto');
    expect(chosen.sorter.kind).toBe('cpu');
    expect(chosen.notice).toMatch(/^no GPU \(.+\); sorting on the CPU$/);
  });

  it('kernels compiled in the background: blocks sort as with kernels compiled up front; a kernel the driver rejects fails the first sort, and the build sorts on the CPU with one warning', async () => {
    const { openGpuSorter } = await import('../gpu/index.js');
    for (const algorithm of ['bsn', 'radix'] as const) {
      const later = await openGpuSorter({ allowSoftware: true, algorithm, compileLater: true });
      if (typeof later === 'string') throw new Error(later);
      try {
        // Sorted at once, before the compilation can have finished.
        const pairs = makePairs('zipf', 5000, 3);
        let sorted: Uint32Array | undefined;
        await later.sortBlock(pairs.slice(), 5000, (s) => void (sorted = s.slice()));
        expect(pairsDiffer(sorted!, cpuSorted(pairs, 5000)), algorithm).toBeUndefined();
      } finally {
        later.dispose();
      }
    }
    const broken = await openGpuSorter({ allowSoftware: true, compileLater: true, transformKernel: (wgsl) => wgsl.replace('fn less(', 'fn less(broken ') });
    if (typeof broken === 'string') throw new Error(broken);
    const dir = mkdtempSync(join(tmpdir(), 'gpuindex-compile-later-'));
    try {
      const warnings: string[] = [];
      const sink = new RunSink(broken, dir, new StageClock(), (w) => warnings.push(w));
      const block = makePairs('uniform', 4000, 5);
      await sink.sortAndWrite(block.slice(), 4000);
      expect(sink.sorterKind).toBe('cpu');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/^GPU failed \(GPU kernel compilation failed: .*error: expected ':' for parameter.*\); sorting the remaining blocks on the CPU$/);
      expect(readRunPairs(sink.runPaths[0]!)).toEqual(cpuSorted(block, 4000));
    } finally {
      broken.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a run that cannot be written (in-process GpuSort): the disk\'s fault, with its code; no CPU fallback', async () => {
    const opened = await openGpu();
    if (typeof opened === 'string') throw new Error(opened);
    const warnings: string[] = [];
    const sink = new RunSink(new GpuSorter(opened, { tile: 64, maxSteps: 2 }), join(tmpdir(), 'gpuindex-no-such-folder', 'runs'), new StageClock(), (w) => warnings.push(w));
    try {
      const err = await sink.sortAndWrite(makePairs('zipf', 2000, 4), 2000).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(RunWriteError);
      expect((err as RunWriteError).code).toBe('ENOENT');
      expect(warnings).toEqual([]);
      expect(sink.sorterKind).toBe('gpu');
    } finally {
      closeGpu();
    }
  });

  it('a readback that never resolves in time: the block is sorted on the CPU with one warning', async () => {
    const { dir, warnings, sink } = await faultSink({ readbackTimeoutMs: 0 });
    try {
      const block = makePairs('zipf', 5000, 9);
      await sink.sortAndWrite(block.slice(), 5000);
      expect(sink.sorterKind).toBe('cpu');
      expect(warnings).toEqual(['GPU failed (GPU readback did not finish within 0 ms); sorting the remaining blocks on the CPU']);
      expect(readRunPairs(sink.runPaths[0]!)).toEqual(cpuSorted(block, 5000));
    } finally {
      closeGpu();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
