/**
 * postings.bin: magic "GPIXPST1" then the encoded lists back to back, in termID order.
 * The lexicon holds each list's (offset, length) into this file.
 */
import { createHash, type Hash } from 'node:crypto';
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { HashThread } from './hash-thread.js';
import { encodePostings, maxEncodedBytes } from './postings-codec.js';
import type { ImpactsBuilder } from './impact-blocks.js';

export const POSTINGS_MAGIC = Buffer.from('GPIXPST1', 'latin1');
const FLUSH_BYTES = 8 << 20;

export class PostingsFileWriter {
  private readonly fd: number;
  private buf = new Uint8Array(FLUSH_BYTES + (1 << 16));
  private used = 0;
  /** Bytes written so far, header included: the offset of the next list. */
  offset = 0;

  /**
   * SHA-256 of every byte written, for MANIFEST.json: computed as the bytes go out rather than
   * by reading the finished file back (320 MB for a 2 GB crawl). Whole files only.
   */
  private readonly hash?: Hash;
  /** With a HashThread the hash runs on that thread instead (appendFile overlaps copy and hash). */
  private readonly hashThread?: HashThread;

  /**
   * `header: false` writes a bare part of a postings file (one merge thread's term range).
   * `hashThread`: the file's SHA-256 is computed on a HashThread (close with closeAsync or
   * closeQuietly, which end it).
   */
  constructor(readonly path: string, { header = true, hashThread = false }: { header?: boolean; hashThread?: boolean } = {}) {
    this.fd = openSync(path, 'wx');
    if (header && hashThread) this.hashThread = new HashThread();
    else if (header) this.hash = createHash('sha256');
    if (header) this.buf.set(POSTINGS_MAGIC, 0);
    this.used = header ? POSTINGS_MAGIC.length : 0;
    this.offset = this.used;
  }

  /**
   * Appends the bytes of the file at `path` (a part written by another thread) unchanged. With a
   * HashThread each chunk is hashed there while the next one is copied (waiting only when every
   * chunk is still being hashed); otherwise it is hashed here after its write.
   */
  async appendFile(path: string): Promise<number> {
    const thread = this.hashThread;
    this.flush();
    const fd = openSync(path, 'r');
    let copied = 0;
    try {
      for (;;) {
        const chunk = thread ? await thread.take() : this.buf;
        const n = readSync(fd, chunk, 0, chunk.length, null);
        if (n === 0) {
          thread?.putBack(chunk);
          break;
        }
        let off = 0;
        while (off < n) off += writeSync(this.fd, chunk, off, n - off);
        if (thread) thread.give(chunk, n);
        else this.hash?.update(chunk.subarray(0, n));
        copied += n;
      }
    } finally {
      closeSync(fd);
    }
    this.offset += copied;
    return copied;
  }

  /**
   * Appends one encoded list; returns its offset and length in bytes. With `impacts`, the same
   * pass records the list's impacts blocks (ImpactsBuilder.encode writes the same bytes).
   */
  append(docIds: Uint32Array, tfs: Uint32Array, df: number, impacts?: Pick<ImpactsBuilder, 'encode'>): { offset: number; length: number } {
    return this.appendWith(maxEncodedBytes(df), impacts ? (buf, pos) => impacts.encode(docIds, tfs, df, buf, pos) : (buf, pos) => encodePostings(docIds, tfs, df, buf, pos));
  }

  /**
   * Appends one list that `write` encodes into buf[pos..] (at most `maxBytes`), returning the
   * position after it; returns the list's offset and length in bytes.
   */
  appendWith(maxBytes: number, write: (buf: Uint8Array, pos: number) => number): { offset: number; length: number } {
    if (this.used + maxBytes > this.buf.length) {
      this.flush();
      if (maxBytes > this.buf.length) this.buf = new Uint8Array(maxBytes);
    }
    const start = this.used;
    this.used = write(this.buf, this.used);
    const length = this.used - start;
    const offset = this.offset;
    this.offset += length;
    if (this.used >= FLUSH_BYTES) this.flush();
    return { offset, length };
  }

  private flush(): void {
    let off = 0;
    while (off < this.used) off += writeSync(this.fd, this.buf, off, this.used - off);
    if (this.used > 0) this.hashThread?.updateCopy(this.buf.subarray(0, this.used));
    this.hash?.update(this.buf.subarray(0, this.used));
    this.used = 0;
  }

  /** Flushes and closes; returns the file's SHA-256 (hex), or undefined for a part (see closeAsync with a HashThread). */
  close(): string | undefined {
    this.flushAndClose();
    return this.hash?.digest('hex');
  }

  /** close() for a writer with a HashThread: waits for the thread's digest. */
  async closeAsync(): Promise<string | undefined> {
    this.flushAndClose();
    return this.hashThread ? this.hashThread.digest() : this.hash?.digest('hex');
  }

  private flushAndClose(): void {
    this.flush();
    closeSync(this.fd);
    this.closed = true;
  }

  /** Closes without flushing, on a failed merge (the file is discarded with its folder). */
  closeQuietly(): void {
    if (!this.closed) closeSync(this.fd);
    this.closed = true;
    void this.hashThread?.destroy();
  }
  private closed = false;
}
