/**
 * GpuSort without a GPU: the pass plan, and the generated kernels run on the CPU
 * (test/helpers/gpu.ts) over many sizes, tiles, steps per pass and grids. This is where the
 * Γ-partition index arithmetic (mirrored flips, partial passes, the sentinel rule) is checked
 * exhaustively; test/gpu-sorter.test.ts checks the same kernels on a real adapter.
 */
import { describe, expect, it } from 'vitest';
import { log2, nextPow2, passCount, planDispatches, planSort, stepCount } from '../gpu/bitonic-plan.js';
import { DISTRIBUTIONS, makePairs } from '../gpu/distributions.js';
import { globalKernelSource, localKernelSource, registerSortNetwork } from '../gpu/kernel-source.js';
import { cpuSorted, emulateGpuSort, wgslToJs } from './helpers/gpu.js';


describe('the pass plan (K-model mapping)', () => {
  it('runs every step of the padded network exactly once, in network order', () => {
    for (const tile of [16, 64, 4096])
      for (const n of [2, 3, 17, 1000, 4096, 4097, 1 << 16, (1 << 20) + 1])
        for (const maxSteps of [1, 2, 3, 4, 5, 6]) {
          const plan = planSort(n, tile, maxSteps);
          const P = Math.max(nextPow2(n), tile);
          // Expand the plan to (stage, step) and compare with the network's order.
          const steps: string[] = [];
          for (const p of plan) {
            if (p.kind === 'local-sort') for (let k = 2; k <= tile; k *= 2) for (let j = k / 2; j >= 1; j /= 2) steps.push(`${k}:${j}`);
            else if (p.kind === 'local-merge') for (let j = tile / 2; j >= 1; j /= 2) steps.push(`${p.k}:${j}`);
            else {
              expect(p.m).toBeLessThanOrEqual(maxSteps);
              expect(p.flip).toBe(p.jHi === p.k / 2);
              for (let i = 0; i < p.m; i++) steps.push(`${p.k}:${p.jHi / 2 ** i}`);
            }
          }
          const network: string[] = [];
          for (let k = 2; k <= P; k *= 2) for (let j = k / 2; j >= 1; j /= 2) network.push(`${k}:${j}`);
          expect(steps).toEqual(network);
          expect(steps.length).toBe(stepCount(P));
        }
  });

  it('counts passes: 37 for 2^24 pairs (tile 4096, 4 steps per pass) against 300 one-step dispatches', () => {
    expect(passCount(2 ** 24, 4096, 4)).toBe(37);
    expect(stepCount(2 ** 24)).toBe(300);
    expect(passCount(2 ** 26, 4096, 4)).toBe(47);
    expect(passCount(4096, 4096, 4)).toBe(1);
    expect(planSort(0, 4096, 4)).toEqual([]);
    expect(planSort(1, 4096, 4)).toEqual([]);
  });

  it('sizes grids and uniforms: one invocation per part, 2-D beyond the per-dimension limit', () => {
    const shape = { tile: 4096, tileThreads: 256, maxSteps: 4, globalGroup: 256, maxGroupsPerDimension: 65535 };
    const d = planDispatches(2 ** 28 - 1, shape);
    expect(d[0]!.groups).toEqual([65535, 2]); // 65536 tiles
    expect(d[0]!.params).toEqual([2 ** 28 - 1, 65536 * 256, 0, 65535]);
    const g = d.find((x) => x.pass.kind === 'global' && x.pass.m === 4)!;
    expect(g.params[1]).toBe(2 ** 24); // 2^28 / 2^4 parts
    expect(g.groups[0] * g.groups[1] * 256).toBeGreaterThanOrEqual(g.params[1]);
    for (const x of d) if (x.pass.kind === 'global') expect(2 ** x.params[2]).toBe(x.pass.jHi / 2 ** (x.pass.m - 1));
    expect(log2(4096)).toBe(12);
  });
});

describe('the generated kernels, run on the CPU', () => {
  it('translates every kernel variant (the emulator covers the WGSL they use)', () => {
    for (const fuse of [false, true]) expect(() => wgslToJs(localKernelSource(64, 4, fuse))).not.toThrow();
    for (let m = 1; m <= 6; m++) for (const flip of [false, true]) expect(() => wgslToJs(globalKernelSource(m, flip, 8))).not.toThrow();
    expect(() => wgslToJs('fn f() { let x = subgroupShuffle(1u, 2u); }')).toThrow(/unsupported/);
  });

  it('the 16-register sorting network of the fused local sort sorts every 0/1 input', () => {
    // 0-1 principle: a comparator network sorts everything iff it sorts all 2^16 0/1 inputs.
    const cas = registerSortNetwork(4).map((l) => /less\(r(\d+), r(\d+)\)/.exec(l)!.slice(1).map(Number) as [number, number]);
    for (let v = 0; v < 1 << 16; v++) {
      const r = Array.from({ length: 16 }, (_, i) => (v >> i) & 1);
      for (const [y, x] of cas) if (r[y]! < r[x]!) [r[x], r[y]] = [r[y]!, r[x]!];
      for (let i = 1; i < 16; i++) if (r[i - 1]! > r[i]!) throw new Error(`input ${v.toString(2)} not sorted`);
    }
  });

  it('sorts every size 0 .. 300 like the CPU sorter (tile 16, 1 and 3 steps per pass, plain and fused)', () => {
    for (const [maxSteps, fuse] of [[1, false], [3, true]] as const)
      for (let n = 0; n <= 300; n++) {
        const pairs = makePairs(n % 3 ? 'few-terms' : 'uniform', n, n);
        expect(emulateGpuSort(pairs, n, { tile: 16, maxSteps, fuse }), `n=${n} m=${maxSteps}`).toEqual(cpuSorted(pairs, n));
      }
  });

  it('sorts every distribution at 2^k-1, 2^k, 2^k+1 and odd sizes with every pass kind, m = 1 .. 6', () => {
    const cases: { tile: number; tileThreads?: number; maxSteps: number; fuse: boolean; maxGroupsPerDimension?: number }[] = [
      { tile: 16, maxSteps: 6, fuse: false },
      { tile: 32, maxSteps: 5, fuse: true, maxGroupsPerDimension: 7 },
      { tile: 64, maxSteps: 2, fuse: false },
      { tile: 64, tileThreads: 1, maxSteps: 4, fuse: true }, // several parts per invocation
      { tile: 128, tileThreads: 2, maxSteps: 3, fuse: false, maxGroupsPerDimension: 3 },
      { tile: 256, maxSteps: 4, fuse: true },
    ];
    for (const c of cases)
      for (const dist of DISTRIBUTIONS)
        for (const n of [1023, 1024, 1025, 2049, 3001]) {
          const pairs = makePairs(dist, n, n + c.tile);
          expect(emulateGpuSort(pairs, n, c), `${dist} n=${n} ${JSON.stringify(c)}`).toEqual(cpuSorted(pairs, n));
        }
  });

  it('handles duplicates of the sentinel value itself (0xffffffff, 0xffffffff) in the block', () => {
    const n = 777;
    const pairs = makePairs('few-terms', n, 5);
    for (let i = 0; i < n; i += 3) pairs[2 * i] = pairs[2 * i + 1] = 0xffffffff;
    expect(emulateGpuSort(pairs, n, { tile: 16, maxSteps: 2, fuse: true })).toEqual(cpuSorted(pairs, n));
  });
});
