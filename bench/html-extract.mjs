#!/usr/bin/env node
/**
 * HTML text extraction alone, in one thread: each DIST's htmlToText (indexer/corpus/html.js) on
 * every page of a crawl held in memory as strings (decoded as the reader decodes them), rounds
 * alternating between DISTs; prints MB/s of HTML (process CPU time) a round and their medians, and
 * checks that every DIST gives the same title and text on every page.
 *
 *   node bench/html-extract.mjs [--rounds 5] <crawl folder> [DIST ...]   (default DIST: dist)
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
let rounds = 5;
if (args[0] === '--rounds') {
  rounds = Number(args[1]);
  args.splice(0, 2);
}
const [crawl, ...distArgs] = args;
if (!crawl) throw new Error('usage: node bench/html-extract.mjs [--rounds 5] <crawl folder> [DIST ...]');
const dists = distArgs.length > 0 ? distArgs : ['dist'];
const extractors = [];
for (const d of dists) extractors.push((await import(pathToFileURL(resolve(d, 'indexer/corpus/html.js')).href)).htmlToText);
const { decodeFile, sniffHtmlCharset } = await import(pathToFileURL(resolve(dists[0], 'indexer/corpus/decode.js')).href);

const pages = [];
let bytes = 0;
for (const e of readdirSync(crawl, { recursive: true, withFileTypes: true })) {
  if (!e.isFile() || !/\.html?$/i.test(e.name)) continue;
  const buf = readFileSync(join(e.parentPath ?? e.path, e.name));
  const d = decodeFile(buf, sniffHtmlCharset(buf));
  if ('reason' in d) continue;
  pages.push(d.text);
  bytes += buf.length;
}
console.log(`${pages.length} pages, ${(bytes / 1e6).toFixed(1)} MB`);

let differ = 0;
for (const page of pages) {
  const first = extractors[0](page);
  for (let i = 1; i < extractors.length; i++) {
    const other = extractors[i](page);
    if (other.title !== first.title || other.text !== first.text) differ++;
  }
}
console.log(differ === 0 ? 'every DIST gives the same title and text on every page' : `${differ} pages DIFFER`);

const rates = dists.map(() => []);
for (let r = 1; r <= rounds; r++) {
  for (let i = 0; i < dists.length; i++) {
    const c0 = process.cpuUsage();
    let chars = 0;
    for (const page of pages) chars += extractors[i](page).text.length;
    const c = process.cpuUsage(c0);
    const s = (c.user + c.system) / 1e6;
    rates[i].push(bytes / 1e6 / s);
    console.log(`round ${r} ${dists[i]}: ${s.toFixed(2)} s CPU, ${(bytes / 1e6 / s).toFixed(1)} MB/s (${chars} text chars)`);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
for (let i = 0; i < dists.length; i++) console.log(`median ${dists[i]}: ${median(rates[i]).toFixed(1)} MB/s of HTML`);
