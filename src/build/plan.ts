/** The plan stage: the sorter and schedule, the memory plan, the crawl's listing and its parse tasks. */
import { ownLexiconsFrom, useWorkerLexicons, workerBlockPairs } from '../../indexer/pipeline/worker-lexicons-pipeline.js';
import { expectedCrawlPairs } from '../../indexer/plan/crawl-pairs.js';
import { plannedFileSizes } from '../../indexer/parse/file-sizes.js';
import { measureBaseline, PAIR_BYTES, planMemory, type MemoryPlan, type MemoryPlanRequest } from '../../indexer/plan/memory-plan.js';
import { resolvePipeline, type ResolvedPipeline } from '../../indexer/pipeline/schedule-choice.js';
import { planPieceTasks, planTasks, rangeBytesFor, tailCutFor, WORKER_LEXICONS_TAIL_RANGE_BYTES, type ParseTask } from '../../indexer/parse/jsonl-ranges.js';
import { shardPieces, type Shard } from '../../indexer/parse/shards.js';
import { listCorpusFiles, type CorpusListing } from '../../indexer/corpus/index.js';
import { spareWorkerBytes, spareWorkersLoaded } from '../../indexer/parse/parse-worker-spares.js';
import { integerFromEnv } from '../../runtime/env-knobs.js';
import { defaultWorkers, type BuildContext, type BuildState } from './context.js';
import type { GpuSortThread } from '../../gpu/sort-thread.js';


/** The sorter and schedule, the memory plan, and the crawl's listing. */
export interface BuildPlan {
  pipeline: ResolvedPipeline;
  memory: MemoryPlan;
  /** The process RSS the plan started from, less the host's and spare workers'. */
  baselineBytes: number;
  blockSize: number;
  /** Parse workers (the plan may lower the default); 0 for documents parsed in process. */
  workers: number;
  listing?: CorpusListing;
  /** The listing's planned file sizes (plannedFileSizes), where the plan took them: for `files` only. */
  plannedSizes?: { files: readonly string[]; sizes: number[] };
}

export async function planBuild(c: BuildContext, state: BuildState): Promise<BuildPlan> {
  // The crawl is listed while a named sorter is chosen: the GPU probe (a thread that loads the
  // device and asks for an adapter) leaves this thread idle, and the walk of 200,000 small files
  // (readdir in the thread pool) is most of a folder build's set-up. The default choice weighs
  // the listing first.
  const listed = c.root ? listCorpusFiles(c.root) : undefined;
  listed?.catch(() => {});
  // The default choice weighs the crawl and the workers first (cpuByDefault): opening a GPU
  // that would sort nothing, or hold up more workers than its one thread keeps up with, costs
  // the build more than the GPU gives.
  const weighed = listed && isDefaultChoice(c) ? await cpuByDefault(c, await listed) : undefined;
  const pipeline = weighed?.cpu ? await resolvePipeline('cpu') : await resolvePipeline(c.options.pipeline, c.options.sorter, c.options.gpuSort);
  state.sorter = pipeline.sorter;
  if (pipeline.notice) c.notice(pipeline.notice);
  // The memory plan: --memory less the process as it stands now (modules loaded, sorter open, no
  // worker yet), and what the GPU's kernels, compiling in the background, will add.
  // Parse workers the CLI started ahead are counted with the workers, not in the baseline.
  await spareWorkersLoaded();
  const baselineBytes = Math.max(0, measureBaseline() - c.hostBytes - spareWorkerBytes()) + (pipeline.sorter.compilingBytes ?? 0);
  const request = requestFor(c, baselineBytes, pipeline.schedule, pipeline.sorter);
  await chooseGpuAlgorithm(pipeline, (bytes) => planMemory(request(bytes)), c.notice);
  const memory = planMemory(request(pipeline.sorter.hostBytesPerPair ?? 0));
  if (memory.workersLowered) c.notice(memory.workersLowered);
  const listing = await listed;
  return { pipeline, memory, baselineBytes, blockSize: memory.blockPairs, workers: c.root ? memory.workers : 0, listing, plannedSizes: weighed?.sizes && listing && { files: listing.files, sizes: weighed.sizes } };
}

/** The memory plan's request for a schedule and sorter, less the sorter's host bytes a pair. */
function requestFor(c: BuildContext, baselineBytes: number, schedule: ResolvedPipeline['schedule'], sorter: { sharedBlocks?: boolean; maxPairs?: number }) {
  const hostBlocks = c.root && schedule === 'overlapped' ? 2 : 1;
  // --positions: a block's positions in fill order and in sorted order (run-positions.ts), u32 each.
  const positionsBytesPerPair = c.options.positions ? 8 * hostBlocks : 0;
  return (sorterBytesPerPair: number): MemoryPlanRequest => ({
    budgetBytes: c.memoryBytes,
    baselineBytes,
    workers: c.root ? c.workers : 0,
    workersExplicit: c.options.workers !== undefined,
    hostBlocks,
    sorterBytesPerPair: sorterBytesPerPair + positionsBytesPerPair,
    sharedBlocks: sorter.sharedBlocks,
    maxBlockPairs: sorter.maxPairs,
    blockSize: c.explicitBlockSize,
    credits: creditsFromEnv(),
    ownLexiconsFrom: ownLexiconsFrom(c.options.resume === true),
  });
}

/** Neither --pipeline nor --sorter names a sorter: the build chooses. */
function isDefaultChoice(c: BuildContext): boolean {
  return (c.options.pipeline ?? 'auto') === 'auto' && (c.options.sorter ?? 'auto') === 'auto';
}

/** Host bytes a pair the GPU sorter asks of a hardware adapter (gpu/gpu-sorter.ts: upload and readback). */
const GPU_HOST_BYTES_PER_PAIR = 16;
/** What an open GPU adds to the baseline the plan starts from (372-392 MB against 63 MB without, 16-core H200 machine). */
const GPU_BASELINE_BYTES = 320 * 2 ** 20;

/**
 * Parse workers one GPU thread keeps supplied with sorted blocks: it uploads, sorts, reads back
 * and writes every run in turn. The 8 GB crawl with 31 workers (32-core H200 machine): each
 * worker waited 1.2 s for its blocks, Indexgpu+ 797 MB/s against Indexcpu's 965-1,017; with 32
 * on 64 cores 880 against 959; with 15 on 16 cores the two are even.
 */
export const MAX_WORKERS_A_GPU_THREAD = 16;

/**
 * Whether the default sorts on the CPU without opening the GPU. Only with lexicons of the
 * workers' own, which fill and sort blocks of their own (the shared dictionary's blocks all go
 * to the sorter), and then when either:
 * - the workers outnumber MAX_WORKERS_A_GPU_THREAD: the one GPU thread would hold them up;
 * - the parse workers, planned as Indexgpu+ would plan them, are expected to hold the whole
 *   crawl in their first blocks (expectedCrawlPairs against each worker's block: its share of
 *   the plan's three block-sized arrays, in two blocks). Each worker's one block is then its
 *   last, which it sorts itself whatever the sorter (WorkerBlocks.finish): the GPU would sort
 *   nothing.
 * Also the crawl's planned file sizes, which the parse plan reuses.
 */
async function cpuByDefault(c: BuildContext, listing: CorpusListing): Promise<{ cpu: boolean; sizes: number[] }> {
  const sizes = plannedFileSizes(listing.base, listing.files);
  const expected = expectedCrawlPairs(listing.files, sizes) / (c.shard?.count ?? 1);
  await spareWorkersLoaded();
  const baselineBytes = Math.max(0, measureBaseline() - c.hostBytes - spareWorkerBytes()) + GPU_BASELINE_BYTES;
  let plan: MemoryPlan;
  try {
    plan = planMemory(requestFor(c, baselineBytes, 'overlapped', { sharedBlocks: true })(GPU_HOST_BYTES_PER_PAIR));
  } catch {
    return { cpu: false, sizes }; // the budget is too small for it: the usual choice says why
  }
  if (!useWorkerLexicons(plan.workers, c.options.resume === true)) return { cpu: false, sizes };
  if (plan.workers > MAX_WORKERS_A_GPU_THREAD) return { cpu: true, sizes };
  const perWorker = workerBlockPairs(plan.blockPairs, plan.workers, 3, 2);
  return { cpu: expected <= plan.workers * perWorker, sizes };
}

/**
 * --gpu-sort auto: the radix sort when the memory plan gives it as large a block (and as many
 * workers) as the network and the device can allocate its buffers for that block; else the
 * network (with a notice when the device refused). Identical runs either way.
 */
async function chooseGpuAlgorithm(pipeline: ResolvedPipeline, plan: (sorterBytesPerPair: number) => MemoryPlan, notice: (line: string) => void): Promise<void> {
  const sorter = pipeline.sorter as Partial<GpuSortThread>;
  if (sorter.algorithm !== 'auto' || !sorter.hostBytesPerPairOf || !sorter.choose) return;
  const network = plan(sorter.hostBytesPerPairOf.bsn);
  let radix: MemoryPlan | undefined;
  try {
    radix = plan(sorter.hostBytesPerPairOf.radix);
  } catch {
    radix = undefined; // the budget holds the network's buffers only
  }
  const fits = radix !== undefined && radix.blockPairs >= network.blockPairs && radix.workers >= network.workers;
  const chosen = await sorter.choose(fits ? 'radix' : 'bsn', fits ? radix!.blockPairs : network.blockPairs);
  if (chosen.reason) notice(`--gpu-sort auto: ${chosen.reason}; sorting with the bitonic network`);
}

/**
 * GPUINDEX_CREDITS: batches a parse worker may have in flight (default 8). A benchmark knob
 * (docs/architecture.md, Environment knobs), not an option: the memory plan counts whatever it is.
 */
export function creditsFromEnv(): number | undefined {
  return integerFromEnv('GPUINDEX_CREDITS', 1, 64);
}

/**
 * A crawl's parse tasks for blocks of `blockSize` pairs. The ranges are sized for the default
 * worker count, not --workers, so that a --resume with another worker count numbers the same
 * tasks; the bound on batches ahead of crawl order they are sized against is one block's pairs
 * (the least the memory plan gives).
 */
export function planParseTasks(base: string, files: readonly string[], sizes: readonly number[], blockSize: number, shard?: Shard, workerLexicons = false): ParseTask[] {
  const workers = defaultWorkers();
  const rangeBytes = rangeBytesFor(workers, PAIR_BYTES * blockSize);
  const tail = tailCutFor(workers, rangeBytes, workerLexicons ? WORKER_LEXICONS_TAIL_RANGE_BYTES : undefined);
  return shard ? planPieceTasks(base, shardPieces(base, files, sizes, shard), rangeBytes, tail) : planTasks(base, files, sizes, rangeBytes, tail);
}
