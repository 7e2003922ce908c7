/**
 * Sort -> toDisk for one block: sorts it with the build's sorter and writes the sorted run
 * straight from the sorter's output view (for GpuSort: the mapped readback range).
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { writeRunFileAsync, type BlockRun } from '../../merge/runs.js';
import { positionsPathOf, writeRunPositionsAsync } from '../../merge/run-positions.js';
import { errorCode } from '../../src/shared/errors.js';
import { NO_KEY_SPACE, RunWriteError, type DocBases, type PairSorter, type RunWritten, type TermKeys } from '../../src/shared/types.js';
import { CpuSorter } from './cpu-sorter.js';
import type { StageClock } from '../pipeline/stage-clock.js';

export class RunSink {
  readonly runPaths: string[] = [];
  runBytes = 0;
  pairs = 0;

  /** Each run's SHA-256 (hex), computed while writing it; only when constructed with hashRuns (--resume). */
  readonly runSha256s: string[] = [];

  /** Set when the GPU failed mid-build and the remaining blocks were sorted on the CPU. */
  gpuFault?: string;

  constructor(
    private sorter: PairSorter,
    private readonly runDir: string,
    private readonly clock: StageClock,
    private readonly onWarning?: (message: string) => void,
    private readonly hashRuns = false,
  ) {}

  /** Takes over the completed runs of an interrupted build (--resume); new runs follow them. */
  adopt(runPaths: readonly string[], runBytes: number): void {
    this.runPaths.push(...runPaths);
    this.runBytes += runBytes;
  }

  get blocks(): number {
    return this.runPaths.length;
  }

  get sorterKind(): 'cpu' | 'gpu' {
    return this.sorter.kind;
  }

  /** The block being filled holds `pairs` pairs: see PairSorter.prepareFor. */
  prepareFor(pairs: number, capacity: number): void {
    this.sorter.prepareFor?.(pairs, capacity);
  }

  /** Frees the sorter's host buffers now (end of the parse: before the merge allocates its own). */
  async release(): Promise<void> {
    await this.sorter.release?.();
  }

  /**
   * Sorts pairs[0 .. 2*count) (possibly in place; `docBases`, `termKeys`: see PairSorter) and
   * writes run number `blocks`; `positions` (--positions: in the run's order, alignPositions)
   * go to its positions file meanwhile.
   */
  async sortAndWrite(pairs: Uint32Array, count: number, docBases?: DocBases, termKeys?: TermKeys, positions?: Uint32Array): Promise<void> {
    if (count === 0) return;
    const index = this.runPaths.length;
    this.clock.mark('sort', count);
    const path = join(this.runDir, `run-${String(index).padStart(6, '0')}.bin`);
    this.runPaths.push(path);
    const positionsWritten = positions && writeRunPositionsAsync(positionsPathOf(path), positions, count);
    positionsWritten?.catch(() => {}); // awaited below; no unhandled rejection meanwhile
    let written: RunWritten;
    try {
      written = await this.sortAndWriteWith(this.sorter, pairs, count, docBases, termKeys, path);
    } catch (err) {
      // A run that could not be written is the disk's fault: no other sorter would do better.
      if (this.sorter.kind !== 'gpu' || err instanceof RunWriteError) throw err;
      // A GPU fault (device lost, readback timeout, ...): finish the build on the CPU sorter.
      // GpuSort never writes into `pairs`, so the block is intact (document bases not yet
      // added); the run file is rewritten whole.
      this.gpuFault = (err as Error)?.message ?? String(err);
      this.onWarning?.(`GPU failed (${this.gpuFault}); sorting the remaining blocks on the CPU`);
      try {
        this.sorter.dispose();
      } catch {
        /* the device may already be gone */
      }
      this.sorter = new CpuSorter();
      written = await this.sortAndWriteWith(this.sorter, pairs, count, docBases, termKeys, path);
    }
    try {
      await positionsWritten;
    } catch (err) {
      throw new RunWriteError((err as Error)?.message ?? String(err), errorCode(err));
    }
    const { timing } = written;
    if (written.writeAt !== undefined) this.clock.markAt('write', written.writeAt, count);
    if (written.writtenAt !== undefined) this.clock.markAt('written', written.writtenAt, count);
    this.runBytes += written.runBytes;
    if (written.sha256 !== undefined) this.runSha256s[index] = written.sha256;
    if (written.writeAt !== undefined && written.writtenAt !== undefined) this.clock.add('writeRuns', written.writtenAt - written.writeAt);
    this.clock.add('sort', timing.totalMs);
    if (timing.kernelMs !== undefined) this.clock.add('gpuKernel', timing.kernelMs);
    if (timing.uploadMs !== undefined) this.clock.add('gpuUpload', timing.uploadMs);
    if (timing.readbackMs !== undefined) this.clock.add('gpuReadback', timing.readbackMs);
    this.pairs += count;
  }

  /**
   * Sorts the block with the CPU sorter and keeps it in memory instead of writing a run: the
   * last block of a build that wrote no run is merged from there (merge/runs.ts BlockRun). The
   * view is valid until the sorter sorts again or is released.
   */
  async sortInMemory(pairs: Uint32Array, count: number, termKeys: TermKeys): Promise<BlockRun> {
    if (!this.keepsBlocks) throw new Error('only the CPU sorter keeps a block in memory');
    this.clock.mark('sort', count);
    let sorted = pairs;
    const timing = await this.sorter.sortBlock(pairs, count, (view) => {
      sorted = view;
      return Promise.resolve();
    }, undefined, termKeys);
    this.clock.add('sort', timing.totalMs);
    this.pairs += count;
    return { pairs: sorted, count, keySpace: termKeys.length };
  }

  /** Whether sortInMemory can keep a block with this sorter. */
  get keepsBlocks(): boolean {
    return this.sorter.kind === 'cpu' && !this.sorter.sortToRun;
  }

  /**
   * One attempt: a sorter that writes runs itself (GpuSort on its thread) is asked to; any other
   * hands the sorted pairs to a write from this thread (for GpuSort in-process: its mapped range).
   */
  private async sortAndWriteWith(sorter: PairSorter, pairs: Uint32Array, count: number, docBases: DocBases | undefined, termKeys: TermKeys | undefined, path: string): Promise<RunWritten> {
    const run = { path, hash: this.hashRuns, keySpace: termKeys ? termKeys.length : NO_KEY_SPACE };
    if (sorter.sortToRun) return sorter.sortToRun(pairs, count, docBases, run, termKeys);
    const written: Omit<RunWritten, 'timing'> = { runBytes: 0 };
    const consume = async (sorted: Uint32Array) => {
      written.writeAt = performance.now();
      // A fresh hash per attempt: after a GPU fault the run is written again, whole.
      const hash = run.hash ? createHash('sha256') : undefined;
      try {
        written.runBytes = await writeRunFileAsync(path, sorted, count, run.keySpace, hash);
      } catch (err) {
        throw new RunWriteError((err as Error)?.message ?? String(err), errorCode(err));
      }
      written.sha256 = hash?.digest('hex');
      written.writtenAt = performance.now();
    };
    const timing = await sorter.sortBlock(pairs, count, consume, docBases, termKeys);
    return { ...written, timing };
  }
}
