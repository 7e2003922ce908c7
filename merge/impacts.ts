/**
 * impacts.bin: a segment's skip and score-bound data, a side file beside postings.bin, so a
 * query can skip postings blocks (document-at-a-time pruning, src/query/) without a change to
 * the postings format. Each term's list is cut into blocks of IMPACT_BLOCK postings; for each
 * block the file holds its last docID, where its first docID gap and first tf start (byte
 * offsets from the list's start into the gaps and tfs columns, merge/postings-codec.ts), its
 * largest tf and its shortest document. A BM25 bound for the block comes from the last two at
 * query time: they do not depend on the collection's statistics (N, df, the average length),
 * which change as segments come and go, so the file stays valid for the segment's life (deletes
 * only lower the true maxima).
 *
 * Layout (little-endian u32 throughout):
 *   header (32 bytes): magic "GPIXIMP1", block size, terms T, blocks B, 3 reserved words (0);
 *   firstBlock[T + 1]: each termID's first block (firstBlock[T] = B);
 *   lastDoc[B], gapsAt[B], tfsAt[B], maxTf[B], minLength[B].
 */
import { closeSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { endianness } from 'node:os';
import { join } from 'node:path';
import { SegmentFormatError, SegmentReader } from './segment-reader.js';

export const IMPACTS_FILE = 'impacts.bin';
export const IMPACTS_MAGIC = Buffer.from('GPIXIMP1', 'latin1');
/** Postings a block: small enough that a skipped block saves work, large enough that the file stays a few % of postings.bin. */
export const IMPACT_BLOCK = 128;
const HEADER_BYTES = 32;

export interface Impacts {
  blockSize: number;
  /** Each termID's first block; firstBlock[terms] is the number of blocks. */
  firstBlock: Uint32Array;
  /** The docID of each block's last posting. */
  lastDoc: Uint32Array;
  /** Byte offset, from its list's start, of the block's first docID gap. */
  gapsAt: Uint32Array;
  /** Byte offset, from its list's start, of the block's first tf. */
  tfsAt: Uint32Array;
  maxTf: Uint32Array;
  minLength: Uint32Array;
}

/** Typed arrays are written as they lie in memory: little-endian is what the file holds. */
function checkEndianness(): void {
  if (endianness() !== 'LE') throw new Error('impacts.bin is little-endian; this machine is big-endian');
}

/**
 * The impacts of every list of a finished segment, read in file order through a window (a
 * segment's postings are never all in memory), with one decoding pass over each list.
 */
export function computeImpacts(segment: SegmentReader): Impacts {
  const terms = segment.stats.terms;
  const f = segment.figures();
  const firstBlock = new Uint32Array(terms + 1);
  let blocks = 0;
  for (let t = 0; t < terms; t++) {
    firstBlock[t] = blocks;
    blocks += Math.ceil(f.df[t]! / IMPACT_BLOCK);
  }
  firstBlock[terms] = blocks;
  const lengths = new Uint32Array(segment.stats.documents);
  for (const [d, , , length] of segment.documentRows()) lengths[d] = length;
  const impacts: Impacts = {
    blockSize: IMPACT_BLOCK,
    firstBlock,
    lastDoc: new Uint32Array(blocks),
    gapsAt: new Uint32Array(blocks),
    tfsAt: new Uint32Array(blocks),
    maxTf: new Uint32Array(blocks),
    minLength: new Uint32Array(blocks),
  };
  let docs = new Uint32Array(1024);
  for (let t = 0; t < terms; t++) {
    const df = f.df[t]!;
    const length = f.length[t]!;
    const start = segment.locate(f.offset[t]!, length);
    const bytes = segment.view;
    if (docs.length < df) docs = new Uint32Array(Math.max(df, docs.length * 2));
    let pos = start;
    let doc = 0;
    let b = firstBlock[t]!;
    // The gaps column: each block's first offset and last docID.
    for (let i = 0; i < df; i++) {
      if (i % IMPACT_BLOCK === 0) impacts.gapsAt[b + i / IMPACT_BLOCK] = pos - start;
      let v = 0;
      let shift = 0;
      let byte;
      do {
        byte = bytes[pos++]!;
        v += (byte & 0x7f) * 2 ** shift;
        shift += 7;
      } while (byte >= 0x80);
      doc += v;
      docs[i] = doc;
      if (i % IMPACT_BLOCK === IMPACT_BLOCK - 1 || i === df - 1) impacts.lastDoc[b + Math.floor(i / IMPACT_BLOCK)] = doc;
    }
    // The tfs column: each block's first offset, largest tf and shortest document.
    let maxTf = 0;
    let minLength = 0xffffffff;
    for (let i = 0; i < df; i++) {
      if (i % IMPACT_BLOCK === 0) {
        impacts.tfsAt[b] = pos - start;
        maxTf = 0;
        minLength = 0xffffffff;
      }
      let v = 0;
      let shift = 0;
      let byte;
      do {
        byte = bytes[pos++]!;
        v += (byte & 0x7f) * 2 ** shift;
        shift += 7;
      } while (byte >= 0x80);
      if (v > maxTf) maxTf = v;
      const len = lengths[docs[i]!]!;
      if (len < minLength) minLength = len;
      if (i % IMPACT_BLOCK === IMPACT_BLOCK - 1 || i === df - 1) {
        impacts.maxTf[b] = maxTf;
        impacts.minLength[b] = minLength;
        b++;
      }
    }
    if (pos - start !== length) throw new Error(`${segment.dir}: the list of termID ${t} decodes to ${pos - start} bytes, the lexicon says ${length}`);
  }
  return impacts;
}

/** Writes impacts.bin into a finished segment's folder (index.sqlite and postings.bin closed). */
export function writeImpacts(dir: string): void {
  checkEndianness();
  const segment = new SegmentReader(dir);
  let impacts: Impacts;
  try {
    impacts = computeImpacts(segment);
  } finally {
    segment.close();
  }
  const terms = impacts.firstBlock.length - 1;
  const header = new Uint32Array(HEADER_BYTES / 4);
  new Uint8Array(header.buffer).set(IMPACTS_MAGIC, 0);
  header[2] = impacts.blockSize;
  header[3] = terms;
  header[4] = impacts.lastDoc.length;
  const fd = openSync(join(dir, IMPACTS_FILE), 'wx');
  try {
    for (const a of [header, impacts.firstBlock, impacts.lastDoc, impacts.gapsAt, impacts.tfsAt, impacts.maxTf, impacts.minLength]) {
      const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
      let off = 0;
      while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * A segment's impacts.bin, or undefined where the segment has none (written before the file
 * existed). A file that does not fit the segment is a SegmentFormatError naming why.
 */
export function readImpacts(dir: string, terms: number): Impacts | undefined {
  const path = join(dir, IMPACTS_FILE);
  if (!existsSync(path)) return undefined;
  checkEndianness();
  const buf = readFileSync(path);
  const bad = (why: string) => new SegmentFormatError(`${path}: ${why}; remove the file to search without it (its data is then computed when the index is opened)`);
  if (buf.length < HEADER_BYTES || !buf.subarray(0, 8).equals(IMPACTS_MAGIC)) throw bad('bad magic');
  // A copy aligned for Uint32Array views (a Buffer may lie at any offset of a shared pool).
  const words = new Uint32Array(buf.length >>> 2);
  new Uint8Array(words.buffer).set(buf.subarray(0, words.length * 4));
  const [blockSize, fileTerms, blocks] = [words[2]!, words[3]!, words[4]!];
  if (blockSize !== IMPACT_BLOCK) throw bad(`block size ${blockSize}, this gpuindex reads ${IMPACT_BLOCK}`);
  if (fileTerms !== terms) throw bad(`${fileTerms} terms, the segment has ${terms}`);
  const expected = HEADER_BYTES + 4 * (terms + 1) + 20 * blocks;
  if (buf.length !== expected) throw bad(`${buf.length} bytes, its header says ${expected}`);
  let at = HEADER_BYTES / 4;
  const take = (n: number) => words.subarray(at, (at += n));
  const firstBlock = take(terms + 1);
  if (firstBlock[terms] !== blocks) throw bad(`its term table ends at block ${firstBlock[terms]} of ${blocks}`);
  return { blockSize, firstBlock, lastDoc: take(blocks), gapsAt: take(blocks), tfsAt: take(blocks), maxTf: take(blocks), minLength: take(blocks) };
}
