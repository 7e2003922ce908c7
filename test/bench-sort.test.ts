import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { AdaptiveSorter } from '../gpu/adaptive-sorter.js';
import { closeGpu, openGpu } from '../gpu/device.js';
import { GpuSorter } from '../gpu/gpu-sorter.js';
import { benchSort } from '../src/bench-sort.js';
import { isSteady, spreadOf, warmUntilSteady, type WarmupRule } from '../src/bench-warmup.js';
import { hasGpu } from './helpers/gpu-available.js';

const cli = new URL('../dist/src/cli.js', import.meta.url).pathname;

describe('bench-sort warm-up', () => {
  it('is steady when the last 3 times are within 5 % of each other', () => {
    expect(isSteady([9, 5, 5.1, 5.2], 3, 0.05)).toBe(true);
    expect(isSteady([5, 5.1, 5.4], 3, 0.05)).toBe(false); // 8 % apart
    expect(isSteady([5, 5.1], 3, 0.05)).toBe(false); // too few
    expect(isSteady([NaN, NaN, NaN], 3, 0.05)).toBe(false);
  });

  // A fake sort whose times come from a list, and a fake clock that advances 100 ms a sort.
  const run = (times: number[], rule: WarmupRule) => {
    let i = 0;
    let clock = 0;
    return warmUntilSteady(
      async () => {
        clock += 100;
        return times[Math.min(i++, times.length - 1)]!;
      },
      rule,
      () => clock,
    );
  };
  const rule: WarmupRule = { window: 3, tolerance: 0.05, minMs: 300, maxRounds: 50, maxMs: 10_000 };

  it('sorts until the times settle (clocks rising), and for at least minMs', async () => {
    // 18, 12, 8 while the clocks rise, then steady at 5.4 +- 1 %
    expect(await run([18, 12, 8, 5.5, 5.4, 5.45, 5.42], rule)).toEqual({ rounds: 6, ms: 600, steady: true });
    // steady from the start: still minMs (3 sorts of 100 ms)
    expect(await run([5, 5, 5, 5, 5], rule)).toEqual({ rounds: 3, ms: 300, steady: true });
    expect(await run([5, 5, 5, 5, 5], { ...rule, minMs: 700 })).toEqual({ rounds: 7, ms: 700, steady: true });
  });

  it('stops at the caps, not steady', async () => {
    const noisy = Array.from({ length: 100 }, (_, i) => (i % 2 ? 5 : 10));
    expect(await run(noisy, rule)).toEqual({ rounds: 50, ms: 5000, steady: false });
    expect(await run(noisy, { ...rule, maxMs: 1000 })).toEqual({ rounds: 10, ms: 1000, steady: false });
  });

  it('reports min, median and max of the timed repetitions', () => {
    expect(spreadOf([5.123, 4.9, 7, 5])).toEqual({ min: 4.9, median: 5.06, max: 7 });
    expect(spreadOf([3])).toEqual({ min: 3, median: 3, max: 3 });
  });
});

describe.runIf(hasGpu())('gpuindex bench-sort on the available adapter', () => {
  it('gives each sorter a row per size and distribution, with the spread of its timed repetitions and its warm-up, in the JSON and the table', () => {
    const args = ['bench-sort', '--sorters', 'bsn,radix,adaptive,oddeven,cpu', '--sizes', '10,12', '--dist', 'zipf,uniform', '--reps', '3', '--warm-max-ms', '1500'];
    const json = spawnSync(process.execPath, [cli, ...args, '--json'], { encoding: 'utf8' });
    expect(json.status).toBe(0);
    const report = JSON.parse(json.stdout);
    expect(report.warmup).toEqual({ window: 3, tolerance: 0.05, minMs: 300, maxRounds: 500, maxMs: 1500 });
    // Sorters take turns at each size, in the order asked.
    expect(report.rows.map((r: { sorter: string; n: number; distribution: string }) => `${r.distribution} ${r.n} ${r.sorter}`)).toEqual(
      ['zipf', 'uniform'].flatMap((d) => [1024, 4096].flatMap((n) => ['bsn', 'radix', 'adaptive', 'oddeven', 'cpu'].map((s) => `${d} ${n} ${s}`))),
    );
    for (const r of report.rows) {
      for (const [spread, medianMs] of [[r.kernelMsSpread, r.kernelMs], [r.totalMsSpread, r.totalMs]]) {
        expect(spread.min).toBeLessThanOrEqual(spread.median);
        expect(spread.median).toBeLessThanOrEqual(spread.max);
        expect(spread.median).toBeCloseTo(medianMs, 2);
      }
      if (r.sorter === 'cpu') {
        expect(r.warmup).toBeUndefined();
        expect(r.gpuBytes).toBe(0);
        continue;
      }
      expect(typeof r.warmup.steady).toBe('boolean');
      expect(r.warmup.rounds).toBeGreaterThanOrEqual(r.warmup.steady ? 3 : 1);
      expect(r.warmup.ms).toBeGreaterThanOrEqual(0);
      // The networks sort in place; the radix sort holds a second block buffer (the smallest buffers hold 2^13 pairs) and its counts;
      // the adaptive sort its bitonic trees, 16 bytes a node and the instances' pointers.
      if (r.sorter === 'radix') expect(r.extraGpuBytes).toBeGreaterThan(8 * 2 ** 13);
      else if (r.sorter === 'adaptive') expect(r.extraGpuBytes).toBe(16 * 2 ** 13 + 8 * 2 ** 4);
      else expect(r.extraGpuBytes).toBe(0);
    }

    const table = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
    expect(table.status).toBe(0);
    const lines = table.stdout.split('\n');
    expect(lines[0]).toContain('| sorter | pairs | distribution | kernel ms | kernel ms min–max |');
    expect(lines[0]).toContain('| total ms | total ms min–max |');
    const rows = lines.filter((l) => /^\| (bsn|radix|adaptive|oddeven|cpu) \| 2\^/.test(l));
    expect(rows).toHaveLength(20);
    for (const row of rows) {
      const cells = row.split('|').slice(1, -1).map((c) => c.trim());
      expect(cells).toHaveLength(lines[0]!.split('|').length - 2);
      const [min, max] = cells[4]!.split('–').map(Number);
      expect(min).toBeLessThanOrEqual(Number(cells[3]));
      expect(Number(cells[3])).toBeLessThanOrEqual(max!);
      expect(cells.at(-1)).toMatch(cells[0] === 'cpu' ? /^–$/ : /^\d+ sorts, \d+ ms, (steady|not steady)$/);
    }
  });

  it('skips a sorter at sizes above its largest block, in one line (the adaptive sort above 2^k nodes of 12 bytes a binding)', async () => {
    const ctx = await openGpu();
    if (typeof ctx === 'string') throw new Error(ctx);
    const adaptiveMax = new AdaptiveSorter(ctx).maxPairs;
    const networkMax = new GpuSorter(ctx).maxPairs;
    closeGpu();
    const logN = Math.log2(adaptiveMax) + 1;
    if (2 ** logN > networkMax) return; // no size the network takes and the adaptive sort does not
    const lines: string[] = [];
    const report = await benchSort({ sizes: [logN], distributions: ['sorted'], sorters: ['adaptive'], reps: 1, log: (line) => lines.push(line) });
    expect(report.rows).toEqual([]);
    expect(lines).toEqual([`adaptive: ${2 ** logN} pairs exceed its largest block (${adaptiveMax}); skipped`]);
  });

  it('refuses a sorter it does not know, in one line', () => {
    const r = spawnSync(process.execPath, [cli, 'bench-sort', '--sorters', 'bsn,quick'], { encoding: 'utf8' });
    expect(r.status).not.toBe(0);
    expect(r.stderr.trim()).toMatch(/--sorters: unknown sorter "quick" \(bsn, radix, adaptive, oddeven, cpu\)$/);
  });
});
