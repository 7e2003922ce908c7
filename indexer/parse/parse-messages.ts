/**
 * Messages between the main thread and the parse workers.
 *
 * termIDs stay global and deterministic through per-worker local ids remapped on the main
 * thread: a worker numbers terms in its own TermDictionary and sends, with each batch, the
 * strings of the local ids it created for that batch. The main thread takes batches in crawl
 * order and maps local -> global on first sight of each pair, which is exactly the order a
 * single-threaded parse assigns ids in: the index is byte-identical whatever the worker count.
 * The mappings made so far are shared back (shared-term-ids.ts), so a worker writes global ids
 * itself for the terms already mapped and the main thread fixes only the other pairs.
 */
import type { CorpusOptions, SkippedItem } from '../corpus/index.js';
import type { TokenizerOptions } from '../analysis/tokenizer.js';
import type { PostingsLayout, PostingsPart, WrittenPart, WrittenPostings } from '../../merge/doc-order-postings.js';
import type { RawTokenBytes } from '../scan/raw-token-list.js';
import type { HandedBlock, WorkerBlocksConfig, WrittenRun } from '../fill/worker-blocks.js';
import type { ByteLexicon } from '../../merge/lexicon-union.js';

/** u32 words of a worker batch's pairs array: batchPairs pairs and room for the document that crosses it. */
export function batchArrayWords(batchPairs: number): number {
  return 2 * batchPairs + 4096;
}

export interface ParseWorkerInit {
  root: string;
  corpus: CorpusOptions;
  /** The build's resolved tokenizer options (maxTokenLength included): workers analyse exactly like the main thread. */
  tokenizer: TokenizerOptions;
  /** A batch is sent once it holds at least this many pairs (and at the end of each file). */
  batchPairs: number;
  /** Batches a worker may have sent and not yet seen consumed (the SyncSend bound). */
  credits: number;
  /** The worker's resourceLimits.maxYoungGenerationSizeMb (set by ParsePool); default V8's. */
  maxYoungGenerationMb?: number;
  /** Niceness the worker sets for its thread (indexer/thread-priority.ts); 0 or absent: none. */
  niceness?: number;
  /** This worker's local -> global term id table (shared-term-ids.ts), written by the main thread. */
  globalTermIds: SharedArrayBuffer;
  /**
   * Whether the worker writes the global ids it knows into its pairs (default) or leaves every
   * pair's local id to the main thread (ParsedBatch.localIds): with one worker, see ParsePool.
   */
  resolveIds?: boolean;
  /**
   * The worker keeps its own lexicon and fills its own blocks (fill/worker-lexicon.ts,
   * fill/worker-blocks.ts): its bundles carry documents and counts but no pairs, and it reports
   * runs ('run'), blocks for the GPU thread ('block') and at the end its lexicon ('lexicon').
   */
  ownLexicon?: OwnLexiconConfig;
  /**
   * Consecutive small whole-document files of a group share a batch (ParsedBatch.endSeq) rather
   * than making one each. Off with --resume: a resume point inside a batch must name the same
   * batch on the next run, and these batches end where the groups (sized by the worker count) do.
   */
  smallFilesTogether?: boolean;
  /** --positions: batches carry each document's title length (ParsedBatch.titleLengths). */
  positions?: boolean;
}

/**
 * A credit may carry (transferred) the pairs array of a batch the main thread has consumed, for
 * the worker's next batch: batch arrays circulate instead of becoming garbage (see ParsePool).
 */
/**
 * Tasks `first`, `first + 1`, ... of the crawl: whole files, or (a group of one) with start/end
 * the lines of a JSONL file starting in that byte range (indexer/jsonl-ranges.ts). Small files
 * go in groups (parse-pool.ts), so that a worker does not wait for a round trip a file.
 */
export type ToWorker =
  | { type: 'tasks'; first: number; paths: string[]; start?: number; end?: number }
  | { type: 'credit'; buffer?: ArrayBuffer }
  | { type: 'stop' }
  /**
   * The pool closes before the crawl is done (an abort or a failure): the worker stops between
   * documents and answers 'aborted', so that it is never terminated inside a native call
   * (Node aborts the process when a worker dies inside a zlib constructor).
   */
  | { type: 'abort' }
  /** The set-up of a worker started ahead of the build (parse-worker-spares.ts); its first message. */
  | { type: 'init'; init: ParseWorkerInit }
  /** ownLexicon: block `block` handed over is written (or failed: `error`); it may be filled again. */
  | { type: 'block-done'; block: number; error?: string }
  | BlockPostingsRequest;

/**
 * After its last batch, a worker may be handed the build's one block (the whole crawl fitted in
 * it): it writes postings.bin at `path` from the block in docID order and the tally's layout
 * (merge/doc-order-postings.ts) while the main thread writes the lexicon (worker-pipeline.ts).
 * `pairs` (unless shared) and `scratch` are transferred; `docBases` as in PairSorter.sortBlock.
 * With `part`, several workers write one part of the file each from the shared block.
 */
export interface BlockPostingsRequest {
  type: 'postings';
  pairs: ArrayBuffer | SharedArrayBuffer;
  /** The lists this worker writes, into the file the main thread created; the whole file when absent. */
  part?: PostingsPart;
  count: number;
  docBases: Uint32Array;
  /** Each term's list length and gap bytes, from the PostingsTally of the fill. */
  layout: PostingsLayout;
  /** The CPU sorter's scratch, already touched during the fill (a first page touch is slow here): the file's bytes go there. */
  scratch?: ArrayBuffer;
  path: string;
  /** The documents' lengths by docID: with the layout's df, the worker computes impacts.bin's contents too. */
  documentLengths?: Uint32Array;
}

/** The answer to a BlockPostingsRequest: merge/doc-order-postings.ts's figures, or the error (with its system code). */
export type BlockPostingsReply =
  | ({ type: 'postings'; writeMs: number } & WrittenPostings)
  | ({ type: 'postings-part'; writeMs: number } & WrittenPart)
  | { type: 'postings-error'; message: string; code?: string };

/** One batch of parsed documents of one file: the stream element between parse and block fill. */
export interface ParsedBatch {
  type: 'batch';
  seq: number;
  part: number;
  last: boolean;
  /**
   * A batch of whole small files (ParseWorkerInit.smallFilesTogether): tasks seq..endSeq, each
   * one document or one skip, every document's path being its external id (`path` is the first
   * file's). Absent: the batch is part `part` of task `seq` alone.
   */
  endSeq?: number;
  /** The raw tokens of the worker's local term ids firstNewTerm, firstNewTerm + 1, ... (never stopwords; not yet stemmed). */
  firstNewTerm: number;
  newTerms: RawTokenBytes;
  /**
   * (termID, document index within this batch) pairs; the buffer is transferred, not copied. A
   * termID is global, or a local id with UNRESOLVED_BIT set where the worker did not know the
   * global one yet (shared-term-ids.ts).
   */
  pairs: Uint32Array;
  pairCount: number;
  /** Indexes of the pairs holding a local id, ascending (empty with localIds). */
  unresolved: Uint32Array;
  /** Every pair's termID is the worker's local id, without UNRESOLVED_BIT (ParseWorkerInit.resolveIds false). */
  localIds?: true;
  externalIds: string[];
  /** The crawl file every document of the batch comes from (a batch spans files only with endSeq): one string, not one a document. */
  path: string;
  /**
   * Range tasks only (line numbers count from the range's first line): [document index, line]
   * of each document whose id is its `path:line`, for the main thread to renumber.
   */
  lineIds?: number[];
  /** Range tasks, last batch only: the range's lines and items (documents and skips). */
  lines?: number;
  items?: number;
  lengths: Uint32Array;
  /** --positions: each document's title length in terms (its first title copy: block-positions.ts). */
  titleLengths?: Uint32Array;
  /** WARC documents only: [WARC-Date, WARC-Record-ID] of each document ('' for none), flattened. */
  warc?: string[];
  /** Records that are not documents and no fault (WARC request records, images), by kind. */
  notIndexed?: Record<string, number>;
  bytes: number;
  skips: SkippedItem[];
  /** Documents indexed despite a problem (e.g. invalid UTF-8 replaced): path, line, what. */
  warnings: SkippedItem[];
  /** Milliseconds the worker spent parsing this batch, and waiting for a credit before it. */
  busyMs: number;
  idleMs: number;
  /** Bytes of the worker's WebAssembly raw-token table when the batch was sent. */
  scanTableBytes: number;
  /** The worker's first batch only: when its script began running (ms since the epoch, performance.timeOrigin-based). */
  workerStartedAt?: number;
}

/**
 * One batch of a BatchBundle: its pairs, unresolved pair indexes, document lengths and ids follow
 * the previous batch's in the bundle's arrays (ParsedBatch's fields otherwise).
 */
export interface BundledBatch {
  seq: number;
  part: number;
  last: boolean;
  endSeq?: number;
  pairCount: number;
  unresolvedCount: number;
  docs: number;
  path: string;
  bytes: number;
  skips?: SkippedItem[];
  warnings?: SkippedItem[];
  lineIds?: number[];
  lines?: number;
  items?: number;
  warc?: string[];
  notIndexed?: Record<string, number>;
}

/**
 * What a worker posts: the batches of one or more of its tasks, in its order, in one message
 * with one pairs array. A crawl of small files made one message (and one structured clone, one
 * credit, one wake-up of the main thread) per file, and a worker idled between them (the main
 * thread unpacks it into ParsedBatch views, parse-pool.ts). The new raw tokens of all its batches
 * come with it (the first batch's, when unpacked).
 */
export interface BatchBundle {
  type: 'bundle';
  batches: BundledBatch[];
  firstNewTerm: number;
  newTerms: RawTokenBytes;
  pairs: Uint32Array;
  unresolved: Uint32Array;
  lengths: Uint32Array;
  titleLengths?: Uint32Array;
  externalIds: string[];
  localIds?: true;
  busyMs: number;
  idleMs: number;
  scanTableBytes: number;
  workerStartedAt?: number;
}

/** 'loaded': a worker started ahead (deferred) has loaded its modules and waits for 'init'. */
export type FromWorker = BatchBundle | { type: 'error'; message: string } | { type: 'loaded' } | { type: 'aborted' } | BlockPostingsReply | OwnLexiconMessage;

/** ParseWorkerInit.ownLexicon: the worker's blocks, and its lexicon's share of --memory. */
export interface OwnLexiconConfig extends WorkerBlocksConfig {
  /** Estimated bytes (WorkerLexicon.bytes) past which the lexicon closes a generation to disk; absent: never. */
  lexiconBytes?: number;
  /** Terms at which the lexicon closes a generation whatever its bytes (a test knob); absent: none. */
  generationTerms?: number;
}

/**
 * ownLexicon: a run the worker wrote; a block for the GPU thread; a lexicon generation it wrote
 * to disk ('lexicon-spilled': generation `generation`, merge/spilled-lexicon.ts); once it has
 * parsed its last document, its last generation's lexicon (terms in code point order, its ids
 * in that order) and how many documents it numbered; then, its last block's run written,
 * 'finished', with the milliseconds it waited for blocks it handed over (WorkerBlocks).
 */
export type OwnLexiconMessage =
  | ({ type: 'run' } & WrittenRun)
  | ({ type: 'block' } & HandedBlock)
  | { type: 'lexicon-spilled'; generation: number; path: string }
  | { type: 'lexicon'; generation: number; terms: ByteLexicon; order: Uint32Array; documents: number }
  | { type: 'finished'; blockWaitMs?: number; endWaitMs?: number };
