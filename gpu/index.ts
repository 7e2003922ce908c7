/** The GPU side as the indexer sees it (placeholder until GpuSort lands). */
import type { PairSorter } from '../src/types.js';

export async function openGpuSorter(): Promise<PairSorter | string> {
  return 'the GPU sorter is not built yet';
}
