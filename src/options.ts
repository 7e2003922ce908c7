/**
 * The one options object of a build, shared by the library API and the CLI, with its defaults.
 */
import type { CorpusOptions } from './corpus/index.js';
import { UserError } from './errors.js';
import type { TokenizerOptions } from './tokenizer.js';

/** A document handed to buildIndex() directly instead of a crawl folder. */
export interface InputDocument {
  id: string;
  text: string;
  title?: string;
  /** Extra text fields, indexed after title and text (in key order). */
  fields?: Record<string, string>;
}

export type SorterChoice = 'cpu' | 'gpu' | 'auto';
/** Indexcpu, Indexgpu, Indexgpu+ of paper 000; 'auto' is gpu+ when a GPU adapter exists, else cpu. */
export type PipelineChoice = 'cpu' | 'gpu' | 'gpu+' | 'auto';

export interface BuildOptions extends TokenizerOptions {
  /** A crawl folder (or single file), or documents as an async iterable. */
  input: string | AsyncIterable<InputDocument> | Iterable<InputDocument>;
  /** The index folder to create. It appears only when the build is complete. */
  output: string;
  /** Replace an existing output folder. Default false. */
  force?: boolean;
  /** Memory budget for pairs and sort buffers, e.g. '1GiB' or bytes. Default '1GiB'. */
  memory?: string | number;
  /** Pairs per block; default memory / 32 bytes (a block, its sort scratch and a spare). */
  blockSize?: number;
  /** Block sorter: 'auto' uses the GPU when an adapter exists, else the CPU. Default 'auto'. */
  sorter?: SorterChoice;
  /** Schedule: cpu (Indexcpu), gpu (Indexgpu), gpu+ (Indexgpu+, overlapped). Default 'auto'. */
  pipeline?: PipelineChoice;
  /** Parse worker threads (crawl input). Default: cores - 1, at least 1. */
  workers?: number;
  /** Which JSON fields hold the id, title and text (crawl input only). */
  fields?: CorpusOptions['fields'];
  /** Where each skipped file or document is reported (one line each). Default: nothing. */
  onWarning?: (message: string) => void;
  /** Progress events, see ProgressEvent. */
  onProgress?: (event: ProgressEvent) => void;
  /** Cancels the build: it stops within one block, cleans up and rejects with AbortError. */
  signal?: AbortSignal;
}

export interface ProgressEvent {
  stage: 'parse' | 'merge' | 'write' | 'done';
  documents: number;
  bytes: number;
  blocksSorted: number;
  runsWritten: number;
  /** Merge progress in [0, 1] during the merge stage. */
  mergeFraction?: number;
  /** Share of the crawl's bytes (files on disk) parsed so far, when the input is a crawl. */
  parseFraction?: number;
  /** Estimated seconds left in the parse stage (from parseFraction). */
  etaSeconds?: number;
}

export const DEFAULT_MEMORY = '1GiB';
export const BYTES_PER_BLOCK_PAIR = 32;
export const MIN_BLOCK_PAIRS = 1;
export const MAX_BLOCK_PAIRS = 1 << 28;

const UNITS: Record<string, number> = { '': 1, b: 1, k: 1e3, kb: 1e3, kib: 1024, m: 1e6, mb: 1e6, mib: 1024 ** 2, g: 1e9, gb: 1e9, gib: 1024 ** 3 };

/** Parses '1GiB', '256MiB', '512MB', '100000' into bytes. */
export function parseMemory(value: string | number): number {
  if (typeof value === 'number') {
    if (!(value > 0)) throw new UserError(`--memory must be positive, got ${value}`);
    return Math.floor(value);
  }
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(value);
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined || !(Number(m[1]) > 0)) throw new UserError(`--memory: cannot read "${value}" (examples: 1GiB, 256MiB, 500MB)`);
  return Math.floor(Number(m[1]) * unit);
}

/** The block size in pairs: the explicit one, else derived from the memory budget. */
export function resolveBlockSize(options: Pick<BuildOptions, 'blockSize' | 'memory'>): number {
  if (options.blockSize !== undefined) {
    if (!Number.isInteger(options.blockSize) || options.blockSize < MIN_BLOCK_PAIRS || options.blockSize > MAX_BLOCK_PAIRS)
      throw new UserError(`--block-size must be an integer from ${MIN_BLOCK_PAIRS} to ${MAX_BLOCK_PAIRS}, got ${options.blockSize}`);
    return options.blockSize;
  }
  const memory = parseMemory(options.memory ?? DEFAULT_MEMORY);
  return Math.max(1024, Math.min(MAX_BLOCK_PAIRS, Math.floor(memory / BYTES_PER_BLOCK_PAIR)));
}

