/** One moment of the parse+sort stage (performance.now()), for the build's timeline. */
export interface StageMark {
  event: string;
  at: number;
  /** The block's pairs, for the block events. */
  pairs?: number;
}

/** Busy time per named stage (parse, sort, write runs, merge), for the build summary. */
export class StageClock {
  readonly busyMs: Record<string, number> = {};
  /** Block hand-overs, sorts and writes and the end of the parse, in time order (build --json's timeline). */
  readonly marks: StageMark[] = [];

  mark(event: string, pairs?: number): void {
    this.markAt(event, performance.now(), pairs);
  }

  /** A moment that happened at `at` (a performance.now()), e.g. on the GPU thread, reported later. */
  markAt(event: string, at: number, pairs?: number): void {
    this.marks.push(pairs === undefined ? { event, at } : { event, at, pairs });
  }

  /** The marks in time order as ms after `origin` (a performance.now()), to 0.1 ms: build --json's timeline. */
  timeline(origin: number): { event: string; atMs: number; pairs?: number }[] {
    return [...this.marks].sort((a, b) => a.at - b.at).map(({ event, at, pairs }) => ({ event, atMs: Math.round((at - origin) * 10) / 10, ...(pairs === undefined ? {} : { pairs }) }));
  }

  add(stage: string, ms: number): void {
    this.busyMs[stage] = (this.busyMs[stage] ?? 0) + ms;
  }

  /** Times a synchronous or asynchronous function under `stage`. */
  async time<T>(stage: string, fn: () => T | Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      this.add(stage, performance.now() - t0);
    }
  }
}
