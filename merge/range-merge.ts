/**
 * One merge thread's work: heap-merges the pairs of termIDs [startTerm, endTerm) from every
 * run into a headerless postings part file, and returns each merged term's (termId, df, cf,
 * encoded length) in termID order. With --positions it then merges the same pairs' positions
 * into a positions part (positions-merge.ts). The main thread concatenates the parts in range
 * order into postings.bin and positions.bin and writes the lexicon (parallel-merge.ts).
 */
import { collectionFrequency, mergeRuns, type MergeCounters } from './heap-merge.js';
import { PostingsFileWriter } from './postings-file.js';
import { runSharesFor } from './term-ranges.js';
import { ImpactsBuilder, writeImpactsAt } from './impacts.js';
import type { RunLexicons } from './run-lexicons.js';
import { mergePositions } from './positions-merge.js';
import { PositionsPartWriter, type PositionsPartTerms } from './positions-file.js';

export interface RangeMergeTask {
  runPaths: readonly string[];
  chunkPairs: number;
  startTerm: number;
  /** Exclusive; undefined for the last range. */
  endTerm?: number;
  /** Each run's keys at startTerm and endTerm (term-ranges.ts runKeysAt). */
  keys: number[][];
  /** Map keys (and document numbers) to termIDs (and docIDs); undefined: keys are termIDs. */
  lexicons?: RunLexicons;
  /** The documents' lengths (shared): the thread builds its range's impacts (merge/impacts.ts), written to impactsPartPath. */
  lengths?: Uint32Array;
  impactsPartPath?: string;
  partPath: string;
  /** --positions: the range's positions part goes here. */
  positionsPartPath?: string;
  /** --positions: each document's position bound (shared; positions-file.ts positionBounds). */
  positionEnds?: Uint32Array;
}

/** A range's positions part: its terms and where they start, and what it holds. */
export interface RangePositions extends PositionsPartTerms {
  postings: number;
  positions: number;
}

export interface RangeMergeResult {
  counters: MergeCounters;
  termIds: Uint32Array;
  dfs: Uint32Array;
  /** Collection frequencies; a double, as a frequent term's cf may pass 2^32 in a large crawl. */
  cfs: Float64Array;
  lengths: Uint32Array;
  partBytes: number;
  /** The range's impacts, written as a file of impacts.bin's format (task.impactsPartPath). */
  impactsPart?: string;
  positions?: RangePositions;
}

export function mergeRange(task: RangeMergeTask): RangeMergeResult {
  const { ranges, terms } = runSharesFor(task.runPaths, task.startTerm, task.keys, task.lexicons);
  const part = new PostingsFileWriter(task.partPath, { header: false });
  const impacts = task.lengths && new ImpactsBuilder(task.lengths);
  let n = 0;
  let termIds = new Uint32Array(1024);
  let dfs = new Uint32Array(1024);
  let cfs = new Float64Array(1024);
  let lengths = new Uint32Array(1024);
  try {
    const counters = mergeRuns(
      task.runPaths,
      task.chunkPairs,
      (termId, docIds, tfs, df) => {
        if (n === termIds.length) {
          termIds = grow(termIds, new Uint32Array(2 * n));
          dfs = grow(dfs, new Uint32Array(2 * n));
          cfs = grow(cfs, new Float64Array(2 * n));
          lengths = grow(lengths, new Uint32Array(2 * n));
        }
        termIds[n] = termId;
        dfs[n] = df;
        cfs[n] = collectionFrequency(tfs, df);
        // With impacts, one pass encodes the list and measures its blocks.
        lengths[n++] = part.append(docIds, tfs, df, impacts).length;
      },
      ranges,
      terms,
    );
    part.close();
    const positions = task.positionsPartPath === undefined ? undefined : mergeRangePositions(task, task.positionsPartPath, ranges, terms);
    // The impacts go to a file, not back to the main thread, which would hold every range's until the end.
    if (impacts) writeImpactsAt(task.impactsPartPath!, [impacts.finish()]);
    return { counters, termIds: termIds.slice(0, n), dfs: dfs.slice(0, n), cfs: cfs.slice(0, n), lengths: lengths.slice(0, n), partBytes: part.offset, ...(impacts ? { impactsPart: task.impactsPartPath! } : {}), positions };
  } catch (err) {
    part.closeQuietly();
    throw err;
  }
}

/** The positions of the range's pairs, after its postings (the run files are in the page cache by then). */
function mergeRangePositions(task: RangeMergeTask, path: string, ranges: Parameters<typeof mergePositions>[3], terms: Parameters<typeof mergePositions>[4]): RangePositions {
  const part = new PositionsPartWriter(path, task.positionEnds!);
  try {
    const counts = mergePositions(task.runPaths, task.chunkPairs, part, ranges, terms);
    return { ...part.close(), ...counts };
  } catch (err) {
    part.closeQuietly();
    throw err;
  }
}

function grow<T extends Uint32Array | Float64Array>(from: T, to: T): T {
  to.set(from);
  return to;
}
