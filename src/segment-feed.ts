/**
 * A writer's next segment, built while its documents arrive: buildIndex reads them from a queue
 * the writer fills as operations are logged, so each batch is inverted while the writer's thread
 * waits on the log's fsync, and a flush is left only the last block's sort and the segment's
 * files. The segment is the one buildIndex would write from the same documents as an array.
 */
import type { BuildSummary } from './build/summary.js';
import type { InputDocument } from './shared/options.js';

export class SegmentFeed {
  /** Pushed batches not yet handed to the build. */
  private queue: (readonly InputDocument[])[] = [];
  private ended = false;
  private wake?: () => void;
  /** The build's summary once end() let it finish; rejects with the build's error. */
  readonly done: Promise<BuildSummary>;

  /** `consumed`: called as the build takes each pushed batch's last document (the writer bounds the lag with it). */
  constructor(
    build: (input: AsyncIterable<InputDocument>) => Promise<BuildSummary>,
    private readonly consumed?: () => void,
  ) {
    this.done = build(this.documents());
    // A build that fails before end() is reported there, not as an unhandled rejection.
    this.done.catch(() => {});
  }

  push(docs: readonly InputDocument[]): void {
    if (this.ended) throw new Error('segment feed: push after end');
    this.queue.push(docs);
    this.wake?.();
  }

  /** No more documents: the build sorts what is left and writes the segment. */
  end(): Promise<BuildSummary> {
    this.ended = true;
    this.wake?.();
    return this.done;
  }

  private async *documents(): AsyncGenerator<InputDocument> {
    for (;;) {
      if (this.queue.length > 0) {
        const batches = this.queue;
        this.queue = [];
        for (const batch of batches) {
          yield* batch;
          this.consumed?.();
        }
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}
