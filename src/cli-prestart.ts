/**
 * Imported first by cli.ts, before commander and the rest: for `gpuindex build`, starts the
 * build's parse workers at once (indexer/parse-worker-spares.ts), so their start-up (about
 * 80 ms before a worker's code runs on the 2-core development machine) passes while this
 * thread loads its modules. The build takes them over; any it does not need are ended. Before
 * that, a build of many workers moves to a child process with a wider V8 pool (cli-v8-pool.ts).
 */
import { defaultWorkerCount } from './shared/options.js';
import { workerYoungGenerationMb } from '../indexer/plan/memory-plan.js';
import { prestartParseWorkers } from '../indexer/parse/parse-worker-spares.js';
import { rerunWithWidePool, watchParent } from './cli-v8-pool.js';

/** The --workers value of a build's arguments, or the build's default (cores - 1, at most 32). */
function workersArg(args: readonly string[]): number {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const v = a === '--workers' ? args[i + 1] : a.startsWith('--workers=') ? a.slice('--workers='.length) : undefined;
    if (v !== undefined) return /^\d+$/.test(v) && Number(v) >= 1 ? Math.min(Number(v), 64) : 0;
  }
  return defaultWorkerCount();
}

const args = process.argv.slice(2);
if (args[0] === 'build' && !args.includes('--help') && !args.includes('-h')) {
  const workers = workersArg(args);
  // A build of many workers runs in a child process with a wider V8 pool: this one only waits.
  const rerun = rerunWithWidePool(workers);
  if (rerun) await rerun;
  watchParent();
  if (process.env.GPUINDEX_PRESTART !== '0') {
    try {
      prestartParseWorkers(workers, workerYoungGenerationMb());
    } catch {
      // No spare workers: the build starts its own (and reports any real problem then).
    }
  }
}
