/**
 * A cursor over one term's postings list in one segment, a block of IMPACT_BLOCK postings at a
 * time (merge/impacts.ts says where each block starts): docIDs are decoded a block when the
 * cursor enters it, tfs only when asked, and blocks are skipped by their last docID without
 * decoding. Each block carries a score bound (the best BM25 contribution of its competitive
 * (tf, length) pairs, times the term's count in the query), computed once per query.
 */
import type { TermImpacts } from '../../merge/impact-blocks.js';
import { unpack } from '../../merge/block-codec.js';

/** Past every docID. */
export const END = 2 ** 32;

/**
 * Bounds are raised by this fraction so that rounding cannot put a document's score (summed in
 * another order, from other operands) above its bound: float error is ~1e-16 an operation.
 */
const BOUND_SLACK = 1 + 1e-9;

/** BM25's contribution of one term: the one expression every evaluation uses, so that their scores agree to the bit. */
export function bm25(idf: number, tf: number, length: number, k1: number, b: number, avg: number): number {
  return bm25Normed(idf, tf, lengthNorm(length, k1, b, avg), k1);
}

/** BM25's length normalization of a document, k1 · (1 − b + b · length / avg): bm25's second half. */
export function lengthNorm(length: number, k1: number, b: number, avg: number): number {
  return k1 * (1 - b + (b * length) / avg);
}

/**
 * BM25's contribution from the document's lengthNorm: the same operations on the same doubles
 * as bm25, hence the same bits (JavaScript rounds every operation to a double, no fused ones).
 */
export function bm25Normed(idf: number, tf: number, norm: number, k1: number): number {
  return (idf * tf * (k1 + 1)) / (tf + norm);
}

/** Lengths past this are normalized as they come instead of from a table (a table of 8 bytes a length). */
const NORM_TABLE_MAX = 1 << 16;

/**
 * lengthNorm of every length up to the segment's longest (at most NORM_TABLE_MAX): a posting
 * then costs a load from a small, hot table instead of a division by the average length.
 */
export function lengthNormTable(lengths: Uint32Array | Uint16Array, k1: number, b: number, avg: number): Float64Array {
  let longest = 0;
  for (let d = 0; d < lengths.length; d++) if (lengths[d]! > longest) longest = lengths[d]!;
  const table = new Float64Array(Math.min(longest, NORM_TABLE_MAX) + 1);
  for (let len = 0; len < table.length; len++) table[len] = lengthNorm(len, k1, b, avg);
  return table;
}

/** A list's block bounds for one query, indexed from the term's first block, and their largest. */
export interface BlockBounds {
  bounds: Float64Array;
  max: number;
}

/**
 * Each block's bound of a term's list: the best contribution of its competitive (tf, length)
 * pairs, times `weight` (the term's count among the query's scored occurrences; 0 for a term
 * that only excludes: all bounds 0).
 */
export function blockBounds(im: TermImpacts, contribution: (tf: number, length: number) => number, weight: number): BlockBounds {
  const first = im.first;
  const end = im.end;
  const bounds = new Float64Array(end - first);
  let max = 0;
  if (weight === 0) return { bounds, max };
  for (let b = first; b < end; b++) {
    // A negative idf (df above the live documents, after deletes) makes every contribution
    // negative: 0 bounds them.
    let best = 0;
    for (let q = im.firstPair[b]!; q < im.firstPair[b + 1]!; q++) {
      const c = contribution(im.pairTf[q]!, im.pairLength[q]!);
      if (c > best) best = c;
    }
    const ub = weight * best * BOUND_SLACK;
    bounds[b - first] = ub;
    if (ub > max) max = ub;
  }
  return { bounds, max };
}

/**
 * Block arrays lent to the cursors of the current evaluation, and those free again. A query
 * makes a cursor a term, and forks of them, each with two arrays of a block: typed arrays that
 * large are separate allocations, so they are lent from here instead.
 */
const lent: Uint32Array[] = [];
const free: Uint32Array[] = [];

function blockArray(size: number): Uint32Array {
  let a = free.pop();
  if (a === undefined || a.length !== size) a = new Uint32Array(size);
  lent.push(a);
  return a;
}

/** Takes back every array lent so far: call where no cursor made before is used again (an evaluation's start). */
export function recycleBlockArrays(): void {
  while (lent.length > 0) free.push(lent.pop()!);
  // Bounded: a query of many terms does not keep its arrays for ever.
  if (free.length > MAX_FREE_BLOCK_ARRAYS) free.length = MAX_FREE_BLOCK_ARRAYS;
}
const MAX_FREE_BLOCK_ARRAYS = 256;

export class BlockCursor {
  /** The current docID (the segment's own), or END. */
  doc = END;
  private readonly docs: Uint32Array;
  private readonly tfs: Uint32Array;
  private pos = 0;
  private count = 0;
  private tfsReady = false;
  /** The current block (an index into the impacts' arrays). */
  private block: number;
  private shallowBlock: number;
  private readonly first: number;
  private readonly end: number;
  /** Each block's score bound, indexed from the term's first block. */
  private readonly bounds: Float64Array;
  /** The largest block bound: the term's bound over this segment. */
  readonly maxBound: number;
  /** The list is in merge/block-codec.ts's format (a measurement), not postings.bin's varints. */
  private readonly packed: boolean;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly df: number,
    private readonly im: TermImpacts,
    /** The list's block bounds in this query (blockBounds()). */
    bounds: BlockBounds,
  ) {
    this.packed = im.format === 'bp128';
    this.first = im.first;
    this.end = im.end;
    if (this.end - this.first !== Math.ceil(df / im.blockSize)) throw new Error(`impacts: ${this.end - this.first} blocks for a list of ${df} postings`);
    if (bounds.bounds.length !== this.end - this.first) throw new Error(`${bounds.bounds.length} block bounds for ${this.end - this.first} blocks`);
    this.docs = blockArray(im.blockSize);
    this.tfs = blockArray(im.blockSize);
    this.block = this.shallowBlock = this.first;
    this.bounds = bounds.bounds;
    this.maxBound = bounds.max;
    if (this.first < this.end) this.load(this.first);
  }

  /** A cursor of the same list at its start, sharing the bounds. */
  fork(): BlockCursor {
    return new BlockCursor(this.bytes, this.df, this.im, { bounds: this.bounds, max: this.maxBound });
  }

  /** The `n` blocks of the highest bounds (indexes into the impacts' arrays), in no order. */
  topBlocks(n: number): number[] {
    const top: number[] = [];
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (top.length < n) top.push(i);
      else {
        let worst = 0;
        for (let j = 1; j < n; j++) if (bounds[top[j]!]! < bounds[top[worst]!]!) worst = j;
        if (bounds[i]! > bounds[top[worst]!]!) top[worst] = i;
      }
    }
    return top.map((i) => i + this.first);
  }

  /** The docIDs of block `b` (an index into the impacts' arrays), decoded: the cursor moves there. */
  blockDocs(b: number): Uint32Array {
    this.load(b);
    return this.docs.slice(0, this.count);
  }

  /** The bound of the block the cursor is in. */
  get blockBound(): number {
    return this.bounds[this.block - this.first]!;
  }

  private load(b: number): void {
    const im = this.im;
    this.block = b;
    const size = im.blockSize;
    const count = (this.count = Math.min(size, this.df - (b - this.first) * size));
    const bytes = this.bytes;
    let p = im.gapsAt[b]!;
    let doc = b > this.first ? im.lastDoc[b - 1]! : 0;
    const docs = this.docs;
    if (this.packed) {
      unpack(bytes, p + 2, count, bytes[p]!, docs, true, doc, 0);
      this.pos = 0;
      this.tfsReady = false;
      this.doc = docs[0]!;
      return;
    }
    // A block of one byte a gap (its gaps end count bytes on: where the next block's start, or
    // for the last, where the tfs start) needs no test for continuation bytes.
    const gapsEnd = b + 1 < this.end ? im.gapsAt[b + 1]! : im.tfsAt[this.first]!;
    if (gapsEnd - p === count) {
      for (let i = 0; i < count; i++) {
        doc += bytes[p + i]!;
        docs[i] = doc;
      }
    } else {
      for (let i = 0; i < count; i++) {
        let v = bytes[p++]!;
        if (v >= 0x80) {
          v &= 0x7f;
          let shift = 7;
          let byte;
          do {
            byte = bytes[p++]!;
            v += (byte & 0x7f) * 2 ** shift;
            shift += 7;
          } while (byte >= 0x80);
        }
        doc += v;
        docs[i] = doc;
      }
    }
    this.pos = 0;
    this.tfsReady = false;
    this.doc = docs[0]!;
  }

  /** The tf at the current document. */
  tf(): number {
    if (!this.tfsReady && this.packed) {
      unpack(this.bytes, this.im.tfsAt[this.block]!, this.count, this.bytes[this.im.gapsAt[this.block]! + 1]!, this.tfs, false, 0, 1);
      this.tfsReady = true;
    }
    if (!this.tfsReady) {
      const bytes = this.bytes;
      let p = this.im.tfsAt[this.block]!;
      const tfs = this.tfs;
      const count = this.count;
      // One byte a tf (the usual block: tfs under 128), where the next block's tfs start count bytes on.
      if (this.block + 1 < this.end && this.im.tfsAt[this.block + 1]! - p === count) {
        for (let i = 0; i < count; i++) tfs[i] = bytes[p + i]!;
        this.tfsReady = true;
        return this.tfs[this.pos]!;
      }
      for (let i = 0; i < count; i++) {
        let v = bytes[p++]!;
        if (v >= 0x80) {
          v &= 0x7f;
          let shift = 7;
          let byte;
          do {
            byte = bytes[p++]!;
            v += (byte & 0x7f) * 2 ** shift;
            shift += 7;
          } while (byte >= 0x80);
        }
        tfs[i] = v;
      }
      this.tfsReady = true;
    }
    return this.tfs[this.pos]!;
  }

  /** The current block's docIDs, decoded (valid up to blockCount; the block changes on the next move). */
  blockDocIds(): Uint32Array {
    return this.docs;
  }

  /** The current block's tfs, decoded now if they were not. */
  blockTfs(): Uint32Array {
    this.tf();
    return this.tfs;
  }

  /** Postings in the current block. */
  get blockCount(): number {
    return this.count;
  }

  /** The current posting's place in its block. */
  get position(): number {
    return this.pos;
  }

  /** Moves to place `pos` of the current block (at or after the current one, before blockCount). */
  moveTo(pos: number): void {
    this.pos = pos;
    this.doc = this.docs[pos]!;
  }

  next(): void {
    if (++this.pos < this.count) this.doc = this.docs[this.pos]!;
    else this.nextBlock();
  }

  /** Leaves the rest of the current block unread. */
  nextBlock(): void {
    if (this.block + 1 < this.end) this.load(this.block + 1);
    else this.doc = END;
  }

  /**
   * Skips, undecoded, the blocks from the current one on whose bound is at most `limit` (the
   * current block's unread rest included); stays put when the current block's bound exceeds it.
   */
  skipBlocksUpTo(limit: number): void {
    if (this.doc === END || this.bounds[this.block - this.first]! > limit) return;
    let b = this.block + 1;
    while (b < this.end && this.bounds[b - this.first]! <= limit) b++;
    if (b < this.end) this.load(b);
    else this.doc = END;
  }

  /** Moves to the first docID >= target (or END), decoding only the block that holds it. */
  nextGEQ(target: number): void {
    if (target <= this.doc) return;
    const lastDoc = this.im.lastDoc;
    if (target > lastDoc[this.block]!) {
      let b = this.block + 1;
      // Gallop, then halve: a far target costs log(blocks) comparisons.
      let step = 1;
      while (b + step < this.end && lastDoc[b + step]! < target) {
        b += step;
        step *= 2;
      }
      let hi = Math.min(b + step, this.end);
      while (b < hi) {
        const mid = (b + hi) >>> 1;
        if (lastDoc[mid]! < target) b = mid + 1;
        else hi = mid;
      }
      if (b >= this.end) {
        this.doc = END;
        return;
      }
      this.load(b);
    }
    const docs = this.docs;
    let pos = this.pos;
    while (docs[pos]! < target) pos++;
    this.pos = pos;
    this.doc = docs[pos]!;
  }

  /**
   * Points the shallow pointer, without decoding, at the block that would hold `target` (the
   * first whose last docID is >= target): shallowBound and shallowEnd then describe it. Targets
   * must not decrease between calls. Returns false past the list's end.
   */
  shallowTo(target: number): boolean {
    let b = this.shallowBlock < this.block ? this.block : this.shallowBlock;
    const lastDoc = this.im.lastDoc;
    while (b < this.end && lastDoc[b]! < target) b++;
    this.shallowBlock = b;
    return b < this.end;
  }

  /** The bound of the block shallowTo() found (0 past the list's end). */
  get shallowBound(): number {
    return this.shallowBlock < this.end ? this.bounds[this.shallowBlock - this.first]! : 0;
  }

  /** boundThrough()'s answer: a field, since a double returned from a call V8 does not inline is a new heap object. */
  through = 0;

  /**
   * Sets `through` to the largest bound of the blocks from the one shallowTo() found through the
   * one that would hold `end` (0 past the list's end), without moving: a bound over docIDs up to `end`.
   */
  boundThrough(end: number): void {
    let b = this.shallowBlock;
    if (b >= this.end) {
      this.through = 0;
      return;
    }
    const lastDoc = this.im.lastDoc;
    const bounds = this.bounds;
    let max = bounds[b - this.first]!;
    while (b + 1 < this.end && lastDoc[b]! < end) {
      b++;
      if (bounds[b - this.first]! > max) max = bounds[b - this.first]!;
    }
    this.through = max;
  }

  /** The last docID of the block shallowTo() found (END past the list's end). */
  get shallowEnd(): number {
    return this.shallowBlock < this.end ? this.im.lastDoc[this.shallowBlock]! : END;
  }
}
