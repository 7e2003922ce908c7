/**
 * A parse worker: reads the files it is given, tokenizes each document, numbers its distinct
 * raw tokens (stopwords dropped; stemming and the term dictionary are the main thread's, see
 * BatchRemapper) and posts batches of (termID, document-in-batch) pairs (with two or more
 * workers, the global termID where the main thread has mapped the local one already,
 * shared-term-ids.ts; with one, the local ids), waiting for a credit whenever `credits` batches
 * are outstanding so memory stays bounded.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { readCorpusFile, readPlainJsonlSync, resolveFields, type ByteRange, type CorpusItem, type JsonlLineHandler } from '../corpus/index.js';
import { createTokenizer, type Tokenizer } from '../analysis/tokenizer.js';
import { batchArrayWords, type BlockPostingsReply, type BlockPostingsRequest, type FromWorker, type ParsedBatch, type ParseWorkerInit, type ToWorker } from './parse-messages.js';
import { DocumentInverter, LocalTerms } from '../scan/document-inverter.js';
import { jsonlFastPath } from '../scan/jsonl-fast-path.js';
import { grown } from '../../runtime/grown.js';
import { niceThisThread } from './thread-priority.js';
import { KnownTermIds, UNRESOLVED_BIT } from '../fill/shared-term-ids.js';

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
  main().catch((err: unknown) => {
    port.postMessage({ type: 'error', message: (err as Error)?.stack ?? String(err) });
  });
}
let creditWaiter: (() => void) | undefined;
const tasks: { seq: number; path: string; range?: ByteRange }[] = [];
let taskWaiter: (() => void) | undefined;
let stopping = false;

port.on('message', (m: ToWorker) => {
  if (m.type === 'init') setUp(m.init);
  else if (m.type === 'postings') void writeBlockPostings(m);
  else if (m.type === 'credit') {
    credits++;
    if (m.buffer) free.push(m.buffer);
    creditWaiter?.();
  } else if (m.type === 'task') {
    tasks.push({ seq: m.seq, path: m.path, range: m.start !== undefined ? { start: m.start, end: m.end ?? Infinity } : undefined });
    taskWaiter?.();
  } else {
    stopping = true;
    taskWaiter?.();
    creditWaiter?.();
  }
});

/**
 * Pairs arrays that came back with credits (batches the main thread consumed): reused for the
 * next batches, so batch arrays are a fixed set in circulation rather than a stream of garbage
 * that the main thread frees only when it happens to collect (and that a thread's malloc arena
 * then keeps).
 */
const free: ArrayBuffer[] = [];

/**
 * The document ids of the batch being built: one array for every batch, emptied once the batch
 * is posted (postMessage copies it). A fresh `[]` for each batch started with small-integer
 * elements, and the first id pushed deoptimized addDocument: 5 times on mail, each followed by
 * a recompile on a core the parse needs.
 */
const externalIds: string[] = [];

class BatchBuilder {
  pairs = free.length > 0 ? new Uint32Array(free.pop()!) : new Uint32Array(BATCH_WORDS);
  pairCount = 0;
  readonly externalIds = externalIds;
  lengths: number[] = [];
  warc?: string[];
  notIndexed?: Record<string, number>;
  bytes = 0;
  skips: ParsedBatch['skips'] = [];
  lineIds: number[] = [];
  /** Indexes of the pairs whose term word is a local id (UNRESOLVED_BIT set), ascending. */
  unresolved = new Uint32Array(1024);
  unresolvedCount = 0;
  lines?: number;
  items?: number;
  warnings: ParsedBatch['warnings'] = [];

  constructor(readonly path: string) {}

  addDocument(termIds: Uint32Array, externalId: string, bytes: number): void {
    const need = 2 * (this.pairCount + termIds.length);
    if (need > this.pairs.length) this.pairs = grown(this.pairs, need, 2 * this.pairCount);
    const doc = this.externalIds.length;
    const pairs = this.pairs;
    let p = 2 * this.pairCount;
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
          this.noteUnresolved(p >>> 1);
          pairs[p++] = local | UNRESOLVED_BIT;
        }
        pairs[p++] = doc;
      }
    }
    this.pairCount += termIds.length;
    this.externalIds.push(externalId);
    this.lengths.push(termIds.length);
    this.bytes += bytes;
  }

  private noteUnresolved(pair: number): void {
    if (this.unresolvedCount === this.unresolved.length) this.unresolved = grown(this.unresolved, this.unresolvedCount + 1);
    this.unresolved[this.unresolvedCount++] = pair;
  }
}

async function takeCredit(): Promise<number> {
  if (credits > 0 || stopping) {
    credits--;
    return 0;
  }
  const t0 = performance.now();
  await new Promise<void>((resolve) => (creditWaiter = resolve));
  creditWaiter = undefined;
  credits--;
  return performance.now() - t0;
}

async function send(b: BatchBuilder, seq: number, part: number, last: boolean, busyMs: number): Promise<void> {
  const idleMs = await takeCredit();
  const newTerms = localTerms.takeUnsent();
  const msg: ParsedBatch = {
    type: 'batch',
    seq,
    part,
    last,
    firstNewTerm: localTerms.count - newTerms.ends.length,
    newTerms,
    pairs: b.pairs,
    pairCount: b.pairCount,
    unresolved: b.unresolved.slice(0, b.unresolvedCount),
    ...(resolveIds ? {} : { localIds: true as const }),
    externalIds: b.externalIds,
    path: b.path,
    ...(b.lineIds.length > 0 ? { lineIds: b.lineIds } : {}),
    ...(b.lines !== undefined ? { lines: b.lines, items: b.items } : {}),
    lengths: Uint32Array.from(b.lengths),
    ...(b.warc ? { warc: b.warc } : {}),
    ...(b.notIndexed ? { notIndexed: b.notIndexed } : {}),
    bytes: b.bytes,
    skips: b.skips,
    warnings: b.warnings,
    busyMs,
    idleMs,
    scanTableBytes: inverter.scanTableBytes,
    ...(firstBatchSent ? {} : { workerStartedAt: startedAt }),
  };
  firstBatchSent = true;
  if (4 * b.pairCount < init.batchPairs && b.pairs.length === BATCH_WORDS) {
    // A small batch (the end of a file): send a trimmed copy, so batches queued on the main
    // thread hold what they count, and keep the full-size array for the next batch.
    msg.pairs = b.pairs.slice(0, 2 * b.pairCount);
    free.push(b.pairs.buffer as ArrayBuffer);
  }
  port.postMessage(msg, [msg.pairs.buffer as ArrayBuffer, msg.unresolved.buffer as ArrayBuffer, newTerms.bytes.buffer as ArrayBuffer, newTerms.ends.buffer as ArrayBuffer]);
  externalIds.length = 0;
}

async function parseFile(seq: number, path: string, lineRange?: ByteRange): Promise<void> {
  let part = 0;
  let batch = new BatchBuilder(path);
  let t0 = performance.now();
  let counts: { lines: number; items: number } | undefined;
  const range = lineRange && { ...lineRange, onEnd: (c: { lines: number; items: number }) => (counts = c) };
  // Only a range after a file's first has line numbers the main thread must renumber.
  const renumbered = range !== undefined && range.start > 0;
  /** Adds an item to the batch; true when the batch is full. */
  const take = (item: CorpusItem): boolean => {
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
    if (renumbered && d.idFromLine) batch.lineIds.push(batch.externalIds.length, d.line!);
    batch.addDocument(d.termIds ?? inverter.invert(d), d.externalId, d.bytes);
    return batch.pairCount >= init.batchPairs;
  };
  const sendFull = async (): Promise<void> => {
    const busy = performance.now() - t0;
    await send(batch, seq, part++, false, busy);
    batch = new BatchBuilder(path);
    t0 = performance.now();
  };
  // Plain JSONL is read with synchronous calls (no promise a line); other files as a stream.
  const plainJsonl = readPlainJsonlSync(init.root, path, init.corpus, range, jsonlLines);
  if (plainJsonl) {
    for (const item of plainJsonl) if (take(item)) await sendFull();
  } else {
    for await (const item of readCorpusFile(init.root, path, init.corpus, range, jsonlLines)) if (take(item)) await sendFull();
  }
  if (counts) {
    batch.lines = counts.lines;
    batch.items = counts.items;
  }
  await send(batch, seq, part, true, performance.now() - t0);
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
    const { writeDocOrderPostings } = await import('../../merge/doc-order-postings.js');
    const t0 = performance.now();
    const written = writeDocOrderPostings(new Uint32Array(m.pairs, 0, 2 * m.count), m.count, m.docBases, m.layout, m.path, m.scratch);
    reply = { type: 'postings', writeMs: performance.now() - t0, ...written };
  } catch (err) {
    reply = { type: 'postings-error', message: (err as Error)?.message ?? String(err), code: (err as NodeJS.ErrnoException)?.code };
  }
  port.postMessage(reply);
}

async function main(): Promise<void> {
  for (;;) {
    while (tasks.length === 0 && !stopping) await new Promise<void>((resolve) => (taskWaiter = resolve));
    taskWaiter = undefined;
    if (stopping) break;
    const task = tasks.shift()!;
    await parseFile(task.seq, task.path, task.range);
  }
  port.close();
}

const data = workerData as ParseWorkerInit | { deferred: true };
if (!('deferred' in data)) setUp(data);
else port.postMessage({ type: 'loaded' } satisfies FromWorker);
