/**
 * Worker-thread entry of a writer's segment feeds (src/feed-thread.ts): the documents of each
 * logged operation arrive as its log record, and go into the SegmentFeed of the segment being
 * built, so that the writer's thread only logs while they are inverted here.
 */
import { parentPort } from 'node:worker_threads';
import { buildKeeping } from './build.js';
import { decodeOperation } from '../merge/wal-record.js';
import { UserError } from './shared/errors.js';
import { SegmentFeed } from './segment-feed.js';
import { SharedInversion } from '../indexer/scan/shared-inversion.js';
import { BufferPool } from '../runtime/buffer-pool.js';
import type { FeedMessage, FeedReply } from './feed-thread.js';
import type { InputDocument } from './shared/options.js';

let current: { name: string; feed: SegmentFeed; failed: boolean } | undefined;
/**
 * Each segment's build takes over the analysis of the one before (SharedInversion.begin: one
 * parse holds it at a time) and the buffers it gave back.
 */
const kept = { inversion: new SharedInversion(), buffers: new BufferPool() };

parentPort!.on('message', (m: FeedMessage) => {
  if (m.type === 'docs') {
    if (current?.name !== m.name) {
      // A thread started again mid-segment has no start: that segment's end() fails, and the
      // writer builds it from its buffer.
      if (!m.start) {
        parentPort!.postMessage({ consumed: m.name } satisfies FeedReply);
        return;
      }
      const { output, options, blockSize } = m.start;
      const started = {
        name: m.name,
        feed: new SegmentFeed(
          (input) => buildKeeping({ ...options, input, output, blockSize, onWarning: (warning) => parentPort!.postMessage({ warning } satisfies FeedReply) }, kept),
          () => parentPort!.postMessage({ consumed: m.name } satisfies FeedReply),
        ),
        failed: false,
      };
      // A build that failed takes no more documents: the writer stops counting them as lag (its
      // flush then builds the segment from the buffer).
      started.feed.done.catch(() => {
        started.failed = true;
        parentPort!.postMessage({ dropped: m.name } satisfies FeedReply);
      });
      current = started;
    }
    if (current.failed) {
      parentPort!.postMessage({ consumed: m.name } satisfies FeedReply);
      return;
    }
    const docs = m.record === undefined ? m.docs! : ((decodeOperation(m.record) as { docs: InputDocument[] }).docs);
    current.feed.push(docs);
    return;
  }
  const ending = current?.name === m.name ? current.feed : undefined;
  current = undefined;
  if (!ending) {
    parentPort!.postMessage({ name: m.name, ok: false, message: `no segment ${m.name} is being fed`, userError: false } satisfies FeedReply);
    return;
  }
  void ending.end().then(
    (summary) => parentPort!.postMessage({ name: m.name, ok: true, documents: summary.documents } satisfies FeedReply),
    (err: Error) => parentPort!.postMessage({ name: m.name, ok: false, message: err.message, userError: err instanceof UserError } satisfies FeedReply),
  );
});
