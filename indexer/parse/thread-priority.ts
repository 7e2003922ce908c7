/**
 * Parse workers run at a lower priority than the main thread. The main thread is the one
 * consumer of every worker's batches (remap, copy into blocks, GPU hand-offs, document rows);
 * with one worker a core, the kernel gave it no precedence and it fell behind once the parse
 * got faster (H100 machine: fill waited on, sort stage late). A lower priority
 * lets the workers have whatever the main thread leaves, instead of competing with it.
 *
 * The setting itself is runtime/thread-priority.ts's (Linux only).
 */
import { integerFromEnv } from '../../runtime/env-knobs.js';

/** Niceness the parse workers add (0 to 19; higher is lower priority). */
export const WORKER_NICENESS = 5;

/** GPUINDEX_WORKER_NICE: the parse workers' niceness (a benchmark knob, 0 to 19; default WORKER_NICENESS). */
export function workerNicenessFromEnv(): number {
  return integerFromEnv('GPUINDEX_WORKER_NICE', 0, 19) ?? WORKER_NICENESS;
}
