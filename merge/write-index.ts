/**
 * merge_batches: heap-merges the sorted runs into postings.bin, writes the lexicon (lexicon.bin)
 * and the document table, collection statistics and build settings into index.sqlite.
 */
import { integerFromEnv } from '../runtime/env-knobs.js';
import { join } from 'node:path';
import { collectionFrequency, mergeRuns, type MergeCounters } from './heap-merge.js';
import { POSTINGS_FILE, type CollectionStats, type IndexStoreWriter } from './index-store.js';
import { mergeInParallel } from './parallel-merge.js';
import { PostingsFileWriter } from './postings-file.js';
import { ImpactsBuilder, type EncodedImpacts, type Impacts } from './impact-blocks.js';
import type { IndexRowsAhead } from './rows-ahead.js';
import type { BlockPostings } from './doc-order-postings.js';
import { lexiconOfRun, type RunLexicons } from './run-lexicons.js';
import type { RunSource } from './runs.js';
import { textChunks } from './lexicon-union.js';
import { writePositionsFile } from './positions-merge.js';
import { PositionsFileWriter } from './positions-file.js';

/** Run files only: positions are merged from the runs' positions files. */
function runFiles(runs: readonly RunSource[]): string[] {
  return runs.map((r) => {
    if (typeof r !== 'string') throw new Error('positions need every block written as a run');
    return r;
  });
}

/** The runs' lexicons: as given, or the dictionary's order for every run. */
function runLexiconsOf(contents: IndexContents): RunLexicons {
  return contents.runLexicons ?? { lexicons: [{ order: contents.order }] };
}

export interface IndexContents {
  /**
   * The rows known before the merge (the documents, in rows.store, the index database opened
   * before the parse), the first of them perhaps written already while the parse waited
   * (rows-ahead.ts). The merge writes the rest, and the lexicon as it hands out the lists.
   */
  rows: IndexRowsAhead;
  /** Terms in the dictionary: each must get its figures from the merge. */
  termCount: number;
  /** The dictionary's strings by the ids blocks were filled with (TermDictionary.terms). */
  terms: readonly string[];
  /** Those ids in code point order of their terms: a term's termID is its position here (TermDictionary.order). */
  order: Uint32Array;
  /** How the runs' keys map to termIDs; default: every run keyed by `order` (run-lexicons.ts). */
  runLexicons?: RunLexicons;
  /**
   * The terms in termID order as united parse workers' lexicons give them (LexiconUnion.texts),
   * instead of terms and order. Where the merge threads write the lexicon, the merge takes them
   * (the array is emptied once the threads have their ranges).
   */
  termTexts?: readonly string[];
  /** Terms in each of termTexts (LexiconUnion.textTerms): with them the merge threads write lexicon.bin's blocks. */
  termTextTerms?: readonly number[];
  /** The documents' lengths, indexed by DocId: with them the merge builds impacts.bin's contents. */
  lengths?: Uint32Array;
  documentCount: number;
  totalTokens: number;
  settings: Record<string, unknown>;
  /** --positions: positions.bin is written at `path` beside postings.bin, from the runs' positions files. */
  positions?: PositionsTarget;
  /** Called once the merge threads have read every run (their parts may still be being appended). */
  onRunsRead?: () => void;
}

export interface PositionsTarget {
  path: string;
  /** Each document's title length in terms, by docID. */
  titleLengths: Uint32Array;
  /** Each document's position bound, by docID (positions-file.ts positionBounds). */
  ends: Uint32Array;
  titleWeight: number;
}

export interface WriteIndexResult {
  /** threads: merge threads used (1: merged on the calling thread); with threads, their timings (ParallelMergeCounters). */
  merge: MergeCounters & { threads: number; threadsMs?: number; appendMs?: number };
  stats: CollectionStats;
  postingsBytes: number;
  /** postings.bin's SHA-256 (hex), computed while writing it (for MANIFEST.json). */
  postingsSha256: string;
  /** impacts.bin's contents, built by the merge (with IndexContents.lengths): in memory, or a term range's file each, in order (writeImpactsFile). */
  impacts?: (Impacts | EncodedImpacts | string)[];
  /** With IndexContents.positions: the postings and positions positions.bin holds. */
  positions?: { postings: number; positions: number };
}

/** Merge memory: each run cursor reads this many pairs at a time (bounded by the budget). */
export function cursorChunkPairs(runs: number, memoryBytes: number): number {
  const perRun = Math.floor(memoryBytes / 2 / Math.max(1, runs) / 8);
  return Math.max(4096, Math.min(1 << 19, perRun));
}

/**
 * The single-threaded merge_batches. The document rows not written ahead go in first, then the
 * lexicon in termID order, the same order as writeIndexParallel, so both give identical
 * index.sqlite and lexicon.bin bytes.
 */
export function writeIndex(dir: string, runPaths: readonly RunSource[], contents: IndexContents, memoryBytes: number, onFraction?: (f: number) => void): WriteIndexResult {
  const { store } = contents.rows;
  const postings = new PostingsFileWriter(join(dir, POSTINGS_FILE));
  try {
    contents.rows.writeRest();
    store.termsFrom(termsInIdOrder(contents));
    let postingsCount = 0;
    const { termCount } = contents;
    const lexicons = runLexiconsOf(contents);
    const terms = runPaths.map((_, i) => ({ lexicon: lexiconOfRun(lexicons, i) }));
    const impacts = contents.lengths && new ImpactsBuilder(contents.lengths, { firstTerm: 0 });
    const merge = mergeRuns(
      runPaths,
      cursorChunkPairs(runPaths.length, memoryBytes),
      (termId, docIds, tfs, df) => {
        const { offset, length } = postings.append(docIds, tfs, df, impacts);
        store.addTermStats(termId, df, collectionFrequency(tfs, df), offset, length);
        postingsCount += df;
        if (onFraction && (termId & 0xffff) === 0) onFraction(termId / Math.max(1, termCount));
      },
      undefined,
      terms,
    );
    const sha256 = postings.close()!;
    const positions = contents.positions && writePositionsFile({ ...contents.positions, runPaths: runFiles(runPaths), chunkPairs: cursorChunkPairs(runPaths.length, memoryBytes), lexicons, terms: termCount });
    return { ...finish(store, contents, { ...merge, threads: 1 }, postingsCount, postings.offset, sha256), impacts: impacts && [impacts.finish()], ...(positions ? { positions: { postings: positions.postings, positions: positions.positions } } : {}) };
  } catch (err) {
    postings.closeQuietly();
    store.abort();
    throw err;
  }
}

/**
 * Terms from which the merge threads write lexicon.bin's blocks (GPUINDEX_LEXICON_PARTS_MIN_TERMS
 * sets it): the main thread writes ~150 ns a term, so below this it costs under 10 ms, and the
 * threads' ranges keep the boundaries the runs' pairs give them (not rounded to whole blocks).
 */
const LEXICON_PARTS_MIN_TERMS = 1 << 16;

/**
 * merge_batches over `threads` merge threads, each taking a range of terms (parallel-merge.ts);
 * this thread writes the document table meanwhile. Same bytes as writeIndex.
 */
export async function writeIndexParallel(dir: string, runPaths: readonly string[], contents: IndexContents, memoryBytes: number, threads: number, onFraction?: (f: number) => void): Promise<WriteIndexResult> {
  const { store } = contents.rows;
  // postings.bin's SHA-256 on its own thread, so appending the threads' parts copies and hashes at once.
  const postings = new PostingsFileWriter(join(dir, POSTINGS_FILE), { hashThread: true });
  let positions: PositionsFileWriter | undefined;
  try {
    const p = contents.positions;
    positions = p && new PositionsFileWriter(p.path, contents.termCount, p);
    let impacts: string[] | undefined;
    // With the terms' strings at hand as texts, each merge thread writes its range's lexicon.bin
    // blocks, once there are enough terms for the main thread's lexicon to cost time.
    const lexiconParts =
      contents.termTexts && contents.termTextTerms && store.writesLexiconFile && contents.termCount >= (integerFromEnv('GPUINDEX_LEXICON_PARTS_MIN_TERMS', 0, 2 ** 32) ?? LEXICON_PARTS_MIN_TERMS)
        ? { texts: contents.termTexts as string[], textTerms: contents.termTextTerms, terms: contents.termCount, onPart: (path: string, postingsBase: number) => store.appendLexiconPart(path, postingsBase) }
        : undefined;
    const merge = await mergeInParallel({
      runPaths,
      lexicons: runLexiconsOf(contents),
      lengths: contents.lengths,
      onImpacts: (i) => (impacts = i),
      threads,
      // Every thread holds a cursor on every run: split the cursor memory between them.
      chunkPairs: cursorChunkPairs(runPaths.length * threads, memoryBytes),
      partDir: dir,
      postings,
      positions,
      positionEnds: contents.positions?.ends,
      meanwhile: () => {
        contents.rows.writeRest();
        if (!lexiconParts) store.termsFrom(termsInIdOrder(contents));
      },
      ...(lexiconParts ? { lexiconParts } : {}),
      onList: (termId, df, cf, offset, length) => store.addTermStats(termId, df, cf, offset, length),
      onFraction,
      ...(contents.onRunsRead ? { onRunsRead: contents.onRunsRead } : {}),
    });
    const sha256 = (await postings.closeAsync())!;
    positions?.close();
    const { positionsWritten, postings: postingsCount, ...counters } = merge;
    return { ...finish(store, contents, counters, postingsCount, postings.offset, sha256), impacts, ...(positionsWritten ? { positions: positionsWritten } : {}) };
  } catch (err) {
    postings.closeQuietly();
    positions?.closeQuietly();
    store.abort();
    throw err;
  }
}

/**
 * merge_batches for a crawl that fitted in one block (worker-pipeline.ts BlockPostings): no runs
 * to merge; the lexicon rows come from the tally kept during the fill and go in while the parse
 * worker sorts the block and writes postings.bin. Same bytes as writeIndex.
 */
export async function writeIndexFromTally(dir: string, contents: IndexContents, block: BlockPostings, pairs: number, onFraction?: (f: number) => void): Promise<WriteIndexResult> {
  const { store } = contents.rows;
  try {
    contents.rows.writeRest();
    store.termsFrom(termsInIdOrder(contents));
    const { lexicon } = block;
    if (lexicon.terms !== contents.termCount) throw new Error(`the tally holds ${lexicon.terms} terms, the dictionary ${contents.termCount}`);
    // The tally is indexed by the fill's ids; the lexicon goes in termID order.
    const { order } = contents;
    const pick = <T extends Uint32Array | Float64Array>(a: T): T => a.map((_, p) => a[order[p]!]!) as T;
    store.addAllTermStats(lexicon.terms, pick(lexicon.df), pick(lexicon.cf), pick(lexicon.offsets), pick(lexicon.lengths));
    // Everything but the postings file's size and hash is known: the database is finished
    // while the worker may still be writing.
    const stats = finishStore(store, contents, lexicon.terms, lexicon.postings);
    const written = await block.written;
    onFraction?.(1);
    return { merge: { runs: 1, pairs, terms: written.terms, segmentPops: written.terms, threads: 1 }, stats, postingsBytes: written.bytes, postingsSha256: written.sha256, ...(written.impacts ? { impacts: written.impacts } : {}) };
  } catch (err) {
    store.abort();
    // The worker may still be writing postings.bin: the caller removes the folder once it is done.
    await block.written.catch(() => {});
    throw err;
  }
}

/** The terms' strings in termID order (their ranks in code point order), in chunks, for the lexicon as the merge hands out the lists. */
function* termsInIdOrder(contents: IndexContents): Generator<readonly string[]> {
  if (contents.termTexts) {
    yield* textChunks(contents.termTexts);
    return;
  }
  const { terms, order } = contents;
  if (order.length !== contents.termCount) throw new Error(`the term order holds ${order.length} terms, the dictionary ${contents.termCount}`);
  const CHUNK = 1 << 16;
  for (let p = 0; p < order.length; p += CHUNK) {
    const chunk = new Array<string>(Math.min(CHUNK, order.length - p));
    for (let i = 0; i < chunk.length; i++) chunk[i] = terms[order[p + i]!]!;
    yield chunk;
  }
}

function finish(store: IndexStoreWriter, contents: IndexContents, merge: WriteIndexResult['merge'], postingsCount: number, postingsBytes: number, postingsSha256: string): WriteIndexResult {
  const stats = finishStore(store, contents, merge.terms, postingsCount);
  return { merge, stats, postingsBytes, postingsSha256 };
}

/** Writes the collection statistics and build settings and commits index.sqlite. */
function finishStore(store: IndexStoreWriter, contents: IndexContents, terms: number, postingsCount: number): CollectionStats {
  // Every term of the dictionary has its string in the terms table: each must have its figures.
  if (store.termStatsCount !== contents.termCount || terms !== contents.termCount)
    throw new Error(`lexicon: ${store.termStatsCount} terms have figures (${terms} merged), the dictionary holds ${contents.termCount}`);
  const stats: CollectionStats = {
    documents: contents.documentCount,
    terms,
    totalTokens: contents.totalTokens,
    averageLength: contents.documentCount ? contents.totalTokens / contents.documentCount : 0,
    postings: postingsCount,
    formatVersion: store.formatVersion,
  };
  store.setStats(stats);
  store.setSettings(contents.settings);
  store.commitAndClose();
  return stats;
}
