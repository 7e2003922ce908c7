/**
 * V8's platform pool runs the garbage collections and the optimizing compiles of every isolate of
 * a process: each parse worker and merge thread is one. Node gives it 4 threads unless told
 * otherwise, and a build of many workers queues on them: on the 64-core machine (32 workers, 15
 * merge threads) the workers' last sorts took 350–470 ms instead of ~100 and the merge 0.63
 * instead of 0.49 s; with one pool thread a core the whole build was 6–12 % faster
 * (docs/benchmarks.md, "HTML on the 64-core machine"). The pool's size is fixed when node
 * starts, so a build of more than WIDE_POOL_WORKERS workers runs again in a child process with
 * `--v8-pool-size=0` (one a core) unless the size was given. The child inherits the terminal and
 * the environment; a signal sent to this process goes on to it, and it exits as the child did.
 * A child whose parent is killed outright stops (watchParent).
 */
import { spawn } from 'node:child_process';

/** Builds of more workers than this get a pool thread a core (16 cores: 15 workers, no gain measured). */
export const WIDE_POOL_WORKERS = 16;
/** Set in the child's environment: the parent that waits for it. */
const PARENT_ENV = 'GPUINDEX_V8_POOL_PARENT';

/**
 * Whether a build of `workers` workers should run in a child with a pool thread a core: more
 * than WIDE_POOL_WORKERS of them, node not given a pool size (on its command line or in
 * NODE_OPTIONS), and GPUINDEX_V8_POOL not `default`.
 */
export function widePoolWanted(workers: number, execArgv: readonly string[] = process.execArgv, env: NodeJS.ProcessEnv = process.env): boolean {
  const given = (a: string): boolean => a.startsWith('--v8-pool-size');
  if (execArgv.some(given) || (env.NODE_OPTIONS ?? '').split(/\s+/).some(given)) return false;
  return workers > WIDE_POOL_WORKERS && env.GPUINDEX_V8_POOL !== 'default';
}

/**
 * For a build of `workers` workers: runs this command again in a child with a pool thread a core
 * and never settles (the process exits with the child); undefined where this process builds.
 */
export function rerunWithWidePool(workers: number): Promise<never> | undefined {
  if (!widePoolWanted(workers)) return undefined;
  // The IPC channel is only a lifeline: it closes when this process dies, however (watchParent).
  const child = spawn(process.execPath, ['--v8-pool-size=0', ...process.execArgv, process.argv[1]!, ...process.argv.slice(2)], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, [PARENT_ENV]: String(process.pid) },
  });
  // A terminal's Ctrl-C reaches the child too (the same process group); the child takes a signal
  // repeated within a second as one (cli.ts), so one sent to both is not a second press.
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, () => child.kill(s));
  return new Promise<never>(() => {
    child.on('exit', (code, signal) => {
      if (signal) {
        process.removeAllListeners(signal);
        process.kill(process.pid, signal);
      }
      process.exit(code ?? 1);
    });
    child.on('error', (err) => {
      process.stderr.write(`gpuindex: cannot start the build's process: ${err.message}\n`);
      process.exit(1);
    });
  });
}

/**
 * In the child of rerunWithWidePool: a parent that dies without passing a signal on (kill -9)
 * ends the build as SIGTERM would (nothing written, the temporary folder removed), instead of
 * leaving it running unseen.
 */
export function watchParent(): void {
  if (process.env[PARENT_ENV] === undefined || !process.channel) return;
  delete process.env[PARENT_ENV];
  process.channel.unref();
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
}
