/**
 * The parse workers: hands out the crawl's files in order, and yields the batches they post
 * in crawl order (file sequence, then part), whatever order they arrive in. Each worker may
 * have `credits` batches outstanding; consuming a batch returns its credit (SyncSend).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { FromWorker, ParsedBatch, ParseWorkerInit, ToWorker } from './parse-messages.js';

/**
 * Files a worker holds (the one it parses included). One: a second queued file would sit behind
 * a slow first one while other workers starve.
 */
const TASKS_AHEAD = 1;

function workerScript(): URL {
  const here = new URL('./parse-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(here))) return here;
  // Running from the TypeScript sources (the tests): use the compiled worker in dist/.
  const compiled = new URL('../dist/indexer/parse-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(compiled))) return compiled;
  throw new Error('parse worker not built: run `npm run build`');
}

export interface WorkerTimes {
  busyMs: number;
  idleMs: number;
  batches: number;
}

interface Arrival {
  batch: ParsedBatch;
  worker: number;
  /** Whether it arrived ahead of crawl order (and counts in bufferedPairs until consumed). */
  buffered: boolean;
  /** Whether the worker already got this batch's credit back (buffered within the limit). */
  credited: boolean;
}

export class ParsePool {
  private readonly workers: Worker[] = [];
  private readonly pendingTasks: number[];
  private nextFile = 0;
  private readonly arrived = new Map<string, Arrival>();
  /** Pairs in batches that arrived ahead of crawl order and wait in `arrived`. */
  private bufferedPairs = 0;
  private expected = { seq: 0, part: 0 };
  private wake?: () => void;
  private failure?: Error;
  readonly times: WorkerTimes[];

  /**
   * `maxBufferedPairs` bounds the batches held ahead of crawl order: within it, a worker gets a
   * batch's credit back as soon as the batch arrives, so workers run ahead of a slow file; past
   * it, credits come back only as batches are consumed.
   */
  constructor(private readonly files: readonly string[], count: number, init: ParseWorkerInit, private readonly maxBufferedPairs: number) {
    this.pendingTasks = new Array<number>(count).fill(0);
    this.times = Array.from({ length: count }, () => ({ busyMs: 0, idleMs: 0, batches: 0 }));
    for (let w = 0; w < count; w++) {
      const worker = new Worker(workerScript(), { workerData: init });
      worker.on('message', (m: FromWorker) => this.onMessage(w, m));
      worker.on('error', (err: unknown) => this.fail(err instanceof Error ? err : new Error(String(err))));
      worker.on('exit', (code) => {
        if (code !== 0 && !this.closed) this.fail(new Error(`parse worker ${w} exited with code ${code}`));
      });
      this.workers.push(worker);
    }
    for (let w = 0; w < count; w++) for (let i = 0; i < TASKS_AHEAD; i++) this.dispatch(w);
  }

  private closed = false;

  private post(w: number, m: ToWorker): void {
    this.workers[w]!.postMessage(m);
  }

  private dispatch(w: number): void {
    if (this.nextFile >= this.files.length) return;
    const seq = this.nextFile++;
    this.pendingTasks[w]!++;
    this.post(w, { type: 'task', seq, path: this.files[seq]! });
  }

  private fail(err: Error): void {
    this.failure ??= err;
    this.wake?.();
  }

  private onMessage(w: number, m: FromWorker): void {
    if (m.type === 'error') {
      this.fail(new Error(`parse worker ${w}: ${m.message}`));
      return;
    }
    const t = this.times[w]!;
    t.busyMs += m.busyMs;
    t.idleMs += m.idleMs;
    t.batches++;
    if (m.last) {
      this.pendingTasks[w]!--;
      this.dispatch(w);
    }
    const buffered = !(m.seq === this.expected.seq && m.part === this.expected.part);
    const credited = buffered && this.bufferedPairs + m.pairCount <= this.maxBufferedPairs;
    if (buffered) this.bufferedPairs += m.pairCount;
    if (credited) this.post(w, { type: 'credit' });
    this.arrived.set(`${m.seq}:${m.part}`, { batch: m, worker: w, buffered, credited });
    this.wake?.();
  }

  /** Called once the caller has consumed a batch: returns its credit if it was held back. */
  consumed(a: { worker: number; credited: boolean }): void {
    if (!a.credited) this.post(a.worker, { type: 'credit' });
  }

  /** Batches in crawl order. */
  async *batches(): AsyncGenerator<Arrival> {
    while (this.expected.seq < this.files.length) {
      const { seq, part } = this.expected;
      const key = `${seq}:${part}`;
      let got = this.arrived.get(key);
      while (!got) {
        if (this.failure) throw this.failure;
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        got = this.arrived.get(key);
      }
      if (this.failure) throw this.failure;
      this.arrived.delete(key);
      if (got.buffered) this.bufferedPairs -= got.batch.pairCount;
      this.expected = got.batch.last ? { seq: seq + 1, part: 0 } : { seq, part: part + 1 };
      yield got;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
