/**
 * `gpuindex bench`: Table 2 of Capannini, Silvestri and Baraglia, "Sorting on GPUs for large
 * scale datasets: a thorough comparison", on one crawl at doubling sizes. For each size (the
 * first 1, 2, 4, ... files of the crawl, hard-linked into a scratch folder) it builds the
 * index with Indexcpu, Indexgpu and Indexgpu+ and records Parse+Sort and Merge, plus the time
 * the same workers need to parse alone (sorting replaced by a sorter that discards blocks).
 */
import { existsSync, linkSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { TermDictionary } from '../indexer/fill/dictionary.js';
import { DocumentTable } from '../indexer/fill/documents.js';
import { StageClock } from '../indexer/pipeline/stage-clock.js';
import { PAIR_BYTES, workerYoungGenerationMb } from '../indexer/plan/memory-plan.js';
import { runWorkerPipeline } from '../indexer/pipeline/worker-pipeline.js';
import { buildIndex, defaultWorkers, planParseTasks, type BuildSummary } from './build.js';
import { listCorpusFiles } from '../indexer/corpus/index.js';
import { UserError } from './shared/errors.js';
import type { GpuSortChoice, PipelineChoice } from './shared/options.js';
import { createTokenizer } from '../indexer/analysis/tokenizer.js';
import type { DocBases, PairSorter, SortedConsumer, SortTiming } from './shared/types.js';
import { chooseSorter } from '../indexer/sort/sorters.js';
import { labelLibuvPool, startPhaseCpu, type PhaseCpuMs } from '../runtime/cpu-time.js';

/** Stands in for the sort stage when measuring parse alone: takes blocks, sorts and writes nothing. */
class DiscardSorter implements PairSorter {
  readonly kind = 'cpu' as const;
  async sortBlock(): Promise<SortTiming> {
    return { totalMs: 0 };
  }
  dispose(): void {}
}

/** A diagnostic parse-alone variant: the blocks written as runs, unsorted (the cost of the run writes). */
class WriteUnsortedSorter implements PairSorter {
  readonly kind = 'cpu' as const;
  async sortBlock(pairs: Uint32Array, count: number, consume: SortedConsumer): Promise<SortTiming> {
    await consume(pairs.subarray(0, 2 * count));
    return { totalMs: 0 };
  }
  dispose(): void {}
}

/** A diagnostic parse-alone variant: GpuSort of every block, no run written (the cost of the GPU stage). */
class SortWithoutWriteSorter implements PairSorter {
  readonly kind = 'gpu' as const;
  readonly sharedBlocks: boolean;
  /** GpuSort on its thread: sorted there and dropped (no run, no copy back). */
  readonly sortToRun?: PairSorter['sortToRun'];
  constructor(private readonly inner: PairSorter) {
    this.sharedBlocks = inner.sharedBlocks === true;
    if (inner.sortToRun) this.sortToRun = (pairs, count, docBases) => inner.sortToRun!(pairs, count, docBases, undefined);
  }
  sortBlock(pairs: Uint32Array, count: number, _consume: SortedConsumer, docBases?: DocBases): Promise<SortTiming> {
    return this.inner.sortBlock(pairs, count, async () => {}, docBases);
  }
  dispose(): void {
    this.inner.dispose();
  }
}

/**
 * What the parse-alone measurement adds to parsing: nothing ('parse', the reference of the
 * ratio), or as diagnostics (GPUINDEX_BENCH_PARSE_WITH=write,gpusort: extra rows in the log,
 * overlapped like Indexgpu+) the run writes of unsorted blocks, or GpuSort without the writes.
 */
export type ParseAloneVariant = 'parse' | 'parse+write' | 'parse+gpusort';

export function parseAloneVariantsFromEnv(): ParseAloneVariant[] {
  const extra = (process.env.GPUINDEX_BENCH_PARSE_WITH ?? '').split(',').filter(Boolean);
  for (const e of extra) if (e !== 'write' && e !== 'gpusort') throw new UserError(`GPUINDEX_BENCH_PARSE_WITH: expected write and/or gpusort, got ${e}`);
  return ['parse', ...extra.map((e) => `parse+${e}` as ParseAloneVariant)];
}

interface ParseAloneTimes {
  ms: number;
  /** From the last batch taken to the workers closed (closingMs). */
  closing: string;
  cpu: PhaseCpuMs;
}

export interface BenchOptions {
  crawl: string;
  /** Number of sizes (doubling numbers of files, ending at the whole crawl). Default 5. */
  sizes?: number;
  pipelines?: ('cpu' | 'gpu' | 'gpu+')[];
  workers?: number;
  memory?: string;
  blockSize?: number;
  /** The GPU sorter's algorithm in the GPU pipelines (BuildOptions.gpuSort). Default 'bsn'. */
  gpuSort?: GpuSortChoice;
  scratch?: string;
  /**
   * Builds of each cell, in alternating rounds (parse alone, then each pipeline, per round; even
   * rounds in reverse order);
   * the table reports each cell's median. Default 1. On a noisy machine single builds of the
   * same thing differ by up to 25 % (the H100 machine; docs/benchmarks.md, Machines), more than
   * some of the ratios measured.
   */
  repeat?: number;
  log?: (line: string) => void;
}

/** One cell's measurements, in round order. */
export interface BenchSamples {
  parseOnlyMs: number[];
  runs: Record<string, { parseSortMs: number[]; mergeMs: number[]; totalMs: number[] }>;
}

export interface BenchRow {
  files: number;
  bytes: number;
  documents: number;
  pairs: number;
  /** Distinct terms of the index (the dictionary's size). */
  terms: number;
  /** Median over the rounds (see BenchOptions.repeat), as are the runs' times. */
  parseOnlyMs: number;
  /** Per pipeline: Parse+Sort ms, Merge ms, total ms (medians), what it ran as, sort busy ms (last round). */
  runs: Record<string, { parseSortMs: number; mergeMs: number; totalMs: number; pipeline: string; sortBusyMs: number }>;
  /** Every round's times. */
  samples: BenchSamples;
}

/** The median (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const v = [...values].sort((a, b) => a - b);
  const mid = v.length >> 1;
  return v.length % 2 === 1 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
}

async function parseOnly(root: string, files: string[], workers: number, blockSize: number, variant: ParseAloneVariant = 'parse', gpuSort: GpuSortChoice = 'bsn'): Promise<ParseAloneTimes> {
  const scratch = mkdtempSync(join(root, '..', '.gpuindex-bench-runs-'));
  let sorter: PairSorter = new DiscardSorter();
  if (variant === 'parse+write') sorter = new WriteUnsortedSorter();
  if (variant === 'parse+gpusort') sorter = new SortWithoutWriteSorter((await chooseSorter('gpu', gpuSort === 'auto' ? 'bsn' : gpuSort)).sorter);
  try {
    const tasks = planParseTasks(root, files, files.map((f) => statSync(join(root, f)).size), blockSize);
    const clock = new StageClock();
    const t0 = performance.now();
    const cpu = startPhaseCpu();
    await runWorkerPipeline({
      root,
      tasks,
      // The bound on batches ahead of crawl order that a build of this block size plans (one block's pairs).
      maxBufferedBytes: PAIR_BYTES * blockSize,
      corpus: {},
      tokenizer: createTokenizer().options,
      workers,
      // The builds' young generation cap: a larger young generation alone made parse alone 0.8 s
      // of scavenges lighter than the builds it is compared with (H100 machine, 2 GB crawl).
      maxYoungGenerationMb: workerYoungGenerationMb(),
      schedule: variant === 'parse' ? 'sequential' : 'overlapped',
      sorter,
      blockSize,
      runDir: scratch,
      dictionary: new TermDictionary(),
      documents: new DocumentTable(),
      clock,
    });
    const ms = performance.now() - t0;
    return { ms, cpu: cpu(), closing: closingMs(clock.timeline(t0)) };
  } finally {
    sorter.dispose();
    rmSync(scratch, { recursive: true, force: true });
  }
}

export async function benchPipelines(o: BenchOptions): Promise<BenchRow[]> {
  const log = o.log ?? (() => {});
  await labelLibuvPool();
  const root = resolve(o.crawl);
  if (!existsSync(root)) throw new UserError(`crawl not found: ${o.crawl}`);
  const { files } = await listCorpusFiles(root);
  if (files.length === 0) throw new UserError(`no indexable files in ${o.crawl}`);
  const sizes = o.sizes ?? 5;
  const counts = [...new Set(Array.from({ length: sizes }, (_, i) => Math.max(1, Math.round(files.length / 2 ** (sizes - 1 - i)))))];
  const workers = o.workers ?? defaultWorkers();
  const repeat = o.repeat ?? 1;
  if (!Number.isInteger(repeat) || repeat < 1) throw new UserError(`--repeat must be a positive integer, got ${o.repeat}`);
  const pipelines = o.pipelines ?? ['cpu', 'gpu', 'gpu+'];
  const variants = parseAloneVariantsFromEnv();
  const scratch = o.scratch ?? mkdtempSync(join(dirname(root), '.gpuindex-bench-'));
  const rows: BenchRow[] = [];
  try {
    for (const count of counts) {
      const subset = join(scratch, `files-${count}`);
      for (const f of files.slice(0, count)) {
        const target = join(subset, f);
        mkdirSync(dirname(target), { recursive: true });
        if (!existsSync(target)) linkSync(join(root, f), target);
      }
      const subsetFiles = files.slice(0, count);
      const bytes = subsetFiles.reduce((s, f) => s + statSync(join(root, f)).size, 0);
      const blockSize = o.blockSize ?? 1 << 24;
      const samples: BenchSamples = { parseOnlyMs: [], runs: {} };
      const row: BenchRow = { files: count, bytes, documents: 0, pairs: 0, terms: 0, parseOnlyMs: 0, runs: {}, samples };
      for (let round = 1; round <= repeat; round++) {
        const parseAlone = variants.map((variant) => async () => {
          const alone = await parseOnly(subset, subsetFiles, workers, blockSize, variant, o.gpuSort);
          if (variant === 'parse') samples.parseOnlyMs.push(roundMs(alone.ms));
          log(`${count} files${repeat > 1 ? `, round ${round}` : ''}: ${variant === 'parse' ? 'parse alone' : variant} ${roundMs(alone.ms)} ms${cpuNote(alone.cpu)}; ${alone.closing}`);
        });
        const builds = pipelines.map((p) => async () => {
          const out = join(scratch, `index-${count}-${p.replace('+', 'plus')}`);
          const s: BuildSummary = await buildIndex({ input: subset, output: out, force: true, pipeline: p as PipelineChoice, workers, memory: o.memory, blockSize: o.blockSize, gpuSort: o.gpuSort });
          row.documents = s.documents;
          row.pairs = s.pairs;
          row.terms = s.terms;
          const cell = (samples.runs[p] ??= { parseSortMs: [], mergeMs: [], totalMs: [] });
          cell.parseSortMs.push(s.timings.parseSortMs);
          cell.mergeMs.push(s.timings.mergeMs);
          cell.totalMs.push(s.timings.totalMs);
          row.runs[p] = { parseSortMs: 0, mergeMs: 0, totalMs: 0, pipeline: s.pipeline, sortBusyMs: s.stages.sort?.busyMs ?? 0 };
          rmSync(out, { recursive: true, force: true });
          log(`${count} files, ${(bytes / 1e6).toFixed(0)} MB${repeat > 1 ? `, round ${round}` : ''}: ${p} parse+sort ${s.timings.parseSortMs} ms${cpuNote(s.cpu)}, merge ${s.timings.mergeMs} ms (ran as ${s.pipeline}); ${closingMs(s.timeline)}`);
        });
        // Even rounds run the steps in reverse order, so that no measurement always comes first
        // or last in its round (order effects on these hosts: clock boost, caches, the previous build's memory).
        const steps = [...parseAlone, ...builds];
        for (const step of round % 2 === 1 ? steps : steps.reverse()) await step();
      }
      row.parseOnlyMs = roundMs(median(samples.parseOnlyMs));
      for (const p of pipelines) {
        const cell = samples.runs[p]!;
        Object.assign(row.runs[p]!, { parseSortMs: roundMs(median(cell.parseSortMs)), mergeMs: roundMs(median(cell.mergeMs)), totalMs: roundMs(median(cell.totalMs)) });
      }
      rows.push(row);
    }
  } finally {
    if (!o.scratch) rmSync(scratch, { recursive: true, force: true });
  }
  return rows;
}

const roundMs = (ms: number): number => Math.round(ms * 10) / 10;

/** The end of a parse+sort phase from its timeline: last batch taken -> last run written -> workers closed. */
function closingMs(timeline: readonly { event: string; atMs: number }[]): string {
  const at = (event: string) => [...timeline].reverse().find((m) => m.event === event)?.atMs;
  const last = at('last batch');
  const written = at('written');
  const closed = at('workers closed');
  if (last === undefined || closed === undefined) return 'no timeline';
  return `last batch +${written !== undefined && written > last ? (written - last).toFixed(0) : 0} ms runs written, +${(closed - last).toFixed(0)} ms workers closed`;
}

/** A phase's CPU seconds: all, and (Linux) the main thread's, the other live threads' and the rest (the parse workers'). */
function cpuNote(c: PhaseCpuMs): string {
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  if (c.mainThreadMs === undefined || c.otherThreadsMs === undefined) return ` (CPU ${s(c.processMs)})`;
  const groups = Object.entries(c.otherThreadsByGroup ?? {})
    .map(([g, ms]) => `${g} ${s(ms)}`)
    .join(', ');
  return ` (CPU ${s(c.processMs)}: workers ${s(c.processMs - c.mainThreadMs - c.otherThreadsMs)}, main thread ${s(c.mainThreadMs)}, other threads ${s(c.otherThreadsMs)}${groups ? `: ${groups}` : ''})`;
}

export function benchTable(rows: BenchRow[]): string {
  const pipes = Object.keys(rows[0]?.runs ?? {});
  const head = ['MB', 'docs', 'pairs', 'terms', 'parse alone s', ...pipes.flatMap((p) => [`${label(p)} Parse+Sort s`, `${label(p)} Merge s`])];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const r of rows) {
    const cells = [(r.bytes / 1e6).toFixed(0), String(r.documents), String(r.pairs), String(r.terms), (r.parseOnlyMs / 1000).toFixed(2)];
    for (const p of pipes) cells.push((r.runs[p]!.parseSortMs / 1000).toFixed(2), (r.runs[p]!.mergeMs / 1000).toFixed(2));
    lines.push(`| ${cells.join(' | ')} |`);
  }
  const last = rows[rows.length - 1];
  if (last?.runs.cpu && last.runs['gpu+']) {
    const c = last.runs.cpu;
    const g = last.runs['gpu+'];
    lines.push('', `Largest size: Indexgpu+ vs Indexcpu: Parse+Sort ${(c.parseSortMs / g.parseSortMs).toFixed(2)}x, whole build ${(c.totalMs / g.totalMs).toFixed(2)}x; Indexgpu+ Parse+Sort / parse alone = ${(g.parseSortMs / last.parseOnlyMs).toFixed(3)}; whole build ${(last.bytes / 1e6 / (g.totalMs / 1000)).toFixed(1)} MB/s`);
  }
  // The ratio of each round's own pair of builds: on a noisy machine the ratio of the medians
  // can pair a fast parse-alone round with a slow Indexgpu+ one.
  const plus = last?.samples.runs['gpu+']?.parseSortMs;
  if (last && plus && plus.length > 1) {
    const ratios = plus.map((ms, i) => ms / last.samples.parseOnlyMs[i]!);
    lines.push(`Largest size, Indexgpu+ Parse+Sort / parse alone by round: ${ratios.map((r) => r.toFixed(3)).join(' / ')} (median ${median(ratios).toFixed(3)})`);
  }
  return lines.join('\n');
}

const label = (p: string): string => (p === 'cpu' ? 'Indexcpu' : p === 'gpu' ? 'Indexgpu' : 'Indexgpu+');

export function benchCsv(rows: BenchRow[]): string {
  const pipes = Object.keys(rows[0]?.runs ?? {});
  const head = ['bytes', 'documents', 'pairs', 'terms', 'parse_only_ms', ...pipes.flatMap((p) => [`${p}_parse_sort_ms`, `${p}_merge_ms`, `${p}_total_ms`])];
  return [head.join(','), ...rows.map((r) => [r.bytes, r.documents, r.pairs, r.terms, r.parseOnlyMs, ...pipes.flatMap((p) => [r.runs[p]!.parseSortMs, r.runs[p]!.mergeMs, r.runs[p]!.totalMs])].join(','))].join('\n') + '\n';
}

/** A line plot (SVG) of Parse+Sort time against collection size for each pipeline, and parse alone. */
export function benchSvg(rows: BenchRow[]): string {
  const W = 640;
  const H = 400;
  const m = { l: 60, r: 150, t: 30, b: 50 };
  const series: PlotSeries[] = [];
  const colors: Record<string, string> = { cpu: '#d62728', gpu: '#1f77b4', 'gpu+': '#2ca02c' };
  for (const p of Object.keys(rows[0]?.runs ?? {})) series.push({ name: `${label(p)} Parse+Sort`, color: colors[p] ?? '#555', pts: rows.map((r) => [r.bytes / 1e6, r.runs[p]!.parseSortMs / 1000]) });
  series.push({ name: 'parse alone', color: '#7f7f7f', pts: rows.map((r) => [r.bytes / 1e6, r.parseOnlyMs / 1000]) });
  const maxX = Math.max(...rows.map((r) => r.bytes / 1e6), 1);
  const maxY = Math.max(...series.flatMap((s) => s.pts.map((p) => p[1])), 0.001);
  const x = (v: number) => m.l + (v / maxX) * (W - m.l - m.r);
  const y = (v: number) => H - m.b - (v / maxY) * (H - m.t - m.b);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2 - 60}" y="18" font-size="14">Parse+Sort time vs crawl size</text>`,
    `<line x1="${m.l}" y1="${H - m.b}" x2="${W - m.r}" y2="${H - m.b}" stroke="black"/>`,
    `<line x1="${m.l}" y1="${m.t}" x2="${m.l}" y2="${H - m.b}" stroke="black"/>`,
    `<text x="${(W - m.r) / 2}" y="${H - 12}">crawl size (MB)</text>`,
    `<text x="12" y="${m.t - 8}">seconds</text>`,
  ];
  for (let i = 0; i <= 4; i++) {
    parts.push(`<text x="${x((maxX * i) / 4) - 10}" y="${H - m.b + 16}">${((maxX * i) / 4).toFixed(0)}</text>`);
    parts.push(`<text x="${m.l - 45}" y="${y((maxY * i) / 4) + 4}">${((maxY * i) / 4).toFixed(1)}</text>`);
  }
  return closeSvg(parts, series, x, y, W - m.r, m.t);
}

export function writeBenchOutputs(rows: BenchRow[], outDir: string): string[] {
  return writeOutputs(outDir, { 'bench.json': JSON.stringify(rows, null, 2) + '\n', 'bench.csv': benchCsv(rows), 'bench.svg': benchSvg(rows), 'bench.md': benchTable(rows) + '\n' });
}

/** A line of points per series. */
export interface PlotSeries {
  name: string;
  color: string;
  pts: [number, number][];
}

/**
 * Ends a plot begun in `parts` (axes and ticks): each series as a line with its points, a legend
 * right of the plot area (from `legendX`, `top` down), then the closing tag. The whole SVG.
 */
export function closeSvg(parts: string[], series: readonly PlotSeries[], x: (v: number) => number, y: (v: number) => number, legendX: number, top: number): string {
  series.forEach((s, i) => {
    parts.push(`<polyline fill="none" stroke="${s.color}" stroke-width="2" points="${s.pts.map(([a, b]) => `${x(a).toFixed(1)},${y(b).toFixed(1)}`).join(' ')}"/>`);
    for (const [a, b] of s.pts) parts.push(`<circle cx="${x(a).toFixed(1)}" cy="${y(b).toFixed(1)}" r="3" fill="${s.color}"/>`);
    parts.push(`<rect x="${legendX + 10}" y="${top + i * 20}" width="12" height="3" fill="${s.color}"/><text x="${legendX + 26}" y="${top + i * 20 + 5}">${s.name}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}

/** Writes each named text into `outDir` (created); returns their paths. */
export function writeOutputs(outDir: string, files: Record<string, string>): string[] {
  mkdirSync(outDir, { recursive: true });
  return Object.entries(files).map(([name, text]) => {
    writeFileSync(join(outDir, name), text);
    return join(outDir, name);
  });
}
