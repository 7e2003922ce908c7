/** The merge and finish stages: runs into postings.bin and index.sqlite, then the index renamed into place. */
import { existsSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { planMerge } from '../../indexer/plan/memory-plan.js';
import { IndexRowsAhead } from '../../merge/rows-ahead.js';
import { writeIndex, writeIndexFromTally, writeIndexParallel, type PositionsTarget } from '../../merge/write-index.js';
import { POSITIONS_FILE, positionBounds } from '../../merge/positions-file.js';
import { INDEX_DB, INDEX_FORMAT_VERSION, IndexStoreWriter, POSTINGS_FILE } from '../../merge/index-store.js';
import { writeManifest } from '../../merge/manifest.js';
import { writeImpactsFile } from '../../merge/impacts.js';
import { writeImpactsParallel } from '../../merge/segment-impacts.js';
import { AbortError } from '../shared/errors.js';
import { stopStartedThreads } from '../../runtime/worker-script.js';
import { MERGE_THREAD_SCRIPT } from '../../merge/parallel-merge.js';
import type { BuildOptions } from '../shared/options.js';
import { commitOutput, resumeDirFor, startRemovingRuns, type OutputPlan } from '../output.js';
import { VERSION } from '../version.js';
import type { BuildContext, BuildState } from './context.js';
import type { BuildPlan } from './plan.js';
import type { Parsed } from './parse-sort.js';


export interface Merged {
  written: Awaited<ReturnType<typeof writeIndex>>;
  /** From the end of the parse+sort stage to the merge's start (the sorter's release). */
  releaseMs: number;
  mergeMs: number;
  documentRowsAhead: number;
}

/** merge_batches: the runs (or the one block's tally) into postings.bin and index.sqlite. */
export async function mergeRuns(c: BuildContext, plan: BuildPlan, out: OutputPlan, parsed: Parsed, state: BuildState): Promise<Merged> {
  const { options, root } = c;
  const { result, dictionary, documents } = parsed;
  const { counters, runPaths } = result;
  const mergeStart = performance.now();
  const releaseMs = mergeStart - parsed.startedAt - parsed.parseSortMs;
  // Documents given to the API have no rows written ahead: the merge writes them all.
  const rowsAhead = (state.rowsAhead ??= new IndexRowsAhead(new IndexStoreWriter(join(out.temp, INDEX_DB)), documents));
  const documentRowsAhead = rowsAhead.count;
  // Workers with lexicons of their own: the united lexicon is in termID order already, and
  // held through the merge, out of its share.
  const united = 'lexicon' in result ? result.lexicon : undefined;
  // A block filled in shared memory stays until a collection: out of the share as well.
  const sharedBlockBytes = 'sharedBlockBytes' in result ? (result.sharedBlockBytes ?? 0) : 0;
  const mergeBytes = Math.max(0, plan.memory.mergeBytes - (united?.heldBytes ?? 0) - sharedBlockBytes);
  const { threads, cursorBytes } = planMerge(mergeBytes, mergeThreadsFor(options, root ? plan.workers : 1, counters.pairs), options.mergeThreads !== undefined);
  const blockPostings = 'blockPostings' in result ? result.blockPostings : undefined;
  const contents = {
    rows: rowsAhead,
    termCount: united ? united.termCount : dictionary.size,
    terms: united ? [] : dictionary.terms,
    order: united ? new Uint32Array(0) : dictionary.order(),
    ...(united ? { runLexicons: united.runLexicons, termTexts: united.termTexts, termTextTerms: united.termTextTerms } : {}),
    lengths: documents.lengthsView(),
    documentCount: documents.count,
    totalTokens: documents.totalTokens,
    // postings.bin and the terms/docs tables depend only on the input and the analysis
    // settings; the rest records how this build ran (block size, schedule, sorter).
    settings: {
      gpuindexVersion: VERSION,
      input: root ?? '<documents>',
      tokenizer: c.tokenizer.options,
      fields: options.fields ?? null,
      blockSize: plan.blockSize,
      memoryBytes: c.memoryBytes,
      pipeline: plan.pipeline.name,
      sorter: result.sorterKind,
      workers: plan.workers,
      ...(parsed.shard ? { shard: parsed.shard } : {}),
      ...(options.positions ? { positions: true } : {}),
    },
    ...(options.positions ? { positions: positionsTarget(join(out.temp, POSITIONS_FILE), documents.lengthsView(), documents.titleLengthsView(), c.tokenizer.options.titleWeight ?? 1) } : {}),
    // The build's own runs (not a resume folder's, kept until the index is in place) go once read.
    ...(runPaths.length > 0 && runPaths.every((p) => p.startsWith(out.runDir)) ? { onRunsRead: () => startRemovingRuns(out) } : {}),
  };
  const onFraction = (f: number) => c.progress('merge', counters, f);
  // A block kept in memory is merged on this thread (merge threads read run files).
  const blockRun = 'blockRun' in result ? result.blockRun : undefined;
  // Merge threads started during the parse beyond those this merge takes (the plan may give
  // fewer within --memory) go now, not after it.
  stopStartedThreads(MERGE_THREAD_SCRIPT, !blockPostings && !blockRun && threads > 1 ? threads : 0);
  let written: Awaited<ReturnType<typeof writeIndex>>;
  try {
    written = blockPostings
      ? await writeIndexFromTally(out.temp, contents, blockPostings, counters.pairs, onFraction)
      : blockRun
        ? writeIndex(out.temp, [blockRun], contents, cursorBytes, onFraction)
        : threads > 1
          ? await writeIndexParallel(out.temp, runPaths, contents, cursorBytes, threads, onFraction)
          : await writeIndex(out.temp, runPaths, contents, cursorBytes, onFraction);
  } finally {
    // Merge threads started during the parse that the merge did not take (fewer, or none).
    stopStartedThreads();
  }
  await blockRun?.release();
  if (options.positions && written.positions?.postings !== written.stats.postings) throw new Error(`positions.bin holds ${written.positions?.postings ?? 0} postings, postings.bin ${written.stats.postings}`);
  const mergeMs = performance.now() - mergeStart;
  if (options.signal?.aborted) throw new AbortError();
  return { written, releaseMs, mergeMs, documentRowsAhead };
}

/** --positions: where positions.bin goes and what its document tables hold. */
function positionsTarget(path: string, lengths: Uint32Array, titleLengths: Uint32Array, titleWeight: number): PositionsTarget {
  return { path, titleLengths, ends: positionBounds(lengths, titleLengths, titleWeight), titleWeight };
}

/** Checksums, then the index renamed into place; any resume state of this output is moot now. */
export async function finishIndex(out: OutputPlan, parsed: Parsed, merged: Merged): Promise<void> {
  // Checksums last: index.sqlite is closed and final by now.
  // impacts.bin: built by the merge of runs or beside a one-block crawl's postings; else a pass over them
  // on every core (CPU-bound, and nothing else runs now).
  if (merged.written.impacts) writeImpactsFile(out.temp, merged.written.impacts);
  else await writeImpactsParallel(out.temp, availableParallelism(), parsed.documents.lengthsView());
  const positions = existsSync(join(out.temp, POSITIONS_FILE)) ? [POSITIONS_FILE] : [];
  writeManifest(out.temp, [INDEX_DB, POSTINGS_FILE, ...positions], INDEX_FORMAT_VERSION, { [POSTINGS_FILE]: merged.written.postingsSha256 });
  await out.runsRemoved;
  commitOutput(out);
  rmSync(resumeDirFor(out.output), { recursive: true, force: true });
  if ('blockPostings' in parsed.result) await parsed.result.blockPostings?.closed;
}

/**
 * Pairs a merge thread takes at least. A thread costs a fixed start (an isolate, its modules,
 * and its code run once, unoptimized at first) besides its share of the pairs, and the threads
 * start while the parse workers sort their last blocks, on the same cores: on the 16-core
 * machine the HTML crawl's 37 M pairs merged in 0.42-0.46 s on 8 threads against 0.55-0.64 s on
 * 15, and the whole build took 3.00-3.36 s against 3.48-3.65 s. Below it one thread merges alone.
 */
export const MERGE_PAIRS_A_THREAD = 5 << 20;

/** Merge threads: options.mergeThreads, else one per MERGE_PAIRS_A_THREAD pairs, at most one per parse worker. */
export function mergeThreadsFor(options: BuildOptions, workers: number, pairs: number): number {
  if (options.mergeThreads !== undefined) return options.mergeThreads;
  return Math.max(1, Math.min(workers, Math.ceil(pairs / MERGE_PAIRS_A_THREAD)));
}
