/**
 * CPU time consumed, for the build summary and the bench: where the parse+sort phase's CPU went
 * (a core taken from the parse workers by the main thread, the run writes or the GPU driver
 * slows them down: the bench's Parse+GpuSort / parse-alone ratio).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { pbkdf2 } from 'node:crypto';

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

/**
 * The group each thread is charged to, by when it appeared: threads are not named in Node 20
 * (every one is "node"), but they are born at known moments. 'runtime': alive when this module
 * loaded or before the GPU opened (V8's platform threads: garbage collection and compilation
 * for every isolate; libuv's pool too unless labelLibuvPool() picked it out); 'libuv': libuv's
 * pool (file reads and run writes), where labelLibuvPool() ran; 'gpu': born while the GPU opened
 * (Dawn's and the driver's threads); 'later': any other thread alive at the end of the phase.
 */
const threadGroups = new Map<number, string>();

/** Charges every live thread that has no group yet to `group` (Linux; nothing elsewhere). */
export function labelNewThreads(group: string): void {
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return;
  }
  for (const tid of tids) if (!threadGroups.has(Number(tid))) threadGroups.set(Number(tid), group);
}

labelNewThreads('runtime');

/** pbkdf2 iterations of one probe job: ~36 ms on the 2-core development machine. */
const PROBE_ITERATIONS = 150_000;

/**
 * Finds libuv's pool threads and charges them to 'libuv' (a benchmark diagnostic: costs about
 * 0.15 s on the 2-core machine): they are born with the first file operation, often while Node
 * loads the modules, so their birth does not tell them from V8's threads; instead each is given
 * some hashing that only the pool runs (pbkdf2), and the threads whose CPU time grew are the
 * pool's (a V8 thread busy for 10 ms meanwhile would be counted with them: a diagnostic, not an
 * accounting). Each job must be well over /proc's 10 ms ticks: at 30,000 iterations a job took
 * 7 ms on a faster machine, a pool thread that ran one job showed no growth, and half the pool's
 * work was charged to 'runtime' (test/cpu-time.test.ts failed in CI).
 */
export async function labelLibuvPool(): Promise<void> {
  const before = threadCpuMs();
  const pool = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  await Promise.all(Array.from({ length: 2 * pool }, () => new Promise((done) => pbkdf2('probe', 'salt', PROBE_ITERATIONS, 32, 'sha256', done))));
  for (const [tid, ms] of threadCpuMs()) if (tid !== process.pid && (!threadGroups.has(tid) || ms - (before.get(tid) ?? 0) >= 10)) threadGroups.set(tid, 'libuv');
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
  /** otherThreadsMs by thread group (runtime, libuv, gpu, later: see labelNewThreads). */
  otherThreadsByGroup?: Record<string, number>;
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
    const otherThreadsByGroup: Record<string, number> = {};
    for (const [tid, ms] of threads1) {
      if (tid === process.pid) continue;
      const spent = ms - (threads0.get(tid) ?? 0);
      otherThreadsMs += spent;
      const group = threadGroups.get(tid) ?? 'later';
      otherThreadsByGroup[group] = (otherThreadsByGroup[group] ?? 0) + spent;
    }
    return { processMs, mainThreadMs: main - (threads0.get(process.pid) ?? 0), otherThreadsMs, otherThreadsByGroup };
  };
}
