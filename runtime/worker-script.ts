/**
 * Where the compiled script of a worker thread is. Workers run compiled JavaScript: from the
 * build the script is under the module root (dist/); from the TypeScript sources (the tests) it
 * is the compiled one in the repository's dist/.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker, type MessagePort } from 'node:worker_threads';
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
    const worker = threadWith(modulePath, task, reject);
    let result: T | undefined;
    worker.once('message', (m: T) => (result = m));
    worker.once('exit', (code) => (result !== undefined ? resolve(result) : reject(new Error(`${what} exited with code ${code} before finishing`))));
  });
}

/**
 * Several tasks on one thread, in order: runs the worker script `modulePath` with `{ series:
 * tasks }` (as runOnThread passes one task) and gives one promise a task, settled by the
 * thread's messages in turn; if the thread fails or exits early, every task not answered yet
 * rejects.
 */
export function runSeriesOnThread<T>(modulePath: string, tasks: readonly unknown[], what: string): Promise<T>[] {
  const answers = tasks.map(() => {
    const a = {} as { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void };
    a.promise = new Promise<T>((resolve, reject) => Object.assign(a, { resolve, reject }));
    return a;
  });
  let next = 0;
  const fail = (err: unknown): void => {
    while (next < answers.length) answers[next++]!.reject(err);
  };
  const worker = threadWith(modulePath, { series: tasks }, fail);
  worker.on('message', (m: T) => {
    if (next < answers.length) answers[next++]!.resolve(m);
  });
  worker.once('exit', (code) => fail(new Error(`${what} exited with code ${code} before finishing`)));
  return answers.map((a) => a.promise);
}

/**
 * A thread of `modulePath` given `payload`: one started ahead (startThreads), sent it as its
 * first message, or a new one with it as workerData; its errors go to `onError` (at once, for
 * one started ahead that failed meanwhile).
 */
function threadWith(modulePath: string, payload: unknown, onError: (err: unknown) => void): Worker {
  const early = started.get(modulePath)?.shift();
  if (!early) {
    const worker = new Worker(workerScript(modulePath), { workerData: payload });
    worker.once('error', onError);
    return worker;
  }
  const { worker } = early;
  worker.ref();
  worker.off('error', early.onError);
  worker.once('error', onError);
  if (early.failure !== undefined) onError(early.failure);
  else worker.postMessage(payload);
  return worker;
}

/** A thread started ahead of its task (startThreads), and what it failed with meanwhile. */
interface EarlyThread {
  worker: Worker;
  onError: (err: unknown) => void;
  failure?: unknown;
}
const started = new Map<string, EarlyThread[]>();

/**
 * Starts threads of `modulePath` now, up to `count` waiting, for runOnThread to hand tasks to
 * later: a thread's start (an isolate, Node, its modules: 30-80 ms) then overlaps what the
 * build does meanwhile. Its script takes the task from workerData or, started so, from its first
 * message (taskOfThread). Those not used hold the process open no longer than stopStartedThreads.
 */
export function startThreads(modulePath: string, count: number): void {
  const list = started.get(modulePath) ?? [];
  started.set(modulePath, list);
  while (list.length < count) {
    const early: EarlyThread = { worker: new Worker(workerScript(modulePath)), onError: (err) => (early.failure ??= err) };
    early.worker.on('error', early.onError);
    early.worker.unref();
    list.push(early);
  }
}

/** Threads of `modulePath` started ahead and waiting for a task. */
export function threadsWaiting(modulePath: string): number {
  return started.get(modulePath)?.length ?? 0;
}

/** Ends the threads startThreads started that no task took: of every script, or of `modulePath` all but `keep`. */
export function stopStartedThreads(modulePath?: string, keep = 0): void {
  const lists = modulePath === undefined ? [...started.values()] : [started.get(modulePath) ?? []];
  for (const list of lists) for (const t of list.splice(keep)) void t.worker.terminate();
}

/** A thread script's task: its workerData, or (a thread started ahead) its first message. */
export function taskOfThread<T>(workerData: unknown, port: MessagePort | null, run: (task: T) => void): void {
  if (workerData !== undefined && workerData !== null) run(workerData as T);
  else port!.once('message', (task: T) => run(task));
}

/** `a` in a SharedArrayBuffer (itself if it is already): threads then read it without a copy each. */
export function inSharedMemory<T extends Uint8Array | Uint32Array>(a: T): T {
  if (a.buffer instanceof SharedArrayBuffer) return a;
  const out = new (a.constructor as new (buffer: SharedArrayBuffer) => T)(new SharedArrayBuffer(a.byteLength));
  out.set(a as never);
  return out;
}
