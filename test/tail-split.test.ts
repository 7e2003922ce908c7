import { describe, expect, it } from 'vitest';
import { TailSplit } from '../indexer/fill/tail-split.js';

describe('the tail split of the overlapped schedule', () => {
  it('estimates the pairs to come from the crawl bytes left and hands blocks over early only near the end', () => {
    const mb = 1 << 20;
    const split = new TailSplit(100 * mb);
    const capacity = 16 * mb;
    // Nothing finished yet: no estimate, blocks fill up.
    expect(split.remainingPairs(1000)).toBe(Infinity);
    expect(split.handOverEarly(capacity - 1, capacity, 1000)).toBe(false);
    // 60 MB of tasks done with 30 Mi pairs: 0.5 pairs a byte, 40 MB left -> 20 Mi pairs to come.
    split.note(true, 30 * mb, 60 * mb);
    expect(split.remainingPairs(30 * mb)).toBe(20 * mb);
    expect(split.handOverEarly(10 * mb, capacity, 30 * mb)).toBe(false);
    // 8 Mi pairs into the next (unfinished) task: 12 Mi to come; a block of 12 Mi goes now.
    expect(split.remainingPairs(38 * mb)).toBe(12 * mb);
    expect(split.handOverEarly(11 * mb, capacity, 38 * mb)).toBe(false);
    expect(split.handOverEarly(12 * mb, capacity, 38 * mb)).toBe(true);
    // Never below the smallest tail block, even when the estimate says nothing is left.
    expect(split.handOverEarly((1 << 20) - 1, capacity, 60 * mb)).toBe(false);
    expect(split.handOverEarly(1 << 20, capacity, 60 * mb)).toBe(true);
  });
});
