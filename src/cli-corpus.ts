/**
 * `gpuindex gen-corpus` (the synthetic crawl generator) and `gpuindex corpus <name>` (fetches a
 * real benchmark crawl with scripts/corpus/fetch.mjs into .cache/corpora/<name>/).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { InvalidArgumentError, type Command } from 'commander';
import { UserError } from './shared/errors.js';
import { generateCorpus, parseSize } from './gen-corpus.js';
import { parseGrowthOptions } from './gen-corpus-growth.js';
import { formatCount } from './format-count.js';

export const CORPUS_NAMES = ['html-docs', 'html-docs-small', 'mail', 'multilingual', 'html-docs-warc', 'html-docs-small-warc'] as const;

function sizeArg(name: string) {
  return (v: string): number => {
    try {
      return parseSize(v, name);
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message);
    }
  };
}

function intArg(name: string, min: number) {
  return (v: string): number => {
    if (!/^-?\d+$/.test(v.trim()) || !Number.isSafeInteger(Number(v)) || Number(v) < min)
      throw new InvalidArgumentError(`${name} must be an integer${min > Number.MIN_SAFE_INTEGER ? ` >= ${min}` : ''}, got "${v}"`);
    return Number(v);
  };
}

/** scripts/corpus/fetch.mjs of the checkout (from dist/src/ or src/). */
export function fetchScript(): string | undefined {
  return [new URL('../../scripts/corpus/fetch.mjs', import.meta.url), new URL('../scripts/corpus/fetch.mjs', import.meta.url)]
    .map((u) => fileURLToPath(u))
    .find((p) => existsSync(p));
}

export function registerCorpusCommands(program: Command): void {
  program
    .command('gen-corpus')
    .description('write a synthetic JSONL crawl (Zipf words over a real vocabulary, log-normal lengths; a vocabulary that keeps growing by Heaps\' law with --vocabulary mail|html-docs or --heaps)')
    .requiredOption('--size <bytes>', 'total size, e.g. 1GB, 500MB, 2GiB', sizeArg('--size'))
    .option('--seed <n>', 'random seed (same seed, same bytes)', intArg('--seed', Number.MIN_SAFE_INTEGER), 1)
    .requiredOption('-o, --output <dir>', 'folder to write (must be empty or missing)')
    .option('--files <k>', 'number of files (default: one per ~64 MB)', intArg('--files', 1))
    .option('--file-size <bytes>', 'bytes per file instead of --files, e.g. 8MB', sizeArg('--file-size'))
    .option('--vocabulary-size <n>', 'vocabulary types', intArg('--vocabulary-size', 1), 50_000)
    .option('--threads <n>', 'writer threads (default: cores)', intArg('--threads', 1))
    .option('--vocabulary <law>', 'fixed (Zipf over the vocabulary only, as the recorded figures) | mail | html-docs (Heaps\' law fitted to that crawl: the vocabulary keeps growing); default fixed')
    .option('--heaps <K,beta>', 'a growing vocabulary with V(n) = K·n^beta distinct words after n words, e.g. 2.93,0.7167')
    .option('--json', 'print the result as JSON', false)
    .action(async (o: { size: number; seed: number; output: string; files?: number; fileSize?: number; vocabularySize: number; threads?: number; vocabulary: string; heaps?: string; json: boolean }) => {
      const r = await generateCorpus({
        size: o.size,
        seed: o.seed,
        output: o.output,
        files: o.files,
        fileBytes: o.fileSize,
        vocabularySize: o.vocabularySize,
        threads: o.threads,
        growth: parseGrowthOptions(o.vocabulary, o.heaps),
      });
      if (o.json) process.stdout.write(JSON.stringify(r, null, 2) + '\n');
      else
        process.stdout.write(
          `wrote ${r.files} file(s), ${formatCount(r.documents)} documents, ${formatCount(r.words)} words, ` +
            `${(r.bytes / 1e6).toFixed(1)} MB in ${(r.ms / 1000).toFixed(1)} s (${(r.bytes / 1e6 / Math.max(r.ms / 1000, 1e-3)).toFixed(0)} MB/s); ` +
            `vocabulary ${formatCount(r.vocabulary)} types (${r.vocabularySource})` +
            (r.heaps ? `, growing (${r.growth}: V(n) = ${r.heaps.K}·n^${r.heaps.beta})\n` : ', fixed\n'),
        );
    });

  program
    .command('corpus')
    .description(`fetch a real benchmark crawl into .cache/corpora/<name>/ (${CORPUS_NAMES.join(', ')})`)
    .argument('<name>', CORPUS_NAMES.join(' | '))
    .option('--force', 'fetch again even if cached', false)
    .option('--verify', 'recompute the checksum of a cached crawl', false)
    .option('--json', 'print the manifest as JSON', false)
    .action((name: string, o: { force: boolean; verify: boolean; json: boolean }) => {
      if (!(CORPUS_NAMES as readonly string[]).includes(name)) throw new UserError(`unknown corpus "${name}" (known: ${CORPUS_NAMES.join(', ')})`);
      const script = fetchScript();
      if (!script) throw new UserError('scripts/corpus/fetch.mjs not found: `gpuindex corpus` works from a checkout of the repository');
      const args = [script, name, ...(o.force ? ['--force'] : []), ...(o.verify ? ['--verify'] : []), ...(o.json ? ['--json'] : [])];
      const r = spawnSync(process.execPath, args, { stdio: 'inherit' });
      if (r.error) throw r.error;
      if (r.status !== 0) process.exitCode = r.status ?? 1;
    });
}
