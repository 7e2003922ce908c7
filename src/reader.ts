/**
 * Reading an index folder: lexicon and documents from index.sqlite (opened read-only),
 * postings lists from postings.bin, BM25 ranking.
 */
import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { decodePostings } from '../merge/postings-codec.js';
import { INDEX_DB, INDEX_FORMAT_VERSION, POSTINGS_FILE, type CollectionStats, type LexiconEntry } from '../merge/index-store.js';
import { TermStatsReader } from '../merge/term-stats.js';
import { UserError } from './shared/errors.js';
import { createTokenizer, type Tokenizer, type TokenizerOptions } from '../indexer/analysis/tokenizer.js';

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
}

export interface SearchOptions {
  /** Number of hits. Default 10. */
  k?: number;
  /** BM25 parameters. Defaults k1 = 0.9, b = 0.4 (Anserini's). */
  k1?: number;
  b?: number;
}

export class IndexReader {
  private readonly db: Database.Database;
  private readonly fd: number;
  private readonly tokenizer: Tokenizer;
  private readonly termStmt: Database.Statement;
  private readonly termStats: TermStatsReader;
  private readonly docStmt: Database.Statement;
  readonly statistics: CollectionStats;
  readonly settings: Record<string, unknown>;

  constructor(readonly path: string) {
    const dbPath = join(path, INDEX_DB);
    if (!existsSync(dbPath) || !existsSync(join(path, POSTINGS_FILE))) throw new UserError(`not a gpuindex index: ${path}`);
    this.db = new Database(dbPath, { readonly: true, fileMustExist: true });
    this.fd = openSync(join(path, POSTINGS_FILE), 'r');
    this.statistics = Object.fromEntries(
      (this.db.prepare('SELECT key, value FROM stats').all() as { key: string; value: number }[]).map((r) => [r.key, r.value]),
    ) as unknown as CollectionStats;
    this.settings = Object.fromEntries(
      (this.db.prepare('SELECT key, value FROM settings').all() as { key: string; value: unknown }[]).map((r) => [r.key, parseSetting(r.value)]),
    );
    if (this.statistics.formatVersion !== INDEX_FORMAT_VERSION) {
      this.close();
      throw new UserError(`${path}: index format ${this.statistics.formatVersion ?? '?'}, this gpuindex reads format ${INDEX_FORMAT_VERSION}: build the index again`);
    }
    this.tokenizer = createTokenizer((this.settings.tokenizer ?? {}) as TokenizerOptions);
    this.termStmt = this.db.prepare('SELECT term_id FROM terms WHERE term = ?').pluck();
    this.termStats = new TermStatsReader(this.db);
    this.docStmt = this.db.prepare('SELECT doc_id AS docId, external_id AS externalId, path, length FROM docs WHERE doc_id = ?');
  }

  stats(): CollectionStats {
    return this.statistics;
  }

  /** The index's own analysis of a query string (same tokenizer, stemmer and stopwords as the build). */
  analyze(text: string): string[] {
    const terms: string[] = [];
    this.tokenizer.tokenize(text, (t) => terms.push(t));
    return terms;
  }

  lexiconEntry(term: string): LexiconEntry | undefined {
    const termId = this.termStmt.get(term) as number | undefined;
    if (termId === undefined) return undefined;
    const figures = this.termStats.get(termId);
    if (!figures) throw new Error(`${this.path}: index.sqlite has no figures for termID ${termId}`);
    return { term, termId, ...figures };
  }

  /**
   * All terms in lexicographic (code point) order, with their lexicon entries. The figures of
   * every term are decoded first (32 bytes a term): the terms come in term order, the figures
   * are stored in termID order.
   */
  *lexicon(): Generator<LexiconEntry> {
    const n = this.statistics.terms;
    const df = new Float64Array(n);
    const cf = new Float64Array(n);
    const offset = new Float64Array(n);
    const length = new Float64Array(n);
    for (const c of this.termStats.chunks()) {
      if (c.firstTermId + c.df.length > n) throw new Error(`${this.path}: index.sqlite has figures for termIDs past its ${n} terms`);
      df.set(c.df, c.firstTermId);
      cf.set(c.cf, c.firstTermId);
      offset.set(c.offset, c.firstTermId);
      length.set(c.length, c.firstTermId);
    }
    // SQLite's BINARY collation orders UTF-8 bytes, which is code point order.
    for (const [term, t] of this.db.prepare('SELECT term, term_id FROM terms ORDER BY term').raw().iterate() as Iterable<[string, number]>) {
      if (t >= n) throw new Error(`${this.path}: index.sqlite's termID ${t} is past its ${n} terms`);
      yield { term, termId: t, df: df[t]!, cf: cf[t]!, offset: offset[t]!, length: length[t]! };
    }
  }

  /** Decoded postings of an exact (already analysed) term; empty when absent. */
  postingsOf(term: string): { docIds: Uint32Array; tfs: Uint32Array } {
    const e = this.lexiconEntry(term);
    if (!e) return { docIds: new Uint32Array(0), tfs: new Uint32Array(0) };
    return this.readList(e);
  }

  readList(e: LexiconEntry): { docIds: Uint32Array; tfs: Uint32Array } {
    const bytes = new Uint8Array(e.length);
    let got = 0;
    while (got < e.length) {
      const n = readSync(this.fd, bytes, got, e.length - got, e.offset + got);
      if (n === 0) throw new Error(`${this.path}: postings.bin is shorter than the lexicon says`);
      got += n;
    }
    return decodePostings(bytes, e.df);
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

  document(docId: number): StoredDocument | undefined {
    return this.docStmt.get(docId) as StoredDocument | undefined;
  }

  /** Every document in docId order. */
  *documents(): Generator<StoredDocument> {
    yield* this.db.prepare('SELECT doc_id AS docId, external_id AS externalId, path, length FROM docs ORDER BY doc_id').iterate() as Iterable<StoredDocument>;
  }

  /** BM25 over the analysed query terms (a term repeated in the query counts once per repeat). */
  search(query: string, options: SearchOptions = {}): SearchHit[] {
    const k = options.k ?? 10;
    const k1 = options.k1 ?? 0.9;
    const b = options.b ?? 0.4;
    if (!Number.isInteger(k) || k < 1) throw new UserError(`k must be a positive integer, got ${k}`);
    const n = this.statistics.documents;
    const avg = this.statistics.averageLength || 1;
    const lengths = this.documentLengths();
    const scores = new Map<number, number>();
    for (const term of this.analyze(query)) {
      const e = this.lexiconEntry(term);
      if (!e) continue;
      const idf = Math.log(1 + (n - e.df + 0.5) / (e.df + 0.5));
      const { docIds, tfs } = this.readList(e);
      for (let i = 0; i < docIds.length; i++) {
        const d = docIds[i]!;
        const len = lengths[d]!;
        const tf = tfs[i]!;
        scores.set(d, (scores.get(d) ?? 0) + (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * len) / avg)));
      }
    }
    return [...scores.entries()]
      .sort((x, y) => y[1] - x[1] || x[0] - y[0])
      .slice(0, k)
      .map(([docId, score]) => ({ ...(this.document(docId) as StoredDocument), score }));
  }

  private lengthsCache?: Uint32Array;

  /** Document lengths indexed by docId, loaded once (4 bytes a document). */
  private documentLengths(): Uint32Array {
    if (!this.lengthsCache) {
      const lengths = new Uint32Array(this.statistics.documents);
      for (const r of this.db.prepare('SELECT doc_id AS d, length AS l FROM docs').raw().iterate() as Iterable<[number, number]>) lengths[r[0]] = r[1];
      this.lengthsCache = lengths;
    }
    return this.lengthsCache;
  }

  close(): void {
    if (this.db.open) {
      this.db.close();
      closeSync(this.fd);
    }
  }
}

function parseSetting(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}

export function openIndex(path: string): IndexReader {
  return new IndexReader(path);
}
