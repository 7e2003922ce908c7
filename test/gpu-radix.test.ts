import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyDocBases } from '../indexer/fill/doc-bases.js';
import { closeGpu, openGpu, type GpuContext } from '../gpu/device.js';
import { DISTRIBUTIONS, makePairs } from '../gpu/distributions.js';
import { digitPassesOf, matchDownsweepBytes, radixExtraBytes, radixKeysPerThread, RadixSorter, scanRanges, type RadixSorterOptions } from '../gpu/radix-sorter.js';
import { hasGpu } from './helpers/gpu-available.js';
import { gpuSortedStaged, bigIntSorted, pairsDiffer } from './helpers/gpu.js';

describe('the radix sorter\'s plan', () => {
  it('counts the digit passes a block needs: varying bytes, docID bytes only when the docIDs descend somewhere', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(0xffffffff), fc.nat(0xffffffff)), { minLength: 1, maxLength: 50 }), (pairs) => {
        let orT = 0, andT = 0xffffffff, orD = 0, andD = 0xffffffff, descents = 0;
        pairs.forEach(([t, d], i) => {
          orT |= t; andT &= t; orD |= d; andD &= d;
          if (i > 0 && d < pairs[i - 1]![1]) descents = 1;
        });
        // Naive: a byte needs a pass when two keys differ in it.
        let expected = 0;
        for (let byte = 0; byte < 4; byte++) {
          const differs = (w: 0 | 1) => pairs.some(([t, d]) => ((([t, d][w]! >>> (8 * byte)) & 0xff) !== (([pairs[0]![0], pairs[0]![1]][w]! >>> (8 * byte)) & 0xff)));
          if (differs(0)) expected++;
          if (descents && differs(1)) expected++;
        }
        expect(digitPassesOf(Uint32Array.from([orT >>> 0, andT >>> 0, orD >>> 0, andD >>> 0, descents]))).toBe(expected);
      }),
    );
  });

  it('spreads the scan over up to 256 workgroups of a few thousand counts', () => {
    expect([1, 32, 33, 64, 65, 4096, 8192, 1 << 20].map(scanRanges)).toEqual([1, 1, 2, 2, 4, 128, 256, 256]);
    // a second block buffer and 256 words a tile of 2048 pairs
    expect(radixExtraBytes(1 << 20, 8)).toBe(8 * (1 << 20) + 4 * (256 * 512 + 256));
  });

  it('takes the most keys per invocation whose downsweep fits the workgroup memory, for either ranking', () => {
    // split4: 8 keys need 4 * (4096 + 768) + 4 * 262 bytes; WebGPU's default 16 KiB takes 4.
    expect([32768, 20504, 20503, 16384].map((b) => radixKeysPerThread(b))).toEqual([8, 8, 4, 4]);
    expect(() => radixKeysPerThread(8192)).toThrow(/12312 bytes of workgroup memory/);
    // match: the tile, 128 words per subgroup slot (8 slots: subgroups of 32), bins' bases and starts.
    expect(matchDownsweepBytes(8, 8)).toBe(4 * (4096 + 1024 + 768 + 10));
    expect(radixKeysPerThread(32768, 'match', 8)).toBe(8);
    expect(radixKeysPerThread(32768, 'match', 32)).toBe(4); // subgroups of 8: 32 slots
    expect(radixKeysPerThread(16384, 'match', 8)).toBe(4);
    expect(() => radixKeysPerThread(8192, 'match', 64)).toThrow(/workgroup memory/);
  });
});

describe.runIf(hasGpu())('the radix sorter on the available adapter', () => {
  let ctx: GpuContext;
  let sorter: RadixSorter;
  // A software adapter compiles each new kernel on its first dispatch (a minute on a busy machine).
  const slowCompile = { readbackTimeoutMs: 600_000 };
  beforeAll(async () => {
    const opened = await openGpu();
    if (typeof opened === 'string') throw new Error(opened);
    ctx = opened;
    sorter = new RadixSorter(ctx, slowCompile);
    await sorter.compile();
  });
  afterAll(() => {
    sorter?.dispose();
    closeGpu();
  });

  /** The shared device again (a sorter's dispose() gives up one user of it). */
  async function openCtx(): Promise<GpuContext> {
    const again = await openGpu();
    if (typeof again === 'string') throw new Error(again);
    return again;
  }

  async function radixSort(s: RadixSorter, pairs: Uint32Array, count: number, docBases?: Uint32Array): Promise<Uint32Array> {
    let out = new Uint32Array(0);
    const input = pairs.slice();
    await s.sortBlock(input, count, (sorted) => {
      out = sorted.slice();
    }, docBases);
    expect(pairsDiffer(input, pairs)).toBeUndefined(); // the host block is never written
    return out;
  }

  it('sorts every distribution at sizes 0 .. 2^16 + 1, around the tile and 2^k', async () => {
    const t = sorter.radixTile;
    const sizes = [0, 1, 2, 3, 5, 255, 256, 257, t - 1, t, t + 1, 3 * t + 7, 4095, 4096, 4097, 65535, 65537];
    for (const dist of DISTRIBUTIONS) {
      for (const n of sizes) {
        const pairs = makePairs(dist, n, n + dist.length);
        expect(pairsDiffer(await radixSort(sorter, pairs, n), bigIntSorted(pairs, n)), `${dist} n=${n}`).toBeUndefined();
      }
    }
  });

  it('sorts large blocks: 2^20 zipfian, 2^20 - 1 uniform, 2^18 + 1 few-terms, 2^17 gaussian', async () => {
    for (const [dist, n] of [['zipf', 2 ** 20], ['uniform', 2 ** 20 - 1], ['few-terms', 2 ** 18 + 1], ['gaussian', 2 ** 17]] as const) {
      const pairs = makePairs(dist, n, 5);
      expect(pairsDiffer(await radixSort(sorter, pairs, n), bigIntSorted(pairs, n)), `${dist} n=${n}`).toBeUndefined();
    }
  });

  it('keeps keys equal to the tile padding (all ones) and sorts keys that differ only in one byte of either word', async () => {
    for (const n of [100, sorter.radixTile + 3]) {
      for (let word = 0; word < 2; word++) {
        for (let byte = 0; byte < 4; byte++) {
          const pairs = new Uint32Array(2 * n).fill(0xffffffff);
          for (let i = 0; i < n; i += 3) pairs[2 * i + word] = (0xffffffff ^ (((i * 37) & 0xff) << (8 * byte))) >>> 0;
          expect(pairsDiffer(await radixSort(sorter, pairs, n), bigIntSorted(pairs, n)), `n=${n} word=${word} byte=${byte}`).toBeUndefined();
        }
      }
    }
  });

  it('skips the docID digits of a block whose docIDs ascend and the bytes no key varies in; runs them when a docID descends', async () => {
    const profiled = new RadixSorter(await openCtx(), { profile: true, ...slowCompile });
    await profiled.compile();
    try {
      const n = 10_000;
      // termIDs below 2^12 (2 varying bytes), docIDs ascending: 2 passes.
      const ascending = new Uint32Array(2 * n);
      for (let i = 0; i < n; i++) {
        ascending[2 * i] = (i * 2654435761) % 4096;
        ascending[2 * i + 1] = 1000 + 3 * i;
      }
      const sortedAsc = await profiledSort(profiled, ascending, n);
      expect(sortedAsc.digitPasses).toBe(ctx.hasTimestamps ? 2 : undefined);
      expect(pairsDiffer(sortedAsc.out, bigIntSorted(ascending, n))).toBeUndefined();
      // One descent: the docID bytes that vary (2: docIDs up to 30997) run too, 4 in all.
      const descending = ascending.slice();
      descending[2 * (n - 1) + 1] = 5;
      const sortedDesc = await profiledSort(profiled, descending, n);
      if (ctx.hasTimestamps) expect(sortedDesc.digitPasses).toBe(4);
      expect(pairsDiffer(sortedDesc.out, bigIntSorted(descending, n))).toBeUndefined();
      // All keys equal but the docIDs' low byte: one pass (an odd count: the block is copied back).
      const oneByte = new Uint32Array(2 * n);
      for (let i = 0; i < n; i++) {
        oneByte[2 * i] = 77;
        oneByte[2 * i + 1] = 0x1200 | ((i * 91) & 0xff);
      }
      const sortedOne = await profiledSort(profiled, oneByte, n);
      if (ctx.hasTimestamps) expect(sortedOne.digitPasses).toBe(1);
      expect(pairsDiffer(sortedOne.out, bigIntSorted(oneByte, n))).toBeUndefined();
    } finally {
      profiled.dispose();
    }
  });

  async function profiledSort(s: RadixSorter, pairs: Uint32Array, n: number) {
    let out = new Uint32Array(0);
    const timing = await s.sortBlock(pairs.slice(), n, (sorted) => {
      out = sorted.slice();
    });
    return { out, digitPasses: timing.digitPasses };
  }

  it('ranks by subgroup ballots (match) where the adapter has subgroups, else by 4-bit splits; a match ranking without subgroups is refused', async () => {
    expect(sorter.rank).toBe(ctx.hasSubgroups ? 'match' : 'split4');
    expect(sorter.source().includes('fn downsweep_match')).toBe(sorter.rank === 'match');
    expect(() => new RadixSorter(ctx, { rank: 'match', subgroups: false })).toThrow(/subgroup operations/);
    expect(() => new RadixSorter(ctx, { keysPerThread: 1000 })).toThrow(/keys per invocation/);
  });

  /** Sizes around a tile of `t` pairs, and blocks whose keys share a digit (one bin takes a whole tile). */
  async function sortsExactly(s: RadixSorter): Promise<void> {
    const t = s.radixTile;
    for (const dist of DISTRIBUTIONS) {
      for (const n of [1, 2, 31, 33, t - 1, t, t + 1, 2 * t + 1, 5 * t - 3]) {
        const pairs = makePairs(dist, n, 7 * n + dist.length);
        expect(pairsDiffer(await radixSort(s, pairs, n), bigIntSorted(pairs, n)), `${s.rank} ${s.keysPerThread} ${dist} n=${n}`).toBeUndefined();
      }
    }
    // Every key in one bin of every digit but the lowest docID byte, which takes 2 values: the
    // first tile is one run, the rest split in two.
    const n = 3 * t + 5;
    const pairs = new Uint32Array(2 * n);
    for (let i = 0; i < n; i++) {
      pairs[2 * i] = 0x01020304;
      pairs[2 * i + 1] = 0x0a0b0c00 | (i < t ? 7 : (i * 2654435761) >>> 31);
    }
    expect(pairsDiffer(await radixSort(s, pairs, n), bigIntSorted(pairs, n)), `${s.rank} one bin`).toBeUndefined();
  }

  it('sorts exactly with either ranking: split4 with subgroup statistics, match with 128-lane masks and a tile of 3 keys per invocation', async () => {
    const variants: RadixSorterOptions[] = [{ rank: 'split4' }, ...(ctx.hasSubgroups ? [{ rank: 'match' as const, wideMasks: true, keysPerThread: 3 }] : [])];
    for (const options of variants) {
      const s = new RadixSorter(await openCtx(), { ...options, ...slowCompile });
      await s.compile();
      try {
        expect([s.rank, s.keysPerThread]).toEqual([options.rank, options.keysPerThread ?? s.keysPerThread]);
        await sortsExactly(s);
      } finally {
        s.dispose();
      }
    }
  }, 900_000);

  it('sorts exactly with the default ranking around its tile and with one bin taking a tile', async () => {
    await sortsExactly(sorter);
  });

  it('uses subgroup operations exactly where the adapter has them, and sorts the same with the shared-memory fallback', async () => {
    expect(sorter.subgroups).toBe(ctx.hasSubgroups);
    expect(sorter.source().includes('enable subgroups;')).toBe(ctx.hasSubgroups);
    const fallback = new RadixSorter(await openCtx(), { subgroups: false, profile: true, ...slowCompile });
    await fallback.compile();
    try {
      expect(fallback.subgroups).toBe(false);
      expect(fallback.source()).not.toMatch(/subgroup/);
      for (const dist of DISTRIBUTIONS) {
        for (const n of [1, 4097, 30_001]) {
          const pairs = makePairs(dist, n, n);
          let out = new Uint32Array(0);
          const timing = await fallback.sortBlock(pairs.slice(), n, (sorted) => {
            out = sorted.slice();
          });
          expect(pairsDiffer(out, bigIntSorted(pairs, n)), `${dist} n=${n}`).toBeUndefined();
          // The stats the passes were chosen from: as the keys say.
          if (ctx.hasTimestamps && n > 1) expect(timing.digitPasses, `${dist} n=${n}`).toBe(expectedPasses(pairs, n));
        }
      }
    } finally {
      fallback.dispose();
    }
  });

  /** Digit passes a block needs, from its keys (the naive way). */
  function expectedPasses(pairs: Uint32Array, n: number): number {
    let ascending = true;
    for (let i = 1; i < n; i++) if (pairs[2 * i + 1]! < pairs[2 * i - 1]!) ascending = false;
    let passes = 0;
    for (let w = 0; w < 2; w++) {
      if (w === 1 && ascending) continue;
      for (let byte = 0; byte < 4; byte++) {
        const first = (pairs[w]! >>> (8 * byte)) & 0xff;
        for (let i = 1; i < n; i++) {
          if (((pairs[2 * i + w]! >>> (8 * byte)) & 0xff) !== first) {
            passes++;
            break;
          }
        }
      }
    }
    return passes;
  }

  it('reserves its buffers for a planned block, or says why the device could not (and holds none then)', async () => {
    // A device out of memory, as a mapped-at-creation buffer that cannot be allocated reports it.
    class OutOfMemory extends RadixSorter {
      failing = true;
      protected override ensureCapacity(bytes: number): void {
        if (this.failing) throw new RangeError('Failed to allocate the buffer (test)');
        super.ensureCapacity(bytes);
      }
    }
    const s = new OutOfMemory(await openCtx());
    await s.compile();
    try {
      const idle = s.gpuBytes;
      expect(await s.reserve(1 << 20)).toBe('Failed to allocate the buffer (test)');
      expect(s.gpuBytes).toBe(idle);
      s.failing = false;
      expect(await s.reserve(1 << 16)).toBeUndefined();
      expect(s.gpuBytes - idle).toBe(s.gpuBytesFor(1 << 16));
      const pairs = makePairs('zipf', 1 << 16, 2);
      expect(pairsDiffer(await radixSort(s, pairs, 1 << 16), bigIntSorted(pairs, 1 << 16))).toBeUndefined();
    } finally {
      s.dispose();
    }
  });

  it('adds document bases on the GPU first (a block filled batch by batch)', async () => {
    for (const n of [1, 3001, 70_000]) {
      const pairs = makePairs('zipf', n, n);
      const bases: number[] = [];
      for (let start = 0, base = 0; start < n; start += 1000, base += 1500) bases.push(start, base);
      for (let i = 0; i < 2 * n; i += 2) pairs[i + 1] = pairs[i + 1]! % 1500;
      const docBases = Uint32Array.from(bases);
      const whole = pairs.slice();
      applyDocBases(whole, n, docBases);
      expect(pairsDiffer(await radixSort(sorter, pairs, n, docBases), bigIntSorted(whole, n)), `n=${n}`).toBeUndefined();
    }
  });

  it('sorts a block written straight into the staging buffer, and holds a second block buffer', async () => {
    const s = new RadixSorter(await openCtx());
    await s.compile();
    try {
      for (const n of [1000, 4096, 777]) {
        const pairs = makePairs('gaussian', n, n);
        const out = await gpuSortedStaged(s, pairs, n);
        expect(pairsDiffer(out, bigIntSorted(pairs, n))).toBeUndefined();
      }
      // The smallest buffers hold 2^13 pairs (64 KiB): 3 of them in GpuSorter, the second block and the counts here.
      const pairs = 1 << 13;
      expect(s.gpuBytes - radixExtraBytes(pairs, s.keysPerThread)).toBeGreaterThanOrEqual(3 * 8 * pairs);
    } finally {
      s.dispose();
    }
  });
});
