/**
 * merge_batches: heap-merges the sorted runs into postings.bin and writes the lexicon, the
 * document table, collection statistics and build settings into index.sqlite.
 */
import { join } from 'node:path';
import { mergeRuns, type MergeCounters } from './heap-merge.js';
import { INDEX_DB, INDEX_FORMAT_VERSION, IndexStoreWriter, POSTINGS_FILE, type CollectionStats } from './index-store.js';
import { PostingsFileWriter } from './postings-file.js';

export interface IndexContents {
  /** terms[termId] is the term string. */
  terms: readonly string[];
  documents: Iterable<{ docId: number; externalId: string; path: string; length: number }>;
  documentCount: number;
  totalTokens: number;
  settings: Record<string, unknown>;
}

export interface WriteIndexResult {
  merge: MergeCounters;
  stats: CollectionStats;
  postingsBytes: number;
}

/** Merge memory: each run cursor reads this many pairs at a time (bounded by the budget). */
export function cursorChunkPairs(runs: number, memoryBytes: number): number {
  const perRun = Math.floor(memoryBytes / 2 / Math.max(1, runs) / 8);
  return Math.max(4096, Math.min(1 << 19, perRun));
}

export function writeIndex(dir: string, runPaths: readonly string[], contents: IndexContents, memoryBytes: number, onFraction?: (f: number) => void): WriteIndexResult {
  const store = new IndexStoreWriter(join(dir, INDEX_DB));
  const postings = new PostingsFileWriter(join(dir, POSTINGS_FILE));
  try {
    let postingsCount = 0;
    const termCount = contents.terms.length;
    const merge = mergeRuns(runPaths, cursorChunkPairs(runPaths.length, memoryBytes), (termId, docIds, tfs, df) => {
      let cf = 0;
      for (let i = 0; i < df; i++) cf += tfs[i]!;
      const { offset, length } = postings.append(docIds, tfs, df);
      store.addTerm({ term: contents.terms[termId]!, termId, df, cf, offset, length });
      postingsCount += df;
      if (onFraction && (termId & 0xffff) === 0) onFraction(termId / Math.max(1, termCount));
    });
    postings.close();
    for (const d of contents.documents) store.addDocument(d.docId, d.externalId, d.path, d.length);
    const stats: CollectionStats = {
      documents: contents.documentCount,
      terms: merge.terms,
      totalTokens: contents.totalTokens,
      averageLength: contents.documentCount ? contents.totalTokens / contents.documentCount : 0,
      postings: postingsCount,
      formatVersion: INDEX_FORMAT_VERSION,
    };
    store.setStats(stats);
    store.setSettings(contents.settings);
    store.commitAndClose();
    return { merge, stats, postingsBytes: postings.offset };
  } catch (err) {
    store.abort();
    throw err;
  }
}
