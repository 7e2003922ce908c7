/**
 * The index folder's SQLite database (index.sqlite): document table, collection statistics and
 * build settings, written in one transaction (the document rows while the parse runs,
 * rows-ahead.ts, the rest at the end of the merge); and the lexicon beside it, lexicon.bin
 * (lexicon-file.ts), written as the merge hands out the lists. Format 3's lexicon, in
 * index.sqlite's terms and term_stats tables, is still written on request (tests of old indexes).
 */
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { LEXICON_FILE, LexiconFileWriter } from './lexicon-file.js';
import { TermStream } from './lexicon-union.js';
import { TERM_STATS_SCHEMA, TermStatsWriter } from './term-stats.js';

export const INDEX_DB = 'index.sqlite';
export const POSTINGS_FILE = 'postings.bin';
/**
 * 4: the lexicon in lexicon.bin (lexicon-file.ts), in termID order, looked up by a binary search
 * of its blocks' first terms; index.sqlite has no terms or term_stats table.
 * 3: termIDs are the terms' ranks in code point order (merge/term-order.ts), and postings.bin
 * holds the lists in that order. 2: termIDs by first occurrence in the crawl; the lexicon's
 * figures in term_stats chunks (term-stats.ts), the terms table holding only (term_id, term).
 * 1: terms(term_id, term, df, cf, offset, length). Readers open 2 and 3 alike (they look terms
 * up by string); segment merges read any of 2, 3 and 4 and write 4.
 */
export const INDEX_FORMAT_VERSION = 4;
/** The index formats this gpuindex opens, searches, verifies and merges. */
export const READABLE_INDEX_FORMATS: readonly number[] = [2, 3, 4];

/** READABLE_INDEX_FORMATS in words: "2, 3 and 4". */
export const readableFormats = (): string => `${READABLE_INDEX_FORMATS.slice(0, -1).join(', ')} and ${READABLE_INDEX_FORMATS.at(-1)}`;
const DOC_ROWS = 64;
const TERM_ROWS = 64;
/**
 * Format 3's lexicon lookup index (term -> row), built once all rows are in. The rows arrive in
 * termID order, so with term_id as the rowid every insert is an append; building the term
 * index afterwards sorts once instead of inserting 10^5..10^7 keys at random places of a
 * B-tree (109,064 terms of the mail corpus: 267 ms before, 2-core machine).
 */
const TERM_INDEX = 'CREATE UNIQUE INDEX terms_by_term ON terms (term)';

/** Format 3's lexicon tables. */
const SQLITE_LEXICON_SCHEMA = `
CREATE TABLE terms (
  term_id INTEGER PRIMARY KEY,
  term TEXT NOT NULL
);
${TERM_STATS_SCHEMA};
`;

const SCHEMA = `
CREATE TABLE docs (
  doc_id INTEGER PRIMARY KEY,
  external_id TEXT NOT NULL,
  path TEXT NOT NULL,
  length INTEGER NOT NULL,
  warc_date TEXT,
  warc_record_id TEXT
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

/**
 * Rows of one table queued for multi-row INSERTs: one statement call per `rowsPerCall` rows is
 * about twice as fast as one per row; the last partial group goes in row by row (flush()).
 * The values wait in one array of fixed length, written by index: emptying a growing array
 * after every call made V8 grow a new one each time (on mail's 109 K lexicon rows, 11 MB of
 * young-generation churn and its page faults).
 */
class RowBatcher {
  private readonly one: Database.Statement;
  private readonly many: Database.Statement;
  private readonly pending: unknown[];
  private used = 0;

  constructor(db: Database.Database, table: string, private readonly columns: readonly string[], private readonly rowsPerCall: number) {
    const row = `(${columns.map(() => '?').join(', ')})`;
    const insert = `INSERT INTO ${table} (${columns.join(', ')}) VALUES `;
    this.one = db.prepare(insert + row);
    this.many = db.prepare(insert + Array(rowsPerCall).fill(row).join(', '));
    if (columns.length !== 2 && columns.length !== 4 && columns.length !== 6) throw new Error(`RowBatcher: ${columns.length} columns (2, 4 or 6 supported)`);
    this.pending = new Array<unknown>(columns.length * rowsPerCall).fill(null);
  }

  /** Queues one row (its 2, 4 or 6 values in column order, as the table has); rows go in in call order. */
  add(a: unknown, b: unknown, c?: unknown, d?: unknown, e?: unknown, f?: unknown): void {
    const p = this.pending;
    let i = this.used;
    p[i++] = a;
    p[i++] = b;
    if (this.columns.length >= 4) {
      p[i++] = c;
      p[i++] = d;
    }
    if (this.columns.length === 6) {
      p[i++] = e;
      p[i++] = f;
    }
    if (i === p.length) {
      this.many.run(p);
      i = 0;
    }
    this.used = i;
  }

  flush(): void {
    const width = this.columns.length;
    for (let i = 0; i < this.used; i += width) this.one.run(this.pending.slice(i, i + width));
    this.used = 0;
  }
}

/** Whether the docs table of `schema` ('main', or an attached database) has the WARC columns (indexes written before them do not). */
export function hasWarcColumns(db: Database.Database, schema = 'main'): boolean {
  return (db.prepare(`PRAGMA ${schema}.table_info(docs)`).all() as { name: string }[]).some((c) => c.name === 'warc_date');
}

/** Format 3's lexicon: the terms table's rows and term_stats chunks, in termID order (inside the caller's transaction). */
export class SqliteLexiconWriter {
  private readonly rows: RowBatcher;
  private readonly stats: TermStatsWriter;

  constructor(db: Database.Database) {
    db.exec(SQLITE_LEXICON_SCHEMA);
    this.rows = new RowBatcher(db, 'terms', ['term_id', 'term'], TERM_ROWS);
    this.stats = new TermStatsWriter(db);
  }

  get count(): number {
    return this.stats.count;
  }

  add(term: string, df: number, cf: number, offset: number, length: number): void {
    this.rows.add(this.stats.count, term);
    this.stats.add(this.stats.count, df, cf, offset, length);
  }

  /** Writes the last rows and the lookup index (inside the open transaction). */
  finish(db: Database.Database): void {
    this.rows.flush();
    this.stats.flush();
    db.exec(TERM_INDEX);
  }
}

export interface IndexStoreOptions {
  /** The index format to write: 4 (lexicon.bin; the default) or 3 (the lexicon in index.sqlite, for tests of old indexes). */
  formatVersion?: 3 | 4;
}

/** Opens a fresh database for writing; the caller inserts inside `transaction`. */
export class IndexStoreWriter {
  readonly db: Database.Database;
  readonly formatVersion: 3 | 4;
  private readonly docs: RowBatcher;
  /** The lexicon, opened on its first term (or at commit). */
  private lexicon?: LexiconFileWriter | SqliteLexiconWriter;
  private readonly lexiconPath: string;
  /** The terms' strings in termID order, for addTermStats (termsFrom). */
  private terms?: TermStream;

  constructor(path: string, { formatVersion = INDEX_FORMAT_VERSION }: IndexStoreOptions = {}) {
    this.formatVersion = formatVersion;
    this.lexiconPath = join(dirname(path), LEXICON_FILE);
    this.db = new Database(path);
    // The database sits in a temporary folder that is deleted on failure: durability comes
    // from the final rename, not from SQLite's journal.
    this.db.pragma('journal_mode = OFF');
    this.db.pragma('synchronous = OFF');
    this.db.exec(SCHEMA);
    this.docs = new RowBatcher(this.db, 'docs', ['doc_id', 'external_id', 'path', 'length', 'warc_date', 'warc_record_id'], DOC_ROWS);
    this.db.exec('BEGIN');
  }

  private openLexicon(): LexiconFileWriter | SqliteLexiconWriter {
    return (this.lexicon ??= this.formatVersion === 4 ? new LexiconFileWriter(this.lexiconPath) : new SqliteLexiconWriter(this.db));
  }

  /**
   * The terms in termID order, in chunks: addTermStats takes the next one for each term's
   * figures. (The strings are known before the merge, the figures only as it goes.)
   */
  termsFrom(chunks: Iterable<readonly string[]>): void {
    this.terms = new TermStream(chunks);
  }

  private nextTerm(): string {
    const term = this.terms?.next();
    if (term === undefined) throw new Error(`lexicon: figures for termID ${this.termStatsCount}, past the ${this.termStatsCount} terms given`);
    return term;
  }

  /** One term and its figures; terms must come in termID order from 0 (code point order), their lists back to back (the merge's order). */
  addTerm(termId: number, term: string, df: number, cf: number, offset: number, length: number): void {
    const lexicon = this.openLexicon();
    if (termId !== lexicon.count) throw new Error(`lexicon: termID ${termId} after ${lexicon.count - 1} (termIDs must come in order, without gaps)`);
    lexicon.add(term, df, cf, offset, length);
  }

  /** Whether the lexicon goes to lexicon.bin (index format 4), which takes a merge thread's part (appendLexiconPart). */
  get writesLexiconFile(): boolean {
    return this.formatVersion === 4;
  }

  /** A merge thread's lexicon.bin blocks (LexiconFileWriter.appendPart), its lists from `postingsBase` in postings.bin. */
  appendLexiconPart(path: string, postingsBase: number): void {
    const lexicon = this.openLexicon();
    if (!(lexicon instanceof LexiconFileWriter)) throw new Error('lexicon: a part given to a lexicon kept in index.sqlite');
    lexicon.appendPart(path, postingsBase);
  }

  /** One term's figures, its string the next of termsFrom's. */
  addTermStats(termId: number, df: number, cf: number, offset: number, length: number): void {
    this.addTerm(termId, this.nextTerm(), df, cf, offset, length);
  }

  /** The figures of the next `n` terms from arrays indexed by termID. */
  addAllTermStats(n: number, df: ArrayLike<number>, cf: ArrayLike<number>, offsets: ArrayLike<number>, lengths: ArrayLike<number>): void {
    const lexicon = this.openLexicon();
    for (let t = lexicon.count, end = t + n; t < end; t++) lexicon.add(this.nextTerm(), df[t]!, cf[t]!, offsets[t]!, lengths[t]!);
  }

  /** Terms whose figures were added. */
  get termStatsCount(): number {
    return this.lexicon?.count ?? 0;
  }

  /**
   * Queues one document row; rows go in in call order (flushDocuments() ends the run of them).
   * `warc`: a WARC record's WARC-Date and WARC-Record-ID ('' or absent: NULL).
   */
  addDocument(docId: number, externalId: string, path: string, length: number, warc?: readonly [string | null, string | null]): void {
    this.docs.add(docId, externalId, path, length, warc?.[0] || null, warc?.[1] || null);
  }

  flushDocuments(): void {
    this.docs.flush();
  }

  /**
   * Appends the document rows of another index.sqlite (a segment being merged), docIDs shifted
   * by `base`, inside SQLite: row by row through JS cost ~5 µs a document (3.2 M documents: most
   * of an optimize). ATTACH needs no transaction open, so the one in progress is committed
   * around it; the database is in a temporary folder, discarded whole on failure.
   */
  appendDocumentsOf(path: string, base: number): void {
    this.docs.flush();
    this.db.exec('COMMIT');
    this.db.prepare('ATTACH DATABASE ? AS segment').run(path);
    try {
      // An index written before the WARC columns has none: NULL for them.
      const warc = hasWarcColumns(this.db, 'segment') ? 'warc_date, warc_record_id' : 'NULL, NULL';
      this.db
        .prepare(`INSERT INTO docs (doc_id, external_id, path, length, warc_date, warc_record_id) SELECT doc_id + ?, external_id, path, length, ${warc} FROM segment.docs ORDER BY doc_id`)
        .run(base);
    } finally {
      this.db.exec('DETACH DATABASE segment');
      this.db.exec('BEGIN');
    }
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

  /** Whether termsFrom's terms hold some not given figures yet. */
  private termsLeft(): boolean {
    return this.terms?.next() !== undefined;
  }

  /** Finishes the lexicon (every term given to termsFrom must have its figures by now) and commits the database. */
  commitAndClose(): void {
    this.docs.flush();
    if (this.termsLeft()) throw new Error(`lexicon: more terms given than the ${this.termStatsCount} with figures`);
    const lexicon = this.openLexicon();
    if (lexicon instanceof LexiconFileWriter) lexicon.finish();
    else lexicon.finish(this.db);
    this.db.exec('COMMIT');
    this.db.close();
  }

  abort(): void {
    if (this.lexicon instanceof LexiconFileWriter) this.lexicon.abort();
    if (this.db.open) this.db.close();
  }
}
