/**
 * `gpuindex bench --workers 1,2,4,...`: whole builds of one crawl at each parse-worker count,
 * in alternating rounds (odd rounds from the fewest workers up, even rounds down, so that no
 * count always runs first or last), and MB/s against the worker count: a table, CSV, JSON and
 * an SVG plot.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { buildIndex, type BuildSummary } from './build.js';
import { listCorpusFiles } from '../indexer/corpus/index.js';
import { UserError } from './shared/errors.js';
import type { PipelineChoice } from './shared/options.js';
import { closeSvg, median, writeOutputs } from './bench-pipelines.js';

export interface WorkersSweepOptions {
  crawl: string;
  /** Parse-worker counts, each a positive integer. */
  workers: number[];
  /** Default ['auto']: Indexgpu+ where a GPU is, else Indexcpu. */
  pipelines?: PipelineChoice[];
  memory?: string;
  blockSize?: number;
  /** Alternating rounds; cells report medians. Default 1. */
  repeat?: number;
  log?: (line: string) => void;
}

export interface WorkersRow {
  workers: number;
  /** As asked (auto, cpu, gpu, gpu+) and as it ran. */
  pipeline: string;
  ranAs: string;
  bytes: number;
  documents: number;
  pairs: number;
  /** Distinct terms of the index. */
  terms: number;
  /** Medians over the rounds. */
  totalMs: number;
  parseSortMs: number;
  mergeMs: number;
  /** Crawl bytes / whole build (median), in MB (10^6 bytes) per second. */
  mbPerSecond: number;
  /** The largest over the rounds. */
  peakRssBytes: number;
  samples: { totalMs: number[]; parseSortMs: number[]; mergeMs: number[] };
}

/** "1,2,4,8" -> [1, 2, 4, 8]: positive integers, no repeats, in the order given. */
export function parseWorkerList(spec: string): number[] {
  const list = spec.split(',').map((p) => p.trim());
  const out: number[] = [];
  for (const p of list) {
    if (!/^\d+$/.test(p) || Number(p) < 1) throw new UserError(`--workers: expected a positive integer or a comma list of them, got "${spec}"`);
    if (!out.includes(Number(p))) out.push(Number(p));
  }
  return out;
}

/** 1, 2, 4, ... below `top`, then `top` (the default sweep: top = cores − 1). */
export function doublingWorkers(top: number): number[] {
  const out: number[] = [];
  for (let w = 1; w < top; w *= 2) out.push(w);
  out.push(Math.max(1, top));
  return out;
}

export async function benchWorkers(o: WorkersSweepOptions): Promise<WorkersRow[]> {
  const log = o.log ?? (() => {});
  const root = resolve(o.crawl);
  const { files } = await listCorpusFiles(root);
  if (files.length === 0) throw new UserError(`no indexable files in ${o.crawl}`);
  const bytes = files.reduce((s, f) => s + statSync(join(root, f)).size, 0);
  const repeat = o.repeat ?? 1;
  if (!Number.isInteger(repeat) || repeat < 1) throw new UserError(`--repeat must be a positive integer, got ${o.repeat}`);
  if (o.workers.length === 0) throw new UserError('--workers: no worker counts');
  const pipelines = o.pipelines ?? ['auto'];
  const scratch = mkdtempSync(join(dirname(root), '.gpuindex-bench-workers-'));
  const cells = new Map<string, { row: WorkersRow; rss: number[] }>();
  try {
    const steps = o.workers.flatMap((w) => pipelines.map((p) => [w, p] as const));
    for (let round = 1; round <= repeat; round++) {
      for (const [w, p] of round % 2 === 1 ? steps : [...steps].reverse()) {
        const out = join(scratch, `index-w${w}-${p.replace('+', 'plus')}`);
        const s: BuildSummary = await buildIndex({ input: root, output: out, force: true, pipeline: p, workers: w, memory: o.memory, blockSize: o.blockSize });
        rmSync(out, { recursive: true, force: true });
        const key = `${w} ${p}`;
        let cell = cells.get(key);
        if (!cell) {
          const row: WorkersRow = { workers: w, pipeline: p, ranAs: s.pipeline, bytes, documents: s.documents, pairs: s.pairs, terms: s.terms, totalMs: 0, parseSortMs: 0, mergeMs: 0, mbPerSecond: 0, peakRssBytes: 0, samples: { totalMs: [], parseSortMs: [], mergeMs: [] } };
          cells.set(key, (cell = { row, rss: [] }));
        }
        cell.row.samples.totalMs.push(s.timings.totalMs);
        cell.row.samples.parseSortMs.push(s.timings.parseSortMs);
        cell.row.samples.mergeMs.push(s.timings.mergeMs);
        cell.rss.push(s.peakRssBytes);
        log(`${w} workers${repeat > 1 ? `, round ${round}` : ''}: ${p} (ran as ${s.pipeline}) ${s.timings.totalMs} ms, ${(bytes / 1e6 / (s.timings.totalMs / 1000)).toFixed(1)} MB/s (parse+sort ${s.timings.parseSortMs} ms, merge ${s.timings.mergeMs} ms), ${s.terms} terms, peak RSS ${(s.peakRssBytes / 2 ** 20).toFixed(0)} MiB`);
      }
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const rows: WorkersRow[] = [];
  for (const w of o.workers)
    for (const p of pipelines) {
      const { row, rss } = cells.get(`${w} ${p}`)!;
      row.totalMs = roundMs(median(row.samples.totalMs));
      row.parseSortMs = roundMs(median(row.samples.parseSortMs));
      row.mergeMs = roundMs(median(row.samples.mergeMs));
      row.mbPerSecond = Math.round((bytes / 1e6 / (row.totalMs / 1000)) * 10) / 10;
      row.peakRssBytes = Math.max(...rss);
      rows.push(row);
    }
  return rows;
}

const roundMs = (ms: number): number => Math.round(ms * 10) / 10;
const label = (p: string): string => ({ cpu: 'Indexcpu', gpu: 'Indexgpu', 'gpu+': 'Indexgpu+' })[p] ?? p;

export function workersTable(rows: WorkersRow[]): string {
  const head = ['workers', 'pipeline', 'MB', 'docs', 'terms', 'whole build s', 'MB/s', 'parse+sort s', 'merge s', 'peak RSS MiB'];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const r of rows)
    lines.push(
      `| ${[r.workers, r.pipeline === r.ranAs ? label(r.ranAs) : `${r.pipeline} (${label(r.ranAs)})`, (r.bytes / 1e6).toFixed(0), r.documents, r.terms, (r.totalMs / 1000).toFixed(2), r.mbPerSecond.toFixed(1), (r.parseSortMs / 1000).toFixed(2), (r.mergeMs / 1000).toFixed(2), (r.peakRssBytes / 2 ** 20).toFixed(0)].join(' | ')} |`,
    );
  return lines.join('\n');
}

export function workersCsv(rows: WorkersRow[]): string {
  const head = ['workers', 'pipeline', 'ran_as', 'bytes', 'documents', 'pairs', 'terms', 'total_ms', 'mb_per_s', 'parse_sort_ms', 'merge_ms', 'peak_rss_bytes'];
  return [head.join(','), ...rows.map((r) => [r.workers, r.pipeline, r.ranAs, r.bytes, r.documents, r.pairs, r.terms, r.totalMs, r.mbPerSecond, r.parseSortMs, r.mergeMs, r.peakRssBytes].join(','))].join('\n') + '\n';
}

/** MB/s against parse workers (log2 axis), one line per pipeline, as benchSvg draws its plot. */
export function workersSvg(rows: WorkersRow[]): string {
  const W = 640;
  const H = 400;
  const m = { l: 60, r: 150, t: 30, b: 50 };
  const colors: Record<string, string> = { cpu: '#d62728', gpu: '#1f77b4', 'gpu+': '#2ca02c', auto: '#2ca02c' };
  const pipes = [...new Set(rows.map((r) => r.pipeline))];
  const series = pipes.map((p) => ({ name: label(rows.find((r) => r.pipeline === p)!.ranAs), color: colors[p] ?? '#555', pts: rows.filter((r) => r.pipeline === p).map((r) => [r.workers, r.mbPerSecond] as [number, number]) }));
  const maxW = Math.max(...rows.map((r) => r.workers), 2);
  const maxY = Math.max(...rows.map((r) => r.mbPerSecond), 0.001);
  const x = (w: number) => m.l + (Math.log2(w) / Math.log2(maxW)) * (W - m.l - m.r);
  const y = (v: number) => H - m.b - (v / maxY) * (H - m.t - m.b);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2 - 90}" y="18" font-size="14">Whole build MB/s vs parse workers</text>`,
    `<line x1="${m.l}" y1="${H - m.b}" x2="${W - m.r}" y2="${H - m.b}" stroke="black"/>`,
    `<line x1="${m.l}" y1="${m.t}" x2="${m.l}" y2="${H - m.b}" stroke="black"/>`,
    `<text x="${(W - m.r) / 2 - 20}" y="${H - 12}">parse workers (log scale)</text>`,
    `<text x="12" y="${m.t - 8}">MB/s</text>`,
  ];
  for (const w of [...new Set(rows.map((r) => r.workers))]) parts.push(`<text x="${x(w) - 6}" y="${H - m.b + 16}">${w}</text>`);
  for (let i = 0; i <= 4; i++) parts.push(`<text x="${m.l - 45}" y="${y((maxY * i) / 4) + 4}">${((maxY * i) / 4).toFixed(0)}</text>`);
  return closeSvg(parts, series, x, y, W - m.r, m.t);
}

export function writeWorkersOutputs(rows: WorkersRow[], outDir: string): string[] {
  return writeOutputs(outDir, { 'workers.json': JSON.stringify(rows, null, 2) + '\n', 'workers.csv': workersCsv(rows), 'workers.svg': workersSvg(rows), 'workers.md': workersTable(rows) + '\n' });
}
