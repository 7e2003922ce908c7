/** Worker-thread entry of writeImpactsParallel: the impacts of one range of terms. */
import { parentPort, workerData } from 'node:worker_threads';
import { computeImpacts, type ImpactsTask } from './segment-impacts.js';
import { SegmentReader } from './segment-reader.js';

const task = workerData as ImpactsTask;
const segment = new SegmentReader(task.dir);
try {
  const impacts = computeImpacts(segment, task.from, task.to, task.lengths ?? segment.documentLengths());
  // Each array its own buffer, so all can be transferred (pairTf and pairLength are views of larger ones).
  const own = (a: Uint32Array) => (a.byteOffset === 0 && a.byteLength === a.buffer.byteLength ? a : a.slice());
  const out = { ...impacts, firstBlock: own(impacts.firstBlock), lastDoc: own(impacts.lastDoc), gapsAt: own(impacts.gapsAt), tfsAt: own(impacts.tfsAt), firstPair: own(impacts.firstPair), pairTf: own(impacts.pairTf), pairLength: own(impacts.pairLength) };
  parentPort!.postMessage(out, [out.firstBlock, out.lastDoc, out.gapsAt, out.tfsAt, out.firstPair, out.pairTf, out.pairLength].map((a) => a.buffer as ArrayBuffer));
} finally {
  segment.close();
}
