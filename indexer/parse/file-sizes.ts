/**
 * The crawl files' sizes the parse plan works from, without a stat of every file. Only the files
 * the plan may cut into ranges (uncompressed JSONL, gzipped WARC: jsonl-ranges.ts) need their
 * exact size; for the others a size only groups small files for the workers, shares the bytes
 * out between them and drives the progress estimate, all of which an estimate serves as well.
 * A stat a file was a second of the main thread on 200,000 small files (this 2-core machine),
 * before any worker could start; the index never depends on these sizes (tasks and groups
 * change where the workers' batches end, not the documents or their order).
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { formatOfListed } from '../corpus/formats.js';

/** Up to this many files of a kind that is never cut are all stat'ed; above it, a sample this large. */
export const SIZE_SAMPLE_FILES = 1024;

/** Whether the plan may cut the file into ranges, so that its exact size matters. */
export function mayBeCut(path: string): boolean {
  const fmt = formatOfListed(path);
  return fmt !== undefined && ((fmt.format === 'jsonl' && !fmt.gzip) || (fmt.format === 'warc' && fmt.gzip));
}

function sizeOrZero(full: string): number {
  try {
    return statSync(full).size;
  } catch {
    return 0; // the worker reports why it cannot read it
  }
}

/**
 * Each file's size (paths relative to `base`): exact for files the plan may cut and wherever
 * there are at most SIZE_SAMPLE_FILES of the others; else those others each get the mean size
 * of an evenly spaced sample of SIZE_SAMPLE_FILES of them (deterministic: the same listing
 * gives the same plan).
 */
export function plannedFileSizes(base: string, files: readonly string[]): number[] {
  const sizes = new Array<number>(files.length).fill(0);
  const uncut: number[] = [];
  for (let i = 0; i < files.length; i++) {
    if (mayBeCut(files[i]!)) sizes[i] = sizeOrZero(join(base, files[i]!));
    else uncut.push(i);
  }
  if (uncut.length <= SIZE_SAMPLE_FILES) {
    for (const i of uncut) sizes[i] = sizeOrZero(join(base, files[i]!));
    return sizes;
  }
  let sum = 0;
  for (let k = 0; k < SIZE_SAMPLE_FILES; k++) sum += sizeOrZero(join(base, files[uncut[Math.floor((k * uncut.length) / SIZE_SAMPLE_FILES)]!]!));
  const mean = Math.round(sum / SIZE_SAMPLE_FILES);
  for (const i of uncut) sizes[i] = mean;
  return sizes;
}
