/** Corpus readers: walk a crawl and read its files into documents (see types.ts). */
import { listCorpusFiles } from './walk.js';
import { readCorpusFile } from './read-file.js';
import type { CorpusItem, CorpusOptions } from './types.js';

export * from './types.js';
export { listCorpusFiles, type CorpusListing } from './walk.js';
export { readCorpusFile } from './read-file.js';
export { htmlToText } from './html.js';

/** Every document of the crawl, in crawl order, with the skipped files and documents. */
export async function* readCorpus(root: string, options: CorpusOptions = {}): AsyncGenerator<CorpusItem> {
  const { base, files, skipped } = await listCorpusFiles(root);
  for (const s of skipped) yield { kind: 'skip', skip: s };
  for (const f of files) yield* readCorpusFile(base, f, options);
}
