/**
 * Lowers the calling thread's scheduling priority (Linux: a thread has its own nice value, set
 * through its thread id, which /proc/thread-self names). Background work (a writer's merges)
 * then takes the cores the threads a caller waits on leave idle, instead of slowing them down.
 * Elsewhere, or where it is refused, nothing changes.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/** Nice value of background threads: below normal work, above idle-only. */
export const BACKGROUND_NICE = 10;

export function lowerThreadPriority(nice = BACKGROUND_NICE): boolean {
  if (process.platform !== 'linux') return false;
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid) || tid <= 0) return false;
    setPriority(tid, nice);
    return true;
  } catch {
    return false;
  }
}
