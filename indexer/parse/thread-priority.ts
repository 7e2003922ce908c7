/**
 * Parse workers run at a lower priority than the main thread. The main thread is the one
 * consumer of every worker's batches (remap, copy into blocks, GPU hand-offs, document rows);
 * with one worker a core, the kernel gave it no precedence and it fell behind once the parse
 * got faster (H100 machine: fill waited on, sort stage late). A lower priority
 * lets the workers have whatever the main thread leaves, instead of competing with it.
 *
 * Linux only: setpriority(2) on a thread id changes that thread alone (the thread's id is read
 * from /proc/thread-self). Elsewhere, or where it fails, nothing changes.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { integerFromEnv } from '../../runtime/env-knobs.js';

/** Niceness the parse workers add (0 to 19; higher is lower priority). */
export const WORKER_NICENESS = 5;

/** GPUINDEX_WORKER_NICE: the parse workers' niceness (a benchmark knob, 0 to 19; default WORKER_NICENESS). */
export function workerNicenessFromEnv(): number {
  return integerFromEnv('GPUINDEX_WORKER_NICE', 0, 19) ?? WORKER_NICENESS;
}

/** This thread's id (Linux), or undefined. */
export function threadId(): number | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) && tid > 0 ? tid : undefined;
  } catch {
    return undefined;
  }
}

/** Sets the calling thread's niceness; returns whether it could. */
export function niceThisThread(niceness: number): boolean {
  const tid = threadId();
  if (tid === undefined) return false;
  try {
    setPriority(tid, niceness);
    return true;
  } catch {
    return false;
  }
}
