/**
 * A merge thread's per-term figures for its range of terms (termID, df, cf, the list's encoded
 * length), written to a file as the thread merges and read back by the main thread in chunks
 * for the lexicon: neither side holds the range's figures whole (20 bytes a term; a 100 M-term
 * crawl's would be 2 GB, and more while arrays grow). Rows of u32 termID, u32 df, u32 length,
 * f64 cf (a frequent term's cf may pass 2^32), little-endian as the runs.
 */
import { closeSync, openSync, readSync, writeSync } from 'node:fs';

const ROW_BYTES = 20;
/** Rows buffered before a write, and read a call. */
const CHUNK_ROWS = 1 << 14;

export class TermFiguresWriter {
  private readonly fd: number;
  private readonly buf = Buffer.allocUnsafe(CHUNK_ROWS * ROW_BYTES);
  private rows = 0;
  /** Rows written in all. */
  count = 0;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'w');
  }

  add(termId: number, df: number, cf: number, length: number): void {
    const at = this.rows * ROW_BYTES;
    this.buf.writeUInt32LE(termId, at);
    this.buf.writeUInt32LE(df, at + 4);
    this.buf.writeUInt32LE(length, at + 8);
    this.buf.writeDoubleLE(cf, at + 12);
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
    for (let off = 0; off < bytes; ) off += writeSync(this.fd, this.buf, off, bytes - off);
    this.rows = 0;
  }
}

/** Calls `each` with every row of a figures file, in order; returns the rows read. */
export function readTermFigures(path: string, each: (termId: number, df: number, cf: number, length: number) => void): number {
  const fd = openSync(path, 'r');
  const buf = Buffer.allocUnsafe(CHUNK_ROWS * ROW_BYTES);
  let count = 0;
  try {
    for (let position = 0; ; ) {
      let got = 0;
      while (got < buf.length) {
        const n = readSync(fd, buf, got, buf.length - got, position + got);
        if (n === 0) break;
        got += n;
      }
      if (got % ROW_BYTES !== 0) throw new Error(`term figures ${path}: cut inside a row`);
      for (let at = 0; at < got; at += ROW_BYTES) each(buf.readUInt32LE(at), buf.readUInt32LE(at + 4), buf.readDoubleLE(at + 12), buf.readUInt32LE(at + 8));
      count += got / ROW_BYTES;
      position += got;
      if (got < buf.length) return count;
    }
  } finally {
    closeSync(fd);
  }
}
