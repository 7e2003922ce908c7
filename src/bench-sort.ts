/**
 * `gpuindex bench-sort`: the block sorters side by side on the same blocks, per distribution and
 * size: the K-model bitonic network (bsn), the GPU radix sort (radix), the adaptive bitonic sort
 * (adaptive), Batcher's odd-even merge sort (oddeven) and the CPU radix sorter (cpu). For each GPU sorter: kernel time, round trip, GPU memory; medians (and min / max) over
 * repetitions after a warm-up that lasts until that sorter's times are steady (bench-warmup.ts).
 * The sorters take turns at each size, so each sees the same machine state. Not a test: timings
 * are reported, never asserted.
 */
import { radixSortPairs } from '../indexer/sort/cpu-sorter.js';
import { closeGpu, openGpu, type GpuContext } from '../gpu/device.js';
import { DISTRIBUTIONS, makePairs, type Distribution } from '../gpu/distributions.js';
import { AdaptiveSorter } from '../gpu/adaptive-sorter.js';
import { GpuSorter, type GpuSortTiming } from '../gpu/gpu-sorter.js';
import { heatGpu } from '../gpu/clock-heater.js';
import { OddEvenSorter } from '../gpu/oddeven-sorter.js';
import { RADIX_RANKS, RadixSorter, type RadixRank, type RadixSorterOptions } from '../gpu/radix-sorter.js';
import { DEFAULT_WARMUP, median, spreadOf, warmUntilSteady, type Spread, type Warmup, type WarmupRule } from './bench-warmup.js';

/** The sorters bench-sort can compare. */
export const BENCH_SORTERS = ['bsn', 'radix', 'adaptive', 'oddeven', 'cpu'] as const;
export type BenchSorterName = (typeof BENCH_SORTERS)[number];

export interface BenchSortOptions {
  /** log2 sizes, e.g. [16, 18, ..., 26]. */
  sizes: number[];
  distributions: Distribution[];
  /** Which sorters, in this order at each size (default bsn, cpu). */
  sorters?: BenchSorterName[];
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
  /** Milliseconds of a fully busy arithmetic kernel before each GPU measurement's warm-up, to raise the clocks (gpu/clock-heater.ts; default 1000, 0: none). */
  heatMs?: number;
  log?: (line: string) => void;
}

export interface BenchSortRow {
  sorter: BenchSorterName;
  n: number;
  distribution: Distribution;
  /** GPU: kernel time (timestamps); CPU: the sort. */
  kernelMs: number;
  /** GPU only (undefined for the CPU sorter). */
  uploadMs?: number;
  readbackMs?: number;
  /** Round trip: upload, kernels, readback mapped (the CPU sorter: the sort). */
  totalMs: number;
  /** Round trip when the producer writes the block into the staging buffer (stagingBlock()). */
  zeroCopyTotalMs?: number;
  kernelMpairsPerS: number;
  totalMpairsPerS: number;
  /** Dispatches per sort (GPU). */
  passes?: number;
  /** Radix: the digit passes that ran (the others skipped), from the profiled sort. */
  digitPasses?: number;
  /** GPU bytes of the block-sized buffers for this block (block, staging, readback, radix's second block and counts, the adaptive sort's trees). */
  gpuBytes: number;
  /** Of gpuBytes, what the in-place network does not need (radix: the second block buffer and the tile counts; adaptive: the bitonic trees). */
  extraGpuBytes: number;
  /** Kernel ms per dispatch kind, from one profiled sort (largest size and 2^24 only). */
  byKind?: Record<string, number>;
  /** min / median / max over the timed repetitions (the median is kernelMs, totalMs). */
  kernelMsSpread: Spread;
  totalMsSpread: Spread;
  /** The warm-up before them (GPU sorters): rounds, wall ms, and whether the times had become steady. */
  warmup?: Warmup;
}

export interface BenchSortReport {
  adapter: Record<string, string>;
  tile: number;
  maxSteps: number;
  fuse: boolean;
  /** The radix sort's tile (pairs per workgroup) where it ran. */
  radixTile?: number;
  /** The warm-up rule each size's GPU measurements waited for. */
  warmup: WarmupRule;
  rows: BenchSortRow[];
  jsSort?: { n: number; ms: number };
}

const r2 = (x: number): number => Math.round(x * 100) / 100;
/** Mpairs/s: whole numbers, two decimals below 100 (a software adapter's rates). */
const mpairsPerS = (n: number, ms: number): number => (n / ms / 1e3 >= 100 ? Math.round(n / ms / 1e3) : r2(n / ms / 1e3));

/** Checks that a GPU sorter's output is in (termID, docID) order. */
function checkSorted(sorted: Uint32Array, n: number, what: string): void {
  for (let i = 1; i < n; i++) {
    const a = sorted[2 * i - 2]!, b = sorted[2 * i]!;
    if (a > b || (a === b && sorted[2 * i - 1]! > sorted[2 * i + 1]!)) throw new Error(`${what}: output not sorted at ${i}`);
  }
}

type GpuSorterName = Exclude<BenchSorterName, 'cpu'>;

interface GpuContender {
  name: GpuSorterName;
  sorter: GpuSorter;
  profiler: GpuSorter;
}

/** The radix sort's variant for A/B runs: GPUINDEX_RADIX_RANK (split4 | match), GPUINDEX_RADIX_KPT (keys per invocation); unset: its defaults. */
function radixVariantFromEnv(): RadixSorterOptions {
  const rank = process.env.GPUINDEX_RADIX_RANK;
  const kpt = process.env.GPUINDEX_RADIX_KPT;
  if (rank && !(RADIX_RANKS as readonly string[]).includes(rank)) throw new Error(`GPUINDEX_RADIX_RANK: unknown ranking "${rank}" (${RADIX_RANKS.join(', ')})`);
  return { ...(rank ? { rank: rank as RadixRank } : {}), ...(kpt ? { keysPerThread: Number(kpt) } : {}) };
}

function makeGpuSorter(ctx: GpuContext, name: GpuSorterName, o: BenchSortOptions, profile: boolean): GpuSorter {
  if (name === 'radix') return new RadixSorter(ctx, { profile, ...radixVariantFromEnv() });
  if (name === 'oddeven') return new OddEvenSorter(ctx, { tile: o.tile, profile });
  if (name === 'adaptive') return new AdaptiveSorter(ctx, { tile: o.tile, profile });
  return new GpuSorter(ctx, { maxSteps: o.maxSteps, tile: o.tile, fuse: o.fuse, profile });
}

/** One GPU sorter at one size: warm-up, timed repetitions, zero-copy repetitions, one profiled sort. */
async function benchGpu(ctx: GpuContext, c: GpuContender, block: Uint32Array, n: number, dist: Distribution, o: BenchSortOptions, rule: WarmupRule, profileHere: boolean, inPlaceBytes: number): Promise<BenchSortRow> {
  const timings: GpuSortTiming[] = [];
  // Warm-up: the GPU's clocks drop while another sorter runs; sort until the times are steady.
  // The first sort checks the order (once per size, outside the timed repetitions).
  let checked = false;
  await heatGpu(ctx, o.heatMs ?? 1000);
  const warmup = await warmUntilSteady(async () => {
    const t = await c.sorter.sortBlock(block, n, (sorted) => {
      if (checked) return;
      checked = true;
      checkSorted(sorted, n, `${c.name} (n=${n}, ${dist})`);
    });
    return t.kernelMs ?? t.totalMs;
  }, rule);
  for (let rep = 0; rep < o.reps; rep++) timings.push(await c.sorter.sortBlock(block, n, () => {}));
  const zeroCopy: number[] = [];
  for (let rep = 0; rep < o.reps; rep++) {
    const view = await c.sorter.stagingBlock(n);
    view.set(block); // the producer's writes (the parse stage's fill), not timed
    zeroCopy.push((await c.sorter.sortBlock(view, n, () => {})).totalMs);
  }
  const prof = profileHere ? await c.profiler.sortBlock(block, n, () => {}) : undefined;
  const kernelMs = median(timings.map((t) => t.kernelMs ?? NaN));
  const totalMs = median(timings.map((t) => t.totalMs));
  const gpuBytes = c.sorter.gpuBytesFor(n);
  return {
    sorter: c.name,
    n,
    distribution: dist,
    kernelMs: r2(kernelMs),
    uploadMs: r2(median(timings.map((t) => t.uploadMs ?? NaN))),
    readbackMs: r2(median(timings.map((t) => t.readbackMs ?? NaN))),
    totalMs: r2(totalMs),
    zeroCopyTotalMs: r2(median(zeroCopy)),
    kernelMpairsPerS: mpairsPerS(n, kernelMs),
    totalMpairsPerS: mpairsPerS(n, totalMs),
    passes: timings[0]?.passes ?? 0,
    digitPasses: prof?.digitPasses,
    gpuBytes,
    extraGpuBytes: gpuBytes - inPlaceBytes,
    byKind: prof?.byKind && Object.fromEntries(Object.entries(prof.byKind).map(([k, v]) => [k, r2(v)])),
    kernelMsSpread: spreadOf(timings.map((t) => t.kernelMs ?? NaN)),
    totalMsSpread: spreadOf(timings.map((t) => t.totalMs)),
    warmup,
  };
}

function benchCpu(block: Uint32Array, n: number, dist: Distribution, reps: number): BenchSortRow {
  const times: number[] = [];
  const scratch = new Uint32Array(2 * n);
  const copy = new Uint32Array(2 * n);
  for (let rep = 0; rep < reps; rep++) {
    copy.set(block);
    const t0 = performance.now();
    radixSortPairs(copy, n, scratch);
    times.push(performance.now() - t0);
  }
  const ms = median(times);
  const spread = spreadOf(times);
  return { sorter: 'cpu', n, distribution: dist, kernelMs: r2(ms), totalMs: r2(ms), kernelMpairsPerS: mpairsPerS(n, ms), totalMpairsPerS: mpairsPerS(n, ms), gpuBytes: 0, extraGpuBytes: 0, kernelMsSpread: spread, totalMsSpread: spread };
}

export async function benchSort(o: BenchSortOptions): Promise<BenchSortReport> {
  const log = o.log ?? (() => {});
  const names = o.sorters ?? ['bsn', 'cpu'];
  const ctx = await openGpu();
  if (typeof ctx === 'string') throw new Error(`no GPU: ${ctx}`);
  const gpus: GpuContender[] = [];
  const rule: WarmupRule = { ...DEFAULT_WARMUP, ...o.warmup };
  // The network's sorter also gives the tile and binding limit of the report.
  const reference = new GpuSorter(ctx, { maxSteps: o.maxSteps, tile: o.tile, fuse: o.fuse });
  try {
    for (const name of names) {
      if (name === 'cpu') continue;
      const c: GpuContender = { name, sorter: makeGpuSorter(ctx, name, o, false), profiler: makeGpuSorter(ctx, name, o, true) };
      gpus.push(c);
      await c.sorter.compile();
      await c.profiler.compile();
    }
    const maxPairs = reference.maxPairs;
    const rows: BenchSortRow[] = [];
    const sizes = o.sizes.map((s) => 2 ** s).filter((n) => n <= maxPairs);
    if (o.includeMax && !sizes.includes(maxPairs)) sizes.push(maxPairs);
    let jsSort: BenchSortReport['jsSort'];
    for (const dist of o.distributions) {
      const largest = Math.max(...sizes.filter((n) => n !== maxPairs || dist === o.distributions[0]));
      const all = makePairs(dist, largest, 42);
      for (const n of sizes) {
        if (n === maxPairs && n !== Math.max(...o.sizes.map((s) => 2 ** s)) && dist !== o.distributions[0]) continue;
        const block = all.subarray(0, 2 * n);
        const profileHere = n === 2 ** 24 || n === sizes[sizes.length - 1];
        for (const name of names) {
          const c = gpus.find((g) => g.name === name);
          // The adaptive sort's trees (12 bytes a node, the block padded to 2^k) fit one binding for fewer pairs than the block.
          if (c && n > c.sorter.maxPairs) {
            log(`${name}: ${n} pairs exceed its largest block (${c.sorter.maxPairs}); skipped`);
            continue;
          }
          const row = c ? await benchGpu(ctx, c, block, n, dist, o, rule, profileHere, reference.gpuBytesFor(n)) : benchCpu(block, n, dist, o.cpuReps ?? (n >= 2 ** 22 ? 1 : 3));
          rows.push(row);
          log(formatRow(row));
        }
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
    const radix = gpus.find((g) => g.name === 'radix')?.sorter as RadixSorter | undefined;
    return { adapter: ctx.adapterInfo as unknown as Record<string, string>, tile: reference.tile, maxSteps: reference.maxSteps, fuse: reference.fuse, radixTile: radix?.radixTile, warmup: rule, rows, jsSort };
  } finally {
    for (const c of gpus) {
      c.sorter.dispose();
      c.profiler.dispose();
    }
    // Each dispose gave up one user of the device; the last close destroys it.
    if (gpus.length === 0) closeGpu();
  }
}

export const BENCH_HEADER =
  '| sorter | pairs | distribution | kernel ms | kernel ms min–max | upload ms | readback ms | total ms | total ms min–max | total ms, zero-copy upload | kernel Mpairs/s | total Mpairs/s | dispatches (digit passes run) | GPU MiB | of which beyond in place | kernel ms by dispatch kind | warm-up |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|';

export function formatRow(r: BenchSortRow): string {
  const kinds = r.byKind ? Object.entries(r.byKind).map(([k, v]) => `${k} ${v}`).join(' / ') : '';
  const range = (s: Spread) => `${s.min}–${s.max}`;
  const warm = r.warmup ? `${r.warmup.rounds} sorts, ${r.warmup.ms} ms, ${r.warmup.steady ? 'steady' : 'not steady'}` : '–';
  const dash = (x: number | undefined) => (x === undefined ? '–' : String(x));
  const passes = r.passes === undefined ? '–' : `${r.passes}${r.digitPasses !== undefined ? ` (${r.digitPasses})` : ''}`;
  const mib = (b: number) => (b / 2 ** 20).toFixed(1);
  const size = `2^${Math.log2(r.n).toFixed(Number.isInteger(Math.log2(r.n)) ? 0 : 2)}`;
  return `| ${r.sorter} | ${size} | ${r.distribution} | ${r.kernelMs} | ${range(r.kernelMsSpread)} | ${dash(r.uploadMs)} | ${dash(r.readbackMs)} | ${r.totalMs} | ${range(r.totalMsSpread)} | ${dash(r.zeroCopyTotalMs)} | ${r.kernelMpairsPerS} | ${r.totalMpairsPerS} | ${passes} | ${mib(r.gpuBytes)} | ${mib(r.extraGpuBytes)} | ${kinds} | ${warm} |`;
}

export { DISTRIBUTIONS };
