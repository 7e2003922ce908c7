/**
 * The three indexers of Fig. 7 of Capannini, Silvestri and Baraglia, "Sorting on GPUs for large
 * scale datasets: a thorough comparison", over parse workers. They differ only in how parsing
 * and sorting are scheduled:
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
import type { CorpusOptions, SkippedItem } from '../corpus/index.js';
import { AbortError } from '../../src/shared/errors.js';
import { createTokenizer, type TokenizerOptions } from '../analysis/tokenizer.js';
import type { PairSorter } from '../../src/shared/types.js';
import { workerNicenessFromEnv } from '../parse/thread-priority.js';
import { BatchRemapper, type RemapState } from '../fill/batch-remapper.js';
import { comparePoint, type CheckpointLog, type ResumePoint, type RestoredState } from '../checkpoint/checkpoint.js';
import { PairBlockBuilder } from '../fill/block.js';
import { BatchPositions } from '../fill/block-positions.js';
import { alignPositions } from '../../merge/run-positions.js';
import type { TermDictionary } from '../fill/dictionary.js';
import type { DocumentTable } from '../fill/documents.js';
import { LineNumbering, type LineState, type ParseTask } from '../parse/jsonl-ranges.js';
import { ParsePool, type Arrival, type WorkerTimes } from '../parse/parse-pool.js';
import type { ParseCounters, PipelineResult } from './in-process-pipeline.js';
import type { ParsedBatch } from '../parse/parse-messages.js';
import { countNotIndexed, MAX_LISTED_SKIPS, newCounters, noteWarning } from './in-process-pipeline.js';
import { releaseBuffers } from '../../runtime/release-buffers.js';
import { integerFromEnv } from '../../runtime/env-knobs.js';
import { createHash } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { CREDITS } from '../plan/memory-plan.js';
import { RunSink } from '../sort/run-sink.js';
import type { StageClock } from './stage-clock.js';
import { TailSplit, tailMinPairsFromEnv } from '../fill/tail-split.js';
import { PostingsTally, type TalliedLexicon } from '../../merge/postings-tally.js';
import { postingsParts, type BlockPostings, type WrittenPostings } from '../../merge/doc-order-postings.js';
import type { UnitedLexicon } from './worker-lexicons-pipeline.js';

export type Schedule = 'sequential' | 'overlapped';

export interface WorkerPipelineInput {
  /** Line numbering where the first task starts inside a file (a shard's first piece, indexer/parse/shards.ts). */
  firstLines?: LineState;
  root: string;
  /** The parse tasks in crawl order: files, and ranges of large JSONL files (jsonl-ranges.ts planTasks). */
  tasks: readonly ParseTask[];
  corpus: CorpusOptions;
  tokenizer: TokenizerOptions;
  workers: number;
  schedule: Schedule;
  sorter: PairSorter;
  blockSize: number;
  /** Pairs per worker batch; default min(64Ki, blockSize). */
  batchPairs?: number;
  /**
   * Bytes of batches held ahead of crawl order (so workers run ahead of a slow file; see
   * queuedBatchBytes); default one block's pairs (8 bytes each) or 4 batches per worker if more.
   */
  maxBufferedBytes?: number;
  /** Batches a worker may have sent and not yet seen consumed; default CREDITS (memory-plan.ts). */
  credits?: number;
  /** What parse workers' own lexicons may hold together (MemoryPlan.lexiconBytes); absent or 0: unbounded. */
  lexiconBytes?: number;
  /** Each worker's young-generation cap (MiB); default V8's. */
  maxYoungGenerationMb?: number;
  runDir: string;
  dictionary: TermDictionary;
  documents: DocumentTable;
  clock: StageClock;
  signal?: AbortSignal;
  onSkip?: (item: SkippedItem) => void;
  onDocumentWarning?: (item: SkippedItem) => void;
  onProgress?: (counters: ParseCounters) => void;
  onWarning?: (message: string) => void;
  /**
   * Main-thread work to do while waiting for a batch or for the sort stage, a short piece per
   * call; returns whether more remains (buildIndex writes document rows ahead of the merge with it).
   */
  whileWaiting?: () => boolean;
  /** Called each time the fill has consumed a whole batch (its documents and first-used terms are final). */
  onBatchFilled?: () => void;
  /** Called once the last batch is in, while the last blocks are sorted: what comes next may start (its threads). */
  onBatchesDone?: (counters: ParseCounters) => void;
  /**
   * Where postings.bin goes if the whole crawl fits in one block (sequential schedule, CPU
   * sorter, no --resume): the parse worker then writes the postings from the unsorted block while
   * the caller writes the lexicon from a PostingsTally kept during the fill (result.blockPostings).
   */
  blockPostingsPath?: string;
  /** --resume: records a checkpoint after each run (and `restored`, what earlier runs hold). */
  checkpoints?: CheckpointLog;
  restored?: RestoredState;
  /** --positions: each run gets its positions file (merge/run-positions.ts). */
  positions?: boolean;
}

export interface WorkerPipelineResult extends PipelineResult {
  workerTimes: WorkerTimes[];
  /** Main-thread milliseconds spent waiting for the sort stage (overlapped schedule). */
  sortWaitMs: number;
  /** Main-thread milliseconds spent waiting for batches from the workers. */
  batchWaitMs: number;
  /** Terms in each worker's local dictionary (its last generation's, with lexicons of their own). */
  workerTerms: number[];
  /** With lexicons of their own: the generations of all workers, spilled ones and last ones. */
  lexiconGenerations?: number;
  /** Each worker's WebAssembly raw-token table in bytes (0 where it used the JS scan). */
  workerScanBytes: number[];
  /** The crawl fitted in one block, handed to a parse worker (input.blockPostingsPath); no runs then. */
  blockPostings?: BlockPostings;
  /** The workers kept their own lexicons (worker-lexicons-pipeline.ts): the united one, and the runs' maps. */
  lexicon?: UnitedLexicon;
  /** Bytes of a block kept in shared memory for postings parts, which stays until a collection: out of the merge's share. */
  sharedBlockBytes?: number;
}


export async function runWorkerPipeline(input: WorkerPipelineInput): Promise<WorkerPipelineResult> {
  const { clock, signal } = input;
  const batchPairs = input.batchPairs ?? Math.max(1, Math.min(1 << 16, input.blockSize));
  // One block for the whole crawl may go to a parse worker (see blockPostingsPath): tallied
  // until a block fills up before the end.
  const positions = input.positions === true;
  const titleWeight = input.tokenizer.titleWeight ?? 1;
  // With positions the block's pairs go through runs (the one-block path writes no run positions).
  const blockMode = !positions && input.blockPostingsPath !== undefined && input.schedule === 'sequential' && input.sorter.kind === 'cpu' && !input.sorter.sortToRun && !input.checkpoints && !input.restored;
  let tally = blockMode ? new PostingsTally() : undefined;
  /** The tally while the crawl is still one block (none sealed yet): its postings may then come from it. */
  const oneBlockTally = (): PostingsTally | undefined => (sink.blocks === 0 ? tally : undefined);
  // A one-block crawl's postings.bin is written in parts by up to this many of the workers,
  // kept for it after their last batch (the merge threads' part of such a build).
  const postingsThreads = blockMode ? Math.max(1, Math.min(input.workers, availableParallelism())) : 0;
  let blockPostings: BlockPostings | undefined;
  const pool = new ParsePool(input.tasks, Math.max(1, input.workers), {
    root: input.root,
    corpus: input.corpus,
    tokenizer: input.tokenizer,
    batchPairs,
    credits: input.credits ?? CREDITS,
    maxYoungGenerationMb: input.maxYoungGenerationMb,
    niceness: workerNicenessFromEnv(),
    // Not with --resume: its points inside batches must name the same batches on the next run.
    smallFilesTogether: !input.checkpoints && !input.restored,
    ...(positions ? { positions } : {}),
  }, input.maxBufferedBytes ?? 8 * Math.max(batchPairs * 4 * input.workers, input.blockSize), input.restored?.resumeAt.seq ?? 0, postingsThreads);
  const counters: ParseCounters = input.restored ? structuredClone(input.restored.counters) : newCounters();
  counters.fileBytesTotal = input.tasks.reduce((a, t) => a + t.bytes, 0);
  const numbering = new LineNumbering(input.tasks, input.restored?.resumeAt.lines ?? input.firstLines);
  const sink = new RunSink(input.sorter, input.runDir, clock, input.onWarning, input.checkpoints !== undefined);
  if (input.restored) sink.adopt(input.restored.runPaths, input.restored.runBytes);
  const { checkpoints, dictionary, documents } = input;
  /** Until the stream passes it: where the completed runs of a resumed build end. */
  let resumeAt: ResumePoint | undefined = input.restored?.resumeAt;
  const remapper = new BatchRemapper(input.dictionary, input.documents, pool.termIds, createTokenizer(input.tokenizer));
  // A block that may be written in parts by several workers (handOverBlock) is filled in shared
  // memory from the start: handing it over then copies nothing.
  const shared = input.sorter.sharedBlocks === true || postingsThreads > 1;
  let current = new PairBlockBuilder(input.blockSize, shared, positions);
  let spare = input.schedule === 'overlapped' ? new PairBlockBuilder(input.blockSize, shared, positions) : undefined;
  let inflight: Promise<void> | undefined;
  /** Overlapped schedule: the last blocks are handed over early, shorter (tail-split.ts). */
  const tail = spare ? new TailSplit(counters.fileBytesTotal, tailMinPairsFromEnv()) : undefined;
  let sortWaitMs = 0;
  const waited = { ms: 0 };

  const afterSort = () => {
    counters.blocks = sink.blocks;
    counters.runBytes = sink.runBytes;
    input.onProgress?.(counters);
  };

  /** After a block's run is on disk: its checkpoint (with --resume). */
  const afterRun = (pending: ReturnType<CheckpointLog['capture']> | undefined) => {
    if (pending) checkpoints!.commit(pending, sink.runPaths[pending.index]!, sink.runSha256s[pending.index]!, sink.runBytes, dictionary, documents);
    afterSort();
  };

  /** Hands the current block to Sort -> toDisk; `point` is where the stream stands when it is full. */
  const flush = async (point: ResumePoint): Promise<void> => {
    if (current.count === 0) return;
    if (signal?.aborted) throw new AbortError();
    const pending = checkpoints?.capture(sink.blocks, point, dictionary, documents, counters);
    const keys = dictionary.lexKeys();
    // Before the sort, which may reorder the block in place.
    const aligned = current.positions && alignPositions(current.pairs, current.count, current.positions, keys);
    if (!spare) {
      await sink.sortAndWrite(current.pairs, current.count, current.docBases.bases, keys, aligned);
      current.reset();
      afterRun(pending);
      return;
    }
    // Overlapped: wait for the block in the sort stage (SyncSend bound 1), then hand this one over.
    if (inflight) {
      const t0 = performance.now();
      await settleMeanwhile(inflight, input.whileWaiting);
      sortWaitMs += performance.now() - t0;
    }
    const full = current;
    current = spare;
    spare = full;
    current.reset();
    inflight = sink.sortAndWrite(full.pairs, full.count, full.docBases.bases, keys, aligned).then(() => afterRun(pending));
    inflight.catch(() => {}); // observed when awaited; avoid an unhandled rejection meanwhile
  };

  try {
    for await (const arrival of batchesTimed(pool, clock, waited, input.whileWaiting)) {
      const { batch, worker } = arrival;
      const tBatch = performance.now();
      let flushMs = 0;
      /** Hands the block over with the stream standing after `taken` pairs of this batch. */
      const flushAfter = async (taken: number): Promise<void> => {
        const tFlush = performance.now();
        const point = pointAfter(batch, taken);
        await flush({ ...point, lines: numbering.stateAt(point.seq, batch.seq) });
        flushMs += performance.now() - tFlush;
      };
      let from = 0;
      // Every batch, in crawl order (a range's line numbers depend on the ranges before it).
      const emptyFile = numbering.take(batch);
      const position = resumeAt ? comparePoint(batch.seq, batch.part, resumeAt) : 1;
      if (position < 0) {
        // Resumed build: this batch is wholly in completed runs (and in the restored state).
        remapper.learn(worker, batch);
        input.onBatchFilled?.();
        pool.consumed(arrival);
        continue;
      }
      let remap: RemapState;
      if (position === 0 && resumeAt!.inBatch) {
        // The batch the last completed block ended in: its documents are restored already.
        remap = remapper.begin(worker, batch, documents.count - batch.externalIds.length);
        from = resumeAt!.taken;
      } else {
        remap = remapper.begin(worker, batch);
        countBatch(counters, batch, input);
        if (emptyFile) countSkip(counters, emptyFile, input);
      }
      resumeAt = undefined;
      const batchPositions = positions ? new BatchPositions(batch.lengths, batch.titleLengths!, titleWeight) : undefined;
      // Copy the batch into blocks, remapped, flushing each block as it fills.
      while (from < batch.pairCount) {
        const take = Math.min(batch.pairCount - from, current.capacity - current.count);
        remapper.copy(remap, from, take, current);
        batchPositions?.fill(current.positions!, current.count, from, take);
        tally?.add(current.pairs, current.count, take, remap.docBase);
        current.count += take;
        from += take;
        if (current.full) {
          if (tally) pool.releaseKept();
          tally = undefined; // more than one block: the runs are merged as usual
          await flushAfter(from);
        }
      }
      input.onBatchFilled?.();
      if (!(oneBlockTally() && staysOneBlock(counters, current.capacity))) sink.prepareFor(current.count, current.capacity);
      tail?.note(batch.last, counters.pairs, counters.fileBytesDone);
      if (tail && current.count > 0 && tail.handOverEarly(current.count, current.capacity, counters.pairs)) await flushAfter(batch.pairCount);
      // 'fill': main-thread time to remap and copy batches into blocks (flushes excluded).
      clock.add('fill', performance.now() - tBatch - flushMs);
      pool.consumed(arrival);
      if (signal?.aborted) throw new AbortError();
      input.onProgress?.(counters);
    }
    const oneBlock = oneBlockTally();
    if (!oneBlock) input.onBatchesDone?.(counters);
    if (oneBlock && current.count > 0) {
      const order = dictionary.order();
      blockPostings = handOverBlock(pool, current, oneBlock.finish(order), order, input, counters, postingsThreads);
    }
    else await flush({ seq: input.tasks.length, part: 0, taken: 0, inBatch: false });
    if (inflight) {
      const t0 = performance.now();
      await settleMeanwhile(inflight, input.whileWaiting);
      sortWaitMs += performance.now() - t0;
    }
  } finally {
    if (inflight) await inflight.catch(() => {});
    // A block in a worker's hands: the workers close once it is written (BlockPostings.written).
    if (!blockPostings) await pool.close();
    clock.mark('workers closed');
    // Blocks and sort scratch go now, not at some later collection: the merge comes next. A
    // block in shared memory cannot be freed so: the merge's share leaves room for it (heldBytes).
    await releaseBuffers([current.pairs.buffer, spare?.pairs.buffer]);
    await sink.release();
    clock.mark('released');
  }
  for (const t of pool.times) {
    clock.add('parseWorkers', t.busyMs);
  }
  return {
    runPaths: sink.runPaths,
    counters,
    sorterKind: sink.sorterKind,
    workerTimes: pool.times,
    sortWaitMs,
    batchWaitMs: waited.ms,
    workerTerms: remapper.localTermCounts(),
    workerScanBytes: pool.scanTableBytes,
    ...(blockPostings ? { blockPostings } : {}),
    ...(shared && input.sorter.sharedBlocks !== true ? { sharedBlockBytes: 8 * current.capacity } : {}),
  };
}

/**
 * Whether the crawl, at the pairs per file byte so far, ends within 90 % of one block: then the
 * sort's scratch is not readied (CpuSorter.prepareFor). A one-block crawl is not sorted, and in
 * parts it is written from the block itself; touching a scratch as large as html-docs' block (183
 * MB) took its build 0.29 s of the main thread, and releasing it 0.15 s before the parts began.
 * Misjudged, the first sort touches its scratch itself.
 */
function staysOneBlock(counters: ParseCounters, capacity: number): boolean {
  if (counters.fileBytesDone <= 0 || counters.fileBytesTotal <= 0) return false;
  return (counters.pairs * counters.fileBytesTotal) / counters.fileBytesDone < 0.9 * capacity;
}

/**
 * Below this many pairs one worker writes postings.bin (GPUINDEX_PARTS_MIN_PAIRS sets it): each
 * part's worker reads every pair, and a block this small is written in well under 0.2 s (mail,
 * 2.2 M pairs: two parts took 0.04-0.05 s more on 2 cores than one).
 */
const PARTS_MIN_PAIRS = 1 << 22;

/**
 * The whole crawl is in `block`: the kept parse workers (`threads`) write postings.bin from it,
 * in docID order as it is, at the places the tally gives, while the caller writes the lexicon
 * from `lexicon`. One worker writes it into the CPU sorter's scratch (touched during the fill);
 * from PARTS_MIN_PAIRS, each worker a part of the lists of about equal bytes, from a shared copy
 * of the block, and the parts' bytes are hashed here in order. The lengths written are checked
 * against the tally.
 */
function handOverBlock(pool: ParsePool, block: PairBlockBuilder, lexicon: TalliedLexicon, order: Uint32Array, input: WorkerPipelineInput, counters: ParseCounters, threads: number): BlockPostings {
  const { clock } = input;
  const count = block.count;
  clock.mark('sort', count);
  const layout = { lengths: lexicon.lengths, gapBytes: lexicon.gapBytes, order, df: lexicon.df }; // copied by postMessage
  const request = {
    count,
    docBases: block.docBases.bases.slice(),
    layout,
    path: input.blockPostingsPath!,
    // The workers compute impacts.bin's contents from the bytes they write (every document is filled by now).
    documentLengths: input.documents.lengthsView().slice(),
  };
  const scratch = input.sorter.handOverScratch?.();
  const parts = threads > 1 && count >= (integerFromEnv('GPUINDEX_PARTS_MIN_PAIRS', 0, 2 ** 31) ?? PARTS_MIN_PAIRS) ? postingsParts(layout, threads) : [];
  if (parts.length <= 1) pool.releaseKept(1);
  let job: Promise<{ figures: WrittenPostings; writeMs: number }>;
  if (parts.length > 1) {
    const pairs = block.pairs.buffer;
    if (!(pairs instanceof SharedArrayBuffer)) throw new Error('a block written in parts must be in shared memory');
    job = (async () => {
      // The workers read the block where it was filled. A scratch readied for a sort that did not
      // come goes meanwhile; the workers' parts go to buffers of their own.
      const released = scratch ? releaseBuffers([scratch]) : undefined;
      closeSync(openSync(request.path, 'wx'));
      const replies = await Promise.all(parts.map((part, w) => pool.writeBlockPostings({ ...request, pairs, part }, w)));
      await released;
      return replies;
    })().then((replies) => {
      const hash = createHash('sha256');
      const figures: WrittenPostings = { sha256: '', bytes: 0, terms: 0, postings: 0, impacts: [] };
      let writeMs = 0;
      for (const r of replies) {
        if (r.type !== 'postings-part') throw new Error(`a parse worker answered ${r.type} to a part of postings.bin`);
        hash.update(r.bytes);
        figures.bytes += r.bytes.length;
        figures.terms += r.terms;
        figures.postings += r.postings;
        if (r.impacts) figures.impacts!.push(r.impacts);
        writeMs = Math.max(writeMs, r.writeMs);
      }
      figures.sha256 = hash.digest('hex');
      if (figures.impacts!.length !== replies.length) delete figures.impacts;
      return { figures, writeMs };
    });
  } else {
    job = pool.writeBlockPostings({ ...request, pairs: block.pairs.buffer as ArrayBuffer, ...(scratch ? { scratch } : {}) }).then((r) => {
      if (r.type !== 'postings') throw new Error(`a parse worker answered ${r.type} to postings.bin`);
      const { type: _, writeMs, ...figures } = r;
      return { figures, writeMs };
    });
  }
  const closed = job.then(
    () => pool.close(),
    () => pool.close(),
  );
  const written = job.then(
    ({ figures: r, writeMs }) => {
      clock.add('writeRuns', writeMs);
      counters.blocks = 1;
      // Each list's length was checked where it was written (writeDocOrderPostings).
      if (r.terms !== lexicon.terms || r.postings !== lexicon.postings || r.bytes !== lexicon.postingsBytes)
        throw new Error(`the postings written (${r.terms} terms, ${r.postings} postings, ${r.bytes} bytes) differ from the tally (${lexicon.terms}, ${lexicon.postings}, ${lexicon.postingsBytes})`);
      return r;
    },
    async (err: unknown) => {
      await closed;
      throw err;
    },
  );
  written.catch(() => {}); // observed by the caller; no unhandled rejection meanwhile
  return { lexicon, written, closed };
}

/**
 * The pool's batches in crawl order (ParsePool.batches), the time this thread waited for each
 * added to `waited.ms`; marks 'last batch' when they end.
 */
export async function* batchesTimed(pool: ParsePool, clock: StageClock, waited: { ms: number }, idle?: () => boolean): AsyncGenerator<Arrival> {
  const it = pool.batches(idle);
  for (;;) {
    const t0 = performance.now();
    const next = await it.next();
    waited.ms += performance.now() - t0;
    if (next.done) {
      clock.mark('last batch');
      return;
    }
    yield next.value;
  }
}

/** The stream position after `taken` pairs of `batch`, normalized to the next batch when whole. */
function pointAfter(batch: ParsedBatch, taken: number): ResumePoint {
  if (taken < batch.pairCount) return { seq: batch.seq, part: batch.part, taken, inBatch: true };
  return batch.last ? { seq: (batch.endSeq ?? batch.seq) + 1, part: 0, taken: 0, inBatch: false } : { seq: batch.seq, part: batch.part + 1, taken: 0, inBatch: false };
}

export function countSkip(counters: ParseCounters, s: SkippedItem, input: WorkerPipelineInput): void {
  counters.skippedCount++;
  if (counters.skipped.length < MAX_LISTED_SKIPS) counters.skipped.push(s);
  input.onSkip?.(s);
}

export function countBatch(counters: ParseCounters, batch: ParsedBatch, input: WorkerPipelineInput): void {
  for (const w of batch.warnings) noteWarning(counters, w, input.onDocumentWarning);
  if (batch.last) for (let s = batch.seq; s <= (batch.endSeq ?? batch.seq); s++) counters.fileBytesDone += input.tasks[s]?.bytes ?? 0;
  for (const s of batch.skips) countSkip(counters, s, input);
  if (batch.notIndexed) for (const [what, n] of Object.entries(batch.notIndexed)) countNotIndexed(counters.notIndexed, what, n);
  counters.documents += batch.externalIds.length;
  counters.bytes += batch.bytes;
  counters.pairs += batch.pairCount;
}

/**
 * Waits for `p`, running `idle` pieces meanwhile (one per turn of the event loop, so the
 * sort stage's callbacks still run) until it settles or `idle` has nothing left. On the H100
 * the main thread waited 0.7-1.0 s for the sort stage at 2 GB once the parse got faster, while
 * the document rows it could have written then were left to the merge (0.3-0.4 s longer).
 */
export async function settleMeanwhile(p: Promise<void>, idle?: () => boolean): Promise<void> {
  if (idle !== undefined) {
    let settled = false;
    p.then(
      () => (settled = true),
      () => (settled = true),
    );
    while (!settled && idle()) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  await p;
}
