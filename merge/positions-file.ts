/**
 * positions.bin (--positions; docs/architecture.md "Positions"):
 *
 *   bytes 0..8    magic "GPIXPOS2"
 *   bytes 8..12   u32 documents D (little-endian)
 *   bytes 12..16  u32 terms T
 *   bytes 16..20  u32 title weight w (the build's titleWeight)
 *   bytes 20..24  u32 0 (reserved)
 *   then          D × u32: each document's title length L in terms (its title's positions are
 *                 0 .. L−1; its text's start at L + 1, or 0 without a title)
 *   then          each term's positions in termID order: for each posting of its list, in the
 *                 list's (docID) order, its positions as varints, the first one and then the
 *                 gaps to the next (>= 1)
 *   then          (T + 1) × u64: where each term's positions start, and where the last ends
 *
 * A posting's positions carry no count: its tf (postings.bin) is its title positions counted w
 * times and its text positions once (the title's repeats have none: indexer/fill/
 * block-positions.ts), so a reader takes positions until they add up to tf. A count a posting
 * was a third of the file (gen-corpus 300 MB: 25 M postings beside 43 M positions).
 *
 * The postings lists (postings.bin) are unchanged: a term's positions are read beside its list.
 */
import { closeSync, openSync, readSync, writeSync, fstatSync } from 'node:fs';
import { writeVarintU32 } from './varint.js';

export const POSITIONS_FILE = 'positions.bin';
export const POSITIONS_MAGIC = Buffer.from('GPIXPOS2', 'latin1');
export const POSITIONS_HEADER_BYTES = 24;
const FLUSH_BYTES = 4 << 20;

/** Buffered positions bytes: a posting's positions as varint gaps (see above), `offset` bytes so far. */
class PositionsBytesWriter {
  protected readonly fd: number;
  private readonly buf = new Uint8Array(FLUSH_BYTES + (1 << 16));
  private used = 0;
  /** Bytes written so far: the offset of the next byte. */
  offset = 0;

  constructor(readonly path: string) {
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

  /** One posting's positions, ascending (as many as add up to its tf: see above). */
  addPosting(positions: Uint32Array, from: number, n: number): void {
    if (this.used + 5 * n > this.buf.length) this.flush();
    if (5 * n > this.buf.length) {
      // A posting larger than the buffer: its varints one at a time.
      const one = new Uint8Array(5);
      let last = 0;
      for (let i = 0; i < n; i++) {
        const p = positions[from + i]!;
        this.put(one.subarray(0, writeVarintU32(one, 0, p - last)));
        last = p;
      }
      return;
    }
    const buf = this.buf;
    let at = this.used;
    let last = 0;
    for (let i = 0; i < n; i++) {
      const p = positions[from + i]!;
      at = writeVarintU32(buf, at, p - last);
      last = p;
    }
    this.offset += at - this.used;
    this.used = at;
  }

  /** Postings' positions already encoded as above (copied from another positions.bin: a merge of segments). */
  addEncoded(bytes: Uint8Array): void {
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
  addPosting(positions: Uint32Array, from: number, n: number): void;
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

export class PositionsFileWriter extends PositionsBytesWriter implements PositionsSink {
  private readonly starts: Float64Array;
  /** Terms whose start is recorded. */
  private started = 0;

  constructor(path: string, documents: number, private readonly terms: number, titleLengths: Uint32Array, titleWeight: number) {
    super(path);
    try {
      if (titleLengths.length !== documents) throw new Error(`positions: ${titleLengths.length} title lengths for ${documents} documents`);
      const header = Buffer.alloc(POSITIONS_HEADER_BYTES);
      POSITIONS_MAGIC.copy(header, 0);
      header.writeUInt32LE(documents, 8);
      header.writeUInt32LE(terms, 12);
      header.writeUInt32LE(titleWeight, 16);
      this.put(header);
      this.put(new Uint8Array(titleLengths.buffer, titleLengths.byteOffset, 4 * documents));
      this.starts = new Float64Array(terms + 1);
    } catch (err) {
      this.closeQuietly();
      throw err;
    }
  }

  /** The positions of term `termId` follow (terms in increasing order; a term skipped has none). */
  beginTerm(termId: number): void {
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

  /** Writes the offsets table and closes the file. */
  close(): void {
    while (this.started <= this.terms) this.starts[this.started++] = this.offset;
    const table = Buffer.alloc(8 * (this.terms + 1));
    for (let t = 0; t <= this.terms; t++) table.writeBigUInt64LE(BigInt(this.starts[t]!), 8 * t);
    this.put(table);
    this.flush();
    closeSync(this.fd);
  }
}

/** An open positions.bin: its header, title lengths and offsets in memory, each term's bytes read on demand. */
export class PositionsFile {
  readonly documents: number;
  readonly terms: number;
  readonly titleWeight: number;
  readonly titleLengths: Uint32Array;
  private readonly starts: Float64Array;
  private readonly fd: number;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'r');
    try {
      const size = fstatSync(this.fd).size;
      const header = this.read(0, POSITIONS_HEADER_BYTES);
      if (header.length < POSITIONS_HEADER_BYTES || !Buffer.from(header.subarray(0, 8)).equals(POSITIONS_MAGIC)) throw new Error(`${path}: not a gpuindex positions file`);
      const view = Buffer.from(header);
      this.documents = view.readUInt32LE(8);
      this.terms = view.readUInt32LE(12);
      this.titleWeight = view.readUInt32LE(16);
      if (this.titleWeight < 1) throw new Error(`${path}: title weight ${this.titleWeight}`);
      const tableAt = size - 8 * (this.terms + 1);
      const dataAt = POSITIONS_HEADER_BYTES + 4 * this.documents;
      if (tableAt < dataAt) throw new Error(`${path}: ${size} bytes cannot hold ${this.documents} documents and ${this.terms} terms`);
      const titles = this.read(POSITIONS_HEADER_BYTES, 4 * this.documents);
      this.titleLengths = new Uint32Array(titles.buffer, titles.byteOffset, this.documents);
      const table = Buffer.from(this.read(tableAt, 8 * (this.terms + 1)));
      this.starts = new Float64Array(this.terms + 1);
      for (let t = 0; t <= this.terms; t++) this.starts[t] = Number(table.readBigUInt64LE(8 * t));
      for (let t = 0; t <= this.terms; t++) {
        const s = this.starts[t]!;
        if (s < dataAt || s > tableAt || (t > 0 && s < this.starts[t - 1]!)) throw new Error(`${path}: term ${t}'s positions start at ${s}, outside ${dataAt}..${tableAt} or before the term before`);
      }
    } catch (err) {
      closeSync(this.fd);
      throw err;
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
    let got = 0;
    while (got < n) {
      const r = readSync(this.fd, out, got, n - got, at + got);
      if (r === 0) break;
      got += r;
    }
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
    return new PositionsCursor(this.termBytes(termId), list.docIds, list.tfs, this.titleLengths, this.titleWeight);
  }

  close(): void {
    closeSync(this.fd);
  }
}

/**
 * The postings of one term's positions, read forward beside its decoded list: positionsOf(i)
 * for postings i in increasing order, those between decoded only as far as telling their end.
 */
export class PositionsCursor {
  private at = 0;
  /** The posting `at` starts. */
  private posting = 0;
  private out = new Uint32Array(64);

  constructor(
    private readonly bytes: Uint8Array,
    private readonly docIds: Uint32Array,
    private readonly tfs: Uint32Array,
    private readonly titleLengths: Uint32Array,
    private readonly titleWeight: number,
  ) {}

  private varint(): number {
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

  /** Decodes posting `this.posting` into `out`; returns its count. */
  private decode(): number {
    const i = this.posting;
    if (i >= this.docIds.length) throw new RangeError(`positions: posting ${i} past the list's ${this.docIds.length}`);
    const tf = this.tfs[i]!;
    const title = this.titleLengths[this.docIds[i]!]!;
    let weight = 0;
    let n = 0;
    let p = 0;
    while (weight < tf) {
      p += this.varint();
      if (n === this.out.length) {
        const grown = new Uint32Array(2 * n);
        grown.set(this.out);
        this.out = grown;
      }
      this.out[n++] = p;
      weight += p < title ? this.titleWeight : 1;
    }
    if (weight !== tf) throw new RangeError(`positions of docID ${this.docIds[i]} add up to ${weight}, its tf is ${tf}`);
    this.posting++;
    return n;
  }

  /** Posting i's positions (a view valid until the next call); i must not decrease. */
  positionsOf(i: number): Uint32Array {
    if (i < this.posting) throw new RangeError(`positions: posting ${i} after ${this.posting}`);
    while (this.posting < i) this.decode();
    // decode() may grow `out`: the view after it (one taken before cut a posting of more than 64 positions).
    const n = this.decode();
    return this.out.subarray(0, n);
  }

  /** Whether every byte of the term has been read. */
  get atEnd(): boolean {
    return this.at === this.bytes.length;
  }
}
