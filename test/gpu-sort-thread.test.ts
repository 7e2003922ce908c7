/**
 * GpuSort on the GPU thread (gpu/sort-thread.ts), as builds use it: sorted output and run files
 * equal the CPU sorter's, faults fall back to the CPU with the block intact, a failed run write
 * is reported as the disk's fault, and the thread serves one build after another.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RunSink } from '../indexer/sort/run-sink.js';
import { StageClock } from '../indexer/pipeline/stage-clock.js';
import { makePairs } from '../gpu/distributions.js';
import { openGpuSortThread, type GpuSortThread } from '../gpu/sort-thread.js';
import { RunWriteError } from '../src/shared/types.js';
import { hasGpu } from './helpers/gpu-available.js';
import { cpuSorted, pairsDiffer, readRunPairs } from './helpers/gpu.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-thread-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A copy of `pairs` in a SharedArrayBuffer, as the pipeline's blocks are for this sorter. */
function sharedCopy(pairs: Uint32Array): Uint32Array {
  const out = new Uint32Array(new SharedArrayBuffer(pairs.byteLength));
  out.set(pairs);
  return out;
}

async function open(options: Parameters<typeof openGpuSortThread>[0] = {}): Promise<GpuSortThread> {
  const opened = await openGpuSortThread({ allowSoftware: true, tile: 64, maxSteps: 2, ...options });
  if (typeof opened === 'string') throw new Error(opened);
  return opened;
}

describe.runIf(hasGpu())('GpuSort on the GPU thread', () => {
  it('sorts blocks in place in their SharedArrayBuffer, with document bases, as the CPU sorter does', async () => {
    const sorter = await open();
    try {
      expect(sorter.sharedBlocks).toBe(true);
      expect(sorter.maxPairs).toBeGreaterThan(1 << 20);
      for (const [dist, n] of [['zipf', 5000], ['uniform', 1], ['few-terms', 4097], ['zipf', 20000]] as const) {
        const pairs = makePairs(dist, n, n);
        const docBases = n > 2 ? Uint32Array.from([0, 0, n >> 1, 12345]) : undefined;
        const block = sharedCopy(pairs);
        let seen: Uint32Array | undefined;
        const timing = await sorter.sortBlock(block, n, (sorted) => {
          seen = sorted.slice();
        }, docBases);
        expect(timing.totalMs).toBeGreaterThanOrEqual(0);
        expect(pairsDiffer(seen!, cpuSorted(pairs, n, docBases))).toBeUndefined();
        expect(pairsDiffer(block, cpuSorted(pairs, n, docBases))).toBeUndefined();
      }
    } finally {
      sorter.dispose();
    }
  });

  it('writes run files from the GPU thread, with their SHA-256, and never writes into the block', async () => {
    const sorter = await open();
    try {
      const pairs = makePairs('zipf', 30000, 7);
      const docBases = Uint32Array.from([0, 0, 10000, 500, 20000, 9000]);
      const block = sharedCopy(pairs);
      const path = join(work, 'run-a.bin');
      const before = performance.now();
      const done = await sorter.sortToRun(block, 30000, docBases, { path, hash: true });
      expect(readRunPairs(path)).toEqual(cpuSorted(pairs, 30000, docBases));
      expect(done.runBytes).toBe(readFileSync(path).length);
      expect(done.sha256).toBe(createHash('sha256').update(readFileSync(path)).digest('hex'));
      // The thread's times come back on this thread's clock.
      expect(done.writeAt!).toBeGreaterThanOrEqual(before);
      expect(done.writtenAt!).toBeGreaterThanOrEqual(done.writeAt!);
      expect(done.writtenAt!).toBeLessThanOrEqual(performance.now());
      expect(pairsDiffer(block, pairs)).toBeUndefined();
      // No run asked for: sorted and dropped.
      const dropped = await sorter.sortToRun(block, 30000, docBases, undefined);
      expect(dropped.runBytes).toBe(0);
      expect(dropped.sha256).toBeUndefined();
    } finally {
      sorter.dispose();
    }
  });

  it('an open the adapter refuses (lavapipe for --sorter auto) ends the thread; the next open starts a fresh one', async () => {
    const declined = await openGpuSortThread({ tile: 64, maxSteps: 2 });
    if (typeof declined === 'string') expect(declined).toMatch(/^only a software adapter \(.+\), slower than the CPU sorter$/);
    else declined.dispose(); // a hardware adapter: nothing to decline
    const sorter = await open();
    try {
      const pairs = makePairs('zipf', 2000, 5);
      const block = sharedCopy(pairs);
      await sorter.sortBlock(block, 2000, () => {});
      expect(pairsDiffer(block, cpuSorted(pairs, 2000))).toBeUndefined();
    } finally {
      sorter.dispose();
    }
  });

  it('refuses a block that is not in a SharedArrayBuffer, with the reason', async () => {
    const sorter = await open();
    try {
      await expect(sorter.sortToRun(makePairs('zipf', 10, 1), 10, undefined, undefined)).rejects.toThrow(
        'the GPU thread sorts blocks in SharedArrayBuffers (PairSorter.sharedBlocks)',
      );
    } finally {
      sorter.dispose();
    }
  });

  it('releases its buffers and sorts again; a later build opens a new device on the same thread', async () => {
    const first = await open();
    const pairs = makePairs('uniform', 3000, 3);
    await first.sortToRun(sharedCopy(pairs), 3000, undefined, { path: join(work, 'run-b.bin'), hash: false });
    await first.release();
    await first.sortToRun(sharedCopy(pairs), 3000, undefined, { path: join(work, 'run-c.bin'), hash: false });
    first.dispose();
    await expect(first.sortToRun(sharedCopy(pairs), 3000, undefined, undefined)).rejects.toThrow('GpuSortThread used after dispose()');
    const second = await open();
    try {
      await second.sortToRun(sharedCopy(pairs), 3000, undefined, { path: join(work, 'run-d.bin'), hash: false });
      for (const run of ['run-b.bin', 'run-c.bin', 'run-d.bin']) expect(readRunPairs(join(work, run))).toEqual(cpuSorted(pairs, 3000));
    } finally {
      second.dispose();
    }
  });
});

describe.runIf(hasGpu())('GPU thread faults during a build', () => {
  it('a device lost mid-build: the remaining blocks are sorted on the CPU from the intact blocks, one warning, same runs', async () => {
    const sorter = await open();
    const dir = mkdtempSync(join(work, 'lost-'));
    const warnings: string[] = [];
    const sink = new RunSink(sorter, dir, new StageClock(), (w) => warnings.push(w));
    const blocks = [makePairs('zipf', 3000, 1), makePairs('uniform', 3000, 2), makePairs('few-terms', 3000, 3)];
    const docBases = Uint32Array.from([0, 0, 1500, 777]);
    await sink.sortAndWrite(sharedCopy(blocks[0]!), 3000, docBases);
    expect(sink.sorterKind).toBe('gpu');
    await sorter.loseDevice();
    await sink.sortAndWrite(sharedCopy(blocks[1]!), 3000, docBases);
    await sink.sortAndWrite(sharedCopy(blocks[2]!), 3000, docBases);
    expect(sink.sorterKind).toBe('cpu');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^GPU failed \(GPU device (lost|destroyed).*\); sorting the remaining blocks on the CPU$/);
    sink.runPaths.forEach((p, i) => expect(readRunPairs(p)).toEqual(cpuSorted(blocks[i]!, 3000, docBases)));
    // The thread opens a fresh device for the next build.
    const again = await open();
    again.dispose();
  });

  it('a readback that never resolves in time: the block is sorted on the CPU with one warning', async () => {
    const sorter = await open({ readbackTimeoutMs: 0 });
    const dir = mkdtempSync(join(work, 'timeout-'));
    const warnings: string[] = [];
    const sink = new RunSink(sorter, dir, new StageClock(), (w) => warnings.push(w));
    const block = makePairs('zipf', 5000, 9);
    await sink.sortAndWrite(sharedCopy(block), 5000);
    expect(sink.sorterKind).toBe('cpu');
    expect(warnings).toEqual(['GPU failed (GPU readback did not finish within 0 ms); sorting the remaining blocks on the CPU']);
    expect(readRunPairs(sink.runPaths[0]!)).toEqual(cpuSorted(block, 5000));
  });

  it('a run that cannot be written is the disk\'s fault: the error (with its code) ends the build, no CPU fallback', async () => {
    const sorter = await open();
    const warnings: string[] = [];
    const sink = new RunSink(sorter, join(work, 'no-such-folder'), new StageClock(), (w) => warnings.push(w));
    try {
      const err = await sink.sortAndWrite(sharedCopy(makePairs('zipf', 2000, 4)), 2000).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(RunWriteError);
      expect((err as RunWriteError).code).toBe('ENOENT');
      expect((err as Error).message).toMatch(/^ENOENT: no such file or directory, open '.*run-000000\.bin'$/);
      expect(warnings).toEqual([]);
      expect(sink.sorterKind).toBe('gpu');
    } finally {
      sorter.dispose();
    }
  });
});
