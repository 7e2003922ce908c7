/**
 * Parse and sort with lexicons of the workers' own: each parse worker analyses its tokens,
 * numbers its terms and fills, seals and (CPU sorter) sorts and writes its own blocks
 * (fill/worker-lexicon.ts, fill/worker-blocks.ts); with GpuSort it hands its sealed blocks to
 * the GPU thread through this thread. This thread takes the batches' documents in crawl order
 * (the document table, and each worker's document numbers -> docIDs) and nothing per pair or
 * per term. At the end the workers' lexicons are united by term (merge/lexicon-union.ts), and
 * the merge maps every run's keys and document numbers through its worker's lexicon
 * (merge/run-lexicons.ts). The index is byte for byte the one the shared dictionary gives
 * (runWorkerPipeline), whatever the worker count.
 */
import { AbortError } from '../../src/shared/errors.js';
import { integerFromEnv } from '../../runtime/env-knobs.js';
import { grown } from '../../runtime/grown.js';
import { availableParallelism } from 'node:os';
import { uniteLexicons } from '../../merge/lexicon-union.js';
import { collectFullHeap } from '../../runtime/full-gc.js';
import { LexiconGenerations, type GenerationOf } from '../fill/lexicon-generations.js';
import type { RunLexicon, RunLexicons } from '../../merge/run-lexicons.js';
import { addBatchDocuments } from '../fill/batch-remapper.js';
import { MIN_PLANNED_BLOCK_PAIRS, CREDITS } from '../plan/memory-plan.js';
import { LineNumbering } from '../parse/jsonl-ranges.js';
import { ParsePool } from '../parse/parse-pool.js';
import { workerNicenessFromEnv } from '../parse/thread-priority.js';
import { RunSink } from '../sort/run-sink.js';
import { newCounters, type ParseCounters } from './in-process-pipeline.js';
import { batchesTimed, countBatch, countSkip, settleMeanwhile, type WorkerPipelineInput, type WorkerPipelineResult } from './worker-pipeline.js';

/** The united lexicon of a build whose workers kept their own (WorkerPipelineResult.lexicon). */
export interface UnitedLexicon {
  termCount: number;
  /** Every term in code point order (termID t is the t-th), as LexiconUnion.texts. */
  termTexts: string[];
  /** Terms in each of termTexts. */
  termTextTerms: number[];
  runLexicons: RunLexicons;
  /** Bytes the above hold through the merge (each generation's order and finals, the texts): the merge's share less these. */
  heldBytes: number;
}

/**
 * Pairs in each worker's block: the plan's pair arrays shared out between the workers, each of
 * which holds two arrays of that size (two blocks, or one and its scratch) or one (Indexgpu).
 * The plan's arrays are its host blocks (two in the overlapped schedule, or one and the CPU
 * sorter's scratch) and the batches held ahead of crawl order (a block's pairs), which carry no
 * pairs here. GPUINDEX_WORKER_BLOCK_PAIRS overrides it (a benchmark knob).
 */
export function workerBlockPairs(blockSize: number, workers: number, planArrays: number, workerArrays: number): number {
  const knob = integerFromEnv('GPUINDEX_WORKER_BLOCK_PAIRS', 1, 1 << 28);
  if (knob !== undefined) return knob;
  const share = Math.floor((planArrays * blockSize) / (workers * workerArrays));
  return Math.max(Math.min(blockSize, MIN_PLANNED_BLOCK_PAIRS), Math.min(blockSize, share));
}

/**
 * Fewest parse workers for which they keep their own lexicons. Below it the shared dictionary
 * is the better design: one worker bounds the parse on a small machine, and the main thread,
 * otherwise idle, takes its stemming and term numbering off it (worker-pipeline.ts).
 */
export const WORKER_LEXICONS_MIN_WORKERS = 4;

/**
 * Terms in all the workers' lexicons below which they are united while the workers write their
 * last runs (on this thread: lexicon-union.ts unites fewer than 2^20 on the caller's thread),
 * not after: 70-170 ms of the HTML crawl's and the 8 GB crawl's builds were spent there with
 * every worker done.
 */
const EARLY_UNION_MAX_TERMS = 1 << 20;

/**
 * The fewest workers for which a build keeps a lexicon per worker: WORKER_LEXICONS_MIN_WORKERS;
 * never with --resume (checkpoints record the shared dictionary). GPUINDEX_WORKER_LEXICONS=0 or 1
 * forces it off or on (a benchmark and test knob; on still needs 2 workers and no --resume).
 */
export function ownLexiconsFrom(resume: boolean): number | undefined {
  if (resume) return undefined;
  const knob = integerFromEnv('GPUINDEX_WORKER_LEXICONS', 0, 1);
  if (knob !== undefined) return knob === 1 ? 2 : undefined;
  return WORKER_LEXICONS_MIN_WORKERS;
}

/** Whether a build of `workers` parse workers keeps a lexicon per worker (ownLexiconsFrom). */
export function useWorkerLexicons(workers: number, resume: boolean): boolean {
  const from = ownLexiconsFrom(resume);
  return from !== undefined && workers >= from;
}

/**
 * Each worker's share of lexiconBytes, past which its lexicon closes a generation; and
 * GPUINDEX_GENERATION_TERMS, a test knob that closes one every that many terms.
 */
function generationBounds(lexiconBytes: number | undefined, workers: number): { lexiconBytes?: number; generationTerms?: number } {
  const terms = integerFromEnv('GPUINDEX_GENERATION_TERMS', 1, 2 ** 31);
  return {
    ...(lexiconBytes ? { lexiconBytes: Math.max(1, Math.floor(lexiconBytes / workers)) } : {}),
    ...(terms !== undefined ? { generationTerms: terms } : {}),
  };
}

/** Each worker's document numbers -> docIDs, growing in crawl order. */
class DocIdTable {
  ids = new Uint32Array(1024);
  count = 0;
  pushRange(first: number, n: number): void {
    if (this.count + n > this.ids.length) this.ids = grown(this.ids, this.count + n, this.count);
    for (let i = 0; i < n; i++) this.ids[this.count++] = first + i;
  }
}

export async function runWorkerLexiconsPipeline(input: WorkerPipelineInput): Promise<WorkerPipelineResult> {
  const { clock, signal, documents } = input;
  const workers = Math.max(1, input.workers);
  const batchPairs = input.batchPairs ?? Math.max(1, Math.min(1 << 16, input.blockSize));
  const sortHere = !input.sorter.sharedBlocks;
  const overlapped = input.schedule === 'overlapped';
  const blocks = sortHere ? 1 : overlapped ? 2 : 1;
  const blockPairs = workerBlockPairs(input.blockSize, workers, (overlapped || sortHere ? 2 : 1) + 1, sortHere ? 2 : blocks);
  const pool = new ParsePool(
    input.tasks,
    workers,
    {
      root: input.root,
      corpus: input.corpus,
      tokenizer: input.tokenizer,
      batchPairs,
      credits: input.credits ?? CREDITS,
      maxYoungGenerationMb: input.maxYoungGenerationMb,
      niceness: workerNicenessFromEnv(),
      ownLexicon: { worker: 0, runDir: input.runDir, blockPairs, blocks, sortHere, ...generationBounds(input.lexiconBytes, workers), ...(input.positions ? { positions: { titleWeight: input.tokenizer.titleWeight ?? 1 } } : {}) },
      smallFilesTogether: true,
      ...(input.positions ? { positions: true } : {}),
    },
    input.maxBufferedBytes ?? 8 * batchPairs * 4 * workers,
  );
  const counters: ParseCounters = newCounters();
  counters.fileBytesTotal = input.tasks.reduce((a, t) => a + t.bytes, 0);
  const numbering = new LineNumbering(input.tasks, input.firstLines);
  const sink = new RunSink(input.sorter, input.runDir, clock, input.onWarning);
  const docIds = Array.from({ length: workers }, () => new DocIdTable());
  const generations = new LexiconGenerations(workers);
  /** Runs the workers wrote (CPU sorter), and the lexicon generation that keys each. */
  const workerRuns: string[] = [];
  const workerRunOwners: GenerationOf[] = [];
  /** Runs the sort stage wrote (GpuSort), and the lexicon generation that keys each. */
  const sinkRunOwners: GenerationOf[] = [];
  /** The sort stage takes one block at a time, in the order the workers sealed them. */
  let sorting: Promise<void> = Promise.resolve();
  let sortFailure: unknown;

  pool.onOwnMessage = (w, m) => {
    if (m.type === 'run') {
      workerRuns.push(m.path);
      workerRunOwners.push({ worker: w, generation: m.generation });
      counters.blocks++;
      counters.runBytes += m.runBytes;
      clock.mark('sort', m.pairs);
      clock.add('sort', m.sortMs);
      clock.add('writeRuns', m.writeMs);
    } else if (m.type === 'block') {
      sorting = sorting.then(async () => {
        if (sortFailure !== undefined) return pool.blockDone(w, m.block, 'the sort stage failed');
        sinkRunOwners[sink.runPaths.length] = { worker: w, generation: m.generation };
        try {
          await sink.sortAndWrite(new Uint32Array(m.buffer, 0, 2 * m.count), m.count, undefined, m.keys, m.positions);
          counters.blocks = workerRuns.length + sink.blocks;
          pool.blockDone(w, m.block);
        } catch (err) {
          sortFailure ??= err;
          pool.blockDone(w, m.block, (err as Error)?.message ?? String(err));
        }
      });
    } else if (m.type === 'lexicon-spilled') generations.spilled(w, m.generation, m.path);
    else if (m.type === 'lexicon') generations.last(w, m.generation, { terms: m.terms, order: m.order }, m.documents);
  };

  /** The workers' lexicons united by term, and each generation's run lexicon. */
  const unite = async () => {
    const tUnite = performance.now();
    // Every worker's generations, worker by worker: the spilled ones read back now.
    const all = generations.lexicons();
    const union = await uniteLexicons(
      all.map((g) => g.terms),
      availableParallelism(),
    );
    const lexicons: RunLexicon[] = all.map((g, i) => {
      const table = docIds[g.worker]!;
      const documents = generations.documents[g.worker];
      if (documents !== undefined && documents !== table.count) throw new Error(`parse worker ${g.worker} numbered ${documents} documents, its batches held ${table.count}`);
      // A worker's generations share its document numbers.
      return { order: g.order, finals: union.finals[i]!, docIds: table.ids.subarray(0, table.count) };
    });
    const lexiconGenerations = all.length;
    if (lexiconGenerations > workers) {
      // The spilled generations' terms (1.7 GB at 100 M terms) are garbage once united, but this
      // heap may hold them until its next full collection, beside the merge threads that start next.
      all.length = 0;
      collectFullHeap();
    }
    const ms = performance.now() - tUnite;
    clock.add('uniteLexicons', ms);
    return { union, lexicons, lexiconGenerations, ms };
  };
  let united: Awaited<ReturnType<typeof unite>> | undefined;

  const waited = { ms: 0 };
  let sortWaitMs = 0;
  try {
    for await (const arrival of batchesTimed(pool, clock, waited, input.whileWaiting)) {
      const { batch, worker } = arrival;
      const tBatch = performance.now();
      const emptyFile = numbering.take(batch);
      docIds[worker]!.pushRange(addBatchDocuments(documents, batch), batch.externalIds.length);
      countBatch(counters, batch, input);
      if (emptyFile) countSkip(counters, emptyFile, input);
      input.onBatchFilled?.();
      clock.add('fill', performance.now() - tBatch);
      pool.consumed(arrival);
      if (signal?.aborted) throw new AbortError();
      input.onProgress?.(counters);
    }
    input.onBatchesDone?.(counters);
    // The workers send their lexicons, then seal, sort and write their last blocks.
    const t0 = performance.now();
    await settleMeanwhile(pool.lexiconsSent, input.whileWaiting);
    // A small union runs on this thread meanwhile; a large one (threads, generations read back
    // from disk, GBs of strings) waits until the workers and their blocks are gone.
    if (!generations.anySpilled() && generations.lastTermCounts().reduce((a, n) => a + n, 0) < EARLY_UNION_MAX_TERMS) united = await unite();
    await settleMeanwhile(pool.workersFinished, input.whileWaiting);
    await settleMeanwhile(sorting, input.whileWaiting);
    sortWaitMs += performance.now() - t0 - (united?.ms ?? 0);
    if (sortFailure !== undefined) throw sortFailure;
  } finally {
    await sorting.catch(() => {});
    await pool.close();
    clock.mark('workers closed');
    await sink.release();
    clock.mark('released');
  }
  for (const t of pool.times) clock.add('parseWorkers', t.busyMs);
  counters.blocks = workerRuns.length + sink.blocks;
  counters.runBytes += sink.runBytes;

  const { union, lexicons, lexiconGenerations } = united ?? (await unite());
  const runPaths = [...workerRuns, ...sink.runPaths];
  const owners = [...workerRunOwners, ...sink.runPaths.map((_, i) => sinkRunOwners[i]!)].map((o) => generations.indexOf(o));
  return {
    runPaths,
    counters,
    sorterKind: sink.sorterKind,
    workerTimes: pool.times,
    sortWaitMs,
    batchWaitMs: waited.ms,
    workerTerms: generations.lastTermCounts(),
    lexiconGenerations,
    workerScanBytes: pool.scanTableBytes,
    // The texts are held twice while the merge threads start: here, and each thread's copy of its range.
    lexicon: { termCount: union.count, termTexts: union.texts, termTextTerms: union.textTerms, runLexicons: { lexicons, owners }, heldBytes: lexicons.reduce((a, l) => a + 8 * l.order.length, 0) + 2 * union.texts.reduce((a, t) => a + t.length, 0) },
  };
}
