/** GPU commands: `gpu-info` and `bench-sort`. The GPU modules load only when one runs. */
import type { Command } from 'commander';
import { UserError } from './shared/errors.js';

export function registerGpuCommands(program: Command): void {
  program
    .command('gpu-info')
    .description('the WebGPU adapter, its limits and features, or why there is none')
    .option('--json', 'as JSON', false)
    .action(async (o: { json: boolean }) => {
      const { gpuInfo } = await import('../gpu/device.js');
      const info = await gpuInfo();
      if (o.json) process.stdout.write(JSON.stringify(info, null, 2) + '\n');
      else if (!info.available) process.stdout.write(`no GPU: ${info.reason}\n`);
      else {
        const a = info.adapter as Record<string, string>;
        process.stdout.write(`adapter: ${[a.vendor, a.architecture, a.device, a.description].filter(Boolean).join(' / ')}\n`);
        for (const [k, v] of Object.entries(info.limits as Record<string, number>)) process.stdout.write(`  ${k.padEnd(36)} ${v}\n`);
        process.stdout.write(`  timestamps ${info.timestamps}, subgroups ${info.subgroups}\n  features: ${(info.features as string[]).join(', ')}\n`);
      }
    });

  program
    .command('bench-sort')
    .description('the block sorters side by side on the same blocks: kernel time, round trip and GPU memory (medians, min and max after a warm-up until each GPU sorter\'s times are steady)')
    .option('--sorters <list>', 'sorters, taking turns at each size: bsn (the K-model bitonic network), radix (GPU LSD radix sort), adaptive (adaptive bitonic sort), oddeven (Batcher\'s odd-even merge sort), cpu (CPU radix sort)', 'bsn,cpu')
    .option('--sizes <from..to>', 'log2 sizes, e.g. 16..26 or 16,20,24', '16..26')
    .option('--dist <list>', 'distributions: uniform,gaussian,zipf,all-equal,sorted,reverse,few-terms', 'zipf,uniform,gaussian,all-equal,sorted,reverse,few-terms')
    .option('--reps <n>', 'timed repetitions after the warm-up', (v) => Number(v), 5)
    .option('--max-steps <m>', 'network steps per global pass', (v) => Number(v))
    .option('--tile <pairs>', 'pairs per workgroup tile', (v) => Number(v))
    .option('--fuse', 'fused tile kernels (local sort: stages 2..16 in one register phase; local merge: first phase loads from global memory)', false)
    .option('--max', 'also sort the largest block the adapter allows', false)
    .option('--heat-ms <ms>', 'a fully busy kernel this long before each GPU measurement\'s warm-up, to raise the clocks the CPU sorter let fall', (v) => Number(v), 1000)
    .option('--warm-min-ms <ms>', 'shortest warm-up before each size', (v) => Number(v), 300)
    .option('--warm-max-ms <ms>', 'longest warm-up before each size (it ends earlier once the last 3 sorts are within 5 % of each other)', (v) => Number(v), 10000)
    .option('--json', 'print the report as JSON', false)
    .action(async (o: { sorters: string; sizes: string; dist: string; reps: number; heatMs: number; warmMinMs: number; warmMaxMs: number; maxSteps?: number; tile?: number; fuse: boolean; max: boolean; json: boolean }) => {
      const { benchSort, BENCH_HEADER, BENCH_SORTERS, DISTRIBUTIONS } = await import('./bench-sort.js');
      const sorters = o.sorters.split(',').map((s) => s.trim());
      for (const s of sorters) if (!(BENCH_SORTERS as readonly string[]).includes(s)) throw new UserError(`--sorters: unknown sorter "${s}" (${BENCH_SORTERS.join(', ')})`);
      if (new Set(sorters).size !== sorters.length) throw new UserError(`--sorters: "${o.sorters}" names a sorter twice`);
      const m = /^(\d+)\.\.(\d+)$/.exec(o.sizes);
      const sizes = m ? Array.from({ length: Number(m[2]) - Number(m[1]) + 1 }, (_, i) => Number(m[1]) + i) : o.sizes.split(',').map(Number);
      if (sizes.some((s) => !Number.isInteger(s) || s < 0 || s > 31)) throw new UserError(`--sizes: cannot read "${o.sizes}"`);
      const dists = o.dist.split(',').map((d) => d.trim());
      for (const d of dists) if (!(DISTRIBUTIONS as readonly string[]).includes(d)) throw new UserError(`--dist: unknown distribution "${d}"`);
      if (!Number.isInteger(o.reps) || o.reps < 1) throw new UserError(`--reps must be a positive integer, got ${o.reps}`);
      if (!(o.warmMinMs >= 0) || !(o.warmMaxMs >= 0) || !(o.heatMs >= 0)) throw new UserError('--heat-ms, --warm-min-ms and --warm-max-ms must be numbers of milliseconds');
      if (!o.json) process.stdout.write(BENCH_HEADER + '\n');
      const report = await benchSort({
        sizes,
        sorters: sorters as never,
        distributions: dists as never,
        reps: o.reps,
        maxSteps: o.maxSteps,
        tile: o.tile,
        fuse: o.fuse,
        includeMax: o.max,
        jsSortAt: 24,
        warmup: { minMs: o.warmMinMs, maxMs: o.warmMaxMs },
        heatMs: o.heatMs,
        log: o.json ? undefined : (l) => process.stdout.write(l + '\n'),
      }).catch((err: Error) => {
        throw err.message.startsWith('no GPU') ? new UserError(err.message) : err;
      });
      if (o.json) process.stdout.write(JSON.stringify(report, null, 2) + '\n');
      else {
        const w = report.warmup;
        process.stdout.write(`adapter ${JSON.stringify(report.adapter)}, network: tile ${report.tile}, steps per global pass ${report.maxSteps}, ${report.fuse ? 'fused' : 'plain'} tile kernels${report.radixTile ? `; radix: 8-bit digits, tile ${report.radixTile}` : ''}\n`);
        process.stdout.write(`warm-up before each size: until the last ${w.window} sorts are within ${w.tolerance * 100} % of each other and ${w.minMs} ms have passed, at most ${w.maxRounds} sorts or ${w.maxMs} ms; min–max over ${o.reps} timed repetitions\n`);
      }
    });
}
