import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withEnv } from './helpers/env.js';
import { benchPipelines, benchTable, median, writeBenchOutputs } from '../src/bench-pipelines.js';

const dir = mkdtempSync(join(tmpdir(), 'gpuindex-bench-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = new URL('../dist/src/cli.js', import.meta.url).pathname;

/** A crawl of `files` JSONL files of `docs` documents each (document d of file f has 3 + (d % 4) words). */
function crawl(files: number, docs: number): string {
  const root = join(dir, `crawl-${files}-${docs}`);
  mkdirSync(root, { recursive: true });
  for (let f = 0; f < files; f++) {
    const lines = Array.from({ length: docs }, (_, d) => JSON.stringify({ id: `f${f}d${d}`, text: Array.from({ length: 3 + (d % 4) }, (_, w) => `word${(f * 7 + d * 3 + w) % 50}`).join(' ') }));
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
    }
    expect(logged.filter((l) => / round \d/.test(l))).toHaveLength(2 * 3 * 2); // per size: 3 rounds of parse alone + cpu
    // Odd rounds parse alone first, even rounds the builds first (no measurement always first).
    const order = logged.filter((l) => l.startsWith('4 files')).map((l) => `${/round (\d)/.exec(l)![1]} ${l.includes('parse alone') ? 'alone' : 'cpu'}`);
    expect(order).toEqual(['1 alone', '1 cpu', '2 cpu', '2 alone', '3 alone', '3 cpu']);
    const table = benchTable(rows).split('\n');
    expect(table[0]).toBe('| MB | docs | pairs | parse alone s | Indexcpu Parse+Sort s | Indexcpu Merge s |');
    expect(table).toHaveLength(4);
    const out = join(dir, 'out');
    expect(writeBenchOutputs(rows, out).map((f) => f.slice(out.length + 1)).sort()).toEqual(['bench.csv', 'bench.json', 'bench.md', 'bench.svg']);
    expect(JSON.parse(readFileSync(join(out, 'bench.json'), 'utf8'))[1].samples.runs.cpu.totalMs).toHaveLength(3);
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
      files: 1, bytes: 2e6, documents: 10, pairs: 100, parseOnlyMs: 100,
      runs: { 'gpu+': { parseSortMs: 110, mergeMs: 10, totalMs: 130, pipeline: 'gpu+', sortBusyMs: 5 } },
      samples: { parseOnlyMs: [100, 90, 120], runs: { 'gpu+': cell([110, 117, 120]) } },
    };
    expect(benchTable([row as Parameters<typeof benchTable>[0][number]]).split('\n').at(-1)).toBe(
      'Largest size, Indexgpu+ Parse+Sort / parse alone by round: 1.100 / 1.300 / 1.000 (median 1.100)',
    );
  });

  it('refuses a --repeat that is not a positive integer with one line', () => {
    const root = crawl(2, 5);
    const r = spawnSync(process.execPath, [cli, 'bench', root, '--pipelines', 'cpu', '--repeat', '0'], { encoding: 'utf8' });
    expect(r.status).not.toBe(0);
    expect(r.stderr.trim()).toBe('gpuindex: --repeat must be a positive integer, got 0');
  });
});
