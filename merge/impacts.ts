/**
 * impacts.bin: a segment's skip and score-bound data, a side file beside postings.bin, so a
 * query can skip postings blocks (document-at-a-time pruning, src/query/) without a change to
 * the postings format. Each term's list is cut into blocks of IMPACT_BLOCK postings; for each
 * block the file holds its last docID, where its first docID gap and first tf start (byte
 * offsets from the list's start into the gaps and tfs columns, merge/postings-codec.ts), and
 * its competitive (tf, document length) pairs: those no other posting of the block beats with a
 * tf as high and a document as short (Lucene's "competitive impacts"). BM25 grows with tf and
 * falls with length, so the best of these pairs is the block's exact maximum contribution for
 * any k1 >= 0, 0 <= b <= 1 and any collection statistics: the statistics (N, df, the average
 * length) change as segments come and go, the file stays valid for the segment's life (deletes
 * only lower the true maximum). A block keeps at most MAX_PAIRS pairs; where it has more,
 * neighbours are merged into (the larger tf, the shorter length), which bounds them both.
 * (Its largest tf with its shortest length alone bounds the block too, but on a 1 GB crawl that
 * bound was near the list's maximum in every block of the frequent terms: nothing was skipped.)
 *
 * Layout (format 2): a 40-byte header of little-endian u32s (magic "GPIXIMP2", block size,
 * terms T, blocks B, pairs P, the body's bytes as low and high word, term index entries E, and
 * the first termID, 0 but in a merge thread's part),
 * the body (each term's blocks as one record of varints, merge/impacts-codec.ts), then the term
 * index: E entries of two u32s, where the record of termID TERM_INDEX_STRIDE · i starts in the
 * body (low and high word). Search decodes a term's record
 * when a query first needs it (openImpacts); verify decodes them all (readImpacts). Format 1
 * ("GPIXIMP1": the arrays as u32 columns after a 32-byte header, 2.8–3.5x the bytes, read whole)
 * is still read.
 */
import { closeSync, existsSync, fstatSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { endianness } from 'node:os';
import { join } from 'node:path';
import { SegmentFormatError } from './segment-format-error.js';
import { IMPACT_BLOCK, impactsByTerm, impactsOfLists, type EncodedImpacts, type Impacts, type ImpactsByTerm } from './impact-blocks.js';
import { decodeImpactsBody, decodeTermRecord, encodeImpactsBody, indexEntries, TERM_INDEX_STRIDE, type ImpactsCounts, type TermIndex } from './impacts-codec.js';
import { readFullAt } from '../runtime/read-at.js';

export const IMPACTS_FILE = 'impacts.bin';
export const IMPACTS_MAGIC = Buffer.from('GPIXIMP2', 'latin1');
/** Format 1: the same arrays as u32 columns (still read). */
const IMPACTS_MAGIC_V1 = Buffer.from('GPIXIMP1', 'latin1');
/** Format 1's header: magic, block size, terms, blocks, pairs, 2 reserved. */
const HEADER_BYTES = 32;

/** Typed arrays are written as they lie in memory: little-endian is what the file holds. */
function checkEndianness(): void {
  if (endianness() !== 'LE') throw new Error('impacts.bin is little-endian; this machine is big-endian');
}

/** Bytes of a part's body copied a call. */
const COPY_CHUNK = 1 << 20;

/**
 * Format 2's header: magic, block size, terms, blocks, pairs, body bytes (low, high word), term
 * index entries, and the first term's termID (0 but in a merge thread's part).
 */
const HEADER_BYTES_V2 = 40;
/** Bytes of a term index entry: where its record starts in the body (low, high word). */
const INDEX_ENTRY_BYTES = 8;

interface Header extends ImpactsCounts {
  blockSize: number;
  bodyBytes: number;
  indexEntries: number;
  firstTerm: number;
}

/** One term range's impacts to write: its counts, body and term index, in memory or in a part file (a merge thread's). */
interface ImpactsSource extends Header {
  /** The term index, its offsets from the start of the range's body. */
  index: TermIndex;
  /** Writes the body to `fd`. */
  copyTo(fd: number): void;
  close(): void;
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
}

function memorySource(impacts: Impacts | EncodedImpacts, firstTerm: number): ImpactsSource {
  if ('encoded' in impacts) {
    // Encoded from its own first termID, which writeImpactsAt checks as it does a part file's.
    return {
      firstTerm: impacts.firstTerm,
      blockSize: IMPACT_BLOCK,
      terms: impacts.terms,
      blocks: impacts.blocks,
      pairs: impacts.pairs,
      bodyBytes: impacts.bodyBytes,
      indexEntries: impacts.index.length,
      index: impacts.index,
      copyTo: (fd) => {
        for (const piece of impacts.body) writeAll(fd, piece);
      },
      close: () => {},
    };
  }
  const { body, index } = encodeImpactsBody(impacts, firstTerm);
  return {
    firstTerm,
    blockSize: impacts.blockSize,
    terms: impacts.firstBlock.length - 1,
    blocks: impacts.lastDoc.length,
    pairs: impacts.pairTf.length,
    bodyBytes: body.length,
    indexEntries: index.length,
    index,
    copyTo: (fd) => writeAll(fd, body),
    close: () => {},
  };
}

function parseHeader(header: Buffer): Header {
  return {
    blockSize: header.readUInt32LE(8),
    terms: header.readUInt32LE(12),
    blocks: header.readUInt32LE(16),
    pairs: header.readUInt32LE(20),
    bodyBytes: header.readUInt32LE(24) + header.readUInt32LE(28) * 2 ** 32,
    indexEntries: header.readUInt32LE(32),
    firstTerm: header.readUInt32LE(36),
  };
}

/** Format 2's term index from its bytes (entries × INDEX_ENTRY_BYTES). */
function parseIndex(bytes: Buffer, entries: number): TermIndex {
  const index = new Float64Array(entries);
  for (let i = 0; i < entries; i++) index[i] = bytes.readUInt32LE(INDEX_ENTRY_BYTES * i) + bytes.readUInt32LE(INDEX_ENTRY_BYTES * i + 4) * 2 ** 32;
  return index;
}

const fileBytes = (h: Header) => HEADER_BYTES_V2 + h.bodyBytes + INDEX_ENTRY_BYTES * h.indexEntries;

function fileSource(path: string): ImpactsSource {
  const fd = openSync(path, 'r');
  try {
    const header = Buffer.alloc(HEADER_BYTES_V2);
    if (readSync(fd, header, 0, HEADER_BYTES_V2, 0) !== HEADER_BYTES_V2 || !header.subarray(0, 8).equals(IMPACTS_MAGIC)) throw new Error(`impacts part ${path}: bad header`);
    const h = parseHeader(header);
    if (fstatSync(fd).size !== fileBytes(h)) throw new Error(`impacts part ${path}: ${fstatSync(fd).size} bytes, its header says ${fileBytes(h)}`);
    const indexBytes = Buffer.alloc(INDEX_ENTRY_BYTES * h.indexEntries);
    if (readFullAt(fd, indexBytes, HEADER_BYTES_V2 + h.bodyBytes) < indexBytes.length) throw new Error(`impacts part ${path}: cut short`);
    return {
      ...h,
      index: parseIndex(indexBytes, h.indexEntries),
      copyTo: (out) => {
        const chunk = Buffer.allocUnsafe(Math.min(COPY_CHUNK, Math.max(1, h.bodyBytes)));
        for (let at = 0; at < h.bodyBytes; at += chunk.length) {
          const n = Math.min(chunk.length, h.bodyBytes - at);
          if (readFullAt(fd, chunk.subarray(0, n), HEADER_BYTES_V2 + at) < n) throw new Error(`impacts part ${path}: cut short`);
          writeAll(out, chunk.subarray(0, n));
        }
      },
      close: () => closeSync(fd),
    };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/**
 * Writes impacts.bin from impacts in hand (an ImpactsBuilder's) or the impacts of consecutive
 * term ranges in order: in memory, or files of impacts.bin's format (a merge thread's part,
 * removed once written). A range's body is self-contained (merge/impacts-codec.ts), so the
 * ranges' bodies are written one after the other, never joined in memory, then their term
 * indexes, rebased on the terms and bytes before them.
 */
export function writeImpactsFile(dir: string, impacts: Impacts | readonly (Impacts | EncodedImpacts | string)[]): void {
  writeImpactsAt(join(dir, IMPACTS_FILE), Array.isArray(impacts) ? (impacts as readonly (Impacts | EncodedImpacts | string)[]) : [impacts as Impacts]);
  if (Array.isArray(impacts)) for (const p of impacts) if (typeof p === 'string') rmSync(p, { force: true });
}

/**
 * writeImpactsFile to `path`, the first part's first term being termID `firstTerm` (a merge
 * thread writes its range's part so, with the range's first termID).
 */
export function writeImpactsAt(path: string, parts: readonly (Impacts | EncodedImpacts | string)[], firstTerm = 0): void {
  const sources: ImpactsSource[] = [];
  const fd = openSync(path, 'wx');
  try {
    const total = { terms: 0, blocks: 0, pairs: 0, bodyBytes: 0, indexEntries: 0 };
    for (const p of parts) {
      const src = typeof p === 'string' ? fileSource(p) : memorySource(p, firstTerm + total.terms);
      sources.push(src);
      if (src.blockSize !== IMPACT_BLOCK) throw new Error(`impacts: a part of block size ${src.blockSize}, not ${IMPACT_BLOCK}`);
      if (src.firstTerm !== firstTerm + total.terms) throw new Error(`impacts: a part from termID ${src.firstTerm} where termID ${firstTerm + total.terms} comes next`);
      total.terms += src.terms;
      total.blocks += src.blocks;
      total.pairs += src.pairs;
      total.bodyBytes += src.bodyBytes;
      total.indexEntries += src.indexEntries;
    }
    const header = Buffer.alloc(HEADER_BYTES_V2);
    IMPACTS_MAGIC.copy(header, 0);
    const words = [IMPACT_BLOCK, total.terms, total.blocks, total.pairs, total.bodyBytes % 2 ** 32, Math.floor(total.bodyBytes / 2 ** 32), total.indexEntries, firstTerm];
    words.forEach((v, i) => header.writeUInt32LE(v, 8 + 4 * i));
    writeAll(fd, header);
    for (const src of sources) src.copyTo(fd);
    const entries = Buffer.alloc(INDEX_ENTRY_BYTES * total.indexEntries);
    let e = 0;
    let bytes = 0;
    for (const src of sources) {
      for (let i = 0; i < src.indexEntries; i++, e++) {
        const offset = bytes + src.index[i]!;
        entries.writeUInt32LE(offset % 2 ** 32, INDEX_ENTRY_BYTES * e);
        entries.writeUInt32LE(Math.floor(offset / 2 ** 32), INDEX_ENTRY_BYTES * e + 4);
      }
      bytes += src.bodyBytes;
    }
    writeAll(fd, entries);
  } finally {
    for (const src of sources) src.close();
    closeSync(fd);
  }
}

/** Bytes read a call: readFileSync refuses files past 2 GiB (a 100 M-term index's impacts.bin is 2.8 GB). */
export const READ_CHUNK_BYTES = 1 << 30;

/**
 * A whole file read into a Uint32Array's memory (aligned for its views), in chunks of `chunk`
 * bytes; `bytes` views the same memory, as long as the file.
 */
export function readWords(path: string, chunk = READ_CHUNK_BYTES): { bytes: Buffer; words: Uint32Array } {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const words = new Uint32Array(Math.ceil(size / 4));
    const bytes = Buffer.from(words.buffer, 0, size);
    let off = 0;
    while (off < size) {
      const n = readSync(fd, bytes, off, Math.min(chunk, size - off), off);
      if (n === 0) throw new Error(`${path}: the file ended at ${off} of ${size} bytes`);
      off += n;
    }
    return { bytes, words: words.subarray(0, size >>> 2) };
  } finally {
    closeSync(fd);
  }
}

const defaultBad = (dir: string) => (why: string): Error =>
  new SegmentFormatError(`${join(dir, IMPACTS_FILE)}: ${why}; remove the file to search without it (its data is then computed when the index is opened)`);

/** A format 2 file's parts. */
interface Format2 {
  h: Header;
  body: Buffer;
  index: TermIndex;
}

/** A format 2 file's parts, checked against the segment's term count. */
function format2(buf: Buffer, terms: number, bad: (why: string) => Error): Format2 {
  if (buf.length < HEADER_BYTES_V2) throw bad('bad magic');
  const h = parseHeader(buf);
  if (h.blockSize !== IMPACT_BLOCK) throw bad(`block size ${h.blockSize}, this gpuindex reads ${IMPACT_BLOCK}`);
  if (h.terms !== terms) throw bad(`${h.terms} terms, the segment has ${terms}`);
  if (buf.length !== fileBytes(h)) throw bad(`${buf.length} bytes, its header says ${fileBytes(h)}`);
  // A term takes a byte of the body at least, a block three, a pair two: counts past that are damage, not arrays to allocate.
  if (h.terms > h.bodyBytes || 3 * h.blocks > h.bodyBytes || 2 * h.pairs > h.bodyBytes) throw bad(`${h.terms} terms, ${h.blocks} blocks and ${h.pairs} pairs cannot fit its ${h.bodyBytes}-byte body`);
  if (h.firstTerm !== 0 || h.indexEntries !== indexEntries(0, terms)) throw bad(`a term index of ${h.indexEntries} entries from termID ${h.firstTerm}, not ${indexEntries(0, terms)} from 0`);
  const index = parseIndex(buf.subarray(HEADER_BYTES_V2 + h.bodyBytes), h.indexEntries);
  for (let i = 0; i < index.length; i++) if (index[i]! >= Math.max(h.bodyBytes, 1) || (i > 0 && index[i]! <= index[i - 1]!)) throw bad(`term index entry ${i} out of order or range`);
  return { h, body: buf.subarray(HEADER_BYTES_V2, HEADER_BYTES_V2 + h.bodyBytes), index };
}

/**
 * A segment's impacts.bin read and checked: format 1's arrays, or format 2's parts; undefined
 * where the segment has none (written before it existed).
 */
function loadImpacts(dir: string, terms: number, bad: (why: string) => Error): Impacts | Format2 | undefined {
  const path = join(dir, IMPACTS_FILE);
  if (!existsSync(path)) return undefined;
  const { bytes: buf, words } = readWords(path);
  if (buf.length >= 8 && buf.subarray(0, 8).equals(IMPACTS_MAGIC_V1)) return readFormat1(buf, words, terms, bad);
  if (buf.length < 8 || !buf.subarray(0, 8).equals(IMPACTS_MAGIC)) throw bad('bad magic');
  return format2(buf, terms, bad);
}

/**
 * A segment's impacts.bin read whole into arrays (verify, and tools), or undefined where the
 * segment has none (written before it existed). A file that does not fit the segment is an
 * error made by `bad` (by default a SegmentFormatError naming the file, why, and what to do).
 */
export function readImpacts(dir: string, terms: number, bad = defaultBad(dir)): Impacts | undefined {
  const file = loadImpacts(dir, terms, bad);
  if (!file || !('body' in file)) return file;
  return decodeImpactsBody(file.body, file.h, file.h.blockSize, bad, file.index);
}

/**
 * A segment's impacts.bin by term, for search: format 2 keeps the file's bytes (a third of the
 * arrays') and decodes a term's blocks when asked, through the term index; format 1 is read
 * whole. Undefined where the segment has none.
 */
export function openImpacts(dir: string, terms: number, bad = defaultBad(dir)): ImpactsByTerm | undefined {
  const file = loadImpacts(dir, terms, bad);
  if (!file || !('body' in file)) return file && impactsByTerm(file);
  const { h, body, index } = file;
  return {
    term: (termId) => {
      if (!(termId >= 0 && termId < terms)) throw new RangeError(`impacts: termID ${termId} of ${terms}`);
      const entry = Math.floor(termId / TERM_INDEX_STRIDE);
      return decodeTermRecord(body, index[entry]!, entry * TERM_INDEX_STRIDE, termId, h.blockSize, bad);
    },
  };
}

/** Format 1 (u32 columns, views of the file's memory), as indexes written before format 2 hold it. */
function readFormat1(buf: Buffer, words: Uint32Array, terms: number, bad: (why: string) => Error): Impacts {
  checkEndianness();
  const [blockSize, fileTerms, blocks, pairs] = [words[2]!, words[3]!, words[4]!, words[5]!];
  if (blockSize !== IMPACT_BLOCK) throw bad(`block size ${blockSize}, this gpuindex reads ${IMPACT_BLOCK}`);
  if (fileTerms !== terms) throw bad(`${fileTerms} terms, the segment has ${terms}`);
  const expected = HEADER_BYTES + 4 * (terms + 1) + 4 * (4 * blocks + 1) + 8 * pairs;
  if (buf.length !== expected) throw bad(`${buf.length} bytes, its header says ${expected}`);
  let at = HEADER_BYTES / 4;
  const take = (n: number) => words.subarray(at, (at += n));
  const firstBlock = take(terms + 1);
  if (firstBlock[terms] !== blocks) throw bad(`its term table ends at block ${firstBlock[terms]} of ${blocks}`);
  const [lastDoc, gapsAt, tfsAt, firstPair] = [take(blocks), take(blocks), take(blocks), take(blocks + 1)];
  if (firstPair[blocks] !== pairs) throw bad(`its block table ends at pair ${firstPair[blocks]} of ${pairs}`);
  return { blockSize, firstBlock, lastDoc, gapsAt, tfsAt, firstPair, pairTf: take(pairs), pairLength: take(pairs) };
}
