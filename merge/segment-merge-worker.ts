/**
 * Worker-thread entry of a writer's merge: merges segments (segment-merge.ts) within the writer's
 * memory for merge inputs, fsyncs the merged files (off the writer's thread), and posts the result.
 */
import { closeSync, fsyncSync, openSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { niceThisThread } from '../runtime/thread-priority.js';
import { mergeSegments, type MergeInput } from './segment-merge.js';

const task = workerData as { segments: MergeInput[]; out: string; settings: Record<string, unknown>; memoryBytes?: number; fsync?: boolean; background?: boolean };
/** A writer's merge is background work: the feed thread and the writer's thread go first. */
const MERGE_NICENESS = 10;
if (task.background) niceThisThread(MERGE_NICENESS);
const result = mergeSegments(task.segments, task.out, task.settings, undefined, task.memoryBytes);
// Every file the merge wrote (postings, lexicon, impacts, documents, positions, manifest), then the folder.
const written = readdirSync(task.out, { withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(task.out, e.name));
if (task.fsync) for (const path of [...written, task.out]) {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
parentPort!.postMessage(result);
