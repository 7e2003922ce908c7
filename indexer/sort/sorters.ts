/**
 * Chooses the block sorter for a build: --sorter cpu|gpu|auto.
 * The GPU module is imported only when a build asks for it, so importing gpuindex never
 * touches the GPU.
 */
import { UserError } from '../../src/shared/errors.js';
import type { GpuSortChoice, SorterChoice } from '../../src/shared/options.js';
import type { PairSorter } from '../../src/shared/types.js';
import { CpuSorter } from './cpu-sorter.js';

export interface ChosenSorter {
  sorter: PairSorter;
  /** Why the GPU is not used, when it was asked for ('auto') but is unavailable. */
  notice?: string;
}

/** `gpuSort`: the GPU sorter's algorithm (bsn, radix, or auto: decided once the memory plan is made). */
export async function chooseSorter(choice: SorterChoice, gpuSort: GpuSortChoice = 'bsn'): Promise<ChosenSorter> {
  if (choice === 'cpu') return { sorter: new CpuSorter() };
  // GpuSort on the GPU thread (gpu/sort-thread.ts): builds keep the device off the main thread.
  const gpu = await import('../../gpu/sort-thread.js');
  const opened = await gpu.openGpuSortThread({ allowSoftware: choice === 'gpu', algorithm: gpuSort });
  if (typeof opened !== 'string') return { sorter: opened };
  if (choice === 'gpu') throw new UserError(`--sorter gpu: no usable GPU (${opened})`);
  return { sorter: new CpuSorter(), notice: `no GPU (${opened}); sorting on the CPU` };
}
