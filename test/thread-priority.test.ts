import { getPriority } from 'node:os';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { workerNicenessFromEnv, WORKER_NICENESS } from '../indexer/parse/thread-priority.js';
import { withEnv } from './helpers/env.js';

describe('parse worker and merge thread priority', () => {
  it.runIf(process.platform === 'linux')('lowers the calling thread only (Linux)', async () => {
    const mainBefore = getPriority();
    // A worker running the compiled module (workers run dist, as the build's do).
    const url = new URL('../dist/runtime/thread-priority.js', import.meta.url).href;
    const code = `import(${JSON.stringify(url)}).then((m) => { const ok = m.niceThisThread(7); const { getPriority } = require('node:os'); require('node:worker_threads').parentPort.postMessage({ ok, tid: m.threadId(), prio: getPriority(m.threadId()) }); });`;
    const worker = new Worker(code, { eval: true });
    const reply = await new Promise<{ ok: boolean; tid: number; prio: number }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await worker.terminate();
    expect(reply.ok).toBe(true);
    expect(reply.tid).not.toBe(process.pid);
    expect(reply.prio).toBe(7);
    expect(getPriority()).toBe(mainBefore);
  });

  it('takes GPUINDEX_WORKER_NICE from 0 to 19, and says what is wrong with anything else', () =>
    withEnv('GPUINDEX_WORKER_NICE', (set) => {
      set(undefined);
      expect(workerNicenessFromEnv()).toBe(WORKER_NICENESS);
      set('0');
      expect(workerNicenessFromEnv()).toBe(0);
      set('19');
      expect(workerNicenessFromEnv()).toBe(19);
      for (const bad of ['20', '-1', '2.5', 'low']) {
        set(bad);
        expect(() => workerNicenessFromEnv()).toThrow(`GPUINDEX_WORKER_NICE must be an integer from 0 to 19, got ${bad}`);
      }
    }));
});
