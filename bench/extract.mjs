#!/usr/bin/env node
/**
 * Writes gpuindex's own reader output for a crawl as JSONL ({"id","path","title","text"} a
 * line), so that the peers (SQLite FTS5, Xapian through its Python bindings) and the retrieval
 * sanity check index exactly the text gpuindex indexes. Uses the compiled reader in dist/.
 *
 *   node bench/extract.mjs <crawl> <out.jsonl>
 *
 * Prints one JSON line: documents, skipped, text bytes (UTF-8 of title + text), source bytes.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [crawl, out] = process.argv.slice(2);
if (!crawl || !out) {
  process.stderr.write('usage: node bench/extract.mjs <crawl> <out.jsonl>\n');
  process.exit(1);
}
// GPUINDEX_DIST: another compiled tree (bench/peers.mjs --dist); default the checkout's dist/.
const dist = process.env.GPUINDEX_DIST ? pathToFileURL(process.env.GPUINDEX_DIST + '/') : new URL('../dist/', import.meta.url);
const { readCorpus } = await import(new URL('indexer/corpus/index.js', dist).href);
const t0 = performance.now();
const fd = openSync(out, 'w');
let chunk = [];
let chunkChars = 0;
let documents = 0;
let skipped = 0;
let textBytes = 0;
let sourceBytes = 0;
const flush = () => {
  if (chunk.length) writeSync(fd, chunk.join(''));
  chunk = [];
  chunkChars = 0;
};
for await (const item of readCorpus(crawl)) {
  if (item.kind === 'ignored') continue; // a WARC request record, an image: not a document, not bad input
  if (item.kind !== 'doc') {
    skipped++;
    continue;
  }
  const d = item.doc;
  const line = JSON.stringify({ id: d.externalId, path: d.path, title: d.title, text: d.text }) + '\n';
  chunk.push(line);
  chunkChars += line.length;
  documents++;
  textBytes += Buffer.byteLength(d.title) + Buffer.byteLength(d.text);
  sourceBytes += d.bytes;
  if (chunkChars > 8 << 20) flush();
}
flush();
closeSync(fd);
process.stdout.write(JSON.stringify({ documents, skipped, textBytes, sourceBytes, ms: Math.round(performance.now() - t0) }) + '\n');
