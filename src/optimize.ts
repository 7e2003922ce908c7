/**
 * `gpuindex optimize`: merges an index's segments into one (merge/segment-merge.ts), written
 * beside the index and renamed into place when complete. The result is the index one build of
 * the same documents in the same order writes: the same postings.bin, the same rows in every
 * table of index.sqlite but the settings, and the same positions.bin where the segments have
 * positions (--positions).
 */
import { readSegments } from '../merge/segments.js';
import { mergeSegments } from '../merge/segment-merge.js';
import { SegmentFormatError, SegmentReader } from '../merge/segment-reader.js';
import { readLog } from '../merge/write-ahead-log.js';
import { acquireWriteLock, LockHeld } from '../merge/write-lock.js';
import { join } from 'node:path';
import { commitOutput, discardOutput, prepareOutput } from './output.js';
import { UserError } from './shared/errors.js';
import { VERSION } from './version.js';

export interface OptimizeResult {
  output: string;
  /** Segments before; 1 when there was nothing to merge. */
  segments: number;
  /** Whether the index was rewritten (false: one segment without deletes, left as it was). */
  rewritten: boolean;
  documents: number;
  terms: number;
  postingsBytes: number;
  /** positions.bin's bytes, where the index stores positions. */
  positionsBytes?: number;
  ms: number;
}

export function optimizeIndex(index: string, onFraction?: (f: number) => void): OptimizeResult {
  const t0 = performance.now();
  let manifest;
  try {
    manifest = readSegments(index);
  } catch (err) {
    throw new UserError((err as Error).message);
  }
  if (!manifest) {
    let one: SegmentReader;
    try {
      one = new SegmentReader(index);
    } catch (err) {
      if (err instanceof SegmentFormatError) throw new UserError(err.message);
      throw err;
    }
    try {
      return { output: index, segments: 1, rewritten: false, documents: one.stats.documents, terms: one.stats.terms, postingsBytes: 0, ms: performance.now() - t0 };
    } finally {
      one.close();
    }
  }
  // Operations a writer acknowledged but did not commit would be lost with the folder.
  if (readLog(index, manifest.walSeq ?? 0).length > 0) throw new UserError(`${index} has operations logged after its last commit: open a writer on it (it replays and commits them) first`);
  let lock;
  try {
    lock = acquireWriteLock(index);
  } catch (err) {
    if (err instanceof LockHeld) throw new UserError(err.message);
    throw err;
  }
  const segments = manifest.segments.map((s) => ({ dir: join(index, s.name), deletes: s.deletes }));
  if (segments.length === 0) {
    lock.release();
    return { output: index, segments: 0, rewritten: false, documents: 0, terms: 0, postingsBytes: 0, ms: performance.now() - t0 };
  }
  let plan;
  try {
    plan = prepareOutput(index, true);
  } catch (err) {
    lock.release();
    throw err;
  }
  try {
    const r = mergeSegments(segments, plan.temp, { gpuindexVersion: VERSION, optimizedFrom: manifest.segments.length }, onFraction);
    commitOutput(plan);
    return { output: plan.output, segments: manifest.segments.length, rewritten: true, documents: r.stats.documents, terms: r.stats.terms, postingsBytes: r.postingsBytes, ...(r.positionsBytes !== undefined ? { positionsBytes: r.positionsBytes } : {}), ms: performance.now() - t0 };
  } catch (err) {
    discardOutput(plan);
    lock.release();
    if (err instanceof SegmentFormatError) throw new UserError(err.message);
    throw err;
  }
}
