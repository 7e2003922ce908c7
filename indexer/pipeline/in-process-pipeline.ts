/**
 * Indexcpu / Indexgpu (Fig. 7 of Capannini, Silvestri and Baraglia, "Sorting on GPUs for large
 * scale datasets: a thorough comparison"): Parse -> Sort -> toDisk, one block after another.
 * Parse tokenizes each document, maps terms to TermIds and fills a PairBlockBuilder; a full
 * block is sorted (CPU or GPU sorter, the only difference between the two indexers) and its
 * sorted run is written from the sorter's output view.
 */
import type { CorpusItem, SkippedItem } from '../corpus/index.js';
import { AbortError } from '../../src/shared/errors.js';
import type { Tokenizer } from '../analysis/tokenizer.js';
import type { PairSorter } from '../../src/shared/types.js';
import { PairBlockBuilder } from '../fill/block.js';
import { positionOf } from '../fill/block-positions.js';
import { alignPositions } from '../../merge/run-positions.js';
import type { TermDictionary } from '../fill/dictionary.js';
import type { DocumentTable } from '../fill/documents.js';
import { releaseBuffers } from '../../runtime/release-buffers.js';
import { RunSink } from '../sort/run-sink.js';
import type { BlockRun } from '../../merge/runs.js';
import { analysedTermIds, DocumentInverter } from '../scan/document-inverter.js';
import type { SharedInversion } from '../scan/shared-inversion.js';
import type { BufferPool } from '../../runtime/buffer-pool.js';
import type { StageClock } from './stage-clock.js';

export interface ParseCounters {
  documents: number;
  bytes: number;
  pairs: number;
  blocks: number;
  runBytes: number;
  skipped: SkippedItem[];
  skippedCount: number;
  /** Documents indexed with a warning (listed up to MAX_LISTED_SKIPS, all counted). */
  warned: SkippedItem[];
  warnedCount: number;
  /** Bytes of the crawl files finished so far and in all (for the progress ETA). */
  fileBytesDone: number;
  fileBytesTotal: number;
  /** Records that are not documents and no fault (WARC request records, images), by kind. */
  notIndexed: Record<string, number>;
}

export interface PipelineInput {
  source: AsyncIterable<CorpusItem>;
  tokenizer: Tokenizer;
  dictionary: TermDictionary;
  documents: DocumentTable;
  sorter: PairSorter;
  blockSize: number;
  runDir: string;
  clock: StageClock;
  signal?: AbortSignal;
  /** Called for each skipped file or document. */
  onSkip?: (item: SkippedItem) => void;
  /** Called for each document indexed with a warning. */
  onDocumentWarning?: (item: SkippedItem) => void;
  /** Called after each document and each block. */
  onProgress?: (counters: ParseCounters) => void;
  /** One-line warnings (a GPU fault and the switch to the CPU sorter). */
  onWarning?: (message: string) => void;
  /** --positions: each run gets its positions file (merge/run-positions.ts). */
  positions?: boolean;
  /** The analysis kept by the thread from one build to the next (src/build.ts buildKeeping). */
  sharedInversion?: SharedInversion;
  /** The block's and the CPU sorter's buffers, kept by the thread from one build to the next. */
  buffers?: BufferPool;
}

export interface PipelineResult {
  runPaths: string[];
  counters: ParseCounters;
  /** The sorter that sorted the last block ('cpu' after a GPU fault). */
  sorterKind: 'cpu' | 'gpu';
  /**
   * Every pair fitted in one block: sorted and kept in memory, not written as a run (no run
   * file written and read back). Merged like a run; release() once merged.
   */
  blockRun?: BlockRun & { release(): Promise<void> };
}

export function newCounters(): ParseCounters {
  return { documents: 0, bytes: 0, pairs: 0, blocks: 0, runBytes: 0, skipped: [], skippedCount: 0, warned: [], warnedCount: 0, fileBytesDone: 0, fileBytesTotal: 0, notIndexed: {} };
}

export function noteWarning(c: ParseCounters, w: SkippedItem, report?: (w: SkippedItem) => void): void {
  c.warnedCount++;
  if (c.warned.length < MAX_LISTED_SKIPS) c.warned.push(w);
  report?.(w);
}

/** Keep the summary readable on crawls with millions of bad lines: list the first ones, count all. */
export const MAX_LISTED_SKIPS = 1000;

export async function runSequentialPipeline(input: PipelineInput): Promise<PipelineResult> {
  const { clock, sorter, signal } = input;
  const counters: ParseCounters = newCounters();
  const block = new PairBlockBuilder(input.blockSize, input.sorter.sharedBlocks === true, input.positions === true, input.buffers);
  if (input.buffers) sorter.borrowFrom?.(input.buffers);
  const titleWeight = input.tokenizer.options.titleWeight ?? 1;
  const shared = input.sharedInversion?.begin(input.tokenizer, input.dictionary);
  const inverter = shared?.inverter ?? new DocumentInverter(input.tokenizer, analysedTermIds(input.tokenizer, input.dictionary));

  const sink = new RunSink(sorter, input.runDir, clock, input.onWarning);
  // The block's buffer goes back to the pool, or is freed now rather than at some later
  // collection (the merge comes next); then the sorter's scratch.
  const release = async (): Promise<void> => {
    if (input.buffers && !input.sorter.sharedBlocks) input.buffers.give(block.pairs.buffer as ArrayBuffer);
    else await releaseBuffers([block.pairs.buffer]);
    await sink.release();
  };
  const flushBlock = async (): Promise<void> => {
    if (signal?.aborted) throw new AbortError();
    const keys = input.dictionary.lexKeys();
    // Before the sort, which may reorder the block in place.
    const aligned = block.positions && alignPositions(block.pairs, block.count, block.positions, keys);
    await sink.sortAndWrite(block.pairs, block.count, undefined, keys, aligned);
    counters.blocks = sink.blocks;
    counters.runBytes = sink.runBytes;
    block.reset();
    input.onProgress?.(counters);
  };

  let parseStart = performance.now();
  // The shared inverter's TermIds views are this build's until its parse ends.
  try {
    for await (const item of input.source) {
      if (item.kind === 'skip') {
        counters.skippedCount++;
        if (counters.skipped.length < MAX_LISTED_SKIPS) counters.skipped.push(item.skip);
        input.onSkip?.(item.skip);
        continue;
      }
      if (item.kind === 'ignored') {
        countNotIndexed(counters.notIndexed, item.what, 1);
        continue;
      }
      const doc = item.doc;
      if (doc.warning) noteWarning(counters, { path: doc.path, line: doc.line, reason: doc.warning }, input.onDocumentWarning);
      const termIds = inverter.invert(doc);
      shared?.termIds.apply(termIds);
      const docId = input.documents.add(doc.externalId, doc.path, termIds.length);
      if (block.positions) input.documents.setTitleLength(docId, inverter.titleLength);
      if (doc.warc) input.documents.setWarc(docId, doc.warc.date ?? '', doc.warc.recordId ?? '');
      counters.documents++;
      counters.bytes += doc.bytes;
      counters.pairs += termIds.length;
      const title = inverter.titleLength;
      // Most documents leave the block short of full: one tight copy, no per-pair checks.
      if (!block.positions && block.count + termIds.length < block.capacity) block.pushDocument(termIds, docId);
      else for (let i = 0; i < termIds.length; i++) {
        if (block.positions) block.positions[block.count] = positionOf(i, title, titleWeight);
        block.push(termIds[i] as never, docId);
        if (block.full) {
          clock.add('parse', performance.now() - parseStart);
          await flushBlock();
          parseStart = performance.now();
        }
      }
      if (signal?.aborted) throw new AbortError();
      input.onProgress?.(counters);
    }
  } finally {
    shared?.end();
  }
  clock.add('parse', performance.now() - parseStart);
  // Runs carry positions files: a block with positions is written as one.
  if (sink.blocks === 0 && block.count > 0 && !block.positions && sink.keepsBlocks) {
    const kept = await sink.sortInMemory(block.pairs, block.count, input.dictionary.lexKeys());
    counters.blocks = 1;
    return { runPaths: [], counters, sorterKind: sink.sorterKind, blockRun: { ...kept, release } };
  }
  await flushBlock();
  await release();
  return { runPaths: sink.runPaths, counters, sorterKind: sink.sorterKind };
}

/** Adds `n` records of kind `what` to the counts of what was not indexed. */
export function countNotIndexed(counts: Record<string, number>, what: string, n: number): void {
  counts[what] = (counts[what] ?? 0) + n;
}
