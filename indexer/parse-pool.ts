/**
 * The parse workers: hands out the crawl's files in order, and yields the batches they post
 * in crawl order (file sequence, then part), whatever order they arrive in. Each worker may
 * have `credits` batches outstanding; consuming a batch returns its credit (SyncSend).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { FromWorker, ParsedBatch, ParseWorkerInit, ToWorker } from './parse-messages.js';

/** Files queued per worker ahead of the one it parses, so no worker waits for a task. */
const TASKS_AHEAD = 2;

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

export class ParsePool {
  private readonly workers: Worker[] = [];
  private readonly pendingTasks: number[];
  private nextFile = 0;
  private readonly arrived = new Map<string, { batch: ParsedBatch; worker: number }>();
  private wake?: () => void;
  private failure?: Error;
  readonly times: WorkerTimes[];

  constructor(private readonly files: readonly string[], count: number, init: ParseWorkerInit) {
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
    this.arrived.set(`${m.seq}:${m.part}`, { batch: m, worker: w });
    this.wake?.();
  }

  /** Returns the credit of a batch the caller has consumed. */
  credit(worker: number): void {
    this.post(worker, { type: 'credit' });
  }

  /** Batches in crawl order. */
  async *batches(): AsyncGenerator<{ batch: ParsedBatch; worker: number }> {
    let seq = 0;
    let part = 0;
    while (seq < this.files.length) {
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
      if (got.batch.last) {
        seq++;
        part = 0;
      } else part++;
      yield got;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
