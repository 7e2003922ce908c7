/** Worker-thread entry of the parallel merge: merges one term range (range-merge.ts) and posts the result. */
import { parentPort, workerData } from 'node:worker_threads';
import { taskOfThread } from '../runtime/worker-script.js';
import { mergeRange, type RangeMergeTask } from './range-merge.js';

taskOfThread<RangeMergeTask>(workerData, parentPort, (task) => {
  const result = mergeRange(task);
  const positions = result.positions ? [result.positions.termIds.buffer, result.positions.starts.buffer] : [];
  parentPort!.postMessage(result, positions as ArrayBuffer[]);
});
