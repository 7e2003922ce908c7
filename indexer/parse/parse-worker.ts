/**
 * A parse worker: reads the files it is given (in groups), tokenizes each document, numbers its
 * distinct raw tokens (stopwords dropped; stemming and the term dictionary are the main
 * thread's, see BatchRemapper) and posts batches of (termID, document-in-batch) pairs (with two
 * or more workers, the global termID where the main thread has mapped the local one already,
 * shared-term-ids.ts; with one, the local ids), several in one message (BatchBundle), waiting
 * for a credit whenever `credits` bundles are outstanding so memory stays bounded.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { readCorpusFile, readPlainJsonlSync, resolveFields, type ByteRange, type CorpusItem, type JsonlLineHandler, type SkippedItem } from '../corpus/index.js';
import { createTokenizer, type Tokenizer } from '../analysis/tokenizer.js';
import { batchArrayWords, type BatchBundle, type BlockPostingsReply, type BlockPostingsRequest, type BundledBatch, type FromWorker, type ParseWorkerInit, type ToWorker } from './parse-messages.js';
import { DocumentInverter, LocalTerms } from '../scan/document-inverter.js';
import { jsonlFastPath } from '../scan/jsonl-fast-path.js';
import { grown } from '../../runtime/grown.js';
import { niceThisThread } from '../../runtime/thread-priority.js';
import { readSmallFileSync } from '../corpus/read-small-file.js';
import type { BytesInverters } from '../corpus/read-file.js';
import { KnownTermIds, UNRESOLVED_BIT } from '../fill/shared-term-ids.js';
import { WorkerLexicon } from '../fill/worker-lexicon.js';
import { WorkerBlocks } from '../fill/worker-blocks.js';
import { writeSpilledLexicon } from '../../merge/spilled-lexicon.js';
import { join } from 'node:path';
import { collectFullHeap } from '../../runtime/full-gc.js';
import { warmUpRadixSort } from '../sort/cpu-sorter.js';

/** When this worker's code began running (after its imports), for the summary's start-up figures. */
const startedAt = performance.timeOrigin + performance.now();
let firstBatchSent = false;
const port = parentPort!;
/** The worker's local terms: each raw token's bytes go to the main thread with the batch that uses it first. */
const localTerms = new LocalTerms();
let init!: ParseWorkerInit;
let tokenizer!: Tokenizer;
let inverter!: DocumentInverter;
/** JSONL lines straight into the scanner (jsonl-fast-path.ts), where it applies. */
let jsonlLines: JsonlLineHandler | undefined;
/** Local -> global ids the main thread has assigned so far (shared-term-ids.ts). */
let knownIds!: KnownTermIds;
let BATCH_WORDS = 0;
/** ParseWorkerInit.resolveIds. */
let resolveIds = true;
let credits = 0;
/** ParseWorkerInit.ownLexicon: this worker's own lexicon and blocks. */
let lexicon: WorkerLexicon | undefined;
let blocks: WorkerBlocks | undefined;
/** The own block is full: seal it before the next document. */
let blockFull = false;
/** The own lexicon outgrew its share of --memory: close its generation before the next document. */
let lexiconFull = false;
/** The own lexicon's size when last weighed (it is weighed again only when it has grown). */
let lexiconWeighedAt = 0;
/** UTF-8 .txt files, and UTF-8 .html pages' text, straight into the scanner from their bytes (read-small-file.ts). */
const bytesInverters: BytesInverters = {
  utf8Text: (title, text) => inverter.invertUtf8(title, text),
  titleLength: () => inverter.titleLength,
};
/** ParseWorkerInit.smallFilesTogether. */
let smallFilesTogether = false;
/** The open batch of consecutive small files (smallFilesTogether), until its group ends or it fills. */
let filesBatch: OpenBatch | undefined;

/**
 * Sets the worker up for its build: from workerData, or from the 'init' message when it was
 * started ahead of the build (parse-worker-spares.ts) and has loaded its modules meanwhile.
 */
function setUp(i: ParseWorkerInit): void {
  init = i;
  if (init.niceness) niceThisThread(init.niceness);
  tokenizer = createTokenizer(init.tokenizer);
  inverter = new DocumentInverter(tokenizer, localTerms);
  jsonlLines = jsonlFastPath(resolveFields(init.corpus), inverter);
  knownIds = new KnownTermIds(init.globalTermIds);
  resolveIds = init.resolveIds !== false;
  BATCH_WORDS = batchArrayWords(init.batchPairs);
  credits = init.credits;
  smallFilesTogether = init.smallFilesTogether === true;
  if (init.ownLexicon) {
    lexicon = new WorkerLexicon(tokenizer, localTerms);
    blocks = new WorkerBlocks(
      init.ownLexicon,
      lexicon,
      (run) => port.postMessage({ type: 'run', ...run } satisfies FromWorker),
      (block) => port.postMessage({ type: 'block', ...block } satisfies FromWorker, block.positions ? [block.keys.buffer as ArrayBuffer, block.positions.buffer as ArrayBuffer] : [block.keys.buffer as ArrayBuffer]),
    );
  }
  main().catch((err: unknown) => {
    if (err === ABORTED) {
      port.postMessage({ type: 'aborted' } satisfies FromWorker);
      port.close();
    } else port.postMessage({ type: 'error', message: (err as Error)?.stack ?? String(err) });
  });
}
let creditWaiter: (() => void) | undefined;
interface Task {
  seq: number;
  path: string;
  range?: ByteRange;
  /** The last task of a group (ParsePool dispatches groups): its batches are posted at once. */
  endsGroup: boolean;
}
const tasks: Task[] = [];
let taskWaiter: (() => void) | undefined;
let stopping = false;
/** The pool closes early ('abort'): the parse ends at the next document or wait. */
let aborting = false;
/** Thrown where the parse notices `aborting`; main() answers 'aborted' for it. */
const ABORTED = new Error('parse aborted');

// A worker of its own lexicon sorts its last block itself, once, on the build's tail: the sort's
// code is optimized now, while the worker waits for its build (cpu-sorter.ts).
warmUpRadixSort();

port.on('message', (m: ToWorker) => {
  if (m.type === 'init') setUp(m.init);
  else if (m.type === 'postings') void writeBlockPostings(m);
  else if (m.type === 'block-done') blocks!.done(m.block, m.error);
  else if (m.type === 'abort') {
    aborting = true;
    blocks?.abandon(ABORTED);
    taskWaiter?.();
    creditWaiter?.();
  }
  else if (m.type === 'credit') {
    credits++;
    if (m.buffer) free.push(m.buffer);
    creditWaiter?.();
  } else if (m.type === 'tasks') {
    const range = m.start !== undefined ? { start: m.start, end: m.end ?? Infinity } : undefined;
    for (let i = 0; i < m.paths.length; i++) tasks.push({ seq: m.first + i, path: m.paths[i]!, range, endsGroup: i === m.paths.length - 1 });
    taskWaiter?.();
  } else {
    stopping = true;
    taskWaiter?.();
    creditWaiter?.();
  }
});

/**
 * Pairs arrays that came back with credits (bundles the main thread consumed): reused for the
 * next bundles, so pairs arrays are a fixed set in circulation rather than a stream of garbage
 * that the main thread frees only when it happens to collect (and that a thread's malloc arena
 * then keeps).
 */
const free: ArrayBuffer[] = [];

const NO_PAIRS = new Uint32Array(0);

/**
 * The document ids of the bundle being built: one array for every bundle, emptied once it is
 * posted (postMessage copies it). A fresh `[]` for each batch started with small-integer
 * elements, and the first id pushed deoptimized addDocument: 5 times on mail, each followed by
 * a recompile on a core the parse needs.
 */
const externalIds: string[] = [];

/**
 * The bundle being built: the batches closed so far (`batches`, their pairs, unresolved indexes
 * and documents from the arrays' starts), then the open batch's from `open.pairStart` etc. on.
 */
class Bundle {
  /** Empty with an own lexicon: the pairs go to the worker's blocks (pairEnd still counts them). */
  pairs = blocks ? NO_PAIRS : free.length > 0 ? new Uint32Array(free.pop()!) : new Uint32Array(BATCH_WORDS);
  /** Pairs written (the closed batches' and the open one's). */
  pairEnd = 0;
  /** Pairs of the closed batches. */
  closedPairs = 0;
  readonly batches: BundledBatch[] = [];
  readonly externalIds = externalIds;
  lengths = new Uint32Array(256);
  /** --positions: each document's title length in terms (DocumentInverter.titleLength). */
  titleLengths = init.positions ? new Uint32Array(256) : undefined;
  /** Indexes (within their batch) of the pairs whose term word is a local id (UNRESOLVED_BIT set). */
  unresolved = new Uint32Array(1024);
  unresolvedCount = 0;
}

/** A file's batch (or a part of it) being filled: its place in the bundle and what is its own. */
class OpenBatch {
  pairStart: number;
  unresolvedStart: number;
  docStart: number;
  bytes = 0;
  skips: SkippedItem[] = [];
  warnings: SkippedItem[] = [];
  lineIds: number[] = [];
  lines?: number;
  items?: number;
  /** WARC-Date and WARC-Record-ID of each document, flat, when the file is a WARC. */
  warc?: string[];
  /** Records and payloads left out, by kind (WARC). */
  notIndexed?: Record<string, number>;
  /** A batch of small files: the last task in it (ParsedBatch.endSeq). */
  endSeq?: number;

  constructor(
    readonly seq: number,
    readonly part: number,
    readonly path: string,
    b: Bundle,
  ) {
    this.pairStart = b.pairEnd;
    this.unresolvedStart = b.unresolvedCount;
    this.docStart = b.externalIds.length;
  }

  get pairCount(): number {
    return bundle.pairEnd - this.pairStart;
  }

  get docs(): number {
    return bundle.externalIds.length - this.docStart;
  }

  /** `titleLength`: the title's terms among termIds (positions). */
  addDocument(termIds: Uint32Array, externalId: string, bytes: number, titleLength: number): void {
    const b = bundle;
    if (blocks) {
      if (blocks.add(termIds, termIds.length, lexicon!.termIds(), titleLength)) blockFull = true;
      if (lexiconOutgrown()) lexiconFull = blockFull = true;
    } else this.addPairs(termIds);
    b.pairEnd += termIds.length;
    const d = b.externalIds.length;
    if (d === b.lengths.length) b.lengths = grown(b.lengths, d + 1);
    b.lengths[d] = termIds.length;
    if (b.titleLengths) {
      if (d === b.titleLengths.length) b.titleLengths = grown(b.titleLengths, d + 1);
      b.titleLengths[d] = titleLength;
    }
    b.externalIds.push(externalId);
    this.bytes += bytes;
  }

  /** The document's pairs into the bundle (the main thread fills blocks). */
  private addPairs(termIds: Uint32Array): void {
    const b = bundle;
    const need = 2 * (b.pairEnd + termIds.length);
    if (need > b.pairs.length) b.pairs = grown(b.pairs, need, 2 * b.pairEnd);
    const doc = this.docs;
    const pairs = b.pairs;
    let p = 2 * b.pairEnd;
    if (!resolveIds) {
      // One worker: the local ids as they are (ParsedBatch.localIds).
      for (let i = 0; i < termIds.length; i++) {
        pairs[p++] = termIds[i]!;
        pairs[p++] = doc;
      }
    } else {
      knownIds.refresh();
      const known = knownIds.ids;
      const knownCount = knownIds.count;
      for (let i = 0; i < termIds.length; i++) {
        const local = termIds[i]!;
        const g = local < knownCount ? known[local]! : 0;
        if (g !== 0) {
          pairs[p++] = g - 1;
        } else {
          this.noteUnresolved((p >>> 1) - this.pairStart);
          pairs[p++] = local | UNRESOLVED_BIT;
        }
        pairs[p++] = doc;
      }
    }
  }

  private noteUnresolved(pair: number): void {
    const b = bundle;
    if (b.unresolvedCount === b.unresolved.length) b.unresolved = grown(b.unresolved, b.unresolvedCount + 1);
    b.unresolved[b.unresolvedCount++] = pair;
  }

  /** Closes the batch into the bundle. */
  close(last: boolean): void {
    const b = bundle;
    const h: BundledBatch = {
      seq: this.seq,
      part: this.part,
      last,
      pairCount: this.pairCount,
      unresolvedCount: b.unresolvedCount - this.unresolvedStart,
      docs: this.docs,
      path: this.path,
      bytes: this.bytes,
    };
    if (this.skips.length > 0) h.skips = this.skips;
    if (this.warnings.length > 0) h.warnings = this.warnings;
    if (this.lineIds.length > 0) h.lineIds = this.lineIds;
    if (this.warc) h.warc = this.warc;
    if (this.notIndexed) h.notIndexed = this.notIndexed;
    if (this.endSeq !== undefined) h.endSeq = this.endSeq;
    if (this.lines !== undefined) {
      h.lines = this.lines;
      h.items = this.items;
    }
    b.batches.push(h);
    b.closedPairs = b.pairEnd;
  }
}

let bundle!: Bundle;
/** Parse time (ms) since the last bundle was posted. */
let busySince = 0;

async function takeCredit(): Promise<number> {
  if (aborting) throw ABORTED;
  if (credits > 0 || stopping) {
    credits--;
    return 0;
  }
  const t0 = performance.now();
  await new Promise<void>((resolve) => (creditWaiter = resolve));
  creditWaiter = undefined;
  if (aborting) throw ABORTED;
  credits--;
  return performance.now() - t0;
}

/**
 * Posts the bundle's closed batches. An open batch (a file that goes on) moves to the front of
 * a fresh bundle: its pairs are copied, at most a batch's.
 */
async function post(open?: OpenBatch): Promise<void> {
  const busyMs = performance.now() - busySince;
  const b = bundle;
  const idleMs = await takeCredit();
  // What this post does from here (copies, the message, the lexicon's sort ahead) is parse work:
  // it counts in the next bundle's busy time.
  const workSince = performance.now();
  const newTerms = localTerms.takeUnsent();
  const pairCount = b.closedPairs;
  const unresolvedCount = open ? open.unresolvedStart : b.unresolvedCount;
  const docs = open ? open.docStart : b.externalIds.length;
  const next = new Bundle();
  if (open) {
    // Not with a fresh array's first touch to pay for nothing: the copy is what moves.
    const n = b.pairEnd - open.pairStart;
    if (!blocks) {
      if (2 * n > next.pairs.length) next.pairs = new Uint32Array(2 * n + 4096);
      next.pairs.set(b.pairs.subarray(2 * open.pairStart, 2 * b.pairEnd));
    }
    next.pairEnd = n;
    const u = b.unresolvedCount - open.unresolvedStart;
    if (u > next.unresolved.length) next.unresolved = new Uint32Array(u);
    next.unresolved.set(b.unresolved.subarray(open.unresolvedStart, b.unresolvedCount));
    next.unresolvedCount = u;
    const d = b.externalIds.length - docs;
    if (d > next.lengths.length) next.lengths = new Uint32Array(d);
    next.lengths.set(b.lengths.subarray(docs, docs + d));
    if (b.titleLengths) {
      if (d > next.titleLengths!.length) next.titleLengths = new Uint32Array(d);
      next.titleLengths!.set(b.titleLengths.subarray(docs, docs + d));
    }
  }
  const msg: BatchBundle = {
    type: 'bundle',
    batches: b.batches,
    firstNewTerm: localTerms.count - newTerms.ends.length,
    newTerms,
    pairs: b.pairs,
    unresolved: b.unresolved.slice(0, unresolvedCount),
    lengths: b.lengths.slice(0, docs),
    ...(b.titleLengths ? { titleLengths: b.titleLengths.slice(0, docs) } : {}),
    externalIds: docs === b.externalIds.length ? b.externalIds : b.externalIds.slice(0, docs),
    ...(resolveIds ? {} : { localIds: true as const }),
    busyMs,
    idleMs,
    scanTableBytes: inverter.scanTableBytes,
    ...(firstBatchSent ? {} : { workerStartedAt: startedAt }),
  };
  firstBatchSent = true;
  if (4 * pairCount < init.batchPairs && b.pairs.length === BATCH_WORDS) {
    // A small bundle (the end of a group): send a trimmed copy, so bundles queued on the main
    // thread hold what they count, and keep the full-size array for the next one.
    msg.pairs = b.pairs.slice(0, 2 * pairCount);
    free.push(b.pairs.buffer as ArrayBuffer);
  }
  const transfer = [msg.pairs.buffer as ArrayBuffer, msg.unresolved.buffer as ArrayBuffer, msg.lengths.buffer as ArrayBuffer, newTerms.bytes.buffer as ArrayBuffer, newTerms.ends.buffer as ArrayBuffer];
  if (msg.titleLengths) transfer.push(msg.titleLengths.buffer as ArrayBuffer);
  port.postMessage(msg, transfer);
  // The ids array is the module's one (see externalIds): keep the open batch's.
  externalIds.splice(0, docs);
  bundle = next;
  // An own lexicon's order grows between bundles, so the sort left for the end stays short.
  lexicon?.dictionary.sortAhead();
  if (open) {
    open.pairStart = 0;
    open.unresolvedStart = 0;
    open.docStart = 0;
  }
  busySince = workSince;
}

/** Adds an item to the batch; true when the bundle is full, or the own block. */
function takeItem(batch: OpenBatch, item: CorpusItem, renumbered: boolean): boolean {
  if (aborting) throw ABORTED;
  if (item.kind === 'skip') {
    batch.skips.push(item.skip);
    return false;
  }
  if (item.kind === 'ignored') {
    batch.notIndexed ??= {};
    batch.notIndexed[item.what] = (batch.notIndexed[item.what] ?? 0) + 1;
    return false;
  }
  const d = item.doc;
  if (d.warc) (batch.warc ??= []).push(d.warc.date ?? '', d.warc.recordId ?? '');
  if (d.warning) batch.warnings.push({ path: d.path, line: d.line, reason: d.warning });
  if (renumbered && d.idFromLine) batch.lineIds.push(batch.docs, d.line!);
  // The title's length after invert(d), or the one inverted ahead with the document.
  batch.addDocument(d.termIds ?? inverter.invert(d), d.externalId, d.bytes, d.titleTerms ?? inverter.titleLength);
  return bundle.pairEnd >= init.batchPairs || blockFull;
}

/**
 * A task: with smallFilesTogether, a small whole-document file goes into the open batch of
 * small files (one batch, not one a file: a crawl of many small files made the main thread
 * take, remap and count a batch a file); any other file closes that batch and has its own.
 */
async function parseTask(task: Task): Promise<void> {
  if (!smallFilesTogether || task.range) return parseFile(task, true);
  const small = readSmallFileSync(init.root, task.path, bytesInverters);
  if (small === undefined) {
    filesBatch?.close(true);
    filesBatch = undefined;
    return parseFile(task, false);
  }
  // A small file is one document (or one skip): the batch closes between files, never inside one.
  const batch = (filesBatch ??= new OpenBatch(task.seq, 0, task.path, bundle));
  batch.endSeq = task.seq;
  takeItem(batch, small, false);
  if (blockFull) await sealOwnBlock();
  if (task.endsGroup || bundle.pairEnd >= init.batchPairs) {
    batch.close(true);
    filesBatch = undefined;
    await post();
  }
}

/** `trySmall`: whether the small-file reader may take the file (parseTask tried it already otherwise). */
async function parseFile(task: Task, trySmall: boolean): Promise<void> {
  const { seq, path, range: lineRange } = task;
  let part = 0;
  let batch = new OpenBatch(seq, part, path, bundle);
  let counts: { lines: number; items: number } | undefined;
  const range = lineRange && { ...lineRange, onEnd: (c: { lines: number; items: number }) => (counts = c) };
  // Only a range after a file's first has line numbers the main thread must renumber.
  const renumbered = range !== undefined && range.start > 0;
  const take = (item: CorpusItem): boolean => takeItem(batch, item, renumbered);
  /**
   * A file's batches are cut where its own pairs reach batchPairs, wherever it starts in a
   * bundle, so a file's parts (and --resume's points in them) do not depend on its neighbours.
   */
  const full = async (): Promise<void> => {
    if (blockFull) {
      await sealOwnBlock();
      if (bundle.pairEnd < init.batchPairs) return;
    }
    if (batch.pairCount >= init.batchPairs) {
      batch.close(false);
      await post();
      batch = new OpenBatch(seq, ++part, path, bundle);
    } else await post(batch);
  };
  // Small whole-document files and plain JSONL are read with synchronous calls (no promise a
  // file or a line); other files as a stream.
  const small = range || !trySmall ? undefined : readSmallFileSync(init.root, path, bytesInverters);
  const plainJsonl = small ? undefined : readPlainJsonlSync(init.root, path, init.corpus, range, jsonlLines);
  if (small) {
    if (take(small)) await full();
  } else if (plainJsonl) {
    for (const item of plainJsonl) if (take(item)) await full();
  } else {
    for await (const item of readCorpusFile(init.root, path, init.corpus, range, jsonlLines, bytesInverters)) if (take(item)) await full();
  }
  if (counts) {
    batch.lines = counts.lines;
    batch.items = counts.items;
  }
  batch.close(true);
  if (task.endsGroup || bundle.pairEnd >= init.batchPairs) await post();
}

/**
 * The crawl fitted in one block: writes postings.bin here from the block in docID order and the
 * tally's layout (merge/doc-order-postings.ts), the worker being idle after its last batch,
 * while the main thread writes the lexicon (worker-pipeline.ts). The postings module loads only
 * now: a parse needs none of it.
 */
async function writeBlockPostings(m: BlockPostingsRequest): Promise<void> {
  let reply: BlockPostingsReply;
  try {
    const { writeDocOrderPostings, writeDocOrderPostingsPart } = await import('../../merge/doc-order-postings.js');
    const t0 = performance.now();
    const pairs = new Uint32Array(m.pairs, 0, 2 * m.count);
    if (m.part) {
      const part = writeDocOrderPostingsPart(pairs, m.count, m.docBases, m.layout, m.part, m.path, m.scratch, m.documentLengths);
      reply = { type: 'postings-part', writeMs: performance.now() - t0, ...part };
    } else reply = { type: 'postings', writeMs: performance.now() - t0, ...writeDocOrderPostings(pairs, m.count, m.docBases, m.layout, m.path, m.scratch, m.documentLengths) };
  } catch (err) {
    reply = { type: 'postings-error', message: (err as Error)?.message ?? String(err), code: (err as NodeJS.ErrnoException)?.code };
  }
  // The impacts' arrays, and a part's bytes (the main thread hashes the parts in order), are transferred.
  const transfer: ArrayBuffer[] = [];
  const impacts = reply.type === 'postings' ? reply.impacts : reply.type === 'postings-part' && reply.impacts ? [reply.impacts] : [];
  for (const i of impacts ?? []) transfer.push(...[i.firstBlock, i.lastDoc, i.gapsAt, i.tfsAt, i.firstPair, i.pairTf, i.pairLength].map((a) => a.buffer as ArrayBuffer));
  if (reply.type === 'postings-part') transfer.push(reply.bytes.buffer as ArrayBuffer);
  port.postMessage(reply, transfer);
}

/**
 * Fewest terms a lexicon generation closes with: the scanner's tables alone weigh over 1 MiB,
 * so a share smaller than that would otherwise close one a document.
 */
const MIN_GENERATION_TERMS = 4096;

/** Whether the own lexicon has grown past its share of --memory (ownLexicon.lexiconBytes, generationTerms). */
function lexiconOutgrown(): boolean {
  const { lexiconBytes, generationTerms } = init.ownLexicon!;
  const size = lexicon!.dictionary.size;
  if (size === lexiconWeighedAt) return false;
  lexiconWeighedAt = size;
  if (generationTerms !== undefined && size >= generationTerms) return true;
  return lexiconBytes !== undefined && size >= MIN_GENERATION_TERMS && lexicon!.bytes(inverter.scanTableBytes) > lexiconBytes;
}

/** Seals the own block, between documents; first closes the lexicon's generation if it is full. */
async function sealOwnBlock(): Promise<void> {
  blockFull = false;
  if (!lexiconFull) return blocks!.seal();
  lexiconFull = false;
  // Every pair keyed by this generation goes into a sealed block first.
  await blocks!.sealAll();
  const closing = lexicon!.generation;
  const { terms, order } = lexicon!.finish(false);
  const path = join(init.ownLexicon!.runDir, `lexicon-w${String(init.ownLexicon!.worker).padStart(3, '0')}-g${String(closing).padStart(6, '0')}.bin`);
  writeSpilledLexicon(path, { terms, order });
  port.postMessage({ type: 'lexicon-spilled', generation: closing, path } satisfies FromWorker);
  lexicon!.restart();
  inverter.forgetRawTokens();
  localTerms.restart();
  lexiconWeighedAt = 0;
  // The closed generation's strings and maps are garbage now. Left to V8, the heap held them
  // beside the next generations until a full collection came, up to 2.4x the share.
  collectFullHeap();
}

async function main(): Promise<void> {
  bundle = new Bundle();
  busySince = performance.now();
  for (;;) {
    while (tasks.length === 0 && !stopping && !aborting) {
      const t0 = performance.now();
      await new Promise<void>((resolve) => (taskWaiter = resolve));
      busySince += performance.now() - t0; // waiting for tasks is not parse time
    }
    taskWaiter = undefined;
    if (aborting) throw ABORTED;
    if (stopping) break;
    await parseTask(tasks.shift()!);
  }
  if (blocks) {
    // The lexicon the runs are keyed by (the merge unites the workers'), then the last block:
    // no term comes after the last document, and the main thread may unite the lexicons while
    // the workers sort and write their last blocks.
    const { terms, order } = lexicon!.finish();
    port.postMessage({ type: 'lexicon', generation: lexicon!.generation, terms, order, documents: blocks.documents } satisfies FromWorker, [order.buffer as ArrayBuffer]);
    await blocks.finish();
    port.postMessage({ type: 'finished', blockWaitMs: blocks.blockWaitMs, endWaitMs: blocks.endWaitMs } satisfies FromWorker);
  }
  port.close();
}

const data = workerData as ParseWorkerInit | { deferred: true };
if (!('deferred' in data)) setUp(data);
else port.postMessage({ type: 'loaded' } satisfies FromWorker);
