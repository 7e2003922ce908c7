/**
 * The parse workers: hands out the crawl's parse tasks (files, or ranges of big JSONL files) in
 * order, and yields the batches they post in crawl order (task sequence, then part), whatever
 * order they arrive in. Each worker may have `credits` batches outstanding; consuming a batch
 * returns its credit (SyncSend).
 */
import { Worker } from 'node:worker_threads';
import { batchArrayWords, type BlockPostingsReply, type BlockPostingsRequest, type FromWorker, type ParsedBatch, type ParseWorkerInit, type ToWorker } from './parse-messages.js';
import { workerScript } from '../../runtime/worker-script.js';
import type { ParseTask } from './jsonl-ranges.js';
import { releaseBuffers } from '../../runtime/release-buffers.js';
import { integerFromEnv } from '../../runtime/env-knobs.js';
import { newSharedTermIds, SharedTermIds } from '../fill/shared-term-ids.js';
import { takeSpareWorker } from './parse-worker-spares.js';

/**
 * Files a worker holds (the one it parses included). One: a second queued file would sit behind
 * a slow first one while other workers starve. Measured on the H100 machine (15 workers, 2 GB
 * of 8 MB files): with 2 or 3 the workers' batches run so far ahead of crawl
 * order that they wait for credits (0.5-1.3 s and 4.8-5.0 s a worker) and the build is slower.
 */
const TASKS_AHEAD = 1;

/** GPUINDEX_TASKS_AHEAD: tasks queued at each worker (a benchmark knob, 1 to 8; default TASKS_AHEAD). */
export function tasksAheadFromEnv(): number {
  return integerFromEnv('GPUINDEX_TASKS_AHEAD', 1, 8) ?? TASKS_AHEAD;
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
}

interface Arrival {
  batch: ParsedBatch;
  worker: number;
  /** Whether it arrived ahead of crawl order (and counts in bufferedBytes until consumed). */
  buffered: boolean;
  /** Whether the worker already got this batch's credit back (buffered within the limit). */
  credited: boolean;
}

export class ParsePool {
  private readonly workers: Worker[] = [];
  private readonly pendingTasks: number[];
  private nextFile: number;
  private readonly arrived = new Map<string, Arrival>();
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
   * `keepFirstWorker`: worker 0 is not retired when its tasks are done, so that it can be handed
   * the build's one block (writeBlockPostings).
   */
  constructor(
    private readonly tasks: readonly ParseTask[],
    count: number,
    init: Omit<ParseWorkerInit, 'globalTermIds'>,
    private readonly maxBufferedBytes: number,
    firstFile = 0,
    private readonly keepFirstWorker = false,
  ) {
    this.nextFile = firstFile;
    this.batchArrayBytes = 4 * batchArrayWords(init.batchPairs);
    this.expected = { seq: firstFile, part: 0 };
    this.pendingTasks = new Array<number>(count).fill(0);
    this.times = Array.from({ length: count }, () => ({ busyMs: 0, idleMs: 0, batches: 0 }));
    this.scanTableBytes = new Array<number>(count).fill(0);
    for (let w = 0; w < count; w++) {
      const resourceLimits = init.maxYoungGenerationMb ? { maxYoungGenerationSizeMb: init.maxYoungGenerationMb } : undefined;
      const termIds = new SharedTermIds(newSharedTermIds(), count > 1);
      this.termIds.push(termIds);
      // With one worker, the worker bounds the parse and this thread waits for its batches
      // (mail: ~190 of ~560 ms), so this thread maps every pair (ParsedBatch.localIds): the
      // worker's id lookups took it longer than the mapping takes here (mail, 2-core machine).
      const workerData: ParseWorkerInit = { ...init, globalTermIds: termIds.buffer, resolveIds: count > 1 };
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
    const ahead = tasksAheadFromEnv();
    for (let w = 0; w < count; w++) for (let i = 0; i < ahead; i++) this.dispatch(w);
  }

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

  private dispatch(w: number): void {
    if (this.nextFile >= this.tasks.length) return;
    const seq = this.nextFile++;
    this.pendingTasks[w]!++;
    const { path, range } = this.tasks[seq]!;
    this.post(w, range ? { type: 'task', seq, path, start: range.start, end: range.end } : { type: 'task', seq, path });
  }

  private fail(err: Error): void {
    this.failure ??= err;
    this.wake?.();
    this.postingsReply?.({ type: 'postings-error', message: err.message });
  }

  private postingsReply?: (m: BlockPostingsReply) => void;

  /**
   * Hands the build's one block to worker 0 (kept with keepFirstWorker, its tasks done) to sort
   * and write as postings.bin; `pairs` and `scratch` are transferred. Rejects with the worker's
   * error (its system code kept, so a full disk reads as one).
   */
  writeBlockPostings(request: Omit<BlockPostingsRequest, 'type'>): Promise<Extract<BlockPostingsReply, { type: 'postings' }>> {
    return new Promise((resolve, reject) => {
      if (this.failure) return reject(this.failure);
      this.postingsReply = (m) => {
        this.postingsReply = undefined;
        if (m.type === 'postings') resolve(m);
        else reject(Object.assign(new Error(m.message), m.code !== undefined ? { code: m.code } : {}));
      };
      const transfer = [request.pairs, ...(request.scratch ? [request.scratch] : [])];
      this.post(0, { type: 'postings', ...request } satisfies ToWorker, transfer);
    });
  }

  private onMessage(w: number, m: FromWorker): void {
    if (m.type === 'loaded') return; // a spare taken before it said so (parse-worker-spares.ts)
    if (m.type === 'error') {
      this.fail(new Error(`parse worker ${w}: ${m.message}`));
      return;
    }
    if (m.type === 'postings' || m.type === 'postings-error') {
      this.postingsReply?.(m);
      return;
    }
    const t = this.times[w]!;
    t.lastBatchAt = performance.now();
    t.firstBatchAt ??= t.lastBatchAt;
    if (m.workerStartedAt !== undefined) t.startedAt = m.workerStartedAt - performance.timeOrigin;
    t.busyMs += m.busyMs;
    t.idleMs += m.idleMs;
    t.batches++;
    this.scanTableBytes[w] = m.scanTableBytes;
    if (m.last) {
      this.pendingTasks[w]!--;
      this.dispatch(w);
      if (this.pendingTasks[w] === 0 && !(w === 0 && this.keepFirstWorker)) this.retired[w] ??= this.workers[w]!.terminate();
    }
    const buffered = !(m.seq === this.expected.seq && m.part === this.expected.part);
    const bytes = buffered ? queuedBatchBytes(m) : 0;
    const credited = buffered && this.bufferedBytes + bytes <= this.maxBufferedBytes;
    this.bufferedBytes += bytes;
    if (credited) this.credit(w);
    this.arrived.set(`${m.seq}:${m.part}`, { batch: m, worker: w, buffered, credited });
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
   * Called once the caller has consumed a batch (it must not touch batch.pairs afterwards):
   * keeps its pairs array for a later credit, and returns its credit if it was held back. The
   * arrays thus circulate between the workers (any worker may get any array): however far a
   * worker ran ahead, the arrays it filled are reused rather than freed into its malloc arena,
   * which would keep them resident.
   */
  consumed(a: { worker: number; credited: boolean; batch: ParsedBatch }): void {
    const buffer = a.batch.pairs.buffer as ArrayBuffer;
    if (buffer.byteLength === this.batchArrayBytes) this.spare.push(buffer);
    if (!a.credited) this.credit(a.worker);
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
      const key = `${seq}:${part}`;
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
      if (got.buffered) this.bufferedBytes -= queuedBatchBytes(got.batch);
      this.expected = got.batch.last ? { seq: seq + 1, part: 0 } : { seq, part: part + 1 };
      yield got;
    }
  }

  /** Workers terminated early (done, no task left), for tests. */
  get retiredWorkers(): number {
    return this.retired.filter((r) => r !== undefined).length;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.workers.map((worker, w) => this.retired[w] ?? worker.terminate()));
    const held = [...this.spare, ...[...this.arrived.values()].map((a) => a.batch.pairs.buffer)];
    this.spare.length = 0;
    this.arrived.clear();
    await releaseBuffers(held);
  }
}

/**
 * What a batch holds while it waits on the main thread: its pairs array (transferred whole),
 * lengths and unresolved-pair list, its new raw tokens' bytes, and its strings (one-byte V8 strings: ~16 bytes of header each, plus array slots).
 */
export function queuedBatchBytes(b: ParsedBatch): number {
  let bytes = b.pairs.byteLength + b.lengths.byteLength + b.unresolved.byteLength;
  bytes += 40 + b.path.length;
  for (let i = 0; i < b.externalIds.length; i++) bytes += 40 + b.externalIds[i]!.length;
  bytes += b.newTerms.bytes.byteLength + b.newTerms.ends.byteLength;
  return bytes;
}
