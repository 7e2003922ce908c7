/**
 * buildIndex(): the whole build behind one options object, in the stages of docs/architecture.md:
 *
 *   checkOptions -> planBuild -> parseAndSort -> mergeRuns -> finishIndex -> summarize
 *
 * Each stage is a function of its own inputs, in src/build/. The CLI's `build` command is a
 * thin layer over buildIndex; a new stage goes between two of these calls.
 */
import { endSpareWorkers } from '../indexer/parse/parse-worker-spares.js';
import { storageFailure, UserError } from './shared/errors.js';
import type { BuildOptions } from './shared/options.js';
import { discardOutput, prepareOutput } from './output.js';
import { checkOptions, type BuildState } from './build/context.js';
import { planBuild } from './build/plan.js';
import { parseAndSort } from './build/parse-sort.js';
import { finishIndex, mergeRuns } from './build/merge.js';
import { summarize, type BuildSummary } from './build/summary.js';

export type { BuildSummary, StageReport } from './build/summary.js';
export { defaultWorkers, formatSkip } from './build/context.js';
export { planParseTasks } from './build/plan.js';
export { writeRowsAhead } from './build/parse-sort.js';

export async function buildIndex(options: BuildOptions): Promise<BuildSummary> {
  const t0 = performance.now();
  const build = checkOptions(options);
  const out = prepareOutput(options.output, options.force ?? false);
  const state: BuildState = {};
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
    state.sorter?.dispose();
    // Parse workers the CLI started ahead and the build did not take (src/cli-prestart.ts).
    void endSpareWorkers();
  }
}
