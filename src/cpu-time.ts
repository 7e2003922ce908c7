/**
 * CPU time consumed, for the build summary and the bench: where the parse+sort phase's CPU went
 * (a core taken from the parse workers by the main thread, the run writes or the GPU driver
 * slows them down: the bench's Parse+GpuSort / parse-alone ratio).
 */
import { readdirSync, readFileSync } from 'node:fs';

/** User + system CPU ms of the whole process so far (every thread, exited ones included). */
export function processCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * User + system CPU ms of the calling process's main thread so far, from /proc (10 ms ticks);
 * undefined where /proc is not there (not Linux).
 */
export function mainThreadCpuMs(): number | undefined {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    // Fields after the parenthesized command name: utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

/**
 * User + system CPU ms of each live thread of this process so far, by thread id, with the
 * thread's name ('main' for the main thread; Linux /proc; empty elsewhere). Exited threads (terminated parse workers) are
 * not listed: their time is in processCpuMs() only.
 */
export function threadCpuMs(): Map<number, { name: string; ms: number }> {
  const threads = new Map<number, { name: string; ms: number }>();
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return threads;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = Number(tid) === process.pid ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      threads.set(Number(tid), { name, ms: ((Number(fields[11]) + Number(fields[12])) * 1000) / 100 });
    } catch {
      // The thread exited while we read.
    }
  }
  return threads;
}

/** The CPU ms each thread name accrued between two threadCpuMs() snapshots, largest first. */
export function threadCpuDelta(before: Map<number, { name: string; ms: number }>, after: Map<number, { name: string; ms: number }>): [string, number][] {
  const byName = new Map<string, number>();
  for (const [tid, t] of after) byName.set(t.name, (byName.get(t.name) ?? 0) + t.ms - (before.get(tid)?.ms ?? 0));
  return [...byName].filter(([, ms]) => ms > 0).sort((a, b) => b[1] - a[1]);
}
