/**
 * Shorter blocks at the end of the crawl (overlapped schedule). Whatever the last block's sort
 * and run write take comes after the parse, on the critical path: with full 16 Mi-pair blocks
 * on the H100 that tail was 0.3 s of a 4.9 s Parse+GpuSort. Near the end the filler hands a
 * block over as soon as it holds as many pairs as are still to come (about half of what is
 * left), so the blocks halve down to MIN_TAIL_PAIRS while the workers parse the rest, and the
 * last one is small. The index does not depend on where blocks end (runs merge to the same
 * postings), only the run count does (a few more runs).
 */
import { integerFromEnv } from '../../runtime/env-knobs.js';

/** The smallest block the split hands over early: smaller ones cost more per pair than they save. */
const MIN_TAIL_PAIRS = 1 << 20;

/** GPUINDEX_TAIL_MIN_PAIRS: that smallest block (a test and benchmark knob; default MIN_TAIL_PAIRS). */
export function tailMinPairsFromEnv(): number {
  return integerFromEnv('GPUINDEX_TAIL_MIN_PAIRS', 1, 2 ** 31) ?? MIN_TAIL_PAIRS;
}

export class TailSplit {
  private pairsAtTaskEnd = 0;
  private fileBytesAtTaskEnd = 0;

  constructor(private readonly fileBytesTotal: number, private readonly minPairs = MIN_TAIL_PAIRS) {}

  /** After each consumed batch: `pairs` and `fileBytesDone` consumed so far (tasks end in crawl order). */
  note(last: boolean, pairs: number, fileBytesDone: number): void {
    if (!last) return;
    this.pairsAtTaskEnd = pairs;
    this.fileBytesAtTaskEnd = fileBytesDone;
  }

  /** Pairs still to come after `pairs` consumed: the crawl bytes left at the pairs per byte so far. */
  remainingPairs(pairs: number): number {
    if (this.fileBytesAtTaskEnd === 0) return Infinity;
    const perByte = this.pairsAtTaskEnd / this.fileBytesAtTaskEnd;
    return (this.fileBytesTotal - this.fileBytesAtTaskEnd) * perByte - (pairs - this.pairsAtTaskEnd);
  }

  /** Whether a block of `count` pairs (of `capacity`) should go to the sort stage now. */
  handOverEarly(count: number, capacity: number, pairs: number): boolean {
    return count >= Math.min(capacity, this.minPairs) && count >= this.remainingPairs(pairs);
  }
}
