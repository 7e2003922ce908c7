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
import { closeSync, fstatSync, openSync, writeSync } from 'node:fs';
import type { ByteLexicon } from './lexicon-union.js';
import { readFullAt } from '../runtime/read-at.js';

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

/**
 * Reads a generation back, each part into shared memory of its own (the union's threads read the
 * terms without a copy, and the ids, which the merge keeps, hold nothing else alive).
 */
export function readSpilledLexicon(path: string): SpilledLexicon {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const read = (bytes: number, at: number): Uint8Array => {
      const out = new Uint8Array(new SharedArrayBuffer(Math.max(4, bytes)), 0, bytes);
      if (readFullAt(fd, out, at) < bytes) throw new Error(`spilled lexicon ${path}: cut short (${size} bytes)`);
      return out;
    };
    if (size < HEADER_BYTES) throw new Error(`spilled lexicon ${path}: cut short (${size} bytes)`);
    const header = new Uint32Array(read(HEADER_BYTES, 0).buffer, 0, HEADER_BYTES / 4);
    const [magic, version, n, b] = header as unknown as [number, number, number, number];
    if (magic !== MAGIC || version !== VERSION) throw new Error(`spilled lexicon ${path}: not a lexicon generation of this version`);
    if (size !== HEADER_BYTES + 8 * n + b) throw new Error(`spilled lexicon ${path}: cut short or too long (${size} bytes, ${n} terms)`);
    const ends = new Uint32Array(read(4 * n, HEADER_BYTES).buffer, 0, n);
    const order = new Uint32Array(read(4 * n, HEADER_BYTES + 4 * n).buffer, 0, n);
    return { terms: { bytes: read(b, HEADER_BYTES + 8 * n), ends }, order };
  } finally {
    closeSync(fd);
  }
}
