/**
 * buildIndex(): the whole build, Parse -> Sort -> toDisk -> Merge, behind one options object.
 * The CLI's `build` command is a thin layer over this function.
 */
import { availableParallelism } from 'node:os';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { CheckpointLog, resumeKey, type RestoredState } from '../indexer/checkpoint/checkpoint.js';
import { TermDictionary } from '../indexer/fill/dictionary.js';
import { estimateDictionaryBytes } from '../indexer/plan/dictionary-bytes.js';
import { measureBaseline, PAIR_BYTES, planMemory, planMerge, workerYoungGenerationMb } from '../indexer/plan/memory-plan.js';
import { DocumentTable } from '../indexer/fill/documents.js';
import { runSequentialPipeline, type ParseCounters, type PipelineResult } from '../indexer/pipeline/in-process-pipeline.js';
import { resolvePipeline } from '../indexer/pipeline/schedule-choice.js';
import { startPhaseCpu, type PhaseCpuMs } from '../runtime/cpu-time.js';
import { StageClock } from '../indexer/pipeline/stage-clock.js';
import { runWorkerPipeline, type WorkerPipelineResult } from '../indexer/pipeline/worker-pipeline.js';
import { planTasks, rangeBytesFor, tailCutFor, type ParseTask } from '../indexer/parse/jsonl-ranges.js';
import { IndexRowsAhead } from '../merge/rows-ahead.js';
import { writeIndex, writeIndexFromTally, writeIndexParallel, type IndexContents } from '../merge/write-index.js';
import { INDEX_DB, INDEX_FORMAT_VERSION, IndexStoreWriter, POSTINGS_FILE } from '../merge/index-store.js';
import { writeManifest } from '../merge/manifest.js';
import { listCorpusFiles, type CorpusItem, type SkippedItem } from '../indexer/corpus/index.js';
import { endSpareWorkers, spareWorkerBytes, spareWorkersLoaded } from '../indexer/parse/parse-worker-spares.js';
import { integerFromEnv } from '../runtime/env-knobs.js';
import { AbortError, storageFailure, UserError } from './shared/errors.js';
import { parseMemory, resolveBlockSize, DEFAULT_MEMORY, type BuildOptions, type InputDocument } from './shared/options.js';
import { commitOutput, discardOutput, prepareOutput, resumeDirFor } from './output.js';
import { createTokenizer } from '../indexer/analysis/tokenizer.js';
import { VERSION } from './version.js';

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
  workers: number;
  /** Source bytes read (raw document text as stored in the crawl). */
  bytesRead: number;
  indexBytes: number;
  runBytes: number;
  skipped: { count: number; items: SkippedItem[] };
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
   * threads: merge threads (1: the merge ran on the calling thread). documentRowsAhead and
   * termRowsAhead: document and term rows written into index.sqlite while the parse waited for
   * batches (the merge inserted the rest).
   * With merge threads: threadsMs, until the last of them finished; appendMs, the main thread's
   * time appending their parts to postings.bin (copying, and waiting for the SHA-256 thread when
   * it falls behind) and writing lexicon entries.
   */
  merge: { runs: number; segmentPops: number; threads: number; documentRowsAhead: number; termRowsAhead: number; threadsMs?: number; appendMs?: number };
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

/**
 * A crawl's parse tasks for blocks of `blockSize` pairs. The ranges are sized for the default
 * worker count, not --workers, so that a --resume with another worker count numbers the same
 * tasks; the bound on batches ahead of crawl order they are sized against is one block's pairs
 * (the least the memory plan gives).
 */
export function planParseTasks(base: string, files: readonly string[], sizes: readonly number[], blockSize: number): ParseTask[] {
  const workers = defaultWorkers();
  const rangeBytes = rangeBytesFor(workers, PAIR_BYTES * blockSize);
  return planTasks(base, files, sizes, rangeBytes, tailCutFor(workers, rangeBytes));
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
  // memoryScope 'build' (the library's default): the host process as it is now is not the build's.
  const hostBytes = options.memoryScope === 'process' ? 0 : process.memoryUsage.rss();
  checkMergeThreads(options.mergeThreads);
  // An explicit --block-size is checked here; the memory plan (once the sorter is open) sizes the rest.
  const explicitBlockSize = resolveBlockSize(options);
  let blockSize = explicitBlockSize ?? 0;
  let workers = options.workers ?? defaultWorkers();
  if (!Number.isInteger(workers) || workers < 1) throw new UserError(`--workers must be a positive integer, got ${options.workers}`);
  const root = typeof options.input === 'string' ? checkCrawl(options.input) : undefined;
  if (options.resume && !root) throw new UserError('--resume needs a crawl folder as input');
  if (options.signal?.aborted) throw new AbortError();
  const plan = prepareOutput(options.output, options.force ?? false);
  const notices: string[] = [];
  const notice = (m: string) => {
    notices.push(m);
    options.onWarning?.(m);
  };
  let sorterToDispose: { dispose(): void } | undefined;
  let rowsAhead: IndexRowsAhead | undefined;
  let restored: RestoredState | undefined;
  try {
    const pipeline = await resolvePipeline(options.pipeline, options.sorter);
    sorterToDispose = pipeline.sorter;
    if (pipeline.notice) notice(pipeline.notice);
    // The memory plan: --memory less the process as it stands now (modules loaded, sorter open, no worker yet).
    // Parse workers the CLI started ahead are counted with the workers, not in the baseline.
    // The crawl is listed meanwhile (its files are stat'ed: ~2 ms of mail's start).
    const listed = root ? listCorpusFiles(root) : undefined;
    listed?.catch(() => {});
    await spareWorkersLoaded();
    const baselineBytes = Math.max(0, measureBaseline() - hostBytes - spareWorkerBytes());
    const memoryPlan = planMemory({
      budgetBytes: memoryBytes,
      baselineBytes,
      workers: root ? workers : 0,
      workersExplicit: options.workers !== undefined,
      hostBlocks: root && pipeline.schedule === 'overlapped' ? 2 : 1,
      sorterBytesPerPair: pipeline.sorter.hostBytesPerPair ?? 0,
      sharedBlocks: pipeline.sorter.sharedBlocks,
      maxBlockPairs: pipeline.sorter.maxPairs,
      blockSize: explicitBlockSize,
      credits: creditsFromEnv(),
    });
    if (memoryPlan.workersLowered) notice(memoryPlan.workersLowered);
    blockSize = memoryPlan.blockPairs;
    if (root) workers = memoryPlan.workers;
    const clock = new StageClock();
    const dictionary = new TermDictionary();
    const documents = new DocumentTable();
    const progress = throttledProgress(options);
    const onSkip = (s: SkippedItem) => options.onWarning?.(formatSkip(s));
    const onDocumentWarning = (w: SkippedItem) => options.onWarning?.(`warning ${w.path}${w.line !== undefined ? `:${w.line}` : ''}: ${w.reason}`);
    const onProgress = (c: ParseCounters) => progress('parse', c);
    const tParse = performance.now();
    const parseCpu = startPhaseCpu();
    let parsed: PipelineResult | WorkerPipelineResult;
    if (root) {
      const listing = (await listed)!;
      // An output inside the crawl: its --resume folder (runs, resume.json, deltas) is no part of
      // the crawl, else it would change the resume key and be read as documents.
      const ownResumeDir = resumeDirFor(plan.output) + sep;
      const outsideResumeDir = (rel: string) => !resolve(listing.base, rel).startsWith(ownResumeDir);
      listing.files = listing.files.filter(outsideResumeDir);
      listing.skipped = listing.skipped.filter((s) => outsideResumeDir(s.path));
      const fileStats = listing.files.map((f) => statOrZero(join(listing.base, f)));
      const tasks = planParseTasks(listing.base, listing.files, fileStats.map((st) => st.size), blockSize);
      let checkpoints: CheckpointLog | undefined;
      if (options.resume) {
        // Everything that shapes the runs or the batch stream: a change starts the build afresh.
        const key = resumeKey({
          version: VERSION,
          root: listing.base,
          files: listing.files.map((f, i) => [f, fileStats[i]!.size, fileStats[i]!.mtimeMs]),
          tokenizer: tokenizer.options,
          // A stopword file is named by its path in the options: its words shape the runs too.
          stopwordList: ['english', 'none'].includes(tokenizer.options.stopwords) ? null : readFileSync(tokenizer.options.stopwords, 'utf8'),
          fields: options.fields ?? null,
          blockSize,
          // The parse tasks' numbering (batches' seq) depends on how files are cut: the range
          // size and the tail cut, both sized for this machine's default worker count.
          taskStarts: tasks.map((t) => t.range?.start ?? -1),
        });
        const opened = CheckpointLog.open(resumeDirFor(plan.output), key, true, dictionary, documents);
        checkpoints = opened.log;
        restored = opened.restored;
        // A damaged checkpoint drops only itself and the ones after it: say so without "not reusing".
        if (opened.dropped) notice(restored ? `resume: ${opened.dropped}` : `resume: not reusing the earlier state: ${opened.dropped}`);
        if (restored) notice(`resume: reusing ${restored.runPaths.length} completed run(s) holding ${documents.count} document(s)`);
      }
      // The index database opens now: document and term rows go in while the parse waits for batches.
      rowsAhead = new IndexRowsAhead(() => new IndexStoreWriter(join(plan.temp, INDEX_DB)), documents, dictionary.terms, !options.resume);
      parsed = await runWorkerPipeline({
        whileWaiting: writeRowsAhead(pipeline.schedule, workers) ? rowsAhead.writeSome : undefined,
        onBatchFilled: rowsAhead.batchFilled,
        checkpoints,
        restored,
        onDocumentWarning,
        root: listing.base,
        tasks,
        corpus: { fields: options.fields },
        tokenizer: tokenizer.options,
        workers,
        schedule: pipeline.schedule,
        sorter: pipeline.sorter,
        blockSize,
        batchPairs: memoryPlan.batchPairs,
        maxBufferedBytes: memoryPlan.aheadBytes,
        credits: memoryPlan.credits,
        maxYoungGenerationMb: workerYoungGenerationMb(),
        runDir: checkpoints?.runDir ?? plan.runDir,
        blockPostingsPath: join(plan.temp, POSTINGS_FILE),
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
    const parseSortCpu = roundCpu(parseCpu());
    pipeline.sorter.dispose();
    sorterToDispose = undefined;
    const { counters, runPaths } = parsed;
    if (options.signal?.aborted) throw new AbortError();
    const mergeStart = performance.now();
    rowsAhead ??= new IndexRowsAhead(new IndexStoreWriter(join(plan.temp, INDEX_DB)), documents, dictionary.terms);
    const documentRowsAhead = rowsAhead.count;
    const termRowsAhead = rowsAhead.termCount;
    const { threads, cursorBytes } = planMerge(memoryPlan.mergeBytes, mergeThreadsFor(options, root ? workers : 1, counters.pairs), options.mergeThreads !== undefined);
    const blockPostings = 'blockPostings' in parsed ? parsed.blockPostings : undefined;
    const merge = (contents: IndexContents, onFraction: (f: number) => void) =>
      blockPostings
        ? writeIndexFromTally(plan.temp, contents, blockPostings, counters.pairs, onFraction)
        : threads > 1
          ? writeIndexParallel(plan.temp, runPaths, contents, cursorBytes, threads, onFraction)
          : writeIndex(plan.temp, runPaths, contents, cursorBytes, onFraction);
    const written = await merge(
      {
        rows: rowsAhead,
        termCount: dictionary.size,
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
      (f) => progress('merge', counters, f),
    );
    const mergeMs = performance.now() - mergeStart;
    if (options.signal?.aborted) throw new AbortError();
    // Checksums last: index.sqlite is closed and final by now.
    writeManifest(plan.temp, [INDEX_DB, POSTINGS_FILE], INDEX_FORMAT_VERSION, { [POSTINGS_FILE]: written.postingsSha256 });
    commitOutput(plan);
    // A complete index makes any resume state of this output moot (runs included).
    rmSync(resumeDirFor(plan.output), { recursive: true, force: true });
    await blockPostings?.closed;
    progress('done', counters, 1);
    const sorterKind = parsed.sorterKind;
    const peakRssBytes = process.resourceUsage().maxRSS * 1024;
    const dictionaryBytes = estimateDictionaryBytes(dictionary.terms, documents, 'workerTerms' in parsed ? parsed.workerTerms : [], 'workerScanBytes' in parsed ? parsed.workerScanBytes : []);
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
      indexBytes: written.postingsBytes + statOrZero(resolve(plan.output, INDEX_DB)).size,
      runBytes: counters.runBytes,
      skipped: { count: counters.skippedCount, items: counters.skipped },
      warnings: { count: counters.warnedCount, items: counters.warned },
      timings: {
        setupMs: round(tParse - t0),
        parseSortMs: round(parseSortMs),
        releaseMs: round(mergeStart - tParse - parseSortMs),
        mergeMs: round(mergeMs),
        finishMs: round(performance.now() - mergeStart - mergeMs),
        totalMs: round(performance.now() - t0),
      },
      stages: stageReports(clock, parsed, tParse, parseSortMs, mergeMs, counters.pairs),
      cpu: parseSortCpu,
      timeline: clock.timeline(tParse),
      merge: {
        runs: written.merge.runs,
        segmentPops: written.merge.segmentPops,
        threads: written.merge.threads,
        documentRowsAhead,
        termRowsAhead,
        ...(written.merge.threadsMs !== undefined ? { threadsMs: round(written.merge.threadsMs), appendMs: round(written.merge.appendMs ?? 0) } : {}),
      },
      ...(options.resume ? { resumed: { runs: restored?.runPaths.length ?? 0, documents: restored?.counters.documents ?? 0 } } : {}),
      peakRssBytes,
      memory: { budgetBytes: memoryBytes, hostBytes, baselineBytes, peakRssBytes, dictionaryBytes, workingSetBytes: peakRssBytes - dictionaryBytes - hostBytes, blockPairs: blockSize },
      notices,
    };
  } catch (err) {
    rowsAhead?.abort();
    discardOutput(plan);
    // A full disk is the user's to fix: library callers get the same one-line UserError as the CLI.
    const storage = storageFailure(err, options.output);
    throw storage ? new UserError(storage) : err;
  } finally {
    sorterToDispose?.dispose();
    // Parse workers the CLI started ahead and the build did not take (src/cli-prestart.ts).
    void endSpareWorkers();
  }
}

/**
 * GPUINDEX_CREDITS: batches a parse worker may have in flight (default 8). A benchmark knob
 * (docs/benchmarks.md), not an option: the memory plan counts whatever it is.
 */
function creditsFromEnv(): number | undefined {
  return integerFromEnv('GPUINDEX_CREDITS', 1, 64);
}

/**
 * Whether document rows go into index.sqlite while the parse waits for batches (else the merge
 * writes them all, beside its threads). In the sequential schedules (Indexcpu, Indexgpu) the
 * workers pause while a block is sorted, so the main thread's waits are spare CPU: on a 2-core
 * machine (1 GB synthetic crawl) rows ahead shortened the merge by 0.2-0.8 s at no measured cost
 * to the parse. In the overlapped schedule (Indexgpu+) the workers never pause, and with a worker
 * a core the waits are no spare CPU (the workers' collections use it): on the H100 (15 workers,
 * 16 cores, 2 GB crawl) writing 797 K rows during the parse took Indexgpu+'s Parse+Sort against
 * parse alone from a median ratio of 0.980 to 1.054, while the merge took 0.4 s longer without
 * them (docs/benchmarks.md). GPUINDEX_ROWS_AHEAD=0|1 (a benchmark knob) decides instead.
 */
export function writeRowsAhead(schedule: 'sequential' | 'overlapped', workers: number, cores = availableParallelism()): boolean {
  const knob = integerFromEnv('GPUINDEX_ROWS_AHEAD', 0, 1);
  if (knob !== undefined) return knob === 1;
  return schedule === 'sequential' || workers < cores - 1;
}

/** Below this many pairs the merge takes well under a second: starting threads would cost more. */
export const PARALLEL_MERGE_MIN_PAIRS = 1 << 22;

/** Checks options.mergeThreads up front (before a long parse). */
function checkMergeThreads(value: number | undefined): void {
  if (value !== undefined && (!Number.isInteger(value) || value < 1 || value > 256))
    throw new UserError(`--merge-threads must be an integer from 1 to 256, got ${value}`);
}

/** Merge threads: options.mergeThreads, else one per parse worker once the crawl is large enough. */
function mergeThreadsFor(options: BuildOptions, workers: number, pairs: number): number {
  if (options.mergeThreads !== undefined) return options.mergeThreads;
  return pairs >= PARALLEL_MERGE_MIN_PAIRS ? Math.max(1, workers) : 1;
}

function stageReports(clock: StageClock, parsed: PipelineResult | WorkerPipelineResult, parseStart: number, parseSortMs: number, mergeMs: number, pairs: number): Record<string, StageReport> {
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
  stages.merge = report(mergeMs, mergeMs);
  return stages;
}

const round = (ms: number): number => Math.round(ms * 10) / 10;

const roundCpu = (c: PhaseCpuMs): PhaseCpuMs => ({
  processMs: round(c.processMs),
  ...(c.mainThreadMs !== undefined ? { mainThreadMs: round(c.mainThreadMs) } : {}),
  ...(c.otherThreadsMs !== undefined ? { otherThreadsMs: round(c.otherThreadsMs) } : {}),
  ...(c.otherThreadsByGroup ? { otherThreadsByGroup: Object.fromEntries(Object.entries(c.otherThreadsByGroup).map(([g, ms]) => [g, round(ms)])) } : {}),
});

function statOrZero(path: string): { size: number; mtimeMs: number } {
  try {
    const st = statSync(path);
    return { size: st.size, mtimeMs: st.mtimeMs };
  } catch {
    return { size: 0, mtimeMs: 0 };
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
