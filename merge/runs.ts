/**
 * Sorted run files: the plain binary files between the sort stage and the merge stage.
 *
 *   bytes 0..8   magic "GPIXRUN4"
 *   bytes 8..12  u32 pair count (little-endian)
 *   bytes 12..16 u32 key space: the terms in the build's dictionary when the block was sealed
 *   then the body: the count (u32 term key, u32 docID) pairs, sorted by (key, docID), as term
 *                groups of varints (run-codec.ts): 1.2-1.6 bytes a pair on the synthetic and
 *                html crawls, where the pairs themselves took 8
 *   then the samples: (key, pair index, body byte offset as two u32) of group 0 and of the
 *                first group at or past every sampleStrideOf(count)-th pair
 *   then the trailer: u32 sample count, u32 body bytes (low, high)
 *
 * The samples let the merge cut runs into term ranges with one read a run (splitTermRanges) and
 * start a cursor at the first group of its range (groupAtOrAfter).
 *
 * A term key is the term's rank in code point order among those first `key space` terms
 * (merge/term-order.ts): runs are in the index's term order, and KeyWalk maps keys to termIDs.
 *
 * Writing encodes from the sorter's view (for the GPU sorter: its mapped readback range) a
 * megabyte of body at a time.
 */
import type { Hash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { endianness } from 'node:os';
import { KeyWalk } from './term-order.js';
import { positionOfTerm, type RunLexicon } from './run-lexicons.js';
import { readFullAt } from '../runtime/read-at.js';
import { isMainThread } from 'node:worker_threads';
import { firstGroupAtOrAfter, RunBodyDecoder, RunBodyEncoder, SAMPLE_WORDS, type DocTally, type GroupStart } from './run-codec.js';

export { sampleStrideOf, type GroupStart } from './run-codec.js';

const MAGIC = Buffer.from('GPIXRUN4', 'latin1');
export const RUN_HEADER_BYTES = 16;
const RUN_TRAILER_BYTES = 12;

if (endianness() !== 'LE') throw new Error('gpuindex needs a little-endian machine (run files are written from typed arrays)');

/** The header of a run of `count` pairs: magic, then the count and the key space (u32 LE). */
function runHeader(count: number, keySpace: number): Buffer {
  const header = Buffer.alloc(RUN_HEADER_BYTES);
  MAGIC.copy(header, 0);
  header.writeUInt32LE(count, 8);
  header.writeUInt32LE(keySpace, 12);
  return header;
}

/** The trailer after the samples: their count and the body's bytes. */
function runTrailer(sampleCount: number, bodyBytes: number): Buffer {
  const trailer = Buffer.alloc(RUN_TRAILER_BYTES);
  trailer.writeUInt32LE(sampleCount, 0);
  trailer.writeUInt32LE(bodyBytes % 2 ** 32, 4);
  trailer.writeUInt32LE(Math.floor(bodyBytes / 2 ** 32), 8);
  return trailer;
}

/** Writes all of `bytes` at the file's current position. */
function writeAll(fd: number, bytes: Uint8Array, hash?: Hash): void {
  for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off);
  hash?.update(bytes);
}

/**
 * Writes one sorted run; `sorted` holds 2*count u32 values. Returns bytes written. `hash`, when
 * given, is fed the file's bytes as they are written.
 */
export function writeRunFile(path: string, sorted: Uint32Array, count: number, keySpace: number, hash?: Hash): number {
  const fd = openSync(path, 'w');
  try {
    writeAll(fd, runHeader(count, keySpace), hash);
    const body = new RunBodyEncoder(sorted, count);
    for (let piece = body.next(); piece; piece = body.next()) writeAll(fd, piece, hash);
    const samples = body.samples();
    writeAll(fd, samples, hash);
    writeAll(fd, runTrailer(body.sampleCount, body.bodyBytes), hash);
    return RUN_HEADER_BYTES + body.bodyBytes + samples.length + RUN_TRAILER_BYTES;
  } finally {
    closeSync(fd);
  }
}

/**
 * writeRunFile on the libuv thread pool, a megabyte of body at a time: the main thread goes on
 * taking parse batches between pieces (a run written at once would stall every parse worker
 * waiting for its batches to be taken). `sorted` must stay valid until the promise settles.
 * `hash`, when given, is fed the file's bytes as they are written (--resume checkpoints record
 * each run's SHA-256 without reading the run back).
 */
export async function writeRunFileAsync(path: string, sorted: Uint32Array, count: number, keySpace: number, hash?: Hash): Promise<number> {
  const file = await open(path, 'w');
  try {
    let at = 0;
    const put = async (bytes: Uint8Array): Promise<void> => {
      for (let off = 0; off < bytes.length; ) off += (await file.write(bytes, off, bytes.length - off, at + off)).bytesWritten;
      hash?.update(bytes);
      at += bytes.length;
    };
    await put(runHeader(count, keySpace));
    const body = new RunBodyEncoder(sorted, count);
    for (let piece = body.next(); piece; piece = body.next()) await put(piece);
    await put(body.samples());
    await put(runTrailer(body.sampleCount, body.bodyBytes));
    return at;
  } finally {
    await file.close();
  }
}

export interface RunHeader {
  count: number;
  keySpace: number;
  /** Bytes of the pairs' encoding (the body), from RUN_HEADER_BYTES on. */
  bodyBytes: number;
  sampleCount: number;
}

/** Reads the header and trailer of a run file. Throws for anything that is not a whole run file. */
export function readRunHeader(fd: number, path: string): RunHeader {
  const header = Buffer.alloc(RUN_HEADER_BYTES);
  if (readSync(fd, header, 0, RUN_HEADER_BYTES, 0) !== RUN_HEADER_BYTES || !header.subarray(0, 8).equals(MAGIC)) throw new Error(`${path}: not a gpuindex run file`);
  const size = fstatSync(fd).size;
  const trailer = Buffer.alloc(RUN_TRAILER_BYTES);
  if (size < RUN_HEADER_BYTES + RUN_TRAILER_BYTES || readFullAt(fd, trailer, size - RUN_TRAILER_BYTES) < RUN_TRAILER_BYTES) throw new Error(`${path}: run file is truncated`);
  const sampleCount = trailer.readUInt32LE(0);
  const bodyBytes = trailer.readUInt32LE(4) + trailer.readUInt32LE(8) * 2 ** 32;
  if (RUN_HEADER_BYTES + bodyBytes + 4 * SAMPLE_WORDS * sampleCount + RUN_TRAILER_BYTES !== size) throw new Error(`${path}: run file is truncated or damaged (its trailer does not match its size)`);
  return { count: header.readUInt32LE(8), keySpace: header.readUInt32LE(12), bodyBytes, sampleCount };
}

/** Pairs in the run files at `paths`, from their headers. */
export function pairsOfRuns(paths: readonly string[]): number {
  let pairs = 0;
  for (const path of paths) {
    const fd = openSync(path, 'r');
    try {
      pairs += readRunHeader(fd, path).count;
    } finally {
      closeSync(fd);
    }
  }
  return pairs;
}

/** The samples of an open run file (one read): SAMPLE_WORDS u32 each, see run-codec.ts. */
export function readKeySamples(fd: number, path: string, header: RunHeader): Uint32Array {
  const samples = new Uint32Array(SAMPLE_WORDS * header.sampleCount);
  const bytes = new Uint8Array(samples.buffer);
  if (readFullAt(fd, bytes, RUN_HEADER_BYTES + header.bodyBytes) < bytes.length) throw new Error(`${path}: run file is truncated`);
  return samples;
}

/** A reader of a run's body bytes at body offsets. */
function bodyReader(fd: number): (into: Uint8Array, position: number) => number {
  return (into, position) => readFullAt(fd, into, RUN_HEADER_BYTES + position);
}

/** The first group of an open run whose term key is >= key (at the body's end if none): one read of at most a stride's groups. */
export function groupAtOrAfter(fd: number, path: string, header: RunHeader, samples: Uint32Array, key: number): GroupStart {
  if (header.count === 0) return { pair: 0, byte: 0, keyBefore: 0 };
  return firstGroupAtOrAfter(bodyReader(fd), path, header.count, header.bodyBytes, samples, key);
}

/** Growable columns a cursor appends postings to (RunCursor.takeTerm). */
export interface PostingsColumns {
  docIds: Uint32Array;
  tfs: Uint32Array;
  /** Postings held. */
  df: number;
  /** Makes room for at least `n` postings, keeping the first `df`. */
  reserve(n: number): void;
}

/**
 * Pairs [start, end) of a run file: what one merge thread reads of it. `from`: where `start`'s
 * group begins (groupAtOrAfter), without which a cursor decodes the run from its start;
 * `endByte`: where `end`'s does (else the body's end).
 */
export interface PairRange {
  start: number;
  end: number;
  from?: GroupStart;
  endByte?: number;
}

/** Where a cursor's pairs map to termIDs: see KeyWalk. Without it, keys are termIDs. */
export interface CursorTerms {
  /** The lexicon the run is keyed by (run-lexicons.ts). */
  lexicon: RunLexicon;
  /** The final termID the cursor's range starts at, and the run's key there (keysBefore). */
  startTerm?: number;
  startKey?: number;
}

/**
 * A sorted block that was not written as a run: a build of one block merges it from memory
 * (no run file written and read back). `pairs` holds its (key, docID) pairs, interleaved.
 */
export interface BlockRun {
  pairs: Uint32Array;
  count: number;
  /** As a run file's header: the TermKeys' length the block was sorted with, or NO_KEY_SPACE. */
  keySpace: number;
}

/** A run to merge: a run file's path, or a block still in memory. */
export type RunSource = string | BlockRun;

/**
 * Buffers of the cursors this worker thread has released (RunCursor.release), for its next
 * ones: a merge thread takes range after range, and new buffers for every run of every range
 * are zero-filled and faulted in anew. The main thread keeps none: a service's merges there
 * would hold them for good.
 */
const spareBuffers: ArrayBuffer[] = [];

/** `bytes` bytes: a view of the start of the smallest spare buffer as large, or a new one. */
function takeBytes(bytes: number): Uint8Array {
  let best = -1;
  for (let i = 0; i < spareBuffers.length; i++) {
    const size = spareBuffers[i]!.byteLength;
    if (size >= bytes && (best < 0 || size < spareBuffers[best]!.byteLength)) best = i;
  }
  if (best < 0) return new Uint8Array(bytes);
  const spare = spareBuffers[best]!;
  spareBuffers[best] = spareBuffers[spareBuffers.length - 1]!;
  spareBuffers.pop();
  return new Uint8Array(spare, 0, bytes);
}

/**
 * Pairs a cursor decodes at a time: a small share of its memory (the rest holds the run's bytes),
 * so that the decoded pairs stay in cache while the merge takes them.
 */
function decodedPairsOf(chunkPairs: number): number {
  return Math.max(512, Math.min(1 << 14, chunkPairs >> 3));
}

/**
 * A forward cursor over one run file (or the pair range `range` of it), reading and decoding it
 * in chunks so that the merge's memory is (number of runs × chunk size), whatever the run sizes:
 * `chunkPairs` pairs' worth (8 bytes each), most of it for the run's bytes. `termId` is the
 * final termID of the current pair.
 */
export class RunCursor {
  private readonly fd: number;
  /** The run's pairs when it is a block in memory (no file: the whole run is one chunk). */
  private readonly block?: BlockRun;
  readonly path: string;
  /** Pairs this cursor will yield. */
  readonly count: number;
  private readonly chunk: Uint32Array;
  private readonly walk?: KeyWalk;
  /** The docID of each document number the run holds (a worker's lexicon); absent: docIDs. */
  private readonly docIds?: Uint32Array;
  private chunkPairs = 0; // pairs loaded in chunk
  private pos = 0; // index of the current pair within chunk
  private consumed = 0; // pairs of the range before chunk
  /** The current pair's term key, as the run holds it. */
  private key = 0;
  termId = 0;
  docId = 0;
  done = false;

  constructor(source: RunSource, chunkPairs: number, range?: PairRange, terms?: CursorTerms) {
    let header: RunHeader;
    if (typeof source === 'string') {
      this.path = source;
      this.fd = openSync(source, 'r');
      try {
        header = readRunHeader(this.fd, source);
      } catch (err) {
        closeSync(this.fd);
        throw err;
      }
    } else {
      this.path = '<block in memory>';
      this.fd = -1;
      this.closed = true;
      this.block = source;
      header = { count: source.count, keySpace: source.keySpace, bodyBytes: 0, sampleCount: 0 };
    }
    if (terms) {
      const { order, finals, docIds } = terms.lexicon;
      this.walk = new KeyWalk(order, header.keySpace, positionOfTerm(finals, terms.startTerm ?? 0), terms.startKey, finals);
      this.docIds = docIds;
    }
    const first = range ? range.start : 0;
    this.count = Math.max(0, (range ? Math.min(range.end, header.count) : header.count) - first);
    if (this.block) this.chunk = this.block.pairs.subarray(2 * first, 2 * (first + this.count));
    else {
      const decodedPairs = Math.min(decodedPairsOf(chunkPairs), Math.max(1, this.count));
      this.chunk = new Uint32Array(takeBytes(8 * decodedPairs).buffer, 0, 2 * decodedPairs);
      if (this.count > 0) {
        const from = range?.from ?? { pair: 0, byte: 0, keyBefore: 0 };
        const endByte = range?.endByte ?? header.bodyBytes;
        if (from.pair > first || endByte > header.bodyBytes) throw new Error(`${this.path}: a range past its run`);
        const bytes = takeBytes(Math.max(64, Math.min(endByte - from.byte, Math.max(1 << 14, 8 * (chunkPairs - decodedPairs)))));
        this.decoder = new RunBodyDecoder(bodyReader(this.fd), bytes, from, endByte, this.path);
        // A range that does not start at a known group: its pairs before `first` decoded and dropped.
        for (let skip = first - from.pair; skip > 0; ) {
          const n = Math.min(skip, decodedPairs);
          this.decoder.decode(this.chunk, n);
          skip -= n;
        }
      }
    }
    this.load();
  }
  private readonly decoder?: RunBodyDecoder;
  private readonly tally: DocTally = { doc: 0, tf: 0 };
  /**
   * Taken a term at a time (takeTerm): a load decodes only the next group's first pair, for the
   * merge's heap, and takeTerm counts the rest of the group from the run's bytes (takeDocs).
   */
  private termwise = false;

  private load(): void {
    this.consumed += this.chunkPairs;
    const remaining = this.count - this.consumed;
    if (remaining <= 0) {
      this.done = true;
      this.close();
      return;
    }
    if (this.block) {
      // The whole run is the one chunk (a worker's document numbers are never in a block run).
      if (this.docIds) throw new Error('a block run holds docIDs');
      this.chunkPairs = this.count;
      this.pos = 0;
      this.setKey(this.chunk[0]!);
      this.docId = this.chunk[1]!;
      return;
    }
    const pairs = Math.min(remaining, this.termwise ? 1 : this.chunk.length >> 1);
    this.decoder!.decode(this.chunk, pairs);
    this.chunkPairs = pairs;
    this.pos = 0;
    this.setKey(this.chunk[0]!);
    this.docId = this.docIdOf(this.chunk[1]!);
  }

  /** Per term, not per pair: the walk is asked only when the key changes. */
  private setKey(key: number): void {
    if (key === this.key && this.keyed) return;
    this.termId = this.walk ? this.walk.toFinal(key) : key;
    this.key = key;
    this.keyed = true;
  }
  private keyed = false;

  /** Moves to the next pair; sets `done` at the end. */
  advance(): void {
    if (++this.pos === this.chunkPairs) {
      this.load();
      return;
    }
    this.setKey(this.chunk[2 * this.pos]!);
    this.docId = this.docIdOf(this.chunk[2 * this.pos + 1]!);
  }

  /**
   * Consumes every pair of the current term (the run's whole segment for it), appending each
   * distinct docID with its count of pairs (the term frequency in that document) to `out`.
   * The merge spends most of its time here: the pairs already decoded are counted in one loop,
   * the rest of a run file's group straight from its bytes (RunBodyDecoder.takeDocs). A run
   * holds its own document numbers (a worker's): each posting's is mapped to its docID as it
   * is appended, not every pair's.
   */
  takeTerm(out: PostingsColumns): void {
    this.termwise = true;
    const term = this.key;
    const map = this.docIds;
    let doc = this.chunk[2 * this.pos + 1]!;
    let tf = 0;
    let n = out.df;
    while (!this.done && this.key === term) {
      const c = this.chunk;
      let p = this.pos;
      const end = this.chunkPairs;
      let docs = out.docIds;
      let tfs = out.tfs;
      while (p < end && c[2 * p] === term) {
        const d = c[2 * p + 1]!;
        if (d === doc) tf++;
        else {
          if (d < doc) throw new Error(`${this.path}: docIDs out of order (${d} after ${doc})`);
          if (n === docs.length) {
            // Grown as postings come (the columns stay as long as the longest list, not a chunk).
            out.df = n;
            out.reserve(n + 1);
            docs = out.docIds;
            tfs = out.tfs;
          }
          docs[n] = map ? map[doc]! : doc;
          tfs[n++] = tf;
          doc = d;
          tf = 1;
        }
        p++;
      }
      if (p === end) {
        // The rest of the group (the term's pairs in this run), counted from the run's bytes.
        const rest = this.decoder ? Math.min(this.decoder.groupLeft, this.count - this.consumed - end) : 0;
        if (rest > 0) {
          out.df = n;
          this.tally.doc = doc;
          this.tally.tf = tf;
          this.decoder!.takeDocs(rest, this.tally, out, map);
          n = out.df;
          doc = this.tally.doc;
          tf = this.tally.tf;
          this.consumed += rest;
        }
        this.pos = end - 1;
        this.advance();
      } else {
        this.pos = p;
        this.setKey(c[2 * p]!);
        this.docId = this.docIdOf(c[2 * p + 1]!);
      }
    }
    if (n + 1 > out.docIds.length) {
      out.df = n;
      out.reserve(n + 1);
    }
    out.docIds[n] = map ? map[doc]! : doc;
    out.tfs[n++] = tf;
    out.df = n;
  }

  /** A document number of the run as a docID (the same without a worker's lexicon). */
  private docIdOf(n: number): number {
    return this.docIds ? this.docIds[n]! : n;
  }

  /**
   * Consumes the pairs of the current term (the run's segment for it) up to docID `limit`
   * included, calling `emit` once per distinct docID with its count of pairs (the term
   * frequency in that document). A run of a worker's lexicon holds that worker's documents,
   * which interleave with other workers' in crawl order, hence the limit (mergeRuns).
   */
  takeSegment(emit: (docId: number, tf: number) => void, limit = 0xffffffff): void {
    const term = this.key;
    const map = this.docIds;
    let doc = this.docId;
    let tf = 0;
    while (!this.done && this.key === term) {
      // Scan the loaded chunk without re-entering advance() for each pair.
      const c = this.chunk;
      let p = this.pos;
      const end = this.chunkPairs;
      while (p < end && c[2 * p] === term) {
        const d = map ? map[c[2 * p + 1]!]! : c[2 * p + 1]!;
        if (d > limit) {
          this.pos = p;
          this.docId = d;
          emit(doc, tf);
          return;
        }
        if (d === doc) tf++;
        else {
          emit(doc, tf);
          doc = d;
          tf = 1;
        }
        p++;
      }
      if (p === end) {
        this.pos = end - 1;
        this.advance();
      } else {
        this.pos = p;
        this.setKey(c[2 * p]!);
        this.docId = this.docIdOf(c[2 * p + 1]!);
      }
    }
    emit(doc, tf);
  }

  close(): void {
    if (!this.closed) {
      this.closed = true;
      closeSync(this.fd);
    }
  }
  private closed = false;

  /** Closes the cursor for good: on a worker thread its chunk goes to the next cursors (takeChunk). */
  release(): void {
    this.close();
    if (this.block || isMainThread || this.released) return;
    this.released = true;
    spareBuffers.push(this.chunk.buffer as ArrayBuffer);
    if (this.decoder) spareBuffers.push(this.decoder.buffer);
  }
  private released = false;
}
