/**
 * Worker-thread entry of a writer's merge: merges segments (segment-merge.ts) within the writer's
 * memory for merge inputs, fsyncs the merged files (off the writer's thread), and posts the result.
 */
import { closeSync, fsyncSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { INDEX_DB, POSTINGS_FILE } from './index-store.js';
import { MANIFEST_FILE } from './manifest.js';
import { POSITIONS_FILE } from './positions-file.js';
import { mergeSegments, type MergeInput } from './segment-merge.js';

const task = workerData as { segments: MergeInput[]; out: string; settings: Record<string, unknown>; memoryBytes?: number; fsync?: boolean };
const result = mergeSegments(task.segments, task.out, task.settings, undefined, task.memoryBytes);
const positions = result.positionsBytes !== undefined ? [join(task.out, POSITIONS_FILE)] : [];
if (task.fsync) for (const path of [join(task.out, POSTINGS_FILE), join(task.out, INDEX_DB), ...positions, join(task.out, MANIFEST_FILE), task.out]) {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
parentPort!.postMessage(result);
