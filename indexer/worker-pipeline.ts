/**
 * The three indexers of paper 000 (Fig. 7) over parse workers. They differ only in how
 * parsing and sorting are scheduled:
 *
 *   Indexcpu  ('sequential' + CPU sorter): Parse -> Sort -> toDisk, block after block.
 *   Indexgpu  ('sequential' + GpuSort):    the same sequence with the GPU sorter.
 *   Indexgpu+ ('overlapped' + GpuSort):    while block i is sorted and written, the workers
 *             parse and the main thread fills block i+1 (two host blocks; at most one block
 *             in the sort stage at a time, and each worker at most `credits` batches ahead:
 *             the SyncSend bounds that keep memory within --memory).
 *
 * In the sequential schedule the main thread stops taking batches while it sorts, so the
 * workers stop as soon as their credits are spent (at most `credits` small batches each).
 */
import type { CorpusOptions, SkippedItem } from '../src/corpus/index.js';
import { AbortError } from '../src/errors.js';
import type { TokenizerOptions } from '../src/tokenizer.js';
import type { PairSorter } from '../src/types.js';
import { BatchRemapper } from './batch-remapper.js';
import { PairBlockBuilder } from './block.js';
import type { TermDictionary } from './dictionary.js';
import type { DocumentTable } from './documents.js';
import { ParsePool, type WorkerTimes } from './parse-pool.js';
import type { ParseCounters, PipelineResult } from './pipeline.js';
import { MAX_LISTED_SKIPS, newCounters, noteWarning } from './pipeline.js';
import { RunSink } from './run-sink.js';
import type { StageClock } from './stage-clock.js';

export type Schedule = 'sequential' | 'overlapped';

export interface WorkerPipelineInput {
  root: string;
  files: readonly string[];
  corpus: CorpusOptions;
  tokenizer: TokenizerOptions;
  workers: number;
  schedule: Schedule;
  sorter: PairSorter;
  blockSize: number;
  /** Pairs per worker batch; default min(64Ki, blockSize). */
  batchPairs?: number;
  /** Pairs of batches held ahead of crawl order (so workers run ahead of a slow file); default one block. */
  maxBufferedPairs?: number;
  runDir: string;
  dictionary: TermDictionary;
  documents: DocumentTable;
  clock: StageClock;
  signal?: AbortSignal;
  onSkip?: (item: SkippedItem) => void;
  onDocumentWarning?: (item: SkippedItem) => void;
  /** On-disk size of each file of `files` (for the progress ETA). */
  fileBytes?: readonly number[];
  onProgress?: (counters: ParseCounters) => void;
  onWarning?: (message: string) => void;
}

export interface WorkerPipelineResult extends PipelineResult {
  workerTimes: WorkerTimes[];
  /** Main-thread milliseconds spent waiting for the sort stage (overlapped schedule). */
  sortWaitMs: number;
  /** Main-thread milliseconds spent waiting for batches from the workers. */
  batchWaitMs: number;
}

export const CREDITS_PER_WORKER = 2;

export async function runWorkerPipeline(input: WorkerPipelineInput): Promise<WorkerPipelineResult> {
  const { clock, signal } = input;
  const batchPairs = input.batchPairs ?? Math.max(1, Math.min(1 << 16, input.blockSize));
  const pool = new ParsePool(input.files, Math.max(1, input.workers), {
    root: input.root,
    corpus: input.corpus,
    tokenizer: input.tokenizer,
    batchPairs,
    credits: CREDITS_PER_WORKER,
  }, input.maxBufferedPairs ?? Math.max(batchPairs * 4 * input.workers, input.blockSize));
  const counters: ParseCounters = newCounters();
  counters.fileBytesTotal = input.fileBytes?.reduce((a, b) => a + b, 0) ?? 0;
  const sink = new RunSink(input.sorter, input.runDir, clock, input.onWarning);
  const remapper = new BatchRemapper(input.dictionary, input.documents);
  let current = new PairBlockBuilder(input.blockSize);
  let spare = input.schedule === 'overlapped' ? new PairBlockBuilder(input.blockSize) : undefined;
  let inflight: Promise<void> | undefined;
  let sortWaitMs = 0;
  let batchWaitMs = 0;

  const afterSort = () => {
    counters.blocks = sink.blocks;
    counters.runBytes = sink.runBytes;
    input.onProgress?.(counters);
  };

  const flush = async (): Promise<void> => {
    if (current.count === 0) return;
    if (signal?.aborted) throw new AbortError();
    if (!spare) {
      await sink.sortAndWrite(current.pairs, current.count);
      current.count = 0;
      afterSort();
      return;
    }
    // Overlapped: wait for the block in the sort stage (SyncSend bound 1), then hand this one over.
    if (inflight) {
      const t0 = performance.now();
      await inflight;
      sortWaitMs += performance.now() - t0;
    }
    const full = current;
    current = spare;
    spare = full;
    current.count = 0;
    inflight = sink.sortAndWrite(full.pairs, full.count).then(afterSort);
    inflight.catch(() => {}); // observed when awaited; avoid an unhandled rejection meanwhile
  };

  try {
    const it = pool.batches();
    for (;;) {
      const t0 = performance.now();
      const next = await it.next();
      batchWaitMs += performance.now() - t0;
      if (next.done) break;
      const arrival = next.value;
      const { batch, worker } = arrival;
      const tBatch = performance.now();
      let flushMs = 0;
      remapper.remap(worker, batch);
      for (const w of batch.warnings) noteWarning(counters, w, input.onDocumentWarning);
      if (batch.last) counters.fileBytesDone += input.fileBytes?.[batch.seq] ?? 0;
      for (const s of batch.skips) {
        counters.skippedCount++;
        if (counters.skipped.length < MAX_LISTED_SKIPS) counters.skipped.push(s);
        input.onSkip?.(s);
      }
      counters.documents += batch.externalIds.length;
      counters.bytes += batch.bytes;
      counters.pairs += batch.pairCount;
      // Copy the batch into blocks, flushing each block as it fills.
      let from = 0;
      while (from < batch.pairCount) {
        const take = Math.min(batch.pairCount - from, current.capacity - current.count);
        current.pairs.set(batch.pairs.subarray(2 * from, 2 * (from + take)), 2 * current.count);
        current.count += take;
        from += take;
        if (current.full) {
          const tFlush = performance.now();
          await flush();
          flushMs += performance.now() - tFlush;
        }
      }
      // 'fill': main-thread time to remap and copy batches into blocks (flushes excluded).
      clock.add('fill', performance.now() - tBatch - flushMs);
      pool.consumed(arrival);
      if (signal?.aborted) throw new AbortError();
      input.onProgress?.(counters);
    }
    await flush();
    if (inflight) {
      const t0 = performance.now();
      await inflight;
      sortWaitMs += performance.now() - t0;
    }
  } finally {
    if (inflight) await inflight.catch(() => {});
    await pool.close();
  }
  for (const t of pool.times) {
    clock.add('parseWorkers', t.busyMs);
  }
  return { runPaths: sink.runPaths, counters, sorterKind: sink.sorterKind, workerTimes: pool.times, sortWaitMs, batchWaitMs };
}
