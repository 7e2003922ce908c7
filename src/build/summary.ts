/**
 * What a build reports (BuildSummary), and the figures it is assembled from: stage busy and idle
 * times, the memory the build held against --memory.
 */
import { resolve } from 'node:path';
import { estimateDictionaryBytes } from '../../indexer/plan/dictionary-bytes.js';
import type { PipelineResult } from '../../indexer/pipeline/in-process-pipeline.js';
import type { PhaseCpuMs } from '../../runtime/cpu-time.js';
import { StageClock } from '../../indexer/pipeline/stage-clock.js';
import type { WorkerPipelineResult } from '../../indexer/pipeline/worker-pipeline.js';
import { INDEX_DB } from '../../merge/index-store.js';
import type { SkippedItem, UnsupportedFiles } from '../../indexer/corpus/index.js';
import type { OutputPlan } from '../output.js';
import { statOrZero, type BuildContext } from './context.js';
import type { BuildPlan } from './plan.js';
import type { Parsed } from './parse-sort.js';
import type { Merged } from './merge.js';

export interface StageReport {
  /** Milliseconds the stage was working. */
  busyMs: number;
  /** Milliseconds of the parse+sort phase the stage was not working (waiting or starved). */
  idleMs: number;
  /** Pairs per second while busy. */
  pairsPerSecond: number;
  /**
   * Parse workers only: of idleMs, the milliseconds the worker waited for a credit (its batches
   * not yet consumed by the main thread: the SyncSend bound); the rest of idleMs it had no file
   * to parse (start-up, between files, the end of the crawl).
   */
  blockedMs?: number;
  /**
   * Parse workers only: when the worker's first and last batches reached the main thread, in ms
   * after the parse phase began (start-up before the first; after the last, the end of the crawl).
   */
  firstBatchAtMs?: number;
  lastBatchAtMs?: number;
  /** Parse workers only: when the worker's code began running (its modules loaded), in ms after the parse phase began. */
  startedAtMs?: number;
  /**
   * Parse workers filling blocks of their own only: milliseconds the worker waited for a block it
   * handed over to the GPU thread to come back, while parsing (within busyMs) and at its end
   * (within idleMs, after its last batch); 0 where it sorts its own blocks.
   */
  blockWaitMs?: number;
  endWaitMs?: number;
  /**
   * 'fill' (the main thread) only: milliseconds it waited for the next batch in crawl order
   * (writing document rows ahead meanwhile), and for the sort stage to take the next block.
   */
  batchWaitMs?: number;
  sortWaitMs?: number;
}

export interface BuildSummary {
  output: string;
  documents: number;
  terms: number;
  pairs: number;
  postings: number;
  blocks: number;
  blockSize: number;
  /** Indexcpu ('cpu'), Indexgpu ('gpu') or Indexgpu+ ('gpu+'). */
  pipeline: 'cpu' | 'gpu' | 'gpu+';
  sorter: 'cpu' | 'gpu';
  /** The GPU sorter's algorithm (--gpu-sort; 'auto' resolved), when the blocks were sorted on the GPU. */
  gpuSort?: 'bsn' | 'radix';
  workers: number;
  /**
   * Parse workers with lexicons of their own: their lexicon generations in all (one a worker,
   * more where a worker's lexicon outgrew its share of --memory and went to disk).
   */
  lexiconGenerations?: number;
  /** Source bytes read (raw document text as stored in the crawl). */
  bytesRead: number;
  indexBytes: number;
  runBytes: number;
  /** Bad input: files and documents that could not be read (unreadable, broken JSON, binary, empty, ...). */
  skipped: { count: number; items: SkippedItem[] };
  /**
   * Files of types the readers do not take (images, stylesheets, scripts), not counted in
   * `skipped`: how many, per extension (most first), and every path in crawl order.
   */
  unsupported: UnsupportedFiles;
  /**
   * Records inside crawl files that are not documents and no fault, by kind, most first: WARC
   * request, metadata, warcinfo and revisit records, responses that are images or scripts or
   * not 2xx ('request records': 120, 'image/png payloads': 31, 'HTTP 3xx responses': 4).
   */
  notIndexed: Record<string, number>;
  /** Documents indexed despite a problem (e.g. invalid UTF-8 replaced), with what it was. */
  warnings: { count: number; items: SkippedItem[] };
  /**
   * Wall time of each phase: setup (options, output folder, opening the GPU), parse+sort (with
   * run writing), release (freeing the sorter's device), merge, finish (checksums, the rename
   * into place), and the whole build.
   */
  timings: { setupMs: number; parseSortMs: number; releaseMs: number; mergeMs: number; finishMs: number; totalMs: number };
  /** Busy/idle time per stage, so overlap is visible. */
  stages: Record<string, StageReport>;
  /**
   * The parse+sort stage's moments, ms from its start: per block 'sort' (handed to the sorter),
   * 'write' (sorted; its run write starts) and 'written', with the block's pairs; then 'last
   * batch' (the workers' last batch taken), 'workers closed' and 'released' (sorter buffers freed).
   */
  timeline: { event: string; atMs: number; pairs?: number }[];
  /**
   * CPU ms (user + system) of the parse+sort phase: the whole process (workers included) and,
   * on Linux, the main thread and the other threads alive at its end (PhaseCpuMs); the parse
   * workers' share is what the process took beyond those two.
   */
  cpu: PhaseCpuMs;
  /**
   * threads: merge threads (1: the merge ran on the calling thread). documentRowsAhead: document
   * rows written into index.sqlite while the parse waited for batches (the merge inserted the
   * rest, and every term's row).
   * With merge threads: threadsMs, until the last of them finished; appendMs, the main thread's
   * time appending their parts to postings.bin (copying, and waiting for the SHA-256 thread when
   * it falls behind) and writing lexicon entries.
   */
  merge: { runs: number; segmentPops: number; threads: number; documentRowsAhead: number; threadsMs?: number; appendMs?: number };
  /** With --resume: the completed runs (and their documents) taken over from an interrupted build. */
  resumed?: { runs: number; documents: number };
  peakRssBytes: number;
  /** --memory and how the build kept to it (indexer/memory-plan.ts, docs/API.md). */
  memory: {
    /** --memory in bytes: the bound on workingSetBytes. */
    budgetBytes: number;
    /** memoryScope 'build': the calling process's RSS when buildIndex was called, outside the budget; 0 for 'process'. */
    hostBytes: number;
    /** Process RSS when the plan was made (modules loaded, sorter open, before the workers), less hostBytes. */
    baselineBytes: number;
    /** Peak RSS of the process (same as the top-level peakRssBytes). */
    peakRssBytes: number;
    /** Estimate of the term dictionaries and the document table (indexer/dictionary-bytes.ts). */
    dictionaryBytes: number;
    /** peakRssBytes - dictionaryBytes - hostBytes. */
    workingSetBytes: number;
    /** Pairs per block the plan chose (or the explicit --block-size). */
    blockPairs: number;
  };
  notices: string[];
}

export function stageReports(clock: StageClock, parsed: PipelineResult | WorkerPipelineResult, parseStart: number, parseSortMs: number, mergeMs: number, pairs: number): Record<string, StageReport> {
  const report = (busyMs: number, spanMs: number): StageReport => ({
    busyMs: round(busyMs),
    idleMs: round(Math.max(0, spanMs - busyMs)),
    pairsPerSecond: busyMs > 0 ? Math.round((pairs / busyMs) * 1000) : 0,
  });
  const b = clock.busyMs;
  const stages: Record<string, StageReport> = {};
  if ('workerTimes' in parsed) {
    parsed.workerTimes.forEach((t, i) => {
      stages[`parser${i}`] = { ...report(t.busyMs, parseSortMs), blockedMs: round(t.idleMs) };
      if (t.firstBatchAt !== undefined) stages[`parser${i}`]!.firstBatchAtMs = round(t.firstBatchAt - parseStart);
      if (t.lastBatchAt !== undefined) stages[`parser${i}`]!.lastBatchAtMs = round(t.lastBatchAt - parseStart);
      if (t.startedAt !== undefined) stages[`parser${i}`]!.startedAtMs = round(t.startedAt - parseStart);
      if (t.blockWaitMs !== undefined) stages[`parser${i}`]!.blockWaitMs = round(t.blockWaitMs);
      if (t.endWaitMs !== undefined) stages[`parser${i}`]!.endWaitMs = round(t.endWaitMs);
    });
    stages.fill = { ...report(b.fill ?? 0, parseSortMs), batchWaitMs: round(parsed.batchWaitMs), sortWaitMs: round(parsed.sortWaitMs) };
  } else {
    stages.parser = report(b.parse ?? 0, parseSortMs);
  }
  stages.sort = report(b.sort ?? 0, parseSortMs);
  if (b.gpuKernel !== undefined) stages.gpuKernel = report(b.gpuKernel, parseSortMs);
  if (b.gpuUpload !== undefined) stages.gpuUpload = report(b.gpuUpload, parseSortMs);
  if (b.gpuReadback !== undefined) stages.gpuReadback = report(b.gpuReadback, parseSortMs);
  stages.writer = report(b.writeRuns ?? 0, parseSortMs);
  // The parse workers' lexicons united by term, at the end of the parse (worker-lexicons-pipeline.ts).
  if (b.uniteLexicons !== undefined) stages.uniteLexicons = report(b.uniteLexicons, parseSortMs);
  stages.merge = report(mergeMs, mergeMs);
  return stages;
}

export const round = (ms: number): number => Math.round(ms * 10) / 10;

export const roundCpu = (c: PhaseCpuMs): PhaseCpuMs => ({
  processMs: round(c.processMs),
  ...(c.mainThreadMs !== undefined ? { mainThreadMs: round(c.mainThreadMs) } : {}),
  ...(c.otherThreadsMs !== undefined ? { otherThreadsMs: round(c.otherThreadsMs) } : {}),
  ...(c.otherThreadsByGroup ? { otherThreadsByGroup: Object.fromEntries(Object.entries(c.otherThreadsByGroup).map(([g, ms]) => [g, round(ms)])) } : {}),
});


/** The GPU sorter's algorithm as the build ran it (the in-process GpuSorter and the GPU thread both name theirs). */
function gpuAlgorithmOf(plan: BuildPlan): 'bsn' | 'radix' {
  return (plan.pipeline.sorter as { algorithm?: string }).algorithm === 'radix' ? 'radix' : 'bsn';
}

export function summarize(c: BuildContext, plan: BuildPlan, out: OutputPlan, parsed: Parsed, merged: Merged, t0: number): BuildSummary {
  const { result, dictionary, documents, startedAt, parseSortMs } = parsed;
  const { counters, sorterKind } = result;
  const { written, mergeMs } = merged;
  const mergeStart = startedAt + parseSortMs + merged.releaseMs;
  const peakRssBytes = process.resourceUsage().maxRSS * 1024;
  const worker = 'workerTerms' in result ? result : undefined;
  // With the workers' own lexicons the build's dictionary stays empty: the united one has the
  // terms, and the workers' lexicons are in the budget where the plan gave them a share.
  const lexiconsInBudget = worker?.lexicon !== undefined && plan.memory.lexiconBytes > 0;
  const dictionaryBytes = estimateDictionaryBytes(dictionary.terms, documents, lexiconsInBudget ? [] : (worker?.workerTerms ?? []), lexiconsInBudget ? [] : (worker?.workerScanBytes ?? []));
  return {
    output: out.output,
    documents: documents.count,
    terms: worker?.lexicon ? worker.lexicon.termCount : dictionary.size,
    pairs: counters.pairs,
    postings: written.stats.postings,
    blocks: counters.blocks,
    blockSize: plan.blockSize,
    pipeline: sorterKind === 'cpu' && plan.pipeline.name !== 'cpu' ? 'cpu' : plan.pipeline.name,
    sorter: sorterKind,
    ...(sorterKind === 'gpu' ? { gpuSort: gpuAlgorithmOf(plan) } : {}),
    workers: plan.workers,
    ...(worker?.lexiconGenerations !== undefined ? { lexiconGenerations: worker.lexiconGenerations } : {}),
    bytesRead: counters.bytes,
    indexBytes: written.postingsBytes + statOrZero(resolve(out.output, INDEX_DB)).size,
    runBytes: counters.runBytes,
    skipped: { count: counters.skippedCount, items: counters.skipped },
    unsupported: parsed.unsupported,
    notIndexed: Object.fromEntries(Object.entries(counters.notIndexed ?? {}).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))),
    warnings: { count: counters.warnedCount, items: counters.warned },
    timings: {
      setupMs: round(startedAt - t0),
      parseSortMs: round(parseSortMs),
      releaseMs: round(merged.releaseMs),
      mergeMs: round(mergeMs),
      finishMs: round(performance.now() - mergeStart - mergeMs),
      totalMs: round(performance.now() - t0),
    },
    stages: stageReports(parsed.clock, result, startedAt, parseSortMs, mergeMs, counters.pairs),
    cpu: parsed.parseSortCpu,
    timeline: parsed.clock.timeline(startedAt),
    merge: {
      runs: written.merge.runs,
      segmentPops: written.merge.segmentPops,
      threads: written.merge.threads,
      documentRowsAhead: merged.documentRowsAhead,
      ...(written.merge.threadsMs !== undefined ? { threadsMs: round(written.merge.threadsMs), appendMs: round(written.merge.appendMs ?? 0) } : {}),
    },
    ...(c.options.resume ? { resumed: { runs: parsed.restored?.runPaths.length ?? 0, documents: parsed.restored?.counters.documents ?? 0 } } : {}),
    peakRssBytes,
    memory: { budgetBytes: c.memoryBytes, hostBytes: c.hostBytes, baselineBytes: plan.baselineBytes, peakRssBytes, dictionaryBytes, workingSetBytes: peakRssBytes - dictionaryBytes - c.hostBytes, blockPairs: plan.blockSize },
    notices: c.notices,
  };
}
