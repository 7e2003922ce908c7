/**
 * A thread's own scheduling priority. Linux only: setpriority(2) on a thread id changes that
 * thread alone (the id is read from /proc/thread-self). Elsewhere, or where it fails, nothing
 * changes. Parse workers (indexer/parse/thread-priority.ts) and a writer's merge threads
 * (merge/segment-merge-worker.ts) lower their own, so that the threads others wait on go first.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

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

/** Sets the calling thread's niceness (0 to 19; higher is lower priority); returns whether it could. */
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
