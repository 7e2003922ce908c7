/**
 * The writer's feed thread (src/feed-worker.ts): the next segment's build runs there, reading
 * each operation's documents as the writer logs them, so that documents are inverted on another
 * core while the writer's thread serializes, logs and fsyncs the next operations. Started with
 * the first segment and kept for the next ones (a thread's start and module loading would cost
 * every flush); held (ref'd) only while a flush waits on it, so that an idle writer does not keep
 * the process alive.
 */
import { Worker } from 'node:worker_threads';
import { workerScript } from '../runtime/worker-script.js';
import type { BuildOptions, InputDocument } from './shared/options.js';
import { UserError } from './shared/errors.js';

/** Main thread → feed thread. `start` comes with a segment's first documents. */
export type FeedMessage =
  | { type: 'docs'; name: string; start?: { output: string; options: Partial<BuildOptions>; blockSize?: number }; record?: Uint8Array; docs?: InputDocument[] }
  | { type: 'end'; name: string };

export type FeedReply =
  | { name: string; ok: true; documents: number }
  | { name: string; ok: false; message: string; userError: boolean }
  | { warning: string }
  /** The build took the last document of the oldest batch of segment `consumed` not reported yet. */
  | { consumed: string }
  /** The build of segment `dropped` failed: it takes no more of its batches (its end() reports the error). */
  | { dropped: string };

/** One segment fed to the thread: what the writer's flush ends. */
export class ThreadFeed {
  fed = 0;
  constructor(
    private readonly thread: FeedThread,
    private readonly name: string,
    private readonly start: { output: string; options: Partial<BuildOptions>; blockSize?: number },
  ) {}

  /** The documents of one logged operation; `record`, its log record (merge/wal-record.ts), is sent instead of the objects where given (bytes are copied faster). */
  push(docs: readonly InputDocument[], record?: Uint8Array): void {
    this.thread.post({ type: 'docs', name: this.name, ...(this.fed === 0 ? { start: this.start } : {}), ...(record === undefined ? { docs: [...docs] } : { record }) }, record?.length ?? docs.reduce((a, d) => a + d.text.length + (d.title?.length ?? 0), 0));
    this.fed += docs.length;
  }

  /** The thread this segment is fed to. */
  get feedThread(): FeedThread {
    return this.thread;
  }

  /** The segment's build completes: the documents it holds. */
  end(): Promise<number> {
    return this.thread.end(this.name);
  }
}

export class FeedThread {
  private worker?: Worker;
  /** Batches posted and not yet taken by a build, oldest first: their segment and bytes. */
  private readonly unconsumed: { name: string; bytes: number }[] = [];
  /** Bytes of `unconsumed`: how far the thread's builds are behind what was posted. */
  lagBytes = 0;
  private lagWaiters: { limit: number; resolve: () => void }[] = [];
  /** Segments whose end() waits for the thread's reply, by name (an abandoned feed may still be ending beside the next). */
  private readonly pending = new Map<string, { resolve: (documents: number) => void; reject: (err: Error) => void }>();

  constructor(private readonly onWarning: (message: string) => void) {}

  feed(name: string, start: { output: string; options: Partial<BuildOptions>; blockSize?: number }): ThreadFeed {
    return new ThreadFeed(this, name, start);
  }

  /** A segment is being ended on this thread. */
  get ending(): boolean {
    return this.pending.size > 0;
  }

  /** Posts a message; `bytes`: the documents' bytes of a batch, counted in lagBytes until the build takes it. */
  post(message: FeedMessage, bytes = 0): void {
    (this.worker ??= this.startWorker()).postMessage(message);
    if (message.type !== 'docs') return;
    this.unconsumed.push({ name: message.name, bytes });
    this.lagBytes += bytes;
  }

  /** Resolves once the thread's builds are at most `limit` bytes behind (at once if they are, or if the thread stopped). */
  lagAtMost(limit: number): Promise<void> {
    if (this.lagBytes <= limit || !this.worker) return Promise.resolve();
    const waiting = new Promise<void>((resolve) => this.lagWaiters.push({ limit, resolve }));
    this.holdWhileWaited();
    return waiting;
  }

  /** Forgets batches: the oldest one (a build took it), or every one of segment `name` (it ended), or all (the thread stopped). */
  private consume(which: { oldest: string } | { segment: string } | 'all'): void {
    if (which === 'all') {
      this.unconsumed.length = 0;
      this.lagBytes = 0;
    } else if ('oldest' in which) {
      const i = this.unconsumed.findIndex((b) => b.name === which.oldest);
      if (i >= 0) this.lagBytes -= this.unconsumed.splice(i, 1)[0]!.bytes;
    } else {
      for (let i = this.unconsumed.length - 1; i >= 0; i--) if (this.unconsumed[i]!.name === which.segment) this.lagBytes -= this.unconsumed.splice(i, 1)[0]!.bytes;
    }
    if (this.lagWaiters.length === 0) return;
    const still = this.lagWaiters.filter((w) => this.lagBytes > w.limit);
    for (const w of this.lagWaiters) if (this.lagBytes <= w.limit) w.resolve();
    this.lagWaiters = still;
    this.holdWhileWaited();
  }

  /** The thread keeps the process alive only while something waits on it (an end or the lag): an idle writer must not. */
  private holdWhileWaited(): void {
    if (this.pending.size > 0 || this.lagWaiters.length > 0) this.worker?.ref();
    else this.worker?.unref();
  }

  end(name: string): Promise<number> {
    if (this.pending.has(name)) return Promise.reject(new Error(`writer: segment ${name} is being ended already`));
    const worker = this.worker;
    if (!worker) return Promise.reject(new Error('writer: the feed thread stopped'));
    return new Promise((resolve, reject) => {
      this.pending.set(name, { resolve, reject });
      this.holdWhileWaited();
      worker.postMessage({ type: 'end', name } satisfies FeedMessage);
    });
  }

  private startWorker(): Worker {
    const worker = new Worker(workerScript('src/feed-worker.js'));
    worker.unref();
    worker.on('message', (reply: FeedReply) => {
      if ('warning' in reply) return this.onWarning(reply.warning);
      if ('consumed' in reply) return this.consume({ oldest: reply.consumed });
      if ('dropped' in reply) return this.consume({ segment: reply.dropped });
      this.consume({ segment: reply.name });
      const pending = this.settle(reply.name);
      if (reply.ok) pending?.resolve(reply.documents);
      else pending?.reject(reply.userError ? new UserError(reply.message) : new Error(reply.message));
    });
    const fail = (err: Error) => {
      if (this.worker === worker) this.worker = undefined;
      this.consume('all');
      for (const name of [...this.pending.keys()]) this.settle(name)?.reject(err);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`feed thread exited with code ${code}`)));
    return worker;
  }

  private settle(name: string) {
    const pending = this.pending.get(name);
    this.pending.delete(name);
    this.holdWhileWaited();
    return pending;
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }
}
