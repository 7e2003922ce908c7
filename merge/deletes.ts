/**
 * A segment's deleted documents: a file in the segment's folder holding their docIDs (the
 * segment's own), ascending, as u32 little-endian. Segments never change; a delete writes a new
 * file, which segments.json names with the segment from the next generation on, so a reader of
 * an older generation keeps seeing its own.
 */
import { closeSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** The deleted docIDs as a bitmap of the segment's documents. */
export function readDeletes(segmentDir: string, file: string, documents: number): Uint8Array {
  const bytes = readFileSync(join(segmentDir, file));
  const ids = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length >>> 2);
  const deleted = new Uint8Array(documents);
  for (const id of ids) {
    if (id >= documents) throw new Error(`${join(segmentDir, file)}: docID ${id} past the segment's ${documents} documents`);
    deleted[id] = 1;
  }
  return deleted;
}

/** Writes `ids` (any order) as the deletes file `file` of the segment, fsynced. */
export function writeDeletes(segmentDir: string, file: string, ids: Iterable<number>): void {
  const sorted = Uint32Array.from(ids).sort();
  const fd = openSync(join(segmentDir, file), 'w');
  try {
    const bytes = new Uint8Array(sorted.buffer);
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
