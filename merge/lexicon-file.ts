/**
 * lexicon.bin, the lexicon of index format 4: every term with its figures, in termID order
 * (code point order, the order of the terms' UTF-8 bytes), written as the merge hands out the
 * lists. Layout:
 *
 *   header   "GPXLEX04"
 *   blocks   LEXICON_BLOCK_TERMS entries each (the last block fewer); an entry is
 *              varint(bytes shared with the previous term of its block; 0 for a block's first)
 *              varint(bytes of the rest) the rest (UTF-8)
 *              varint(df) varint(cf - df) varint(length of the list in postings.bin)
 *   keys     each block's first term (UTF-8), back to back
 *   index    per block, three u64 (little-endian): where the block starts in the file, where
 *            its first list starts in postings.bin, where its first term starts in `keys`
 *   footer   u64 terms, u64 blocks, u64 start of keys, u64 start of index,
 *            u64 end of the last list in postings.bin, u32 LEXICON_BLOCK_TERMS, "LEX4"
 *
 * A lookup binary-searches the keys and scans one block; a list's offset is its block's first
 * offset plus the lengths before it in the block (lists lie back to back in termID order).
 * Front coding within blocks of 64 terms follows Witten, Moffat and Bell, "Managing Gigabytes"
 * (ch. 4) and Lucene's block tree terms dictionary; the SQLite table it replaces took ~1 µs a
 * term on one thread (100 M terms: most of a 150 s build).
 */
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { POSTINGS_MAGIC } from './postings-file.js';
import { writeVarint } from './varint.js';

export const LEXICON_FILE = 'lexicon.bin';
export const LEXICON_MAGIC = Buffer.from('GPXLEX04', 'latin1');
export const LEXICON_FOOTER_MAGIC = Buffer.from('LEX4', 'latin1');
/** Terms a block: a lookup decodes half a block on average (~0.5 KB of mail's terms). */
export const LEXICON_BLOCK_TERMS = 64;
export const LEXICON_FOOTER_BYTES = 5 * 8 + 4 + 4;
/** Bytes of one block's index entry. */
export const LEXICON_INDEX_ENTRY_BYTES = 3 * 8;

const FLUSH_BYTES = 1 << 20;

/** Writes lexicon.bin: add() each term in termID order from 0, then finish(). */
export class LexiconFileWriter {
  private readonly fd: number;
  private buf = Buffer.allocUnsafe(FLUSH_BYTES + (1 << 16));
  private used = 0;
  /** Bytes of the file written or buffered so far. */
  private written = 0;
  /** The previous term's UTF-8 bytes (prev[0, prevBytes)), and room for the next. */
  private prev = Buffer.allocUnsafe(256);
  private prevBytes = 0;
  private next = Buffer.allocUnsafe(256);
  private terms = 0;
  /** Where the next list must start in postings.bin (-1: none added yet). */
  private listEnd = -1;
  private keys = Buffer.allocUnsafe(1 << 12);
  private keysUsed = 0;
  /** Per block: file offset, first list offset, key offset. */
  private index = new Float64Array(3 * 256);
  private blocks = 0;

  /** Whether the term before the next is unknown here (a part was appended last): the next term must start a block. */
  private afterPart = false;

  /**
   * `part`: a merge thread's term range, appended to lexicon.bin by appendPart: no magic, and its
   * offsets (in the file, and of lists in the range's postings part) from 0.
   */
  private readonly part: boolean;

  constructor(
    readonly path: string,
    { part = false }: { part?: boolean } = {},
  ) {
    this.part = part;
    this.fd = openSync(path, 'wx');
    if (!part) this.put(LEXICON_MAGIC);
  }

  /**
   * Appends a part (a LexiconFileWriter's with `part`, finished) whose lists start at
   * `postingsBase` in postings.bin: its blocks copied as bytes, its keys and block index rebased.
   * The terms so far must fill whole blocks, so that the part's blocks are this file's.
   */
  appendPart(partPath: string, postingsBase: number): void {
    if (this.terms % LEXICON_BLOCK_TERMS !== 0) throw new Error(`lexicon: a part appended after ${this.terms} terms, not a whole number of blocks`);
    if (this.listEnd >= 0 && postingsBase !== this.listEnd) throw new Error(`lexicon: a part's lists start at ${postingsBase}, not where the previous list ends (${this.listEnd})`);
    const fd = openSync(partPath, 'r');
    try {
      const size = fstatSync(fd).size;
      const footer = Buffer.alloc(LEXICON_FOOTER_BYTES);
      if (size < LEXICON_FOOTER_BYTES || readSync(fd, footer, 0, LEXICON_FOOTER_BYTES, size - LEXICON_FOOTER_BYTES) !== LEXICON_FOOTER_BYTES || !footer.subarray(44).equals(LEXICON_FOOTER_MAGIC) || footer.readUInt32LE(40) !== LEXICON_BLOCK_TERMS)
        throw new Error(`lexicon part ${partPath}: bad footer`);
      const [terms, blocks, keysStart, indexStart, postingsEnd] = [0, 1, 2, 3, 4].map((i) => Number(footer.readBigUInt64LE(8 * i)));
      if (indexStart + LEXICON_INDEX_ENTRY_BYTES * blocks + LEXICON_FOOTER_BYTES !== size) throw new Error(`lexicon part ${partPath}: ${size} bytes, its footer says ${indexStart + LEXICON_INDEX_ENTRY_BYTES * blocks + LEXICON_FOOTER_BYTES}`);
      const tail = Buffer.alloc(size - keysStart - LEXICON_FOOTER_BYTES);
      if (readSync(fd, tail, 0, tail.length, keysStart) !== tail.length) throw new Error(`lexicon part ${partPath}: cut short`);
      // The blocks, as bytes, through the buffer.
      const chunk = Buffer.allocUnsafe(FLUSH_BYTES);
      const fileBase = this.written;
      for (let at = 0; at < keysStart; ) {
        const n = readSync(fd, chunk, 0, Math.min(chunk.length, keysStart - at), at);
        if (n === 0) throw new Error(`lexicon part ${partPath}: cut short`);
        this.put(chunk.subarray(0, n));
        at += n;
      }
      const keys = tail.subarray(0, indexStart - keysStart);
      this.reserve(blocks, keys.length);
      const keysBase = this.keysUsed;
      keys.copy(this.keys, this.keysUsed);
      this.keysUsed += keys.length;
      const index = tail.subarray(keys.length);
      const bases = [fileBase, postingsBase, keysBase];
      for (let b = 0; b < blocks; b++) for (let k = 0; k < 3; k++) this.index[3 * (this.blocks + b) + k] = readU64(index, 8 * (3 * b + k)) + bases[k]!;
      this.blocks += blocks;
      this.terms += terms;
      if (terms > 0) {
        this.listEnd = postingsBase + postingsEnd;
        this.afterPart = true;
      }
    } finally {
      closeSync(fd);
    }
  }

  /** Terms added. */
  get count(): number {
    return this.terms;
  }

  /**
   * One term and its figures; terms must come in code point order, their lists back to back
   * (throws otherwise: a lexicon out of order would find nothing).
   */
  add(term: string, df: number, cf: number, offset: number, length: number): void {
    if (this.listEnd >= 0 && offset !== this.listEnd) throw new Error(`lexicon: termID ${this.terms}'s list starts at ${offset}, not where the previous one ends (${this.listEnd})`);
    if (cf < df) throw new Error(`lexicon: termID ${this.terms} has cf ${cf} below its df ${df}`);
    // UTF-8 takes at most 3 bytes a UTF-16 code unit.
    if (this.next.length < 3 * term.length) this.next = Buffer.allocUnsafe(Math.max(3 * term.length, 2 * this.next.length));
    const next = this.next;
    // ASCII byte by byte: a call into the encoder costs more than a short term's loop.
    let bytes = 0;
    for (let c: number; bytes < term.length && (c = term.charCodeAt(bytes)) < 0x80; bytes++) next[bytes] = c;
    if (bytes < term.length) bytes = next.write(term, 0, 'utf8');
    let shared = 0;
    if (this.afterPart) {
      // The part's last term is not at hand to code against: the next starts a block of its own.
      if (this.terms % LEXICON_BLOCK_TERMS !== 0) throw new Error(`lexicon: termID ${this.terms} added after a part that ended inside a block`);
      this.afterPart = false;
    } else if (this.terms > 0) {
      const prev = this.prev;
      const n = Math.min(bytes, this.prevBytes);
      while (shared < n && prev[shared] === next[shared]) shared++;
      if (shared === bytes || (shared < this.prevBytes && prev[shared]! > next[shared]!))
        throw new Error(`lexicon: termID ${this.terms} (${JSON.stringify(term)}) does not follow ${JSON.stringify(prev.toString('utf8', 0, this.prevBytes))} in code point order`);
    }
    if (this.terms % LEXICON_BLOCK_TERMS === 0) {
      this.startBlock(offset, bytes);
      shared = 0;
    }
    if (this.used + 30 + bytes - shared > this.buf.length) this.flush();
    if (bytes - shared + 30 > this.buf.length) this.buf = Buffer.allocUnsafe(2 * (bytes + 30));
    const buf = this.buf;
    let p = writeVarint(buf, this.used, shared);
    p = writeVarint(buf, p, bytes - shared);
    for (let i = shared; i < bytes; i++) buf[p++] = next[i]!;
    p = writeVarint(buf, p, df);
    p = writeVarint(buf, p, cf - df);
    p = writeVarint(buf, p, length);
    this.written += p - this.used;
    this.used = p;
    // The term just written becomes the one the next is coded against.
    const t = this.prev;
    this.prev = this.next;
    this.next = t;
    this.prevBytes = bytes;
    this.terms++;
    this.listEnd = offset + length;
  }

  /** Room for `blocks` more index entries and `keyBytes` more bytes of keys. */
  private reserve(blocks: number, keyBytes: number): void {
    if (3 * (this.blocks + blocks) > this.index.length) {
      const bigger = new Float64Array(Math.max(2 * this.index.length, 3 * (this.blocks + blocks)));
      bigger.set(this.index);
      this.index = bigger;
    }
    if (this.keysUsed + keyBytes > this.keys.length) {
      const bigger = Buffer.allocUnsafe(Math.max(2 * this.keys.length, this.keysUsed + keyBytes));
      this.keys.copy(bigger, 0, 0, this.keysUsed);
      this.keys = bigger;
    }
  }

  private startBlock(offset: number, bytes: number): void {
    this.reserve(1, bytes);
    const b = this.blocks++;
    this.index[3 * b] = this.written;
    this.index[3 * b + 1] = offset;
    this.index[3 * b + 2] = this.keysUsed;
    for (let i = 0; i < bytes; i++) this.keys[this.keysUsed++] = this.next[i]!;
  }

  private put(bytes: Uint8Array): void {
    if (this.used + bytes.length > this.buf.length) this.flush();
    if (bytes.length > this.buf.length) {
      this.written += writeAll(this.fd, bytes);
      return;
    }
    this.buf.set(bytes, this.used);
    this.used += bytes.length;
    this.written += bytes.length;
  }

  private flush(): void {
    writeAll(this.fd, this.buf.subarray(0, this.used));
    this.used = 0;
  }

  /** Writes the keys, the block index and the footer, and closes the file. */
  finish(): void {
    // Where the last list ends: postings.bin's size (its header's, with no terms; a part's lists start at 0).
    const postingsEnd = this.listEnd >= 0 ? this.listEnd : this.part ? 0 : POSTINGS_MAGIC.length;
    const keysStart = this.written;
    this.put(this.keys.subarray(0, this.keysUsed));
    const indexStart = this.written;
    const index = Buffer.allocUnsafe(LEXICON_INDEX_ENTRY_BYTES * this.blocks);
    for (let i = 0; i < 3 * this.blocks; i++) writeU64(index, 8 * i, this.index[i]!);
    this.put(index);
    const footer = Buffer.alloc(LEXICON_FOOTER_BYTES);
    [this.terms, this.blocks, keysStart, indexStart, postingsEnd].forEach((v, i) => footer.writeBigUInt64LE(BigInt(v), 8 * i));
    footer.writeUInt32LE(LEXICON_BLOCK_TERMS, 40);
    LEXICON_FOOTER_MAGIC.copy(footer, 44);
    this.put(footer);
    this.flush();
    closeSync(this.fd);
  }

  /** Closes the file, leaving it unfinished (the caller removes the folder). */
  abort(): void {
    try {
      closeSync(this.fd);
    } catch {
      /* closed by finish() already */
    }
  }
}

/** A u64, little-endian, read as a number (below 2^53). */
function readU64(b: Buffer, at: number): number {
  return b.readUInt32LE(at) + b.readUInt32LE(at + 4) * 2 ** 32;
}

/** A u64, little-endian, of a value below 2^53. */
function writeU64(out: Buffer, at: number, v: number): void {
  out.writeUInt32LE(v % 2 ** 32, at);
  out.writeUInt32LE(Math.floor(v / 2 ** 32), at + 4);
}

function writeAll(fd: number, bytes: Uint8Array): number {
  let off = 0;
  while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
  return bytes.length;
}
