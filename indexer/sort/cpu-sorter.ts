/**
 * The CPU sorter: an LSD radix sort over the 64-bit key (termID << 32 | docID) of interleaved
 * pairs. It is the baseline GpuSort is measured against and the fallback when no GPU is usable.
 *
 * Why it is fast rather than merely correct:
 *  - digits are sized to the bits actually used (max termID / max docID of the block), so a
 *    block of 2^20 terms and 2^21 docs needs 4 passes, not 8;
 *  - when the docIDs of the block already ascend in input order (always true for BSBI, where
 *    documents are parsed in docID order) the docID digits are skipped: LSD radix is stable,
 *    so sorting by termID alone yields (termID, docID) order;
 *  - all digit histograms come from one read of the data, and a digit whose values are all
 *    equal costs nothing.
 */
import type { DocBases, PairSorter, SortedConsumer, SortTiming, TermKeys } from '../../src/shared/types.js';
import { applyDocBases } from '../fill/doc-bases.js';
import { releaseBuffers } from '../../runtime/release-buffers.js';

const MAX_DIGIT_BITS = 11;

const bitLength = (x: number): number => (x === 0 ? 0 : 32 - Math.clz32(x));

interface Digit {
  word: 0 | 1; // 0 = termID (even slots), 1 = docID (odd slots)
  shift: number;
  bits: number;
}

/**
 * Keys of up to this many bits are sorted in one pass, not two of MAX_DIGIT_BITS or fewer: its
 * 2^15 counters (128 KiB) stay in a core's cache, and a block of a small vocabulary (an HTML
 * crawl's worker: ~30 k terms) is read and written once less. The whole keyed sort of 2.5 M pairs
 * of 8 k and 30 k Zipf keys: 29-30 against 34-36 ms, and 32-37 against 35-37 ms; at 16 bits one
 * pass and two of 8 took the same (2-core machine, alternated in one process).
 */
const ONE_PASS_MAX_BITS = 15;

/** Splits `bits` of one word into near-equal digits of at most MAX_DIGIT_BITS (one digit up to ONE_PASS_MAX_BITS). */
function digitsOf(word: 0 | 1, bits: number): Digit[] {
  if (bits === 0) return [];
  const passes = bits <= ONE_PASS_MAX_BITS ? 1 : Math.ceil(bits / MAX_DIGIT_BITS);
  const width = Math.ceil(bits / passes);
  const out: Digit[] = [];
  for (let shift = 0; shift < bits; shift += width) out.push({ word, shift, bits: Math.min(width, bits - shift) });
  return out;
}

/**
 * Up to three termID digits' histograms, shifts and masks, taken into locals by the loops that
 * count them; a missing digit counts into a one-bucket dummy.
 */
function termDigitLanes(digits: readonly Digit[], hists: Uint32Array[]) {
  const dummy = new Uint32Array(1);
  const h0 = hists[0]!;
  const h1 = hists[1] ?? dummy;
  const h2 = hists[2] ?? dummy;
  return { h0, h1, h2, s0: digits[0]!.shift, s1: digits[1]?.shift ?? 0, s2: digits[2]?.shift ?? 0, m0: h0.length - 1, m1: h1.length - 1, m2: h2.length - 1 };
}

/**
 * The histograms of up to three termID digits (the usual case: docIDs ascend, so only termIDs
 * are sorted), with the digits' shifts and masks in locals: the general loop over digit
 * objects took twice as long (2.2 M pairs of mail: the whole sort 95 -> 51 ms in a harness).
 */
function fillTermHistograms(pairs: Uint32Array, count: number, digits: readonly Digit[], hists: Uint32Array[]): void {
  const { h0, h1, h2, s0, s1, s2, m0, m1, m2 } = termDigitLanes(digits, hists);
  for (let i = 0; i < 2 * count; i += 2) {
    const t = pairs[i]!;
    h0[(t >>> s0) & m0]!++;
    h1[(t >>> s1) & m1]!++;
    h2[(t >>> s2) & m2]!++;
  }
}

/**
 * Sorts pairs[0 .. 2*count) by (termID, docID), each termID first replaced by termKeys[termID]
 * when given. `scratch` must hold at least 2*count entries. Returns whichever of the two arrays
 * holds the sorted pairs (the other is garbage).
 */
export function radixSortPairs(pairs: Uint32Array, count: number, scratch: Uint32Array, termKeys?: TermKeys): Uint32Array {
  if (count === 1 && termKeys) pairs[0] = termKeys[pairs[0]!]!;
  if (count < 2) return pairs;
  if (scratch.length < 2 * count) throw new RangeError(`scratch holds ${scratch.length >> 1} pairs, need ${count}`);
  if (termKeys && termKeys.length > 1) {
    // The keys are below termKeys.length: the digits are known before the pass that maps them,
    // so that pass fills the histograms too (one read of the block fewer).
    const digits = digitsOf(0, bitLength(termKeys.length - 1));
    if (digits.length <= 3) {
      const hists = digits.map((d) => new Uint32Array(1 << d.bits));
      if (mapKeysCountingDigits(pairs, count, termKeys, digits, hists)) return scatterDigits(pairs, count, scratch, digits, hists);
      // DocIDs out of order (not a BSBI block): the keys are mapped, sort by both words.
      return radixSortPairs(pairs, count, scratch);
    }
  }
  // One pass for the keys, the largest ids and whether docIDs ascend.
  let maxT = 0;
  let maxD = 0;
  let ascending = true;
  let previousDoc = 0;
  for (let i = 0; i < 2 * count; i += 2) {
    let t = pairs[i]!;
    if (termKeys) {
      t = termKeys[t]!;
      pairs[i] = t;
    }
    const d = pairs[i + 1]!;
    if (t > maxT) maxT = t;
    if (d > maxD) maxD = d;
    if (d < previousDoc) ascending = false;
    previousDoc = d;
  }
  const docBits = ascending ? 0 : bitLength(maxD);
  const digits = [...digitsOf(1, docBits), ...digitsOf(0, bitLength(maxT))];
  if (digits.length === 0) return pairs;

  // One read of the data fills every digit's histogram.
  const hists = digits.map((d) => new Uint32Array(1 << d.bits));
  if (digits.every((d) => d.word === 0) && digits.length <= 3) fillTermHistograms(pairs, count, digits, hists);
  else {
    for (let i = 0; i < 2 * count; i += 2) {
      for (let k = 0; k < digits.length; k++) {
        const d = digits[k]!;
        hists[k]![((pairs[i + d.word]! >>> d.shift) & ((1 << d.bits) - 1))]!++;
      }
    }
  }

  return scatterDigits(pairs, count, scratch, digits, hists);
}

/**
 * Replaces each termID by its key and counts the keys' digits (at most three, termID digits
 * only) in one pass; returns whether the docIDs ascend (then the digits are the whole sort).
 * fillTermHistograms' twin on purpose: one loop for both, branching on the keys, made the sort
 * without keys 3-10 % slower (2.2 M pairs, alternated runs).
 */
function mapKeysCountingDigits(pairs: Uint32Array, count: number, termKeys: TermKeys, digits: readonly Digit[], hists: Uint32Array[]): boolean {
  const { h0, h1, h2, s0, s1, s2, m0, m1, m2 } = termDigitLanes(digits, hists);
  let ascending = true;
  let previousDoc = 0;
  for (let i = 0; i < 2 * count; i += 2) {
    const t = termKeys[pairs[i]!]!;
    pairs[i] = t;
    h0[(t >>> s0) & m0]!++;
    h1[(t >>> s1) & m1]!++;
    h2[(t >>> s2) & m2]!++;
    const d = pairs[i + 1]!;
    if (d < previousDoc) ascending = false;
    previousDoc = d;
  }
  return ascending;
}

/** The LSD passes over `digits`, whose histograms are filled: returns whichever array holds the sorted pairs. */
function scatterDigits(pairs: Uint32Array, count: number, scratch: Uint32Array, digits: readonly Digit[], hists: Uint32Array[]): Uint32Array {
  let src = pairs;
  let dst = scratch;
  for (let k = 0; k < digits.length; k++) {
    const d = digits[k]!;
    const hist = hists[k]!;
    const mask = (1 << d.bits) - 1;
    // A digit with one populated bucket leaves the order unchanged: skip the pass.
    const first = (pairs[d.word]! >>> d.shift) & mask;
    if (hist[first] === count) continue;
    let sum = 0;
    for (let b = 0; b < hist.length; b++) {
      const c = hist[b]!;
      hist[b] = sum;
      sum += c;
    }
    const shift = d.shift;
    if (d.word === 0) {
      for (let i = 0; i < 2 * count; i += 2) {
        const t = src[i]!;
        const pos = hist[(t >>> shift) & mask]!++ << 1;
        dst[pos] = t;
        dst[pos + 1] = src[i + 1]!;
      }
    } else {
      for (let i = 0; i < 2 * count; i += 2) {
        const pos = hist[(src[i + 1]! >>> shift) & mask]!++ << 1;
        dst[pos] = src[i]!;
        dst[pos + 1] = src[i + 1]!;
      }
    }
    const t = src;
    src = dst;
    dst = t;
  }
  return src;
}

/** Calls and pairs of warmUpRadixSort: 32 k pairs, 11-20 ms on the 2-core machine (as many calls of 20 k pairs took 25 ms, for the same gain). */
const WARM_UP_CALLS = 8;
const WARM_UP_PAIRS = 4000;
/** Keys of the warm-up blocks: more than 2^ONE_PASS_MAX_BITS, so that they take two digits as a large vocabulary's do (one digit runs the same loops). */
const WARM_UP_KEYS = 40000;

/**
 * Sorts a few small synthetic blocks (keys mapped, docIDs ascending: a worker's path), so that V8
 * has optimized the passes before a parse worker's one real sort. That sort comes at the parse's
 * end, when every core is busy and a compile waits: cold, a worker's 2.5 M pairs took ~200 ms on
 * the 16-core machine (the mapping pass alone ~100 ms) against ~40 ms warm on one core here.
 */
export function warmUpRadixSort(): void {
  const keys = new Uint32Array(WARM_UP_KEYS);
  for (let k = 0; k < WARM_UP_KEYS; k++) keys[k] = (k * 2654435761) % WARM_UP_KEYS;
  const pairs = new Uint32Array(2 * WARM_UP_PAIRS);
  const scratch = new Uint32Array(2 * WARM_UP_PAIRS);
  let seed = 1;
  for (let call = 0; call < WARM_UP_CALLS; call++) {
    for (let i = 0; i < WARM_UP_PAIRS; i++) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      pairs[2 * i] = seed % WARM_UP_KEYS;
      pairs[2 * i + 1] = i >> 6;
    }
    radixSortPairs(pairs, WARM_UP_PAIRS, scratch, keys);
  }
}

/** The reference comparison order of two pairs (used by tests and checks). */
export function comparePairs(a: Uint32Array, i: number, b: Uint32Array, j: number): number {
  return a[2 * i]! - b[2 * j]! || a[2 * i + 1]! - b[2 * j + 1]!;
}

/** prepareFor touches nothing until the block being filled is 1/PREPARE_AFTER full. */
const PREPARE_AFTER = 8;

/** PairSorter over radixSortPairs with a scratch array reused across blocks. */
export class CpuSorter implements PairSorter {
  readonly kind = 'cpu' as const;
  /** The scratch array: as large as the block. */
  readonly hostBytesPerPair = 8;
  private scratch = new Uint32Array(0);
  /** Where the scratch comes from and goes back to (borrowFrom); absent: allocated and freed. */
  private pool?: { take(bytes: number): ArrayBuffer; give(buffer: ArrayBuffer): void };
  /**
   * Words of `scratch` written so far (by a sort, or touched by prepareFor): beyond it nothing
   * reads or writes the scratch, so prepareFor can touch those pages while a run is written.
   */
  private scratchUsed = 0;

  /**
   * Touches the scratch pages the block's sort will need, as the block fills: on this machine a
   * first touch costs ~5.7 us a page (a VM's page fault), 55 of the 108 ms that sorting mail's
   * one 2.2 M-pair block took after the parse (a harness: 108 -> 51 ms with the scratch touched).
   * The scratch is allocated at the block's capacity (what the memory plan counts); pages never
   * touched cost no memory.
   */
  prepareFor(pairs: number, capacity: number): void {
    // Not before the block is an eighth full: a crawl that fits in a fraction of one block is
    // not sorted at all (its postings are written from the block in docID order, into the first
    // pages of this scratch), and touching the pages of its pairs took mail's build 25 ms of the
    // main thread. A block that does fill catches up at once (~13 ms per 1 M pairs here).
    if (pairs < capacity / PREPARE_AFTER) return;
    const words = 2 * Math.min(pairs, capacity);
    if (this.scratch.length < 2 * capacity && this.scratchUsed === 0) this.scratch = this.newScratch(2 * capacity);
    if (words <= this.scratchUsed || words > this.scratch.length) return;
    this.scratch.fill(0, this.scratchUsed, words);
    this.scratchUsed = words;
  }

  async sortBlock(pairs: Uint32Array, count: number, consume: SortedConsumer, docBases?: DocBases, termKeys?: TermKeys): Promise<SortTiming> {
    const t0 = performance.now();
    if (docBases) applyDocBases(pairs, count, docBases);
    if (this.scratch.length < 2 * count) this.scratch = this.newScratch(2 * count);
    this.scratchUsed = Math.max(this.scratchUsed, 2 * count);
    const sorted = radixSortPairs(pairs, count, this.scratch, termKeys);
    const totalMs = performance.now() - t0;
    await consume(sorted.subarray(0, 2 * count));
    return { totalMs };
  }

  borrowFrom(pool: { take(bytes: number): ArrayBuffer; give(buffer: ArrayBuffer): void }): void {
    this.pool = pool;
  }

  /** A scratch of `words` words: from the pool (its pages touched already) or new. */
  private newScratch(words: number): Uint32Array<ArrayBuffer> {
    if (this.scratch.length > 0) this.pool?.give(this.scratch.buffer as ArrayBuffer);
    return this.pool ? new Uint32Array(this.pool.take(4 * words), 0, words) : new Uint32Array(words);
  }

  handOverScratch(): ArrayBuffer | undefined {
    const scratch = this.scratch;
    this.scratch = new Uint32Array(0);
    this.scratchUsed = 0;
    return scratch.length > 0 ? (scratch.buffer as ArrayBuffer) : undefined;
  }

  async release(): Promise<void> {
    const scratch = this.scratch;
    this.scratch = new Uint32Array(0);
    this.scratchUsed = 0;
    if (this.pool) this.pool.give(scratch.buffer as ArrayBuffer);
    else await releaseBuffers([scratch.buffer]);
  }

  dispose(): void {
    // A borrowed scratch may still hold a block being merged (BlockRun): it goes back to the
    // pool at release(), after the merge, not here.
    if (this.pool) return;
    this.scratch = new Uint32Array(0);
    this.scratchUsed = 0;
  }
}
