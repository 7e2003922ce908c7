/**
 * The parse workers: hands out the crawl's parse tasks (files, or ranges of big JSONL files) in
 * order, in groups (small files together), and yields the batches they post in crawl order
 * (task sequence, then part), whatever order they arrive in. A worker posts its batches in
 * bundles (BatchBundle) and may have `credits` bundles outstanding; consuming a bundle's
 * batches returns its credit (SyncSend).
 */
import { Worker } from 'node:worker_threads';
import { batchArrayWords, type BatchBundle, type BlockPostingsReply, type BlockPostingsRequest, type FromWorker, type OwnLexiconMessage, type ParsedBatch, type ParseWorkerInit, type ToWorker } from './parse-messages.js';
import { workerScript } from '../../runtime/worker-script.js';
import type { ParseTask } from './jsonl-ranges.js';
import type { RawTokenBytes } from '../scan/raw-token-list.js';
import { releaseBuffers } from '../../runtime/release-buffers.js';
import { integerFromEnv } from '../../runtime/env-knobs.js';
import { newSharedTermIds, SharedTermIds } from '../fill/shared-term-ids.js';
import { takeSpareWorker } from './parse-worker-spares.js';

/**
 * Groups of tasks a worker holds (the one it parses included; one more while they are groups of
 * small files, see dispatch). One: a second queued file would sit behind a slow first one while other workers starve. Measured on the H100 machine (15 workers, 2 GB
 * of 8 MB files): with 2 or 3 the workers' batches run so far ahead of crawl
 * order that they wait for credits (0.5-1.3 s and 4.8-5.0 s a worker) and the build is slower.
 */
const TASKS_AHEAD = 1;
/** How long a busy worker has to stop between documents when the pool closes early, before it is terminated where it is. */
const ABORT_GRACE_MS = 5000;

/** GPUINDEX_TASKS_AHEAD: groups of tasks queued at each worker (a benchmark knob, 1 to 8; default TASKS_AHEAD). */
export function tasksAheadFromEnv(): number {
  return integerFromEnv('GPUINDEX_TASKS_AHEAD', 1, 8) ?? TASKS_AHEAD;
}

/**
 * GPUINDEX_SMALL_FILES_TOGETHER=0: one batch a small file even where they could share one
 * (ParseWorkerInit.smallFilesTogether); a benchmark and test knob, the index is the same.
 */
export function smallFilesTogetherFromEnv(): boolean {
  return integerFromEnv('GPUINDEX_SMALL_FILES_TOGETHER', 0, 1) !== 0;
}

export interface WorkerTimes {
  busyMs: number;
  idleMs: number;
  batches: number;
  /** performance.now() when the worker's first and last batches arrived (start-up and end of the parse, in the summary). */
  firstBatchAt?: number;
  lastBatchAt?: number;
  /** performance.now() (this thread's clock) when the worker's code began running. */
  startedAt?: number;
  /** Workers filling blocks of their own: what they waited for blocks they handed over, while parsing and at their end. */
  blockWaitMs?: number;
  endWaitMs?: number;
}

/** A message of batches from a worker (BatchBundle), while its batches are consumed. */
interface Bundle {
  worker: number;
  /** Whether it arrived ahead of crawl order (and counts in bufferedBytes until its batches are all taken). */
  buffered: boolean;
  /** Whether the worker already got its credit back (buffered within the limit). */
  credited: boolean;
  bytes: number;
  pairs: Uint32Array;
  batches: number;
  taken: number;
  consumed: number;
}

/** A batch as the pool hands it out: its worker, and the bundle it came in. */
export interface Arrival {
  batch: ParsedBatch;
  worker: number;
  buffered: boolean;
  credited: boolean;
  bundle: Bundle;
}

/** A group of tasks handed to a worker in one message: its last task's sequence number. */
interface Group {
  end: number;
  /** Small files: a worker may hold a second such group (see dispatch). */
  small: boolean;
}

/** A file at most this large may share a group with others. */
const SMALL_TASK_BYTES = 256 << 10;
/** A group's bytes: at most this, and at most a share of what is left to hand out (see nextGroup). */
const MAX_GROUP_BYTES = 1 << 20;
const MAX_GROUP_TASKS = 4096;

const EMPTY_TERMS: RawTokenBytes = { bytes: new Uint8Array(0), ends: new Uint32Array(0) };

/** The Map key of batch (seq, part): a number, not a string (a crawl of small files makes one a file). */
const batchKey = (seq: number, part: number): number => seq * 0x200000 + part;

export class ParsePool {
  private readonly workers: Worker[] = [];
  /** Each worker's groups of tasks not yet fully posted back, in order. */
  private readonly groups: Group[][];
  private nextFile: number;
  /** File bytes of the tasks not yet handed out. */
  private bytesLeft = 0;
  private readonly arrived = new Map<number, Arrival>();
  /** Bytes (queuedBatchBytes) of the batches that arrived ahead of crawl order and wait in `arrived`. */
  private bufferedBytes = 0;
  /** Pairs arrays of consumed batches, handed out again with credits (to any worker). */
  private readonly spare: ArrayBuffer[] = [];
  private readonly batchArrayBytes: number;
  private expected: { seq: number; part: number };
  private wake?: () => void;
  private failure?: Error;
  readonly times: WorkerTimes[];
  /** Each worker's WebAssembly raw-token table bytes, as its latest batch reported (they only grow). */
  readonly scanTableBytes: number[];
  /** Each worker's local -> global term id table, shared with it (the main thread fills them). */
  readonly termIds: SharedTermIds[] = [];

  /**
   * `maxBufferedBytes` bounds the batches held ahead of crawl order (their queuedBatchBytes,
   * pairs arrays and document strings): within it, a worker gets a
   * batch's credit back as soon as the batch arrives, so workers run ahead of a slow file; past
   * it, credits come back only as batches are consumed. Parsing starts at file `firstFile`
   * (a resumed build); batches keep their crawl-wide sequence numbers.
   */
  /**
   * `keptWorkers`: workers 0 .. keptWorkers - 1 are not retired when their tasks are done, so
   * that they can be handed the build's one block (writeBlockPostings) until releaseKept().
   */
  constructor(
    private readonly tasks: readonly ParseTask[],
    count: number,
    init: Omit<ParseWorkerInit, 'globalTermIds'>,
    private readonly maxBufferedBytes: number,
    firstFile = 0,
    private keptWorkers = 0,
  ) {
    this.nextFile = firstFile;
    this.batchArrayBytes = 4 * batchArrayWords(init.batchPairs);
    this.expected = { seq: firstFile, part: 0 };
    this.groups = Array.from({ length: count }, () => []);
    for (let i = firstFile; i < tasks.length; i++) this.bytesLeft += tasks[i]!.bytes;
    this.times = Array.from({ length: count }, () => ({ busyMs: 0, idleMs: 0, batches: 0 }));
    this.scanTableBytes = new Array<number>(count).fill(0);
    const together = smallFilesTogetherFromEnv();
    for (let w = 0; w < count; w++) {
      const resourceLimits = init.maxYoungGenerationMb ? { maxYoungGenerationSizeMb: init.maxYoungGenerationMb } : undefined;
      const termIds = new SharedTermIds(newSharedTermIds(), count > 1);
      this.termIds.push(termIds);
      // With one worker, the worker bounds the parse and this thread waits for its batches
      // (mail: ~190 of ~560 ms), so this thread maps every pair (ParsedBatch.localIds): the
      // worker's id lookups took it longer than the mapping takes here (mail, 2-core machine).
      const workerData: ParseWorkerInit = {
        ...init,
        globalTermIds: termIds.buffer,
        resolveIds: count > 1 && !init.ownLexicon,
        smallFilesTogether: init.smallFilesTogether === true && together,
        ...(init.ownLexicon ? { ownLexicon: { ...init.ownLexicon, worker: w } } : {}),
      };
      // A worker started ahead of the build (the CLI's) gets its set-up as its first message.
      const spare = takeSpareWorker(init.maxYoungGenerationMb);
      const worker = spare ?? new Worker(workerScript('indexer/parse/parse-worker.js'), { workerData, resourceLimits });
      if (spare) spare.postMessage({ type: 'init', init: workerData } satisfies ToWorker);
      worker.on('message', (m: FromWorker) => this.onMessage(w, m));
      worker.on('error', (err: unknown) => this.fail(err instanceof Error ? err : new Error(String(err))));
      worker.on('exit', (code) => {
        if (code !== 0 && !this.closed && this.retired[w] === undefined) this.fail(new Error(`parse worker ${w} exited with code ${code}`));
      });
      this.workers.push(worker);
    }
    this.own = init.ownLexicon !== undefined;
    this.lexicons = new Countdown(count);
    this.finished = new Countdown(count);
    this.ahead = tasksAheadFromEnv();
    for (let w = 0; w < count; w++) this.dispatch(w);
    // More workers than tasks: those without any are done already.
    for (let w = 0; w < count; w++) if (this.groups[w]!.length === 0 && w >= keptWorkers) this.retire(w);
  }

  /** Workers keep their own lexicons (ParseWorkerInit.ownLexicon). */
  private readonly own: boolean;
  /** ownLexicon: workers told to stop (they finish their blocks and send their lexicons first). */
  private readonly stopped: boolean[] = [];
  /** ownLexicon: receives each worker's runs, blocks for the GPU thread and lexicon. */
  onOwnMessage?: (worker: number, m: OwnLexiconMessage) => void;
  private readonly lexicons: Countdown;
  private readonly finished: Countdown;

  /** ownLexicon: settles once every worker has sent its lexicon (rejects if the pool fails first). */
  get lexiconsSent(): Promise<void> {
    return this.lexicons.done;
  }

  /** ownLexicon: settles once every worker has written its last run, after its lexicon (rejects if the pool fails first). */
  get workersFinished(): Promise<void> {
    return this.finished.done;
  }

  /**
   * A worker with nothing left to parse: terminated at once, or with its own lexicon told to
   * stop, so that it seals its last block and sends its lexicon (then it is terminated).
   */
  private retire(w: number): void {
    if (!this.own) {
      this.retired[w] ??= this.workers[w]!.terminate();
      return;
    }
    if (this.stopped[w]) return;
    this.stopped[w] = true;
    this.post(w, { type: 'stop' });
  }

  /** ownLexicon: block `block` that worker w handed over is written (or failed); it may refill it. */
  blockDone(w: number, block: number, error?: string): void {
    this.post(w, error === undefined ? { type: 'block-done', block } : { type: 'block-done', block, error });
  }

  private readonly ahead: number;

  private closed = false;
  /**
   * Workers terminated as soon as they had sent their last batch and no task was left: tearing
   * down a worker's heap takes a while (15 at once: 0.1-0.2 s on the H100 machine, after the
   * last batch), so it starts while the others finish and the last blocks sort.
   */
  private readonly retired: (Promise<number> | undefined)[] = [];

  private post(w: number, m: ToWorker, transfer?: ArrayBuffer[]): void {
    this.workers[w]!.postMessage(m, transfer);
  }

  /**
   * Hands worker w groups of tasks until it holds `ahead` (GPUINDEX_TASKS_AHEAD), or one more
   * when all it holds are groups of small files: it then has the next group before it finishes
   * one, instead of idling for a round trip through this thread, which may be busy filling.
   */
  private dispatch(w: number): void {
    const held = this.groups[w]!;
    while (this.nextFile < this.tasks.length && (held.length < this.ahead || (held.length === this.ahead && held.every((g) => g.small)))) {
      held.push(this.nextGroup(w));
    }
  }

  /**
   * The next group: a task alone, or consecutive small files (SMALL_TASK_BYTES each at most) up
   * to MAX_GROUP_BYTES, and at most a quarter of each worker's share of the bytes left, so
   * the workers finish together (and a small crawl still goes to every worker).
   */
  private nextGroup(w: number): Group {
    const first = this.nextFile;
    const task = this.tasks[first]!;
    let end = first;
    let bytes = task.bytes;
    const small = task.range === undefined && task.bytes <= SMALL_TASK_BYTES;
    if (small) {
      const limit = Math.min(MAX_GROUP_BYTES, this.bytesLeft / (4 * this.workers.length));
      while (end + 1 < this.tasks.length && end + 1 - first < MAX_GROUP_TASKS) {
        const t = this.tasks[end + 1]!;
        if (t.range !== undefined || t.bytes > SMALL_TASK_BYTES || bytes + t.bytes > limit) break;
        bytes += t.bytes;
        end++;
      }
    }
    this.nextFile = end + 1;
    this.bytesLeft -= bytes;
    const paths = new Array<string>(end + 1 - first);
    for (let i = first; i <= end; i++) paths[i - first] = this.tasks[i]!.path;
    const range = task.range;
    this.post(w, range ? { type: 'tasks', first, paths, start: range.start, end: range.end } : { type: 'tasks', first, paths });
    return { end, small };
  }

  private fail(err: Error): void {
    this.failure ??= err;
    this.lexicons.fail(err);
    this.finished.fail(err);
    this.wake?.();
    for (const reply of this.postingsReply.values()) reply({ type: 'postings-error', message: err.message });
  }

  /** The workers writing postings.bin (or a part of it), by worker. */
  private readonly postingsReply = new Map<number, (m: BlockPostingsReply) => void>();

  /**
   * The kept workers from `from` on are not needed (the crawl did not fit one block, or its
   * postings need fewer threads): those with nothing left to parse are retired, the others as
   * their tasks end.
   */
  releaseKept(from = 0): void {
    const kept = this.keptWorkers;
    this.keptWorkers = Math.min(kept, from);
    for (let w = from; w < kept; w++) if (this.groups[w]!.length === 0) this.retire(w);
  }

  /**
   * Hands the build's one block to kept worker `w` (its tasks done) to write as postings.bin, or
   * the request's part of it; `scratch`, and `pairs` unless shared, are transferred. Resolves
   * with what it wrote; rejects with the worker's error (its system code kept, so a full disk
   * reads as one).
   */
  writeBlockPostings(request: Omit<BlockPostingsRequest, 'type'>, w = 0): Promise<Exclude<BlockPostingsReply, { type: 'postings-error' }>> {
    return new Promise((resolve, reject) => {
      if (this.failure) return reject(this.failure);
      this.postingsReply.set(w, (m) => {
        this.postingsReply.delete(w);
        if (m.type === 'postings-error') reject(Object.assign(new Error(m.message), m.code !== undefined ? { code: m.code } : {}));
        else resolve(m);
      });
      const transfer = [...(request.pairs instanceof ArrayBuffer ? [request.pairs] : []), ...(request.scratch ? [request.scratch] : [])];
      this.post(w, { type: 'postings', ...request } satisfies ToWorker, transfer);
    });
  }

  private onMessage(w: number, m: FromWorker): void {
    if (m.type === 'loaded') return; // a spare taken before it said so (parse-worker-spares.ts)
    if (m.type === 'aborted') {
      this.abortAnswered[w]?.();
      return;
    }
    if (m.type === 'error') {
      this.fail(new Error(`parse worker ${w}: ${m.message}`));
      return;
    }
    if (m.type === 'postings' || m.type === 'postings-part' || m.type === 'postings-error') {
      this.postingsReply.get(w)?.(m);
      return;
    }
    if (m.type === 'finished') {
      if (m.blockWaitMs !== undefined) this.times[w]!.blockWaitMs = m.blockWaitMs;
      if (m.endWaitMs !== undefined) this.times[w]!.endWaitMs = m.endWaitMs;
      this.retired[w] ??= this.workers[w]!.terminate();
      this.finished.tick();
      return;
    }
    if (m.type === 'run' || m.type === 'block' || m.type === 'lexicon' || m.type === 'lexicon-spilled') {
      try {
        this.onOwnMessage?.(w, m);
      } catch (err) {
        this.fail(err instanceof Error ? err : new Error(String(err)));
      }
      if (m.type === 'lexicon') this.lexicons.tick();
      return;
    }
    const t = this.times[w]!;
    t.lastBatchAt = performance.now();
    t.firstBatchAt ??= t.lastBatchAt;
    if (m.workerStartedAt !== undefined) t.startedAt = m.workerStartedAt - performance.timeOrigin;
    t.busyMs += m.busyMs;
    t.idleMs += m.idleMs;
    t.batches += m.batches.length;
    this.scanTableBytes[w] = m.scanTableBytes;
    const head = m.batches[0]!;
    const buffered = !(head.seq === this.expected.seq && head.part === this.expected.part);
    const bytes = queuedBundleBytes(m);
    const credited = buffered && this.bufferedBytes + bytes <= this.maxBufferedBytes;
    if (buffered) this.bufferedBytes += bytes;
    const bundle: Bundle = { worker: w, buffered, credited, bytes, pairs: m.pairs, batches: m.batches.length, taken: 0, consumed: 0 };
    let p = 0;
    let u = 0;
    let d = 0;
    const one = m.batches.length === 1;
    const afterTerms = m.firstNewTerm + m.newTerms.ends.length;
    for (let i = 0; i < m.batches.length; i++) {
      const h = m.batches[i]!;
      const batch: ParsedBatch = {
        type: 'batch',
        seq: h.seq,
        part: h.part,
        last: h.last,
        firstNewTerm: i === 0 ? m.firstNewTerm : afterTerms,
        newTerms: i === 0 ? m.newTerms : EMPTY_TERMS,
        pairs: one ? m.pairs.subarray(0, 2 * h.pairCount) : m.pairs.subarray(2 * p, 2 * (p + h.pairCount)),
        pairCount: h.pairCount,
        unresolved: one ? m.unresolved : m.unresolved.subarray(u, u + h.unresolvedCount),
        externalIds: one ? m.externalIds : m.externalIds.slice(d, d + h.docs),
        path: h.path,
        lengths: one ? m.lengths : m.lengths.subarray(d, d + h.docs),
        ...(m.titleLengths ? { titleLengths: one ? m.titleLengths : m.titleLengths.subarray(d, d + h.docs) } : {}),
        bytes: h.bytes,
        skips: h.skips ?? [],
        warnings: h.warnings ?? [],
        busyMs: 0,
        idleMs: 0,
        scanTableBytes: m.scanTableBytes,
      };
      if (m.localIds) batch.localIds = true;
      if (h.lineIds) batch.lineIds = h.lineIds;
      if (h.warc) batch.warc = h.warc;
      if (h.notIndexed) batch.notIndexed = h.notIndexed;
      if (h.endSeq !== undefined) batch.endSeq = h.endSeq;
      if (h.lines !== undefined) {
        batch.lines = h.lines;
        batch.items = h.items;
      }
      p += h.pairCount;
      u += h.unresolvedCount;
      d += h.docs;
      this.arrived.set(batchKey(h.seq, h.part), { batch, worker: w, buffered, credited, bundle });
    }
    if (credited) this.credit(w);
    const held = this.groups[w]!;
    const tail = m.batches[m.batches.length - 1]!;
    if (tail.last && held.length > 0 && held[0]!.end === (tail.endSeq ?? tail.seq)) {
      held.shift();
      this.dispatch(w);
      if (held.length === 0 && w >= this.keptWorkers) this.retire(w);
    }
    this.wake?.();
  }

  /** Gives worker w a credit, with a spare pairs array when there is one. */
  private credit(w: number): void {
    if (this.retired[w] !== undefined) return;
    const buffer = this.spare.pop();
    if (buffer) this.post(w, { type: 'credit', buffer }, [buffer]);
    else this.post(w, { type: 'credit' });
  }

  /**
   * Called once the caller has consumed a batch (it must not touch batch.pairs afterwards). Once
   * a bundle's batches are all consumed: keeps its pairs array for a later credit, and returns
   * its credit if it was held back. The
   * arrays thus circulate between the workers (any worker may get any array): however far a
   * worker ran ahead, the arrays it filled are reused rather than freed into its malloc arena,
   * which would keep them resident.
   */
  consumed(a: Arrival): void {
    const b = a.bundle;
    if (++b.consumed < b.batches) return;
    const buffer = b.pairs.buffer as ArrayBuffer;
    if (buffer.byteLength === this.batchArrayBytes) this.spare.push(buffer);
    if (!b.credited) this.credit(b.worker);
  }

  /**
   * The batches in crawl order. `idle`, when given, is called while the next batch has not
   * arrived: it does a short piece of other main-thread work and returns whether more remains;
   * between pieces the event loop runs, so arriving batches are seen at once.
   */
  async *batches(idle?: () => boolean): AsyncGenerator<Arrival> {
    let idleLeft = idle !== undefined;
    while (this.expected.seq < this.tasks.length) {
      const { seq, part } = this.expected;
      const key = batchKey(seq, part);
      let got = this.arrived.get(key);
      while (!got) {
        if (this.failure) throw this.failure;
        if (idleLeft && (idleLeft = idle!())) await new Promise<void>((resolve) => setImmediate(resolve));
        else {
          await new Promise<void>((resolve) => (this.wake = resolve));
          this.wake = undefined;
          idleLeft = idle !== undefined;
        }
        got = this.arrived.get(key);
      }
      if (this.failure) throw this.failure;
      this.arrived.delete(key);
      if (++got.bundle.taken === got.bundle.batches && got.buffered) this.bufferedBytes -= got.bundle.bytes;
      this.expected = got.batch.last ? { seq: (got.batch.endSeq ?? seq) + 1, part: 0 } : { seq, part: part + 1 };
      yield got;
    }
  }

  /** Workers terminated early (done, no task left), for tests. */
  get retiredWorkers(): number {
    return this.retired.filter((r) => r !== undefined).length;
  }

  /** Workers that a close found busy: those that stopped between documents, and those terminated where they were (tests). */
  stoppedOnAbort = 0;
  terminatedBusy = 0;
  /** Busy workers' answers to 'abort', by worker. */
  private readonly abortAnswered: (() => void)[] = [];

  /**
   * A worker still parsing (the pool closes on an abort or a failure) is asked to stop between
   * documents, and terminated once it has; only one that does not answer within
   * ABORT_GRACE_MS is terminated where it is.
   */
  private async stopBusy(w: number): Promise<number> {
    const worker = this.workers[w]!;
    const answer = new Promise<'aborted' | 'exited' | 'late'>((resolve) => {
      const timer = setTimeout(() => resolve('late'), ABORT_GRACE_MS);
      const settle = (how: 'aborted' | 'exited') => {
        clearTimeout(timer);
        resolve(how);
      };
      this.abortAnswered[w] = () => settle('aborted');
      worker.once('exit', () => settle('exited'));
    });
    try {
      this.post(w, { type: 'abort' });
    } catch {
      // The worker is gone already.
    }
    const how = await answer;
    if (how === 'aborted') this.stoppedOnAbort++;
    else if (how === 'late') this.terminatedBusy++;
    return worker.terminate();
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.workers.map((_, w) => this.retired[w] ?? this.stopBusy(w)));
    const held = [...this.spare, ...new Set([...this.arrived.values()].map((a) => a.bundle.pairs.buffer))];
    this.spare.length = 0;
    this.arrived.clear();
    await releaseBuffers(held);
  }
}

/**
 * What a bundle holds while its batches wait on the main thread: its pairs array (transferred
 * whole), lengths and unresolved-pair list, its new raw tokens' bytes, and its strings (one-byte
 * V8 strings: ~16 bytes of header each, plus array slots).
 */
export function queuedBundleBytes(m: BatchBundle): number {
  let bytes = m.pairs.byteLength + m.lengths.byteLength + m.unresolved.byteLength;
  for (let i = 0; i < m.batches.length; i++) bytes += 40 + m.batches[i]!.path.length;
  for (let i = 0; i < m.externalIds.length; i++) bytes += 40 + m.externalIds[i]!.length;
  bytes += m.newTerms.bytes.byteLength + m.newTerms.ends.byteLength;
  return bytes;
}

/** A promise that settles once tick() has been called `count` times, or rejects at fail(). */
class Countdown {
  readonly done: Promise<void>;
  private resolve!: () => void;
  private reject!: (err: Error) => void;

  constructor(private left: number) {
    this.done = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // Observed by the pipeline when it waits for it; without workers' lexicons, by no one.
    this.done.catch(() => {});
  }

  tick(): void {
    if (--this.left === 0) this.resolve();
  }

  fail(err: Error): void {
    this.reject(err);
  }
}
