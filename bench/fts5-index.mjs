#!/usr/bin/env node
/**
 * SQLite FTS5 peer: indexes JSONL documents (title + text, the fields gpuindex reads by
 * default) into one contentless FTS5 table with the unicode61 tokenizer (no stemming), in one
 * transaction, plus a table mapping rowid -> document id.
 *
 *   node bench/fts5-index.mjs --db out.sqlite [--content] file.jsonl ...
 *
 * --content stores the text too (an ordinary FTS5 table) instead of content=''.
 * Prints one JSON line: documents, ms.
 */
import { rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { lines } from './lines.mjs';

const args = process.argv.slice(2);
let dbPath;
let content = false;
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--db') dbPath = args[++i];
  else if (args[i] === '--content') content = true;
  else files.push(args[i]);
}
if (!dbPath || files.length === 0) {
  process.stderr.write('usage: node bench/fts5-index.mjs --db out.sqlite [--content] file.jsonl ...\n');
  process.exit(1);
}

const ID = ['id', 'docid', '_id', 'url'];
const TEXT = ['contents', 'text', 'body'];
const first = (o, keys) => {
  for (const k of keys) if (typeof o[k] === 'string') return o[k];
  return undefined;
};


const t0 = performance.now();
rmSync(dbPath, { force: true });
const db = new Database(dbPath);
db.exec(`CREATE VIRTUAL TABLE fts USING fts5(title, text, ${content ? '' : "content='', "}tokenize='unicode61')`);
db.exec('CREATE TABLE docs(rowid INTEGER PRIMARY KEY, id TEXT)');
const insFts = db.prepare('INSERT INTO fts(rowid, title, text) VALUES (?, ?, ?)');
const insDoc = db.prepare('INSERT INTO docs(rowid, id) VALUES (?, ?)');
let documents = 0;
let bad = 0;
db.exec('BEGIN');
for (const f of files) {
  for (const line of lines(f)) {
    let o;
    try {
      o = JSON.parse(line);
    } catch {
      bad++;
      continue;
    }
    const text = first(o, TEXT);
    if (text === undefined) {
      bad++;
      continue;
    }
    const rowid = ++documents;
    insFts.run(rowid, typeof o.title === 'string' ? o.title : '', text);
    insDoc.run(rowid, first(o, ID) ?? `${f}:${rowid}`);
  }
}
db.exec('COMMIT');
const sqlite = db.prepare('SELECT sqlite_version()').pluck().get();
db.close();
process.stdout.write(JSON.stringify({ documents, bad, ms: Math.round(performance.now() - t0), sqlite }) + '\n');
