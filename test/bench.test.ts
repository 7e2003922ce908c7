import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withEnv } from './helpers/env.js';
import { benchCsv, benchPipelines, benchTable, median, writeBenchOutputs } from '../src/bench-pipelines.js';
import { benchWorkers, doublingWorkers, parseWorkerList, workersCsv, workersSvg, workersTable, writeWorkersOutputs } from '../src/bench-workers.js';
import { UserError } from '../src/shared/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'gpuindex-bench-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = new URL('../dist/src/cli.js', import.meta.url).pathname;

/** The distinct words of a crawl made by crawl() (a naive scan: they are their own terms, no stopwords, unstemmed). */
function distinctWords(root: string, files?: number): number {
  const seen = new Set<string>();
  for (const f of readdirSync(root).sort().slice(0, files))
    for (const line of readFileSync(join(root, f), 'utf8').split('\n').filter(Boolean)) for (const w of (JSON.parse(line) as { text: string }).text.split(' ')) seen.add(w);
  return seen.size;
}

/** A crawl of `files` JSONL files of `docs` documents each (document d of file f has 3 + (d % 4) words). */
function crawl(files: number, docs: number): string {
  const root = join(dir, `crawl-${files}-${docs}`);
  mkdirSync(root, { recursive: true });
  for (let f = 0; f < files; f++) {
    // Each file adds words of its own (w<f>x<d>), so the distinct terms grow with the size.
    const lines = Array.from({ length: docs }, (_, d) => JSON.stringify({ id: `f${f}d${d}`, text: [...Array.from({ length: 3 + (d % 4) }, (_, w) => `word${(f * 7 + d * 3 + w) % 50}`), `w${f}x${d % 7}`].join(' ') }));
    writeFileSync(join(root, `part-${f}.jsonl`), lines.join('\n') + '\n');
  }
  return root;
}

describe('gpuindex bench', () => {
  it('median: the middle value, or the mean of the middle two', () => {
    expect(median([5])).toBe(5);
    expect(median([9, 1, 5])).toBe(5);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it('builds each size in rounds and reports the median of each cell, with every round kept', async () => {
    const root = crawl(4, 30);
    const logged: string[] = [];
    const rows = await benchPipelines({ crawl: root, sizes: 2, pipelines: ['cpu'], workers: 1, memory: '256MiB', repeat: 3, log: (l) => logged.push(l) });
    expect(rows.map((r) => r.files)).toEqual([2, 4]);
    expect(rows.map((r) => r.documents)).toEqual([60, 120]);
    for (const r of rows) {
      expect(r.samples.parseOnlyMs).toHaveLength(3);
      expect(r.parseOnlyMs).toBe(Math.round(median(r.samples.parseOnlyMs) * 10) / 10);
      const cell = r.samples.runs.cpu!;
      expect(cell.parseSortMs).toHaveLength(3);
      expect(r.runs.cpu!.parseSortMs).toBe(Math.round(median(cell.parseSortMs) * 10) / 10);
      expect(r.runs.cpu!.totalMs).toBe(Math.round(median(cell.totalMs) * 10) / 10);
      expect(r.runs.cpu!.pipeline).toBe('cpu');
      expect(r.pairs).toBeGreaterThan(0);
      expect(r.terms).toBe(distinctWords(root, r.files));
    }
    expect(rows[1]!.terms).toBeGreaterThan(rows[0]!.terms);
    expect(logged.filter((l) => / round \d/.test(l))).toHaveLength(2 * 3 * 2); // per size: 3 rounds of parse alone + cpu
    // Odd rounds parse alone first, even rounds the builds first (no measurement always first).
    const order = logged.filter((l) => l.startsWith('4 files')).map((l) => `${/round (\d)/.exec(l)![1]} ${l.includes('parse alone') ? 'alone' : 'cpu'}`);
    expect(order).toEqual(['1 alone', '1 cpu', '2 cpu', '2 alone', '3 alone', '3 cpu']);
    const table = benchTable(rows).split('\n');
    expect(table[0]).toBe('| MB | docs | pairs | terms | parse alone s | Indexcpu Parse+Sort s | Indexcpu Merge s |');
    expect(table).toHaveLength(4);
    expect(table[3]!.split(' | ')[3]).toBe(String(rows[1]!.terms));
    const csv = benchCsv(rows).trim().split('\n');
    expect(csv[0]).toBe('bytes,documents,pairs,terms,parse_only_ms,cpu_parse_sort_ms,cpu_merge_ms,cpu_total_ms');
    expect(csv[2]!.split(',')[3]).toBe(String(rows[1]!.terms));
    const out = join(dir, 'out');
    expect(writeBenchOutputs(rows, out).map((f) => f.slice(out.length + 1)).sort()).toEqual(['bench.csv', 'bench.json', 'bench.md', 'bench.svg']);
    expect(JSON.parse(readFileSync(join(out, 'bench.json'), 'utf8'))[1].samples.runs.cpu.totalMs).toHaveLength(3);
    expect(JSON.parse(readFileSync(join(out, 'bench.json'), 'utf8'))[1].terms).toBe(rows[1]!.terms);
    // Its scratch folders (hard-linked subsets, indexes, parse-alone runs) are gone.
    expect(readdirSync(dir).filter((n) => n.startsWith('.gpuindex-bench'))).toEqual([]);
  });

  it('GPUINDEX_BENCH_PARSE_WITH=write: a parse-alone row with the unsorted blocks written as runs, logged beside the reference', () =>
    withEnv('GPUINDEX_BENCH_PARSE_WITH', async (set) => {
      set('write');
      const root = crawl(2, 20);
      const logged: string[] = [];
      const rows = await benchPipelines({ crawl: root, sizes: 1, pipelines: ['cpu'], workers: 1, memory: '256MiB', log: (l) => logged.push(l) });
      // The diagnostic row is logged, not tabulated: the ratio's reference stays parse alone.
      expect(rows[0]!.samples.parseOnlyMs).toHaveLength(1);
      expect(logged.filter((l) => /: parse alone \d/.test(l))).toHaveLength(1);
      expect(logged.filter((l) => /: parse\+write \d/.test(l))).toHaveLength(1);
      expect(logged.find((l) => l.includes('parse+write'))).toMatch(/CPU \d+\.\d\d s.*workers closed/);
      set('sort');
      await expect(benchPipelines({ crawl: root, sizes: 1, pipelines: ['cpu'], workers: 1 })).rejects.toThrow('GPUINDEX_BENCH_PARSE_WITH: expected write and/or gpusort, got sort');
    }));

  it("reports the largest size's Indexgpu+ / parse-alone ratio round by round", () => {
    const cell = (ms: number[]) => ({ parseSortMs: ms, mergeMs: ms, totalMs: ms });
    const row = {
      files: 1, bytes: 2e6, documents: 10, pairs: 100, terms: 20, parseOnlyMs: 100,
      runs: { 'gpu+': { parseSortMs: 110, mergeMs: 10, totalMs: 130, pipeline: 'gpu+', sortBusyMs: 5 } },
      samples: { parseOnlyMs: [100, 90, 120], runs: { 'gpu+': cell([110, 117, 120]) } },
    };
    expect(benchTable([row as Parameters<typeof benchTable>[0][number]]).split('\n').at(-1)).toBe(
      'Largest size, Indexgpu+ Parse+Sort / parse alone by round: 1.100 / 1.300 / 1.000 (median 1.100)',
    );
  });

  it('workers sweep: whole builds at each worker count in alternating rounds, the same index terms at every count, MB/s from the median', async () => {
    const root = crawl(3, 40);
    const logged: string[] = [];
    const rows = await benchWorkers({ crawl: root, workers: [1, 2], pipelines: ['cpu'], memory: '256MiB', repeat: 3, log: (l) => logged.push(l) });
    expect(rows.map((r) => [r.workers, r.pipeline, r.ranAs])).toEqual([[1, 'cpu', 'cpu'], [2, 'cpu', 'cpu']]);
    for (const r of rows) {
      expect(r.documents).toBe(120);
      expect(r.terms).toBe(distinctWords(root));
      expect(r.samples.totalMs).toHaveLength(3);
      expect(r.totalMs).toBe(Math.round(median(r.samples.totalMs) * 10) / 10);
      expect(r.mbPerSecond).toBe(Math.round((r.bytes / 1e6 / (r.totalMs / 1000)) * 10) / 10);
      expect(r.peakRssBytes).toBeGreaterThan(0);
    }
    // Odd rounds from 1 worker up, even rounds down.
    expect(logged.map((l) => /^(\d+) workers, round (\d)/.exec(l)!.slice(1).join('/'))).toEqual(['1/1', '2/1', '2/2', '1/2', '1/3', '2/3']);
    const table = workersTable(rows).split('\n');
    expect(table[0]).toBe('| workers | pipeline | MB | docs | terms | whole build s | MB/s | parse+sort s | merge s | peak RSS MiB |');
    expect(table[2]!.split(' | ').slice(0, 2)).toEqual(['| 1', 'Indexcpu']);
    expect(table[3]!.split(' | ')[6]).toBe(rows[1]!.mbPerSecond.toFixed(1));
    expect(workersCsv(rows).split('\n')[0]).toBe('workers,pipeline,ran_as,bytes,documents,pairs,terms,total_ms,mb_per_s,parse_sort_ms,merge_ms,peak_rss_bytes');
    const svg = workersSvg(rows);
    expect(svg.match(/<circle /g)).toHaveLength(2);
    expect(svg).toContain('parse workers');
    const out = join(dir, 'out-workers');
    expect(writeWorkersOutputs(rows, out).map((f) => f.slice(out.length + 1)).sort()).toEqual(['workers.csv', 'workers.json', 'workers.md', 'workers.svg']);
    expect(JSON.parse(readFileSync(join(out, 'workers.json'), 'utf8'))[1].samples.totalMs).toHaveLength(3);
    expect(readdirSync(dir).filter((n) => n.startsWith('.gpuindex-bench'))).toEqual([]);
  });

  it('reads worker lists; the default sweep doubles up to cores - 1', () => {
    expect(parseWorkerList('1,2, 4,2')).toEqual([1, 2, 4]);
    expect(() => parseWorkerList('1,0')).toThrow(UserError);
    expect(() => parseWorkerList('1,x')).toThrow('--workers: expected a positive integer or a comma list of them, got "1,x"');
    expect(doublingWorkers(63)).toEqual([1, 2, 4, 8, 16, 32, 63]);
    expect(doublingWorkers(15)).toEqual([1, 2, 4, 8, 15]);
    expect(doublingWorkers(1)).toEqual([1]);
  });

  it('without a crawl: generates one with the mail-fitted vocabulary and sweeps workers (CLI)', () => {
    const out = join(dir, 'cli-sweep');
    const r = spawnSync(process.execPath, [cli, 'bench', '--size', '300KB', '--file-size', '100KB', '--workers', '1,2', '--pipelines', 'cpu', '--memory', '256MiB', '-o', out], { encoding: 'utf8', env: { ...process.env, TMPDIR: dir } });
    expect(r.stderr).toMatch(/generated .*: 3 files, 0\.3 MB, \d+ documents, \d+ words, vocabulary mail \(V\(n\) = 2\.93·n\^0\.7167\), seed 1/);
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe('| workers | pipeline | MB | docs | terms | whole build s | MB/s | parse+sort s | merge s | peak RSS MiB |');
    expect(r.stdout.trim().split('\n')).toHaveLength(4);
    const rows = JSON.parse(readFileSync(join(out, 'workers.json'), 'utf8')) as { terms: number }[];
    expect(rows[0]!.terms).toBe(rows[1]!.terms);
    // The generated crawl is gone.
    expect(readdirSync(dir).filter((n) => n.startsWith('gpuindex-bench-crawl-'))).toEqual([]);
  });

  it('refuses generation options with a crawl folder, and a worker list without a sweep, with one line', () => {
    const root = crawl(2, 5);
    for (const [args, msg] of [
      [[root, '--vocabulary', 'mail'], 'gpuindex: --size, --vocabulary and --heaps shape a generated crawl: give no crawl folder to generate one'],
      [[root, '--workers', '2', '--workers-sweep'], 'gpuindex: give --workers <list> or --workers-sweep, not both'],
      [['--vocabulary', 'web', '--size', '10KB'], 'gpuindex: --vocabulary: unknown "web" (known: fixed, mail, html-docs)'],
    ] as const) {
      const r = spawnSync(process.execPath, [cli, 'bench', ...args], { encoding: 'utf8' });
      expect(r.status).toBe(1);
      expect(r.stderr.trim()).toBe(msg);
    }
  });

  it('refuses a --repeat that is not a positive integer with one line', () => {
    const root = crawl(2, 5);
    const r = spawnSync(process.execPath, [cli, 'bench', root, '--pipelines', 'cpu', '--repeat', '0'], { encoding: 'utf8' });
    expect(r.status).not.toBe(0);
    expect(r.stderr.trim()).toBe('gpuindex: --repeat must be a positive integer, got 0');
  });
});
