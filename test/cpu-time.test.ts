import { pbkdf2 } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { workerYoungGenerationMb, WORKER_YOUNG_GENERATION_MB } from '../indexer/plan/memory-plan.js';
import { labelLibuvPool, startPhaseCpu } from '../runtime/cpu-time.js';
import { withEnv } from './helpers/env.js';

/** Hashing that only libuv's pool runs: `n` jobs of about `ms` each. */
function poolWork(n: number, iterations: number): Promise<unknown[]> {
  return Promise.all(Array.from({ length: n }, () => new Promise((done) => pbkdf2('work', 'salt', iterations, 32, 'sha256', done))));
}

describe('CPU time of a phase by thread group', () => {
  it.runIf(process.platform === 'linux')("charges libuv's pool work to 'libuv', and the groups add up to the other threads", async () => {
    await labelLibuvPool();
    const end = startPhaseCpu();
    await poolWork(8, 200_000); // ~0.1 s a job: well over the 10 ms ticks of /proc
    const cpu = end();
    expect(cpu.mainThreadMs).toBeDefined();
    expect(cpu.otherThreadsByGroup).toBeDefined();
    const groups = cpu.otherThreadsByGroup!;
    const sum = Object.values(groups).reduce((a, b) => a + b, 0);
    expect(sum).toBeCloseTo(cpu.otherThreadsMs!, 6);
    // The pool did the hashing: at least half of it shows in its group, whatever else ran.
    expect(groups.libuv ?? 0).toBeGreaterThan(0.5 * (cpu.otherThreadsMs ?? 0));
    expect(groups.libuv ?? 0).toBeGreaterThan(100);
  });
});

describe('parse workers young generation cap', () => {
  it('is the builds cap unless GPUINDEX_WORKER_YOUNG_MB says otherwise (0: no cap), and a bad value is a one-line error', () =>
    withEnv('GPUINDEX_WORKER_YOUNG_MB', (set) => {
      set(undefined);
      expect(workerYoungGenerationMb()).toBe(WORKER_YOUNG_GENERATION_MB);
      set('32');
      expect(workerYoungGenerationMb()).toBe(32);
      set('0');
      expect(workerYoungGenerationMb()).toBeUndefined();
      set('lots');
      expect(() => workerYoungGenerationMb()).toThrow('GPUINDEX_WORKER_YOUNG_MB must be an integer from 0 to 1024, got lots');
    }));
});
