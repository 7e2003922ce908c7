/**
 * The memory plan of a build: splits the --memory budget between what the process already holds
 * and what the build allocates for pairs, buffers and queues, and sizes each of those.
 *
 *   budget = baseline                      process RSS when the plan is made (modules loaded,
 *                                          sorter/GPU opened, no worker started yet)
 *          + workers × PARSE_WORKER_BYTES  each parse worker: isolate (young generation capped
 *                                          at WORKER_YOUNG_GENERATION_MB), tokenizer tables,
 *                                          read buffers, its batch arrays
 *          + MAIN_HEAP_BYTES               main-thread heap headroom: young generation, batches
 *                                          being deserialized and remapped
 *          + inflight                      batches sent and not yet consumed: workers × credits
 *          + ahead                         batches held ahead of crawl order (2+ workers only)
 *          + lexicons                      parse workers with lexicons of their own: LEXICON_SHARE
 *                                          (half) of what the above leave, split between them; a
 *                                          worker's lexicon past its part is closed as a
 *                                          generation and written to disk (worker-lexicon.ts)
 *          + blocks                        host blocks (1, or 2 in the overlapped schedule) and
 *                                          the sorter's per-pair buffers (CPU scratch, GPU
 *                                          staging and readback)
 *
 * What else grows with the crawl (the shared term dictionary of builds with fewer workers or
 * --resume, and the document table) is outside the budget: the summary reports it
 * (dictionaryBytes) and the budget bounds peak RSS minus it.
 * The merge runs after the workers and blocks are gone and gets the budget less the baseline
 * and the main-thread headroom (mergeBytes), and less the host blocks where they are
 * SharedArrayBuffers (a sorter on another thread: GpuSort on the GPU thread): those cannot be
 * freed on demand, only dropped, so they may still be resident while the merge runs.
 *
 * The constants were measured on a 2-core x86-64 machine with Node 20 on the 1 GB synthetic
 * crawl (`gen-corpus --size 1GB --seed 7 --file-size 32MB`), see docs/API.md (Memory).
 */
import { integerFromEnv } from '../../runtime/env-knobs.js';
import { UserError } from '../../src/shared/errors.js';
import { MAX_BLOCK_PAIRS } from '../../src/shared/options.js';
import { batchArrayWords } from '../parse/parse-messages.js';

const MiB = 2 ** 20;

/**
 * Peak RSS a parse worker adds, with its young generation capped at WORKER_YOUNG_GENERATION_MB:
 * measured as the peak RSS difference of builds with 1, 2 and 3 workers (~40 MiB: ~16 MiB young
 * generation, ~12 MiB old generation of modules, tokenizer and caches, ~10 MiB of malloc'd read
 * buffers and batch arrays), with headroom. 48 MiB held on the 2-core machine but not on the H100
 * machine (11 workers at --memory 1GiB: working set 1050.6 MiB), hence 56.
 * Worker-local term tables are dictionary, not this.
 */
export const PARSE_WORKER_BYTES = 56 * MiB;
/** resourceLimits.maxYoungGenerationSizeMb of each parse worker (the default lets it reach ~48 MiB). */
export const WORKER_YOUNG_GENERATION_MB = 16;

/**
 * The parse workers' young generation cap in MiB, for builds and for the bench's parse-alone
 * runs alike (so that both columns run the same workers): GPUINDEX_WORKER_YOUNG_MB (a benchmark
 * knob; 0 = V8's default; PARSE_WORKER_BYTES is measured at the default cap, not at others),
 * else WORKER_YOUNG_GENERATION_MB. undefined: no cap.
 */
export function workerYoungGenerationMb(): number | undefined {
  const mb = integerFromEnv('GPUINDEX_WORKER_YOUNG_MB', 0, 1024) ?? WORKER_YOUNG_GENERATION_MB;
  return mb === 0 ? undefined : mb;
}
/**
 * Main-thread heap growth during parse (young generation, deserialized batches, V8's slack
 * around the growing dictionary) beyond the baseline. 24 MiB held on the CPU path; with a
 * software Vulkan adapter probed first, 2 workers exceeded the bound by ~10 MiB, hence 40.
 */
export const MAIN_HEAP_BYTES = 40 * MiB;
/** Share of the budget kept back for allocator and heap slack (the plan otherwise fills the budget exactly). */
export const SLACK_SHARE = 0.03;
/** Peak RSS one merge worker thread adds (isolate, modules, its postings buffers), beyond its run cursors. */
export const MERGE_WORKER_BYTES = 24 * MiB;
/** Peak RSS the parallel merge's hash thread adds (merge/hash-thread.ts): isolate 11.3 MiB measured, four 1 MiB chunks. */
export const HASH_THREAD_BYTES = 16 * MiB;
/**
 * Batches a worker may have sent and not yet seen consumed (the SyncSend bound). 8, not 2: on
 * the H100 machine (15 workers, 2 GB crawl) 2 left the parsers waiting whenever the main thread
 * was busy filling a block: gpu+ took 10.97 s with 2, 8.40 s with 8.
 */
export const CREDITS = 8;
/** Largest worker batch, in pairs. */
export const MAX_BATCH_PAIRS = 1 << 16;
/** Bytes per pair of a host block (u32 termID, u32 docID). */
export const PAIR_BYTES = 8;
/** The smallest block the plan derives (an explicit --block-size may be smaller). */
export const MIN_PLANNED_BLOCK_PAIRS = 1 << 16;
/** Derived block sizes are multiples of this (so that small changes of the baseline rarely change them). */
const BLOCK_QUANTUM = 1 << 16;
/** The measured baseline is rounded up to this (same reason). */
const BASELINE_QUANTUM = 4 * MiB;
/** Default worker count may be lowered so that workers take at most this share of what is left. */
const WORKER_SHARE = 0.75;
/**
 * Share of what the process, main heap and parse workers leave that the workers' own lexicons
 * may hold, together; the blocks get the rest. Half: both grow with the crawl, and halving the
 * blocks costs less than closing generations does. 16-core H200, default --memory 4 GiB, 15
 * workers, 1 GB crawl of the mail-fitted growing vocabulary: a quarter closed 48-50 generations
 * (parse workers busy 3.01 s, union 1.09 s, medians of 3), half closed none (2.54 s, 0.70 s);
 * the fixed-vocabulary 1 GB crawl built in 3.74 and 3.78 s (bench/device.sh spill).
 */
export const LEXICON_SHARE = 0.5;

export interface MemoryPlanRequest {
  /** --memory, in bytes. */
  budgetBytes: number;
  /** Process RSS now (measureBaseline()). */
  baselineBytes: number;
  /** Parse workers asked for; 0 when the documents are parsed on the main thread (no workers). */
  workers: number;
  /** The user chose `workers`: the plan never lowers it (a default it lowers to fit). */
  workersExplicit: boolean;
  /** Host blocks: 1 (sequential schedule) or 2 (overlapped: one filled while one is sorted). */
  hostBlocks: 1 | 2;
  /** Host bytes the sorter holds per pair of block capacity (PairSorter.hostBytesPerPair). */
  sorterBytesPerPair: number;
  /** Host blocks are SharedArrayBuffers (PairSorter.sharedBlocks): the merge's share leaves room for them. */
  sharedBlocks?: boolean;
  /** The largest block the sorter takes (GPU binding limit); default MAX_BLOCK_PAIRS. */
  maxBlockPairs?: number;
  /** An explicit --block-size (pairs). */
  blockSize?: number;
  /** Credits per worker; default CREDITS (benchmarks vary it through GPUINDEX_CREDITS). */
  credits?: number;
  /** Fewest workers for which they keep lexicons of their own (worker-lexicons-pipeline.ts); absent: never. */
  ownLexiconsFrom?: number;
}

export interface MemoryPlan {
  budgetBytes: number;
  /** The measured baseline, rounded up to 4 MiB. */
  baselineBytes: number;
  workers: number;
  /** Set when the default worker count was lowered to fit the budget (a notice for the user). */
  workersLowered?: string;
  /** workers × PARSE_WORKER_BYTES. */
  workerBytes: number;
  mainHeapBytes: number;
  blockPairs: number;
  /** Host blocks and sorter buffers: blockPairs × (8 × hostBlocks + sorterBytesPerPair). */
  blockBytes: number;
  batchPairs: number;
  credits: number;
  /** Batches sent and not yet consumed: workers × credits × batch arrays. */
  inflightBytes: number;
  /** Bound on the batches held ahead of crawl order (ParsePool maxBufferedBytes). */
  aheadBytes: number;
  /** What the parse workers' own lexicons may hold, together (0: the workers keep none). */
  lexiconBytes: number;
  /** What the merge may use for its buffers (passed to writeIndex). */
  mergeBytes: number;
}

/** Process RSS now: call after the sorter is opened and before any worker starts. */
export function measureBaseline(): number {
  return process.memoryUsage.rss();
}

const mib = (bytes: number): string => `${Math.ceil(bytes / MiB)} MiB`;
const ceilTo = (x: number, q: number): number => Math.ceil(x / q) * q;

/** Bytes of one worker batch's pairs array. */
export function batchArrayBytes(batchPairs: number): number {
  return 4 * batchArrayWords(batchPairs);
}

/** Splits the budget; throws a one-line UserError when it cannot hold the build. */
export function planMemory(req: MemoryPlanRequest): MemoryPlan {
  const budget = Math.floor(req.budgetBytes);
  const baseline = ceilTo(req.baselineBytes, BASELINE_QUANTUM);
  const maxBlock = Math.max(1, Math.floor(Math.min(req.maxBlockPairs ?? MAX_BLOCK_PAIRS, MAX_BLOCK_PAIRS)));
  const perPair = PAIR_BYTES * req.hostBlocks + req.sorterBytesPerPair;
  // Allocator and heap slack grow with what the build allocates: a share of the budget on top.
  const mainHeap = MAIN_HEAP_BYTES + Math.ceil(SLACK_SHARE * budget);
  const explicit = req.blockSize;
  const credits = req.credits ?? CREDITS;

  /** Bytes of blocks, sorter and queues for `blockPairs` and `workers`. */
  const pairsAndQueues = (blockPairs: number, workers: number) => {
    const batchPairs = Math.max(1, Math.min(MAX_BATCH_PAIRS, blockPairs));
    const batch = batchArrayBytes(batchPairs);
    const inflight = workers * credits * batch;
    // Out-of-order batches exist only with 2+ workers: up to one block's pairs, at least 4 batches a worker.
    const ahead = workers >= 2 ? Math.max(PAIR_BYTES * blockPairs, 4 * workers * batch) : 0;
    return { batchPairs, inflight, ahead, total: perPair * blockPairs + inflight + ahead };
  };
  const ownLexicons = (workers: number) => req.ownLexiconsFrom !== undefined && workers >= req.ownLexiconsFrom;
  const held = (workers: number) => baseline + mainHeap + workers * PARSE_WORKER_BYTES;
  // With an explicit --block-size the lexicons take what the blocks leave instead (below).
  const lexicons = (workers: number) => (ownLexicons(workers) && explicit === undefined ? Math.floor(LEXICON_SHARE * Math.max(0, budget - held(workers))) : 0);
  /** What is not blocks and queues: the process, the workers and their lexicons. */
  const fixed = (workers: number) => held(workers) + lexicons(workers);
  const minBlock = explicit ?? Math.min(MIN_PLANNED_BLOCK_PAIRS, maxBlock);
  const needed = (workers: number) => fixed(workers) + pairsAndQueues(minBlock, workers).total;

  let workers = req.workers;
  let workersLowered: string | undefined;
  if (!req.workersExplicit && workers > 1) {
    // Parse workers may take WORKER_SHARE of what the baseline leaves; blocks and queues the rest.
    const afford = Math.floor((WORKER_SHARE * (budget - baseline - mainHeap)) / PARSE_WORKER_BYTES);
    let fit = Math.max(1, Math.min(workers, afford));
    while (fit > 1 && needed(fit) > budget) fit--;
    if (fit < workers) workersLowered = `--memory ${mib(budget)} affords ${fit} parse worker(s) of ${mib(PARSE_WORKER_BYTES)} each (not ${workers}); raise --memory for more`;
    workers = fit;
  }

  const tooSmall = () => {
    const parts = [`process ${mib(baseline)}`, ...(workers > 0 ? [`${workers} parse worker(s) × ${mib(PARSE_WORKER_BYTES)}`] : []), ...(lexicons(workers) > 0 ? [`their lexicons ${mib(lexicons(workers))}`] : []), `main heap ${mib(mainHeap)}`, `blocks and queues ${mib(pairsAndQueues(minBlock, workers).total)}`];
    return new UserError(`--memory ${mib(budget)} is too small for this build: it needs at least ${mib(needed(workers))} (${parts.join(', ')})`);
  };

  let blockPairs: number;
  if (explicit !== undefined) {
    const need = fixed(workers) + pairsAndQueues(explicit, workers).total;
    if (need > budget) {
      if (needed(workers) > budget && explicit <= MIN_PLANNED_BLOCK_PAIRS) throw tooSmall();
      const fits = largestBlock(budget - fixed(workers), workers, pairsAndQueues, maxBlock);
      const hint = fits >= 1 ? `--block-size ${fits} or less, or --memory ${mib(need)} or more` : `--memory ${mib(need)} or more`;
      throw new UserError(
        `--block-size ${explicit} needs ${mib(pairsAndQueues(explicit, workers).total)} for blocks, sort buffers and queues, but --memory ${mib(budget)} leaves ${mib(Math.max(0, budget - fixed(workers)))} after the process (${mib(baseline)}), ${workers} parse worker(s) (${mib(workers * PARSE_WORKER_BYTES)}) and main heap (${mib(mainHeap)}); use ${hint}`,
      );
    }
    blockPairs = explicit;
  } else {
    if (needed(workers) > budget) throw tooSmall();
    blockPairs = largestBlock(budget - fixed(workers), workers, pairsAndQueues, maxBlock);
    const quantum = blockPairs >= 4 * BLOCK_QUANTUM ? BLOCK_QUANTUM : 1024;
    blockPairs = Math.max(minBlock, Math.floor(blockPairs / quantum) * quantum);
  }
  const q = pairsAndQueues(blockPairs, workers);
  return {
    budgetBytes: budget,
    baselineBytes: baseline,
    workers,
    ...(workersLowered ? { workersLowered } : {}),
    workerBytes: workers * PARSE_WORKER_BYTES,
    mainHeapBytes: mainHeap,
    blockPairs,
    blockBytes: perPair * blockPairs,
    batchPairs: q.batchPairs,
    credits,
    inflightBytes: q.inflight,
    aheadBytes: q.ahead,
    lexiconBytes: explicit === undefined ? lexicons(workers) : ownLexicons(workers) ? Math.max(0, budget - held(workers) - q.total) : 0,
    mergeBytes: Math.max(0, budget - baseline - mainHeap - (req.sharedBlocks ? PAIR_BYTES * req.hostBlocks * blockPairs : 0)),
  };
}

/** The largest block (pairs) whose blocks, sorter buffers and queues fit `room` bytes; 0 if none. */
function largestBlock(room: number, workers: number, cost: (blockPairs: number, workers: number) => { total: number }, maxBlock: number): number {
  if (cost(1, workers).total > room) return 0;
  let lo = 1;
  let hi = maxBlock;
  if (cost(hi, workers).total <= room) return hi;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (cost(mid, workers).total <= room) lo = mid;
    else hi = mid;
  }
  return lo;
}

/**
 * Merge threads within the plan's mergeBytes: a default count is lowered so that the threads'
 * isolates take at most half of it (the rest reads runs); an explicit count is kept. Returns
 * the count and the bytes left for run cursors.
 */
export function planMerge(mergeBytes: number, threads: number, explicit: boolean): { threads: number; cursorBytes: number } {
  let t = Math.max(1, threads);
  // Threads come with the hash thread of postings.bin (writeIndexParallel); one thread merges alone.
  const threadsBytes = (n: number) => n * MERGE_WORKER_BYTES + HASH_THREAD_BYTES;
  if (!explicit) while (t > 1 && threadsBytes(t) > mergeBytes / 2) t--;
  const workerBytes = t > 1 ? threadsBytes(t) : 0;
  return { threads: t, cursorBytes: Math.max(0, mergeBytes - workerBytes) };
}
