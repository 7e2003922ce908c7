/** Worker-thread entry of the lexicon union: one range of terms (lexicon-union.ts uniteRange). */
import { parentPort, workerData } from 'node:worker_threads';
import { uniteRange, type UnionRangeTask } from './lexicon-union.js';

const result = uniteRange(workerData as UnionRangeTask);
parentPort!.postMessage(result);
