/**
 * Indexcpu / Indexgpu (paper 000, Fig. 7): Parse -> Sort -> toDisk, one block after another.
 * Parse tokenizes each document, maps terms to TermIds and fills a PairBlockBuilder; a full
 * block is sorted (CPU or GPU sorter, the only difference between the two indexers) and its
 * sorted run is written from the sorter's output view.
 */
import type { CorpusItem, SkippedItem, SourceDocument } from '../src/corpus/index.js';
import { AbortError } from '../src/errors.js';
import type { Tokenizer } from '../src/tokenizer.js';
import type { PairSorter } from '../src/types.js';
import { PairBlockBuilder } from './block.js';
import type { TermDictionary } from './dictionary.js';
import type { DocumentTable } from './documents.js';
import { releaseBuffers } from './release-buffers.js';
import { RunSink } from './run-sink.js';
import { AsciiTermTable, PARSER_TABLE_SLOTS, scanAscii } from './ascii-terms.js';
import { WasmAsciiTable, wasmScanEnabled } from './wasm-ascii-table.js';
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
}

export interface PipelineResult {
  runPaths: string[];
  counters: ParseCounters;
  /** The sorter that sorted the last block ('cpu' after a GPU fault). */
  sorterKind: 'cpu' | 'gpu';
}

export function newCounters(): ParseCounters {
  return { documents: 0, bytes: 0, pairs: 0, blocks: 0, runBytes: 0, skipped: [], skippedCount: 0, warned: [], warnedCount: 0, fileBytesDone: 0, fileBytesTotal: 0 };
}

export function noteWarning(c: ParseCounters, w: SkippedItem, report?: (w: SkippedItem) => void): void {
  c.warnedCount++;
  if (c.warned.length < MAX_LISTED_SKIPS) c.warned.push(w);
  report?.(w);
}

/** Keep the summary readable on crawls with millions of bad lines: list the first ones, count all. */
export const MAX_LISTED_SKIPS = 1000;

/** Cached analyses beyond this many distinct raw tokens are dropped (and recomputed on demand). */
const RAW_CACHE_LIMIT = 1 << 22;
const STOPWORD = -1;
const NON_ASCII = /[^\x00-\x7f]/g;
/** The ASCII character that stands in for a non-ASCII one of normalized text (asciiTokenText). */
const asciiStandIn = (c: string): string => (c === '\u2019' ? "'" : ' ');

/**
 * Turns a document into its TermIds (title first, then text) in a reusable buffer. The
 * analysis of each distinct raw token (stopword test, stemming, dictionary lookup) is cached
 * as one raw token -> TermId entry: pure-ASCII text goes through scanAscii's in-place table
 * (no string allocated for a token seen before), other text through the tokenizer and a Map.
 */
export class DocumentInverter {
  private termIds = new Uint32Array(4096);
  private length = 0;
  private readonly rawToId = new Map<string, number>();
  /** Pure-ASCII text: the WebAssembly scanner, unless GPUINDEX_ASCII_SCAN=js. */
  private readonly wasmTable = wasmScanEnabled() ? new WasmAsciiTable(PARSER_TABLE_SLOTS) : undefined;
  /** Normalized text (and all ASCII text with GPUINDEX_ASCII_SCAN=js): the JS scan. */
  private readonly asciiTable = new AsciiTermTable(this.wasmTable ? undefined : PARSER_TABLE_SLOTS);

  constructor(private readonly tokenizer: Tokenizer, private readonly dictionary: TermDictionary) {}

  private readonly analyse = (raw: string): number => {
    const term = this.tokenizer.analyzeToken(raw);
    return term === null ? STOPWORD : this.dictionary.idOf(term);
  };

  private readonly push = (id: number): void => {
    if (id === STOPWORD) return;
    if (this.length === this.termIds.length) this.grow(this.length + 1);
    this.termIds[this.length++] = id;
  };

  private readonly emitRaw = (raw: string): void => {
    let id = this.rawToId.get(raw);
    if (id === undefined) {
      id = this.analyse(raw);
      if (this.rawToId.size >= RAW_CACHE_LIMIT) this.rawToId.clear();
      this.rawToId.set(raw, id);
    }
    this.push(id);
  };

  private readonly pushAll = (ids: Int32Array): void => {
    const need = this.length + ids.length;
    if (need > this.termIds.length) this.grow(need);
    this.termIds.set(ids, this.length);
    this.length = need;
  };

  /** Room for `need` TermIds, keeping the first `length`. */
  private grow(need: number): void {
    const grown = new Uint32Array(Math.max(need, this.termIds.length * 2));
    grown.set(this.termIds.subarray(0, this.length));
    this.termIds = grown;
  }

  /** Bytes of the WebAssembly scanner's raw-token table, 0 without it. */
  get scanTableBytes(): number {
    return this.wasmTable?.tableBytes ?? 0;
  }

  private add(text: string): void {
    if (this.asciiTable.size >= RAW_CACHE_LIMIT) this.asciiTable.clear();
    const start = this.length;
    let knownNotAscii = false;
    if (this.wasmTable !== undefined) {
      if (this.wasmTable.size >= RAW_CACHE_LIMIT) this.wasmTable.clear();
      const result = this.wasmTable.scan(text, this.tokenizer.maxTokenLength, this.analyse, this.pushAll);
      if (result === 'scanned') return;
      // 'uncut' (pure ASCII, a 256 Ki-character token) goes to the JS scan below.
      knownNotAscii = result === 'not-ascii';
    }
    if (!knownNotAscii && scanAscii(text, this.asciiTable, this.analyse, this.push, this.tokenizer.maxTokenLength)) return;
    // Not ASCII: drop what the ASCII scan emitted. Normalized text whose non-ASCII characters
    // only separate tokens still takes the table; the rest goes the Unicode way.
    this.length = start;
    const normalized = this.tokenizer.asciiTokenText(text);
    if (normalized === undefined) this.tokenizer.tokenizeRaw(text, this.emitRaw);
    else this.addNormalized(normalized);
  }

  /**
   * Normalized text (Tokenizer.asciiTokenText): its non-ASCII characters only separate tokens,
   * except U+2019, which joins like an apostrophe. Written as ASCII (a space, an apostrophe) it
   * has the same tokens and takes the WebAssembly scanner too.
   */
  private addNormalized(normalized: string): void {
    const maxLength = this.tokenizer.maxTokenLength;
    if (this.wasmTable?.scan(normalized.replace(NON_ASCII, asciiStandIn), maxLength, this.analyse, this.pushAll) === 'scanned') return;
    scanAscii(normalized, this.asciiTable, this.analyse, this.push, maxLength, true);
  }

  /** Returns a view of the document's TermIds, valid until the next call. */
  invert(doc: Pick<SourceDocument, 'title' | 'text'>): Uint32Array {
    this.length = 0;
    if (doc.title) this.add(doc.title);
    this.add(doc.text);
    return this.termIds.subarray(0, this.length);
  }
}

export async function runSequentialPipeline(input: PipelineInput): Promise<PipelineResult> {
  const { clock, sorter, signal } = input;
  const counters: ParseCounters = newCounters();
  const block = new PairBlockBuilder(input.blockSize);
  const inverter = new DocumentInverter(input.tokenizer, input.dictionary);

  const sink = new RunSink(sorter, input.runDir, clock, input.onWarning);
  const flushBlock = async (): Promise<void> => {
    if (signal?.aborted) throw new AbortError();
    await sink.sortAndWrite(block.pairs, block.count);
    counters.blocks = sink.blocks;
    counters.runBytes = sink.runBytes;
    block.reset();
    input.onProgress?.(counters);
  };

  let parseStart = performance.now();
  for await (const item of input.source) {
    if (item.kind === 'skip') {
      counters.skippedCount++;
      if (counters.skipped.length < MAX_LISTED_SKIPS) counters.skipped.push(item.skip);
      input.onSkip?.(item.skip);
      continue;
    }
    const doc = item.doc;
    if (doc.warning) noteWarning(counters, { path: doc.path, line: doc.line, reason: doc.warning }, input.onDocumentWarning);
    const termIds = inverter.invert(doc);
    const docId = input.documents.add(doc.externalId, doc.path, termIds.length);
    counters.documents++;
    counters.bytes += doc.bytes;
    counters.pairs += termIds.length;
    for (let i = 0; i < termIds.length; i++) {
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
  clock.add('parse', performance.now() - parseStart);
  await flushBlock();
  // The block and sort scratch go now, not at some later collection: the merge comes next.
  await releaseBuffers([block.pairs.buffer]);
  await sink.release();
  return { runPaths: sink.runPaths, counters, sorterKind: sink.sorterKind };
}
