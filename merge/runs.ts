/**
 * Sorted run files: the plain binary files between the sort stage and the merge stage.
 *
 *   bytes 0..8   magic "GPIXRUN3"
 *   bytes 8..12  u32 pair count (little-endian)
 *   bytes 12..16 u32 key space: the terms in the build's dictionary when the block was sealed
 *   then count × (u32 term key, u32 docID), little-endian, sorted by (key, docID)
 *   then the key samples: the key of every sampleStrideOf(count)-th pair (u32 LE), from pair 0
 *
 * The samples let the merge cut runs into term ranges with one read a run (splitTermRanges,
 * firstPairAtOrAfter) where a binary search over the file took a 4-byte read a step: 200 runs
 * cut for 63 merge threads were 806,000 reads, over a second on the main thread.
 *
 * A term key is the term's rank in code point order among those first `key space` terms
 * (merge/term-order.ts): runs are in the index's term order, and KeyWalk maps keys to termIDs.
 *
 * Writing goes straight from the sorter's view (for the GPU sorter: its mapped readback range)
 * to the file, with no intermediate copy.
 */
import type { Hash } from 'node:crypto';
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { endianness } from 'node:os';
import { KeyWalk } from './term-order.js';
import { positionOfTerm, type RunLexicon } from './run-lexicons.js';
import { readFullAt } from '../runtime/read-at.js';
import { isMainThread } from 'node:worker_threads';

const MAGIC = Buffer.from('GPIXRUN3', 'latin1');
export const RUN_HEADER_BYTES = 16;

if (endianness() !== 'LE') throw new Error('gpuindex needs a little-endian machine (run files are written from typed arrays)');

/** The header of a run of `count` pairs: magic, then the count and the key space (u32 LE). */
function runHeader(count: number, keySpace: number): Buffer {
  const header = Buffer.alloc(RUN_HEADER_BYTES);
  MAGIC.copy(header, 0);
  header.writeUInt32LE(count, 8);
  header.writeUInt32LE(keySpace, 12);
  return header;
}

/** Key samples a run has at most. */
const MAX_KEY_SAMPLES = 4096;

/** Pairs between two key samples of a run of `count` pairs: a power of two, from the count alone (1: every key of a small run). */
export function sampleStrideOf(count: number): number {
  let stride = 1;
  while (Math.ceil(count / stride) > MAX_KEY_SAMPLES) stride *= 2;
  return stride;
}

/** Key samples a run of `count` pairs ends with. */
export function keySampleCount(count: number): number {
  return Math.ceil(count / sampleStrideOf(count));
}

/** The key samples of sorted pairs, as the run file's bytes. */
function keySamplesOf(sorted: Uint32Array, count: number): Uint8Array {
  const stride = sampleStrideOf(count);
  const samples = new Uint32Array(keySampleCount(count));
  for (let i = 0; i < samples.length; i++) samples[i] = sorted[2 * i * stride]!;
  return new Uint8Array(samples.buffer);
}

/** Bytes of a run file of `count` pairs. */
export function runFileBytes(count: number): number {
  return RUN_HEADER_BYTES + 8 * count + 4 * keySampleCount(count);
}

/**
 * Writes one sorted run; `sorted` holds 2*count u32 values. Returns bytes written. `hash`, when
 * given, is fed the file's bytes as they are written.
 */
export function writeRunFile(path: string, sorted: Uint32Array, count: number, keySpace: number, hash?: Hash): number {
  const fd = openSync(path, 'w');
  try {
    const header = runHeader(count, keySpace);
    writeSync(fd, header);
    hash?.update(header);
    const body = new Uint8Array(sorted.buffer, sorted.byteOffset, count * 8);
    let off = 0;
    while (off < body.length) {
      const n = writeSync(fd, body, off, Math.min(body.length - off, 1 << 30));
      hash?.update(body.subarray(off, off + n));
      off += n;
    }
    const samples = keySamplesOf(sorted, count);
    for (let o = 0; o < samples.length; ) o += writeSync(fd, samples, o);
    hash?.update(samples);
    return runFileBytes(count);
  } finally {
    closeSync(fd);
  }
}

/** Bytes per write call of writeRunFileAsync: the thread is free between chunks. */
const ASYNC_WRITE_CHUNK = 8 << 20;

/**
 * writeRunFile on the libuv thread pool, in chunks: the main thread goes on taking parse
 * batches while a run goes to disk (a synchronous 128 MB write would stall every parse worker
 * waiting for its batches to be taken). `sorted` must stay valid until the promise settles.
 * `hash`, when given, is fed the file's bytes as they are written (--resume checkpoints record
 * each run's SHA-256 without reading the run back).
 */
export async function writeRunFileAsync(path: string, sorted: Uint32Array, count: number, keySpace: number, hash?: Hash): Promise<number> {
  const file = await open(path, 'w');
  try {
    const header = runHeader(count, keySpace);
    await file.write(header, 0, RUN_HEADER_BYTES, 0);
    hash?.update(header);
    const body = new Uint8Array(sorted.buffer, sorted.byteOffset, count * 8);
    let off = 0;
    while (off < body.length) {
      const { bytesWritten } = await file.write(body, off, Math.min(body.length - off, ASYNC_WRITE_CHUNK), RUN_HEADER_BYTES + off);
      hash?.update(body.subarray(off, off + bytesWritten));
      off += bytesWritten;
    }
    const samples = keySamplesOf(sorted, count);
    for (let o = 0; o < samples.length; ) o += (await file.write(samples, o, samples.length - o, RUN_HEADER_BYTES + body.length + o)).bytesWritten;
    hash?.update(samples);
    return runFileBytes(count);
  } finally {
    await file.close();
  }
}

export interface RunHeader {
  count: number;
  keySpace: number;
}

/** Reads the header of a run file. Throws for anything that is not a run file. */
export function readRunHeader(fd: number, path: string): RunHeader {
  const header = Buffer.alloc(RUN_HEADER_BYTES);
  if (readSync(fd, header, 0, RUN_HEADER_BYTES, 0) !== RUN_HEADER_BYTES || !header.subarray(0, 8).equals(MAGIC)) throw new Error(`${path}: not a gpuindex run file`);
  return { count: header.readUInt32LE(8), keySpace: header.readUInt32LE(12) };
}

/** The key samples of an open run file of `count` pairs (one read): the key of every sampleStrideOf(count)-th pair. */
export function readKeySamples(fd: number, path: string, count: number): Uint32Array {
  const samples = new Uint32Array(keySampleCount(count));
  const bytes = new Uint8Array(samples.buffer);
  if (readFullAt(fd, bytes, RUN_HEADER_BYTES + 8 * count) < bytes.length) throw new Error(`${path}: run file is truncated`);
  return samples;
}

/**
 * Index of the first pair whose term key is >= key (count if none): the samples (readKeySamples)
 * bound it to one stride of pairs, read at once.
 */
export function firstPairAtOrAfter(fd: number, path: string, count: number, samples: Uint32Array, key: number): number {
  // The first sample at or past the key: the answer is after the sample before it.
  let lo = 0;
  let hi = samples.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (samples[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  if (lo === 0) return 0;
  const stride = sampleStrideOf(count);
  const from = (lo - 1) * stride + 1;
  const to = Math.min(lo * stride, count);
  if (from >= to) return to;
  const window = new Uint32Array(2 * (to - from));
  if (readFullAt(fd, new Uint8Array(window.buffer), RUN_HEADER_BYTES + 8 * from) < window.byteLength) throw new Error(`${path}: run file is truncated`);
  for (let i = 0; i < to - from; i++) if (window[2 * i]! >= key) return from + i;
  return to;
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

/** Pairs [start, end) of a run file: what one merge thread reads of it. */
export interface PairRange {
  start: number;
  end: number;
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
 * A forward cursor over one run file (or the pair range `range` of it), reading it in chunks so
 * that the merge's memory is (number of runs × chunk size), whatever the run sizes. `termId`
 * is the final termID of the current pair.
 */
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
 * Chunks of the cursors this worker thread has released (RunCursor.release), for its next
 * ones: a merge thread takes range after range, and a new chunk for every run of every range
 * (512 KiB each) is zero-filled and faulted in anew. The main thread keeps none: a service's
 * merges there would hold them for good.
 */
const spareChunks: Uint32Array[] = [];

/** A chunk of `words` words: a spare at least as large (a view of its start), or a new one. */
function takeChunk(words: number): Uint32Array {
  for (let i = spareChunks.length - 1; i >= 0; i--) {
    const spare = spareChunks[i]!;
    if (spare.length < words) continue;
    spareChunks[i] = spareChunks[spareChunks.length - 1]!;
    spareChunks.pop();
    return spare.length === words ? spare : spare.subarray(0, words);
  }
  return new Uint32Array(words);
}

export class RunCursor {
  private readonly fd: number;
  /** The run's pairs when it is a block in memory (no file: the whole run is one chunk). */
  private readonly block?: BlockRun;
  readonly path: string;
  /** Pairs this cursor will yield. */
  readonly count: number;
  private readonly first: number;
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
    let total: number;
    let keySpace: number;
    if (typeof source === 'string') {
      this.path = source;
      this.fd = openSync(source, 'r');
      try {
        ({ count: total, keySpace } = readRunHeader(this.fd, source));
      } catch (err) {
        closeSync(this.fd);
        throw err;
      }
    } else {
      this.path = '<block in memory>';
      this.fd = -1;
      this.closed = true;
      this.block = source;
      total = source.count;
      keySpace = source.keySpace;
    }
    if (terms) {
      const { order, finals, docIds } = terms.lexicon;
      this.walk = new KeyWalk(order, keySpace, positionOfTerm(finals, terms.startTerm ?? 0), terms.startKey, finals);
      this.docIds = docIds;
    }
    this.first = range ? range.start : 0;
    this.count = Math.max(0, (range ? Math.min(range.end, total) : total) - this.first);
    this.chunk = this.block ? this.block.pairs.subarray(2 * this.first, 2 * (this.first + this.count)) : takeChunk(2 * Math.max(1, Math.min(chunkPairs, this.count)));
    this.load();
  }

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
    const pairs = Math.min(remaining, this.chunk.length >> 1);
    const bytes = new Uint8Array(this.chunk.buffer, 0, pairs * 8);
    if (readFullAt(this.fd, bytes, RUN_HEADER_BYTES + (this.first + this.consumed) * 8) < bytes.length) throw new Error(`${this.path}: run file is truncated`);
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
   * One tight loop a chunk, no call a posting: the merge spends most of its time here. The
   * chunk holds the run's own document numbers (a worker's): each posting's is mapped to its
   * docID as it is appended, not every pair's as the chunk loads (a pass over every chunk).
   */
  takeTerm(out: PostingsColumns): void {
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
    spareChunks.push(new Uint32Array(this.chunk.buffer));
  }
  private released = false;
}
