/** Reads an index's content tables and postings bytes, for byte-for-byte comparisons. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

export interface IndexContent {
  postings: Buffer;
  terms: unknown[];
  docs: unknown[];
  stats: unknown[];
}

export function readIndexContent(dir: string): IndexContent {
  const db = new Database(join(dir, 'index.sqlite'), { readonly: true });
  try {
    return {
      postings: readFileSync(join(dir, 'postings.bin')),
      terms: db.prepare('SELECT * FROM terms ORDER BY term_id').raw().all(),
      docs: db.prepare('SELECT * FROM docs ORDER BY doc_id').raw().all(),
      stats: db.prepare('SELECT * FROM stats ORDER BY key').raw().all(),
    };
  } finally {
    db.close();
  }
}
