/**
 * CPU time consumed, for the build summary and the bench: where the parse+sort phase's CPU went
 * (a core taken from the parse workers by the main thread, the run writes or the GPU driver
 * slows them down: the bench's Parse+GpuSort / parse-alone ratio).
 */
import { readdirSync, readFileSync } from 'node:fs';

/** User + system CPU ms of the whole process so far (every thread, exited ones included). */
function processCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * User + system CPU ms of each live thread of this process so far, by thread id (Linux /proc,
 * 10 ms ticks; empty elsewhere). Exited threads (terminated parse workers) are not listed:
 * their time is in processCpuMs() only.
 */
function threadCpuMs(): Map<number, number> {
  const threads = new Map<number, number>();
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return threads;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // utime and stime are the 12th and 13th fields after the parenthesized thread name.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      threads.set(Number(tid), ((Number(fields[11]) + Number(fields[12])) * 1000) / 100);
    } catch {
      // The thread exited while we read.
    }
  }
  return threads;
}

/** The CPU ms of a phase: the whole process, and on Linux its main thread and its other threads still alive at the end. */
export interface PhaseCpuMs {
  processMs: number;
  mainThreadMs?: number;
  /**
   * Threads other than the main one alive at the end of the phase: V8's platform threads
   * (garbage collection, compilation), libuv's pool (file writes), the GPU driver's. Threads
   * that exited during the phase (terminated parse workers) are in processMs only.
   */
  otherThreadsMs?: number;
}

/** Measures a phase's CPU: call the returned function at its end. */
export function startPhaseCpu(): () => PhaseCpuMs {
  const process0 = processCpuMs();
  const threads0 = threadCpuMs();
  return () => {
    const processMs = processCpuMs() - process0;
    const threads1 = threadCpuMs();
    const main = threads1.get(process.pid);
    if (main === undefined) return { processMs };
    let otherThreadsMs = 0;
    for (const [tid, ms] of threads1) if (tid !== process.pid) otherThreadsMs += ms - (threads0.get(tid) ?? 0);
    return { processMs, mainThreadMs: main - (threads0.get(process.pid) ?? 0), otherThreadsMs };
  };
}
