/**
 * Imported first by cli.ts, before commander and the rest: for `gpuindex build`, starts the
 * build's parse workers at once (indexer/parse-worker-spares.ts), so their start-up (about
 * 80 ms before a worker's code runs on the 2-core development machine) passes while this
 * thread loads its modules. The build takes them over; any it does not need are ended. Where
 * the build will look for a GPU, the GPU thread starts opening now as well.
 */
import { defaultWorkerCount, GPU_SORT_CHOICES, type GpuSortChoice } from './shared/options.js';
import { openGpuEarly } from '../indexer/sort/sorters.js';
import { workerYoungGenerationMb } from '../indexer/plan/memory-plan.js';
import { prestartParseWorkers } from '../indexer/parse/parse-worker-spares.js';

/** The --workers value of a build's arguments, or the build's default (cores - 1, at most 32). */
function workersArg(args: readonly string[]): number {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const v = a === '--workers' ? args[i + 1] : a.startsWith('--workers=') ? a.slice('--workers='.length) : undefined;
    if (v !== undefined) return /^\d+$/.test(v) && Number(v) >= 1 ? Math.min(Number(v), 64) : 0;
  }
  return defaultWorkerCount();
}

/** The value of option `name` in the arguments (`--name v` or `--name=v`), or undefined. */
function optionArg(args: readonly string[], name: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === name) return args[i + 1];
    if (args[i]!.startsWith(`${name}=`)) return args[i]!.slice(name.length + 1);
  }
  return undefined;
}

/** The sorter choice the build will make of its arguments (schedule-choice.ts), where it is a GPU one. */
function gpuChoiceArg(args: readonly string[]): 'gpu' | 'auto' | undefined {
  const pipeline = optionArg(args, '--pipeline') ?? 'auto';
  const sorter = optionArg(args, '--sorter') ?? 'auto';
  if (pipeline === 'cpu' || sorter === 'cpu' || !['auto', 'gpu', 'gpu+'].includes(pipeline) || !['auto', 'gpu'].includes(sorter)) return undefined;
  return pipeline === 'gpu' || pipeline === 'gpu+' || sorter === 'gpu' ? 'gpu' : 'auto';
}

const args = process.argv.slice(2);
if (args[0] === 'build' && !args.includes('--help') && !args.includes('-h') && process.env.GPUINDEX_PRESTART !== '0') {
  try {
    prestartParseWorkers(workersArg(args), workerYoungGenerationMb());
  } catch {
    // No spare workers: the build starts its own (and reports any real problem then).
  }
  // The GPU thread opens meanwhile too (the build's sorter choice takes it).
  const gpu = gpuChoiceArg(args);
  const gpuSort = optionArg(args, '--gpu-sort') ?? 'bsn';
  if (gpu && (GPU_SORT_CHOICES as readonly string[]).includes(gpuSort)) openGpuEarly(gpu, gpuSort as GpuSortChoice);
}
