/** The parse and sort stage: the crawl (or the API's documents) into sorted runs on disk. */
import { availableParallelism } from 'node:os';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { linesBefore } from '../../indexer/parse/shards.js';
import { plannedFileSizes } from '../../indexer/parse/file-sizes.js';
import { join, resolve, sep } from 'node:path';
import { CheckpointLog, resumeKey, type RestoredState } from '../../indexer/checkpoint/checkpoint.js';
import { TermDictionary } from '../../indexer/fill/dictionary.js';
import { workerYoungGenerationMb } from '../../indexer/plan/memory-plan.js';
import { DocumentTable } from '../../indexer/fill/documents.js';
import { runSequentialPipeline, type ParseCounters, type PipelineResult } from '../../indexer/pipeline/in-process-pipeline.js';
import { startPhaseCpu, type PhaseCpuMs } from '../../runtime/cpu-time.js';
import { StageClock } from '../../indexer/pipeline/stage-clock.js';
import { runWorkerPipeline, type WorkerPipelineResult } from '../../indexer/pipeline/worker-pipeline.js';
import { runWorkerLexiconsPipeline, useWorkerLexicons } from '../../indexer/pipeline/worker-lexicons-pipeline.js';
import type { ParseTask } from '../../indexer/parse/jsonl-ranges.js';
import { IndexRowsAhead } from '../../merge/rows-ahead.js';
import { MERGE_THREAD_SCRIPT } from '../../merge/parallel-merge.js';
import { startThreads } from '../../runtime/worker-script.js';
import { INDEX_DB, IndexStoreWriter, POSTINGS_FILE } from '../../merge/index-store.js';
import { describeUnsupported, unsupportedFiles, UNSUPPORTED_TYPE, type CorpusItem, type CorpusListing, type SkippedItem, type UnsupportedFiles } from '../../indexer/corpus/index.js';
import { integerFromEnv } from '../../runtime/env-knobs.js';
import { AbortError, UserError } from '../shared/errors.js';
import type { BuildOptions, InputDocument } from '../shared/options.js';
import { resumeDirFor, type OutputPlan } from '../output.js';
import { VERSION } from '../version.js';
import { roundCpu } from './summary.js';
import { formatSkip, statOrZero, type BuildContext, type BuildState } from './context.js';
import { planParseTasks, type BuildPlan } from './plan.js';
import { mergeThreadsFor } from './merge.js';


/** The parse and sort stage's outcome: runs on disk (or one block's postings), and what was counted. */
export interface Parsed {
  result: PipelineResult | WorkerPipelineResult;
  dictionary: TermDictionary;
  documents: DocumentTable;
  clock: StageClock;
  /** performance.now() when the stage began, and its length. */
  startedAt: number;
  parseSortMs: number;
  parseSortCpu: PhaseCpuMs;
  restored?: RestoredState;
  /** The crawl's files of unsupported types (none for documents given as an iterable). */
  unsupported: UnsupportedFiles;
  /** --shard: which piece of which crawl, recorded in the index's settings for `gpuindex join`. */
  shard?: ShardIdentity;
}

export async function parseAndSort(c: BuildContext, plan: BuildPlan, out: OutputPlan, state: BuildState): Promise<Parsed> {
  const { options } = c;
  const clock = new StageClock();
  const dictionary = new TermDictionary();
  const documents = new DocumentTable();
  const hooks = {
    onSkip: (s: SkippedItem) => options.onWarning?.(formatSkip(s)),
    onDocumentWarning: (w: SkippedItem) => options.onWarning?.(`warning ${w.path}${w.line !== undefined ? `:${w.line}` : ''}: ${w.reason}`),
    onProgress: (counters: ParseCounters) => c.progress('parse', counters),
    onWarning: c.notice,
  };
  const startedAt = performance.now();
  const cpu = startPhaseCpu();
  let result: PipelineResult | WorkerPipelineResult;
  let restored: RestoredState | undefined;
  let unsupported = unsupportedFiles([]);
  let shard: ShardIdentity | undefined;
  if (plan.listing) {
    const listing = withoutOwnResumeDir(plan.listing, out.output);
    // --resume keys its checkpoints by every file's size and time, --shard cuts by exact sizes;
    // otherwise the plan needs few of them (plannedFileSizes).
    const fileStats = options.resume || c.shard ? listing.files.map((f) => statOrZero(join(listing.base, f))) : undefined;
    const sizes = fileStats ? fileStats.map((st) => st.size) : plan.plannedSizes?.files === listing.files ? plan.plannedSizes.sizes : plannedFileSizes(listing.base, listing.files);
    const workerLexicons = useWorkerLexicons(plan.workers, options.resume === true);
    const tasks = planParseTasks(listing.base, listing.files, sizes, plan.blockSize, c.shard, workerLexicons);
    shard = c.shard && shardIdentity(c, listing, sizes);
    const resumed = options.resume ? openCheckpoints(c, plan, out, listing, fileStats!, tasks, dictionary, documents) : undefined;
    restored = resumed?.restored;
    state.checkpoints = resumed?.log;
    // The index database opens now: document rows go in while the parse waits for batches.
    const rowsAhead = new IndexRowsAhead(() => new IndexStoreWriter(join(out.temp, INDEX_DB)), documents, !options.resume);
    state.rowsAhead = rowsAhead;
    const run = workerLexicons ? runWorkerLexiconsPipeline : runWorkerPipeline;
    result = await run({
      // Idle time of this thread: document rows, then the dictionary's term order.
      whileWaiting: writeRowsAhead(plan.pipeline.schedule, plan.workers) ? () => rowsAhead.writeSome() || dictionary.sortAhead() : undefined,
      onBatchFilled: rowsAhead.batchFilled,
      // The merge's threads start while the last blocks are sorted (merge.ts stops any it leaves).
      onBatchesDone: (counters) => {
        const threads = mergeThreadsFor(options, plan.workers, counters.pairs);
        if (threads > 1) startThreads(MERGE_THREAD_SCRIPT, threads);
      },
      checkpoints: resumed?.log,
      restored,
      firstLines: c.shard && tasks[0]?.range && tasks[0].range.start > 0 ? linesBefore(listing.base, tasks[0].path, tasks[0].range.start) : undefined,
      root: listing.base,
      tasks,
      corpus: { fields: options.fields },
      tokenizer: c.tokenizer.options,
      workers: plan.workers,
      schedule: plan.pipeline.schedule,
      sorter: plan.pipeline.sorter,
      blockSize: plan.blockSize,
      batchPairs: plan.memory.batchPairs,
      maxBufferedBytes: plan.memory.aheadBytes,
      credits: plan.memory.credits,
      lexiconBytes: plan.memory.lexiconBytes,
      maxYoungGenerationMb: workerYoungGenerationMb(),
      runDir: resumed?.log.runDir ?? out.runDir,
      blockPostingsPath: join(out.temp, POSTINGS_FILE),
      dictionary,
      documents,
      clock,
      signal: options.signal,
      ...(options.positions ? { positions: true } : {}),
      ...hooks,
    });
    // A sharded build reports the crawl's skipped files once, in shard 0.
    for (const s of c.shard && c.shard.index > 0 ? [] : listing.skipped) {
      result.counters.skippedCount++;
      result.counters.skipped.unshift(s);
      hooks.onSkip(s);
    }
    unsupported = reportUnsupported(c.shard && c.shard.index > 0 ? [] : listing.unsupported, options);
  } else {
    result = await runSequentialPipeline({
      source: fromDocuments(options.input as Iterable<InputDocument>),
      tokenizer: c.tokenizer,
      dictionary,
      documents,
      sorter: plan.pipeline.sorter,
      blockSize: plan.blockSize,
      runDir: out.runDir,
      sharedInversion: state.sharedInversion,
      buffers: state.buffers,
      clock,
      signal: options.signal,
      ...(options.positions ? { positions: true } : {}),
      ...hooks,
    });
  }
  const parseSortMs = performance.now() - startedAt;
  const parseSortCpu = roundCpu(cpu());
  plan.pipeline.sorter.dispose();
  state.sorter = undefined;
  if (options.signal?.aborted) throw new AbortError();
  return { result, dictionary, documents, clock, startedAt, parseSortMs, parseSortCpu, restored, unsupported, shard };
}

/**
 * An output inside the crawl: its --resume folder (runs, resume.json, deltas) is no part of the
 * crawl, else it would change the resume key and be read as documents.
 */
export function withoutOwnResumeDir(listing: CorpusListing, output: string): CorpusListing {
  const ownResumeDir = resumeDirFor(output) + sep;
  // Most outputs are outside the crawl: then no path of it needs resolving (200,000 files: 0.3 s).
  const base = resolve(listing.base);
  if (!ownResumeDir.startsWith(base.endsWith(sep) ? base : base + sep)) return listing;
  const outside = (rel: string) => !resolve(listing.base, rel).startsWith(ownResumeDir);
  listing.files = listing.files.filter(outside);
  listing.skipped = listing.skipped.filter((s) => outside(s.path));
  listing.unsupported = listing.unsupported.filter(outside);
  return listing;
}

/** --resume: the checkpoint log of this crawl and settings, and what it restores. */
export function openCheckpoints(
  c: BuildContext,
  plan: BuildPlan,
  out: OutputPlan,
  listing: CorpusListing,
  fileStats: { size: number; mtimeMs: number; ctimeMs: number }[],
  tasks: ParseTask[],
  dictionary: TermDictionary,
  documents: DocumentTable,
): { log: CheckpointLog; restored?: RestoredState } {
  const { tokenizer, options, notice } = c;
  // Everything that shapes the runs or the batch stream: a change starts the build afresh.
  const key = resumeKey({
    version: VERSION,
    root: listing.base,
    files: listing.files.map((f, i) => [f, fileStats[i]!.size, fileStats[i]!.mtimeMs, fileStats[i]!.ctimeMs]),
    tokenizer: tokenizer.options,
    // A stopword file is named by its path in the options: its words shape the runs too.
    stopwordList: stopwordList(tokenizer.options.stopwords),
    fields: options.fields ?? null,
    blockSize: plan.blockSize,
    // The parse tasks' numbering (batches' seq) depends on how files are cut: the range
    // size and the tail cut, both sized for this machine's default worker count.
    taskStarts: tasks.map((t) => t.range?.start ?? -1),
    // Runs with positions have positions files beside them, and deltas title lengths.
    positions: options.positions === true,
  });
  const busy = (pid: number) => new UserError(`another build is using the --resume state of ${options.output}${Number.isInteger(pid) ? ` (pid ${pid})` : ''}; wait for it or stop it`);
  const opened = CheckpointLog.open(resumeDirFor(out.output), key, true, dictionary, documents, options.positions === true, busy);
  const { restored } = opened;
  // A damaged checkpoint drops only itself and the ones after it: say so without "not reusing".
  if (opened.dropped) notice(restored ? `resume: ${opened.dropped}` : `resume: not reusing the earlier state: ${opened.dropped}`);
  if (restored) notice(`resume: reusing ${restored.runPaths.length} completed run(s) holding ${documents.count} document(s)`);
  return { log: opened.log, restored };
}

/** The crawl's files of unsupported types: with `verbose` one line each, then one line for all. */
function reportUnsupported(paths: readonly string[], options: BuildOptions): UnsupportedFiles {
  const u = unsupportedFiles(paths);
  if (options.verbose) for (const path of u.items) options.onWarning?.(formatSkip({ path, reason: UNSUPPORTED_TYPE }));
  if (u.count > 0) options.onWarning?.(describeUnsupported(u));
  return u;
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

/**
 * Whether document rows go into index.sqlite while the parse waits for batches (else the merge
 * writes them all, beside its threads). In the sequential schedules (Indexcpu, Indexgpu) the
 * workers pause while a block is sorted, so the main thread's waits are spare CPU: on a 2-core
 * machine (1 GB synthetic crawl) rows ahead shortened the merge by 0.2-0.8 s at no measured cost
 * to the parse. In the overlapped schedule (Indexgpu+) the workers never pause, and with a worker
 * a core the waits are no spare CPU (the workers' collections use it): on the H100 (15 workers,
 * 16 cores, 2 GB crawl) writing 797 K rows during the parse took Indexgpu+'s Parse+Sort against
 * parse alone from a median ratio of 0.980 to 1.054, while the merge took 0.4 s longer without
 * them. GPUINDEX_ROWS_AHEAD=0|1 (a benchmark knob) decides instead.
 */
export function writeRowsAhead(schedule: 'sequential' | 'overlapped', workers: number, cores = availableParallelism()): boolean {
  const knob = integerFromEnv('GPUINDEX_ROWS_AHEAD', 0, 1);
  if (knob !== undefined) return knob === 1;
  return schedule === 'sequential' || workers < cores - 1;
}

/** A shard's place, and hashes of what every shard of one crawl must share. */
export interface ShardIdentity {
  index: number;
  count: number;
  /** SHA-256 of the crawl's file list and sizes. */
  listing: string;
  /** SHA-256 of the analysis settings (tokenizer, stopword list, fields). */
  settings: string;
}

function shardIdentity(c: BuildContext, listing: CorpusListing, sizes: readonly number[]): ShardIdentity {
  const sha = (v: unknown) => createHash('sha256').update(JSON.stringify(v)).digest('hex');
  return {
    index: c.shard!.index,
    count: c.shard!.count,
    listing: sha([listing.files, sizes]),
    settings: sha({
      tokenizer: c.tokenizer.options,
      stopwordList: stopwordList(c.tokenizer.options.stopwords),
      fields: c.options.fields ?? null,
    }),
  };
}

/** The words of a stopword file (its path is what the options name), or null for a built-in list. */
function stopwordList(stopwords: string): string | null {
  return ['english', 'none'].includes(stopwords) ? null : readFileSync(stopwords, 'utf8');
}
