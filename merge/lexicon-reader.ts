/**
 * A segment's lexicon, whatever its format: the one way readers get at terms (the index reader's
 * lookups and term iteration, segment merges, impacts, CIFF export through the reader).
 * Format 4 keeps it in lexicon.bin (lexicon-file.ts); formats 2 and 3 in index.sqlite's
 * `terms` table and `term_stats` chunks (term-stats.ts).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import type { LexiconEntry } from './index-store.js';
import { LEXICON_FILE } from './lexicon-file.js';
import { LexiconFileReader } from './lexicon-file-reader.js';
import { POSTINGS_MAGIC } from './postings-file.js';
import { TermStatsReader } from './term-stats.js';

/** The lexicon's figures of every term of a segment, indexed by termID. */
export interface SegmentFigures {
  df: Float64Array;
  cf: Float64Array;
  offset: Float64Array;
  length: Float64Array;
}

export interface Lexicon {
  /** The entry of an exact (analysed) term, or undefined when the segment lacks it. */
  entry(term: string): LexiconEntry | undefined;
  /** Every term's string in termID order. */
  termsInIdOrder(): string[];
  /** Every term in code point order with its termID (ids undefined: the position is the termID). */
  termsInTermOrder(): { terms: string[]; ids?: Uint32Array };
  /** The figures of every term (32 bytes a term). */
  figures(): SegmentFigures;
  close(): void;
}

/** The lexicon of the segment in `dir` of index format `formatVersion` (`db`: its open index.sqlite), holding `terms` terms. */
export function openLexicon(dir: string, db: Database.Database, formatVersion: number, terms: number): Lexicon {
  return formatVersion >= 4 ? new FileLexicon(join(dir, LEXICON_FILE), terms) : new SqliteLexicon(dir, db, formatVersion, terms);
}

const emptyFigures = (n: number): SegmentFigures => ({ df: new Float64Array(n), cf: new Float64Array(n), offset: new Float64Array(n), length: new Float64Array(n) });

/** Format 4: lexicon.bin. */
class FileLexicon implements Lexicon {
  readonly file: LexiconFileReader;

  constructor(path: string, terms: number) {
    if (!existsSync(path)) throw new Error(`${path} is missing (index format 4 keeps its lexicon there)`);
    this.file = new LexiconFileReader(path);
    if (this.file.terms !== terms) {
      this.file.close();
      throw new Error(`${path}: ${this.file.terms} terms, index.sqlite's statistics say ${terms}`);
    }
  }

  entry(term: string): LexiconEntry | undefined {
    return this.file.lookup(term);
  }

  termsInIdOrder(): string[] {
    const terms = new Array<string>(this.file.terms);
    this.file.scan(POSTINGS_MAGIC.length, (term, t) => (terms[t] = term));
    return terms;
  }

  termsInTermOrder(): { terms: string[] } {
    return { terms: this.termsInIdOrder() };
  }

  figures(): SegmentFigures {
    const f = emptyFigures(this.file.terms);
    this.file.scan(POSTINGS_MAGIC.length, (_, t, df, cf, offset, length) => {
      f.df[t] = df;
      f.cf[t] = cf;
      f.offset[t] = offset;
      f.length[t] = length;
    }, false);
    return f;
  }

  close(): void {
    this.file.close();
  }
}

/** Formats 2 and 3: index.sqlite's terms table (looked up through its unique index) and term_stats. */
class SqliteLexicon implements Lexicon {
  private readonly termStmt: Database.Statement;
  private readonly termStats: TermStatsReader;

  constructor(
    private readonly dir: string,
    private readonly db: Database.Database,
    private readonly formatVersion: number,
    private readonly terms: number,
  ) {
    this.termStmt = db.prepare('SELECT term_id FROM terms WHERE term = ?').pluck();
    this.termStats = new TermStatsReader(db);
  }

  entry(term: string): LexiconEntry | undefined {
    const termId = this.termStmt.get(term) as number | undefined;
    if (termId === undefined) return undefined;
    const figures = this.termStats.get(termId);
    if (!figures) throw new Error(`${this.dir}: index.sqlite has no figures for termID ${termId}`);
    return { term, termId, ...figures };
  }

  termsInIdOrder(): string[] {
    // One array: fetching rows one by one cost 1.3 µs a row.
    return this.db.prepare('SELECT term FROM terms ORDER BY term_id').pluck().all() as string[];
  }

  /** Format 3 numbers terms in code point order; format 2 by first occurrence, so SQLite sorts them (BINARY collation compares UTF-8 bytes: code point order). */
  termsInTermOrder(): { terms: string[]; ids?: Uint32Array } {
    if (this.formatVersion >= 3) return { terms: this.termsInIdOrder() };
    const rows = this.db.prepare('SELECT term_id, term FROM terms ORDER BY term').raw().all() as [number, string][];
    return { terms: rows.map((r) => r[1]), ids: Uint32Array.from(rows, (r) => r[0]) };
  }

  figures(): SegmentFigures {
    const n = this.terms;
    const f = emptyFigures(n);
    for (const c of this.termStats.chunks()) {
      if (c.firstTermId + c.df.length > n) throw new Error(`${this.dir}: index.sqlite has figures for termIDs past its ${n} terms`);
      f.df.set(c.df, c.firstTermId);
      f.cf.set(c.cf, c.firstTermId);
      f.offset.set(c.offset, c.firstTermId);
      f.length.set(c.length, c.firstTermId);
    }
    return f;
  }

  close(): void {
    // The statements close with the database (SegmentReader's).
  }
}
