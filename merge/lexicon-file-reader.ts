/**
 * Reads lexicon.bin (lexicon-file.ts). Opening reads the footer only; the first lookup reads the
 * keys and the block index (1/64 of the terms), and each lookup then reads and scans one block.
 * scan() decodes every entry in termID order and checks the file's structure as it goes
 * (verify and segment merges read the lexicon whole through it).
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { LEXICON_BLOCK_TERMS, LEXICON_FOOTER_BYTES, LEXICON_FOOTER_MAGIC, LEXICON_INDEX_ENTRY_BYTES, LEXICON_MAGIC } from './lexicon-file.js';

/** One entry as scan() and lookup() give it. */
export interface LexiconFileEntry {
  term: string;
  termId: number;
  df: number;
  cf: number;
  offset: number;
  length: number;
}

/** Damage found in lexicon.bin: the message names the file, the place and what is wrong. */
export class LexiconFileError extends Error {}

/** Bytes scan() reads at a time (whole blocks). */
const SCAN_BYTES = 4 << 20;

/** Decodes entries from a buffer: a cursor with its own varint reader (no tuple a value). */
class EntryCursor {
  pos = 0;
  constructor(
    public buf: Uint8Array,
    public end: number,
  ) {}

  varint(what: string): number {
    let value = 0;
    let scale = 1;
    const buf = this.buf;
    for (;;) {
      if (this.pos >= this.end) throw new RangeError(`${what} runs past the end of its block`);
      const b = buf[this.pos++]!;
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
      scale *= 128;
      if (scale > 2 ** 56) throw new RangeError(`${what}: varint longer than 8 bytes`);
    }
  }
}

export class LexiconFileReader {
  private readonly fd: number;
  readonly terms: number;
  readonly blocks: number;
  private readonly keysStart: number;
  private readonly indexStart: number;
  /** Where the last list ends in postings.bin. */
  readonly postingsEnd: number;
  readonly fileBytes: number;
  /** Loaded on first use: each block's first term, and [file offset, first list offset, key offset] per block. */
  private keys?: Buffer;
  private index?: Float64Array;
  /** A term's bytes being decoded, and a block read for a lookup. */
  private term = Buffer.allocUnsafe(256);
  private block = Buffer.allocUnsafe(4096);
  /** Bytes of the term nextTerm() decoded last. */
  private termBytes = 0;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'r');
    try {
      this.fileBytes = fstatSync(this.fd).size;
      const fail = (why: string): never => {
        throw new LexiconFileError(`${path}: ${why}`);
      };
      if (this.fileBytes < LEXICON_MAGIC.length + LEXICON_FOOTER_BYTES) fail(`${this.fileBytes} bytes, too short for a lexicon`);
      const head = this.read(0, LEXICON_MAGIC.length);
      if (!head.equals(LEXICON_MAGIC)) fail('bad magic at offset 0');
      const foot = this.read(this.fileBytes - LEXICON_FOOTER_BYTES, LEXICON_FOOTER_BYTES);
      if (!foot.subarray(44).equals(LEXICON_FOOTER_MAGIC)) fail(`bad footer magic at offset ${this.fileBytes - 4}`);
      const u64 = (i: number) => {
        const v = foot.readBigUInt64LE(8 * i);
        return v > BigInt(Number.MAX_SAFE_INTEGER) ? fail(`footer field ${i} is ${v}, past 2^53`) : Number(v);
      };
      [this.terms, this.blocks, this.keysStart, this.indexStart, this.postingsEnd] = [u64(0), u64(1), u64(2), u64(3), u64(4)];
      const blockTerms = foot.readUInt32LE(40);
      if (blockTerms !== LEXICON_BLOCK_TERMS) fail(`${blockTerms} terms a block, this gpuindex reads ${LEXICON_BLOCK_TERMS}`);
      if (this.blocks !== Math.ceil(this.terms / LEXICON_BLOCK_TERMS)) fail(`${this.blocks} blocks for ${this.terms} terms`);
      if (this.keysStart < LEXICON_MAGIC.length || this.keysStart > this.indexStart || this.indexStart + LEXICON_INDEX_ENTRY_BYTES * this.blocks + LEXICON_FOOTER_BYTES !== this.fileBytes)
        fail(`the footer's sections (keys at ${this.keysStart}, index at ${this.indexStart}, ${this.blocks} blocks) do not fit the file's ${this.fileBytes} bytes`);
    } catch (err) {
      closeSync(this.fd);
      throw err;
    }
  }

  private read(position: number, length: number, into: Buffer = Buffer.allocUnsafe(length)): Buffer {
    let got = 0;
    while (got < length) {
      const n = readSync(this.fd, into, got, length - got, position + got);
      if (n === 0) throw new LexiconFileError(`${this.path}: ends at ${position + got}, inside a section`);
      got += n;
    }
    return into.subarray(0, length);
  }

  /** Reads the keys and the block index, and checks that they agree with the file (once). */
  private loadIndex(): { keys: Buffer; index: Float64Array } {
    if (this.keys && this.index) return { keys: this.keys, index: this.index };
    const keys = this.read(this.keysStart, this.indexStart - this.keysStart);
    const raw = this.read(this.indexStart, LEXICON_INDEX_ENTRY_BYTES * this.blocks);
    const index = new Float64Array(3 * this.blocks);
    for (let i = 0; i < index.length; i++) index[i] = Number(raw.readBigUInt64LE(8 * i));
    for (let b = 0; b < this.blocks; b++) {
      const start = index[3 * b]!;
      const end = this.blockEnd(index, b);
      const keyEnd = b + 1 < this.blocks ? index[3 * b + 5]! : keys.length;
      if (start < LEXICON_MAGIC.length || end > this.keysStart || start >= end || index[3 * b + 2]! > keyEnd || (b + 1 < this.blocks && index[3 * b + 4]! < index[3 * b + 1]!))
        throw new LexiconFileError(`${this.path}: block ${b}'s index entry (at ${this.indexStart + LEXICON_INDEX_ENTRY_BYTES * b}) is out of place`);
    }
    this.keys = keys;
    this.index = index;
    return { keys, index };
  }

  private blockEnd(index: Float64Array, b: number): number {
    return b + 1 < this.blocks ? index[3 * (b + 1)]! : this.keysStart;
  }

  /** The entry of `term`, or undefined when the lexicon does not hold it. */
  lookup(term: string): LexiconFileEntry | undefined {
    if (this.terms === 0) return undefined;
    const { keys, index } = this.loadIndex();
    const target = Buffer.from(term, 'utf8');
    // The last block whose first term is <= the term.
    let lo = 0;
    let hi = this.blocks - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      const keyEnd = mid + 1 < this.blocks ? index[3 * mid + 5]! : keys.length;
      if (target.compare(keys, index[3 * mid + 2]!, keyEnd) >= 0) lo = mid;
      else hi = mid - 1;
    }
    const b = lo;
    const start = index[3 * b]!;
    const bytes = this.blockEnd(index, b) - start;
    if (this.block.length < bytes) this.block = Buffer.allocUnsafe(Math.max(bytes, 2 * this.block.length));
    const c = new EntryCursor(this.read(start, bytes, this.block), bytes);
    let offset = index[3 * b + 1]!;
    const count = Math.min(LEXICON_BLOCK_TERMS, this.terms - b * LEXICON_BLOCK_TERMS);
    try {
      for (let i = 0; i < count; i++) {
        const n = this.nextTerm(c, i === 0);
        const df = c.varint('df');
        const cf = df + c.varint('cf');
        const length = c.varint('length');
        const order = target.compare(this.term, 0, n);
        if (order === 0) return { term, termId: b * LEXICON_BLOCK_TERMS + i, df, cf, offset, length };
        if (order < 0) return undefined;
        offset += length;
      }
    } catch (err) {
      throw new LexiconFileError(`${this.path}: block ${b} (at ${start}): ${(err as Error).message}`);
    }
    return undefined;
  }

  /** Decodes the next entry's term into this.term (`first`: a block's first, which shares nothing); returns its byte length. */
  private nextTerm(c: EntryCursor, first: boolean): number {
    const shared = c.varint('shared prefix');
    if (first ? shared !== 0 : shared > this.termBytes) throw new RangeError(`the term shares ${shared} bytes with ${first ? 'nothing (the first of a block)' : `a term of ${this.termBytes}`}`);
    const rest = c.varint('term length');
    const n = shared + rest;
    this.termBytes = n;
    if (c.pos + rest > c.end) throw new RangeError(`a term of ${rest} bytes runs past the end of its block`);
    if (this.term.length < n) {
      const bigger = Buffer.allocUnsafe(Math.max(n, 2 * this.term.length));
      this.term.copy(bigger);
      this.term = bigger;
    }
    this.term.set(c.buf.subarray(c.pos, c.pos + rest), shared);
    c.pos += rest;
    return n;
  }

  /**
   * Every entry in termID order, to `visit`, checking the structure as it goes: each block
   * holds its terms exactly, starts with its key and at its first list; terms rise in code point
   * order; lists lie back to back from `postingsStart` to the footer's end.
   */
  scan(postingsStart: number, visit: (term: string, termId: number, df: number, cf: number, offset: number, length: number) => void): void {
    if (this.terms === 0) {
      if (this.postingsEnd !== postingsStart) throw new LexiconFileError(`${this.path}: no terms, yet lists end at ${this.postingsEnd}`);
      return;
    }
    const { keys, index } = this.loadIndex();
    let chunk: Buffer = Buffer.allocUnsafe(0);
    let chunkStart = 0;
    let offset = postingsStart;
    let prev = Buffer.allocUnsafe(256);
    let prevBytes = -1;
    for (let b = 0; b < this.blocks; b++) {
      const start = index[3 * b]!;
      const end = this.blockEnd(index, b);
      const at = `${this.path}: block ${b} (at ${start})`;
      if (end > chunkStart + chunk.length || start < chunkStart) {
        // Read whole blocks from this one on, up to SCAN_BYTES (at least this block).
        let last = b;
        while (last + 1 < this.blocks && this.blockEnd(index, last + 1) - start <= SCAN_BYTES) last++;
        chunkStart = start;
        chunk = this.read(start, this.blockEnd(index, last) - start);
      }
      if (index[3 * b + 1] !== offset) throw new LexiconFileError(`${at}: its first list is at ${index[3 * b + 1]}, the previous list ends at ${offset}`);
      const c = new EntryCursor(chunk, end - chunkStart);
      c.pos = start - chunkStart;
      const count = Math.min(LEXICON_BLOCK_TERMS, this.terms - b * LEXICON_BLOCK_TERMS);
      for (let i = 0; i < count; i++) {
        const termId = b * LEXICON_BLOCK_TERMS + i;
        let n: number;
        let df: number;
        let cf: number;
        let length: number;
        try {
          n = this.nextTerm(c, i === 0);
          df = c.varint('df');
          cf = df + c.varint('cf');
          length = c.varint('length');
        } catch (err) {
          throw new LexiconFileError(`${at}: termID ${termId}: ${(err as Error).message}`);
        }
        const bytes = this.term.subarray(0, n);
        if (prevBytes >= 0 && Buffer.compare(prev.subarray(0, prevBytes), bytes) >= 0) throw new LexiconFileError(`${at}: termID ${termId} (${JSON.stringify(bytes.toString('utf8'))}) does not follow termID ${termId - 1} in code point order`);
        if (i === 0) {
          const keyEnd = b + 1 < this.blocks ? index[3 * b + 5]! : keys.length;
          if (!bytes.equals(keys.subarray(index[3 * b + 2]!, keyEnd))) throw new LexiconFileError(`${at}: its first term is not its key in the block index`);
        }
        if (prev.length < n) prev = Buffer.allocUnsafe(Math.max(n, 2 * prev.length));
        bytes.copy(prev);
        prevBytes = n;
        visit(bytes.toString('utf8'), termId, df, cf, offset, length);
        offset += length;
      }
      if (c.pos !== c.end) throw new LexiconFileError(`${at}: ${c.end - c.pos} bytes after its ${count} terms`);
    }
    if (offset !== this.postingsEnd) throw new LexiconFileError(`${this.path}: the lists end at ${offset}, the footer says ${this.postingsEnd}`);
  }

  close(): void {
    closeSync(this.fd);
  }
}
