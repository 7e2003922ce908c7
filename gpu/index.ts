/**
 * The GPU side as the indexer sees it. Importing this module opens nothing; the device is
 * opened only when a build or benchmark asks for the GPU sorter.
 */
import type { PairSorter } from '../src/types.js';
import { closeGpu, openGpu } from './device.js';
import { GpuSorter, type GpuSorterOptions } from './gpu-sorter.js';

export { GpuSorter, type GpuSorterOptions, type GpuSortTiming } from './gpu-sorter.js';
export { openGpu, closeGpu, gpuInfo, isSoftwareAdapter, type GpuContext } from './device.js';
export { planSort, passCount, stepCount } from './bitonic-plan.js';

/**
 * A ready GpuSorter (kernels compiled), or the reason there is none. A software adapter counts
 * as none unless `allowSoftware` (an explicit --sorter gpu, the tests). `compileInBackground`
 * (a build): the kernels compile while the caller goes on, and a compilation error comes from
 * the first sort instead of from here.
 */
export async function openGpuSorter(options: GpuSorterOptions & { allowSoftware?: boolean; compileInBackground?: boolean } = {}): Promise<PairSorter | string> {
  const ctx = await openGpu({ rejectSoftware: !options.allowSoftware });
  if (typeof ctx === 'string') return ctx;
  let sorter: GpuSorter | undefined;
  try {
    sorter = new GpuSorter(ctx, options);
    if (options.compileInBackground) sorter.compileInBackground();
    else await sorter.compile();
    return sorter;
  } catch (err) {
    if (sorter) sorter.dispose();
    else closeGpu();
    return (err as Error).message;
  }
}
