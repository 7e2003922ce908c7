/**
 * buildIndex(): the whole build, Parse -> Sort -> toDisk -> Merge, behind one options object.
 * The CLI's `build` command is a thin layer over this function.
 */
import { availableParallelism } from 'node:os';
import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { TermDictionary } from '../indexer/dictionary.js';
import { DocumentTable } from '../indexer/documents.js';
import { runSequentialPipeline, type ParseCounters, type PipelineResult } from '../indexer/pipeline.js';
import { resolvePipeline } from '../indexer/schedule-choice.js';
import { StageClock } from '../indexer/stage-clock.js';
import { runWorkerPipeline, type WorkerPipelineResult } from '../indexer/worker-pipeline.js';
import { writeIndex } from '../merge/write-index.js';
import { INDEX_DB, INDEX_FORMAT_VERSION, POSTINGS_FILE } from '../merge/index-store.js';
import { writeManifest } from '../merge/manifest.js';
import { listCorpusFiles, type CorpusItem, type SkippedItem } from './corpus/index.js';
import { AbortError, UserError } from './errors.js';
import { parseMemory, resolveBlockSize, DEFAULT_MEMORY, type BuildOptions, type InputDocument } from './options.js';
import { commitOutput, discardOutput, prepareOutput } from './output.js';
import { createTokenizer } from './tokenizer.js';
import { VERSION } from './version.js';

export interface StageReport {
  /** Milliseconds the stage was working. */
  busyMs: number;
  /** Milliseconds of the parse+sort phase the stage was not working (waiting or starved). */
  idleMs: number;
  /** Pairs per second while busy. */
  pairsPerSecond: number;
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
  workers: number;
  /** Source bytes read (raw document text as stored in the crawl). */
  bytesRead: number;
  indexBytes: number;
  runBytes: number;
  skipped: { count: number; items: SkippedItem[] };
  /** Documents indexed despite a problem (e.g. invalid UTF-8 replaced), with what it was. */
  warnings: { count: number; items: SkippedItem[] };
  /** Wall time of each phase: parse+sort (with run writing), merge, whole build. */
  timings: { parseSortMs: number; mergeMs: number; totalMs: number };
  /** Busy/idle time per stage, so overlap is visible. */
  stages: Record<string, StageReport>;
  merge: { runs: number; segmentPops: number };
  peakRssBytes: number;
  notices: string[];
}

async function* fromDocuments(docs: AsyncIterable<InputDocument> | Iterable<InputDocument>): AsyncGenerator<CorpusItem> {
  let n = 0;
  for await (const d of docs as AsyncIterable<InputDocument>) {
    n++;
    if (!d || typeof d.id !== 'string' || typeof d.text !== 'string') {
      yield { kind: 'skip', skip: { path: '<input>', line: n, reason: 'document needs string "id" and "text"' } };
      continue;
    }
    const extra = d.fields ? Object.keys(d.fields).sort().map((k) => d.fields![k]) : [];
    const text = extra.length ? [d.text, ...extra].join('\n') : d.text;
    yield { kind: 'doc', doc: { externalId: d.id, path: '', title: d.title ?? '', text, bytes: Buffer.byteLength(text) + Buffer.byteLength(d.title ?? '') } };
  }
}

export function defaultWorkers(): number {
  return Math.max(1, availableParallelism() - 1);
}

function checkCrawl(input: string): string {
  const root = resolve(input);
  try {
    statSync(root);
  } catch {
    throw new UserError(`crawl not found: ${input}`);
  }
  return root;
}

export async function buildIndex(options: BuildOptions): Promise<BuildSummary> {
  const t0 = performance.now();
  if (!options || !options.output) throw new UserError('an output folder is required (-o <dir>)');
  if (options.input === undefined || options.input === null) throw new UserError('an input crawl or documents are required');
  const tokenizer = createTokenizer(options);
  const memoryBytes = parseMemory(options.memory ?? DEFAULT_MEMORY);
  const blockSize = resolveBlockSize(options);
  const workers = options.workers ?? defaultWorkers();
  if (!Number.isInteger(workers) || workers < 1) throw new UserError(`--workers must be a positive integer, got ${options.workers}`);
  const root = typeof options.input === 'string' ? checkCrawl(options.input) : undefined;
  if (options.signal?.aborted) throw new AbortError();
  const plan = prepareOutput(options.output, options.force ?? false);
  const notices: string[] = [];
  const notice = (m: string) => {
    notices.push(m);
    options.onWarning?.(m);
  };
  let sorterToDispose: { dispose(): void } | undefined;
  try {
    const pipeline = await resolvePipeline(options.pipeline, options.sorter);
    sorterToDispose = pipeline.sorter;
    if (pipeline.notice) notice(pipeline.notice);
    const clock = new StageClock();
    const dictionary = new TermDictionary();
    const documents = new DocumentTable();
    const progress = throttledProgress(options);
    const onSkip = (s: SkippedItem) => options.onWarning?.(formatSkip(s));
    const onDocumentWarning = (w: SkippedItem) => options.onWarning?.(`warning ${w.path}${w.line !== undefined ? `:${w.line}` : ''}: ${w.reason}`);
    const onProgress = (c: ParseCounters) => progress('parse', c);
    const tParse = performance.now();
    let parsed: PipelineResult | WorkerPipelineResult;
    if (root) {
      const listing = await listCorpusFiles(root);
      const fileBytes = listing.files.map((f) => statSizeOr0(join(listing.base, f)));
      parsed = await runWorkerPipeline({
        fileBytes,
        onDocumentWarning,
        root: listing.base,
        files: listing.files,
        corpus: { fields: options.fields },
        tokenizer: tokenizer.options,
        workers,
        schedule: pipeline.schedule,
        sorter: pipeline.sorter,
        blockSize,
        runDir: plan.runDir,
        dictionary,
        documents,
        clock,
        signal: options.signal,
        onSkip,
        onProgress,
        onWarning: notice,
      });
      for (const s of listing.skipped) {
        parsed.counters.skippedCount++;
        parsed.counters.skipped.unshift(s);
        onSkip(s);
      }
    } else {
      parsed = await runSequentialPipeline({
        source: fromDocuments(options.input as Iterable<InputDocument>),
        tokenizer,
        dictionary,
        documents,
        sorter: pipeline.sorter,
        blockSize,
        runDir: plan.runDir,
        clock,
        signal: options.signal,
        onSkip,
        onDocumentWarning,
        onProgress,
        onWarning: notice,
      });
    }
    const parseSortMs = performance.now() - tParse;
    pipeline.sorter.dispose();
    sorterToDispose = undefined;
    const { counters, runPaths } = parsed;
    if (options.signal?.aborted) throw new AbortError();
    const mergeStart = performance.now();
    const written = writeIndex(
      plan.temp,
      runPaths,
      {
        terms: dictionary.terms,
        documents: documents.records(),
        documentCount: documents.count,
        totalTokens: documents.totalTokens,
        // postings.bin and the terms/docs tables depend only on the input and the analysis
        // settings; the rest records how this build ran (block size, schedule, sorter).
        settings: {
          gpuindexVersion: VERSION,
          input: root ?? '<documents>',
          tokenizer: tokenizer.options,
          fields: options.fields ?? null,
          blockSize,
          memoryBytes,
          pipeline: pipeline.name,
          sorter: parsed.sorterKind,
          workers: root ? workers : 0,
        },
      },
      memoryBytes,
      (f) => progress('merge', counters, f),
    );
    const mergeMs = performance.now() - mergeStart;
    if (options.signal?.aborted) throw new AbortError();
    // Checksums last: index.sqlite is closed and final by now.
    writeManifest(plan.temp, [INDEX_DB, POSTINGS_FILE], INDEX_FORMAT_VERSION);
    commitOutput(plan);
    progress('done', counters, 1);
    const sorterKind = parsed.sorterKind;
    return {
      output: plan.output,
      documents: documents.count,
      terms: dictionary.size,
      pairs: counters.pairs,
      postings: written.stats.postings,
      blocks: counters.blocks,
      blockSize,
      pipeline: sorterKind === 'cpu' && pipeline.name !== 'cpu' ? 'cpu' : pipeline.name,
      sorter: sorterKind,
      workers: root ? workers : 0,
      bytesRead: counters.bytes,
      indexBytes: written.postingsBytes + statSizeOr0(resolve(plan.output, 'index.sqlite')),
      runBytes: counters.runBytes,
      skipped: { count: counters.skippedCount, items: counters.skipped },
      warnings: { count: counters.warnedCount, items: counters.warned },
      timings: { parseSortMs: round(parseSortMs), mergeMs: round(mergeMs), totalMs: round(performance.now() - t0) },
      stages: stageReports(clock, parsed, parseSortMs, mergeMs, counters.pairs),
      merge: { runs: written.merge.runs, segmentPops: written.merge.segmentPops },
      peakRssBytes: process.resourceUsage().maxRSS * 1024,
      notices,
    };
  } catch (err) {
    discardOutput(plan);
    throw err;
  } finally {
    sorterToDispose?.dispose();
  }
}

function stageReports(clock: StageClock, parsed: PipelineResult | WorkerPipelineResult, parseSortMs: number, mergeMs: number, pairs: number): Record<string, StageReport> {
  const report = (busyMs: number, spanMs: number): StageReport => ({
    busyMs: round(busyMs),
    idleMs: round(Math.max(0, spanMs - busyMs)),
    pairsPerSecond: busyMs > 0 ? Math.round((pairs / busyMs) * 1000) : 0,
  });
  const b = clock.busyMs;
  const stages: Record<string, StageReport> = {};
  if ('workerTimes' in parsed) {
    parsed.workerTimes.forEach((t, i) => (stages[`parser${i}`] = report(t.busyMs, parseSortMs)));
    stages.fill = report(b.fill ?? 0, parseSortMs);
  } else {
    stages.parser = report(b.parse ?? 0, parseSortMs);
  }
  stages.sort = report(b.sort ?? 0, parseSortMs);
  if (b.gpuKernel !== undefined) stages.gpuKernel = report(b.gpuKernel, parseSortMs);
  if (b.gpuUpload !== undefined) stages.gpuUpload = report(b.gpuUpload, parseSortMs);
  if (b.gpuReadback !== undefined) stages.gpuReadback = report(b.gpuReadback, parseSortMs);
  stages.writer = report(b.writeRuns ?? 0, parseSortMs);
  stages.merge = report(mergeMs, mergeMs);
  return stages;
}

const round = (ms: number): number => Math.round(ms * 10) / 10;

function statSizeOr0(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

export function formatSkip(s: SkippedItem): string {
  return `skipped ${s.path}${s.line !== undefined ? `:${s.line}` : ''}: ${s.reason}`;
}

/**
 * Progress events at most every 100 ms (plus the final one), so per-document calls cost
 * nothing. The parse ETA extrapolates from the crawl files finished so far (by size on disk).
 */
function throttledProgress(options: BuildOptions): (stage: 'parse' | 'merge' | 'done', c: ParseCounters, mergeFraction?: number) => void {
  let last = 0;
  const start = performance.now();
  return (stage, c, mergeFraction) => {
    if (!options.onProgress) return;
    const now = performance.now();
    if (stage !== 'done' && now - last < 100) return;
    last = now;
    const fraction = c.fileBytesTotal > 0 ? c.fileBytesDone / c.fileBytesTotal : undefined;
    const etaSeconds = stage === 'parse' && fraction ? ((now - start) / 1000) * ((1 - fraction) / fraction) : undefined;
    options.onProgress({ stage, documents: c.documents, bytes: c.bytes, blocksSorted: c.blocks, runsWritten: c.blocks, mergeFraction, parseFraction: fraction, etaSeconds });
  };
}
