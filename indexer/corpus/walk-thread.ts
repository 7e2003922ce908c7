/**
 * A thread that walks a crawl (listCorpusFiles) and posts its listing, or nothing when the walk
 * fails (the build then walks itself, and words the failure): walk-ahead.ts starts it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { listCorpusFiles } from './walk.js';

const { root } = workerData as { root: string };
listCorpusFiles(root).then(
  (listing) => parentPort!.postMessage({ listing }),
  () => parentPort!.postMessage({}),
);
