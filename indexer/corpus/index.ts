/**
 * Corpus readers: walk a crawl (walk.ts) and read its files into documents (read-file.ts).
 * Bad input never throws: it becomes a skip item. Only a crawl root that is missing, unreadable
 * or of the wrong kind, and bad --fields, throw (CorpusError, one line).
 */
import { resolveFields } from './fields.js';
import { readFileWith } from './read-file.js';
import type { CorpusItem, CorpusOptions } from './types.js';
import { walkCorpus } from './walk.js';

export * from './types.js';
export { listCorpusFiles, walkCorpus, type CorpusListing, type WalkEntry } from './walk.js';
export { readCorpusFile, readPlainJsonlSync, describeError, markdownTitle, MAX_LINE_BYTES, MAX_WHOLE_FILE_BYTES, type ByteRange } from './read-file.js';
export { resolveFields, type ResolvedFields } from './fields.js';
export { formatOf, SUPPORTED_EXTENSIONS, type CorpusFormat, type FileFormat } from './formats.js';
export { htmlToText, type HtmlText } from './html.js';
export { describeUnsupported, extensionOf, unsupportedFiles, UNSUPPORTED_TYPE, type UnsupportedFiles } from './unsupported.js';

/**
 * Every document of the crawl in crawl order, with the skipped files and documents where the
 * walk met them. `root` is a folder or a single file.
 */
export async function* readCorpus(root: string, options: CorpusOptions = {}): AsyncGenerator<CorpusItem> {
  const fields = resolveFields(options);
  const { base, entries } = await walkCorpus(root);
  for (const e of entries) {
    if ('skip' in e) yield { kind: 'skip', skip: e.skip };
    else yield* readFileWith(base, e.file, fields);
  }
}
