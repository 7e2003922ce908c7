/**
 * A merge thread's per-term figures for its range of terms (termID, df, cf, the list's encoded
 * length), written to a file as the thread merges and read back by the main thread in chunks
 * for the lexicon: neither side holds the range's figures whole (a 100 M-term crawl's would be
 * 2.4 GB, and more while arrays grow). Rows of 24 bytes, little-endian as the runs: u32 termID,
 * u32 df, u32 length, u32 0, f64 cf (a frequent term's cf may pass 2^32), so that typed arrays
 * read them in place.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { readFullAt } from '../runtime/read-at.js';

const ROW_WORDS = 6;
const ROW_BYTES = 4 * ROW_WORDS;
/** Rows buffered before a write, and read a call. */
const CHUNK_ROWS = 1 << 14;

/** A chunk's rows: words[ROW_WORDS r + 0..2], cfs[ROW_WORDS / 2 r + 2] (the same memory). */
function chunk(): { bytes: Uint8Array; words: Uint32Array; cfs: Float64Array } {
  const buffer = new ArrayBuffer(CHUNK_ROWS * ROW_BYTES);
  return { bytes: new Uint8Array(buffer), words: new Uint32Array(buffer), cfs: new Float64Array(buffer) };
}

export class TermFiguresWriter {
  private readonly fd: number;
  private readonly buf = chunk();
  private rows = 0;
  /** Rows written in all. */
  count = 0;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'w');
  }

  add(termId: number, df: number, cf: number, length: number): void {
    const r = this.rows;
    const w = this.buf.words;
    w[ROW_WORDS * r] = termId;
    w[ROW_WORDS * r + 1] = df;
    w[ROW_WORDS * r + 2] = length;
    w[ROW_WORDS * r + 3] = 0;
    this.buf.cfs[(ROW_WORDS / 2) * r + 2] = cf;
    this.count++;
    if (++this.rows === CHUNK_ROWS) this.flush();
  }

  close(): void {
    try {
      this.flush();
    } finally {
      closeSync(this.fd);
    }
  }

  private flush(): void {
    const bytes = this.rows * ROW_BYTES;
    for (let off = 0; off < bytes; ) off += writeSync(this.fd, this.buf.bytes, off, bytes - off);
    this.rows = 0;
  }
}

/** Calls `each` with every row of a figures file, in order; returns the rows read. */
export function readTermFigures(path: string, each: (termId: number, df: number, cf: number, length: number) => void): number {
  const fd = openSync(path, 'r');
  const { bytes, words, cfs } = chunk();
  let count = 0;
  try {
    for (let position = 0; ; ) {
      const got = readFullAt(fd, bytes, position);
      if (got % ROW_BYTES !== 0) throw new Error(`term figures ${path}: cut inside a row`);
      const rows = got / ROW_BYTES;
      for (let r = 0; r < rows; r++) each(words[ROW_WORDS * r]!, words[ROW_WORDS * r + 1]!, cfs[(ROW_WORDS / 2) * r + 2]!, words[ROW_WORDS * r + 2]!);
      count += rows;
      position += got;
      if (got < bytes.length) return count;
    }
  } finally {
    closeSync(fd);
  }
}
