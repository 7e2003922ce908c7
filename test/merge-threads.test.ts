import { describe, expect, it } from 'vitest';
import { MERGE_PAIRS_A_THREAD, mergeThreadsFor } from '../src/build/merge.js';

describe('merge threads by default', () => {
  it('one a MERGE_PAIRS_A_THREAD pairs, at least one, at most one a parse worker; --merge-threads wins', () => {
    const P = MERGE_PAIRS_A_THREAD;
    expect(mergeThreadsFor({}, 15, 0)).toBe(1);
    expect(mergeThreadsFor({}, 15, P)).toBe(1);
    expect(mergeThreadsFor({}, 15, P + 1)).toBe(2);
    // The HTML crawl on 16 cores: 37 M pairs, 15 workers -> 8 threads (faster than 15 there).
    expect(mergeThreadsFor({}, 15, 37_000_000)).toBe(8);
    expect(mergeThreadsFor({}, 15, 1_200_000_000)).toBe(15);
    expect(mergeThreadsFor({}, 1, 1_200_000_000)).toBe(1);
    expect(mergeThreadsFor({ mergeThreads: 3 }, 15, 0)).toBe(3);
  });
});
