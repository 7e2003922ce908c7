/**
 * Reading an index folder: one segment (as `gpuindex build` writes it) or several (segments.json,
 * as `gpuindex join` writes it). Each segment has its own lexicon and documents numbered from 0;
 * the reader numbers documents across segments in segment order and ranks with BM25 over the
 * whole index's statistics (N, average length, and each term's df summed over segments), so a
 * segmented index answers exactly as one segment of the same documents would.
 */
import { join } from 'node:path';
import { decodePostings } from '../merge/postings-codec.js';
import { INDEX_DB, INDEX_FORMAT_VERSION, type CollectionStats, type LexiconEntry } from '../merge/index-store.js';
import { fileIdentity, ListArena, SegmentFormatError, SegmentReader } from '../merge/segment-reader.js';
import { existsSync } from 'node:fs';
import { readDeletes } from '../merge/deletes.js';
import { readSegments, type SegmentsManifest } from '../merge/segments.js';
import { UserError } from './shared/errors.js';
import { checkEach, checkOptionsObject, isBoolean, wrongType, type Check } from './shared/check.js';
import { createTokenizer, type Tokenizer, type TokenizerOptions } from '../indexer/analysis/tokenizer.js';
import { openImpacts } from '../merge/impacts.js';
import { computeImpacts } from '../merge/segment-impacts.js';
import { impactsByTerm, type ImpactsByTerm, type TermImpacts } from '../merge/impact-blocks.js';
import { bm25, lengthNormTable, type BlockBounds } from './query/cursor.js';
import { ListCache } from './query/list-cache.js';
import { BudgetCache } from './query/budget-cache.js';
import { chunkRow, ROW_CHUNK, rowChunk, type RowChunk } from './query/row-chunks.js';
import type Database from 'better-sqlite3';
import { exhaustiveTopK, ExhaustiveScratch, prunable, prunedTopK, type SegmentInput } from './query/evaluate.js';
import { planQuery, POSITIONAL_FIELDS, type IndexCapabilities, type QueryPlan } from './query/plan.js';
import { phraseMatches } from './query/phrases.js';
import { PositionsFile, POSITIONS_FILE } from '../merge/positions-file.js';

export interface Posting {
  docId: number;
  tf: number;
}

export interface StoredDocument {
  docId: number;
  externalId: string;
  path: string;
  length: number;
}

export interface SearchHit extends StoredDocument {
  score: number;
  /** With `explain`: the query's scored occurrences this document holds, in query order; their scores sum to `score`. */
  explanation?: TermContribution[];
}

/** One query term's BM25 part of a hit's score: idf · tf · (k1 + 1) / (tf + k1 · (1 − b + b · length / averageLength)). */
export interface TermContribution {
  term: string;
  occur: 'should' | 'must';
  tf: number;
  /** Documents holding the term, over every segment (deleted ones until a merge drops them). */
  df: number;
  idf: number;
  length: number;
  averageLength: number;
  k1: number;
  b: number;
  score: number;
  /** The phrase (or title: clause) the occurrence belongs to, as written: it counts only where the phrase occurs. */
  phrase?: string;
}

export interface ReaderOptions {
  /**
   * Bytes of postings lists kept in memory between queries (the long ones, of at least
   * CACHED_LIST_BYTES, least recently used out first): a frequent term's list is then read once,
   * not by every query holding it. Default 64 MiB; 0 keeps none.
   */
  listCacheBytes?: number;
  /**
   * Bytes of document rows (external ids and paths) kept in memory between queries, in chunks of
   * consecutive docIDs read by one statement each (src/query/row-chunks.ts), least recently used
   * out first. Default 32 MiB (a 400,000-document crawl's rows take about 16 MiB); 0 keeps none,
   * and each hit's row is then looked up alone.
   */
  rowCacheBytes?: number;
}

/** A cache's budget: a whole number of bytes, 0 (no cache) or more. */
const isCacheBytes: Check = (name, value) => {
  if (!Number.isInteger(value) || (value as number) < 0) throw wrongType(name, 'a whole number of bytes', value);
};

/** Each reader option's check. Typed so that a new option needs one. */
export const READER_OPTION_CHECKS: { readonly [K in keyof ReaderOptions]-?: Check } = {
  listCacheBytes: isCacheBytes,
  rowCacheBytes: isCacheBytes,
};

/** The list cache's default budget. */
export const DEFAULT_LIST_CACHE_BYTES = 64 << 20;
/** The row cache's default budget. */
export const DEFAULT_ROW_CACHE_BYTES = 32 << 20;
/** What the row cache counts for a chunk whose rows are looked up one by one (rowChunk: undefined). */
const UNCHUNKED_BYTES = 64;
/** Row cache keys a segment spans (chunks of ROW_CHUNK docIDs: 2^31 documents). */
const ROW_KEYS_A_SEGMENT = 2 ** 21;
/** List cache keys a segment spans (one a termID). */
const LIST_KEYS_A_SEGMENT = 2 ** 32;
/** The next segment's Segment.serial. */
let nextSerial = 0;
/** Lists shorter than this are read for each query (a pread of a few KB costs about what a cache lookup does). */
const CACHED_LIST_BYTES = 4096;
/** A segment's lexicon entries and block bounds kept between queries, at most (past it they are dropped, all at once). */
const KEPT_ENTRIES = 1 << 16;
/** Bytes of terms' decoded impacts a segment keeps between queries, at most (least recently used first out). */
const KEPT_IMPACTS_BYTES = 32 << 20;
/** Longest query text (UTF-16 units) whose analysis the reader keeps: bounds what the kept texts weigh. */
const KEPT_TEXT_UNITS = 64;
/** Hits' rows fetched by one statement, at most (SQLite's limit of parameters is 32,766). */
const DOCS_A_CALL = 256;

export interface SearchOptions {
  /** Number of hits. Default 10. */
  k?: number;
  /** BM25 parameters. Defaults k1 = 0.9, b = 0.4 (Anserini's). */
  k1?: number;
  b?: number;
  /** Each hit's `explanation`: every term's part of its score. */
  explain?: boolean;
  /** Score every posting instead of pruning: the reference the pruned evaluation equals (and is tested against). */
  exhaustive?: boolean;
}

const isFiniteNumber: Check = (name, value) => {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw wrongType(name, 'a finite number', value);
};

/** Each search option's check. Typed so that a new option needs one. */
export const SEARCH_OPTION_CHECKS: { readonly [K in keyof SearchOptions]-?: Check } = {
  k: (name, value) => {
    if (!Number.isInteger(value) || (value as number) < 1) throw wrongType(name, 'a positive integer', value);
  },
  k1: isFiniteNumber,
  b: isFiniteNumber,
  explain: isBoolean,
  exhaustive: isBoolean,
};

/** One segment as the reader uses it: its files, where its documents start, lookups. */
class Segment {
  readonly docStmt;
  private lengthsCache?: Uint32Array;

  /** The segment's deleted documents (1 a deleted docID), and how many and how long they are; none: undefined. */
  readonly deleted?: Uint8Array;
  readonly deletedCount: number = 0;
  readonly deletedTokens: number = 0;

  constructor(
    readonly files: SegmentReader,
    readonly docBase: number,
    readonly deletesFile?: string,
    /** The same segment in an earlier snapshot: its deletes and lengths are taken as they are loaded. */
    earlier?: Segment,
  ) {
    if (earlier) {
      this.lengthsCache = earlier.lengthsCache;
      this.shortLengthsCache = earlier.shortLengthsCache;
      this.normsCache = earlier.normsCache;
      this.impactsCache = earlier.impactsCache;
      this.termImpacts = earlier.termImpacts;
      this.entries = earlier.entries;
      this.boundsCache = earlier.boundsCache;
      this.docsIn = earlier.docsIn;
      this.serial = earlier.serial;
      if (earlier.deletesFile === deletesFile) {
        this.deleted = earlier.deleted;
        this.deletedCount = earlier.deletedCount;
        this.deletedTokens = earlier.deletedTokens;
        deletesFile = undefined;
      }
    }
    if (deletesFile) {
      this.deleted = readDeletes(files.dir, deletesFile, files.stats.documents);
      const lengths = this.lengths();
      for (let d = 0; d < this.deleted.length; d++) {
        if (this.deleted[d]) {
          this.deletedCount++;
          this.deletedTokens += lengths[d]!;
        }
      }
    }
    this.docStmt = files.db.prepare('SELECT doc_id AS docId, external_id AS externalId, path, length FROM docs WHERE doc_id = ?');
    this.serial ??= nextSerial++;
  }

  get documents(): number {
    return this.files.stats.documents;
  }

  /**
   * Lexicon entries looked up so far (null: not in the segment), kept for the segment's life:
   * a query log repeats its terms, and a lookup (a block of the lexicon read and scanned) cost
   * more than the evaluation of a query of rare terms.
   */
  private entries = new Map<string, LexiconEntry | null>();

  entry(term: string): LexiconEntry | undefined {
    const kept = this.entries.get(term);
    if (kept !== undefined) return kept ?? undefined;
    const e = this.files.lexicon.entry(term) ?? null;
    if (this.entries.size >= KEPT_ENTRIES) this.entries.clear();
    this.entries.set(term, e);
    return e ?? undefined;
  }

  /** Each list's block bounds under the parameters of the last query that used it (SegmentInput.bounds). */
  private boundsCache = new Map<number, { idf: number; weight: number; k1: number; b: number; avg: number; value: BlockBounds }>();

  bounds(termId: number, idf: number, weight: number, p: { k1: number; b: number; avg: number }, compute: () => BlockBounds): BlockBounds {
    const kept = this.boundsCache.get(termId);
    if (kept && kept.idf === idf && kept.weight === weight && kept.k1 === p.k1 && kept.b === p.b && kept.avg === p.avg) return kept.value;
    const value = compute();
    if (this.boundsCache.size >= KEPT_ENTRIES) this.boundsCache.clear();
    this.boundsCache.set(termId, { idf, weight, k1: p.k1, b: p.b, avg: p.avg, value });
    return value;
  }

  /**
   * The segment's number among those this process opened, kept across snapshots as its files
   * are: the list and row caches' keys start from it (a folder rebuilt in place is another one).
   */
  readonly serial: number;

  /** Statements fetching n documents' rows by docID (one call for a query's hits), by n. */
  private docsIn = new Map<number, Database.Statement>();

  /** The row of docID `d` of the segment (its own) from the chunk of rows holding it, read on first use; undefined: look it up (rows()). */
  chunkedRow(d: number, chunks: BudgetCache<number, RowChunk | null>): StoredDocument | undefined {
    const at = d % ROW_CHUNK;
    const from = d - at;
    const key = this.serial * ROW_KEYS_A_SEGMENT + from / ROW_CHUNK;
    let c = chunks.get(key);
    if (c === undefined) {
      const to = Math.min(from + ROW_CHUNK, this.documents);
      c = chunks.put(key, rowChunk(this.files.joinedRows(from, to), from, to) ?? null);
    }
    if (!c) return undefined;
    const [externalId, path] = chunkRow(c, at);
    return { docId: d, externalId, path, length: this.lengths()[d]! };
  }

  /** The rows of these docIDs of the segment (its own), by docID; at most DOCS_A_CALL a statement. */
  rows(docIds: readonly number[]): Map<number, StoredDocument> {
    const out = new Map<number, StoredDocument>();
    for (let from = 0; from < docIds.length; from += DOCS_A_CALL) {
      const some = docIds.slice(from, from + DOCS_A_CALL);
      let stmt = this.docsIn.get(some.length);
      if (!stmt) {
        // Rows as arrays (raw): better-sqlite3 then makes no object with named columns a row.
        stmt = this.files.db.prepare(`SELECT doc_id, external_id, path, length FROM docs WHERE doc_id IN (${some.map(() => '?').join(',')})`).raw();
        this.docsIn.set(some.length, stmt);
      }
      for (const [docId, externalId, path, length] of stmt.all(...some) as [number, string, string, number][]) out.set(docId, { docId, externalId, path, length });
    }
    return out;
  }

  readList(e: LexiconEntry): { docIds: Uint32Array; tfs: Uint32Array } {
    return decodePostings(this.files.readListBytes(e.offset, e.length), e.df);
  }

  /** lengthNormTable of the segment under the last parameters asked for (an index's average length changes only with a new snapshot). */
  norms(k1: number, b: number, avg: number): Float64Array {
    const kept = this.normsCache;
    if (kept && kept.k1 === k1 && kept.b === b && kept.avg === avg) return kept.table;
    const table = lengthNormTable(this.lengths(), k1, b, avg);
    this.normsCache = { k1, b, avg, table };
    return table;
  }
  private normsCache?: { k1: number; b: number; avg: number; table: Float64Array };

  /** lengths() in 2 bytes a document, or undefined when some length is over 65,535. */
  shortLengths(): Uint16Array | undefined {
    if (this.shortLengthsCache === undefined) {
      const lengths = this.lengths();
      let longest = 0;
      for (let d = 0; d < lengths.length; d++) if (lengths[d]! > longest) longest = lengths[d]!;
      this.shortLengthsCache = longest <= 0xffff ? Uint16Array.from(lengths) : null;
    }
    return this.shortLengthsCache ?? undefined;
  }
  private shortLengthsCache?: Uint16Array | null;

  /** Document lengths indexed by the segment's docIDs, loaded once (4 bytes a document). */
  lengths(): Uint32Array {
    this.lengthsCache ??= this.files.documentLengths();
    return this.lengthsCache;
  }

  /**
   * The blocks of termID `termId`'s list: from the segment's impacts.bin, or where it has none
   * (written before it existed), from the same computed once for every term. A term's blocks are
   * decoded once and kept (a frequent term's take ~0.2 ms to decode).
   */
  impacts(termId: number): TermImpacts {
    const kept = this.termImpacts.get(termId);
    if (kept) return kept;
    try {
      this.impactsCache ??= openImpacts(this.files.dir, this.files.stats.terms) ?? impactsByTerm(computeImpacts(this.files));
      return this.termImpacts.put(termId, this.impactsCache.term(termId));
    } catch (err) {
      if (err instanceof SegmentFormatError) throw new UserError(err.message);
      throw err;
    }
  }
  private impactsCache?: ImpactsByTerm;
  /** Terms' blocks decoded so far (shared with the same segment in later snapshots). */
  private termImpacts = new BudgetCache<number, TermImpacts>(KEPT_IMPACTS_BYTES, (t) => 16 * (t.end - t.first) + 8 * (t.firstPair[t.end]! - t.firstPair[t.first]!));

  /** The segment's positions.bin (an index built with --positions), opened on first use. */
  positions(): PositionsFile {
    if (!this.positionsFile) {
      const path = join(this.files.dir, POSITIONS_FILE);
      if (!existsSync(path)) throw new UserError(`${this.files.dir}: the index was built with --positions but ${POSITIONS_FILE} is missing`);
      try {
        this.positionsFile = new PositionsFile(path);
      } catch (err) {
        throw new UserError((err as Error).message);
      }
      if (this.positionsFile.documents !== this.documents || this.positionsFile.terms !== this.files.stats.terms)
        throw new UserError(`${path}: holds ${this.positionsFile.documents} documents and ${this.positionsFile.terms} terms; the index ${this.documents} and ${this.files.stats.terms}`);
    }
    return this.positionsFile;
  }
  private positionsFile?: PositionsFile;

  closePositions(): void {
    this.positionsFile?.close();
    this.positionsFile = undefined;
  }

  /** Where each of the plan's phrases occurs in this segment (src/query/phrases.ts). */
  phraseMatches(plan: QueryPlan): Uint8Array[] {
    const terms = plan.terms.map((t) => t.term);
    const source = {
      documents: this.documents,
      decoded: (term: string) => {
        const e = this.entry(term);
        return e && this.readList(e);
      },
      positions: (term: string, list: { docIds: Uint32Array; tfs: Uint32Array }) => this.positions().cursor(this.entry(term)!.termId, list),
      titleLengths: this.positions().titleLengths,
    };
    return plan.phrases.map((phrase) => phraseMatches(phrase, terms, source));
  }

  /** Terms in code point order with their termIDs. */
  *termsInOrder(): Generator<[string, number]> {
    const { terms, ids } = this.files.termsInTermOrder();
    for (let i = 0; i < terms.length; i++) yield [terms[i]!, ids ? ids[i]! : i];
  }
}

export class IndexReader {
  private readonly segments: Segment[] = [];
  private readonly tokenizer: Tokenizer;
  readonly statistics: CollectionStats;
  readonly settings: Record<string, unknown>;
  /** segments.json of a segmented index; undefined for one segment. */
  readonly manifest?: SegmentsManifest;

  /** Long postings lists kept between queries (shared with the readers reopen() makes). */
  private readonly lists: ListCache;
  /** Chunks of document rows kept between queries (src/query/row-chunks.ts; shared like `lists`). */
  private readonly rowChunks: BudgetCache<number, RowChunk | null>;

  /**
   * `manifest`: read these segments instead of the committed ones (a writer's refreshed state).
   * `earlier`: a reader of the same index whose segments and list cache this one shares (reopen()).
   */
  constructor(
    readonly path: string,
    manifest?: SegmentsManifest,
    earlier?: IndexReader,
    options: ReaderOptions = {},
  ) {
    checkOptionsObject('openIndex', options);
    checkEach(options, READER_OPTION_CHECKS);
    this.lists = earlier?.lists ?? new ListCache(options.listCacheBytes ?? DEFAULT_LIST_CACHE_BYTES);
    const rowBudget = options.rowCacheBytes ?? DEFAULT_ROW_CACHE_BYTES;
    this.rowChunks = earlier?.rowChunks ?? new BudgetCache<number, RowChunk | null>(rowBudget, (c) => c?.bytes ?? UNCHUNKED_BYTES);
    try {
      this.manifest = manifest ?? readSegments(path);
      const entries = this.manifest ? this.manifest.segments : [{ name: '.', deletes: undefined }];
      const shared = new Map(earlier?.segments.map((s) => [s.files.dir, s]));
      let docBase = 0;
      for (const e of entries) {
        const dir = join(path, e.name);
        const candidate = shared.get(dir);
        const before = candidate && existsSync(join(dir, INDEX_DB)) && fileIdentity(join(dir, INDEX_DB)) === candidate.files.identity ? candidate : undefined;
        const segment = new Segment(before ? before.files.retain() : new SegmentReader(dir), docBase, e.deletes, before);
        this.segments.push(segment);
        docBase += segment.documents;
      }
    } catch (err) {
      this.close();
      if (err instanceof SegmentFormatError) throw new UserError(err.message);
      throw err;
    }
    const first = this.segments[0]?.files;
    this.settings = first?.settings ?? this.manifest?.settings ?? {};
    this.statistics = this.segments.length === 1 && !this.segments[0]!.deleted ? first!.stats : this.combinedStats();
    this.tokenizer = createTokenizer((this.settings.tokenizer ?? {}) as TokenizerOptions);
  }

  /**
   * The statistics of several segments (or of one with deleted documents) as one collection's:
   * documents and tokens of the live documents; `terms` (distinct, those of deleted documents
   * included until a merge drops them) counted on first use.
   */
  private combinedStats(): CollectionStats {
    const sum = (f: (s: CollectionStats) => number) => this.segments.reduce((a, s) => a + f(s.files.stats), 0);
    const documents = sum((s) => s.documents) - this.segments.reduce((a, s) => a + s.deletedCount, 0);
    const totalTokens = sum((s) => s.totalTokens) - this.segments.reduce((a, s) => a + s.deletedTokens, 0);
    const stats = {
      documents,
      totalTokens,
      averageLength: documents ? totalTokens / documents : 0,
      postings: sum((s) => s.postings),
      formatVersion: INDEX_FORMAT_VERSION,
    } as CollectionStats;
    let terms: number | undefined;
    Object.defineProperty(stats, 'terms', {
      enumerable: true,
      get: () => {
        if (terms === undefined) {
          terms = 0;
          for (const _ of this.mergedTerms()) terms++;
        }
        return terms;
      },
    });
    return stats;
  }

  /** The index's segments: where each one's documents start, its own figures and its own build settings (its crawl's `input`). */
  segmentList(): { path: string; docBase: number; stats: CollectionStats; deleted: number; settings: Record<string, unknown> }[] {
    return this.segments.map((s) => ({ path: s.files.dir, docBase: s.docBase, stats: s.files.stats, deleted: s.deletedCount, settings: s.files.settings }));
  }

  /**
   * The index's latest committed generation: a new reader when segments.json changed since this
   * one was opened, sharing the open files and loaded tables of the segments both have (close
   * both, in any order), or this reader when nothing changed.
   */
  reopen(): IndexReader {
    const latest = readSegments(this.path);
    return this.shows(latest) ? this : new IndexReader(this.path, latest, this);
  }

  /**
   * Whether this reader shows the commit `latest` (segments.json as read now). Not by generation
   * alone: optimize makes the index one segment, and a writer on it counts from 0 again.
   */
  private shows(latest: SegmentsManifest | undefined): boolean {
    const mine = this.manifest;
    if (!mine || !latest) return !mine && !latest && this.showsOneSegment();
    if (mine.commitId !== undefined || latest.commitId !== undefined) return mine.commitId === latest.commitId;
    // Both written before commit ids: by generation, as then (segment names come back too).
    return mine.generation === latest.generation;
  }

  /**
   * A one-segment index: whether its index.sqlite is still the file this reader has open (held
   * open, its inode cannot be another file's). Missing (a build or optimize renaming the folder
   * in place): this reader until the next reopen.
   */
  private showsOneSegment(): boolean {
    try {
      return fileIdentity(join(this.path, INDEX_DB)) === this.segments[0]!.files.identity;
    } catch {
      return true;
    }
  }

  stats(): CollectionStats {
    return { ...this.statistics, terms: this.statistics.terms };
  }

  /** The index's own analysis of a query string (same tokenizer, stemmer and stopwords as the build). */
  analyze(text: string): string[] {
    const terms: string[] = [];
    this.tokenizer.tokenize(text, (t) => terms.push(t));
    return terms;
  }

  /**
   * analyze(), kept for the reader's life for texts of at most KEPT_TEXT_UNITS (a word or a
   * short phrase; at most KEPT_ENTRIES of them, then dropped at once): a query log repeats its
   * words, and the tokenizer and stemmer of a query's first search cost more than its lookups.
   * Callers must not change the array.
   */
  private analyzeKept(text: string): string[] {
    if (text.length > KEPT_TEXT_UNITS) return this.analyze(text);
    let terms = this.analysed.get(text);
    if (terms === undefined) {
      if (this.analysed.size >= KEPT_ENTRIES) this.analysed.clear();
      this.analysed.set(text, (terms = this.analyze(text)));
    }
    return terms;
  }
  private readonly analysed = new Map<string, string[]>();

  /**
   * A term's lexicon entry. With several segments, df and cf are summed over them, and termId,
   * offset and length (which are a segment's own) are -1.
   */
  lexiconEntry(term: string): LexiconEntry | undefined {
    if (this.segments.length === 1) {
      const e = this.segments[0]!.entry(term);
      // A copy: the segment keeps its entries between queries.
      return e && { ...e };
    }
    let df = 0;
    let cf = 0;
    for (const s of this.segments) {
      const e = s.entry(term);
      if (e) {
        df += e.df;
        cf += e.cf;
      }
    }
    return df > 0 ? { term, termId: -1, df, cf, offset: -1, length: -1 } : undefined;
  }

  /**
   * All terms in lexicographic (code point) order, with their lexicon entries. The figures of
   * every term are decoded first (32 bytes a term a segment): the terms come in term order, the
   * figures are stored in termID order.
   */
  *lexicon(): Generator<LexiconEntry> {
    if (this.segments.length === 1) {
      const s = this.segments[0]!;
      const f = s.files.figures();
      const n = this.statistics.terms;
      for (let it = s.termsInOrder(), r = it.next(); !r.done; r = it.next()) {
        const [term, t] = r.value;
        if (t >= n) throw new Error(`${this.path}: the lexicon's termID ${t} is past its ${n} terms`);
        yield { term, termId: t, df: f.df[t]!, cf: f.cf[t]!, offset: f.offset[t]!, length: f.length[t]! };
      }
      return;
    }
    const figures = this.segments.map((s) => s.files.figures());
    for (const { term, parts } of this.mergedTerms()) {
      let df = 0;
      let cf = 0;
      for (const [i, t] of parts) {
        df += figures[i]!.df[t]!;
        cf += figures[i]!.cf[t]!;
      }
      yield { term, termId: -1, df, cf, offset: -1, length: -1 };
    }
  }

  /** Every distinct term of the segments in code point order, with (segment, termID) where it occurs. */
  private *mergedTerms(): Generator<{ term: string; parts: [number, number][] }> {
    const its = this.segments.map((s) => s.termsInOrder());
    const heads = its.map((it) => it.next());
    for (;;) {
      let min: string | undefined;
      for (const h of heads) if (!h.done && (min === undefined || compareCodePoints(h.value[0], min) < 0)) min = h.value[0];
      if (min === undefined) return;
      const parts: [number, number][] = [];
      heads.forEach((h, i) => {
        if (!h.done && h.value[0] === min) {
          parts.push([i, h.value[1]]);
          heads[i] = its[i]!.next();
        }
      });
      yield { term: min, parts };
    }
  }

  /** Decoded postings of an exact (already analysed) term, in the index's docIDs; empty when absent. */
  postingsOf(term: string): { docIds: Uint32Array; tfs: Uint32Array } {
    const lists: { docIds: Uint32Array; tfs: Uint32Array; base: number }[] = [];
    let df = 0;
    for (const s of this.segments) {
      const e = s.entry(term);
      if (!e) continue;
      const list = s.readList(e);
      const live = s.deleted ? withoutDeleted(list, s.deleted) : list;
      lists.push({ ...live, base: s.docBase });
      df += live.docIds.length;
    }
    if (lists.length === 1 && lists[0]!.base === 0) return { docIds: lists[0]!.docIds, tfs: lists[0]!.tfs };
    const docIds = new Uint32Array(df);
    const tfs = new Uint32Array(df);
    let n = 0;
    for (const l of lists) {
      for (let i = 0; i < l.docIds.length; i++) docIds[n + i] = l.base + l.docIds[i]!;
      tfs.set(l.tfs, n);
      n += l.docIds.length;
    }
    return { docIds, tfs };
  }

  /** The postings of a lexicon entry (from lexiconEntry or lexicon()). */
  readList(e: LexiconEntry): { docIds: Uint32Array; tfs: Uint32Array } {
    return this.segments.length === 1 ? this.segments[0]!.readList(e) : this.postingsOf(e.term);
  }

  /**
   * Postings of a term as an async iterator of { docId, tf }. The term is analysed like the
   * documents ("Whales" finds `whale`); text that analyses to several terms or none is looked up
   * as given.
   */
  async *postings(term: string): AsyncGenerator<Posting> {
    const analysed = this.analyze(term);
    const { docIds, tfs } = this.postingsOf(analysed.length === 1 ? analysed[0]! : term);
    for (let i = 0; i < docIds.length; i++) yield { docId: docIds[i]!, tf: tfs[i]! };
  }

  /** The segment holding the index's docID `docId`, or undefined past the last document. */
  private segmentOf(docId: number): Segment | undefined {
    let lo = 0;
    let hi = this.segments.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.segments[mid]!.docBase <= docId) lo = mid;
      else hi = mid - 1;
    }
    const s = this.segments[lo];
    return s && docId >= s.docBase && docId < s.docBase + s.documents ? s : undefined;
  }

  document(docId: number): StoredDocument | undefined {
    const s = this.segmentOf(docId);
    if (!s || s.deleted?.[docId - s.docBase]) return undefined;
    const d = s.docStmt.get(docId - s.docBase) as StoredDocument | undefined;
    return d && { ...d, docId };
  }

  /** Every document in docId order. */
  *documents(): Generator<StoredDocument> {
    for (const s of this.segments) {
      for (const d of s.files.db.prepare('SELECT doc_id AS docId, external_id AS externalId, path, length FROM docs ORDER BY doc_id').iterate() as Iterable<StoredDocument>) {
        if (s.deleted?.[d.docId]) continue;
        yield s.docBase === 0 ? d : { ...d, docId: s.docBase + d.docId };
      }
    }
  }

  /** The analysed terms a query scores with (its excluded terms left out), in query order, each once. */
  queryTerms(query: string): string[] {
    const plan = planQuery(query, (text) => this.analyzeKept(text), this.capabilities());
    return [...new Set(plan.slots.map((t) => plan.terms[t]!.term))];
  }

  /** What the index can answer: phrases need positions, field:term needs fields stored apart. */
  private capabilities(): IndexCapabilities {
    const positions = this.settings.positions === true;
    return { positions, fields: positions ? POSITIONAL_FIELDS : [] };
  }

  /**
   * BM25 top k for a query in the query language (src/query/parse.ts: OR by default, AND,
   * +required, -excluded, "phrase", field:term), its terms analysed as the documents were. A
   * term repeated in the query counts once per repeat; required and optional terms score,
   * excluded ones only filter. Evaluated document at a time with MaxScore and block-max
   * bounds (src/query/evaluate.ts), or over every posting with `exhaustive`: the same hits,
   * scores and order (ties by the lower docID) either way. A malformed query, or one the
   * index cannot answer (a phrase without positions), is a QueryError of one line.
   */
  search(query: string, options: SearchOptions = {}): SearchHit[] {
    checkOptionsObject('search', options);
    checkEach(options, SEARCH_OPTION_CHECKS);
    const k = options.k ?? 10;
    const k1 = options.k1 ?? 0.9;
    const b = options.b ?? 0.4;
    const plan = planQuery(query, (text) => this.analyzeKept(text), this.capabilities());
    if (plan.slots.length === 0) return [];
    const n = this.statistics.documents;
    const avg = this.statistics.averageLength || 1;
    // Each segment's lexicon entry of each term, looked up once.
    const entries = this.segments.map((s) => plan.terms.map((t) => s.entry(t.term)));
    const idf = new Float64Array(plan.terms.length);
    plan.terms.forEach((_, t) => {
      const df = entries.reduce((a, e) => a + (e[t]?.df ?? 0), 0);
      idf[t] = df > 0 ? Math.log(1 + (n - df + 0.5) / (df + 0.5)) : 0;
    });
    const matches = plan.phrases.length > 0 ? this.segments.map((s) => s.phraseMatches(plan)) : undefined;
    const inputs: SegmentInput[] = this.segments.map((s, si) => {
      const at = (term: string) => entries[si]![plan.terms.findIndex((t) => t.term === term)];
      return {
        ...(matches ? { phrases: matches[si]! } : {}),
        docBase: s.docBase,
        lengths: s.lengths(),
        ...(s.deleted ? { deleted: s.deleted } : {}),
        impacts: (termId) => s.impacts(termId),
        list: (term) => {
          const e = at(term);
          return e && { termId: e.termId, df: e.df, bytes: this.listBytes(s, e) };
        },
        decoded: (term) => {
          const e = at(term);
          return e && s.readList(e);
        },
        bounds: (termId, idf, weight, p, compute) => s.bounds(termId, idf, weight, p, compute),
        norms: (k1, b, avg) => s.norms(k1, b, avg),
        shortLengths: () => s.shortLengths(),
      };
    });
    const params = { k1, b, avg, idf };
    this.arena.reset();
    const best =
      options.exhaustive || !prunable(k1, b)
        ? exhaustiveTopK(inputs, plan, params, k, this.documentSpan(), (this.scratch ??= new ExhaustiveScratch()))
        : prunedTopK(inputs, plan, params, k);
    const rows = this.hitRows(best.map(([docId]) => docId));
    return best.map(([docId, score], i) => {
      const hit: SearchHit = { ...rows[i]!, score };
      if (options.explain) hit.explanation = this.explain(docId, plan, entries, params, matches);
      return hit;
    });
  }

  /**
   * The stored rows of the index's docIDs `docIds` (live documents), in their order: from the row
   * cache's chunks, the others by one statement a segment.
   */
  private hitRows(docIds: readonly number[]): StoredDocument[] {
    const out: (StoredDocument | undefined)[] = new Array(docIds.length);
    let bySegment: Map<Segment, number[]> | undefined;
    docIds.forEach((d, i) => {
      const s = this.segmentOf(d)!;
      const row = this.rowChunks.budget > 0 ? s.chunkedRow(d - s.docBase, this.rowChunks) : undefined;
      if (row) {
        row.docId = d;
        out[i] = row;
        return;
      }
      bySegment ??= new Map();
      const list = bySegment.get(s);
      if (list) list.push(d - s.docBase);
      else bySegment.set(s, [d - s.docBase]);
    });
    if (bySegment) {
      const found = new Map<number, StoredDocument>();
      for (const [s, locals] of bySegment) for (const [local, row] of s.rows(locals)) found.set(s.docBase + local, { ...row, docId: s.docBase + local });
      docIds.forEach((d, i) => (out[i] ??= found.get(d)));
    }
    return out as StoredDocument[];
  }

  /**
   * A list's bytes for one query: kept in the list cache (ListCache) when the list is long
   * enough that reading it costs more than a lookup, else read into the query's arena.
   */
  private listBytes(s: Segment, e: LexiconEntry): Uint8Array {
    if (e.length < CACHED_LIST_BYTES || this.lists.budget === 0) return s.files.readListBytes(e.offset, e.length, this.arena);
    const key = s.serial * LIST_KEYS_A_SEGMENT + e.termId;
    return this.lists.get(key) ?? this.lists.put(key, s.files.readListBytes(e.offset, e.length));
  }

  private scratch?: ExhaustiveScratch;
  private readonly arena = new ListArena();

  /** Documents of every segment, deleted ones included: the span of the index's docIDs. */
  private documentSpan(): number {
    return this.segments.reduce((m, s) => m + s.documents, 0);
  }

  /** Each scored occurrence of the query in the document, in query order: their scores sum to the hit's. */
  private explain(docId: number, plan: QueryPlan, entries: (LexiconEntry | undefined)[][], p: { k1: number; b: number; avg: number; idf: Float64Array }, matches?: Uint8Array[][]): TermContribution[] {
    const si = this.segments.findIndex((s) => docId >= s.docBase && docId < s.docBase + s.documents);
    const s = this.segments[si]!;
    const local = docId - s.docBase;
    const length = s.lengths()[local]!;
    const out: TermContribution[] = [];
    plan.slots.forEach((t, i) => {
      const e = entries[si]![t];
      if (!e) return;
      const phrase = plan.slotPhrases[i]!;
      // A phrase's occurrence counts only where the phrase occurs (src/query/evaluate.ts phraseScore).
      if (phrase >= 0 && !matches?.[si]![phrase]![local]) return;
      const { docIds, tfs } = s.readList(e);
      let lo = 0;
      let hi = docIds.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (docIds[mid]! < local) lo = mid + 1;
        else hi = mid;
      }
      if (docIds[lo] !== local) return;
      const tf = tfs[lo]!;
      const df = entries.reduce((a, se) => a + (se[t]?.df ?? 0), 0);
      out.push({
        term: plan.terms[t]!.term,
        occur: plan.slotOccurs[i]!,
        tf,
        df,
        idf: p.idf[t]!,
        length,
        averageLength: p.avg,
        k1: p.k1,
        b: p.b,
        score: bm25(p.idf[t]!, tf, length, p.k1, p.b, p.avg),
        ...(phrase >= 0 ? { phrase: plan.phrases[phrase]!.text } : {}),
      });
    });
    return out;
  }

  close(): void {
    for (const s of this.segments) {
      s.files.close();
      s.closePositions();
    }
  }
}

/** A list without the postings of deleted documents. */
function withoutDeleted(list: { docIds: Uint32Array; tfs: Uint32Array }, deleted: Uint8Array): { docIds: Uint32Array; tfs: Uint32Array } {
  const keep: number[] = [];
  for (let i = 0; i < list.docIds.length; i++) if (!deleted[list.docIds[i]!]) keep.push(i);
  return { docIds: Uint32Array.from(keep, (i) => list.docIds[i]!), tfs: Uint32Array.from(keep, (i) => list.tfs[i]!) };
}

/** Orders strings by code point (UTF-16 order differs from it for characters past U+FFFF). */
function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

export function openIndex(path: string, options: ReaderOptions = {}): IndexReader {
  if (typeof path !== 'string' || path === '') throw wrongType('openIndex: path', "the index folder's path", path);
  return new IndexReader(path, undefined, undefined, options);
}
