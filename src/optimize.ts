/**
 * `gpuindex optimize`: merges an index's segments into one (merge/segment-merge.ts), written
 * beside the index and renamed into place when complete. The result is the index one build of
 * the same documents in the same order writes: the same postings.bin, the same rows in every
 * table of index.sqlite but the settings.
 */
import { readSegments } from '../merge/segments.js';
import { mergeSegments } from '../merge/segment-merge.js';
import { SegmentFormatError, SegmentReader } from '../merge/segment-reader.js';
import { join } from 'node:path';
import { commitOutput, discardOutput, prepareOutput } from './output.js';
import { UserError } from './shared/errors.js';
import { VERSION } from './version.js';

export interface OptimizeResult {
  output: string;
  /** Segments before; 1 when there was nothing to merge. */
  segments: number;
  documents: number;
  terms: number;
  postingsBytes: number;
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
      return { output: index, segments: 1, documents: one.stats.documents, terms: one.stats.terms, postingsBytes: 0, ms: performance.now() - t0 };
    } finally {
      one.close();
    }
  }
  const dirs = manifest.segments.map((s) => join(index, s.name));
  const first = new SegmentReader(dirs[0]!);
  const { shard: _shard, ...settings } = first.settings;
  first.close();
  const plan = prepareOutput(index, true);
  try {
    const r = mergeSegments(dirs, plan.temp, { ...settings, gpuindexVersion: VERSION, optimizedFrom: manifest.segments.length }, onFraction);
    commitOutput(plan);
    return { output: plan.output, segments: manifest.segments.length, documents: r.stats.documents, terms: r.stats.terms, postingsBytes: r.postingsBytes, ms: performance.now() - t0 };
  } catch (err) {
    discardOutput(plan);
    throw err;
  }
}
