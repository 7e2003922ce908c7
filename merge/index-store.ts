/**
 * The index folder's SQLite database (index.sqlite): lexicon, document table, collection
 * statistics and build settings. Written in one transaction at the end of the merge.
 */
import Database from 'better-sqlite3';

export const INDEX_DB = 'index.sqlite';
export const POSTINGS_FILE = 'postings.bin';
export const INDEX_FORMAT_VERSION = 1;
const DOC_ROWS = 64;
const TERM_ROWS = 64;
/**
 * The lexicon's lookup index (term -> row), built once all rows are in. The rows arrive in
 * termID order, so with term_id as the rowid every insert is an append; building the term
 * index afterwards sorts once instead of inserting 10^5..10^7 keys at random places of a
 * B-tree (109,064 terms of the mail corpus: 267 ms before, docs/benchmarks.md).
 */
const TERM_INDEX = 'CREATE UNIQUE INDEX terms_by_term ON terms (term)';

const SCHEMA = `
CREATE TABLE terms (
  term_id INTEGER PRIMARY KEY,
  term TEXT NOT NULL,
  df INTEGER NOT NULL,
  cf INTEGER NOT NULL,
  offset INTEGER NOT NULL,
  length INTEGER NOT NULL
);
CREATE TABLE docs (
  doc_id INTEGER PRIMARY KEY,
  external_id TEXT NOT NULL,
  path TEXT NOT NULL,
  length INTEGER NOT NULL
);
CREATE TABLE stats (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE settings (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
`;

export interface LexiconEntry {
  term: string;
  termId: number;
  df: number;
  cf: number;
  offset: number;
  length: number;
}

export interface CollectionStats {
  documents: number;
  terms: number;
  totalTokens: number;
  averageLength: number;
  postings: number;
  formatVersion: number;
}

/** Opens a fresh database for writing; the caller inserts inside `transaction`. */
export class IndexStoreWriter {
  readonly db: Database.Database;
  private readonly insertTerm: Database.Statement;
  private readonly insertTerms: Database.Statement;
  /** Lexicon rows waiting for a multi-row INSERT. */
  private readonly pendingTerms: unknown[] = [];
  private readonly insertDoc: Database.Statement;
  private readonly insertDocs: Database.Statement;
  /** Documents waiting for a multi-row INSERT (one statement call per DOC_ROWS rows is about twice as fast). */
  private readonly pendingDocs: unknown[] = [];

  constructor(path: string) {
    this.db = new Database(path);
    // The database sits in a temporary folder that is deleted on failure: durability comes
    // from the final rename, not from SQLite's journal.
    this.db.pragma('journal_mode = OFF');
    this.db.pragma('synchronous = OFF');
    this.db.exec(SCHEMA);
    this.insertTerm = this.db.prepare('INSERT INTO terms (term_id, term, df, cf, offset, length) VALUES (?, ?, ?, ?, ?, ?)');
    this.insertTerms = this.db.prepare(`INSERT INTO terms (term_id, term, df, cf, offset, length) VALUES ${Array(TERM_ROWS).fill('(?, ?, ?, ?, ?, ?)').join(', ')}`);
    this.insertDoc = this.db.prepare('INSERT INTO docs (doc_id, external_id, path, length) VALUES (?, ?, ?, ?)');
    this.insertDocs = this.db.prepare(`INSERT INTO docs (doc_id, external_id, path, length) VALUES ${Array(DOC_ROWS).fill('(?, ?, ?, ?)').join(', ')}`);
    this.db.exec('BEGIN');
  }

  /** Queues one lexicon row; rows must come in increasing termId order (the merge's order). */
  addTerm(e: LexiconEntry): void {
    this.pendingTerms.push(e.termId, e.term, e.df, e.cf, e.offset, e.length);
    if (this.pendingTerms.length === 6 * TERM_ROWS) {
      this.insertTerms.run(this.pendingTerms);
      this.pendingTerms.length = 0;
    }
  }

  private flushTerms(): void {
    const p = this.pendingTerms;
    for (let i = 0; i < p.length; i += 6) this.insertTerm.run(p[i], p[i + 1], p[i + 2], p[i + 3], p[i + 4], p[i + 5]);
    p.length = 0;
  }

  /** Queues one document row; rows go in in call order (flushDocuments() ends the run of them). */
  addDocument(docId: number, externalId: string, path: string, length: number): void {
    this.pendingDocs.push(docId, externalId, path, length);
    if (this.pendingDocs.length === 4 * DOC_ROWS) {
      this.insertDocs.run(this.pendingDocs);
      this.pendingDocs.length = 0;
    }
  }

  flushDocuments(): void {
    const p = this.pendingDocs;
    for (let i = 0; i < p.length; i += 4) this.insertDoc.run(p[i], p[i + 1], p[i + 2], p[i + 3]);
    p.length = 0;
  }

  private putAll(table: 'stats' | 'settings', values: Record<string, unknown>): void {
    const put = this.db.prepare(`INSERT INTO ${table} (key, value) VALUES (?, ?)`);
    for (const [k, v] of Object.entries(values)) put.run(k, typeof v === 'string' || typeof v === 'number' ? v : JSON.stringify(v));
  }

  setStats(stats: CollectionStats): void {
    this.putAll('stats', stats as unknown as Record<string, unknown>);
  }

  setSettings(settings: Record<string, unknown>): void {
    this.putAll('settings', settings);
  }

  commitAndClose(): void {
    this.flushDocuments();
    this.flushTerms();
    this.db.exec(TERM_INDEX);
    this.db.exec('COMMIT');
    this.db.close();
  }

  abort(): void {
    if (this.db.open) this.db.close();
  }
}
