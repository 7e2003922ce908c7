/**
 * A small .html, .txt or .md file read with three system calls (open, one read into a buffer
 * kept for the next file, close) and no promise: what a parse worker does for each file of a
 * crawl of many small files, where the reader's stat, the fresh Buffer and the async generators
 * of readCorpusFile cost more than the document. Anything else (a larger or gzipped file, one
 * that cannot be opened or read, an empty one) is left to readCorpusFile, which words the
 * reason: the items are the same either way (test/corpus-readers.test.ts).
 */
import { isAscii } from 'node:buffer';
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { join, sep } from 'node:path';
import { formatOf } from './formats.js';
import { wholeDocument } from './read-file.js';
import type { CorpusItem } from './types.js';
import type { Utf8TextInverter } from './html.js';

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
 * A parse worker's inverter (DocumentInverter) taking documents as bytes: each gives the TermIds,
 * a view valid until the next call, or undefined where the text must be decoded.
 */
export interface BytesInverters {
  /** A document without title whose text is ASCII bytes (invertAsciiBytes). */
  asciiText: (bytes: Uint8Array) => Uint32Array | undefined;
  /** A page's title and its text's UTF-8 bytes (invertUtf8). */
  utf8Html: Utf8TextInverter;
}

/**
 * The file's one item, or undefined: read it with readCorpusFile. With `inverters`, a .txt file
 * of ASCII bytes without NUL is not decoded: its document comes inverted (SourceDocument.termIds,
 * text ''). Such bytes decode to themselves (no BOM can be there, and a text file's encoding is
 * UTF-8 without one), so the TermIds are the decoded text's. A UTF-8 .html page comes inverted
 * from its extracted text's bytes where utf8Html takes them (readHtmlPageInverted).
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
    const bytes = buf.subarray(0, n);
    if (inverters && fmt.format === 'text' && isAscii(bytes) && bytes.indexOf(0) < 0) {
      const termIds = inverters.asciiText(bytes);
      if (termIds) return { kind: 'doc', doc: { externalId: relPath, path: relPath, title: '', text: '', bytes: n, termIds } };
    }
    return wholeDocument(bytes, relPath, fmt.format, inverters?.utf8Html);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
