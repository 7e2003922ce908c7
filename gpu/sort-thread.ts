/**
 * GpuSort on a thread of its own, the GPU thread (gpu/sort-thread-worker.ts), as builds use it.
 *
 * Why a thread: every block's staging and readback ranges (128 MiB each at 2^24 pairs) are
 * external memory to the isolate that maps them, and V8 answers each with a full collection of
 * that isolate. On the main thread, whose heap holds the term dictionary and the document table,
 * those collections cost 1.2-1.7 s of V8-thread CPU and ~0.4 s of main-thread CPU on a 2 GB crawl
 * on the H100 machine, beside the parse workers; on the GPU
 * thread, whose heap is a few MiB, each takes 1-4 ms (lavapipe, measured). The upload copy, the
 * GPU calls, Dawn's polling and the run writes leave the main thread with it: the main thread
 * only fills blocks.
 *
 * Blocks are SharedArrayBuffers (sharedBlocks): the thread uploads them from where the main
 * thread filled them. Transferring 128 MiB ArrayBuffers to the thread and back instead starts
 * the same collections on the main isolate when each comes back (measured).
 *
 * The thread is one per process and outlives builds (a later build opens a new device on it);
 * it does not keep the process alive while no request is pending.
 */
import { Worker } from 'node:worker_threads';
import { labelNewThreads } from '../runtime/cpu-time.js';
import { RunWriteError, type DocBases, type PairSorter, type RunRequest, type RunWritten, type SortedConsumer, type TermKeys } from '../src/shared/types.js';
import { workerScript } from '../runtime/worker-script.js';
import type { GpuSortTiming } from './gpu-sorter.js';
import type { GpuAlgorithmChoice, OpenedSorter, SortThreadReply, SortThreadRequest, ThreadSorterOptions } from './sort-thread-protocol.js';

/** A request without its id (SortThread.request numbers it). */
type Request = SortThreadRequest extends infer R ? (R extends SortThreadRequest ? Omit<R, 'id'> : never) : never;

/** The worker thread and its pending requests. */
class SortThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (r: SortThreadReply) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  /** Set once the thread has died; a dead thread is replaced at the next open. */
  dead?: string;

  constructor() {
    // Fds untracked: opening the device moves fd 2 for a moment (runtime/native-stderr.ts), and a
    // tracking worker would close the reopened fd 2 when it exits. The thread closes its run files.
    this.worker = new Worker(workerScript('gpu/sort-thread-worker.js'), { trackUnmanagedFds: false });
    this.worker.unref();
    this.worker.on('message', (reply: SortThreadReply) => {
      const p = this.pending.get(reply.id);
      if (!p) return; // a request already failed (the thread was declared dead meanwhile)
      this.pending.delete(reply.id);
      if (this.pending.size === 0) this.worker.unref();
      p.resolve(reply);
    });
    const die = (why: string) => {
      this.dead ??= why;
      for (const p of this.pending.values()) p.reject(new Error(this.dead));
      this.pending.clear();
    };
    this.worker.on('error', (err: Error) => die(`GPU thread failed: ${err.message}`));
    this.worker.on('exit', (code) => die(`GPU thread exited (code ${code})`));
  }

  request(req: Request): Promise<SortThreadReply> {
    if (this.dead) return Promise.reject(new Error(this.dead));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // Referenced while a reply is awaited, so the process waits for it.
      this.worker.ref();
      this.worker.postMessage({ ...req, id } as SortThreadRequest);
    });
  }

  /** Ends the thread (with it Dawn's instance and the thread's heap); it is replaced at the next open. */
  async end(): Promise<void> {
    this.dead ??= 'GPU thread ended';
    await this.worker.terminate();
  }
}

/** The process's GPU thread: module-level, like gpu/device.ts's instance holder. */
let shared: SortThread | undefined;

function sortThread(): SortThread {
  if (!shared || shared.dead) {
    // Threads born so far are not the GPU's (cpu-time.ts groups threads by when they appear).
    labelNewThreads('runtime');
    shared = new SortThread();
  }
  return shared;
}

/** performance.now() of this thread for a wall-clock time the GPU thread reported. */
const fromEpoch = (epochMs: number | undefined): number | undefined => (epochMs === undefined ? undefined : epochMs - performance.timeOrigin);

/**
 * Opens GpuSort on the GPU thread (the device; its kernels then compile there in the background);
 * returns the sorter or why there is none. `allowSoftware`: a software adapter counts as a GPU (an explicit --sorter gpu, tests).
 */
export async function openGpuSortThread(options: ThreadSorterOptions & { allowSoftware?: boolean; algorithm?: GpuAlgorithmChoice } = {}): Promise<GpuSortThread | string> {
  const { allowSoftware = false, algorithm = 'bsn', ...sorterOptions } = options;
  const thread = sortThread();
  let reply: SortThreadReply;
  try {
    reply = await thread.request({ type: 'open', allowSoftware, options: sorterOptions, algorithm });
  } catch (err) {
    return (err as Error).message;
  }
  if (reply.type !== 'opened') {
    // No GPU for this build: the thread holds nothing a CPU build needs (its heap, Dawn's instance).
    await thread.end();
    return reply.type === 'refused' ? reply.reason : reply.type === 'failed' ? reply.message : `unexpected reply ${reply.type}`;
  }
  // Dawn's and the driver's threads, and the GPU thread itself.
  labelNewThreads('gpu');
  return new GpuSortThread(thread, reply.sorter);
}

/** GpuSort as a PairSorter whose work happens on the GPU thread (see the top of this file). */
export class GpuSortThread implements PairSorter {
  readonly kind = 'gpu' as const;
  readonly sharedBlocks = true;
  readonly maxPairs: number;
  /** The open algorithm's (with 'auto', until choose(): the larger of the two). */
  hostBytesPerPair: number;
  /** The GPU sorting algorithm: 'auto' until choose() settles it. */
  algorithm: GpuAlgorithmChoice;
  /** 'auto': each algorithm's host bytes per pair (for the memory plan to weigh). */
  readonly hostBytesPerPairOf?: { bsn: number; radix: number };
  readonly compilingBytes: number;
  private disposed = false;

  constructor(private readonly thread: SortThread, opened: OpenedSorter) {
    this.maxPairs = opened.maxPairs;
    this.hostBytesPerPair = opened.hostBytesPerPair;
    this.algorithm = opened.algorithm;
    this.hostBytesPerPairOf = opened.hostBytesPerPairOf;
    this.compilingBytes = opened.compilingBytes;
  }

  /**
   * 'auto': keeps `algorithm` and closes the other. Radix stays only if the device can allocate
   * its buffers for blocks of `blockPairs` now; otherwise the network, and the reason.
   */
  async choose(algorithm: 'bsn' | 'radix', blockPairs: number): Promise<{ algorithm: 'bsn' | 'radix'; reason?: string }> {
    const reply = await this.thread.request({ type: 'choose', algorithm, blockPairs });
    if (reply.type === 'failed') throw new Error(reply.message);
    if (reply.type !== 'chosen') throw new Error(`unexpected reply ${reply.type} from the GPU thread`);
    this.algorithm = reply.algorithm;
    this.hostBytesPerPair = reply.hostBytesPerPair;
    return { algorithm: reply.algorithm, reason: reply.reason };
  }

  private async sort(pairs: Uint32Array, count: number, docBases: DocBases | undefined, termKeys: TermKeys | undefined, run: RunRequest | undefined, copyBack: boolean): Promise<RunWritten> {
    if (this.disposed) throw new Error('GpuSortThread used after dispose()');
    if (!(pairs.buffer instanceof SharedArrayBuffer)) throw new TypeError('the GPU thread sorts blocks in SharedArrayBuffers (PairSorter.sharedBlocks)');
    const reply = await this.thread.request({ type: 'sort', pairs, count, docBases, termKeys, run, copyBack });
    if (reply.type === 'failed') throw reply.during === 'write' ? new RunWriteError(reply.message, reply.code) : new Error(reply.message);
    if (reply.type !== 'sorted') throw new Error(`unexpected reply ${reply.type} from the GPU thread`);
    return { timing: reply.timing, runBytes: reply.runBytes, sha256: reply.sha256, writeAt: fromEpoch(reply.writeAtEpochMs), writtenAt: fromEpoch(reply.writtenAtEpochMs) };
  }

  /** Sorts on the GPU thread and writes the run there, from the mapped readback range. */
  sortToRun(pairs: Uint32Array, count: number, docBases: DocBases | undefined, run: RunRequest | undefined, termKeys?: TermKeys): Promise<RunWritten> {
    return this.sort(pairs, count, docBases, termKeys, run, false);
  }

  /**
   * PairSorter.sortBlock: sorts on the GPU thread, which copies the sorted pairs back into
   * `pairs` (a SharedArrayBuffer view; a failed sort leaves it as it was).
   */
  async sortBlock(pairs: Uint32Array, count: number, consume: SortedConsumer, docBases?: DocBases, termKeys?: TermKeys): Promise<GpuSortTiming> {
    const { timing } = await this.sort(pairs, count, docBases, termKeys, undefined, true);
    await consume(pairs.subarray(0, 2 * count));
    return timing as GpuSortTiming;
  }

  /** Frees the GPU thread's block-sized buffers (block, staging, readback) now. */
  async release(): Promise<void> {
    if (this.disposed) return;
    const reply = await this.thread.request({ type: 'release' });
    if (reply.type === 'failed') throw new Error(reply.message);
  }

  /** Closes the device on the GPU thread (which stays for later builds). */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    // A request, not a message: the process stays alive until it is answered.
    this.closing = this.thread.request({ type: 'close' }).then(
      () => undefined,
      () => undefined,
    );
  }

  private closing?: Promise<void>;

  /**
   * After dispose(): settles once the thread has closed the sorter, its kernels' compilation
   * settled first. Dawn aborts the process if the thread ends while a kernel is still compiling
   * (a build that ends before they do, then process.exit()), so buildIndex waits for this.
   */
  closed(): Promise<void> {
    return this.closing ?? Promise.resolve();
  }

  /** Tests: the device is destroyed on the GPU thread, as a driver reset would. */
  async loseDevice(): Promise<void> {
    await this.thread.request({ type: 'lose-device' });
  }
}
