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
import type { PairSorter, SortedConsumer, SortTiming } from '../src/types.js';
import { releaseBuffers } from './release-buffers.js';

const MAX_DIGIT_BITS = 11;

const bitLength = (x: number): number => (x === 0 ? 0 : 32 - Math.clz32(x));

interface Digit {
  word: 0 | 1; // 0 = termID (even slots), 1 = docID (odd slots)
  shift: number;
  bits: number;
}

/** Splits `bits` of one word into near-equal digits of at most MAX_DIGIT_BITS. */
function digitsOf(word: 0 | 1, bits: number): Digit[] {
  if (bits === 0) return [];
  const passes = Math.ceil(bits / MAX_DIGIT_BITS);
  const width = Math.ceil(bits / passes);
  const out: Digit[] = [];
  for (let shift = 0; shift < bits; shift += width) out.push({ word, shift, bits: Math.min(width, bits - shift) });
  return out;
}

/** True when docIDs never decrease in input order, so only termID digits need sorting. */
function docIdsAscend(pairs: Uint32Array, count: number): boolean {
  for (let i = 3; i < 2 * count; i += 2) if (pairs[i]! < pairs[i - 2]!) return false;
  return true;
}

/**
 * Sorts pairs[0 .. 2*count) by (termID, docID). `scratch` must hold at least 2*count entries.
 * Returns whichever of the two arrays holds the sorted pairs (the other is garbage).
 */
export function radixSortPairs(pairs: Uint32Array, count: number, scratch: Uint32Array): Uint32Array {
  if (count < 2) return pairs;
  if (scratch.length < 2 * count) throw new RangeError(`scratch holds ${scratch.length >> 1} pairs, need ${count}`);
  let maxT = 0;
  let maxD = 0;
  for (let i = 0; i < 2 * count; i += 2) {
    if (pairs[i]! > maxT) maxT = pairs[i]!;
    if (pairs[i + 1]! > maxD) maxD = pairs[i + 1]!;
  }
  const docBits = docIdsAscend(pairs, count) ? 0 : bitLength(maxD);
  const digits = [...digitsOf(1, docBits), ...digitsOf(0, bitLength(maxT))];
  if (digits.length === 0) return pairs;

  // One read of the data fills every digit's histogram.
  const hists = digits.map((d) => new Uint32Array(1 << d.bits));
  for (let i = 0; i < 2 * count; i += 2) {
    for (let k = 0; k < digits.length; k++) {
      const d = digits[k]!;
      hists[k]![((pairs[i + d.word]! >>> d.shift) & ((1 << d.bits) - 1))]!++;
    }
  }

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
    const w = d.word;
    const shift = d.shift;
    for (let i = 0; i < 2 * count; i += 2) {
      const pos = hist[(src[i + w]! >>> shift) & mask]!++ << 1;
      dst[pos] = src[i]!;
      dst[pos + 1] = src[i + 1]!;
    }
    const t = src;
    src = dst;
    dst = t;
  }
  return src;
}

/** The reference comparison order of two pairs (used by tests and checks). */
export function comparePairs(a: Uint32Array, i: number, b: Uint32Array, j: number): number {
  return a[2 * i]! - b[2 * j]! || a[2 * i + 1]! - b[2 * j + 1]!;
}

/** PairSorter over radixSortPairs with a scratch array reused across blocks. */
export class CpuSorter implements PairSorter {
  readonly kind = 'cpu' as const;
  /** The scratch array: as large as the block. */
  readonly hostBytesPerPair = 8;
  private scratch = new Uint32Array(0);

  async sortBlock(pairs: Uint32Array, count: number, consume: SortedConsumer): Promise<SortTiming> {
    const t0 = performance.now();
    if (this.scratch.length < 2 * count) this.scratch = new Uint32Array(2 * count);
    const sorted = radixSortPairs(pairs, count, this.scratch);
    const totalMs = performance.now() - t0;
    await consume(sorted.subarray(0, 2 * count));
    return { totalMs };
  }

  async release(): Promise<void> {
    const scratch = this.scratch;
    this.scratch = new Uint32Array(0);
    await releaseBuffers([scratch.buffer]);
  }

  dispose(): void {
    this.scratch = new Uint32Array(0);
  }
}
