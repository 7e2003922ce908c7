/**
 * A build's checked options and what every stage shares: notices, progress, and the resources the
 * failure path must release.
 */
import type { SharedInversion } from '../../indexer/scan/shared-inversion.js';
import type { BufferPool } from '../../runtime/buffer-pool.js';
import { existsSync, realpathSync, statSync } from 'node:fs';
import { relative, resolve, isAbsolute } from 'node:path';
import type { ParseCounters } from '../../indexer/pipeline/in-process-pipeline.js';
import { IndexRowsAhead } from '../../merge/rows-ahead.js';
import type { SkippedItem } from '../../indexer/corpus/index.js';
import { AbortError, escapeControls, UserError } from '../shared/errors.js';
import { checkEach, checkOptionsObject, integerFrom, isAbortSignal, isBoolean, isFunction, oneOf, wrongType, type Check } from '../shared/check.js';
import {
  checkBlockSize,
  defaultMemoryBytes,
  defaultWorkerCount,
  GPU_SORT_CHOICES,
  parseMemory,
  PIPELINE_CHOICES,
  resolveBlockSize,
  SORTER_CHOICES,
  type BuildOptions,
  type TokenizerOptions,
} from '../shared/options.js';
import { checkTokenizerOptions, createTokenizer, withTitleWeightDefault, type Tokenizer } from '../../indexer/analysis/tokenizer.js';
import { parseShard, type Shard } from '../../indexer/parse/shards.js';
import { resolveFields } from '../../indexer/corpus/fields.js';

/** What the failure path of buildIndex must release: the open sorter, the index database. */
export interface BuildState {
  sorter?: { dispose(): void; closed?(): Promise<void> };
  rowsAhead?: IndexRowsAhead;
  /** --resume: the checkpoint log, whose lock on the resume folder the build gives back when it ends. */
  checkpoints?: { unlock(): void };
  /** Kept by the thread from the build before (buildKeeping): the analysis of documents given as an iterable. */
  sharedInversion?: SharedInversion;
  /** Kept likewise: the block's and the CPU sorter's buffers of such a build. */
  buffers?: BufferPool;
}

/** Reports a stage's progress to options.onProgress (throttled). */
export type Progress = (stage: 'parse' | 'merge' | 'done', c: ParseCounters, mergeFraction?: number) => void;

/** A build's options, checked before anything is opened or written, and its reporting. */
export interface BuildContext {
  options: BuildOptions;
  /** A notice for the user (onWarning), kept for the summary. */
  notice: (message: string) => void;
  notices: string[];
  progress: Progress;
  tokenizer: Tokenizer;
  memoryBytes: number;
  /** memoryScope 'build' (the library's default): the host process's RSS now, not the build's. */
  hostBytes: number;
  explicitBlockSize?: number;
  workers: number;
  /** The crawl folder, resolved; undefined when the input is documents. */
  root?: string;
  /** --shard: the piece of the crawl this build indexes. */
  shard?: Shard;
}

/**
 * Each build option's check: its type, and its range where that needs nothing else (the
 * tokenizer's options are checked by checkTokenizerOptions). Typed so that a new option needs one.
 */
export const BUILD_OPTION_CHECKS: { readonly [K in Exclude<keyof BuildOptions, keyof TokenizerOptions>]-?: Check } = {
  input: checkInput,
  output: (name, value) => {
    if (typeof value !== 'string') throw wrongType(name, 'the path of the index folder to create', value);
  },
  force: isBoolean,
  memory: (_, value) => void parseMemory(value as string),
  memoryScope: oneOf(['build', 'process']),
  blockSize: checkBlockSize,
  sorter: oneOf(SORTER_CHOICES),
  gpuSort: oneOf(GPU_SORT_CHOICES),
  pipeline: oneOf(PIPELINE_CHOICES),
  workers: (name, value) => {
    if (!Number.isInteger(value) || (value as number) < 1) throw wrongType(name, 'a positive integer', value);
  },
  fields: (_, value) => checkFields(value),
  onWarning: isFunction,
  verbose: isBoolean,
  onProgress: isFunction,
  resume: isBoolean,
  shard: (name, value) => {
    if (typeof value !== 'string') throw wrongType(name, 'i/N (0 <= i < N) or auto', value);
  },
  mergeThreads: integerFrom(1, 256),
  positions: isBoolean,
  signal: isAbortSignal,
};

/** The options' CLI flags, which their messages name (the CLI and the library share them). */
const BUILD_FLAGS: Readonly<Record<string, string>> = {
  force: '--force',
  memory: '--memory',
  blockSize: '--block-size',
  sorter: '--sorter',
  gpuSort: '--gpu-sort',
  pipeline: '--pipeline',
  workers: '--workers',
  fields: '--fields',
  verbose: '--verbose',
  resume: '--resume',
  shard: '--shard',
  mergeThreads: '--merge-threads',
  positions: '--positions',
};

/** A crawl's path, or documents: an iterable or async iterable (arrays, generators, streams). */
function checkInput(name: string, value: unknown): void {
  const it = value as Partial<Record<symbol, unknown>> | null;
  const iterable = typeof it === 'object' && it !== null && (typeof it[Symbol.iterator] === 'function' || typeof it[Symbol.asyncIterator] === 'function');
  if (iterable || (typeof value === 'string' && value !== '')) return;
  throw wrongType(name, 'a crawl folder or file (a path), or an iterable of documents', value);
}

export function checkOptions(options: BuildOptions): BuildContext {
  checkOptionsObject('buildIndex', options);
  if (!options || options.output === undefined || options.output === null || options.output === '') throw new UserError('an output folder is required (-o <dir>)');
  if (options.input === undefined || options.input === null) throw new UserError('an input crawl or documents are required');
  checkEach(options, BUILD_OPTION_CHECKS, BUILD_FLAGS);
  checkTokenizerOptions(options);
  const tokenizer = createTokenizer(withTitleWeightDefault(options));
  const memoryBytes = options.memory !== undefined ? parseMemory(options.memory) : defaultMemoryBytes();
  const hostBytes = options.memoryScope === 'process' ? 0 : process.memoryUsage.rss();
  // An explicit --block-size is checked here; the memory plan (once the sorter is open) sizes the rest.
  const explicitBlockSize = resolveBlockSize(options);
  const workers = options.workers ?? defaultWorkers();
  const root = typeof options.input === 'string' ? checkCrawl(options.input) : undefined;
  if (root) checkOutputBesideCrawl(options.output, root);
  if (options.resume && !root) throw new UserError('--resume needs a crawl folder as input');
  if (options.shard !== undefined && !root) throw new UserError('--shard needs a crawl folder as input');
  const shard = options.shard !== undefined ? parseShard(options.shard) : undefined;
  if (options.signal?.aborted) throw new AbortError();
  const notices: string[] = [];
  const notice = (m: string) => {
    notices.push(m);
    options.onWarning?.(m);
  };
  return { options, notice, notices, progress: throttledProgress(options), tokenizer, memoryBytes, hostBytes, explicitBlockSize, workers, root, shard };
}

export function defaultWorkers(): number {
  return defaultWorkerCount();
}

export function checkCrawl(input: string): string {
  const root = resolve(input);
  try {
    statSync(root);
  } catch {
    throw new UserError(`crawl not found: ${input}`);
  }
  return root;
}

/**
 * An existing output that is the crawl, or a folder holding it, would be replaced by the index
 * under --force (commitOutput removes the old folder): the crawl would be deleted. Refused.
 */
export function checkOutputBesideCrawl(output: string, root: string): void {
  const out = resolve(output);
  if (!existsSync(out)) return;
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  };
  const rel = relative(real(out), real(root));
  if (rel === '' || (!rel.startsWith('..') && !isAbsolute(rel)))
    throw new UserError(`output ${output} is the crawl or holds it: the index would replace the crawl; choose another output folder`);
}

/** Checks options.fields up front, on this thread (a parse worker's error would not be a UserError). */
export function checkFields(fields: unknown): void {
  if (fields === undefined || fields === null) return;
  if (typeof fields !== 'object' || Array.isArray(fields)) throw wrongType('--fields', 'an object of id, title and text lists', fields);
  for (const [key, list] of Object.entries(fields)) {
    if (key !== 'id' && key !== 'title' && key !== 'text') throw new UserError(`--fields: unknown key "${key}" (expected id, title or text)`);
    if (list !== undefined && (!Array.isArray(list) || list.some((name) => typeof name !== 'string'))) throw wrongType(`--fields: ${key}`, 'a list of field names', list);
  }
  resolveFields({ fields: fields as BuildOptions['fields'] });
}

/**
 * Progress events at most every 100 ms, so per-document calls cost nothing, and besides those
 * one whenever a block has been sorted since the last (a caller that acts on a block count then
 * sees it however fast the blocks come), and the final one. The parse ETA extrapolates from the
 * crawl files finished so far (by size on disk).
 */
export function throttledProgress(options: BuildOptions): Progress {
  let last = 0;
  let lastBlocks = -1;
  const start = performance.now();
  return (stage, c, mergeFraction) => {
    if (!options.onProgress) return;
    const now = performance.now();
    if (stage !== 'done' && now - last < 100 && c.blocks === lastBlocks) return;
    last = now;
    lastBlocks = c.blocks;
    const fraction = c.fileBytesTotal > 0 ? c.fileBytesDone / c.fileBytesTotal : undefined;
    const etaSeconds = stage === 'parse' && fraction ? ((now - start) / 1000) * ((1 - fraction) / fraction) : undefined;
    options.onProgress({ stage, documents: c.documents, bytes: c.bytes, blocksSorted: c.blocks, runsWritten: c.blocks, mergeFraction, parseFraction: fraction, etaSeconds });
  };
}

export function formatSkip(s: SkippedItem): string {
  return escapeControls(`skipped ${s.path}${s.line !== undefined ? `:${s.line}` : ''}: ${s.reason}`);
}

/**
 * A crawl file's size and times (zeros for one that cannot be read). The status change time
 * moves with every write, whatever the modification time is set back to (rsync -t, a restore,
 * utimes), so --resume notices such an edit too.
 */
export function statOrZero(path: string): { size: number; mtimeMs: number; ctimeMs: number } {
  try {
    const st = statSync(path);
    return { size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs };
  } catch {
    return { size: 0, mtimeMs: 0, ctimeMs: 0 };
  }
}
