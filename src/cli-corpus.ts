/** `gpuindex gen-corpus`: the synthetic crawl generator for benchmarks. */
import type { Command } from 'commander';
import { generateCorpus } from './gen-corpus.js';

export function registerCorpusCommands(program: Command): void {
  program
    .command('gen-corpus')
    .description('write a synthetic JSONL crawl (Zipf words over a real vocabulary, log-normal lengths)')
    .requiredOption('--size <bytes>', 'total size, e.g. 1GB or 500MB')
    .option('--seed <n>', 'random seed (same seed, same bytes)', (v) => Number(v), 1)
    .requiredOption('-o, --output <dir>', 'folder to write (must be empty or missing)')
    .option('--file-size <bytes>', 'bytes per file', '64MB')
    .action(async (o: { size: string; seed: number; output: string; fileSize: string }) => {
      const { parseMemory } = await import('./options.js');
      const r = await generateCorpus({ size: o.size, seed: o.seed, output: o.output, fileBytes: parseMemory(o.fileSize) });
      process.stdout.write(`wrote ${r.files} files, ${r.documents.toLocaleString('en-US')} documents, ${(r.bytes / 1e6).toFixed(1)} MB in ${(r.ms / 1000).toFixed(1)} s (${(r.bytes / 1e6 / (r.ms / 1000)).toFixed(0)} MB/s)\n`);
    });
}
