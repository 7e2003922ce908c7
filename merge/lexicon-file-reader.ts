/**
 * Reads lexicon.bin (lexicon-file.ts). Opening reads the footer only; the first lookup reads the
 * keys and the block index (1/64 of the terms), and each lookup then reads and scans one block.
 * scan() decodes every entry in termID order and checks the file's structure as it goes
 * (verify and segment merges read the lexicon whole through it).
 */
import { closeSync, fstatSync, openSync } from 'node:fs';
import { endianness } from 'node:os';
import { LEXICON_BLOCK_TERMS, LEXICON_FOOTER_BYTES, LEXICON_FOOTER_MAGIC, LEXICON_INDEX_ENTRY_BYTES, LEXICON_MAGIC } from './lexicon-file.js';
import { readFullAt } from '../runtime/read-at.js';

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

const LITTLE_ENDIAN = endianness() === 'LE';

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

/** A term's bytes decoded over the previous term's (front coding), and whether it sorts after that one. */
class TermDecoder {
  bytes = Buffer.allocUnsafe(256);
  length = 0;
  /** Whether the term decoded last sorts after the one before it (byte order: code point order). */
  rises = false;

  /** Decodes the next entry's term (`first`: a block's first, which shares nothing); returns its byte length. */
  next(c: EntryCursor, first: boolean): number {
    const shared = c.varint('shared prefix');
    if (first ? shared !== 0 : shared > this.length) throw new RangeError(`the term shares ${shared} bytes with ${first ? 'nothing (the first of a block)' : `a term of ${this.length}`}`);
    const rest = c.varint('term length');
    const n = shared + rest;
    if (c.pos + rest > c.end) throw new RangeError(`a term of ${rest} bytes runs past the end of its block`);
    if (this.bytes.length < n) {
      const bigger = Buffer.allocUnsafe(Math.max(n, 2 * this.bytes.length));
      this.bytes.copy(bigger, 0, 0, this.length);
      this.bytes = bigger;
    }
    // Compared with the previous term while copied over it: byte by byte in JavaScript, as a
    // call into C++ costs more than a short term's loop.
    const term = this.bytes;
    const buf = c.buf;
    const prev = this.length;
    let order = 0;
    for (let i = 0, at = c.pos; i < rest; i++) {
      const b = buf[at + i]!;
      if (order === 0) order = shared + i >= prev ? 1 : b - term[shared + i]!;
      term[shared + i] = b;
    }
    this.rises = order > 0 || (order === 0 && n > prev);
    c.pos += rest;
    this.length = n;
    return n;
  }
}

/** Code point order of a[0, an) and b[bs, be) (UTF-8 bytes). */
function compareBytes(a: Uint8Array, an: number, b: Uint8Array, bs: number, be: number): number {
  const bn = be - bs;
  const n = Math.min(an, bn);
  for (let i = 0; i < n; i++) {
    const d = a[i]! - b[bs + i]!;
    if (d !== 0) return d;
  }
  return an - bn;
}

/** Per block while scan() decodes it: each term's end in `text`, and its figures. */
class BlockEntries {
  text = Buffer.allocUnsafe(1 << 12);
  used = 0;
  ascii = true;
  readonly ends = new Uint32Array(LEXICON_BLOCK_TERMS);
  readonly df = new Float64Array(LEXICON_BLOCK_TERMS);
  readonly cf = new Float64Array(LEXICON_BLOCK_TERMS);
  readonly length = new Float64Array(LEXICON_BLOCK_TERMS);

  /** Appends term i's bytes. */
  push(i: number, term: Uint8Array, n: number): void {
    if (this.used + n > this.text.length) {
      const bigger = Buffer.allocUnsafe(Math.max(2 * this.text.length, this.used + n));
      this.text.copy(bigger, 0, 0, this.used);
      this.text = bigger;
    }
    let high = 0;
    const text = this.text;
    for (let k = 0, at = this.used; k < n; k++) {
      const b = term[k]!;
      high |= b;
      text[at + k] = b;
    }
    if (high >= 0x80) this.ascii = false;
    this.used += n;
    this.ends[i] = this.used;
  }

  /** The block's `count` terms as strings into `out`: one decode for an ASCII block, cut by position. */
  strings(count: number, out: string[]): void {
    if (this.ascii) {
      const all = this.text.toString('latin1', 0, this.used);
      for (let i = 0, start = 0; i < count; start = this.ends[i++]!) out[i] = all.slice(start, this.ends[i]!);
    } else {
      for (let i = 0, start = 0; i < count; start = this.ends[i++]!) out[i] = this.text.toString('utf8', start, this.ends[i]!);
    }
    this.used = 0;
    this.ascii = true;
  }
}

/**
 * The block index as read from the file: each block's u64 fields (little-endian) taken as
 * asked, so a first lookup converts nothing (a 5 M-term lexicon has 78 K blocks), and each
 * block's entry checked where it is used.
 */
class BlockIndex {
  constructor(
    private readonly words: Uint32Array,
    readonly blocks: number,
    readonly keys: Buffer,
    private readonly keysStart: number,
    private readonly where: (b: number) => string,
  ) {}

  private field(b: number, k: number): number {
    const i = 2 * (3 * b + k);
    return this.words[i]! + this.words[i + 1]! * 2 ** 32;
  }

  /** Where block b starts in the file. */
  start(b: number): number {
    return this.field(b, 0);
  }

  end(b: number): number {
    return b + 1 < this.blocks ? this.field(b + 1, 0) : this.keysStart;
  }

  /** Where block b's first list starts in postings.bin. */
  firstOffset(b: number): number {
    return this.field(b, 1);
  }

  keyStart(b: number): number {
    return this.field(b, 2);
  }

  keyEnd(b: number): number {
    return b + 1 < this.blocks ? this.field(b + 1, 2) : this.keys.length;
  }

  /** Throws unless block b lies inside the blocks section and its key inside the keys. */
  check(b: number): void {
    const start = this.start(b);
    const end = this.end(b);
    const keyEnd = this.keyEnd(b);
    if (start < LEXICON_MAGIC.length || end > this.keysStart || start >= end || this.keyStart(b) > keyEnd || keyEnd > this.keys.length)
      throw new LexiconFileError(`${this.where(b)} is out of place`);
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
  /** Loaded on first use: each block's first term and its index entry. */
  private index?: BlockIndex;
  /** A lookup's term being decoded, and the block it reads. */
  private readonly term = new TermDecoder();
  private block = Buffer.allocUnsafe(4096);
  private target = Buffer.allocUnsafe(256);

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
    const got = readFullAt(this.fd, into.subarray(0, length), position);
    if (got < length) throw new LexiconFileError(`${this.path}: ends at ${position + got}, inside a section`);
    return into.subarray(0, length);
  }

  /** Reads the keys and the block index (once). */
  private loadIndex(): BlockIndex {
    if (this.index) return this.index;
    const keys = this.read(this.keysStart, this.indexStart - this.keysStart);
    const raw = this.read(this.indexStart, LEXICON_INDEX_ENTRY_BYTES * this.blocks);
    const words = new Uint32Array(raw.length / 4);
    if (LITTLE_ENDIAN) new Uint8Array(words.buffer).set(raw);
    else for (let i = 0; i < words.length; i++) words[i] = raw.readUInt32LE(4 * i);
    this.index = new BlockIndex(words, this.blocks, keys, this.keysStart, (b) => `${this.path}: block ${b}'s index entry (at ${this.indexStart + LEXICON_INDEX_ENTRY_BYTES * b})`);
    return this.index;
  }

  /** The entry of `term`, or undefined when the lexicon does not hold it. */
  lookup(term: string): LexiconFileEntry | undefined {
    if (this.terms === 0) return undefined;
    const index = this.loadIndex();
    const keys = index.keys;
    // The term's UTF-8 bytes: ASCII byte by byte (Buffer.from costs more than a short term's loop).
    if (this.target.length < 3 * term.length) this.target = Buffer.allocUnsafe(Math.max(3 * term.length, 2 * this.target.length));
    const target = this.target;
    let tn = 0;
    for (let ch: number; tn < term.length && (ch = term.charCodeAt(tn)) < 0x80; tn++) target[tn] = ch;
    if (tn < term.length) tn = target.write(term, 0, 'utf8');
    // The last block whose first term is <= the term.
    let lo = 0;
    let hi = this.blocks - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      index.check(mid);
      if (compareBytes(target, tn, keys, index.keyStart(mid), index.keyEnd(mid)) >= 0) lo = mid;
      else hi = mid - 1;
    }
    const b = lo;
    index.check(b);
    const start = index.start(b);
    const bytes = index.end(b) - start;
    if (this.block.length < bytes) this.block = Buffer.allocUnsafe(Math.max(bytes, 2 * this.block.length));
    const c = new EntryCursor(this.read(start, bytes, this.block), bytes);
    const decoder = this.term;
    let offset = index.firstOffset(b);
    const count = Math.min(LEXICON_BLOCK_TERMS, this.terms - b * LEXICON_BLOCK_TERMS);
    try {
      for (let i = 0; i < count; i++) {
        const n = decoder.next(c, i === 0);
        const df = c.varint('df');
        const cf = df + c.varint('cf');
        const length = c.varint('length');
        const order = compareBytes(target, tn, decoder.bytes, 0, n);
        if (order === 0) return { term, termId: b * LEXICON_BLOCK_TERMS + i, df, cf, offset, length };
        if (order < 0) return undefined;
        offset += length;
      }
    } catch (err) {
      throw new LexiconFileError(`${this.path}: block ${b} (at ${start}): ${(err as Error).message}`);
    }
    return undefined;
  }

  /**
   * Every entry in termID order, to `visit` (`withTerms` false: the figures only, each term ''),
   * checking the structure as it goes: each block holds its terms exactly, starts with its key
   * and at its first list; terms rise in code point order; lists lie back to back from
   * `postingsStart` to the footer's end.
   */
  scan(postingsStart: number, visit: (term: string, termId: number, df: number, cf: number, offset: number, length: number) => void, withTerms = true): void {
    if (this.terms === 0) {
      if (this.postingsEnd !== postingsStart) throw new LexiconFileError(`${this.path}: no terms, yet lists end at ${this.postingsEnd}`);
      return;
    }
    const index = this.loadIndex();
    const keys = index.keys;
    const decoder = new TermDecoder();
    const entries = new BlockEntries();
    const strings = new Array<string>(LEXICON_BLOCK_TERMS).fill('');
    let chunk: Buffer = Buffer.allocUnsafe(0);
    let chunkStart = 0;
    let offset = postingsStart;
    for (let b = 0; b < this.blocks; b++) {
      index.check(b);
      const start = index.start(b);
      const end = index.end(b);
      if (end > chunkStart + chunk.length || start < chunkStart) {
        // Read whole blocks from this one on, up to SCAN_BYTES (at least this block).
        let last = b;
        while (last + 1 < this.blocks && index.end(last + 1) - start <= SCAN_BYTES && index.end(last + 1) > index.end(last)) last++;
        chunkStart = start;
        chunk = this.read(start, index.end(last) - start);
      }
      const at = () => `${this.path}: block ${b} (at ${start})`;
      if (index.firstOffset(b) !== offset) throw new LexiconFileError(`${at()}: its first list is at ${index.firstOffset(b)}, the previous list ends at ${offset}`);
      const c = new EntryCursor(chunk, end - chunkStart);
      c.pos = start - chunkStart;
      const first = b * LEXICON_BLOCK_TERMS;
      const count = Math.min(LEXICON_BLOCK_TERMS, this.terms - first);
      for (let i = 0; i < count; i++) {
        let n: number;
        try {
          n = decoder.next(c, i === 0);
          entries.df[i] = c.varint('df');
          entries.cf[i] = entries.df[i]! + c.varint('cf');
          entries.length[i] = c.varint('length');
        } catch (err) {
          throw new LexiconFileError(`${at()}: termID ${first + i}: ${(err as Error).message}`);
        }
        if (!decoder.rises && first + i > 0) throw new LexiconFileError(`${at()}: termID ${first + i} (${JSON.stringify(decoder.bytes.toString('utf8', 0, n))}) does not follow termID ${first + i - 1} in code point order`);
        if (i === 0 && compareBytes(decoder.bytes, n, keys, index.keyStart(b), index.keyEnd(b)) !== 0)
          throw new LexiconFileError(`${at()}: its first term is not its key in the block index`);
        if (withTerms) entries.push(i, decoder.bytes, n);
      }
      if (c.pos !== c.end) throw new LexiconFileError(`${at()}: ${c.end - c.pos} bytes after its ${count} terms`);
      if (withTerms) entries.strings(count, strings);
      for (let i = 0; i < count; i++) {
        visit(strings[i]!, first + i, entries.df[i]!, entries.cf[i]!, offset, entries.length[i]!);
        offset += entries.length[i]!;
      }
    }
    if (offset !== this.postingsEnd) throw new LexiconFileError(`${this.path}: the lists end at ${offset}, the footer says ${this.postingsEnd}`);
  }

  close(): void {
    closeSync(this.fd);
  }
}
