/**
 * openWriter(): an index that takes documents all day. Documents added are logged (fsynced
 * before add() resolves: merge/write-ahead-log.ts), buffered, and flushed into a new segment by a
 * small build of their own (buildIndex: the same analysis, sorter and run format as a crawl's)
 * when the buffer reaches `flushBytes`, at refresh() or by the refresh timer. A flushed segment
 * is searchable through writer.reader() at once; commit() makes it the index's: its files are
 * fsynced and segments.json names it under the next generation, which is what openIndex() and
 * other processes read. A crash loses nothing acknowledged: reopening removes segments no commit
 * names and replays the log after the last commit.
 *
 * Merges run in the background (merge/writer-merges.ts picks them; a worker thread writes each):
 * adds, deletes, refreshes and commits go on meanwhile. A merged segment replaces its inputs in
 * the writer's state when it is complete, with the deletes that arrived during the merge carried
 * over, and becomes the index's at the next commit, as a flushed segment does.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { join, resolve } from 'node:path';
import { availableParallelism } from 'node:os';
import { INDEX_DB, POSTINGS_FILE, type CollectionStats } from '../merge/index-store.js';
import { MANIFEST_FILE } from '../merge/manifest.js';
import { POSITIONS_FILE } from '../merge/positions-file.js';
import { SegmentReader } from '../merge/segment-reader.js';
import { fsyncPath, readSegments, segmentEntry, segmentName, SEGMENTS_FORMAT_VERSION, writeSegments, type SegmentEntry, type SegmentsManifest } from '../merge/segments.js';
import { readLog, WriteAheadLog, type LoggedOperation, type LoggedOperationBody } from '../merge/write-ahead-log.js';
import { decodeOperation, encodeOperation } from '../merge/wal-record.js';
import { readDeletes, writeDeletes } from '../merge/deletes.js';
import { DEFAULT_MERGE_POLICY, pickMergeAround, type MergePolicy } from '../merge/merge-policy.js';
import { workerScript } from '../runtime/worker-script.js';
import { acquireWriteLock, LOCK_FILE, LockHeld, type WriteLock } from '../merge/write-lock.js';
import { checkTokenizerOptions, resolveTokenizerOptions, withTitleWeightDefault } from '../indexer/analysis/tokenizer.js';
import { closeGpu, openGpu } from '../gpu/index.js';
import { buildIndex } from './build.js';
import { IndexReader } from './reader.js';
import { FeedThread, type ThreadFeed } from './feed-thread.js';
import { UserError } from './shared/errors.js';
import { checkEach, checkOptionsObject, isBoolean, isFunction, isInteger, isNonNegativeNumber, oneOf, wrongType, type Check } from './shared/check.js';
import { parseMemory, SORTER_CHOICES, type BuildOptions, type InputDocument, type SorterChoice, type TokenizerOptions } from './shared/options.js';
import { BigMap } from '../runtime/big-map.js';

export interface WriterOptions extends Pick<BuildOptions, 'stem' | 'stopwords' | 'cjk' | 'maxTokenLength' | 'titleWeight' | 'sorter' | 'onWarning'> {
  /**
   * Every segment stores its terms' positions (positions.bin: phrase and title: queries). A new
   * index takes it from here (default false); an index that exists keeps its own (built with
   * --positions or not), and a value contradicting it is refused.
   */
  positions?: boolean;
  /**
   * What the writer may add to the process's memory (RSS), e.g. '512MiB' or bytes; default
   * '1GiB', at least 256 MiB. Split by writerMemory(): the flushes' builds half (two may run at
   * once, a quarter each: one finishing its segment while the next is fed), the merges a
   * quarter (shared by the concurrent ones: the inputs' postings a merge reads whole), the buffer
   * a sixteenth (flushBytes, at most 16 MiB), the rest for the documents' ids and the merges'
   * term dictionaries.
   */
  memory?: string | number;
  /** Buffered document bytes that start a flush into a new segment. Default 16 MiB (less under a small `memory`). */
  flushBytes?: number;
  /** Milliseconds between automatic refreshes while documents are buffered; 0: refresh() only. Default 1000. */
  refreshMs?: number;
  /**
   * 0 (default): each add() is fsynced before it resolves. n > 0: one fsync every n ms for all
   * the add() calls in that window (each still resolves only once its fsync is done).
   */
  fsyncGroupMs?: number;
  /**
   * Which segments merge (merge/merge-policy.ts), in the background, whenever the segments
   * change. false: only `optimizeIndex` merges. Default DEFAULT_MERGE_POLICY.
   */
  mergePolicy?: Partial<MergePolicy> | false;
  /**
   * A flush by the refresh timer or by bytes completes in the background: the writer takes the
   * next operations (their documents inverted on a second feed thread) while the flushed
   * segment's last sort and files are written. Default: on machines of 4 cores or more. Without
   * it, operations wait for the flush: on 2 cores the threads share the same cores anyway, and
   * the wait keeps the time from an acknowledged add to its visibility lower.
   */
  backgroundFlushes?: boolean;
  /**
   * Threads that invert documents into flushes: with 2, the next segment is fed on one while
   * the flush in progress ends on the other; with 1 both share it. Default 2 on machines of 4
   * cores or more, else 1.
   */
  feedThreads?: number;
  /**
   * Back-pressure: add() and replace() wait while the feed thread is more than this many bytes
   * of documents behind what was logged, so that a flush never starts with a long backlog to
   * invert before its documents are searchable. Default flushBytes / 8.
   */
  feedLagBytes?: number;
  /** Merges running at once, each on its own worker thread. Default 2. */
  maxConcurrentMerges?: number;
  /**
   * Back-pressure: while the index has more segments than this and a merge is running, add(),
   * replace() and delete() wait for merges to complete before they are logged. Default 40.
   */
  maxSegments?: number;
  /**
   * Called when a merge has written its segment, before the segment takes its inputs' place;
   * the merge waits for the promise it returns (tests hold merges with it).
   */
  onMergeWritten?: (inputs: string[]) => Promise<void> | void;
}

export const DEFAULT_FLUSH_BYTES = 16 << 20;
export const DEFAULT_WRITER_MEMORY = 2 ** 30;

export const MIN_WRITER_MEMORY = 256 << 20;

/** How a writer divides its `memory` (bytes): see WriterOptions.memory. */
export function writerMemory(memory: number, concurrentMerges: number): { flushBytes: number; flushBuild: number; mergeInputs: number } {
  if (memory < MIN_WRITER_MEMORY) throw new UserError(`writer memory ${Math.floor(memory / 2 ** 20)} MiB is too small: a writer needs at least ${MIN_WRITER_MEMORY / 2 ** 20} MiB (a quarter of it for each flush's build)`);
  return { flushBytes: Math.min(DEFAULT_FLUSH_BYTES, Math.floor(memory / 16)), flushBuild: Math.floor(memory / 4), mergeInputs: Math.floor(memory / 4 / Math.max(1, concurrentMerges)) };
}

/** How many refreshes' durations the refresh timer looks back on. */
const RECENT_REFRESHES = 8;

/** A merge in progress wrote into a folder of this prefix (older writers); removed on open. */
const MERGING = '.merging-';

/**
 * Each writer option's check (the tokenizer's options are checked by checkTokenizerOptions),
 * before the folder is made. Typed so that a new option needs one.
 */
export const WRITER_OPTION_CHECKS: { readonly [K in Exclude<keyof WriterOptions, keyof TokenizerOptions>]-?: Check } = {
  positions: isBoolean,
  memory: (_, value) => void parseMemory(value as string),
  flushBytes: isNonNegativeNumber,
  refreshMs: isNonNegativeNumber,
  fsyncGroupMs: isNonNegativeNumber,
  mergePolicy: checkMergePolicy,
  backgroundFlushes: isBoolean,
  // The writer bounds these counts itself (feedThreads to 1..2, maxConcurrentMerges to 1 or more).
  feedThreads: isInteger,
  feedLagBytes: isNonNegativeNumber,
  maxConcurrentMerges: isInteger,
  maxSegments: isNonNegativeNumber,
  onMergeWritten: isFunction,
  sorter: oneOf(SORTER_CHOICES),
  onWarning: isFunction,
};

const MERGE_POLICY_KEYS = Object.keys(DEFAULT_MERGE_POLICY) as (keyof MergePolicy)[];

/** false, or some of MergePolicy's numbers: a factor above 1 (each tier `factor` times the one below), the rest 0 or more. */
function checkMergePolicy(name: string, value: unknown): void {
  if (value === false) return;
  const listed = `${MERGE_POLICY_KEYS.slice(0, -1).join(', ')} or ${MERGE_POLICY_KEYS.at(-1)}`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw wrongType(name, `false or an object of ${listed}`, value);
  for (const [key, v] of Object.entries(value)) {
    if (!(MERGE_POLICY_KEYS as string[]).includes(key)) throw wrongType(`${name}'s keys`, listed, key);
    const factor = key === 'factor';
    if (v !== undefined && (typeof v !== 'number' || !(factor ? v > 1 : v >= 0))) throw wrongType(`${name}.${key}`, factor ? 'a number above 1' : 'a number, 0 or more', v);
  }
}

/** The folder and every option, checked before anything is made. Throws UserError with one line. */
function checkWriterOptions(dir: unknown, options: WriterOptions): void {
  if (typeof dir !== 'string' || dir === '') throw wrongType('openWriter: dir', "the index folder's path", dir);
  checkOptionsObject('openWriter', options);
  checkEach(options, WRITER_OPTION_CHECKS);
  checkTokenizerOptions(options);
}

export async function openWriter(dir: string, options: WriterOptions = {}): Promise<IndexWriter> {
  checkWriterOptions(dir, options);
  const path = resolve(dir);
  if (!existsSync(path)) mkdirSync(path, { recursive: true });
  let lock: WriteLock;
  try {
    lock = acquireWriteLock(path);
  } catch (err) {
    if (err instanceof LockHeld) throw new UserError(err.message);
    throw err;
  }
  try {
    return new IndexWriter(path, lock, startingManifest(path, options), options);
  } catch (err) {
    lock.release();
    throw err;
  }
}

/** The committed manifest of `dir`, made for a new index, or naming a built (one-segment) index as its segment "." . */
function startingManifest(dir: string, options: WriterOptions): SegmentsManifest {
  const committed = readSegments(dir);
  if (committed) {
    checkPositions(dir, positionsOf(dir, committed), options);
    return committed;
  }
  const manifest: SegmentsManifest = { format: 'gpuindex-segments', formatVersion: SEGMENTS_FORMAT_VERSION, generation: 0, segments: [], walSeq: 0 };
  if (existsSync(join(dir, INDEX_DB))) {
    const built = new SegmentReader(dir);
    try {
      const positions = built.settings.positions === true;
      checkPositions(dir, positions, options);
      manifest.segments.push(segmentEntry('.', built.stats));
      manifest.settings = { tokenizer: built.settings.tokenizer, fields: built.settings.fields ?? null, ...(positions ? { positions } : {}) };
    } finally {
      built.close();
    }
  } else {
    // A new index only in a new or empty folder: the writer removes segment folders its
    // segments.json does not name, and a user's folder of that shape would go.
    const other = readdirSync(dir).find((name) => name !== LOCK_FILE);
    if (other !== undefined) throw new UserError(`${dir} is not a gpuindex index and is not empty (it holds ${other}): a new index is made in a new or empty folder`);
    manifest.settings = { tokenizer: resolveTokenizerOptions(withTitleWeightDefault(options)), fields: null, ...(options.positions ? { positions: true } : {}) };
  }
  return writeSegments(dir, manifest);
}

/**
 * Whether the index stores positions: its settings say, or where they do not (a segments.json
 * that records no analysis), its first segment's.
 */
function positionsOf(dir: string, manifest: SegmentsManifest): boolean {
  const said = manifest.settings?.positions;
  if (said !== undefined || manifest.segments.length === 0) return said === true;
  const first = new SegmentReader(join(dir, manifest.segments[0]!.name));
  try {
    return first.settings.positions === true;
  } finally {
    first.close();
  }
}

function checkPositions(dir: string, positions: boolean, options: WriterOptions): void {
  if (options.positions !== undefined && options.positions !== positions)
    throw new UserError(`${dir}: the index ${positions ? 'stores positions (built with --positions)' : 'stores no positions'}; the writer's positions: ${options.positions} contradicts it`);
}

/**
 * A segment as the writer holds it. Every document the writer has seen has an ordinal, given in
 * arrival order and never reused: a segment's documents have ascending ordinals (merges join
 * neighbours only), so an ordinal finds its segment and docID without a table per document.
 */
interface LiveSegment {
  /** Its manifest entry: statistics and the deletes file readers see. */
  entry: SegmentEntry;
  /** Ordinal of each docID. */
  ordinals: Uint32Array;
  /**
   * DocIDs deleted now, and those of them no deletes file holds yet (visible at the next refresh),
   * each with its operation's sequence number: a refresh makes visible the deletes up to the
   * operation it covers, not those logged while its flush completed.
   */
  deleted: Set<number>;
  unrefreshed: Map<number, number>;
  /** Its files are fsynced. */
  durable: boolean;
  merging: boolean;
}

/** A flush handed the buffer and completing in the background (IndexWriter.startRefresh). */
interface PendingFlush {
  name: string;
  ordinals: number[];
  ops: (Buffer | InputDocument[])[];
  bytes: number;
  /** The last operation it covers: searchable once it completes. */
  seq: number;
  done: Promise<Error | undefined>;
}

interface RunningMerge {
  inputs: LiveSegment[];
  /** Per input, the docIDs the merge drops (deleted as readers saw them when it started). */
  dropped: Set<number>[];
  name: string;
  done: Promise<void>;
}

export class IndexWriter {
  private committed: SegmentsManifest;
  /** The index as reader() sees it, in docID order: committed segments and those flushed or merged since. */
  private segments: LiveSegment[] = [];
  /**
   * Documents logged since the last flush: their ordinals in order, those of them deleted since
   * (they stay in the flush, as deleted documents), and each operation's log record (or its
   * documents, replayed from the log), which a flush reads only if the feed thread failed: a
   * record is a third of its documents' objects in memory.
   */
  private bufferOrdinals: number[] = [];
  private bufferedOps: (Buffer | InputDocument[])[] = [];
  /** Ordinals of documents deleted while buffered or being flushed, with the deleting operation's sequence number (0: never acknowledged). */
  private readonly bufferDeleted = new Map<number, number>();
  private bufferedBytes = 0;
  /** The next segment, built on a feed thread from the buffer's documents as they are logged. */
  private feed?: { feed: ThreadFeed; name: string };
  /**
   * Two feed threads: while one ends a flushed segment (its last sort and its files), the next
   * segment's documents are inverted on the other, and the writer takes operations meanwhile.
   */
  private readonly feedThreads: FeedThread[];
  /** The flush completing in the background (at most one: the next waits for it). */
  private pending?: PendingFlush;
  /** WriterOptions.backgroundFlushes and feedLagBytes. */
  private readonly backgroundFlushes: boolean;
  private readonly feedLagBytes: number;
  /** The flushes' sorter, once flushSorter() chose it. */
  private sorter?: SorterChoice;
  /** The block size feeds are built with; undefined once the build's plan refused it (its own choice then). */
  private feedBlockSize?: number;
  private seq: number;
  /** Each live document's ordinal, by external id (buffered ones included): a live index passes 2^24 documents. */
  private readonly live = new BigMap<string, number>();
  /**
   * The other ordinals of an id that committed segments hold more than once (a build of a crawl
   * that repeats ids; the writer itself refuses a repeat): a delete or a replace of the id takes
   * every one of its documents, not only the one `live` names.
   */
  private readonly repeated = new Map<string, number[]>();
  private nextOrdinal = 0;
  private nextSegment = 0;
  private deletesWritten = 0;
  private readonly wal: WriteAheadLog;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly refreshMs: number;
  private sorterChoice?: Promise<SorterChoice>;
  /** The automatic refresh, set when an operation leaves something unrefreshed. */
  private refreshTimer?: NodeJS.Timeout;
  /** The last refreshes' durations (ms), newest last: the timer leaves room for the slowest of them. */
  private readonly recentRefreshMs: number[] = [];
  private closed = false;
  private closing = false;
  /** close()'s promise, once it was called: operations called after it are refused. */
  private closingDone?: Promise<void>;
  private readonly merges = new Set<RunningMerge>();
  /** Segments merged away that the last commit still names: removed by the next commit. */
  private readonly obsolete = new Set<string>();
  /** The segments a commit in progress names (its fsyncs run while merges may complete): kept until the next commit like those. */
  private committing?: ReadonlySet<string>;
  /** No merge starts: the writer is closing, or a merge failed (until the next commit). */
  private mergesHeld = false;
  private readonly policy?: MergePolicy;
  private readonly memory: ReturnType<typeof writerMemory>;
  private readonly flushBytes: number;
  private readonly maxConcurrentMerges: number;
  private readonly maxSegments: number;
  /** Every segment stores positions (positions.bin). */
  private readonly positions: boolean;
  /** Grows by one whenever a refresh changes what reader() sees: a cached reader older than it is stale. */
  refreshes = 0;
  /** The sequence number of the last operation reader() sees, and of the last acknowledged (sequence()). */
  searchableSequence = 0;
  /** Bytes of segment files written by flushes and merges: with the index's size, the write amplification. */
  bytesWritten = { flushes: 0, merges: 0 };
  /**
   * Milliseconds operations spent logging (write + fsync), waiting for a flush to complete (the
   * one before the next, or all of them at refresh() and commit()), waiting on merges
   * (back-pressure), and merging (summed over merge threads).
   */
  timings = { logMs: 0, flushMs: 0, backPressureMs: 0, feedLagMs: 0, mergeMs: 0 };

  constructor(
    readonly path: string,
    private readonly lock: WriteLock,
    manifest: SegmentsManifest,
    private readonly options: WriterOptions,
  ) {
    this.committed = manifest;
    this.positions = positionsOf(path, manifest);
    this.seq = manifest.walSeq ?? 0;
    this.maxConcurrentMerges = Math.max(1, options.maxConcurrentMerges ?? 2);
    this.maxSegments = options.maxSegments ?? 40;
    this.backgroundFlushes = options.backgroundFlushes ?? availableParallelism() >= 4;
    this.memory = writerMemory(options.memory === undefined ? DEFAULT_WRITER_MEMORY : parseMemory(options.memory), this.maxConcurrentMerges);
    this.flushBytes = options.flushBytes ?? this.memory.flushBytes;
    this.feedLagBytes = options.feedLagBytes ?? Math.ceil(this.flushBytes / 8);
    // A block of about a full buffer's pairs (a token and its separator take 5 bytes or more), not
    // the largest the budget allows: a flush is small. A buffer past it gets a second block.
    this.feedBlockSize = blockFor(this.flushBytes);
    this.policy = options.mergePolicy === false ? undefined : { ...DEFAULT_MERGE_POLICY, ...options.mergePolicy };
    // Segments no commit names were flushed or merged by a writer that died: the log holds their documents.
    const named = new Set(manifest.segments.map((s) => s.name));
    for (const name of readdirSync(path)) {
      const number = /^seg-(\d+)$/.exec(name);
      if (number) this.nextSegment = Math.max(this.nextSegment, Number(number[1]) + 1);
      if ((number && !named.has(name)) || name.startsWith(MERGING)) rmSync(join(path, name), { recursive: true, force: true });
    }
    this.refreshMs = options.refreshMs ?? 1000;
    for (const s of manifest.segments) this.segments.push(this.learn(s));
    for (const op of readLog(path, this.seq)) {
      this.apply(op);
      this.seq = op.seq;
    }
    this.wal = new WriteAheadLog(path, options.fsyncGroupMs ?? 0);
    const threads = Math.max(1, Math.min(2, options.feedThreads ?? (availableParallelism() >= 4 ? 2 : 1)));
    this.feedThreads = Array.from({ length: threads }, () => new FeedThread((message) => this.warn(message)));
    this.startMerges();
  }

  private warn(message: string): void {
    this.options.onWarning?.(message);
  }

  /** Runs `task` after every operation queued before it: one operation on the index at a time. */
  private serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => {});
    return run;
  }

  /**
   * Adds documents, durably: resolves once they are in the log on disk. An id the index, the
   * buffer or the same call holds already is refused (a UserError naming it), and nothing of the
   * call is added: replace() replaces. An iterable is read whole first.
   */
  async add(docs: Iterable<InputDocument> | AsyncIterable<InputDocument>): Promise<{ added: number }> {
    this.checkOpen();
    const list: InputDocument[] = [];
    for await (const d of docs as AsyncIterable<InputDocument>) list.push(d);
    return this.serial(async () => {
      checkDocuments(list, (id) => this.live.has(id));
      if (list.length === 0) return { added: 0 };
      return { added: await this.logged({ op: 'add', docs: list }) };
    });
  }

  /** A committed segment as the writer holds it: its documents (those its deletes file names excepted) get the next ordinals. */
  private learn(s: SegmentEntry): LiveSegment {
    const r = new SegmentReader(join(this.path, s.name));
    try {
      const n = r.stats.documents;
      const gone = s.deletes ? readDeletes(r.dir, s.deletes, n) : undefined;
      const ordinals = new Uint32Array(n);
      const deleted = new Set<number>();
      for (const [local, id] of r.db.prepare('SELECT doc_id, external_id FROM docs ORDER BY doc_id').raw().iterate() as Iterable<[number, string]>) {
        ordinals[local] = this.nextOrdinal++;
        if (gone?.[local]) deleted.add(local);
        else {
          const before = this.live.get(id);
          if (before !== undefined) {
            const others = this.repeated.get(id);
            if (others) others.push(before);
            else this.repeated.set(id, [before]);
          }
          this.live.set(id, ordinals[local]!);
        }
      }
      return { entry: { ...segmentEntry(s.name, r.stats), ...(s.deletes ? { deletes: s.deletes, deleted: deleted.size } : {}) }, ordinals, deleted, unrefreshed: new Map(), durable: true, merging: false };
    } finally {
      r.close();
    }
  }

  /**
   * Logs an operation (resolving once it is on disk), applies it, and flushes if the buffer is
   * full; returns what apply() counted. While merges fall behind (more than maxSegments
   * segments), it first waits for them.
   */
  private async logged(op: LoggedOperationBody): Promise<number> {
    const t0 = performance.now();
    while (this.segments.length > this.maxSegments && this.merges.size > 0) await Promise.race([...this.merges].map((m) => m.done));
    this.timings.backPressureMs += performance.now() - t0;
    const docs = op.op === 'delete' ? undefined : (op.docs as InputDocument[]);
    if (docs) {
      const t = performance.now();
      await this.nextFeedThread().lagAtMost(this.feedLagBytes);
      this.timings.feedLagMs += performance.now() - t;
    }
    const t1 = performance.now();
    const entry = { seq: this.seq + 1, ...op } as LoggedOperation;
    if (docs) this.sorter ??= await this.flushSorter();
    const record = encodeOperation(entry);
    const appending = this.wal.append(entry, record);
    // The feed thread inverts the documents while this thread waits on the fsync and logs the next.
    if (docs) this.feedNext().push(docs, record);
    try {
      await appending;
    } catch (err) {
      // Fed but not acknowledged: they take ordinals in the segment as deleted documents.
      if (docs) {
        for (const d of docs) this.takeDead(d);
        this.bufferedOps.push(record);
      }
      throw err;
    }
    this.timings.logMs += performance.now() - t1;
    this.seq = entry.seq;
    const n = this.apply(entry, record);
    // A full buffer is a refresh: its flush makes the documents searchable, so the deletes before
    // them become so too. The operation is acknowledged whatever the flush does: a failed one
    // keeps the buffer for the next.
    if (this.bufferedBytes >= this.flushBytes) await this.autoRefresh();
    return n;
  }

  /** Applies a logged operation to the buffer and the delete sets. */
  private apply(op: LoggedOperation, record?: Buffer): number {
    this.scheduleRefresh();
    if (op.op === 'delete') return this.remove(op.ids, op.seq);
    if (op.op === 'replace') this.remove((op.docs as InputDocument[]).map((d) => d.id), op.seq);
    for (const d of op.docs as InputDocument[]) this.take(d);
    this.bufferedOps.push(record ?? (op.docs as InputDocument[]));
    return op.docs.length;
  }

  /** Deletes documents by id (operation `seq`), buffered, being flushed or flushed; returns how many there were. */
  private remove(ids: readonly string[], seq: number): number {
    let n = 0;
    for (const id of ids) {
      const ordinal = this.live.get(id);
      if (ordinal === undefined) continue;
      this.live.delete(id);
      const others = this.repeated.get(id);
      if (others) this.repeated.delete(id);
      for (const o of others ? [...others, ordinal] : [ordinal]) {
        n++;
        const at = this.find(o);
        if (at) {
          at.segment.deleted.add(at.local);
          at.segment.unrefreshed.set(at.local, seq);
        } else this.bufferDeleted.set(o, seq);
      }
    }
    return n;
  }

  /** The segment and docID of a flushed document's ordinal; undefined for a buffered one or one being flushed. */
  private find(ordinal: number): { segment: LiveSegment; local: number } | undefined {
    for (let i = this.segments.length - 1; i >= 0; i--) {
      const s = this.segments[i]!;
      if (s.ordinals.length === 0 || s.ordinals[0]! > ordinal) continue;
      if (s.ordinals[s.ordinals.length - 1]! < ordinal) return undefined;
      let lo = 0;
      let hi = s.ordinals.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (s.ordinals[mid]! < ordinal) lo = mid + 1;
        else hi = mid;
      }
      if (s.ordinals[lo] !== ordinal) throw new Error(`writer: ordinal ${ordinal} is in no document of ${s.entry.name}`);
      return { segment: s, local: lo };
    }
    return undefined;
  }

  private take(d: InputDocument): void {
    const ordinal = this.nextOrdinal++;
    this.bufferOrdinals.push(ordinal);
    this.live.set(d.id, ordinal);
    this.bufferedBytes += docBytes(d);
  }

  /** A document the next segment holds but no operation acknowledged: an ordinal, deleted at once. */
  private takeDead(d: InputDocument): void {
    const ordinal = this.nextOrdinal++;
    this.bufferOrdinals.push(ordinal);
    this.bufferDeleted.set(ordinal, 0);
    this.bufferedBytes += docBytes(d);
  }

  /** The feed of the next segment, started (with what the buffer holds already, e.g. replayed from the log) if there is none. */
  private feedNext(): ThreadFeed {
    if (this.feed) return this.feed.feed;
    const name = segmentName(this.nextSegment++);
    const feed = this.nextFeedThread().feed(name, { output: join(this.path, name), options: this.flushOptions(this.sorter ?? 'cpu'), blockSize: this.feedBlockSize });
    if (this.bufferOrdinals.length > 0) feed.push(documentsOf(this.bufferedOps));
    this.feed = { feed, name };
    return feed;
  }

  /** The thread the next documents go to: the feed's, or one not ending a segment (the flush in progress) if there is one. */
  private nextFeedThread(): FeedThread {
    return this.feed?.feed.feedThread ?? this.feedThreads.find((t) => !t.ending) ?? this.feedThreads[0]!;
  }

  /** What every flush's build is given, on the feed thread or here: the index's analysis, the sorter, the flushes' memory. */
  private flushOptions(sorter: SorterChoice): Partial<BuildOptions> {
    return { ...this.analysis(), sorter, memory: this.memory.flushBuild };
  }

  /** A flush's build of the buffer on this thread (the feed thread failed), into the segment folder `name`. */
  private async buildSegment(input: InputDocument[], name: string, blockSize: number | undefined) {
    return buildIndex({ ...this.flushOptions(await this.flushSorter()), input, output: join(this.path, name), blockSize, onWarning: this.options.onWarning });
  }

  /**
   * Deletes documents by id, durably (logged before it resolves); visible to reader() after the
   * next refresh, to openIndex() after the next commit. Ids the index does not hold are ignored.
   */
  async delete(ids: Iterable<string>): Promise<{ deleted: number }> {
    this.checkOpen();
    const list = [...ids];
    return this.serial(async () => {
      if (list.length === 0) return { deleted: 0 };
      return { deleted: await this.logged({ op: 'delete', ids: list }) };
    });
  }

  /**
   * Adds documents, each replacing the document of the same id if the index holds one: the
   * delete and the add become visible together, at the same refresh.
   */
  async replace(docs: Iterable<InputDocument> | AsyncIterable<InputDocument>): Promise<{ added: number }> {
    this.checkOpen();
    const list: InputDocument[] = [];
    for await (const d of docs as AsyncIterable<InputDocument>) list.push(d);
    return this.serial(async () => {
      checkDocuments(list, () => false);
      if (list.length === 0) return { added: 0 };
      return { added: await this.logged({ op: 'replace', docs: list }) };
    });
  }

  /**
   * The sorter of flushes: 'auto' asks for a GPU once, not at every flush (a flush is small and
   * frequent; the question costs an adapter request each time).
   */
  private flushSorter(): Promise<SorterChoice> {
    const chosen = this.options.sorter ?? 'auto';
    if (chosen !== 'auto') return Promise.resolve(chosen);
    this.sorterChoice ??= openGpu({ rejectSoftware: true }).then((gpu) => {
      if (typeof gpu === 'string') {
        this.warn(`no GPU (${gpu}); flushes sort on the CPU`);
        return 'cpu';
      }
      closeGpu();
      return 'auto';
    });
    return this.sorterChoice;
  }

  /**
   * Starts a refresh: waits for the flush in progress (one at a time), then hands the buffer to a
   * flush that completes in the background, and resolves with its completion, `done` (an error,
   * or undefined once the documents and the deletes logged before it are searchable; wrapped, or
   * the async function's promise would wait for it). Nothing
   * buffered: the deletes are made visible at once. `background`: a failure is a warning (the
   * buffer keeps its documents for the next flush).
   */
  private async startRefresh(background: boolean): Promise<{ done: Promise<Error | undefined> }> {
    await this.settle();
    clearTimeout(this.refreshTimer);
    this.refreshTimer = undefined;
    const t0 = performance.now();
    const seq = this.seq;
    if (this.bufferOrdinals.length === 0) {
      this.refreshed(seq, t0);
      return { done: Promise.resolve(undefined) };
    }
    const fed = this.feed;
    this.feed = undefined;
    const name = fed?.name ?? segmentName(this.nextSegment++);
    const flush: PendingFlush = { name, ordinals: this.bufferOrdinals, ops: this.bufferedOps, bytes: this.bufferedBytes, seq, done: Promise.resolve(undefined) };
    this.bufferOrdinals = [];
    this.bufferedOps = [];
    this.bufferedBytes = 0;
    flush.done = this.completeFlush(flush, fed?.feed, t0).finally(() => {
      if (this.pending === flush) this.pending = undefined;
    });
    this.pending = flush;
    if (background) void flush.done.then((err) => err && this.warn(`flush failed: ${err.message}`));
    return { done: flush.done };
  }

  /** A refresh by the timer or by bytes: a failure is a warning; the operations after it wait for its flush unless backgroundFlushes. */
  private async autoRefresh(): Promise<void> {
    const { done } = await this.startRefresh(true);
    if (this.backgroundFlushes) return;
    const t0 = performance.now();
    await done;
    this.timings.flushMs += performance.now() - t0;
  }

  /** Waits until no flush is in progress. */
  private async settle(): Promise<void> {
    if (!this.pending) return;
    const t0 = performance.now();
    while (this.pending) await this.pending.done;
    this.timings.flushMs += performance.now() - t0;
  }

  /**
   * A flush's segment: the feed's build ends, or where there is no feed or it failed, a build of
   * its documents. Then it joins the segments, after those flushed before it, with the documents
   * deleted meanwhile as its deleted documents from the start. A failure puts its documents back
   * in front of the buffer.
   */
  private async completeFlush(flush: PendingFlush, feed: ThreadFeed | undefined, t0: number): Promise<Error | undefined> {
    const { name, ordinals } = flush;
    const dir = join(this.path, name);
    try {
      let built = false;
      if (feed && feed.fed === ordinals.length) {
        try {
          const documents = await feed.end();
          if (documents !== ordinals.length) throw new Error(`the feed built ${documents} documents of ${ordinals.length}`);
          built = true;
        } catch (err) {
          rmSync(dir, { recursive: true, force: true });
          if (refusedBlockSize(err)) this.feedBlockSize = undefined;
          else this.warn(`flush: building from the buffer again after: ${(err as Error).message}`);
        }
      } else if (feed) {
        // Cannot happen (every buffered document is fed in order); a build of the buffer is right anyway.
        this.warn(`flush: building from the buffer again: ${feed.fed} documents fed of ${ordinals.length}`);
        await feed.end().catch(() => {});
        rmSync(dir, { recursive: true, force: true });
      }
      if (!built) {
        const docs = documentsOf(flush.ops);
        const blockSize = this.feedBlockSize === undefined ? undefined : blockFor(flush.bytes);
        await this.buildSegment(docs, name, blockSize).catch((err) => {
          // The block the writer chose may be refused by the build's plan: its own choice then.
          if (!refusedBlockSize(err)) throw err;
          rmSync(dir, { recursive: true, force: true });
          this.feedBlockSize = undefined;
          return this.buildSegment(docs, name, undefined);
        });
      }
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      this.bufferOrdinals = ordinals.concat(this.bufferOrdinals);
      this.bufferedOps = flush.ops.concat(this.bufferedOps);
      this.bufferedBytes += flush.bytes;
      // The next segment's feed lacks these documents: the next flush feeds them all again.
      this.abandonFeed();
      return err as Error;
    }
    const segment = this.flushed(name, Uint32Array.from(ordinals));
    ordinals.forEach((ordinal, local) => {
      const seq = this.bufferDeleted.get(ordinal);
      if (seq === undefined) return;
      this.bufferDeleted.delete(ordinal);
      segment.deleted.add(local);
      // Deleted after the flush started: visible at a later refresh, with what was added after it (a replace).
      if (seq > flush.seq) segment.unrefreshed.set(local, seq);
    });
    // Deleted before they were ever searchable: readers must never see them.
    if (segment.deleted.size > segment.unrefreshed.size) this.writeDeleteSet(segment, flush.seq);
    this.bytesWritten.flushes += segmentBytes(dir);
    this.segments.push(segment);
    this.refreshes++;
    this.refreshed(flush.seq, t0);
    return undefined;
  }

  /** What a refresh covering operations up to `seq` does last: their deletes visible, the timer's figures, merges. */
  private refreshed(seq: number, t0: number): void {
    this.writeDeleteSets(seq);
    this.searchableSequence = seq;
    this.recentRefreshMs.push(performance.now() - t0);
    if (this.recentRefreshMs.length > RECENT_REFRESHES) this.recentRefreshMs.shift();
    this.startMerges();
  }

  /** Drops the next segment's feed: its build ends unused and its folder goes. */
  private abandonFeed(): void {
    const fed = this.feed;
    this.feed = undefined;
    if (!fed) return;
    const dir = join(this.path, fed.name);
    void fed.feed
      .end()
      .catch(() => 0)
      .then(() => rmSync(dir, { recursive: true, force: true }));
  }

  /** A segment just written, holding the documents of `ordinals` in order. */
  private flushed(name: string, ordinals: Uint32Array): LiveSegment {
    const r = new SegmentReader(join(this.path, name));
    try {
      // Every buffered document is one docID of the segment, in order, or ordinals would lie.
      if (r.stats.documents !== ordinals.length) throw new Error(`writer: ${name} holds ${r.stats.documents} documents, ${ordinals.length} were flushed`);
      return { entry: segmentEntry(name, r.stats), ordinals, deleted: new Set(), unrefreshed: new Map(), durable: false, merging: false };
    } finally {
      r.close();
    }
  }

  /**
   * Adds a crawl (a folder or file, as `buildIndex` reads it) as one new segment built by the
   * crawl pipeline (parse workers, the GPU sorter where there is one), and commits it: a
   * backfill logs nothing, it is acknowledged by its commit. Its documents' ids are not checked
   * against the index's and it replaces none (a later replace() or delete() of such an id finds
   * the document only after the writer is reopened).
   */
  async addCrawl(input: string, build: Omit<BuildOptions, 'input' | 'output' | 'stem' | 'stopwords' | 'cjk' | 'maxTokenLength' | 'titleWeight' | 'positions'> = {}): Promise<{ added: number; generation: number }> {
    this.checkOpen();
    return this.serial(async () => {
      await this.refreshNow();
      const name = segmentName(this.nextSegment++);
      const dir = join(this.path, name);
      let summary;
      try {
        summary = await buildIndex({ ...build, ...this.analysis(), input, output: dir });
      } catch (err) {
        rmSync(dir, { recursive: true, force: true });
        throw err;
      }
      const ordinals = new Uint32Array(summary.documents);
      for (let i = 0; i < ordinals.length; i++) ordinals[i] = this.nextOrdinal++;
      this.bytesWritten.flushes += segmentBytes(dir);
      this.segments.push(this.flushed(name, ordinals));
      this.refreshes++;
      const { generation } = await this.commitNow();
      return { added: summary.documents, generation };
    });
  }

  /** The index's analysis settings (tokenizer, JSON fields, positions), which every segment is built with. */
  private analysis(): Partial<BuildOptions> {
    const fields = this.committed.settings?.fields as BuildOptions['fields'] | null | undefined;
    const tokenizer = this.committed.settings?.tokenizer as Partial<BuildOptions> | undefined;
    // A saved analysis without a title weight was built with 1 (buildIndex would default it to 2).
    return { ...tokenizer, titleWeight: tokenizer?.titleWeight ?? 1, ...(fields ? { fields } : {}), ...(this.positions ? { positions: true } : {}) };
  }

  /** Writes each segment's delete set where deletes of operations up to `seq` arrived since the last refresh, as a new file of the segment. */
  private writeDeleteSets(seq: number): void {
    for (const s of this.segments) {
      for (const at of s.unrefreshed.values()) {
        if (at > seq) continue;
        this.writeDeleteSet(s, seq);
        break;
      }
    }
  }

  /** The segment's deletes file: its deleted documents but those of operations after `seq`, which stay unrefreshed. */
  private writeDeleteSet(s: LiveSegment, seq: number): void {
    const file = `deletes-${this.committed.generation + 1}-${++this.deletesWritten}.bin`;
    const later = new Map([...s.unrefreshed].filter(([, at]) => at > seq));
    const visible = later.size === 0 ? s.deleted : new Set([...s.deleted].filter((d) => !later.has(d)));
    writeDeletes(join(this.path, s.entry.name), file, visible);
    s.entry = { ...s.entry, deletes: file, deleted: visible.size };
    s.unrefreshed = later;
    this.refreshes++;
  }

  /** Makes every document added and deleted so far searchable through reader(). */
  async refresh(): Promise<void> {
    this.checkOpen();
    return this.serial(() => this.refreshNow());
  }

  /** A refresh, waited for: a failed flush is thrown (its documents stay buffered). */
  private async refreshNow(): Promise<void> {
    const { done } = await this.startRefresh(false);
    const t0 = performance.now();
    const err = await done;
    this.timings.flushMs += performance.now() - t0;
    if (err) throw err;
  }

  /**
   * The automatic refresh after an operation: at most refreshMs after it, less what the last
   * refresh took, so that what was acknowledged is searchable within about refreshMs.
   */
  private scheduleRefresh(): void {
    if (this.refreshMs <= 0 || this.refreshTimer || this.closed) return;
    // Room for the slowest recent refresh, not the last: one slower than those before it (a merge
    // or a collection beside it) would otherwise be the visibility's tail.
    const slowest = this.recentRefreshMs.reduce((a, b) => Math.max(a, b), 0);
    const delay = Math.max(0, this.refreshMs - Math.min(this.refreshMs / 2, 1.25 * slowest + 20));
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = undefined;
      // In the background: operations queued meanwhile wait only for the previous flush.
      if (!this.closed) void this.serial(() => this.autoRefresh()).catch((err) => this.warn(`refresh failed: ${(err as Error).message}`));
    }, delay);
    this.refreshTimer.unref();
  }

  /** The sequence number of the last acknowledged operation. */
  sequence(): number {
    return this.seq;
  }

  /**
   * Makes every operation so far the index's, durably: the next generation of segments.json,
   * naming the segments flushed and merged since the last. Merges running go on.
   */
  async commit(): Promise<{ generation: number }> {
    this.checkOpen();
    return this.serial(() => this.commitNow());
  }

  private async commitNow(): Promise<{ generation: number }> {
    // A failed merge is tried again at a commit (disk space may have come back).
    if (!this.closing) this.mergesHeld = false;
    await this.refreshNow();
    const entries = this.segments.map((s) => s.entry);
    const before = this.committed.segments;
    const same = entries.length === before.length && entries.every((e, i) => e.name === before[i]!.name && e.deletes === before[i]!.deletes);
    if (same && this.seq === (this.committed.walSeq ?? 0)) return { generation: this.committed.generation };
    const named = new Map(before.map((e) => [e.name, e]));
    // The segments of `entries`: a merge completing during the fsyncs changes this.segments,
    // and leaves the inputs this commit names on disk until the next commit (this.committing).
    const segments = [...this.segments];
    this.committing = new Set(entries.map((e) => e.name));
    try {
      await this.fsyncSegments(segments, named);
    } finally {
      this.committing = undefined;
    }
    const next: SegmentsManifest = { ...this.committed, generation: this.committed.generation + 1, segments: entries, walSeq: this.seq };
    this.committed = writeSegments(this.path, next);
    // Every logged operation is in a committed segment now.
    this.wal.truncate();
    const stillNamed = new Set(entries.map((e) => e.name));
    for (const name of this.obsolete) {
      if (stillNamed.has(name)) continue;
      this.removeSegmentFiles(name);
      this.obsolete.delete(name);
    }
    return { generation: next.generation };
  }

  /**
   * Makes the files of `segments` durable (those not yet, and the folders of those whose deletes
   * file changed since the last commit, `named`), then the index folder: all at once and off
   * this thread, so the event loop goes on (merges complete, the feed thread is heard) and
   * concurrent fsyncs share journal commits.
   */
  private async fsyncSegments(segments: readonly LiveSegment[], named: ReadonlyMap<string, SegmentEntry>): Promise<void> {
    const syncs: Promise<void>[] = [];
    for (const s of segments) {
      const dir = join(this.path, s.entry.name);
      if (!s.durable) {
        const files = readdirSync(dir, { withFileTypes: true }).filter((f) => f.isFile());
        syncs.push(
          Promise.all(files.map((f) => fsyncPath(join(dir, f.name))))
            .then(() => fsyncPath(dir))
            .then(() => void (s.durable = true)),
        );
      } else if (s.entry.deletes !== named.get(s.entry.name)?.deletes) syncs.push(fsyncPath(dir)); // deletes files are fsynced as written; their names here
    }
    await Promise.all(syncs);
    await fsyncPath(this.path);
  }

  /** Starts the merges the policy picks among segments no merge holds, up to maxConcurrentMerges. */
  private startMerges(): void {
    if (!this.policy || this.mergesHeld) return;
    while (this.merges.size < this.maxConcurrentMerges) {
      const range = pickMergeAround(
        this.segments.map((s) => ({ documents: s.entry.documents, deleted: s.deleted.size - s.unrefreshed.size, busy: s.merging })),
        this.policy,
      );
      if (!range) return;
      this.startMerge(this.segments.slice(range[0], range[1]));
    }
  }

  /** Merges `inputs` (neighbours) on a worker thread; the result replaces them when complete. */
  private startMerge(inputs: LiveSegment[]): void {
    for (const s of inputs) s.merging = true;
    // The merge drops the deletes readers see now (each input's deletes file); later ones are carried over.
    const dropped = inputs.map((s) => new Set([...s.deleted].filter((d) => !s.unrefreshed.has(d))));
    const name = segmentName(this.nextSegment++);
    const merge: RunningMerge = { inputs, dropped, name, done: Promise.resolve() };
    if (inputs.every((s, i) => dropped[i]!.size === s.entry.documents)) {
      // Nothing of them is left to merge.
      this.mergeComplete(merge, undefined);
      return;
    }
    const out = join(this.path, name);
    merge.done = (async () => {
      try {
        mkdirSync(out);
        const task = { segments: inputs.map((s) => ({ dir: join(this.path, s.entry.name), deletes: s.entry.deletes })), out, settings: {}, memoryBytes: this.memory.mergeInputs, fsync: true, background: true };
        const t0 = performance.now();
        const stats = await runMergeThread(task).finally(() => (this.timings.mergeMs += performance.now() - t0));
        this.bytesWritten.merges += segmentBytes(out);
        await this.options.onMergeWritten?.(inputs.map((s) => s.entry.name));
        this.mergeComplete(merge, stats);
      } catch (err) {
        rmSync(out, { recursive: true, force: true });
        for (const s of inputs) s.merging = false;
        // Held until the next commit: a merge that failed for want of disk would fail again at once.
        this.mergesHeld = true;
        this.warn(`merge of ${inputs.map((s) => s.entry.name).join(', ')} failed, merges wait for the next commit: ${(err as Error).message}`);
      } finally {
        this.merges.delete(merge);
      }
      this.startMerges();
    })();
    this.merges.add(merge);
  }

  /**
   * Puts a merge's segment (undefined: none, every input document was deleted) in its inputs'
   * place. Deletes that arrived while it ran are carried over, by the documents' ordinals, as
   * deletes of the merged segment: those readers saw already in a deletes file of its own at
   * once, the rest at the next refresh.
   */
  private mergeComplete(merge: RunningMerge, stats: CollectionStats | undefined): void {
    const at = this.segments.indexOf(merge.inputs[0]!);
    const replacing: LiveSegment[] = [];
    if (stats) {
      const ordinals = new Uint32Array(stats.documents);
      const deleted = new Set<number>();
      const unrefreshed = new Map<number, number>();
      let k = 0;
      for (const [i, s] of merge.inputs.entries()) {
        const dropped = merge.dropped[i]!;
        for (let d = 0; d < s.ordinals.length; d++) {
          if (dropped.has(d)) continue;
          if (s.deleted.has(d)) {
            deleted.add(k);
            const seq = s.unrefreshed.get(d);
            if (seq !== undefined) unrefreshed.set(k, seq);
          }
          ordinals[k++] = s.ordinals[d]!;
        }
      }
      if (k !== stats.documents) throw new Error(`writer: merged ${merge.name} holds ${stats.documents} documents, its inputs ${k} live ones`);
      const segment: LiveSegment = { entry: segmentEntry(merge.name, stats), ordinals, deleted, unrefreshed, durable: true, merging: false };
      const seen = [...deleted].filter((d) => !unrefreshed.has(d));
      if (seen.length > 0) {
        const file = `deletes-${this.committed.generation + 1}-${++this.deletesWritten}.bin`;
        writeDeletes(join(this.path, merge.name), file, seen);
        segment.entry = { ...segment.entry, deletes: file, deleted: seen.length };
      }
      replacing.push(segment);
    }
    this.segments.splice(at, merge.inputs.length, ...replacing);
    // Inputs no commit names go now (a reader that has them open keeps its files); the others at the next commit.
    const named = new Set(this.committed.segments.map((e) => e.name));
    for (const s of merge.inputs) {
      if (named.has(s.entry.name) || this.committing?.has(s.entry.name)) this.obsolete.add(s.entry.name);
      else this.removeSegmentFiles(s.entry.name);
    }
    this.refreshes++;
  }

  private removeSegmentFiles(name: string): void {
    if (name === '.') for (const f of [POSTINGS_FILE, INDEX_DB, MANIFEST_FILE, POSITIONS_FILE]) rmSync(join(this.path, f), { force: true });
    else rmSync(join(this.path, name), { recursive: true, force: true });
  }

  /** Resolves once no merge runs and the policy picks none (merges started meanwhile included). */
  async waitForMerges(): Promise<void> {
    while (this.merges.size > 0) await Promise.all([...this.merges].map((m) => m.done));
  }

  /** The segments reader() sees now: each one's name, documents and deleted documents, and whether a merge holds it. */
  segmentList(): { name: string; documents: number; deleted: number; merging: boolean }[] {
    return this.segments.map((s) => ({ name: s.entry.name, documents: s.entry.documents, deleted: s.entry.deleted ?? 0, merging: s.merging }));
  }

  /** A reader of everything refreshed so far (committed or not). Close it when done. */
  reader(): IndexReader {
    return new IndexReader(this.path, { ...this.committed, segments: this.segments.map((s) => s.entry) });
  }

  /**
   * Lets the running merges (and those they lead to) complete, commits, and releases the index to
   * other writers. Every call gets the same promise: a second close() while the first runs must not
   * close the log's descriptor again (or one reused since) nor refuse the first one's work.
   */
  close(): Promise<void> {
    return (this.closingDone ??= this.closeNow());
  }

  private async closeNow(): Promise<void> {
    clearTimeout(this.refreshTimer);
    try {
      await this.serial(async () => {
        await this.refreshNow();
        await this.waitForMerges();
        this.mergesHeld = this.closing = true;
        await this.commitNow();
      });
    } finally {
      this.closed = true;
      this.mergesHeld = true;
      await this.waitForMerges().catch(() => {});
      this.wal.close();
      await Promise.all(this.feedThreads.map((t) => t.close()));
      this.lock.release();
    }
  }

  private checkOpen(): void {
    if (this.closed || this.closingDone) throw new UserError('the writer is closed');
  }
}

/** The build's plan refused the block size it was given. */
function refusedBlockSize(err: unknown): boolean {
  return err instanceof UserError && err.message.includes('--block-size');
}

/** The pairs of a block that holds `bytes` of documents. */
function blockFor(bytes: number): number {
  return Math.min(1 << 22, Math.max(1 << 14, Math.ceil(bytes / 5)));
}

/** Runs merge/segment-merge-worker.ts on `task`: the merged segment's statistics. */
function runMergeThread(task: object): Promise<CollectionStats> {
  return new Promise<CollectionStats>((resolve, reject) => {
    const worker = new Worker(workerScript('merge/segment-merge-worker.js'), { workerData: task });
    let result: CollectionStats | undefined;
    worker.once('message', (m: { stats: CollectionStats }) => (result = m.stats));
    worker.once('error', reject);
    worker.once('exit', (code) => (code === 0 && result ? resolve(result) : reject(new Error(`segment merge thread exited with code ${code}`))));
  });
}

/** The documents of buffered operations (log records or document arrays), in order. */
function documentsOf(ops: readonly (Buffer | InputDocument[])[]): InputDocument[] {
  return ops.flatMap((o) => (Array.isArray(o) ? o : ((decodeOperation(o) as { docs: InputDocument[] }).docs)));
}

function segmentBytes(dir: string): number {
  let total = 0;
  for (const f of readdirSync(dir, { withFileTypes: true })) if (f.isFile()) total += statSync(join(dir, f.name)).size;
  return total;
}

function docBytes(d: InputDocument): number {
  return d.text.length + (d.title?.length ?? 0) + d.id.length;
}

/** Each document has a string id and text, and no id is given twice or taken (`taken`). */
function checkDocuments(list: readonly InputDocument[], taken: (id: string) => boolean): void {
  const seen = new Set<string>();
  for (const [i, d] of list.entries()) {
    if (!d || typeof d.id !== 'string' || typeof d.text !== 'string') throw new UserError(`document ${i} needs string "id" and "text"`);
    // A segment stores ids as UTF-8, which a lone surrogate does not survive: reopened, the writer
    // would know the document by another id, and a delete or replace by this one would miss it.
    if (!(d.id as unknown as { isWellFormed(): boolean }).isWellFormed()) throw new UserError(`document id ${JSON.stringify(d.id)} holds a lone surrogate: ids are stored as UTF-8`);
    if (seen.has(d.id)) throw new UserError(`document id ${JSON.stringify(d.id)} is given twice`);
    if (taken(d.id)) throw new UserError(`add: a document with id ${JSON.stringify(d.id)} is in the index already (replace() replaces it)`);
    seen.add(d.id);
  }
}
