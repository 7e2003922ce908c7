/**
 * Sort -> toDisk for one block: sorts it with the build's sorter and writes the sorted run
 * straight from the sorter's output view (for GpuSort: the mapped readback range).
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { writeRunFileAsync } from '../merge/runs.js';
import type { DocBases, PairSorter } from '../src/types.js';
import { CpuSorter } from './cpu-sorter.js';
import type { StageClock } from './stage-clock.js';

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

  /** Frees the sorter's host buffers now (end of the parse: before the merge allocates its own). */
  async release(): Promise<void> {
    await this.sorter.release?.();
  }

  /** Sorts pairs[0 .. 2*count) (possibly in place; `docBases`: see PairSorter) and writes run number `blocks`. */
  async sortAndWrite(pairs: Uint32Array, count: number, docBases?: DocBases): Promise<void> {
    if (count === 0) return;
    const index = this.runPaths.length;
    this.clock.mark('sort', count);
    const path = join(this.runDir, `run-${String(index).padStart(6, '0')}.bin`);
    this.runPaths.push(path);
    let writeMs = 0;
    let runBytes = 0;
    let sha256: string | undefined;
    const consume = async (sorted: Uint32Array) => {
      const t0 = performance.now();
      this.clock.mark('write', count);
      // A fresh hash per attempt: after a GPU fault the run is written again, whole.
      const hash = this.hashRuns ? createHash('sha256') : undefined;
      runBytes = await writeRunFileAsync(path, sorted, count, hash);
      sha256 = hash?.digest('hex');
      writeMs = performance.now() - t0;
      this.clock.mark('written', count);
    };
    let timing;
    try {
      timing = await this.sorter.sortBlock(pairs, count, consume, docBases);
    } catch (err) {
      if (this.sorter.kind !== 'gpu') throw err;
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
      timing = await this.sorter.sortBlock(pairs, count, consume, docBases);
    }
    this.runBytes += runBytes;
    if (sha256 !== undefined) this.runSha256s[index] = sha256;
    this.clock.add('writeRuns', writeMs);
    this.clock.add('sort', timing.totalMs);
    if (timing.kernelMs !== undefined) this.clock.add('gpuKernel', timing.kernelMs);
    if (timing.uploadMs !== undefined) this.clock.add('gpuUpload', timing.uploadMs);
    if (timing.readbackMs !== undefined) this.clock.add('gpuReadback', timing.readbackMs);
    this.pairs += count;
  }
}
