/** Reads an index's content tables and postings bytes, for byte-for-byte comparisons. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { TermStatsReader } from '../../merge/term-stats.js';

export interface IndexContent {
  postings: Buffer;
  /** [term_id, term, df, cf, offset, length] in termID order: the terms table joined with term_stats. */
  terms: unknown[];
  docs: unknown[];
  stats: unknown[];
}

export function readIndexContent(dir: string): IndexContent {
  const db = new Database(join(dir, 'index.sqlite'), { readonly: true });
  try {
    const strings = db.prepare('SELECT term_id, term FROM terms ORDER BY term_id').raw().all() as [number, string][];
    const terms: unknown[] = [];
    const figures = new TermStatsReader(db);
    for (const [termId, term] of strings) {
      const f = figures.get(termId);
      terms.push([termId, term, f?.df, f?.cf, f?.offset, f?.length]);
    }
    return {
      postings: readFileSync(join(dir, 'postings.bin')),
      terms,
      docs: db.prepare('SELECT * FROM docs ORDER BY doc_id').raw().all(),
      stats: db.prepare('SELECT * FROM stats ORDER BY key').raw().all(),
    };
  } finally {
    db.close();
  }
}
