import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';

/** The nice value of the thread that reads it (field 19 of /proc/thread-self/stat). */
const niceOfThisThread = `(await import('node:fs')).readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1].split(' ')[16]`;

describe.runIf(process.platform === 'linux')('lowerThreadPriority', () => {
  it('lowers the calling worker thread only, not the process', async () => {
    const module = new URL('../dist/runtime/thread-priority.js', import.meta.url).href;
    const before = readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1]!.split(' ')[16];
    const reply = await new Promise<{ lowered: boolean; nice: string }>((resolve, reject) => {
      const w = new Worker(
        `const { lowerThreadPriority } = await import(${JSON.stringify(module)});
const lowered = lowerThreadPriority();
(await import('node:worker_threads')).parentPort.postMessage({ lowered, nice: ${niceOfThisThread} });`,
        { eval: true, type: 'module' } as never,
      );
      w.once('message', resolve);
      w.once('error', reject);
    });
    expect(reply).toEqual({ lowered: true, nice: '10' });
    expect(readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1]!.split(' ')[16]).toBe(before);
  });
});
