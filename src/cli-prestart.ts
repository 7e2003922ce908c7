/**
 * Imported first by cli.ts, before commander and the rest: for `gpuindex build`, starts the
 * build's parse workers at once (indexer/parse-worker-spares.ts), so their start-up (about
 * 80 ms before a worker's code runs on the 2-core development machine) passes while this
 * thread loads its modules. The build takes them over; any it does not need are ended. A crawl
 * folder is walked meanwhile on a thread of its own (indexer/corpus/walk-ahead.ts).
 */
import { readdirSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { defaultWorkerCount } from './shared/options.js';
import { walkAhead } from '../indexer/corpus/walk-ahead.js';
import { workerYoungGenerationMb } from '../indexer/plan/memory-plan.js';
import { prestartParseWorkers } from '../indexer/parse/parse-worker-spares.js';

/** The --workers value of a build's arguments, or the build's default (cores - 1, at most 32). */
function workersArg(args: readonly string[]): number {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const v = a === '--workers' ? args[i + 1] : a.startsWith('--workers=') ? a.slice('--workers='.length) : undefined;
    if (v !== undefined) return /^\d+$/.test(v) && Number(v) >= 1 ? Math.min(Number(v), 64) : 0;
  }
  return defaultWorkerCount();
}

/** The -o / --output value of a build's arguments, if given in one of the usual spellings. */
function outputArg(args: readonly string[]): string | undefined {
  for (let i = 1; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-o' || a === '--output') return args[i + 1];
    if (a.startsWith('--output=')) return a.slice('--output='.length);
    if (a.startsWith('-o') && !a.startsWith('--')) return a.slice(2);
  }
  return undefined;
}

/**
 * The crawl a build's arguments name first (`build <crawl> ...`), resolved, if it is a folder
 * of subfolders or many files and the output is outside it: the build removes stale temporary folders beside the output and
 * makes its own before it walks, so an output inside the crawl could list otherwise ahead.
 */
function crawlFolderArg(args: readonly string[]): string | undefined {
  const input = args[1];
  const output = outputArg(args);
  if (input === undefined || input.startsWith('-') || output === undefined) return undefined;
  const crawl = resolve(input);
  const out = resolve(output);
  if (out === crawl || out.startsWith(crawl.endsWith(sep) ? crawl : crawl + sep)) return undefined;
  try {
    // A folder of a few files (a JSONL crawl) lists in microseconds: a thread would cost more.
    const entries = readdirSync(crawl, { withFileTypes: true });
    return entries.length >= WALK_AHEAD_MIN_ENTRIES || entries.some((e) => e.isDirectory()) ? crawl : undefined;
  } catch {
    return undefined; // not a folder, or unreadable: the build says why
  }
}

/** Entries of a crawl folder without subfolders from which it is walked ahead. */
const WALK_AHEAD_MIN_ENTRIES = 256;

const args = process.argv.slice(2);
if (args[0] === 'build' && !args.includes('--help') && !args.includes('-h') && process.env.GPUINDEX_PRESTART !== '0') {
  try {
    prestartParseWorkers(workersArg(args), workerYoungGenerationMb());
  } catch {
    // No spare workers: the build starts its own (and reports any real problem then).
  }
  // The build takes the listing if it walks this folder; else it walks its own (walk-ahead.ts).
  const crawl = crawlFolderArg(args);
  if (crawl !== undefined) {
    try {
      walkAhead(crawl);
    } catch {
      // No thread: the build walks the crawl itself.
    }
  }
}
