/**
 * `gpuindex bench-sort`: GpuSort against the CPU sorter on the same blocks, per size and
 * distribution: medians (and min / max) over repetitions after a warm-up that lasts until the
 * GPU's times are steady (bench-warmup.ts). Not a test: timings are reported, never asserted.
 */
import { radixSortPairs } from '../indexer/sort/cpu-sorter.js';
import { closeGpu, openGpu } from '../gpu/device.js';
import { DISTRIBUTIONS, makePairs, type Distribution } from '../gpu/distributions.js';
import { GpuSorter, type GpuSortTiming } from '../gpu/gpu-sorter.js';
import { stepCount } from '../gpu/bitonic-plan.js';
import { DEFAULT_WARMUP, median, spreadOf, warmUntilSteady, type Spread, type Warmup, type WarmupRule } from './bench-warmup.js';

export interface BenchSortOptions {
  /** log2 sizes, e.g. [16, 18, ..., 26]. */
  sizes: number[];
  distributions: Distribution[];
  reps: number;
  maxSteps?: number;
  tile?: number;
  /** Fused tile kernels (GpuSorterOptions.fuse). */
  fuse?: boolean;
  /** Also sort the largest block the adapter allows (first distribution only). */
  includeMax?: boolean;
  /** CPU sorter repetitions (it is slow at large sizes). */
  cpuReps?: number;
  /** Also time BigUint64Array.prototype.sort once at this log2 size. */
  jsSortAt?: number;
  /** The warm-up before each size's GPU measurements (default DEFAULT_WARMUP). */
  warmup?: Partial<WarmupRule>;
  log?: (line: string) => void;
}

export interface BenchSortRow {
  n: number;
  distribution: Distribution;
  kernelMs: number;
  uploadMs: number;
  readbackMs: number;
  totalMs: number;
  /** Round trip when the producer writes the block into the staging buffer (stagingBlock()). */
  zeroCopyTotalMs: number;
  kernelMpairsPerS: number;
  totalMpairsPerS: number;
  passes: number;
  oneStepPerDispatchPasses: number;
  gpuBytes: number;
  cpuMs: number;
  cpuMpairsPerS: number;
  byKind?: GpuSortTiming['byKind'];
  /** min / median / max over the timed repetitions (the median is kernelMs, totalMs). */
  kernelMsSpread: Spread;
  totalMsSpread: Spread;
  /** The warm-up before them: rounds, wall ms, and whether the times had become steady. */
  warmup: Warmup;
}

export interface BenchSortReport {
  adapter: Record<string, string>;
  tile: number;
  maxSteps: number;
  fuse: boolean;
  /** The warm-up rule each size's GPU measurements waited for. */
  warmup: WarmupRule;
  rows: BenchSortRow[];
  jsSort?: { n: number; ms: number };
}

const r2 = (x: number): number => Math.round(x * 100) / 100;

export async function benchSort(o: BenchSortOptions): Promise<BenchSortReport> {
  const log = o.log ?? (() => {});
  const ctx = await openGpu();
  if (typeof ctx === 'string') throw new Error(`no GPU: ${ctx}`);
  const sorter = new GpuSorter(ctx, { maxSteps: o.maxSteps, tile: o.tile, fuse: o.fuse });
  const profiler = new GpuSorter(ctx, { maxSteps: o.maxSteps, tile: o.tile, fuse: o.fuse, profile: true });
  const rule: WarmupRule = { ...DEFAULT_WARMUP, ...o.warmup };
  try {
    await sorter.compile();
    await profiler.compile();
    const rows: BenchSortRow[] = [];
    const sizes = o.sizes.map((s) => 2 ** s).filter((n) => n <= sorter.maxPairs);
    if (o.includeMax && !sizes.includes(sorter.maxPairs)) sizes.push(sorter.maxPairs);
    let jsSort: BenchSortReport['jsSort'];
    for (const dist of o.distributions) {
      const largest = Math.max(...sizes.filter((n) => n !== sorter.maxPairs || dist === o.distributions[0]));
      const all = makePairs(dist, largest, 42);
      for (const n of sizes) {
        if (n === sorter.maxPairs && n !== Math.max(...o.sizes.map((s) => 2 ** s)) && dist !== o.distributions[0]) continue;
        const block = all.subarray(0, 2 * n);
        const timings: GpuSortTiming[] = [];
        // Warm-up: the GPU's clocks dropped while the CPU sorter ran; sort until its times are
        // steady. Its first sort checks the order (once per size, outside the timed repetitions).
        let checked = false;
        const warmup = await warmUntilSteady(async () => {
          const t = await sorter.sortBlock(block, n, (sorted) => {
            if (checked) return;
            checked = true;
            for (let i = 1; i < n; i++) {
              const a = sorted[2 * i - 2]!, b = sorted[2 * i]!;
              if (a > b || (a === b && sorted[2 * i - 1]! > sorted[2 * i + 1]!)) throw new Error(`GPU output not sorted at ${i} (n=${n}, ${dist})`);
            }
          });
          return t.kernelMs ?? t.totalMs;
        }, rule);
        for (let rep = 0; rep < o.reps; rep++) timings.push(await sorter.sortBlock(block, n, () => {}));
        const zeroCopy: number[] = [];
        for (let rep = 0; rep < o.reps; rep++) {
          const view = await sorter.stagingBlock(n);
          view.set(block); // the producer's writes (the parse stage's fill), not timed
          zeroCopy.push((await sorter.sortBlock(view, n, () => {})).totalMs);
        }
        const prof = n === 2 ** 24 || n === sizes[sizes.length - 1] ? await profiler.sortBlock(block, n, () => {}) : undefined;
        const cpuTimes: number[] = [];
        const scratch = new Uint32Array(2 * n);
        const copy = new Uint32Array(2 * n);
        for (let rep = 0; rep < (o.cpuReps ?? (n >= 2 ** 22 ? 1 : 3)); rep++) {
          copy.set(block);
          const t0 = performance.now();
          radixSortPairs(copy, n, scratch);
          cpuTimes.push(performance.now() - t0);
        }
        const kernelSpread = spreadOf(timings.map((t) => t.kernelMs ?? NaN));
        const totalSpread = spreadOf(timings.map((t) => t.totalMs));
        const kernelMs = median(timings.map((t) => t.kernelMs ?? NaN));
        const totalMs = median(timings.map((t) => t.totalMs));
        const cpuMs = median(cpuTimes);
        const row: BenchSortRow = {
          n,
          distribution: dist,
          kernelMs: r2(kernelMs),
          uploadMs: r2(median(timings.map((t) => t.uploadMs ?? NaN))),
          readbackMs: r2(median(timings.map((t) => t.readbackMs ?? NaN))),
          totalMs: r2(totalMs),
          zeroCopyTotalMs: r2(median(zeroCopy)),
          kernelMpairsPerS: Math.round(n / kernelMs / 1e3),
          totalMpairsPerS: Math.round(n / totalMs / 1e3),
          passes: timings[0]?.passes ?? 0,
          oneStepPerDispatchPasses: stepCount(n),
          gpuBytes: sorter.gpuBytes,
          cpuMs: r2(cpuMs),
          cpuMpairsPerS: Math.round(n / cpuMs / 1e3),
          byKind: prof?.byKind && Object.fromEntries(Object.entries(prof.byKind).map(([k, v]) => [k, r2(v)])) as GpuSortTiming['byKind'],
          kernelMsSpread: kernelSpread,
          totalMsSpread: totalSpread,
          warmup,
        };
        rows.push(row);
        log(formatRow(row));
        if (o.jsSortAt !== undefined && n === 2 ** o.jsSortAt && !jsSort) {
          const keys = new BigUint64Array(n);
          for (let i = 0; i < n; i++) keys[i] = (BigInt(block[2 * i]!) << 32n) | BigInt(block[2 * i + 1]!);
          const t0 = performance.now();
          keys.sort();
          jsSort = { n, ms: r2(performance.now() - t0) };
          log(`BigUint64Array.prototype.sort, ${n} pairs: ${jsSort.ms} ms`);
        }
      }
    }
    return { adapter: ctx.adapterInfo as unknown as Record<string, string>, tile: sorter.tile, maxSteps: sorter.maxSteps, fuse: sorter.fuse, warmup: rule, rows, jsSort };
  } finally {
    sorter.dispose();
    profiler.dispose();
    closeGpu();
  }
}

export const BENCH_HEADER = '| pairs | distribution | kernel ms | kernel ms min–max | upload ms | readback ms | total ms | total ms min–max | total ms, zero-copy upload | kernel Mpairs/s | total Mpairs/s | passes (1-step network) | GPU MiB | CPU radix ms | CPU Mpairs/s | kernel ms by pass kind (local-sort / global / local-merge) | warm-up |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|';

export function formatRow(r: BenchSortRow): string {
  const kinds = r.byKind ? `${r.byKind['local-sort']} / ${r.byKind.global} / ${r.byKind['local-merge']}` : '';
  const range = (s: Spread) => `${s.min}–${s.max}`;
  const warm = `${r.warmup.rounds} sorts, ${r.warmup.ms} ms, ${r.warmup.steady ? 'steady' : 'not steady'}`;
  return `| 2^${Math.log2(r.n).toFixed(Number.isInteger(Math.log2(r.n)) ? 0 : 2)} | ${r.distribution} | ${r.kernelMs} | ${range(r.kernelMsSpread)} | ${r.uploadMs} | ${r.readbackMs} | ${r.totalMs} | ${range(r.totalMsSpread)} | ${r.zeroCopyTotalMs} | ${r.kernelMpairsPerS} | ${r.totalMpairsPerS} | ${r.passes} (${r.oneStepPerDispatchPasses}) | ${(r.gpuBytes / 2 ** 20).toFixed(0)} | ${r.cpuMs} | ${r.cpuMpairsPerS} | ${kinds} | ${warm} |`;
}

export { DISTRIBUTIONS };
