import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { radixSortPairs } from '../indexer/sort/cpu-sorter.js';
import { bigIntSorted } from './helpers/gpu.js';

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s;
  };
}

describe('radixSortPairs', () => {
  const cases: [string, (r: () => number, i: number) => [number, number]][] = [
    ['uniform full 32-bit', (r) => [r(), r()]],
    ['small termIDs, random docIDs', (r) => [r() % 7, r()]],
    ['ascending docIDs (BSBI order)', (r, i) => [r() % 5000, i >> 2]],
    // Ascending docIDs with termIDs of one and of three radix digits (the termID-only histograms).
    ['ascending docIDs, termIDs below 300', (r, i) => [r() % 300, i]],
    ['ascending docIDs, full 32-bit termIDs', (r, i) => [r(), i >> 1]],
    ['all equal', () => [42, 42]],
    ['max values', (r) => [0xffffffff - (r() % 3), 0xffffffff - (r() % 3)]],
  ];
  for (const [name, gen] of cases) {
    for (const count of [0, 1, 2, 3, 1000, 65537]) {
      it(`${name}, ${count} pairs`, () => {
        const r = lcg(count + name.length);
        const pairs = new Uint32Array(2 * count);
        for (let i = 0; i < count; i++) [pairs[2 * i], pairs[2 * i + 1]] = gen(r, i);
        const expected = bigIntSorted(pairs, count);
        const sorted = radixSortPairs(pairs, count, new Uint32Array(2 * count));
        expect(sorted.subarray(0, 2 * count)).toEqual(expected);
      });
    }
  }
  it('with term keys: sorts by (key, docID), whether the docIDs ascend or not and for keys of one to three digits', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 1 << 23 }),
        fc.array(fc.tuple(fc.nat(), fc.nat(50)), { minLength: 2, maxLength: 300 }),
        fc.boolean(),
        fc.nat(),
        (terms, raw, ascending, seed) => {
          const r = lcg(seed);
          // A permutation of the terms' ranks (only the ids used need distinct keys).
          const keys = new Uint32Array(terms);
          for (let i = 0; i < terms; i++) keys[i] = terms - 1 - i;
          for (let i = 0; i < Math.min(terms, 4 * raw.length); i++) {
            const j = r() % terms;
            [keys[i], keys[j]] = [keys[j]!, keys[i]!];
          }
          const count = raw.length;
          const pairs = new Uint32Array(2 * count);
          let doc = 0;
          raw.forEach(([t, d], i) => {
            doc += ascending ? d % 3 : 0;
            pairs[2 * i] = t % terms;
            pairs[2 * i + 1] = ascending ? doc : d;
          });
          const mapped = pairs.slice();
          for (let i = 0; i < count; i++) mapped[2 * i] = keys[mapped[2 * i]!]!;
          const sorted = radixSortPairs(pairs, count, new Uint32Array(2 * count), keys);
          expect(sorted.subarray(0, 2 * count)).toEqual(bigIntSorted(mapped, count));
        },
      ),
    );
  });

  it('refuses a scratch array that is too small', () => {
    expect(() => radixSortPairs(new Uint32Array(8), 4, new Uint32Array(2))).toThrow(/scratch holds 1 pairs, need 4/);
  });
});

describe('RunSink with the CPU sorter', () => {
  it('a run that cannot be written ends the build with a RunWriteError carrying the system code (ENOSPC becomes the one-line storage message)', async () => {
    const { RunSink } = await import('../indexer/sort/run-sink.js');
    const { CpuSorter } = await import('../indexer/sort/cpu-sorter.js');
    const { StageClock } = await import('../indexer/pipeline/stage-clock.js');
    const { RunWriteError } = await import('../src/shared/types.js');
    const { storageFailure } = await import('../src/shared/errors.js');
    const sink = new RunSink(new CpuSorter(), '/nonexistent-gpuindex-dir/runs', new StageClock());
    const err = await sink.sortAndWrite(Uint32Array.from([3, 1, 1, 2]), 2).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RunWriteError);
    expect((err as InstanceType<typeof RunWriteError>).code).toBe('ENOENT');
    expect((err as Error).message).toBe("ENOENT: no such file or directory, open '/nonexistent-gpuindex-dir/runs/run-000000.bin'");
    expect(storageFailure(new RunWriteError('ENOSPC: no space left on device, write', 'ENOSPC'), '/tmp/idx')).toBe('no space left on the device for /tmp/idx (ENOSPC: no space left on device, write)');
  });
});

describe('CpuSorter.prepareFor (scratch touched while the block fills)', () => {
  it('touches nothing while the block is under an eighth full (a crawl that small is never sorted)', async () => {
    const { CpuSorter } = await import('../indexer/sort/cpu-sorter.js');
    const sorter = new CpuSorter();
    for (let filled = 0; filled < 1000; filled += 100) sorter.prepareFor(filled, 8000);
    expect(sorter.handOverScratch()).toBeUndefined();
    sorter.prepareFor(1000, 8000);
    expect(sorter.handOverScratch()?.byteLength).toBe(8 * 8000);
  });

  it('sorts exactly as without it, and never writes into a sorted view a consumer still holds', async () => {
    const { CpuSorter } = await import('../indexer/sort/cpu-sorter.js');
    const next = lcg(7);
    const capacity = 50_000;
    const block = (count: number) => {
      const pairs = new Uint32Array(2 * count);
      // docIDs ascend (as in BSBI) so the sort is by termID alone and its output may be the scratch.
      for (let i = 0; i < count; i++) {
        pairs[2 * i] = next() % 2000; // 11 bits: one pass, so the sorted pairs are in the scratch
        pairs[2 * i + 1] = i >> 3;
      }
      return pairs;
    };
    const sorter = new CpuSorter();
    for (const count of [10_000, 30_000, 50_000]) {
      for (let filled = 0; filled <= count; filled += 4096) sorter.prepareFor(filled, capacity);
      const pairs = block(count);
      const expected = bigIntSorted(pairs, count);
      let held: Uint32Array | undefined;
      let copyAtConsume: Uint32Array | undefined;
      await sorter.sortBlock(pairs, count, async (sorted) => {
        held = sorted;
        copyAtConsume = sorted.slice();
        // The next block fills while this run is written: preparing for it must leave the view alone.
        sorter.prepareFor(capacity, capacity);
      });
      expect(copyAtConsume).toEqual(expected);
      expect(held).toEqual(expected);
    }
  });
});
