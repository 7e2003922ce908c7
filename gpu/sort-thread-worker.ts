/**
 * The GPU thread (gpu/sort-thread.ts says why there is one): opens the device, compiles the
 * kernels, and for each block uploads it from the SharedArrayBuffer the main thread filled,
 * sorts it with GpuSort and writes its run file straight from the mapped readback range. One
 * request at a time, in arrival order. The device and Dawn's instance live in this thread's
 * modules (gpu/device.ts keeps the instance in a module-level holder for the thread's life).
 */
import { createHash } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import { writeRunFile } from '../merge/runs.js';
import { errorCode } from '../src/shared/errors.js';
import { untrackedFds } from '../runtime/native-stderr.js';
import type { GpuSorter } from './gpu-sorter.js';
import { KERNEL_COMPILE_BYTES, openGpuSorter } from './index.js';
import type { SortThreadReply, SortThreadRequest } from './sort-thread-protocol.js';

if (!parentPort) throw new Error('gpu/sort-thread-worker.js runs as a worker thread');
const port = parentPort;
// Created with trackUnmanagedFds: false (sort-thread.ts): Dawn's notices may be taken off fd 2.
untrackedFds();

let sorter: GpuSorter | undefined;
/** With 'auto': the network's sorter beside the radix sorter until the build chooses. */
let spare: GpuSorter | undefined;

/** Wall clock in ms that the main thread can compare with its own (performance.now() differs per thread). */
const epochNow = (): number => performance.timeOrigin + performance.now();

async function handle(req: SortThreadRequest): Promise<SortThreadReply> {
  const { id } = req;
  switch (req.type) {
    case 'open': {
      await sorter?.settled();
      await spare?.settled();
      sorter?.dispose();
      spare?.dispose();
      sorter = spare = undefined;
      const algorithm = req.algorithm ?? 'bsn';
      // The kernels compile while the build plans and parses; the first sort waits for them.
      const compileLater = true;
      const compilingBytes = KERNEL_COMPILE_BYTES;
      const opened = await openGpuSorter({ ...req.options, allowSoftware: req.allowSoftware, algorithm: algorithm === 'bsn' ? 'bsn' : 'radix', compileLater });
      if (typeof opened === 'string') return { type: 'refused', id, reason: opened };
      sorter = opened;
      if (algorithm !== 'auto') return { type: 'opened', id, sorter: { maxPairs: opened.maxPairs, hostBytesPerPair: opened.hostBytesPerPair, algorithm, compilingBytes } };
      const network = await openGpuSorter({ ...req.options, allowSoftware: req.allowSoftware, algorithm: 'bsn', compileLater });
      if (typeof network === 'string') {
        await opened.settled(); // the thread may end next
        opened.dispose();
        sorter = undefined;
        return { type: 'refused', id, reason: network };
      }
      spare = network;
      const hostBytesPerPairOf = { bsn: network.hostBytesPerPair, radix: opened.hostBytesPerPair };
      // Until the build chooses, the larger of the two (what the plan must not underestimate).
      return { type: 'opened', id, sorter: { maxPairs: Math.min(opened.maxPairs, network.maxPairs), hostBytesPerPair: Math.max(hostBytesPerPairOf.bsn, hostBytesPerPairOf.radix), algorithm, hostBytesPerPairOf, compilingBytes } };
    }
    case 'choose': {
      if (!sorter) return { type: 'failed', id, during: 'sort', message: 'the GPU sorter is closed' };
      let reason: string | undefined;
      if (spare && req.algorithm === 'radix') {
        // The radix sorter's buffers for the planned block, now: a device that cannot hold them takes the network.
        reason = await sorter.reserve(req.blockPairs);
        if (reason !== undefined) {
          sorter.dispose();
          sorter = spare;
        } else spare.dispose();
      } else if (spare) {
        sorter.dispose();
        sorter = spare;
      }
      spare = undefined;
      const algorithm = sorter.algorithm === 'radix' ? 'radix' : 'bsn';
      return { type: 'chosen', id, algorithm, hostBytesPerPair: sorter.hostBytesPerPair, ...(reason !== undefined ? { reason: `the radix sort's buffers for ${req.blockPairs} pairs do not fit the GPU (${reason})` } : {}) };
    }
    case 'sort': {
      if (!sorter) return { type: 'failed', id, during: 'sort', message: 'the GPU sorter is closed' };
      const { pairs, count, run, copyBack } = req;
      let runBytes = 0;
      let sha256: string | undefined;
      let writeAtEpochMs: number | undefined;
      let writtenAtEpochMs: number | undefined;
      let writeError: unknown;
      const timing = await sorter.sortBlock(
        pairs,
        count,
        (sorted) => {
          if (copyBack) pairs.set(sorted.subarray(0, 2 * count));
          if (!run) return;
          writeAtEpochMs = epochNow();
          // A failed write is the disk's fault, not the GPU's: reported apart, not thrown through the sort.
          try {
            const hash = run.hash ? createHash('sha256') : undefined;
            runBytes = writeRunFile(run.path, sorted, count, run.keySpace, hash);
            sha256 = hash?.digest('hex');
          } catch (err) {
            writeError = err;
          }
          writtenAtEpochMs = epochNow();
        },
        req.docBases,
        req.termKeys,
      );
      if (writeError !== undefined) return { type: 'failed', id, during: 'write', message: (writeError as Error)?.message ?? String(writeError), code: errorCode(writeError) };
      return { type: 'sorted', id, timing, runBytes, sha256, writeAtEpochMs, writtenAtEpochMs };
    }
    case 'release':
      await sorter?.release();
      return { type: 'done', id };
    case 'close':
      // Compilations still pending end first: the process may exit once this is answered.
      await sorter?.settled();
      await spare?.settled();
      sorter?.dispose();
      spare?.dispose();
      sorter = spare = undefined;
      return { type: 'done', id };
    case 'lose-device':
      sorter?.ctx.device.destroy();
      // Let the device's lost promise settle (it marks the context faulty) before the next request.
      await new Promise((resolve) => setTimeout(resolve, 20));
      return { type: 'done', id };
  }
}

let queue: Promise<void> = Promise.resolve();
port.on('message', (req: SortThreadRequest) => {
  queue = queue.then(() =>
    handle(req).then(
      (reply) => port.postMessage(reply),
      (err: unknown) => port.postMessage({ type: 'failed', id: req.id, during: 'sort', message: (err as Error)?.message ?? String(err), code: errorCode(err) } satisfies SortThreadReply),
    ),
  );
});
