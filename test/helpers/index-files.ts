/** Reads an index's content tables and postings bytes, for byte-for-byte comparisons. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SegmentReader } from '../../merge/segment-reader.js';

export interface IndexContent {
  postings: Buffer;
  /** lexicon.bin's bytes (format 4), or null. */
  lexiconFile: Buffer | null;
  /** [term_id, term, df, cf, offset, length] in termID order, read through the lexicon reader (any format). */
  terms: unknown[];
  docs: unknown[];
  stats: unknown[];
}

export function readIndexContent(dir: string): IndexContent {
  const segment = new SegmentReader(dir);
  let terms: unknown[];
  try {
    const strings = segment.termsInIdOrder();
    const f = segment.figures();
    terms = strings.map((term, t) => [t, term, f.df[t], f.cf[t], f.offset[t], f.length[t]]);
  } finally {
    segment.close();
  }
  const db = new Database(join(dir, 'index.sqlite'), { readonly: true });
  try {
    return {
      postings: readFileSync(join(dir, 'postings.bin')),
      lexiconFile: existsSync(join(dir, 'lexicon.bin')) ? readFileSync(join(dir, 'lexicon.bin')) : null,
      terms,
      docs: db.prepare('SELECT * FROM docs ORDER BY doc_id').raw().all(),
      stats: db.prepare('SELECT * FROM stats ORDER BY key').raw().all(),
    };
  } finally {
    db.close();
  }
}
