/**
 * Where the compiled script of a worker thread is. Workers run compiled JavaScript: from the
 * build the script is under the module root (dist/); from the TypeScript sources (the tests) it
 * is the compiled one in the repository's dist/.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { moduleRoot } from './assets.js';

/** `modulePath`: the worker's compiled path from the package root, e.g. 'merge/merge-worker.js'. */
export function workerScript(modulePath: string): URL {
  for (const path of [join(moduleRoot(), modulePath), join(moduleRoot(), 'dist', modulePath)]) {
    if (existsSync(path)) return pathToFileURL(path);
  }
  throw new Error(`${modulePath} is not built: run \`npm run build\``);
}

/**
 * One task on a thread of its own: runs the worker script `modulePath` with `task` as its
 * workerData and resolves with the one message it posts; rejects if it fails or exits first
 * (`what` names the thread in that error, e.g. 'merge thread').
 */
export function runOnThread<T>(modulePath: string, task: unknown, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(workerScript(modulePath), { workerData: task });
    let result: T | undefined;
    worker.once('message', (m: T) => (result = m));
    worker.once('error', reject);
    worker.once('exit', (code) => (result !== undefined ? resolve(result) : reject(new Error(`${what} exited with code ${code} before finishing`))));
  });
}

/** `a` in a SharedArrayBuffer (itself if it is already): threads then read it without a copy each. */
export function inSharedMemory<T extends Uint8Array | Uint32Array>(a: T): T {
  if (a.buffer instanceof SharedArrayBuffer) return a;
  const out = new (a.constructor as new (buffer: SharedArrayBuffer) => T)(new SharedArrayBuffer(a.byteLength));
  out.set(a as never);
  return out;
}
