/**
 * --pipeline and --sorter together decide the schedule and the sorter:
 *   cpu  -> sequential schedule, CPU sorter (Indexcpu)
 *   gpu  -> sequential schedule, GPU sorter (Indexgpu)
 *   gpu+ -> overlapped schedule, GPU sorter (Indexgpu+)
 *   auto -> gpu+ when a GPU adapter exists, else cpu (one notice line); the build plan makes
 *           it cpu before asking when the crawl gives the GPU nothing or the workers would
 *           wait on its one thread (src/build/plan.ts)
 * --sorter alone picks the pipeline (cpu -> cpu, gpu -> gpu+); contradicting flags are refused.
 */
import { UserError } from '../../src/shared/errors.js';
import { oneOf } from '../../src/shared/check.js';
import { GPU_SORT_CHOICES, PIPELINE_CHOICES, SORTER_CHOICES, type GpuSortChoice, type PipelineChoice, type SorterChoice } from '../../src/shared/options.js';
import type { PairSorter } from '../../src/shared/types.js';
import { chooseSorter } from '../sort/sorters.js';
import type { Schedule } from './worker-pipeline.js';

export interface ResolvedPipeline {
  name: 'cpu' | 'gpu' | 'gpu+';
  schedule: Schedule;
  sorter: PairSorter;
  notice?: string;
}

const checkPipeline = oneOf(PIPELINE_CHOICES);
const checkSorter = oneOf(SORTER_CHOICES);
const checkGpuSort = oneOf(GPU_SORT_CHOICES);

export async function resolvePipeline(pipeline: PipelineChoice = 'auto', sorter: SorterChoice = 'auto', gpuSort: GpuSortChoice = 'bsn'): Promise<ResolvedPipeline> {
  checkPipeline('--pipeline', pipeline);
  checkSorter('--sorter', sorter);
  checkGpuSort('--gpu-sort', gpuSort);
  if (pipeline === 'cpu' && sorter === 'gpu') throw new UserError('--pipeline cpu sorts on the CPU; it cannot be combined with --sorter gpu');
  if ((pipeline === 'gpu' || pipeline === 'gpu+') && sorter === 'cpu') throw new UserError(`--pipeline ${pipeline} sorts on the GPU; it cannot be combined with --sorter cpu`);
  if (pipeline === 'cpu' || sorter === 'cpu') return { name: 'cpu', schedule: 'sequential', ...(await chooseSorter('cpu')) };
  const wantGpu = pipeline === 'gpu' || pipeline === 'gpu+' || sorter === 'gpu';
  const chosen = await chooseSorter(wantGpu ? 'gpu' : 'auto', gpuSort);
  if (chosen.sorter.kind === 'cpu') return { name: 'cpu', schedule: 'sequential', ...chosen };
  const name = pipeline === 'gpu' ? 'gpu' : 'gpu+';
  return { name, schedule: name === 'gpu' ? 'sequential' : 'overlapped', ...chosen };
}
