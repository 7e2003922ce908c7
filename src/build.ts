/**
 * buildIndex(): the whole build behind one options object, in the stages of docs/architecture.md:
 *
 *   checkOptions -> planBuild -> parseAndSort -> mergeRuns -> finishIndex -> summarize
 *
 * Each stage is a function of its own inputs, in src/build/. The CLI's `build` command is a
 * thin layer over buildIndex; a new stage goes between two of these calls.
 */
import { endSpareWorkers } from '../indexer/parse/parse-worker-spares.js';
import type { SharedInversion } from '../indexer/scan/shared-inversion.js';
import type { BufferPool } from '../runtime/buffer-pool.js';
import { storageFailure, UserError } from './shared/errors.js';
import type { BuildOptions } from './shared/options.js';
import { discardOutput, prepareOutput } from './output.js';
import { checkOptions, type BuildState } from './build/context.js';
import { planBuild } from './build/plan.js';
import { parseAndSort } from './build/parse-sort.js';
import { finishIndex, mergeRuns } from './build/merge.js';
import { stopStartedThreads } from '../runtime/worker-script.js';
import { summarize, type BuildSummary } from './build/summary.js';

export type { BuildSummary, StageReport } from './build/summary.js';
export { defaultWorkers, formatSkip } from './build/context.js';
export { planParseTasks } from './build/plan.js';
export { writeRowsAhead } from './build/parse-sort.js';

export function buildIndex(options: BuildOptions): Promise<BuildSummary> {
  return buildKeeping(options, {});
}

/** What a thread that builds index after index keeps from one build to the next (a live writer's feed thread). */
export interface KeptBetweenBuilds {
  /** The term analysis of documents given as an iterable: the index is the same bytes with or without it. */
  inversion?: SharedInversion;
  /** The block's and the CPU sorter's buffers of such a build (their pages are touched already). */
  buffers?: BufferPool;
}

/** buildIndex, taking over what `kept` holds from the builds before. */
export async function buildKeeping(options: BuildOptions, kept: KeptBetweenBuilds): Promise<BuildSummary> {
  const t0 = performance.now();
  const build = checkOptions(options);
  const out = prepareOutput(options.output, options.force ?? false);
  const state: BuildState = { sharedInversion: kept.inversion, buffers: kept.buffers };
  try {
    const plan = await planBuild(build, state);
    const parsed = await parseAndSort(build, plan, out, state);
    const merged = await mergeRuns(build, plan, out, parsed, state);
    await finishIndex(out, parsed, merged);
    build.progress('done', parsed.result.counters, 1);
    return summarize(build, plan, out, parsed, merged, t0);
  } catch (err) {
    state.rowsAhead?.abort();
    discardOutput(out);
    // A full disk is the user's to fix: library callers get the same one-line UserError as the CLI.
    const storage = storageFailure(err, options.output);
    throw storage ? new UserError(storage) : err;
  } finally {
    state.checkpoints?.unlock();
    state.sorter?.dispose();
    // The GPU thread's kernels may still compile (a build faster than them): settled before the
    // build returns, so that the caller may exit the process.
    await state.sorter?.closed?.();
    // Parse workers the CLI started ahead and the build did not take (src/cli-prestart.ts), and
    // merge threads started during a parse that failed.
    void endSpareWorkers();
    stopStartedThreads();
  }
}
