/**
 * The GPU side as the indexer sees it. Importing this module opens nothing; the device is
 * opened only when a build or benchmark asks for the GPU sorter.
 */
import { closeGpu, openGpu } from './device.js';
import { GpuSorter, type GpuSorterOptions } from './gpu-sorter.js';
import { RadixSorter } from './radix-sorter.js';

export { GpuSorter, type GpuSorterOptions, type GpuSortTiming } from './gpu-sorter.js';
export { RadixSorter } from './radix-sorter.js';
export { OddEvenSorter } from './oddeven-sorter.js';
export { openGpu, closeGpu, gpuInfo, isSoftwareAdapter, type GpuContext } from './device.js';
export { planSort, passCount, stepCount } from './bitonic-plan.js';

/**
 * A ready GpuSorter (kernels compiled), or the reason there is none. A software adapter counts
 * as none unless `allowSoftware` (an explicit --sorter gpu, the tests). The kernels are compiled
 * here, not in the background while the build goes on: the memory plan measures the process
 * after this, and compiling them adds to it (85 MiB of RSS on lavapipe).
 */
export async function openGpuSorter(options: GpuSorterOptions & { allowSoftware?: boolean; algorithm?: 'bsn' | 'radix' } = {}): Promise<GpuSorter | string> {
  const ctx = await openGpu({ rejectSoftware: !options.allowSoftware });
  if (typeof ctx === 'string') return ctx;
  let sorter: GpuSorter | undefined;
  try {
    sorter = options.algorithm === 'radix' ? new RadixSorter(ctx, options) : new GpuSorter(ctx, options);
    await sorter.compile();
    return sorter;
  } catch (err) {
    if (sorter) sorter.dispose();
    else closeGpu();
    return (err as Error).message;
  }
}
