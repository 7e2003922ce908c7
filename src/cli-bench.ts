/**
 * `gpuindex bench`: the Indexcpu / Indexgpu / Indexgpu+ comparison (Table 2 of Capannini,
 * Silvestri and Baraglia, "Sorting on GPUs for large scale datasets: a thorough comparison").
 */
import type { Command } from 'commander';
import { UserError } from './shared/errors.js';

export function registerBenchCommands(program: Command): void {
  program
    .command('bench')
    .description('Indexcpu vs Indexgpu vs Indexgpu+ on a crawl at doubling sizes (Table 2 of Capannini, Silvestri and Baraglia, "Sorting on GPUs for large scale datasets: a thorough comparison")')
    .argument('<crawl>', 'crawl folder (many files: sizes are the first 1, 2, 4, ... of them)')
    .option('--sizes <n>', 'number of doubling sizes', (v) => Number(v), 5)
    .option('--pipelines <list>', 'comma list of cpu,gpu,gpu+', 'cpu,gpu,gpu+')
    .option('--workers <n>', 'parse workers (default: cores - 1)', (v) => Number(v))
    .option('--memory <size>', 'memory budget per build', '1GiB')
    .option('--block-size <pairs>', 'pairs per block', (v) => Number(v))
    .option('--repeat <n>', 'builds of each cell in alternating rounds; the table shows medians', (v) => Number(v), 1)
    .option('-o, --out <dir>', 'write bench.json, bench.csv, bench.svg and bench.md here')
    .option('--json', 'print the rows as JSON', false)
    .action(async (crawl: string, o: { sizes: number; pipelines: string; workers?: number; memory: string; blockSize?: number; repeat: number; out?: string; json: boolean }) => {
      const { benchPipelines, benchTable, writeBenchOutputs } = await import('./bench-pipelines.js');
      const pipelines = o.pipelines.split(',').map((p) => p.trim());
      for (const p of pipelines) if (!['cpu', 'gpu', 'gpu+'].includes(p)) throw new UserError(`--pipelines: unknown pipeline "${p}"`);
      const rows = await benchPipelines({ crawl, sizes: o.sizes, pipelines: pipelines as ('cpu' | 'gpu' | 'gpu+')[], workers: o.workers, memory: o.memory, blockSize: o.blockSize, repeat: o.repeat, log: (l) => process.stderr.write(`${l}\n`) });
      if (o.out) for (const f of writeBenchOutputs(rows, o.out)) process.stderr.write(`wrote ${f}\n`);
      process.stdout.write(o.json ? JSON.stringify(rows, null, 2) + '\n' : benchTable(rows) + '\n');
    });
}
