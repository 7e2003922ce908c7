/**
 * `gpuindex bench`: the Indexcpu / Indexgpu / Indexgpu+ comparison (Table 2 of Capannini,
 * Silvestri and Baraglia, "Sorting on GPUs for large scale datasets: a thorough comparison"),
 * or with a list of worker counts, whole builds against the number of parse workers. Without a
 * crawl folder it generates one (gen-corpus) with a growing vocabulary fitted to mail: a fixed
 * vocabulary stops growing after the first megabytes and flatters every figure.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { UserError } from './shared/errors.js';
import { GPU_SORT_CHOICES, type GpuSortChoice, type PipelineChoice } from './shared/options.js';

interface BenchCliOptions {
  sizes: number;
  pipelines?: string;
  workers?: string;
  workersSweep: boolean;
  memory?: string;
  blockSize?: number;
  gpuSort: string;
  repeat: number;
  out?: string;
  json: boolean;
  size?: string;
  seed: number;
  fileSize: string;
  vocabulary?: string;
  heaps?: string;
}

export function registerBenchCommands(program: Command): void {
  program
    .command('bench')
    .description('Indexcpu vs Indexgpu vs Indexgpu+ on a crawl at doubling sizes (Table 2 of Capannini, Silvestri and Baraglia, "Sorting on GPUs for large scale datasets: a thorough comparison"); with --workers a,b,c or --workers-sweep, MB/s against parse workers')
    .argument('[crawl]', 'crawl folder (many files: sizes are the first 1, 2, 4, ... of them); none: a generated crawl (--size, --vocabulary)')
    .option('--sizes <n>', 'number of doubling sizes', (v) => Number(v), 5)
    .option('--pipelines <list>', 'comma list of cpu,gpu,gpu+ (default cpu,gpu,gpu+; with a workers sweep auto: gpu+ where a GPU is, else cpu)')
    .option('--workers <n|list>', 'parse workers (default: cores - 1, at most 32); a comma list (e.g. 1,2,4,8,16,32,63) sweeps them over the whole crawl')
    .option('--workers-sweep', 'sweep 1, 2, 4, ... and cores - 1 parse workers over the whole crawl', false)
    .option('--memory <size>', 'memory budget per build (default: as build)')
    .option('--block-size <pairs>', 'pairs per block', (v) => Number(v))
    .option('--gpu-sort <kind>', 'the GPU pipelines\' sorting algorithm: bsn | radix | auto (as build --gpu-sort)', 'bsn')
    .option('--repeat <n>', 'builds of each cell in alternating rounds; the table shows medians', (v) => Number(v), 1)
    .option('--size <bytes>', 'without a crawl: the generated crawl\'s size (default 1GB)')
    .option('--vocabulary <law>', 'without a crawl: fixed | mail | html-docs (gen-corpus --vocabulary; default mail)')
    .option('--heaps <K,beta>', 'without a crawl: a growing vocabulary of V(n) = K·n^beta')
    .option('--seed <n>', 'without a crawl: gen-corpus --seed', (v) => Number(v), 1)
    .option('--file-size <bytes>', 'without a crawl: gen-corpus --file-size', '8MB')
    .option('-o, --out <dir>', 'write bench.{json,csv,svg,md} (workers.{json,csv,svg,md} for a sweep) here')
    .option('--json', 'print the rows as JSON', false)
    .action(async (crawl: string | undefined, o: BenchCliOptions) => {
      const log = (l: string) => process.stderr.write(`${l}\n`);
      const sweep = o.workersSweep || (o.workers?.includes(',') ?? false);
      const pipelines = (o.pipelines ?? (sweep ? 'auto' : 'cpu,gpu,gpu+')).split(',').map((p) => p.trim());
      if (!(GPU_SORT_CHOICES as readonly string[]).includes(o.gpuSort)) throw new UserError(`--gpu-sort must be bsn, radix or auto, got "${o.gpuSort}"`);
      for (const p of pipelines) if (!['cpu', 'gpu', 'gpu+', ...(sweep ? ['auto'] : [])].includes(p)) throw new UserError(`--pipelines: unknown pipeline "${p}"`);
      const { parseWorkerList, doublingWorkers } = await import('./bench-workers.js');
      const workerList = o.workers !== undefined ? parseWorkerList(o.workers) : undefined;
      if (o.workersSweep && workerList) throw new UserError('give --workers <list> or --workers-sweep, not both');
      if (!sweep && workerList && workerList.length > 1) throw new UserError('--workers: one count, or a comma list to sweep');
      if (crawl !== undefined && (o.size !== undefined || o.vocabulary !== undefined || o.heaps !== undefined))
        throw new UserError('--size, --vocabulary and --heaps shape a generated crawl: give no crawl folder to generate one');
      const generated = crawl === undefined ? await generateBenchCrawl(o, log) : undefined;
      try {
        const root = generated?.root ?? crawl!;
        if (sweep) {
          const { defaultWorkers } = await import('./build.js');
          const { benchWorkers, workersTable, writeWorkersOutputs } = await import('./bench-workers.js');
          const rows = await benchWorkers({ crawl: root, workers: workerList ?? doublingWorkers(Math.max(1, availableParallelism() - 1)), pipelines: pipelines as PipelineChoice[], memory: o.memory, blockSize: o.blockSize, repeat: o.repeat, log });
          if (o.out) for (const f of writeWorkersOutputs(rows, o.out)) log(`wrote ${f}`);
          process.stdout.write(o.json ? JSON.stringify(rows, null, 2) + '\n' : workersTable(rows) + '\n');
          return;
        }
        const { benchPipelines, benchTable, writeBenchOutputs } = await import('./bench-pipelines.js');
        const rows = await benchPipelines({ crawl: root, sizes: o.sizes, pipelines: pipelines as ('cpu' | 'gpu' | 'gpu+')[], workers: workerList?.[0], memory: o.memory, blockSize: o.blockSize, gpuSort: o.gpuSort as GpuSortChoice, repeat: o.repeat, log });
        if (o.out) for (const f of writeBenchOutputs(rows, o.out)) log(`wrote ${f}`);
        process.stdout.write(o.json ? JSON.stringify(rows, null, 2) + '\n' : benchTable(rows) + '\n');
      } finally {
        generated?.cleanup();
      }
    });
}

/** The crawl bench generates when given none: gen-corpus into a temporary folder, removed after. */
async function generateBenchCrawl(o: BenchCliOptions, log: (l: string) => void): Promise<{ root: string; cleanup: () => void }> {
  const { generateCorpus } = await import('./gen-corpus.js');
  const { parseGrowthOptions } = await import('./gen-corpus-growth.js');
  const growth = parseGrowthOptions(o.vocabulary, o.heaps, 'mail');
  if (!Number.isSafeInteger(o.seed)) throw new UserError(`--seed must be an integer, got ${o.seed}`);
  const root = mkdtempSync(join(tmpdir(), 'gpuindex-bench-crawl-'));
  const cleanup = () => rmSync(root, { recursive: true, force: true });
  try {
    const r = await generateCorpus({ size: o.size ?? '1GB', seed: o.seed, output: root, fileBytes: o.fileSize, growth });
    log(`generated ${root}: ${r.files} files, ${(r.bytes / 1e6).toFixed(1)} MB, ${r.documents} documents, ${r.words} words, vocabulary ${r.growth}${r.heaps ? ` (V(n) = ${r.heaps.K}·n^${r.heaps.beta})` : ''}, seed ${o.seed}`);
    return { root, cleanup };
  } catch (err) {
    cleanup();
    throw err;
  }
}
