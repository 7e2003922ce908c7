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

type GpuOpened = Awaited<ReturnType<typeof import('../../gpu/sort-thread.js').openGpuSortThread>>;

/** A GPU thread being opened ahead of its build (openGpuEarly), and what it was asked. */
let early: { choice: SorterChoice; gpuSort: GpuSortChoice; opened: Promise<GpuOpened> } | undefined;

/**
 * Starts opening the GPU thread now, for a chooseSorter(choice, gpuSort) to come: the CLI calls it
 * before it loads its modules, so that the thread's start, Dawn's adapter and device (about 0.3 s
 * on the H100 machine) pass meanwhile. A later choice that differs, or none, ends it
 * (endEarlyGpu).
 */
export function openGpuEarly(choice: SorterChoice, gpuSort: GpuSortChoice = 'bsn'): void {
  if (choice === 'cpu' || early) return;
  const opened = import('../../gpu/sort-thread.js').then((gpu) => gpu.openGpuSortThread({ allowSoftware: choice === 'gpu', algorithm: gpuSort }));
  opened.catch(() => {});
  early = { choice, gpuSort, opened };
}

/** Whether a GPU thread openGpuEarly opened waits for its build. */
export function gpuOpenedEarly(): boolean {
  return early !== undefined;
}

/** Ends a GPU thread openGpuEarly opened that no build took. */
export async function endEarlyGpu(): Promise<void> {
  const pending = early;
  early = undefined;
  const opened = await pending?.opened.catch(() => undefined);
  if (opened !== undefined && typeof opened !== 'string') {
    opened.dispose();
    await opened.closed?.();
  }
}

/** `gpuSort`: the GPU sorter's algorithm (bsn, radix, or auto: decided once the memory plan is made). */
export async function chooseSorter(choice: SorterChoice, gpuSort: GpuSortChoice = 'bsn'): Promise<ChosenSorter> {
  if (choice === 'cpu') {
    void endEarlyGpu();
    return { sorter: new CpuSorter() };
  }
  // GpuSort on the GPU thread (gpu/sort-thread.ts): builds keep the device off the main thread.
  const ahead = early?.choice === choice && early.gpuSort === gpuSort ? early.opened : undefined;
  if (ahead) early = undefined;
  else await endEarlyGpu();
  const opened = await (ahead ?? import('../../gpu/sort-thread.js').then((gpu) => gpu.openGpuSortThread({ allowSoftware: choice === 'gpu', algorithm: gpuSort })));
  if (typeof opened !== 'string') return { sorter: opened };
  if (choice === 'gpu') throw new UserError(`--sorter gpu: no usable GPU (${opened})`);
  return { sorter: new CpuSorter(), notice: `no GPU (${opened}); sorting on the CPU` };
}
