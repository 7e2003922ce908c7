import { describe, expect, it } from 'vitest';
import { applyDocBases, DocBaseSegments } from '../indexer/fill/doc-bases.js';
import { CpuSorter } from '../indexer/sort/cpu-sorter.js';

/** Pairs of three batches as a block holds them: batch-local document indexes. */
function blockOfBatches(): { pairs: Uint32Array; count: number; segments: DocBaseSegments; expected: Uint32Array } {
  const batches = [
    { base: 0, pairs: [[5, 0], [3, 0], [5, 1]] },
    { base: 2, pairs: [[3, 0], [7, 1], [5, 1]] },
    { base: 10, pairs: [[3, 0], [5, 2]] },
  ];
  const segments = new DocBaseSegments();
  const pairs: number[] = [];
  const expected: number[] = [];
  for (const b of batches) {
    segments.add(pairs.length / 2, b.base);
    for (const [t, d] of b.pairs) {
      pairs.push(t!, d!);
      expected.push(t!, d! + b.base);
    }
  }
  return { pairs: Uint32Array.from(pairs), count: pairs.length / 2, segments, expected: Uint32Array.from(expected) };
}

describe('document bases of a block filled batch by batch', () => {
  it('adds each segment base to the docIDs of its pairs only', () => {
    const { pairs, count, segments, expected } = blockOfBatches();
    expect([...segments.bases]).toEqual([0, 0, 3, 2, 6, 10]);
    applyDocBases(pairs, count, segments.bases);
    expect([...pairs]).toEqual([...expected]);
  });

  it('keeps one segment when a batch continues with the same base, and starts over after clear()', () => {
    const s = new DocBaseSegments();
    s.add(0, 7);
    s.add(40, 7);
    s.add(90, 9);
    expect([...s.bases]).toEqual([0, 7, 90, 9]);
    s.clear();
    s.add(0, 3);
    expect([...s.bases]).toEqual([0, 3]);
  });

  it('the CPU sorter applies them before sorting', async () => {
    const { pairs, count, segments, expected } = blockOfBatches();
    let out: number[] = [];
    await new CpuSorter().sortBlock(pairs, count, (sorted) => {
      out = [...sorted];
    }, segments.bases);
    const want = [...expected].reduce<number[][]>((acc, v, i) => (i % 2 ? acc[acc.length - 1]!.push(v) : acc.push([v]), acc), []);
    want.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
    expect(out).toEqual(want.flat());
  });
});
