/**
 * The one options object of a build, shared by the library API and the CLI, with its defaults.
 */
import { availableParallelism, totalmem } from 'node:os';
import { UserError } from './errors.js';
import { integerFrom, wrongType } from './check.js';

/** The text analysis (indexer/analysis/tokenizer.ts applies it). */
export interface TokenizerOptions {
  stem?: 'porter' | 'none';
  /** 'english', 'none', or the path of a file with one stopword a line ('#' starts a comment line). */
  stopwords?: 'english' | 'none' | string;
  cjk?: 'unigram' | 'bigram';
  /**
   * Tokens longer than this many UTF-16 code units are dropped. An integer from 1 to
   * MAX_TOKEN_LENGTH_LIMIT (65536); default MAX_TOKEN_LENGTH (255). Tokens longer than 255 are
   * indexed unstemmed. Each distinct term is held in memory during the build, so a large limit
   * costs memory only when the input really has such tokens.
   */
  maxTokenLength?: number;
  /**
   * How much a title hit counts against a text hit: BM25F (Robertson, Zaragoza and Taylor,
   * "Simple BM25 extension to multiple weighted fields") with the weights folded into the
   * index. Each title term counts `titleWeight` times in its tf and in the document's length
   * (weighted tf = titleWeight · tf_title + tf_text), so the index keeps one postings list a
   * term, its score bounds stay exact, and CIFF exports the weighted figures. An integer from 1
   * to MAX_TITLE_WEIGHT (64); default DEFAULT_TITLE_WEIGHT (2). 1 indexes the title as text, as
   * builds did before the option. Saved with the index; `field:term` queries are refused (the
   * fields are not kept apart).
   */
  titleWeight?: number;
}

/**
 * The default title weight. A document's title is written to say what the document is about,
 * so a title term should outweigh one text occurrence (Zaragoza et al. tuned far larger title
 * weights on TREC web collections, with per-field length normalization); 2 doubles a title
 * term's tf, which under BM25's saturation (k1 = 0.9) lifts a document holding the term once in
 * its title by about a third over one holding it once in its text, without letting a title
 * outrank a text that is about the term. It costs one more pair per title term at build time.
 */
export const DEFAULT_TITLE_WEIGHT = 2;
export const MAX_TITLE_WEIGHT = 64;

export interface FieldNames {
  id?: string[];
  title?: string[];
  text?: string[];
}

export interface CorpusOptions {
  /** Which JSON fields hold the id, title and text (--fields). Missing lists take the defaults. */
  fields?: FieldNames;
}

/** A document handed to buildIndex() directly instead of a crawl folder. */
export interface InputDocument {
  id: string;
  text: string;
  title?: string;
  /** Extra text fields, indexed after title and text (in key order). */
  fields?: Record<string, string>;
}

export type SorterChoice = 'cpu' | 'gpu' | 'auto';
export const SORTER_CHOICES: readonly SorterChoice[] = ['auto', 'cpu', 'gpu'];
/**
 * The GPU sorting algorithm: 'bsn' the K-model bitonic network (in place), 'radix' the LSD radix
 * sort (a second block-sized GPU buffer), 'auto' radix when that buffer fits the device and the
 * memory plan gives it the same block as the network, else bsn. Every choice writes the same runs.
 */
export type GpuSortChoice = 'bsn' | 'radix' | 'auto';
export const GPU_SORT_CHOICES: readonly GpuSortChoice[] = ['bsn', 'radix', 'auto'];
/**
 * Indexcpu, Indexgpu, Indexgpu+ (Fig. 7 of Capannini, Silvestri and Baraglia, "Sorting on GPUs
 * for large scale datasets: a thorough comparison"); 'auto' is gpu+ when a GPU adapter exists,
 * else cpu; cpu without asking for the GPU when the parse workers outnumber what its one thread
 * keeps up with, or the crawl is expected to fit their first blocks (src/build/plan.ts).
 */
export type PipelineChoice = 'cpu' | 'gpu' | 'gpu+' | 'auto';
export const PIPELINE_CHOICES: readonly PipelineChoice[] = ['auto', 'cpu', 'gpu', 'gpu+'];

/**
 * Build options. The tokenizer's (stem, stopwords, cjk, maxTokenLength: see TokenizerOptions)
 * are saved in the index's settings, and `search` analyses queries with them.
 */
export interface BuildOptions extends TokenizerOptions {
  /** A crawl folder (or single file), or documents as an async iterable. */
  input: string | AsyncIterable<InputDocument> | Iterable<InputDocument>;
  /** The index folder to create. It appears only when the build is complete. */
  output: string;
  /** Replace an existing output folder. Default false. */
  force?: boolean;
  /**
   * Memory budget, e.g. '1GiB', '256MiB' or bytes. Default 1 GiB, or 256 MiB a core above 4 cores (defaultMemoryBytes). A hard bound on peak RSS minus
   * the term dictionary and document table (which grow with the crawl): the build subtracts the
   * process as it stands and each parse worker's allowance, and sizes blocks, sort buffers and
   * queues from the rest (indexer/memory-plan.ts). Too small: a UserError naming the minimum.
   */
  memory?: string | number;
  /**
   * What `memory` bounds. 'build' (default): what the build adds to the calling process (its RSS
   * at the call is left out: a service's own heap is not the build's). 'process': the whole
   * process's peak RSS (less the dictionary), as `gpuindex build` uses it.
   */
  memoryScope?: 'build' | 'process';
  /**
   * Pairs per block; default: the largest that fits the memory budget. One that does not fit
   * (with its sort buffers and queues) is a UserError naming the largest that does.
   */
  blockSize?: number;
  /** Block sorter: 'auto' uses the GPU when an adapter exists, else the CPU. Default 'auto'. */
  sorter?: SorterChoice;
  /** The GPU sorter's algorithm (GpuSortChoice), when the blocks are sorted on the GPU. Default 'bsn'. */
  gpuSort?: GpuSortChoice;
  /** Schedule: cpu (Indexcpu), gpu (Indexgpu), gpu+ (Indexgpu+, overlapped). Default 'auto'. */
  pipeline?: PipelineChoice;
  /** Parse worker threads (crawl input). Default: cores - 1, at least 1. */
  workers?: number;
  /** Which JSON fields hold the id, title and text (crawl input only). */
  fields?: CorpusOptions['fields'];
  /**
   * Where each skipped file or document is reported (one line each), and the files of
   * unsupported types (one line for all of them, counts per extension). Default: nothing.
   */
  onWarning?: (message: string) => void;
  /** onWarning also gets one line per file of an unsupported type, before their summary line. Default false. */
  verbose?: boolean;
  /** Progress events, see ProgressEvent. */
  onProgress?: (event: ProgressEvent) => void;
  /**
   * Keep a checkpoint after each sorted run in the output's sibling `.NAME.gpuindex-resume/`, and
   * reuse the completed runs of an interrupted build of the same crawl and settings (checked by a
   * manifest of hashes). The index is byte-identical to an uninterrupted build. The folder is
   * removed when the build completes. Crawl input only. Default false.
   */
  resume?: boolean;
  /**
   * Build shard i of N of the crawl (`i/N`, 0 <= i < N), or `auto` for the cluster scheduler's
   * task (Slurm array jobs, Kubernetes Indexed Jobs): a contiguous, byte-balanced piece of the
   * crawl's sorted file list (indexer/parse/shards.ts). `gpuindex join` makes one index of the
   * shards. Crawl input only.
   */
  shard?: string;
  /**
   * Threads for the merge, each taking a range of terms (the index is the same for any
   * count). Default: one per 5Mi pairs of the crawl, at least 1 and at most one per parse
   * worker (a thread's start costs more than a small share saves). CLI `--merge-threads <n>`.
   */
  mergeThreads?: number;
  /**
   * Store the position of every term occurrence (positions.bin, docs/architecture.md
   * "Positions"): the index then answers phrases ("white whale") and title:term / title:"..."
   * queries. postings.bin, the lexicon and the documents are the same bytes as without it.
   * Crawl folders and documents given as an iterable; not with `resume`. Default false.
   */
  positions?: boolean;
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
/** Default memory a core on machines of more than SMALL_MACHINE_CORES cores. */
export const DEFAULT_MEMORY_PER_CORE = 256 * 1024 ** 2;
const SMALL_MACHINE_CORES = 4;

/**
 * Parse workers a build starts by default: cores − 1, at most this. Past 32 the build slows down
 * (64-core machine, 8 GB crawl: 772 MB/s with 32 workers, 541 MB/s with 63; docs/benchmarks.md,
 * Workers sweep): the parse threads contend and the merge, a thread per worker, gets slower.
 */
export const MAX_DEFAULT_WORKERS = 32;

export function defaultWorkerCount(cores = availableParallelism()): number {
  return Math.max(1, Math.min(cores - 1, MAX_DEFAULT_WORKERS));
}

/**
 * The default budget follows the machine: 1 GiB on up to 4 cores, else 256 MiB a core (16 cores:
 * 4 GiB; 64: 16 GiB), at most a quarter of the RAM and never below 1 GiB. A parse worker takes
 * ~56 MiB and fills blocks of its own, so with a fixed 1 GiB a 16-core machine ran 9 of its 15
 * workers and their blocks made short runs that the merge paid for.
 */
export function defaultMemoryBytes(cores = availableParallelism(), ram = totalmem()): number {
  const floor = parseMemory(DEFAULT_MEMORY);
  if (cores <= SMALL_MACHINE_CORES) return floor;
  return Math.max(floor, Math.min(cores * DEFAULT_MEMORY_PER_CORE, Math.floor(ram / 4)));
}
export const MIN_BLOCK_PAIRS = 1;
export const MAX_BLOCK_PAIRS = 1 << 28;

const UNITS: Record<string, number> = { '': 1, b: 1, k: 1e3, kb: 1e3, kib: 1024, m: 1e6, mb: 1e6, mib: 1024 ** 2, g: 1e9, gb: 1e9, gib: 1024 ** 3 };

/** Parses '1GiB', '256MiB', '512MB', '100000' into bytes. */
export function parseMemory(value: string | number): number {
  if (typeof value !== 'string' && typeof value !== 'number') throw wrongType('--memory', 'a size such as 1GiB or 256MiB, or a number of bytes', value);
  if (typeof value === 'number') {
    if (!(value > 0) || !Number.isFinite(value)) throw new UserError(`--memory must be a positive number of bytes, got ${value}`);
    return Math.floor(value);
  }
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(value);
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined || !(Number(m[1]) > 0)) throw new UserError(`--memory: cannot read "${value}" (examples: 1GiB, 256MiB, 500MB)`);
  return Math.floor(Number(m[1]) * unit);
}

export const checkBlockSize = integerFrom(MIN_BLOCK_PAIRS, MAX_BLOCK_PAIRS);

/**
 * The explicit block size in pairs, checked; undefined without one (the build's memory plan,
 * indexer/memory-plan.ts, then sizes blocks from --memory once the sorter is open).
 */
export function resolveBlockSize(options: Pick<BuildOptions, 'blockSize'>): number | undefined {
  if (options.blockSize === undefined) return undefined;
  checkBlockSize('--block-size', options.blockSize);
  return options.blockSize;
}

