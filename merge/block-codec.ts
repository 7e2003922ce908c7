/**
 * A block codec for postings lists, measured against the varint format (merge/postings-codec.ts)
 * by bench/block-codec.mjs; no index is written in it. A list is cut into blocks of BLOCK
 * postings (the impacts' blocks, merge/impacts.ts, so impacts.bin's skip data serves it too);
 * each block is
 *
 *   u8 docWidth, u8 tfWidth, the block's docID gaps bit-packed at docWidth bits each (the first
 *   gap from the previous block's last docID, or the docID itself in the first block), then its
 *   tfs − 1 bit-packed at tfWidth bits each (width 0: every tf is 1, no bytes),
 *
 * values packed from the low bit of each byte up, each block's packing starting on a byte
 * (Lemire and Boytsov, "Decoding billions of integers per second through vectorization":
 * binary packing of 128-integer blocks, as PISA's and Lucene's block codecs). The gaps and tfs of
 * a block lie apart, so a cursor decodes a block's tfs only when it scores one of its documents.
 */
import type { Impacts } from './impact-blocks.js';
import { decodePostings } from './postings-codec.js';
import type { SegmentReader } from './segment-reader.js';

export const BLOCK = 128;

/** Bits needed for v (0 for 0), v < 2^32. */
const widthOf = (v: number): number => (v === 0 ? 0 : 32 - Math.clz32(v));

/** Upper bound of the encoded size of a list of df postings. */
export const maxBlockEncodedBytes = (df: number): number => Math.ceil(df / BLOCK) * 2 + df * 8;

/** Writes `count` values of `values` from `from` at `width` bits each at out[pos..]; returns the new position. */
function pack(values: Uint32Array, from: number, count: number, width: number, minus: number, out: Uint8Array, pos: number): number {
  if (width === 0) return pos;
  let acc = 0;
  let have = 0;
  for (let i = 0; i < count; i++) {
    const v = values[from + i]! - minus;
    // Up to 32 bits of value on top of up to 7 pending bits: split so the accumulator stays in 32 bits.
    let left = width;
    let rest = v;
    while (left > 0) {
      const take = Math.min(left, 24);
      acc |= (rest & ((1 << take) - 1)) << have;
      rest >>>= take;
      left -= take;
      have += take;
      while (have >= 8) {
        out[pos++] = acc & 0xff;
        acc >>>= 8;
        have -= 8;
      }
    }
  }
  if (have > 0) out[pos++] = acc & 0xff;
  return pos;
}

/** Encodes a list (docIDs ascending, tfs >= 1) into out[pos..]; returns the new position. */
export function encodeBlockPostings(docIds: Uint32Array, tfs: Uint32Array, df: number, out: Uint8Array, pos: number): number {
  const gaps = new Uint32Array(BLOCK);
  let prev = 0;
  for (let start = 0; start < df; start += BLOCK) {
    const count = Math.min(BLOCK, df - start);
    let maxGap = 0;
    let maxTf = 0;
    for (let i = 0; i < count; i++) {
      const d = docIds[start + i]!;
      const g = d - prev;
      prev = d;
      gaps[i] = g;
      if (g > maxGap) maxGap = g;
      const t = tfs[start + i]! - 1;
      if (t > maxTf) maxTf = t;
    }
    const dw = widthOf(maxGap);
    const tw = widthOf(maxTf);
    out[pos++] = dw;
    out[pos++] = tw;
    pos = pack(gaps, 0, count, dw, 0, out, pos);
    pos = pack(tfs, start, count, tw, 1, out, pos);
  }
  return pos;
}

/**
 * Unpacks `count` values of `width` bits at bytes[pos..] into out[0..count), each plus `plus`
 * and, with `running`, added to the previous (gaps to docIDs, starting from `base`). Returns the
 * position after them.
 */
export function unpack(bytes: Uint8Array, pos: number, count: number, width: number, out: Uint32Array, running: boolean, base: number, plus: number): number {
  if (count === BLOCK && width > 0 && width <= 24) return (running ? fullGaps(width) : fullValues(width))(bytes, pos, out, running ? base : plus);
  if (width === 0) {
    let v = base;
    for (let i = 0; i < count; i++) out[i] = running ? (v += plus) : plus;
    return pos;
  }
  if (width <= 24) {
    // The accumulator holds at most 7 pending bits and one more byte below 32 bits.
    const mask = (1 << width) - 1;
    let acc = 0;
    let have = 0;
    let v = base;
    for (let i = 0; i < count; i++) {
      while (have < width) {
        acc |= bytes[pos++]! << have;
        have += 8;
      }
      const x = (acc & mask) + plus;
      acc >>>= width;
      have -= width;
      out[i] = running ? (v += x) : x;
    }
    return pos;
  }
  // Wider values (gaps of 2^24 or more): bit by byte, in floating point.
  let bit = 0;
  let v = base;
  for (let i = 0; i < count; i++) {
    let x = 0;
    for (let b = 0; b < width; ) {
      const byte = bytes[pos + ((bit + b) >>> 3)]!;
      const at = (bit + b) & 7;
      const take = Math.min(8 - at, width - b);
      x += ((byte >>> at) & ((1 << take) - 1)) * 2 ** b;
      b += take;
    }
    bit += width;
    x += plus;
    out[i] = running ? (v += x) : x;
  }
  return pos + ((bit + 7) >>> 3);
}

type FullUnpacker = (bytes: Uint8Array, pos: number, out: Uint32Array, baseOrPlus: number) => number;
const gapUnpackers: FullUnpacker[] = [];
const valueUnpackers: FullUnpacker[] = [];

/**
 * A full block's unpacker for one width, generated on first use: BLOCK statements with constant
 * byte offsets, shifts and masks, no loop and no branch (as FastPFor's unrolled unpackers). A
 * loop over the values, with its variable shifts, decoded ~8x slower than this in V8, and 2x
 * slower than 1-byte varints (2-core machine, 128-posting blocks of 3-bit gaps).
 */
function generated(width: number, running: boolean): FullUnpacker {
  const mask = (1 << width) - 1;
  const lines = running ? ['let v = base;'] : [];
  for (let i = 0; i < BLOCK; i++) {
    const bit = i * width;
    const at = bit >>> 3;
    const shift = bit & 7;
    const parts: string[] = [];
    for (let k = 0; k < (shift + width + 7) >>> 3; k++) parts.push(k === 0 ? `b[o + ${at}]` : `(b[o + ${at + k}] << ${8 * k})`);
    const value = `((${parts.join(' | ')}) >>> ${shift}) & ${mask}`;
    lines.push(running ? `v += ${value}; out[${i}] = v;` : `out[${i}] = (${value}) + base;`);
  }
  lines.push(`return o + ${(BLOCK * width + 7) >>> 3};`);
  return new Function('b', 'o', 'out', 'base', lines.join('\n')) as FullUnpacker;
}
const fullGaps = (width: number): FullUnpacker => (gapUnpackers[width] ??= generated(width, true));
const fullValues = (width: number): FullUnpacker => (valueUnpackers[width] ??= generated(width, false));

/** Bytes of a packed run. */
export const packedBytes = (count: number, width: number): number => (count * width + 7) >>> 3;

/**
 * Where each block's gaps and tfs start (byte offsets from the list's start: the impacts'
 * gapsAt and tfsAt of this format) and the block's last docID, without unpacking the tfs.
 */
export function blockLayout(bytes: Uint8Array, df: number, gapsAt: Uint32Array, tfsAt: Uint32Array, lastDoc: Uint32Array, at: number): void {
  const docs = new Uint32Array(BLOCK);
  let pos = 0;
  let prev = 0;
  for (let start = 0, b = at; start < df; start += BLOCK, b++) {
    const count = Math.min(BLOCK, df - start);
    const dw = bytes[pos]!;
    const tw = bytes[pos + 1]!;
    gapsAt[b] = pos;
    unpack(bytes, pos + 2, count, dw, docs, true, prev, 0);
    prev = lastDoc[b] = docs[count - 1]!;
    tfsAt[b] = pos + 2 + packedBytes(count, dw);
    pos = tfsAt[b]! + packedBytes(count, tw);
  }
}

/** Decodes a whole list (exactly one). */
export function decodeBlockPostings(bytes: Uint8Array, df: number): { docIds: Uint32Array; tfs: Uint32Array } {
  const docIds = new Uint32Array(df);
  const tfs = new Uint32Array(df);
  let pos = 0;
  let prev = 0;
  for (let start = 0; start < df; start += BLOCK) {
    const count = Math.min(BLOCK, df - start);
    const dw = bytes[pos]!;
    const tw = bytes[pos + 1]!;
    pos = unpack(bytes, pos + 2, count, dw, docIds.subarray(start, start + count), true, prev, 0);
    prev = docIds[start + count - 1]!;
    pos = unpack(bytes, pos, count, tw, tfs.subarray(start, start + count), false, 0, 1);
  }
  if (pos !== bytes.length) throw new RangeError(`block postings list has ${bytes.length - pos} trailing bytes`);
  return { docIds, tfs };
}

/** A segment's lists re-encoded in this format, in memory, with impacts pointing into them. */
export interface PackedLists {
  /** Every list, in termID order. */
  bytes: Uint8Array;
  /** Each termID's list: its start in `bytes` and its length. */
  offset: Float64Array;
  length: Float64Array;
  /** The segment's impacts with gapsAt and tfsAt of this format (format 'bp128'). */
  impacts: Impacts;
}

/**
 * The lists of a finished segment re-encoded (read in file order through its window), for
 * measuring this format against varint on the same index: no file is written.
 */
export function packSegment(segment: SegmentReader, impacts: Impacts): PackedLists {
  if (impacts.blockSize !== BLOCK) throw new Error(`impacts of ${impacts.blockSize}-posting blocks; this codec packs ${BLOCK}`);
  const f = segment.figures();
  const terms = segment.stats.terms;
  let total = 0;
  for (let t = 0; t < terms; t++) total += maxBlockEncodedBytes(f.df[t]!);
  let out = new Uint8Array(Math.min(total, segment.postingsBytes * 2 + terms * 2 + 1024));
  const offset = new Float64Array(terms);
  const length = new Float64Array(terms);
  const gapsAt = new Uint32Array(impacts.gapsAt.length);
  const tfsAt = new Uint32Array(impacts.tfsAt.length);
  const lastDoc = new Uint32Array(impacts.lastDoc.length);
  let pos = 0;
  for (let t = 0; t < terms; t++) {
    const df = f.df[t]!;
    const start = segment.locate(f.offset[t]!, f.length[t]!);
    const { docIds, tfs } = decodePostings(segment.view.subarray(start, start + f.length[t]!), df);
    if (pos + maxBlockEncodedBytes(df) > out.length) {
      const grown = new Uint8Array(Math.max(out.length * 2, pos + maxBlockEncodedBytes(df)));
      grown.set(out.subarray(0, pos));
      out = grown;
    }
    offset[t] = pos;
    const end = encodeBlockPostings(docIds, tfs, df, out, pos);
    length[t] = end - pos;
    blockLayout(out.subarray(pos, end), df, gapsAt, tfsAt, lastDoc, impacts.firstBlock[t]!);
    pos = end;
  }
  for (let b = 0; b < lastDoc.length; b++) if (lastDoc[b] !== impacts.lastDoc[b]) throw new Error(`block ${b}: last docID ${lastDoc[b]} packed, ${impacts.lastDoc[b]} in the impacts`);
  return { bytes: out.slice(0, pos), offset, length, impacts: { ...impacts, gapsAt, tfsAt, format: 'bp128' } };
}
