/**
 * The merge spread over threads by term range (term-ranges.ts): each thread merges its range
 * from every run into a postings part (range-merge.ts); the caller's thread meanwhile does its
 * own work (the document table), then appends the parts in range order and hands each term's
 * lexicon entry to `onList`, or each range's lexicon.bin blocks to `onPart` where the threads
 * have the terms' strings, so postings.bin and the lexicon come out byte for byte as the
 * single-threaded merge writes them. With --positions each thread also writes its range's
 * positions part, appended the same way to positions.bin.
 */
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { MergeCounters } from './heap-merge.js';
import type { PostingsFileWriter } from './postings-file.js';
import type { PositionsFileWriter } from './positions-file.js';
import type { RangeMergeResult, RangeMergeTask } from './range-merge.js';
import { inSharedMemory, runSeriesOnThread } from '../runtime/worker-script.js';
import { integerFromEnv } from '../runtime/env-knobs.js';
import { runKeysAt, splitTermRanges } from './term-ranges.js';
import { sharedLexicons, type RunLexicons } from './run-lexicons.js';
import { readTermFigures } from './term-figures-part.js';
import { LEXICON_BLOCK_TERMS } from './lexicon-file.js';
import { textsOfRange } from './lexicon-union.js';

export interface ParallelMergeInput {
  runPaths: readonly string[];
  /** Map the runs' keys to termIDs (and document numbers to docIDs); without them keys are termIDs. */
  lexicons?: RunLexicons;
  /** The documents' lengths: with them each thread builds its range's impacts, handed to onImpacts (a range's file each, in order). */
  lengths?: Uint32Array;
  /** The impacts of every term: the threads' range files in order, for writeImpactsFile (which removes them). */
  onImpacts?: (parts: string[]) => void;
  threads: number;
  /** Pairs per run cursor in each thread. */
  chunkPairs: number;
  /** Folder for the part files (removed as they are appended). */
  partDir: string;
  postings: PostingsFileWriter;
  /** --positions: positions.bin, its header written; the threads' positions parts are appended to it. */
  positions?: PositionsFileWriter;
  /** With `positions`: each document's position bound (positions-file.ts positionBounds). */
  positionEnds?: Uint32Array;
  /** Each term's list, in termID order, with its offset and length in postings.bin (unless `lexiconParts`). */
  onList: (termId: number, df: number, cf: number, offset: number, length: number) => void;
  /**
   * Every term's string (LexiconUnion.texts, `textTerms` terms in each, `terms` in all): each
   * thread writes its range's lexicon.bin blocks, handed to `onPart` in range order with where
   * the range's lists start in postings.bin, instead of each term's figures to `onList`. Ranges
   * then start at multiples of LEXICON_BLOCK_TERMS.
   */
  lexiconParts?: {
    /** Taken: emptied once the threads have their ranges of them, so that the texts are held once. */
    texts: string[];
    textTerms: readonly number[];
    terms: number;
    onPart: (path: string, postingsBase: number) => void;
  };
  /** Work for this thread while the merge threads run. */
  meanwhile?: () => void;
  /** Called once every range is merged: the runs are read (the parts may still be being appended). */
  onRunsRead?: () => void;
  onFraction?: (f: number) => void;
}

export interface ParallelMergeCounters extends MergeCounters {
  /** Threads the merge actually used (fewer than asked when the runs hold few distinct terms). */
  threads: number;
  /** Milliseconds from the start until the last merge thread finished. */
  threadsMs: number;
  /**
   * Milliseconds the calling thread spent appending parts to postings.bin (copying them, and
   * waiting for the hash thread when it falls behind) and handing out lexicon entries.
   */
  appendMs: number;
  /** With `positions`: the postings and positions positions.bin got. */
  positionsWritten?: { postings: number; positions: number };
  /** Postings written: the sum of every term's df. */
  postings: number;
}

/** The merge thread's script (runtime/worker-script.ts startThreads may start its threads ahead). */
export const MERGE_THREAD_SCRIPT = 'merge/merge-worker.js';

/**
 * Term ranges a merge thread takes, one after the other. The main thread appends the parts in
 * range order (a copy and a hash: 1.0-1.2 s for the 8 GB crawl's 1.4 GB of postings on 64
 * cores), so with one range a thread all of it waited for the last thread; with a wave of ranges
 * per thread, a wave's parts are appended while the next one merges. GPUINDEX_MERGE_WAVES
 * overrides it (a benchmark knob).
 */
const MERGE_WAVES = 4;

/**
 * Run bytes from which a merge takes waves: below it the appends are short, and the ranges'
 * own costs (a cursor on every run, part files) are not (the HTML crawl's 0.3 GB of runs merged
 * in 0.62 s with waves against 0.54 s without, 16-core machine).
 */
const MERGE_WAVES_MIN_RUN_BYTES = 1 << 30;

function mergeWaves(runPaths: readonly string[]): number {
  const knob = integerFromEnv('GPUINDEX_MERGE_WAVES', 1, 64);
  if (knob !== undefined) return knob;
  return runPaths.reduce((a, p) => a + statSync(p).size, 0) >= MERGE_WAVES_MIN_RUN_BYTES ? MERGE_WAVES : 1;
}

/**
 * Runs the tasks on `threads` threads, thread j taking tasks j, j + threads, ... in turn, so
 * that the tasks finish about in order; one promise a task.
 */
function runRanges(tasks: readonly RangeMergeTask[], threads: number): Promise<RangeMergeResult>[] {
  const pending = new Array<Promise<RangeMergeResult>>(tasks.length);
  for (let j = 0; j < threads; j++) {
    const mine: number[] = [];
    for (let i = j; i < tasks.length; i += threads) mine.push(i);
    runSeriesOnThread<RangeMergeResult>(MERGE_THREAD_SCRIPT, mine.map((i) => tasks[i]!), 'merge thread').forEach((p, k) => (pending[mine[k]!] = p));
  }
  return pending;
}

export async function mergeInParallel(input: ParallelMergeInput): Promise<ParallelMergeCounters> {
  const lexicons = input.lexicons && sharedLexicons(input.lexicons);
  const lengths = input.lengths && inSharedMemory(input.lengths);
  const positionEnds = input.positions && inSharedMemory(input.positionEnds!);
  const lex = input.lexiconParts;
  let starts = splitTermRanges(input.runPaths, input.threads * (input.threads > 1 ? mergeWaves(input.runPaths) : 1), lexicons);
  // A range of whole lexicon blocks (but the last) is a part lexicon.bin takes as bytes.
  if (lex) starts = [...new Set(starts.map((t) => t - (t % LEXICON_BLOCK_TERMS)))];
  // Each run's key at every boundary, in one walk of the term order per run.
  const keys = runKeysAt(input.runPaths, starts, lexicons);
  const tasks: RangeMergeTask[] = starts.map((startTerm, i) => ({
    runPaths: input.runPaths,
    chunkPairs: input.chunkPairs,
    startTerm,
    endTerm: starts[i + 1],
    keys: keys.map((k) => (i + 1 < starts.length ? [k[i]!, k[i + 1]!] : [k[i]!])),
    lexicons,
    lengths,
    partPath: join(input.partDir, `postings.part-${String(i).padStart(3, '0')}`),
    figuresPartPath: join(input.partDir, `figures.part-${String(i).padStart(3, '0')}`),
    ...(lengths ? { impactsPartPath: join(input.partDir, `impacts.part-${String(i).padStart(3, '0')}`) } : {}),
    ...(input.positions ? { positionsPartPath: join(input.partDir, `positions.part-${String(i).padStart(3, '0')}`), positionEnds } : {}),
    ...(lex ? { lexiconPartPath: join(input.partDir, `lexicon.part-${String(i).padStart(3, '0')}`), termTexts: textsOfRange(lex.texts, lex.textTerms, startTerm, starts[i + 1] ?? lex.terms) } : {}),
  }));
  const t0 = performance.now();
  let lastDone = t0;
  /** The impacts parts went to onImpacts: theirs to remove. */
  let handedOver = false;
  const threads = Math.min(input.threads, tasks.length);
  const pending = runRanges(tasks, threads).map((p) => p.then((r) => ((lastDone = Math.max(lastDone, performance.now())), r)));
  if (lex) {
    // Each thread was given a copy of its range's texts as it started: this thread lets go of them
    // (the ranges are views that would keep every text alive).
    for (const t of tasks) delete t.termTexts;
    lex.texts.length = 0;
  }
  // Settle every thread before leaving, even on failure, so none writes into a deleted folder.
  const settled = Promise.allSettled(pending);
  if (input.onRunsRead) void Promise.all(pending).then(input.onRunsRead, () => {});
  const counters: ParallelMergeCounters = { runs: input.runPaths.length, pairs: 0, terms: 0, segmentPops: 0, threads, threadsMs: 0, appendMs: 0, postings: 0, ...(input.positions ? { positionsWritten: { postings: 0, positions: 0 } } : {}) };
  try {
    input.meanwhile?.();
    for (let i = 0; i < tasks.length; i++) {
      const r = await pending[i]!;
      const tAppend = performance.now();
      let offset = input.postings.offset;
      if ((await input.postings.appendFile(tasks[i]!.partPath)) !== r.partBytes) throw new Error(`merge: postings part ${i} has the wrong size`);
      rmSync(tasks[i]!.partPath, { force: true });
      if (input.positions) {
        const p = r.positions;
        if (!p) throw new Error(`merge: range ${i} wrote no positions part`);
        input.positions.appendPart(tasks[i]!.positionsPartPath!, p);
        rmSync(tasks[i]!.positionsPartPath!, { force: true });
        counters.positionsWritten!.postings += p.postings;
        counters.positionsWritten!.positions += p.positions;
      }
      if (lex) {
        lex.onPart(tasks[i]!.lexiconPartPath!, offset);
        rmSync(tasks[i]!.lexiconPartPath!, { force: true });
      } else {
        const rows = readTermFigures(tasks[i]!.figuresPartPath, (termId, df, cf, length) => {
          input.onList(termId, df, cf, offset, length);
          offset += length;
        });
        if (rows !== r.terms) throw new Error(`merge: range ${i} merged ${r.terms} terms, its figures part holds ${rows}`);
        rmSync(tasks[i]!.figuresPartPath, { force: true });
      }
      counters.postings += r.postings;
      counters.pairs += r.counters.pairs;
      counters.terms += r.counters.terms;
      counters.segmentPops += r.counters.segmentPops;
      counters.appendMs += performance.now() - tAppend;
      input.onFraction?.((i + 1) / tasks.length);
    }
    counters.threadsMs = lastDone - t0;
    if (input.lengths) input.onImpacts?.(await Promise.all(pending).then((rs) => rs.map((r) => r.impactsPart!)));
    handedOver = true;
  } finally {
    await settled;
    for (const t of tasks) {
      rmSync(t.partPath, { force: true });
      rmSync(t.figuresPartPath, { force: true });
      if (t.lexiconPartPath) rmSync(t.lexiconPartPath, { force: true });
      if (t.impactsPartPath && !handedOver) rmSync(t.impactsPartPath, { force: true });
      if (t.positionsPartPath) rmSync(t.positionsPartPath, { force: true });
    }
  }
  return counters;
}
