/** Busy time per named stage (parse, sort, write runs, merge), for the build summary. */
export class StageClock {
  readonly busyMs: Record<string, number> = {};

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
