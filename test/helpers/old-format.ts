/** Rewrites a format-4 index as format 3 (the lexicon in index.sqlite's terms and term_stats tables), as gpuindex wrote indexes before lexicon.bin. */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { INDEX_DB, POSTINGS_FILE, SqliteLexiconWriter } from '../../merge/index-store.js';
import { LEXICON_FILE } from '../../merge/lexicon-file.js';
import { writeManifest } from '../../merge/manifest.js';
import { SegmentReader } from '../../merge/segment-reader.js';

export function rewriteAsFormat3(dir: string): void {
  const segment = new SegmentReader(dir);
  if (segment.stats.formatVersion !== 4) throw new Error(`${dir}: format ${segment.stats.formatVersion}, not 4`);
  const terms = segment.termsInIdOrder();
  const f = segment.figures();
  segment.close();
  const db = new Database(join(dir, INDEX_DB));
  try {
    db.exec('BEGIN');
    const lexicon = new SqliteLexiconWriter(db);
    terms.forEach((term, t) => lexicon.add(term, f.df[t]!, f.cf[t]!, f.offset[t]!, f.length[t]!));
    lexicon.finish(db);
    db.prepare("UPDATE stats SET value = 3 WHERE key = 'formatVersion'").run();
    db.exec('COMMIT');
  } finally {
    db.close();
  }
  rmSync(join(dir, LEXICON_FILE));
  writeManifest(dir, [INDEX_DB, POSTINGS_FILE], 3);
}
