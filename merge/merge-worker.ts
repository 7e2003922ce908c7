/** Worker-thread entry of the parallel merge: merges its term ranges in turn (range-merge.ts), posting each result. */
import { parentPort, workerData } from 'node:worker_threads';
import { taskOfThread } from '../runtime/worker-script.js';
import { mergeRange, type RangeMergeTask } from './range-merge.js';

taskOfThread<{ series: RangeMergeTask[] }>(workerData, parentPort, ({ series }) => {
  for (const task of series) {
    const result = mergeRange(task);
    const positions = result.positions ? [result.positions.termIds.buffer, result.positions.starts.buffer] : [];
    parentPort!.postMessage(result, positions as ArrayBuffer[]);
  }
});
