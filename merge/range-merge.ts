/**
 * One merge thread's work: heap-merges the pairs of termIDs [startTerm, endTerm) from every
 * run into a headerless postings part file, each merged term's (termId, df, cf, encoded length)
 * in termID order into a figures part (term-figures-part.ts), or, given the range's terms, its
 * lexicon.bin blocks into a lexicon part (lexicon-file.ts), and its impacts into an impacts
 * part. With --positions it then merges the same pairs' positions into a positions part
 * (positions-merge.ts). The main thread concatenates the parts in range order into postings.bin,
 * positions.bin and lexicon.bin, or writes the lexicon from the figures (parallel-merge.ts).
 */
import { collectionFrequency, mergeRuns, type MergeCounters } from './heap-merge.js';
import { PostingsFileWriter } from './postings-file.js';
import { runSharesFor } from './term-ranges.js';
import { ImpactsBuilder } from './impact-blocks.js';
import { writeImpactsAt } from './impacts.js';
import { TermFiguresWriter } from './term-figures-part.js';
import { LexiconFileWriter } from './lexicon-file.js';
import { TermStream, textChunks } from './lexicon-union.js';
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
  /** Each merged term's figures, in termID order (term-figures-part.ts). */
  figuresPartPath: string;
  /** --positions: the range's positions part goes here. */
  positionsPartPath?: string;
  /** --positions: each document's position bound (shared; positions-file.ts positionBounds). */
  positionEnds?: Uint32Array;
  /**
   * The range's lexicon.bin blocks go here (a LexiconFileWriter part) instead of its terms'
   * figures to figuresPartPath; its terms, in termID order, are `termTexts` (textsOfRange).
   * The range starts at a multiple of LEXICON_BLOCK_TERMS.
   */
  lexiconPartPath?: string;
  termTexts?: string[];
}

/** A range's positions part: its terms and where they start, and what it holds. */
export interface RangePositions extends PositionsPartTerms {
  postings: number;
  positions: number;
}

export interface RangeMergeResult {
  counters: MergeCounters;
  /** Terms merged: rows of the figures part (task.figuresPartPath), or of the lexicon part. */
  terms: number;
  /** Postings written: the sum of the terms' df. */
  postings: number;
  partBytes: number;
  /** The range's impacts, written as a file of impacts.bin's format (task.impactsPartPath). */
  impactsPart?: string;
  positions?: RangePositions;
}

export function mergeRange(task: RangeMergeTask): RangeMergeResult {
  const { ranges, terms } = runSharesFor(task.runPaths, task.startTerm, task.keys, task.lexicons);
  const part = new PostingsFileWriter(task.partPath, { header: false });
  const lexicon = task.lexiconPartPath === undefined ? undefined : new LexiconFileWriter(task.lexiconPartPath, { part: true });
  const figures = lexicon ? undefined : new TermFiguresWriter(task.figuresPartPath);
  const names = lexicon && new TermStream(textChunks(task.termTexts ?? []));
  const nextName = (termId: number): string => {
    const name = names!.next();
    if (name === undefined) throw new Error(`merge: termID ${termId} has no term in the range's texts`);
    return name;
  };
  // Encoded into impacts.bin's records as they come: the range's arrays would be held to its end.
  const impacts = task.lengths && new ImpactsBuilder(task.lengths, { firstTerm: task.startTerm });
  let postings = 0;
  let termCount = 0;
  try {
    const counters = mergeRuns(
      task.runPaths,
      task.chunkPairs,
      (termId, docIds, tfs, df) => {
        // With impacts, one pass encodes the list and measures its blocks.
        const { offset, length } = part.append(docIds, tfs, df, impacts);
        const cf = collectionFrequency(tfs, df);
        if (lexicon) {
          if (termId !== task.startTerm + termCount) throw new Error(`merge: termID ${termId} where ${task.startTerm + termCount} comes next`);
          lexicon.add(nextName(termId), df, cf, offset, length);
        } else figures!.add(termId, df, cf, length);
        termCount++;
        postings += df;
      },
      ranges,
      terms,
    );
    part.close();
    figures?.close();
    if (lexicon) {
      if (task.endTerm !== undefined && termCount !== task.endTerm - task.startTerm) throw new Error(`merge: ${termCount} terms merged in termIDs [${task.startTerm}, ${task.endTerm})`);
      lexicon.finish();
    }
    const positions = task.positionsPartPath === undefined ? undefined : mergeRangePositions(task, task.positionsPartPath, ranges, terms);
    // The impacts go to a file, not back to the main thread, which would hold every range's until the end.
    if (impacts) writeImpactsAt(task.impactsPartPath!, [impacts.finish()], task.startTerm);
    return { counters, terms: termCount, postings, partBytes: part.offset, ...(impacts ? { impactsPart: task.impactsPartPath! } : {}), positions };
  } catch (err) {
    part.closeQuietly();
    lexicon?.abort();
    try {
      figures?.close();
    } catch {
      // the merge's own error is the one to report
    }
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

