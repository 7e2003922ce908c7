/**
 * gpuindex's public API. Importing it has no side effects: the GPU is touched only when a
 * build asks for the GPU sorter.
 */
export { buildIndex, type BuildSummary, type StageReport } from './build.js';
export { joinShards, type JoinResult } from './join.js';
export { optimizeIndex, type OptimizeResult } from './optimize.js';
export { openWriter, IndexWriter, type WriterOptions } from './writer.js';
export { openIndex, IndexReader, type Posting, type SearchHit, type SearchOptions, type StoredDocument } from './reader.js';
export type { BuildOptions, InputDocument, ProgressEvent, SorterChoice, PipelineChoice } from './shared/options.js';
export type { CollectionStats, LexiconEntry } from '../merge/index-store.js';
export type { SkippedItem } from '../indexer/corpus/index.js';
export { UserError, AbortError } from './shared/errors.js';
export type { TermId, DocId, PairSorter, SortTiming } from './shared/types.js';
export type { TokenizerOptions } from './shared/options.js';
