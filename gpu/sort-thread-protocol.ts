/**
 * The messages between the main thread and the GPU thread (gpu/sort-thread.ts and
 * gpu/sort-thread-worker.ts). Every request carries an id; the thread answers each request once,
 * in the order it took them.
 */
import type { GpuSorterOptions, GpuSortTiming } from './gpu-sorter.js';

/** GpuSorterOptions that can cross threads (no functions: transformKernel stays in-process). */
export type ThreadSorterOptions = Omit<GpuSorterOptions, 'transformKernel'>;

/** The GPU sorting algorithm a build asks for (src/shared/options.ts GpuSortChoice). */
export type GpuAlgorithmChoice = 'bsn' | 'radix' | 'auto';

export type SortThreadRequest =
  | { type: 'open'; id: number; allowSoftware: boolean; options: ThreadSorterOptions; algorithm?: GpuAlgorithmChoice }
  /**
   * 'auto' opened both sorters: keep `algorithm` (radix only if its buffers for blocks of
   * `blockPairs` can be allocated on the device; else bsn) and close the other.
   */
  | { type: 'choose'; id: number; algorithm: 'bsn' | 'radix'; blockPairs: number }
  | {
      type: 'sort';
      id: number;
      /** A view of a SharedArrayBuffer: the thread reads the block where the main thread filled it. */
      pairs: Uint32Array;
      count: number;
      docBases?: Uint32Array;
      /** The block's term keys (PairSorter.sortBlock). */
      termKeys?: Uint32Array;
      /** The run file to write from the mapped readback range. */
      run?: { path: string; hash: boolean; keySpace: number };
      /** Copy the sorted pairs back into `pairs` (PairSorter.sortBlock); with neither, they are dropped. */
      copyBack?: boolean;
    }
  | { type: 'release'; id: number }
  | { type: 'close'; id: number }
  /** Tests: destroys the device, as a driver reset would. */
  | { type: 'lose-device'; id: number };

/** What the main thread needs of the opened sorter (for the memory plan and the summary). */
export interface OpenedSorter {
  maxPairs: number;
  hostBytesPerPair: number;
  /** The algorithm open ('auto': both, until a 'choose'). */
  algorithm: GpuAlgorithmChoice;
  /** 'auto': each algorithm's host bytes per pair, for the memory plan to weigh. */
  hostBytesPerPairOf?: { bsn: number; radix: number };
  /** The kernels compile in the background: the RSS they will add (the memory plan holds it). */
  compilingBytes: number;
}

export type SortThreadReply =
  | { type: 'opened'; id: number; sorter: OpenedSorter }
  | { type: 'chosen'; id: number; algorithm: 'bsn' | 'radix'; hostBytesPerPair: number; reason?: string }
  | { type: 'refused'; id: number; reason: string }
  | {
      type: 'sorted';
      id: number;
      timing: GpuSortTiming;
      runBytes: number;
      sha256?: string;
      /** performance.timeOrigin + performance.now() on the thread: comparable across threads. */
      writeAtEpochMs?: number;
      writtenAtEpochMs?: number;
    }
  | {
      type: 'failed';
      id: number;
      message: string;
      /** 'write': the run write failed after a good sort (the disk's fault); 'sort': the GPU's. */
      during: 'sort' | 'write';
      code?: string;
    }
  | { type: 'done'; id: number };
