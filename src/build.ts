/**
 * buildIndex(): the whole build, Parse -> Sort -> toDisk -> Merge, behind one options object.
 * The CLI's `build` command is a thin layer over this function.
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { TermDictionary } from '../indexer/dictionary.js';
import { DocumentTable } from '../indexer/documents.js';
import { runSequentialPipeline, type ParseCounters } from '../indexer/pipeline.js';
import { chooseSorter } from '../indexer/sorters.js';
import { StageClock } from '../indexer/stage-clock.js';
import { writeIndex } from '../merge/write-index.js';
import { readCorpus, type CorpusItem, type SkippedItem } from './corpus/index.js';
import { AbortError, UserError } from './errors.js';
import { parseMemory, resolveBlockSize, DEFAULT_MEMORY, type BuildOptions, type InputDocument } from './options.js';
import { commitOutput, discardOutput, prepareOutput } from './output.js';
import { createTokenizer } from './tokenizer.js';
import { VERSION } from './version.js';

export interface BuildSummary {
  output: string;
  documents: number;
  terms: number;
  pairs: number;
  postings: number;
  blocks: number;
  blockSize: number;
  sorter: 'cpu' | 'gpu';
  /** Source bytes read (raw document text as stored in the crawl). */
  bytesRead: number;
  indexBytes: number;
  runBytes: number;
  skipped: { count: number; items: SkippedItem[] };
  /** Busy milliseconds per stage, and the wall time of the whole build. */
  timings: { parseMs: number; sortMs: number; writeRunsMs: number; mergeMs: number; totalMs: number };
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

function inputSource(options: BuildOptions): { source: AsyncIterable<CorpusItem>; description: string } {
  if (typeof options.input !== 'string') return { source: fromDocuments(options.input), description: '<documents>' };
  const root = resolve(options.input);
  try {
    statSync(root);
  } catch {
    throw new UserError(`crawl not found: ${options.input}`);
  }
  return { source: readCorpus(root, { fields: options.fields }), description: root };
}

export async function buildIndex(options: BuildOptions): Promise<BuildSummary> {
  const t0 = performance.now();
  if (!options || !options.output) throw new UserError('an output folder is required (-o <dir>)');
  if (options.input === undefined || options.input === null) throw new UserError('an input crawl or documents are required');
  const tokenizer = createTokenizer(options);
  const memoryBytes = parseMemory(options.memory ?? DEFAULT_MEMORY);
  const blockSize = resolveBlockSize(options);
  const { source, description } = inputSource(options);
  if (options.signal?.aborted) throw new AbortError();
  const plan = prepareOutput(options.output, options.force ?? false);
  const notices: string[] = [];
  let sorter: Awaited<ReturnType<typeof chooseSorter>>['sorter'] | undefined;
  try {
    const chosen = await chooseSorter(options.sorter ?? 'auto');
    sorter = chosen.sorter;
    if (chosen.notice) {
      notices.push(chosen.notice);
      options.onWarning?.(chosen.notice);
    }
    const clock = new StageClock();
    const dictionary = new TermDictionary();
    const documents = new DocumentTable();
    const progress = throttledProgress(options);
    const { runPaths, counters } = await runSequentialPipeline({
      source,
      tokenizer,
      dictionary,
      documents,
      sorter,
      blockSize,
      runDir: plan.runDir,
      clock,
      signal: options.signal,
      onSkip: (s) => options.onWarning?.(formatSkip(s)),
      onProgress: (c) => progress('parse', c),
    });
    sorter.dispose();
    const sorterKind = sorter.kind;
    sorter = undefined;
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
        settings: {
          gpuindexVersion: VERSION,
          input: description,
          tokenizer: tokenizer.options,
          blockSize,
          memoryBytes,
          sorter: sorterKind,
          fields: options.fields ?? null,
        },
      },
      memoryBytes,
      (f) => progress('merge', counters, f),
    );
    const mergeMs = performance.now() - mergeStart;
    if (options.signal?.aborted) throw new AbortError();
    commitOutput(plan);
    progress('done', counters, 1);
    return {
      output: plan.output,
      documents: documents.count,
      terms: dictionary.size,
      pairs: counters.pairs,
      postings: written.stats.postings,
      blocks: counters.blocks,
      blockSize,
      sorter: sorterKind,
      bytesRead: counters.bytes,
      indexBytes: written.postingsBytes + statSizeOr0(resolve(plan.output, 'index.sqlite')),
      runBytes: counters.runBytes,
      skipped: { count: counters.skippedCount, items: counters.skipped },
      timings: {
        parseMs: round(clock.busyMs.parse ?? 0),
        sortMs: round(clock.busyMs.sort ?? 0),
        writeRunsMs: round(clock.busyMs.writeRuns ?? 0),
        mergeMs: round(mergeMs),
        totalMs: round(performance.now() - t0),
      },
      merge: { runs: written.merge.runs, segmentPops: written.merge.segmentPops },
      peakRssBytes: process.resourceUsage().maxRSS * 1024,
      notices,
    };
  } catch (err) {
    discardOutput(plan);
    throw err;
  } finally {
    sorter?.dispose();
  }
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

/** Progress events at most every 100 ms (plus the final one), so per-document calls cost nothing. */
function throttledProgress(options: BuildOptions): (stage: 'parse' | 'merge' | 'done', c: ParseCounters, mergeFraction?: number) => void {
  let last = 0;
  return (stage, c, mergeFraction) => {
    if (!options.onProgress) return;
    const now = performance.now();
    if (stage !== 'done' && now - last < 100) return;
    last = now;
    options.onProgress({ stage, documents: c.documents, bytes: c.bytes, blocksSorted: c.blocks, runsWritten: c.blocks, mergeFraction });
  };
}
