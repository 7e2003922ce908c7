/**
 * The GPU side as the indexer sees it. Importing this module opens nothing; the device is
 * opened only when a build or benchmark asks for the GPU sorter.
 */
import { closeGpu, openGpu } from './device.js';
import { GpuSorter, type GpuSorterOptions } from './gpu-sorter.js';
import { RadixSorter } from './radix-sorter.js';

export { GpuSorter, KERNEL_COMPILE_BYTES, type GpuSorterOptions, type GpuSortTiming } from './gpu-sorter.js';
export { RadixSorter } from './radix-sorter.js';
export { OddEvenSorter } from './oddeven-sorter.js';
export { openGpu, closeGpu, gpuInfo, isSoftwareAdapter, type GpuContext } from './device.js';
export { planSort, passCount, stepCount } from './bitonic-plan.js';

/**
 * A GpuSorter, or the reason there is none. A software adapter counts as none unless
 * `allowSoftware` (an explicit --sorter gpu, the tests). Its kernels are compiled here, or with
 * `compileLater` in the background (GpuSorter.compileInBackground: a build's GPU thread, whose
 * memory plan then holds KERNEL_COMPILE_BYTES for them).
 */
export async function openGpuSorter(options: GpuSorterOptions & { allowSoftware?: boolean; algorithm?: 'bsn' | 'radix'; compileLater?: boolean } = {}): Promise<GpuSorter | string> {
  const ctx = await openGpu({ rejectSoftware: !options.allowSoftware });
  if (typeof ctx === 'string') return ctx;
  let sorter: GpuSorter | undefined;
  try {
    sorter = options.algorithm === 'radix' ? new RadixSorter(ctx, options) : new GpuSorter(ctx, options);
    if (options.compileLater) sorter.compileInBackground();
    else await sorter.compile();
    return sorter;
  } catch (err) {
    if (sorter) sorter.dispose();
    else closeGpu();
    return (err as Error).message;
  }
}
