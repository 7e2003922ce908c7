/**
 * The index folder's SQLite database (index.sqlite): lexicon, document table, collection
 * statistics and build settings. Written in one transaction at the end of the merge.
 */
import Database from 'better-sqlite3';

export const INDEX_DB = 'index.sqlite';
export const POSTINGS_FILE = 'postings.bin';
export const INDEX_FORMAT_VERSION = 1;

const SCHEMA = `
CREATE TABLE terms (
  term TEXT PRIMARY KEY,
  term_id INTEGER NOT NULL UNIQUE,
  df INTEGER NOT NULL,
  cf INTEGER NOT NULL,
  offset INTEGER NOT NULL,
  length INTEGER NOT NULL
) WITHOUT ROWID;
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
  private readonly insertDoc: Database.Statement;

  constructor(path: string) {
    this.db = new Database(path);
    // The database sits in a temporary folder that is deleted on failure: durability comes
    // from the final rename, not from SQLite's journal.
    this.db.pragma('journal_mode = OFF');
    this.db.pragma('synchronous = OFF');
    this.db.exec(SCHEMA);
    this.insertTerm = this.db.prepare('INSERT INTO terms (term, term_id, df, cf, offset, length) VALUES (?, ?, ?, ?, ?, ?)');
    this.insertDoc = this.db.prepare('INSERT INTO docs (doc_id, external_id, path, length) VALUES (?, ?, ?, ?)');
    this.db.exec('BEGIN');
  }

  addTerm(e: LexiconEntry): void {
    this.insertTerm.run(e.term, e.termId, e.df, e.cf, e.offset, e.length);
  }

  addDocument(docId: number, externalId: string, path: string, length: number): void {
    this.insertDoc.run(docId, externalId, path, length);
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
    this.db.exec('COMMIT');
    this.db.close();
  }

  abort(): void {
    if (this.db.open) this.db.close();
  }
}
