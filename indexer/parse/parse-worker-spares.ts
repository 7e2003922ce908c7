/**
 * Parse workers started ahead of a build. A worker thread takes about 80 ms on the 2-core
 * development machine before its code runs (Node's own bootstrap in a fresh isolate, then its
 * modules); the CLI starts the build's workers as it begins loading (src/cli-prestart.ts), so that
 * time passes beside the main thread's own module loading instead of before the first batch.
 * A spare waits, unreferenced (it never keeps the process alive), for the 'init' message that
 * ParsePool sends with the build's settings.
 */
import { Worker } from 'node:worker_threads';
import { workerScript } from '../../runtime/worker-script.js';

interface Spare {
  worker: Worker;
  maxYoungGenerationMb: number | undefined;
  /** Settles once the worker has loaded its modules (its 'loaded' message), or has ended. */
  loaded: Promise<void>;
}

const spares: Spare[] = [];

/**
 * The resident memory of a spare that has loaded its modules and waits: measured on the H100
 * machine, 15 spares raised the process's RSS by 148 MiB (56 -> 204 MiB). The memory plan
 * counts every parse worker at PARSE_WORKER_BYTES, so this much of the process it measures is
 * taken out of its baseline (build.ts) rather than counted twice.
 */
export const SPARE_WORKER_BYTES = 10 * 2 ** 20;

/**
 * Settles once every spare has loaded its modules, so that the process measured for the memory
 * plan's baseline holds each spare's SPARE_WORKER_BYTES in full: with the CLI bundled
 * (scripts/bundle.mjs) this thread got there first, while 12 spares on 2 cores were still loading.
 * The build waits for nothing it would not wait for anyway: a spare parses only once loaded.
 */
export async function spareWorkersLoaded(): Promise<void> {
  await Promise.all(spares.map((s) => s.loaded));
}

/** What the spares waiting now hold (SPARE_WORKER_BYTES each). */
export function spareWorkerBytes(): number {
  return spares.length * SPARE_WORKER_BYTES;
}

/** Starts `count` parse workers with these resource limits (as ParsePool would make them). */
export function prestartParseWorkers(count: number, maxYoungGenerationMb: number | undefined): void {
  for (let i = 0; i < count; i++) {
    const resourceLimits = maxYoungGenerationMb ? { maxYoungGenerationSizeMb: maxYoungGenerationMb } : undefined;
    const worker = new Worker(workerScript('indexer/parse/parse-worker.js'), { workerData: { deferred: true }, resourceLimits });
    worker.unref();
    // A spare that fails to start is simply not used (ParsePool starts a fresh worker instead).
    const loaded = new Promise<void>((resolve) => {
      worker.once('message', () => resolve());
      worker.once('exit', () => resolve());
    });
    const spare: Spare = { worker, maxYoungGenerationMb, loaded };
    worker.once('error', () => drop(spare));
    worker.once('exit', () => drop(spare));
    spares.push(spare);
  }
}

function drop(spare: Spare): void {
  const i = spares.indexOf(spare);
  if (i >= 0) spares.splice(i, 1);
}

/**
 * A started worker made with the same young-generation limit, now referenced and no longer a
 * spare; undefined if there is none. The caller sends it { type: 'init' } first.
 */
export function takeSpareWorker(maxYoungGenerationMb: number | undefined): Worker | undefined {
  const i = spares.findIndex((s) => s.maxYoungGenerationMb === maxYoungGenerationMb);
  if (i < 0) return undefined;
  const [spare] = spares.splice(i, 1);
  spare!.worker.removeAllListeners('error').removeAllListeners('exit').removeAllListeners('message');
  spare!.worker.ref();
  return spare!.worker;
}

/** Ends the spares nobody took (a build that needed fewer workers, or none). */
export async function endSpareWorkers(): Promise<void> {
  const left = spares.splice(0);
  await Promise.all(left.map((s) => s.worker.terminate()));
}

/** Spares waiting (for tests). */
export function spareWorkerCount(): number {
  return spares.length;
}
