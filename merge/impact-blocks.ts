/**
 * The competitive impacts of postings lists, computed in memory: each list cut into blocks of
 * IMPACT_BLOCK postings, each block's last docID, column offsets and competitive (tf, document
 * length) pairs (merge/impacts.ts has the file's layout and the reasons). From lists as a merge
 * writes them (ImpactsBuilder) or from lists already encoded (impactsOfLists). No file or
 * database here: a parse worker computes them beside the postings it writes.
 */
import { varintBytes, writeVarintU32 } from './varint.js';
import { encodeImpactsBody } from './impacts-codec.js';
import { integerFromEnv } from '../runtime/env-knobs.js';

/** Postings a block: small enough that a skipped block saves work, large enough that the file stays a few % of postings.bin. */
export const IMPACT_BLOCK = 128;
/** Pairs kept a block at most (the most frequent term of a 1 GB crawl has 8 to 14 in most blocks). */
export const MAX_PAIRS = 16;

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
  /** Each block's first pair; firstPair[blocks] is the number of pairs. */
  firstPair: Uint32Array;
  pairTf: Uint32Array;
  pairLength: Uint32Array;
  /**
   * The format of the lists the offsets point into: absent for postings.bin's varints; 'bp128'
   * for merge/block-codec.ts's blocks, which no index holds (bench/block-codec.mjs re-encodes
   * an index's lists in memory to measure the codec against varint).
   */
  format?: 'bp128';
}

/**
 * One term's blocks, [first, end) of the arrays: views of a segment's Impacts (its firstBlock's
 * range), or arrays of the term alone (first 0) as impacts.bin's reader decodes them.
 */
export interface TermImpacts extends Omit<Impacts, 'firstBlock'> {
  first: number;
  end: number;
}

/** A segment's impacts by termID: decoded a term at a time from impacts.bin, or views of arrays in hand. */
export interface ImpactsByTerm {
  term(termId: number): TermImpacts;
}

/** Term views of impacts in hand (computed, or read whole). */
export function impactsByTerm(im: Impacts): ImpactsByTerm {
  return { term: (t) => ({ ...im, first: im.firstBlock[t]!, end: im.firstBlock[t + 1]! }) };
}

/** Encoded lists whose impacts are computed: list i of `terms`, in termID order. */
export interface ImpactLists {
  terms: number;
  df(i: number): number;
  /** The list's byte length. */
  length(i: number): number;
  /** Brings list i into bytes() (a window may move) and returns where it starts there. */
  locate(i: number): number;
  bytes(): Uint8Array;
  /** Names list i in an error. */
  describe(i: number): string;
}

/** The impacts of lists already encoded (postings.bin's varint columns), decoded from their bytes. */
export function impactsOfLists(lists: ImpactLists, lengths: Uint32Array): Impacts {
  const terms = lists.terms;
  const firstBlock = new Uint32Array(terms + 1);
  let blocks = 0;
  for (let t = 0; t < terms; t++) {
    firstBlock[t] = blocks;
    blocks += Math.ceil(lists.df(t) / IMPACT_BLOCK);
  }
  firstBlock[terms] = blocks;
  const impacts: Impacts = {
    blockSize: IMPACT_BLOCK,
    firstBlock,
    lastDoc: new Uint32Array(blocks),
    gapsAt: new Uint32Array(blocks),
    tfsAt: new Uint32Array(blocks),
    firstPair: new Uint32Array(blocks + 1),
    pairTf: new Uint32Array(0),
    pairLength: new Uint32Array(0),
  };
  const pairs = new PairList(blocks * 2);
  const frontier = new Frontier();
  let docs = new Uint32Array(1024);
  for (let t = 0; t < terms; t++) {
    const df = lists.df(t);
    const length = lists.length(t);
    const start = lists.locate(t);
    const bytes = lists.bytes();
    if (docs.length < df) docs = new Uint32Array(Math.max(df, docs.length * 2));
    let pos = start;
    let doc = 0;
    const first = firstBlock[t]!;
    const blockCount = firstBlock[t + 1]! - first;
    // The gaps column: each block's first offset and last docID.
    for (let k = 0, i = 0; k < blockCount; k++) {
      impacts.gapsAt[first + k] = pos - start;
      const end = Math.min(df, i + IMPACT_BLOCK);
      for (; i < end; i++) {
        let v = bytes[pos++]!;
        if (v >= 0x80) {
          v &= 0x7f;
          let scale = 128;
          let byte;
          do {
            byte = bytes[pos++]!;
            v += (byte & 0x7f) * scale;
            scale *= 128;
          } while (byte >= 0x80);
        }
        doc += v;
        docs[i] = doc;
      }
      impacts.lastDoc[first + k] = doc;
    }
    // The tfs column: each block's first offset and competitive pairs.
    for (let k = 0, i = 0; k < blockCount; k++) {
      impacts.tfsAt[first + k] = pos - start;
      const end = Math.min(df, i + IMPACT_BLOCK);
      frontier.clear();
      for (; i < end; i++) {
        let v = bytes[pos++]!;
        if (v >= 0x80) {
          v &= 0x7f;
          let scale = 128;
          let byte;
          do {
            byte = bytes[pos++]!;
            v += (byte & 0x7f) * scale;
            scale *= 128;
          } while (byte >= 0x80);
        }
        frontier.add(v, lengths[docs[i]!]!);
      }
      impacts.firstPair[first + k] = pairs.count;
      frontier.emit(pairs);
    }
    if (pos - start !== length) throw new Error(`${lists.describe(t)} decodes to ${pos - start} bytes, the lexicon says ${length}`);
  }
  impacts.firstPair[blocks] = pairs.count;
  impacts.pairTf = pairs.tf.subarray(0, pairs.count);
  impacts.pairLength = pairs.length.subarray(0, pairs.count);
  return impacts;
}

/**
 * A builder's impacts already encoded as impacts.bin's body (format 2: a varint record a term,
 * merge/impacts-codec.ts) from `firstTerm` on, and the term index of that body: what a builder
 * given `encodeFrom` hands over once it has encoded as it went.
 */
export interface EncodedImpacts {
  encoded: true;
  firstTerm: number;
  terms: number;
  blocks: number;
  pairs: number;
  /** The body, in pieces that join as bytes. */
  body: Uint8Array[];
  bodyBytes: number;
  /** Where the record of each termID that is a multiple of TERM_INDEX_STRIDE starts in the body. */
  index: Float64Array;
}

/** Blocks an encoding builder gathers before it encodes them (a few MiB of arrays); GPUINDEX_IMPACTS_ENCODE_BLOCKS sets it (tests). */
const ENCODE_EVERY_BLOCKS = 1 << 16;

/**
 * Impacts built as lists are merged, in termID order, from the docIDs and tfs in hand (no pass
 * over postings.bin afterwards): the same arrays computeImpacts reads back from the file. A merge
 * thread builds those of its term range (writeImpactsFile writes the ranges as one).
 */
export class ImpactsBuilder {
  private firstBlock: Uint32Array<ArrayBuffer> = new Uint32Array(1024);
  private terms = 0;
  private blocks = 0;
  private lastDoc: Uint32Array<ArrayBuffer> = new Uint32Array(1024);
  private gapsAt: Uint32Array<ArrayBuffer> = new Uint32Array(1024);
  private tfsAt: Uint32Array<ArrayBuffer> = new Uint32Array(1024);
  private firstPair: Uint32Array<ArrayBuffer> = new Uint32Array(1025);
  private readonly pairs = new PairList(1024);
  private readonly frontier = new Frontier();

  /** What encodeFrom's builder has encoded so far. */
  private encoded?: { terms: number; blocks: number; pairs: number; body: Uint8Array[]; bytes: number; index: number[] };

  /**
   * `lengths`: every document's length, indexed by docID. `encodeFrom`: the first term's termID,
   * where the builder is to encode its blocks into impacts.bin's records every `every` blocks
   * and keep those bytes instead of the arrays (a merge thread's range of 3 M terms held 100 MB
   * of arrays against 30 MB of records); finish() then gives EncodedImpacts, once it has
   * encoded any.
   */
  constructor(
    private readonly lengths: Uint32Array,
    private readonly encodeFrom?: { firstTerm: number; every?: number },
  ) {}

  /** The next term's list (docIDs ascending, their tfs). */
  add(docIds: Uint32Array, tfs: Uint32Array, df: number): void {
    const blockCount = Math.ceil(df / IMPACT_BLOCK);
    if (this.terms + 2 > this.firstBlock.length) this.firstBlock = grow(this.firstBlock, this.terms + 2);
    if (this.blocks + blockCount + 1 > this.lastDoc.length) {
      const n = this.blocks + blockCount + 1;
      this.lastDoc = grow(this.lastDoc, n);
      this.gapsAt = grow(this.gapsAt, n);
      this.tfsAt = grow(this.tfsAt, n);
      this.firstPair = grow(this.firstPair, n + 1);
    }
    this.firstBlock[this.terms++] = this.blocks;
    const first = this.blocks;
    let at = 0;
    let prev = 0;
    for (let k = 0, i = 0; k < blockCount; k++) {
      this.gapsAt[first + k] = at;
      const end = Math.min(df, i + IMPACT_BLOCK);
      for (; i < end; i++) {
        at += varintBytes(docIds[i]! - prev);
        prev = docIds[i]!;
      }
      this.lastDoc[first + k] = prev;
    }
    const lengths = this.lengths;
    const frontier = this.frontier;
    for (let k = 0, i = 0; k < blockCount; k++) {
      this.tfsAt[first + k] = at;
      const end = Math.min(df, i + IMPACT_BLOCK);
      frontier.clear();
      for (; i < end; i++) {
        at += varintBytes(tfs[i]!);
        frontier.add(tfs[i]!, lengths[docIds[i]!]!);
      }
      this.firstPair[first + k] = this.pairs.count;
      frontier.emit(this.pairs);
    }
    this.blocks += blockCount;
    this.encodeIfDue();
  }

  /**
   * add() and encodePostings() (merge/postings-codec.ts) in one pass: writes the list's bytes at
   * out[pos..] (the same bytes encodePostings writes) and records its blocks' offsets as it
   * writes them, instead of recounting each varint's bytes. Returns the position after the list.
   */
  encode(docIds: Uint32Array, tfs: Uint32Array, df: number, out: Uint8Array, pos: number): number {
    const blockCount = Math.ceil(df / IMPACT_BLOCK);
    if (this.terms + 2 > this.firstBlock.length) this.firstBlock = grow(this.firstBlock, this.terms + 2);
    if (this.blocks + blockCount + 1 > this.lastDoc.length) {
      const n = this.blocks + blockCount + 1;
      this.lastDoc = grow(this.lastDoc, n);
      this.gapsAt = grow(this.gapsAt, n);
      this.tfsAt = grow(this.tfsAt, n);
      this.firstPair = grow(this.firstPair, n + 1);
    }
    this.firstBlock[this.terms++] = this.blocks;
    const first = this.blocks;
    const start = pos;
    const { gapsAt, lastDoc, tfsAt, firstPair, lengths, frontier, pairs } = this;
    let prev = 0;
    for (let k = 0, i = 0; k < blockCount; k++) {
      gapsAt[first + k] = pos - start;
      const end = Math.min(df, i + IMPACT_BLOCK);
      for (; i < end; i++) {
        const d = docIds[i]!;
        const gap = d - prev;
        // Most gaps and tfs take one byte: written here, the call only for longer ones.
        if (gap < 0x80) out[pos++] = gap;
        else pos = writeVarintU32(out, pos, gap);
        prev = d;
      }
      lastDoc[first + k] = prev;
    }
    for (let k = 0, i = 0; k < blockCount; k++) {
      tfsAt[first + k] = pos - start;
      const end = Math.min(df, i + IMPACT_BLOCK);
      frontier.clear();
      for (; i < end; i++) {
        const tf = tfs[i]!;
        if (tf < 0x80) out[pos++] = tf;
        else pos = writeVarintU32(out, pos, tf);
        frontier.add(tf, lengths[docIds[i]!]!);
      }
      firstPair[first + k] = pairs.count;
      frontier.emit(pairs);
    }
    this.blocks += blockCount;
    this.encodeIfDue();
    return pos;
  }

  /** After a term's list: its blocks encoded with the others gathered, where that is asked and due. */
  private encodeIfDue(): void {
    if (this.encodeFrom && this.blocks >= (this.encodeFrom.every ??= integerFromEnv('GPUINDEX_IMPACTS_ENCODE_BLOCKS', 1, 2 ** 30) ?? ENCODE_EVERY_BLOCKS)) this.encodeGathered();
  }

  /** The lists added since the last encoding, as Impacts: views of the builder's arrays. */
  private gathered(): Impacts {
    const { terms, blocks } = this;
    this.firstBlock[terms] = blocks;
    this.firstPair[blocks] = this.pairs.count;
    return {
      blockSize: IMPACT_BLOCK,
      firstBlock: this.firstBlock.subarray(0, terms + 1),
      lastDoc: this.lastDoc.subarray(0, blocks),
      gapsAt: this.gapsAt.subarray(0, blocks),
      tfsAt: this.tfsAt.subarray(0, blocks),
      firstPair: this.firstPair.subarray(0, blocks + 1),
      pairTf: this.pairs.tf.subarray(0, this.pairs.count),
      pairLength: this.pairs.length.subarray(0, this.pairs.count),
    };
  }

  private encodeGathered(): void {
    const e = (this.encoded ??= { terms: 0, blocks: 0, pairs: 0, body: [], bytes: 0, index: [] });
    const { terms, blocks } = this;
    const { body, index } = encodeImpactsBody(this.gathered(), this.encodeFrom!.firstTerm + e.terms);
    for (const at of index) e.index.push(e.bytes + at);
    e.body.push(body);
    e.bytes += body.length;
    e.terms += terms;
    e.blocks += blocks;
    e.pairs += this.pairs.count;
    this.terms = 0;
    this.blocks = 0;
    this.pairs.count = 0;
  }

  /** The impacts of every list added: as arrays, or (encodeFrom, once any were encoded) as records. */
  finish(): Impacts | EncodedImpacts {
    if (this.encoded) {
      if (this.terms > 0) this.encodeGathered();
      const e = this.encoded;
      return { encoded: true, firstTerm: this.encodeFrom!.firstTerm, terms: e.terms, blocks: e.blocks, pairs: e.pairs, body: e.body, bodyBytes: e.bytes, index: Float64Array.from(e.index) };
    }
    // Copies of the views: the builder's arrays are larger than what they hold.
    const g = this.gathered();
    return {
      blockSize: IMPACT_BLOCK,
      firstBlock: g.firstBlock.slice(),
      lastDoc: g.lastDoc.slice(),
      gapsAt: g.gapsAt.slice(),
      tfsAt: g.tfsAt.slice(),
      firstPair: g.firstPair.slice(),
      pairTf: g.pairTf.slice(),
      pairLength: g.pairLength.slice(),
    };
  }
}

function grow(a: Uint32Array, need: number): Uint32Array<ArrayBuffer> {
  const b = new Uint32Array(Math.max(need, 2 * a.length));
  b.set(a);
  return b;
}

/** A growing list of (tf, length) pairs. */
class PairList {
  count = 0;
  tf: Uint32Array;
  length: Uint32Array;
  constructor(capacity: number) {
    this.tf = new Uint32Array(Math.max(16, capacity));
    this.length = new Uint32Array(this.tf.length);
  }
  push(tf: number, length: number): void {
    if (this.count === this.tf.length) {
      const grow = (a: Uint32Array) => {
        const b = new Uint32Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.tf = grow(this.tf);
      this.length = grow(this.length);
    }
    this.tf[this.count] = tf;
    this.length[this.count++] = length;
  }
}

/**
 * The competitive (tf, length) pairs of one block: kept by length ascending, so tf ascends
 * too (a shorter document with as high a tf would beat a longer one).
 */
class Frontier {
  private readonly tf = new Uint32Array(IMPACT_BLOCK);
  private readonly length = new Uint32Array(IMPACT_BLOCK);
  private n = 0;

  clear(): void {
    this.n = 0;
  }

  add(tf: number, length: number): void {
    const { tf: tfs, length: lengths } = this;
    // Most postings (tf 1 or 2 in a long document) are beaten by the shortest pair kept: its tf is
    // the lowest kept, so if it is as high, this one adds nothing. One comparison instead of a scan.
    if (this.n > 0 && tfs[0]! >= tf && lengths[0]! <= length) return;
    // Likewise a posting in a document at least as long as the longest kept pair's, whose tf (the
    // highest kept) is as high.
    if (this.n > 0 && lengths[this.n - 1]! <= length && tfs[this.n - 1]! >= tf) return;
    // The first kept pair at least as long: every shorter one has a lower tf.
    let i = 0;
    while (i < this.n && lengths[i]! < length) i++;
    // Beaten by a pair as short (or shorter, at i - 1 or before) with a tf as high?
    if (i > 0 && tfs[i - 1]! >= tf) return;
    if (i < this.n && lengths[i] === length && tfs[i]! >= tf) return;
    // Drop the pairs it beats: as long or longer, tf as low or lower.
    let j = i;
    while (j < this.n && tfs[j]! <= tf) j++;
    const removed = j - i;
    if (removed === 0) {
      for (let m = this.n; m > i; m--) {
        tfs[m] = tfs[m - 1]!;
        lengths[m] = lengths[m - 1]!;
      }
      this.n++;
    } else {
      for (let m = j; m < this.n; m++) {
        tfs[m - removed + 1] = tfs[m]!;
        lengths[m - removed + 1] = lengths[m]!;
      }
      this.n -= removed - 1;
    }
    tfs[i] = tf;
    lengths[i] = length;
  }

  /** Appends the pairs, at most MAX_PAIRS: a run of neighbours merged into (its largest tf, its shortest length). */
  emit(out: PairList): void {
    const n = this.n;
    const groups = Math.min(n, MAX_PAIRS);
    for (let g = 0; g < groups; g++) {
      const from = Math.floor((g * n) / groups);
      const to = Math.floor(((g + 1) * n) / groups) - 1;
      out.push(this.tf[to]!, this.length[from]!);
    }
  }
}
