/**
 * A small .html, .txt or .md file read with three system calls (open, one read into a buffer
 * kept for the next file, close) and no promise: what a parse worker does for each file of a
 * crawl of many small files, where the reader's stat, the fresh Buffer and the async generators
 * of readCorpusFile cost more than the document. Anything else (a larger or gzipped file, one
 * that cannot be opened or read, an empty one) is left to readCorpusFile, which words the
 * reason: the items are the same either way (test/corpus-readers.test.ts).
 */
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { join, sep } from 'node:path';
import { formatOf } from './formats.js';
import { wholeDocument, type BytesInverters } from './read-file.js';
import type { CorpusItem } from './types.js';

/** Files up to this size are read here (most pages of a documentation crawl are; a larger one costs one open more). */
const SCRATCH_BYTES = 1 << 20;
let scratch: Buffer | undefined;
/** The crawl root the last path was made for, and it with a separator: a path is then one concatenation (path.join normalizes, ~1 µs a file). */
let lastRoot: string | undefined;
let rootPrefix = '';

/** `root` joined with `relPath` (a listing's path: relative, '/'-separated, never `..`). */
function fullPath(root: string, relPath: string): string {
  if (root !== lastRoot) {
    lastRoot = root;
    const joined = join(root, '.');
    rootPrefix = joined.endsWith(sep) ? joined : joined + sep;
  }
  return rootPrefix + relPath;
}

/**
 * The file's one item, or undefined: read it with readCorpusFile. With `inverters`, a document
 * that can be inverted from its bytes comes so (wholeDocument).
 */
export function readSmallFileSync(root: string, relPath: string, inverters?: BytesInverters): CorpusItem | undefined {
  const fmt = formatOf(relPath);
  // Whole-document formats only: JSONL, JSON and WARC files hold many documents (their own readers).
  if (!fmt || fmt.gzip || !(fmt.format === 'html' || fmt.format === 'text' || fmt.format === 'markdown')) return undefined;
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO put in a file's place since the walk must not hang the worker.
    fd = openSync(fullPath(root, relPath), constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const buf = (scratch ??= Buffer.allocUnsafeSlow(SCRATCH_BYTES));
    const n = readSync(fd, buf, 0, buf.length, 0);
    // A read short of the buffer ends a regular file; 0 may be an empty file or something else.
    if (n === 0 || n === buf.length) return undefined;
    return wholeDocument(buf.subarray(0, n), relPath, fmt.format, inverters);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
