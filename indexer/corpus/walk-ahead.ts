/**
 * A crawl folder walked on a thread of its own as the CLI starts (src/cli-prestart.ts), while
 * this thread loads its modules and probes for a GPU. The walk of 200,000 small files is about
 * 0.3 s of CPU (readdir, the names sorted and filtered): on the main thread it came before the
 * first parse task could go out. The listing is listCorpusFiles' own (the same function, on
 * the same folder), so the build is the same with or without it.
 */
import { Worker } from 'node:worker_threads';
import { workerScript } from '../../runtime/worker-script.js';
import type { CorpusListing } from './walk.js';

let ahead: { root: string; worker: Worker; listing: Promise<CorpusListing | undefined> } | undefined;

/** Starts walking `root` (resolved: the build matches it against its own) on a thread. */
export function walkAhead(root: string): void {
  const worker = new Worker(workerScript('indexer/corpus/walk-thread.js'), { workerData: { root } });
  // Unreferenced until a build takes the listing: a command that fails first does not wait for it.
  worker.unref();
  const listing = new Promise<CorpusListing | undefined>((resolve) => {
    worker.once('message', (m: { listing?: CorpusListing }) => resolve(m.listing));
    worker.once('error', () => resolve(undefined));
    worker.once('exit', () => resolve(undefined));
  });
  ahead = { root, worker, listing };
}

/**
 * The listing of `root` walked ahead, taken once; undefined if no walk of that folder was
 * started. It resolves to undefined where the walk failed: the caller then walks itself.
 */
export function takeWalkAhead(root: string): Promise<CorpusListing | undefined> | undefined {
  if (!ahead || ahead.root !== root) return undefined;
  const { worker, listing } = ahead;
  ahead = undefined;
  worker.ref();
  return listing.finally(() => worker.unref());
}
