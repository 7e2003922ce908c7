/**
 * Shared vocabulary of the indexer. Ids are branded numbers so a TermId can never be
 * passed where a DocId is expected (both are plain u32 at run time).
 */
export type TermId = number & { readonly __brand: 'TermId' };
export type DocId = number & { readonly __brand: 'DocId' };

export const asTermId = (n: number): TermId => n as TermId;
export const asDocId = (n: number): DocId => n as DocId;

/**
 * A block of (termID, docID) pairs: a Uint32Array holding `count` pairs interleaved as
 * [t0, d0, t1, d1, ...]. This is the unit that the sorters take and the run files hold.
 * Sorted order is by termID, then docID (the 64-bit key termID<<32 | docID).
 */
export interface PairBlock {
  /** Interleaved pairs; only the first 2*count entries are meaningful. */
  readonly pairs: Uint32Array;
  readonly count: number;
}

/** Timing of one block sort, in milliseconds; fields a sorter cannot measure are undefined. */
export interface SortTiming {
  totalMs: number;
  uploadMs?: number;
  kernelMs?: number;
  readbackMs?: number;
}

/**
 * Receives the sorted pairs of a block. The view is only valid during the call (for the GPU
 * sorter it is the mapped readback range, unmapped when the promise settles), so a consumer
 * writes it out or copies it before returning.
 */
export type SortedConsumer = (sorted: Uint32Array) => void | Promise<void>;

/**
 * A block's document bases, flat: (start, base) per segment, starts ascending from 0; the pairs
 * from one start up to the next hold document indexes that `base` turns into DocIds (a block is
 * filled batch by batch, and a batch numbers its documents from 0).
 */
export type DocBases = Uint32Array;

/**
 * A block's term keys, indexed by the termIDs it was filled with: each pair's termID is replaced
 * by its key before the sort, so the run comes out in the index's term order (the terms' ranks
 * in code point order: TermDictionary.lexKeys, merge/term-order.ts). Its length is the run's key
 * space.
 */
export type TermKeys = Uint32Array;

/** The key space of a run whose pairs were sorted by their termIDs as they are (no TermKeys). */
export const NO_KEY_SPACE = 0xffffffff;

/** GpuSort(B) or its CPU counterpart: sorts one block and hands the sorted pairs to a consumer. */
export interface PairSorter {
  readonly kind: 'cpu' | 'gpu';
  /**
   * Host memory (bytes) the sorter holds per pair of the largest block it has sorted: the CPU
   * sorter's scratch array, the GPU sorter's mapped staging and readback buffers. The memory
   * plan budgets it; 0 when undefined.
   */
  readonly hostBytesPerPair?: number;
  /** The largest block the sorter can take (the GPU's binding limit); unlimited when undefined. */
  readonly maxPairs?: number;
  /** Process memory the sorter will still take as it finishes opening (kernels compiling); the plan holds it. */
  readonly compilingBytes?: number;
  /** After dispose(): settles once the sorter is closed on its thread (the process may then exit); optional. */
  closed?(): Promise<void>;
  /**
   * Sorts pairs[0 .. 2*count) by (termID, docID); may sort `pairs` in place. With `docBases`,
   * the docIDs are first made whole: each segment's base is added to its pairs' docID words.
   * With `termKeys`, each termID is first replaced by its key.
   */
  sortBlock(pairs: Uint32Array, count: number, consume: SortedConsumer, docBases?: DocBases, termKeys?: TermKeys): Promise<SortTiming>;
  /**
   * The sorter reads blocks from another thread: the pipeline allocates them in
   * SharedArrayBuffers (which cannot be freed on demand: the memory plan keeps them in the merge's share).
   */
  readonly sharedBlocks?: boolean;
  /**
   * Sorts a block and writes its run file itself, from its own output (GpuSort on its thread:
   * the mapped readback range), without handing the sorted pairs to this thread. `run`
   * undefined: the sorted pairs are dropped (a benchmark's sort without writes). Never writes
   * into `pairs`, so after a failure the block is intact for another sorter.
   */
  sortToRun?(pairs: Uint32Array, count: number, docBases: DocBases | undefined, run: RunRequest | undefined, termKeys?: TermKeys): Promise<RunWritten>;
  /**
   * The block being filled now holds `pairs` pairs (of at most `capacity`): the sorter may ready
   * its buffers for them while the parse goes on (the CPU sorter touches its scratch pages
   * here, not in the sort after the last batch). Must not touch memory a sort or write in
   * flight is using. Optional.
   */
  prepareFor?(pairs: number, capacity: number): void;
  /**
   * Gives up the scratch prepareFor readied (the CPU sorter's), for a sort of the block on
   * another thread (worker-pipeline.ts: the crawl fitted in one block); optional.
   */
  handOverScratch?(): ArrayBuffer | undefined;
  /** Frees host buffers now (a later sort allocates them again); optional. */
  release?(): Promise<void>;
  /**
   * Takes its host buffers from `pool` and gives them back there at release() instead of
   * freeing them (runtime/buffer-pool.ts: a thread building index after index); optional.
   */
  borrowFrom?(pool: { take(bytes: number): ArrayBuffer; give(buffer: ArrayBuffer): void }): void;
  /** Frees buffers (GPU memory, scratch arrays). The sorter is unusable afterwards. */
  dispose(): void;
}

/** The run file PairSorter.sortToRun writes. */
export interface RunRequest {
  path: string;
  /** Compute the run's SHA-256 while writing it (--resume checkpoints). */
  hash: boolean;
  /** The run header's key space: the TermKeys' length, or NO_KEY_SPACE. */
  keySpace: number;
}

/** What PairSorter.sortToRun did. */
export interface RunWritten {
  timing: SortTiming;
  /** Bytes of the run file (0 when no run was asked for). */
  runBytes: number;
  sha256?: string;
  /** When the run write began and ended, as performance.now() of the calling thread. */
  writeAt?: number;
  writtenAt?: number;
}

/**
 * A failure of PairSorter.sortToRun while writing the run (the sort itself succeeded): the
 * disk's fault, not the sorter's, so it is not a reason to fall back to another sorter.
 * `code` is the system error code (ENOSPC, ...) when there is one.
 */
export class RunWriteError extends Error {
  constructor(message: string, readonly code?: string) {
    super(message);
    this.name = 'RunWriteError';
  }
}
