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

type GpuOpening = ReturnType<typeof import('../../gpu/sort-thread.js').openGpuSortThread>;

/** The GPU sort thread opened ahead of a build (prestartGpuSorter), and the choice it was opened for. */
let ahead: { choice: SorterChoice; gpuSort: GpuSortChoice; opening: GpuOpening } | undefined;

let gpuModule: Promise<typeof import('../../gpu/sort-thread.js')> | undefined;

function openGpuSorter(choice: SorterChoice, gpuSort: GpuSortChoice): GpuOpening {
  // GpuSort on the GPU thread (gpu/sort-thread.ts): builds keep the device off the main thread.
  gpuModule ??= import('../../gpu/sort-thread.js');
  return gpuModule.then((gpu) => gpu.openGpuSortThread({ allowSoftware: choice === 'gpu', algorithm: gpuSort }));
}

/**
 * Starts opening the GPU sorter for a build that will ask chooseSorter(choice, gpuSort): the CLI
 * calls it before loading its modules, so the device opens (about 0.25 s on an H100) meanwhile.
 */
export function prestartGpuSorter(choice: 'auto' | 'gpu', gpuSort: GpuSortChoice): void {
  const opening = openGpuSorter(choice, gpuSort);
  opening.catch(() => {}); // chooseSorter reports it
  ahead = { choice, gpuSort, opening };
}

/** `gpuSort`: the GPU sorter's algorithm (bsn, radix, or auto: decided once the memory plan is made). */
export async function chooseSorter(choice: SorterChoice, gpuSort: GpuSortChoice = 'bsn'): Promise<ChosenSorter> {
  if (choice === 'cpu') return { sorter: new CpuSorter() };
  const early = ahead?.choice === choice && ahead.gpuSort === gpuSort ? ahead.opening : undefined;
  ahead = undefined;
  const opened = await (early ?? openGpuSorter(choice, gpuSort));
  if (typeof opened !== 'string') return { sorter: opened };
  if (choice === 'gpu') throw new UserError(`--sorter gpu: no usable GPU (${opened})`);
  return { sorter: new CpuSorter(), notice: `no GPU (${opened}); sorting on the CPU` };
}
