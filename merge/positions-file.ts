/**
 * positions.bin (--positions; docs/architecture.md "Positions"), format 3:
 *
 *   bytes 0..8    magic "GPIXPOS3"
 *   bytes 8..12   u32 documents D (little-endian)
 *   bytes 12..16  u32 terms T
 *   bytes 16..20  u32 title weight w (the build's titleWeight)
 *   bytes 20..24  u32 0 (reserved)
 *   then          D varints: each document's title length L in terms (its title's positions are
 *                 0 .. L−1; its text's start at L + 1, or 0 without a title)
 *   then          D varints: each document's position bound E (every position of it is below E)
 *   then          each term's positions in termID order, from a byte boundary: a bit stream
 *                 (least significant bit of each byte first) holding, for each posting of its
 *                 list in the list's (docID) order, its first position and then the gaps to the
 *                 next (>= 1), each a Rice code of parameter k = ⌊log2 ⌊E / tf⌋⌋ (0 below 2):
 *                 the value's quotient by 2^k as that many 1 bits and a 0 bit, then its k low
 *                 bits; a quotient of 32 or more as 32 1 bits and then the value in 32 bits
 *   then          T varints: each term's bytes
 *   then          u64: where those varints start
 *
 * A posting's positions carry no count: its tf (postings.bin) is its title positions counted w
 * times and its text positions once (the title's repeats have none: indexer/fill/
 * block-positions.ts), so a reader takes positions until they add up to tf. Rice codes (Witten,
 * Moffat and Bell, "Managing Gigabytes"): a document's tf occurrences of a term, spread over its
 * E positions, are about E / tf apart, so k is known to the reader from the list (tf) and E
 * alone, and a lone occurrence costs about log2 E bits where a varint takes two bytes from 128.
 *
 * Format 2 ("GPIXPOS2", still read): D × u32 title lengths, no bounds, each posting's positions
 * as varints, and (T + 1) × u64 term starts at the end.
 *
 * The postings lists (postings.bin) are unchanged: a term's positions are read beside its list.
 */
import { closeSync, openSync, readSync, writeSync, fstatSync } from 'node:fs';
import { readVarint, writeVarintU32 } from './varint.js';
import { grown } from '../runtime/grown.js';
import { readFullAt } from '../runtime/read-at.js';

export const POSITIONS_FILE = 'positions.bin';
export const POSITIONS_MAGIC = Buffer.from('GPIXPOS3', 'latin1');
const POSITIONS_MAGIC_V2 = Buffer.from('GPIXPOS2', 'latin1');
export const POSITIONS_HEADER_BYTES = 24;
const FLUSH_BYTES = 4 << 20;
/** A quotient this large is written as an escape (see above): a bad bound costs bits, never correctness. */
const ESCAPE_QUOTIENT = 32;

/** The Rice parameter of a posting of `tf` in a document of position bound `end`. */
export function riceParameter(end: number, tf: number): number {
  const spacing = Math.floor(end / tf);
  return spacing < 2 ? 0 : 31 - Math.clz32(spacing);
}

/** Each document's position bound: its pairs (`lengths`) less its title's repeats, plus the gap after its title. */
export function positionBounds(lengths: Uint32Array, titleLengths: Uint32Array, titleWeight: number): Uint32Array {
  const ends = new Uint32Array(lengths.length);
  for (let d = 0; d < lengths.length; d++) {
    const title = titleLengths[d]!;
    ends[d] = Math.max(1, lengths[d]! - title * (titleWeight - 1) + (title > 0 ? 1 : 0));
  }
  return ends;
}

/** Buffered positions bytes: each posting's positions as Rice codes (see above), `offset` whole bytes so far. */
class PositionsBytesWriter {
  protected readonly fd: number;
  private readonly buf = new Uint8Array(FLUSH_BYTES + (1 << 16));
  private used = 0;
  /** Bits not yet in `buf` (fewer than 8), low bits first. */
  private acc = 0;
  private accBits = 0;
  /** Bytes written so far: the offset of the next whole byte. */
  offset = 0;

  constructor(readonly path: string, private readonly ends: Uint32Array) {
    this.fd = openSync(path, 'wx');
  }

  protected put(bytes: Uint8Array): void {
    for (let off = 0; off < bytes.length; ) {
      const n = Math.min(bytes.length - off, this.buf.length - this.used);
      this.buf.set(bytes.subarray(off, off + n), this.used);
      this.used += n;
      off += n;
      this.offset += n;
      if (this.used >= FLUSH_BYTES) this.flush();
    }
  }

  protected flush(): void {
    for (let off = 0; off < this.used; ) off += writeSync(this.fd, this.buf, off, this.used - off);
    this.used = 0;
  }

  /** Pads the bit stream to a byte boundary (a term's end). */
  protected alignToByte(): void {
    if (this.accBits === 0) return;
    this.putBits(0, 8 - this.accBits);
  }

  /** The low `n` (<= 24) bits of `v`. */
  private putBits(v: number, n: number): void {
    this.acc |= (v & ((1 << n) - 1)) << this.accBits;
    this.accBits += n;
    while (this.accBits >= 8) {
      this.buf[this.used++] = this.acc & 0xff;
      this.offset++;
      this.acc >>>= 8;
      this.accBits -= 8;
    }
  }

  private putRice(g: number, k: number): void {
    // At most 64 bits: room for them before each code.
    if (this.used + 9 > this.buf.length) this.flush();
    let q = Math.floor(g / 2 ** k);
    if (q >= ESCAPE_QUOTIENT) {
      this.putBits(0xffff, 16);
      this.putBits(0xffff, 16);
      this.putBits(g & 0xffff, 16);
      this.putBits(g >>> 16, 16);
      return;
    }
    for (; q >= 16; q -= 16) this.putBits(0xffff, 16);
    this.putBits((1 << q) - 1, q + 1);
    if (k > 16) {
      this.putBits(g & 0xffff, 16);
      this.putBits(g >>> 16, k - 16);
    } else if (k > 0) this.putBits(g, k);
  }

  /** One posting's positions, ascending (as many as add up to its tf: see above), of document `docId`. */
  addPosting(docId: number, tf: number, positions: Uint32Array, from: number, n: number): void {
    const k = riceParameter(this.ends[docId]!, tf);
    const mask = k > 23 ? 0 : (1 << k) - 1;
    const buf = this.buf;
    // The bit buffer in locals for the posting (fields written back around a flush or a long code):
    // a field load and store a bit write cost more than the code itself.
    let acc = this.acc;
    let accBits = this.accBits;
    let used = this.used;
    let bytes = 0;
    let last = 0;
    for (let i = 0; i < n; i++) {
      const p = positions[from + i]!;
      const g = p - last;
      last = p;
      const q = g >>> k;
      const bits = q + 1 + k;
      if (bits <= 24) {
        // Most codes: the ones, the zero and the low bits in one write.
        if (used + 4 > buf.length) {
          this.used = used;
          this.flush();
          used = 0;
        }
        acc |= (((1 << q) - 1) | ((g & mask) << (q + 1))) << accBits;
        accBits += bits;
        while (accBits >= 8) {
          buf[used++] = acc & 0xff;
          bytes++;
          acc >>>= 8;
          accBits -= 8;
        }
      } else {
        this.acc = acc;
        this.accBits = accBits;
        this.used = used;
        this.offset += bytes;
        bytes = 0;
        this.putRice(g, k);
        acc = this.acc;
        accBits = this.accBits;
        used = this.used;
      }
    }
    this.acc = acc;
    this.accBits = accBits;
    this.used = used;
    this.offset += bytes;
  }

  /** Bits [from, to) of `bytes` (least significant first), codes of another format-3 file: a merge of segments. */
  addBits(bytes: Uint8Array, from: number, to: number): void {
    for (let bit = from; bit < to; ) {
      if (this.used + 4 > this.buf.length) this.flush();
      const n = Math.min(24, to - bit);
      const at = bit >>> 3;
      // A 32-bit window holds at least 25 bits from `bit`; past the end it reads zeros.
      const w = ((bytes[at]! | 0) | ((bytes[at + 1]! | 0) << 8) | ((bytes[at + 2]! | 0) << 16) | ((bytes[at + 3]! | 0) << 24)) >>> (bit & 7);
      this.putBits(w, n);
      bit += n;
    }
  }

  /** Whether the bit stream stands on a byte boundary (a term's start): addEncoded() may be called. */
  get byteAligned(): boolean {
    return this.accBits === 0;
  }

  /**
   * A term's positions already encoded as above, its bytes whole, padding included (copied from
   * another format-3 positions.bin: a merge of segments). Only on a byte boundary, and only
   * where the term ends with them: the padding would sit between codes otherwise.
   */
  addEncoded(bytes: Uint8Array): void {
    if (this.accBits !== 0) throw new Error('positions: encoded bytes copied off a byte boundary');
    this.put(bytes);
  }

  closeQuietly(): void {
    try {
      closeSync(this.fd);
    } catch {
      /* closed already */
    }
  }
}

/** Where a writer's terms go: beginTerm before each term's postings, in increasing termID order. */
export interface PositionsSink {
  beginTerm(termId: number): void;
  addPosting(docId: number, tf: number, positions: Uint32Array, from: number, n: number): void;
}

/**
 * A bare part of positions.bin: one merge thread's term range, its terms' bytes only. Keeps
 * where each of its terms starts in the part, for PositionsFileWriter.appendPart.
 */
export class PositionsPartWriter extends PositionsBytesWriter implements PositionsSink {
  private termIds = new Uint32Array(1024);
  private starts = new Float64Array(1024);
  /** Terms begun. */
  terms = 0;

  beginTerm(termId: number): void {
    if (this.terms > 0 && termId <= this.termIds[this.terms - 1]!) throw new Error(`positions: term ${termId} out of order`);
    this.alignToByte();
    if (this.terms === this.termIds.length) {
      const ids = new Uint32Array(2 * this.terms);
      ids.set(this.termIds);
      this.termIds = ids;
      const starts = new Float64Array(2 * this.terms);
      starts.set(this.starts);
      this.starts = starts;
    }
    this.termIds[this.terms] = termId;
    this.starts[this.terms++] = this.offset;
  }

  /** Flushes and closes the part; returns its terms and where each starts in it. */
  close(): PositionsPartTerms {
    this.alignToByte();
    this.flush();
    closeSync(this.fd);
    return { termIds: this.termIds.slice(0, this.terms), starts: this.starts.slice(0, this.terms), bytes: this.offset };
  }
}

/** The terms of a part, in increasing termID order, and where each one's bytes start in it. */
export interface PositionsPartTerms {
  termIds: Uint32Array;
  starts: Float64Array;
  bytes: number;
}

/** What positions.bin's header and document tables hold. */
export interface PositionsDocuments {
  titleLengths: Uint32Array;
  /** Each document's position bound (positionBounds). */
  ends: Uint32Array;
  titleWeight: number;
}

export class PositionsFileWriter extends PositionsBytesWriter implements PositionsSink {
  private readonly starts: Float64Array;
  /** Terms whose start is recorded. */
  private started = 0;

  constructor(path: string, private readonly terms: number, docs: PositionsDocuments) {
    super(path, docs.ends);
    try {
      const documents = docs.titleLengths.length;
      if (docs.ends.length !== documents) throw new Error(`positions: ${docs.ends.length} position bounds for ${documents} documents`);
      const header = Buffer.alloc(POSITIONS_HEADER_BYTES);
      POSITIONS_MAGIC.copy(header, 0);
      header.writeUInt32LE(documents, 8);
      header.writeUInt32LE(terms, 12);
      header.writeUInt32LE(docs.titleWeight, 16);
      this.put(header);
      this.putVarints(docs.titleLengths);
      this.putVarints(docs.ends);
      this.starts = new Float64Array(terms + 1);
    } catch (err) {
      this.closeQuietly();
      throw err;
    }
  }

  private putVarints(values: Uint32Array): void {
    const chunk = new Uint8Array(5 << 12);
    for (let i = 0; i < values.length; ) {
      let at = 0;
      for (const end = Math.min(values.length, i + 4096); i < end; i++) at = writeVarintU32(chunk, at, values[i]!);
      this.put(chunk.subarray(0, at));
    }
  }

  /** The positions of term `termId` follow (terms in increasing order; a term skipped has none). */
  beginTerm(termId: number): void {
    this.alignToByte();
    this.startTermAt(termId, this.offset);
  }

  private startTermAt(termId: number, at: number): void {
    if (termId < this.started || termId >= this.terms) throw new Error(`positions: term ${termId} out of order`);
    while (this.started <= termId) this.starts[this.started++] = at;
  }

  /**
   * Appends the part file at `partPath` (PositionsPartWriter, its terms after every term so
   * far) unchanged; its terms' starts are where they land here. Returns the bytes copied.
   */
  appendPart(partPath: string, part: PositionsPartTerms): number {
    this.alignToByte();
    const base = this.offset;
    for (let i = 0; i < part.termIds.length; i++) this.startTermAt(part.termIds[i]!, base + part.starts[i]!);
    this.flush();
    const fd = openSync(partPath, 'r');
    const chunk = new Uint8Array(FLUSH_BYTES);
    let copied = 0;
    try {
      for (;;) {
        const n = readSync(fd, chunk, 0, chunk.length, null);
        if (n === 0) break;
        for (let off = 0; off < n; ) off += writeSync(this.fd, chunk, off, n - off);
        copied += n;
      }
    } finally {
      closeSync(fd);
    }
    if (copied !== part.bytes) throw new Error(`positions: part ${partPath} holds ${copied} bytes, its writer wrote ${part.bytes}`);
    this.offset += copied;
    return copied;
  }

  /** Writes the terms' lengths and where they start, and closes the file. */
  close(): void {
    this.alignToByte();
    while (this.started <= this.terms) this.starts[this.started++] = this.offset;
    const tableAt = this.offset;
    const lengths = new Uint32Array(this.terms);
    for (let t = 0; t < this.terms; t++) lengths[t] = this.starts[t + 1]! - this.starts[t]!;
    this.putVarints(lengths);
    const footer = Buffer.alloc(8);
    footer.writeBigUInt64LE(BigInt(tableAt), 0);
    this.put(footer);
    this.flush();
    closeSync(this.fd);
  }
}

/** An open positions.bin: its header, document tables and term offsets in memory, each term's bytes read on demand. */
export class PositionsFile {
  readonly documents: number;
  readonly terms: number;
  readonly titleWeight: number;
  readonly titleLengths: Uint32Array;
  /** Format 3: each document's position bound; format 2 has none. */
  readonly ends?: Uint32Array;
  readonly format: 2 | 3;
  private readonly starts: Float64Array;
  private readonly fd: number;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'r');
    try {
      const size = fstatSync(this.fd).size;
      const header = this.read(0, POSITIONS_HEADER_BYTES);
      const magic = Buffer.from(header.subarray(0, 8));
      if (header.length < POSITIONS_HEADER_BYTES || !(magic.equals(POSITIONS_MAGIC) || magic.equals(POSITIONS_MAGIC_V2))) throw new Error(`${path}: not a gpuindex positions file`);
      this.format = magic.equals(POSITIONS_MAGIC) ? 3 : 2;
      const view = Buffer.from(header);
      this.documents = view.readUInt32LE(8);
      this.terms = view.readUInt32LE(12);
      this.titleWeight = view.readUInt32LE(16);
      if (this.titleWeight < 1) throw new Error(`${path}: title weight ${this.titleWeight}`);
      this.starts = new Float64Array(this.terms + 1);
      if (this.format === 2) {
        const tableAt = size - 8 * (this.terms + 1);
        const dataAt = POSITIONS_HEADER_BYTES + 4 * this.documents;
        if (tableAt < dataAt) throw new Error(`${path}: ${size} bytes cannot hold ${this.documents} documents and ${this.terms} terms`);
        const titles = this.read(POSITIONS_HEADER_BYTES, 4 * this.documents);
        this.titleLengths = new Uint32Array(titles.buffer, titles.byteOffset, this.documents);
        const table = Buffer.from(this.read(tableAt, 8 * (this.terms + 1)));
        for (let t = 0; t <= this.terms; t++) this.starts[t] = Number(table.readBigUInt64LE(8 * t));
        this.checkStarts(dataAt, tableAt);
      } else {
        if (size < POSITIONS_HEADER_BYTES + 8) throw new Error(`${path}: ${size} bytes cannot hold its header and table`);
        const tableAt = Number(Buffer.from(this.read(size - 8, 8)).readBigUInt64LE(0));
        if (tableAt < POSITIONS_HEADER_BYTES || tableAt > size - 8) throw new Error(`${path}: its terms' table starts at ${tableAt}, outside ${POSITIONS_HEADER_BYTES}..${size - 8}`);
        const docBytes = this.read(POSITIONS_HEADER_BYTES, Math.min(tableAt - POSITIONS_HEADER_BYTES, 10 * this.documents));
        const titleLengths = new Uint32Array(this.documents);
        const ends = new Uint32Array(this.documents);
        let at = 0;
        try {
          for (let d = 0; d < this.documents; d++) [titleLengths[d], at] = readVarint(docBytes, at);
          for (let d = 0; d < this.documents; d++) [ends[d], at] = readVarint(docBytes, at);
        } catch {
          throw new Error(`${path}: its document tables run past its terms' table`);
        }
        this.titleLengths = titleLengths;
        this.ends = ends;
        const table = this.read(tableAt, size - 8 - tableAt);
        let s = POSITIONS_HEADER_BYTES + at;
        let p = 0;
        try {
          for (let t = 0; t < this.terms; t++) {
            this.starts[t] = s;
            let length: number;
            [length, p] = readVarint(table, p);
            s += length;
          }
        } catch {
          throw new Error(`${path}: its terms' table holds fewer than ${this.terms} lengths`);
        }
        this.starts[this.terms] = s;
        if (p !== table.length) throw new Error(`${path}: ${table.length - p} bytes after its terms' table`);
        this.checkStarts(POSITIONS_HEADER_BYTES + at, tableAt);
        if (s !== tableAt) throw new Error(`${path}: its terms end at ${s}, its table starts at ${tableAt}`);
      }
    } catch (err) {
      closeSync(this.fd);
      throw err;
    }
  }

  private checkStarts(dataAt: number, tableAt: number): void {
    for (let t = 0; t <= this.terms; t++) {
      const s = this.starts[t]!;
      if (s < dataAt || s > tableAt || (t > 0 && s < this.starts[t - 1]!)) throw new Error(`${this.path}: term ${t}'s positions start at ${s}, outside ${dataAt}..${tableAt} or before the term before`);
    }
  }

  /** The file whole, once loadWhole() read it: termBytes() are views of it then. */
  private whole?: Uint8Array;

  /** Bytes of the file. */
  get bytes(): number {
    return fstatSync(this.fd).size;
  }

  /** Reads the file into memory: a merge takes every term of it, in an order not the file's. */
  loadWhole(): void {
    this.whole ??= this.read(0, this.bytes);
  }

  private read(at: number, n: number): Uint8Array {
    if (this.whole) return this.whole.subarray(at, at + n);
    const out = new Uint8Array(n);
    const got = readFullAt(this.fd, out, at);
    return got === n ? out : out.subarray(0, got);
  }

  /** The encoded positions of term `termId` (every posting of its list). */
  termBytes(termId: number): Uint8Array {
    if (termId < 0 || termId >= this.terms) throw new RangeError(`positions: no term ${termId}`);
    const at = this.starts[termId]!;
    return this.read(at, this.starts[termId + 1]! - at);
  }

  /** A cursor over term `termId`'s positions, beside its decoded list. */
  cursor(termId: number, list: { docIds: Uint32Array; tfs: Uint32Array }): PositionsCursor {
    if (!this.ends) return new VarintPositionsCursor(this.termBytes(termId), list.docIds, list.tfs, this.titleLengths, this.titleWeight);
    // 4 zero bytes after the term's: the decoder reads 32 bits at a time.
    if (termId < 0 || termId >= this.terms) throw new RangeError(`positions: no term ${termId}`);
    const at = this.starts[termId]!;
    const n = this.starts[termId + 1]! - at;
    const padded = new Uint8Array(n + 4);
    const got = this.read(at, n);
    padded.set(got);
    return new RicePositionsCursor(padded, got.length, list.docIds, list.tfs, this.titleLengths, this.titleWeight, this.ends);
  }

  /**
   * Format 3: term `termId`'s bytes and the bit where each posting of its list ends, found by
   * decoding it (a code's end is not marked): a merge copies postings as bit ranges.
   */
  postingBits(termId: number, list: { docIds: Uint32Array; tfs: Uint32Array }): { bytes: Uint8Array; ends: Float64Array } {
    const cursor = this.cursor(termId, list);
    if (!(cursor instanceof RicePositionsCursor)) throw new Error(`${this.path}: format ${this.format} has no bit ranges`);
    const ends = new Float64Array(list.docIds.length);
    for (let i = 0; i < ends.length; i++) {
      cursor.positionsOf(i);
      ends[i] = cursor.bitAt;
    }
    if (!cursor.atEnd) throw new RangeError(`bytes left after its ${list.docIds.length} postings`);
    return { bytes: cursor.termBytes, ends };
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** The postings of one term's positions, read forward beside its decoded list. */
export interface PositionsCursor {
  /** Posting i's positions (a view valid until the next call); i must not decrease. */
  positionsOf(i: number): Uint32Array;
  /** Whether every byte of the term has been read. */
  readonly atEnd: boolean;
}

/**
 * positionsOf(i) for postings i in increasing order, those between decoded only as far as
 * telling their end. Each format decodes a posting into `out` its own way (decode()).
 */
abstract class ForwardPositionsCursor implements PositionsCursor {
  /** The posting the next value starts. */
  protected posting = 0;
  protected out: Uint32Array = new Uint32Array(64);

  constructor(
    protected readonly docIds: Uint32Array,
    protected readonly tfs: Uint32Array,
    protected readonly titleLengths: Uint32Array,
    protected readonly titleWeight: number,
  ) {}

  /** Decodes posting `this.posting` into `out` and moves past it; returns its count. */
  protected abstract decode(): number;
  abstract get atEnd(): boolean;

  positionsOf(i: number): Uint32Array {
    if (i < this.posting) throw new RangeError(`positions: posting ${i} after ${this.posting}`);
    while (this.posting < i) this.decode();
    // decode() may grow `out`: the view after it.
    const n = this.decode();
    return this.out.subarray(0, n);
  }
}

/** Format 2: varints. */
class VarintPositionsCursor extends ForwardPositionsCursor {
  private at = 0;

  constructor(
    private readonly bytes: Uint8Array,
    docIds: Uint32Array,
    tfs: Uint32Array,
    titleLengths: Uint32Array,
    titleWeight: number,
  ) {
    super(docIds, tfs, titleLengths, titleWeight);
  }

  protected decode(): number {
    const i = this.posting;
    if (i >= this.docIds.length) throw new RangeError(`positions: posting ${i} past the list's ${this.docIds.length}`);
    const tf = this.tfs[i]!;
    const docId = this.docIds[i]!;
    const title = this.titleLengths[docId]!;
    let weight = 0;
    let n = 0;
    let p = 0;
    while (weight < tf) {
      p += this.next();
      if (n === this.out.length) this.out = grown(this.out, n + 1);
      this.out[n++] = p;
      weight += p < title ? this.titleWeight : 1;
    }
    if (weight !== tf) throw new RangeError(`positions of docID ${docId} add up to ${weight}, its tf is ${tf}`);
    this.posting++;
    return n;
  }

  /** The next gap (or first position) of the current posting. */
  private next(): number {
    const b = this.bytes;
    let v = 0;
    let shift = 0;
    for (;;) {
      if (this.at >= b.length) throw new RangeError('positions run past their term');
      const x = b[this.at++]!;
      v += (x & 0x7f) * 2 ** shift;
      if (x < 0x80) return v;
      shift += 7;
    }
  }

  get atEnd(): boolean {
    return this.at === this.bytes.length;
  }
}

/**
 * Format 3: Rice codes, k from each posting's tf and its document's bound. A code is read from a
 * 32-bit window (at least 25 bits past the current one): its 1 bits counted at once, its low bits
 * masked out; codes longer than the window (escapes, wide parameters) a byte at a time.
 */
class RicePositionsCursor extends ForwardPositionsCursor {
  /** The next bit. */
  private bit = 0;

  constructor(
    /** The term's bytes, then 4 zero bytes. */
    private readonly bytes: Uint8Array,
    private readonly length: number,
    docIds: Uint32Array,
    tfs: Uint32Array,
    titleLengths: Uint32Array,
    titleWeight: number,
    private readonly ends: Uint32Array,
  ) {
    super(docIds, tfs, titleLengths, titleWeight);
  }

  protected decode(): number {
    const i = this.posting;
    if (i >= this.docIds.length) throw new RangeError(`positions: posting ${i} past the list's ${this.docIds.length}`);
    const tf = this.tfs[i]!;
    const docId = this.docIds[i]!;
    const title = this.titleLengths[docId]!;
    const titleWeight = this.titleWeight;
    const k = riceParameter(this.ends[docId]!, tf);
    const mask = k > 24 ? 0 : (1 << k) - 1;
    const b = this.bytes;
    const bitEnd = 8 * this.length;
    let bit = this.bit;
    let out = this.out;
    let weight = 0;
    let n = 0;
    let p = 0;
    while (weight < tf) {
      const at = bit >>> 3;
      const w = (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> (bit & 7);
      const zeros = ~w;
      // The code's 1 bits: the window's trailing ones.
      const q = zeros === 0 ? 32 : 31 - Math.clz32(zeros & -zeros);
      if (q + 1 + k <= 25) {
        p += (q << k) | ((w >>> (q + 1)) & mask);
        bit += q + 1 + k;
      } else {
        this.bit = bit;
        p += this.slowCode(k);
        bit = this.bit;
      }
      if (bit > bitEnd) throw new RangeError('positions run past their term');
      if (n === out.length) this.out = out = grown(out, n + 1);
      out[n++] = p;
      weight += p < title ? titleWeight : 1;
    }
    if (weight !== tf) throw new RangeError(`positions of docID ${docId} add up to ${weight}, its tf is ${tf}`);
    this.bit = bit;
    this.posting++;
    return n;
  }

  /** The code at `this.bit` a byte at a time (see the format). */
  private slowCode(k: number): number {
    const b = this.bytes;
    const bitEnd = 8 * this.length;
    let bit = this.bit;
    let q = 0;
    for (;;) {
      if (bit >= bitEnd) throw new RangeError('positions run past their term');
      const shift = bit & 7;
      const inv = ~(b[bit >>> 3]! >>> shift);
      const run = Math.min(31 - Math.clz32(inv & -inv), 8 - shift, ESCAPE_QUOTIENT - q);
      q += run;
      bit += run;
      if (q === ESCAPE_QUOTIENT) {
        this.bit = bit;
        return this.bits(32);
      }
      if (run < 8 - shift) {
        bit++; // the 0 bit
        break;
      }
    }
    this.bit = bit;
    return k === 0 ? q : q * 2 ** k + this.bits(k);
  }

  /** The next `n` (<= 32) bits as a number. */
  private bits(n: number): number {
    const b = this.bytes;
    let bit = this.bit;
    if (bit + n > 8 * this.length) throw new RangeError('positions run past their term');
    let v = 0;
    let got = 0;
    while (got < n) {
      const shift = bit & 7;
      const take = Math.min(8 - shift, n - got);
      v += ((b[bit >>> 3]! >>> shift) & ((1 << take) - 1)) * 2 ** got;
      got += take;
      bit += take;
    }
    this.bit = bit;
    return v;
  }

  get atEnd(): boolean {
    return (this.bit + 7) >>> 3 === this.length;
  }

  /** The bit the next posting starts at. */
  get bitAt(): number {
    return this.bit;
  }

  /** The term's bytes (4 zero bytes after them). */
  get termBytes(): Uint8Array {
    return this.bytes;
  }
}
