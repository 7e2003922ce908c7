/** Worker-thread entry of a writer's merge: merges segments (segment-merge.ts) and posts the result. */
import { parentPort, workerData } from 'node:worker_threads';
import { mergeSegments, type MergeInput } from './segment-merge.js';

const task = workerData as { segments: MergeInput[]; out: string; settings: Record<string, unknown> };
parentPort!.postMessage(mergeSegments(task.segments, task.out, task.settings));
