/**
 * The index is built in a temporary folder beside the output and renamed into place only when
 * complete, so the output path holds either nothing, the previous index (until --force replaces
 * it) or a complete new one.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { storageFailure, UserError } from './shared/errors.js';
import { processAlive } from '../runtime/process-alive.js';

export const TEMP_MARKER = '.gpuindex-tmp-';
export const RESUME_SUFFIX = '.gpuindex-resume';

/** The folder beside the output where --resume keeps completed runs and their checkpoints. */
export function resumeDirFor(output: string): string {
  const out = resolve(output);
  return join(dirname(out), `.${basename(out)}${RESUME_SUFFIX}`);
}

export interface OutputPlan {
  output: string;
  temp: string;
  runDir: string;
  /** The run files' removal, once startRemovingRuns began it. */
  runsRemoved?: Promise<void>;
}

/**
 * Removes the temporary folders of earlier builds (files, of exports) of the same output whose
 * process is gone (killed by a signal, a power cut): they are never an output, only leftovers.
 */
export function removeStaleTemps(output: string): string[] {
  const out = resolve(output);
  const prefix = `.${basename(out)}${TEMP_MARKER}`;
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dirname(out));
  } catch {
    return removed;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(/^(\d+)-/.exec(name.slice(prefix.length))?.[1]);
    if (!Number.isInteger(pid) || processAlive(pid)) continue;
    rmSync(join(dirname(out), name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

/**
 * A new temporary path beside `output` (absolute), named for this process so that
 * removeStaleTemps knows it for a leftover once the process is gone.
 */
export function tempSibling(output: string): string {
  return join(dirname(output), `.${basename(output)}${TEMP_MARKER}${process.pid}-${randomBytes(4).toString('hex')}`);
}

/** Checks the output path and creates the temporary sibling folder. Throws UserError on user mistakes. */
export function prepareOutput(output: string, force: boolean): OutputPlan {
  const out = resolve(output);
  if (existsSync(out)) {
    if (!force) throw new UserError(`output already exists: ${output} (use --force to replace it)`);
    if (!statSync(out).isDirectory()) throw new UserError(`output exists and is not a folder: ${output}`);
  }
  const parent = dirname(out);
  if (!existsSync(parent)) throw new UserError(`output's parent folder does not exist: ${parent}`);
  removeStaleTemps(out);
  const temp = tempSibling(out);
  try {
    mkdirSync(temp);
  } catch (err) {
    throw new UserError(storageFailure(err, output) ?? `cannot write the output: ${(err as NodeJS.ErrnoException).code ?? ''} ${parent}`.replace('  ', ' '));
  }
  const runDir = join(temp, 'runs');
  try {
    mkdirSync(runDir);
  } catch (err) {
    // The caller's cleanup starts only once the plan is returned: remove the temp folder here.
    rmSync(temp, { recursive: true, force: true });
    const storage = storageFailure(err, output);
    throw storage ? new UserError(storage) : err;
  }
  return { output: out, temp, runDir };
}

/** The run files' folder once moved out of the temporary folder to be removed (startRemovingRuns). */
function runsBeingRemoved(plan: OutputPlan): string {
  return `${plan.temp}-runs`;
}

/**
 * Starts removing the run files, which the merge has read, on the thread pool: unlinking a large
 * crawl's runs frees their pages (0.4 s for the 8 GB crawl's 5.5 GB on 64 cores), which then
 * overlaps the merge's last appends and the checksums. The folder moves beside the temporary one
 * first (a sibling of the same process, so an interrupted build's is stale like the rest, and
 * the index can be renamed into place meanwhile); the build waits for it before commitOutput.
 */
export function startRemovingRuns(plan: OutputPlan): void {
  if (plan.runsRemoved || !existsSync(plan.runDir)) return;
  const moved = runsBeingRemoved(plan);
  try {
    renameSync(plan.runDir, moved);
  } catch {
    return; // commitOutput removes them where they are
  }
  plan.runsRemoved = rm(moved, { recursive: true, force: true });
  plan.runsRemoved.catch(() => {});
}

/** Moves the complete index into place (replacing an old one when forced); after startRemovingRuns, once plan.runsRemoved settled. */
export function commitOutput(plan: OutputPlan): void {
  rmSync(plan.runDir, { recursive: true, force: true });
  if (existsSync(plan.output)) {
    const old = `${plan.temp}-old`;
    renameSync(plan.output, old);
    renameSync(plan.temp, plan.output);
    rmSync(old, { recursive: true, force: true });
  } else {
    renameSync(plan.temp, plan.output);
  }
}

export function discardOutput(plan: OutputPlan): void {
  rmSync(plan.temp, { recursive: true, force: true });
  if (plan.runsRemoved) rmSync(runsBeingRemoved(plan), { recursive: true, force: true });
}
