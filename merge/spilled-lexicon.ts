/**
 * A closed generation of a parse worker's lexicon on disk (fill/worker-lexicon.ts): its terms
 * in code point order (a ByteLexicon) and its ids in that order, read back whole by the union.
 *
 *   header  4 u32: magic, version, terms n, term bytes b
 *   ends    n u32 (ByteLexicon.ends)
 *   order   n u32 (the generation's ids in code point order)
 *   bytes   b bytes (ByteLexicon.bytes: UTF-8 terms, each followed by a NUL)
 *
 * Little-endian, as the runs. It lives in the build's run folder and goes with it.
 */
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import type { ByteLexicon } from './lexicon-union.js';

const MAGIC = 0x58454c47; // "GLEX"
const VERSION = 1;
const HEADER_BYTES = 16;

export interface SpilledLexicon {
  terms: ByteLexicon;
  order: Uint32Array;
}

/** Writes a generation; returns the file's bytes. */
export function writeSpilledLexicon(path: string, lexicon: SpilledLexicon): number {
  const { terms, order } = lexicon;
  const n = terms.ends.length;
  if (order.length !== n) throw new Error(`spilled lexicon ${path}: ${n} terms but ${order.length} ids`);
  const header = new Uint32Array([MAGIC, VERSION, n, terms.bytes.length]);
  const fd = openSync(path, 'w');
  try {
    for (const part of [header, terms.ends, order, terms.bytes]) {
      const bytes = new Uint8Array(part.buffer, part.byteOffset, part.byteLength);
      for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
    }
  } finally {
    closeSync(fd);
  }
  return HEADER_BYTES + 8 * n + terms.bytes.length;
}

/** Reads a generation back, into shared memory (the union's threads read it without a copy). */
export function readSpilledLexicon(path: string): SpilledLexicon {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const all = new Uint8Array(new SharedArrayBuffer(Math.max(HEADER_BYTES, size)), 0, size);
    for (let at = 0; at < size; ) {
      const got = readSync(fd, all, at, size - at, at);
      if (got === 0) break;
      at += got;
    }
    const header = new Uint32Array(all.buffer, 0, HEADER_BYTES / 4);
    const [magic, version, n, b] = header as unknown as [number, number, number, number];
    if (size < HEADER_BYTES || magic !== MAGIC || version !== VERSION || size !== HEADER_BYTES + 8 * n + b) throw new Error(`spilled lexicon ${path}: not a lexicon generation of this version, or cut short (${size} bytes)`);
    const ends = new Uint32Array(all.buffer, HEADER_BYTES, n);
    const order = new Uint32Array(all.buffer, HEADER_BYTES + 4 * n, n);
    return { terms: { bytes: new Uint8Array(all.buffer, HEADER_BYTES + 8 * n, b), ends }, order };
  } finally {
    closeSync(fd);
  }
}
