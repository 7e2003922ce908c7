/**
 * Imported first by cli.ts, before commander and the rest: for `gpuindex build`, starts the
 * build's parse workers at once (indexer/parse-worker-spares.ts), so their start-up (about
 * 80 ms before a worker's code runs on the 2-core development machine) passes while this
 * thread loads its modules. The build takes them over; any it does not need are ended. Where
 * the build may sort on the GPU, the GPU sort thread starts opening the device too.
 */
import { workerYoungGenerationMb } from '../indexer/plan/memory-plan.js';
import { prestartParseWorkers } from '../indexer/parse/parse-worker-spares.js';
import { prestartGpuSorter } from '../indexer/sort/sorters.js';
import { gpuChoiceArg, workersArg } from './cli-prestart-args.js';

const args = process.argv.slice(2);
if (args[0] === 'build' && !args.includes('--help') && !args.includes('-h') && process.env.GPUINDEX_PRESTART !== '0') {
  try {
    prestartParseWorkers(workersArg(args), workerYoungGenerationMb());
  } catch {
    // No spare workers: the build starts its own (and reports any real problem then).
  }
  const gpu = gpuChoiceArg(args);
  if (gpu) prestartGpuSorter(gpu.choice, gpu.gpuSort);
}
