#!/usr/bin/env node
/**
 * The peers' indexes for bench/search.mjs, from a JSONL crawl (title + text, as gpuindex reads it):
 *
 *   node bench/search-prepare.mjs fts5 <crawl-dir> <out.sqlite>
 *       SQLite FTS5, one contentless column (title, then text), tokenize 'porter unicode61'
 *       (Porter stems like gpuindex's), no stopword list; rowid = document number from 1.
 *   node bench/search-prepare.mjs subset <crawl-dir> <n> <out.jsonl>
 *       the first n documents of the crawl (files in name order) as one JSONL file.
 *
 * Xapian's database is made by bench/xapian-index.py --no-positions on the subset file.
 * Prints one JSON line: documents, ms.
 */
import { closeSync, openSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { lines } from './lines.mjs';


function* crawlLines(dir) {
  for (const f of readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort()) yield* lines(join(dir, f));
}

const [what, ...rest] = process.argv.slice(2);
const t0 = performance.now();
let documents = 0;
if (what === 'fts5' && rest.length === 2) {
  const [dir, dbPath] = rest;
  rmSync(dbPath, { force: true });
  const db = new Database(dbPath);
  db.exec("CREATE VIRTUAL TABLE fts USING fts5(body, content='', tokenize='porter unicode61')");
  const ins = db.prepare('INSERT INTO fts(rowid, body) VALUES (?, ?)');
  db.exec('BEGIN');
  for (const line of crawlLines(dir)) {
    const o = JSON.parse(line);
    ins.run(++documents, (typeof o.title === 'string' && o.title ? o.title + '\n' : '') + o.text);
  }
  db.exec('COMMIT');
  db.exec("INSERT INTO fts(fts) VALUES ('optimize')");
  db.close();
} else if (what === 'subset' && rest.length === 3) {
  const [dir, n, out] = rest;
  const fd = openSync(out, 'w');
  for (const line of crawlLines(dir)) {
    if (documents === Number(n)) break;
    writeSync(fd, line + '\n');
    documents++;
  }
  closeSync(fd);
} else {
  process.stderr.write('usage: search-prepare.mjs fts5 <crawl-dir> <out.sqlite> | subset <crawl-dir> <n> <out.jsonl>\n');
  process.exit(1);
}
process.stdout.write(JSON.stringify({ documents, ms: Math.round(performance.now() - t0) }) + '\n');
