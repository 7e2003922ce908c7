/**
 * Merge threads started as the CLI starts a build, with a warm-up merge each (merge-warm-up.ts):
 * their start and their code's first run then pass while the build lists and plans its crawl
 * and the parse workers wait for their first tasks, where they otherwise came on the build's
 * tail, on the cores that sort the workers' last blocks. The build hands them its ranges
 * (runtime/worker-script.ts startThreads) and ends those it does not need.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startThreads } from '../runtime/worker-script.js';
import { integerFromEnv } from '../runtime/env-knobs.js';

/** The merge thread's script (runtime/worker-script.ts startThreads may start its threads ahead). */
export const MERGE_THREAD_SCRIPT = 'merge/merge-worker.js';

/**
 * Merge threads started ahead at most: a build merges on one per 5Mi pairs (src/build/merge.ts),
 * 8 for the 16-core machine's HTML crawl; more start on the tail where a crawl needs them.
 */
export const EARLY_MERGE_THREADS = 8;
/** Parse workers from which a build is large enough to start merge threads ahead. */
export const EARLY_MERGE_MIN_WORKERS = 4;

/**
 * Starts min(workers, EARLY_MERGE_THREADS) warmed-up merge threads, for a build of `workers`
 * parse workers (GPUINDEX_MERGE_PRESTART: that many instead, 0 for none; a benchmark knob).
 */
export function prestartMergeThreads(workers: number): void {
  const count = integerFromEnv('GPUINDEX_MERGE_PRESTART', 0, 256) ?? (workers < EARLY_MERGE_MIN_WORKERS ? 0 : Math.min(workers, EARLY_MERGE_THREADS));
  if (count === 0) return;
  // The warm-ups' files go in one folder of this process, removed as it exits.
  const dir = mkdtempSync(join(tmpdir(), 'gpuindex-warm-'));
  process.once('exit', () => {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // a thread still writing: the folder is the system's temporary one
    }
  });
  startThreads(MERGE_THREAD_SCRIPT, count, { warmUp: dir });
}
