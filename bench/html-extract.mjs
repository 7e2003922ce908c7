#!/usr/bin/env node
/**
 * HTML text extraction alone, in one thread: each DIST's way from a page's bytes to its title and
 * text, as the reader runs it (readHtmlPage, or decodeHtmlPage and htmlUtf8ToText where a DIST has
 * them: a UTF-8 page extracted from its bytes, other pages decoded first; an older DIST:
 * decodeFile, then htmlToText), on every page of a crawl held in memory, rounds alternating
 * between DISTs; prints MB/s of HTML (process CPU time, the decode included) a round and their
 * medians, and checks that every DIST gives the same title and text on every page, and the same as htmlparser2's
 * Tokenizer driven the old way (indexer/corpus/html-tokenizer.js, where a DIST has it; timed too
 * with --tokenizer). With --invert, each round also times each DIST's parse-worker analysis
 * (DocumentInverter with a worker's LocalTerms) of the texts, title then text, as a worker runs it.
 *
 *   node bench/html-extract.mjs [--rounds 5] [--tokenizer] [--invert] <crawl folder> [DIST ...]   (default DIST: dist)
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
let rounds = 5;
let timeTokenizer = false;
let timeInvert = false;
for (;;) {
  if (args[0] === '--rounds') {
    rounds = Number(args[1]);
    args.splice(0, 2);
  } else if (args[0] === '--tokenizer') {
    timeTokenizer = true;
    args.shift();
  } else if (args[0] === '--invert') {
    timeInvert = true;
    args.shift();
  } else break;
}
const [crawl, ...distArgs] = args;
if (!crawl) throw new Error('usage: node bench/html-extract.mjs [--rounds 5] [--tokenizer] [--invert] <crawl folder> [DIST ...]');
const dists = distArgs.length > 0 ? distArgs : ['dist'];
const { decodeFile } = await import(pathToFileURL(resolve(dists[0], 'indexer/corpus/decode.js')).href);
/** A DIST's page bytes -> { title, text }, as its reader goes. */
async function extractorOf(d) {
  const html = await import(pathToFileURL(resolve(d, 'indexer/corpus/html.js')).href);
  const decode = await import(pathToFileURL(resolve(d, 'indexer/corpus/decode.js')).href);
  if (html.readHtmlPage) return (buf) => html.readHtmlPage(buf);
  if (decode.decodeHtmlPage && html.htmlUtf8ToText) {
    return (buf) => {
      const p = decode.decodeHtmlPage(buf);
      return 'utf8' in p ? html.htmlUtf8ToText(p.utf8) : html.htmlToText(p.text);
    };
  }
  return (buf) => html.htmlToText(decode.decodeFile(buf, true).text);
}
const extractors = [];
for (const d of dists) extractors.push(await extractorOf(d));
const withTokenizer = dists.find((d) => existsSync(resolve(d, 'indexer/corpus/html-tokenizer.js')));
const tokenizerExtract = withTokenizer && (await import(pathToFileURL(resolve(withTokenizer, 'indexer/corpus/html-tokenizer.js')).href)).htmlToTextByTokenizer;
const reference = tokenizerExtract && ((buf) => tokenizerExtract(decodeFile(buf, true).text));
if (reference && timeTokenizer) {
  dists.push(`${withTokenizer} (Tokenizer)`);
  extractors.push(reference);
}

const pages = [];
let bytes = 0;
for (const e of readdirSync(crawl, { recursive: true, withFileTypes: true })) {
  if (!e.isFile() || !/\.html?$/i.test(e.name)) continue;
  const buf = readFileSync(join(e.parentPath ?? e.path, e.name));
  if ('reason' in decodeFile(buf, true)) continue;
  pages.push(buf);
  bytes += buf.length;
}
console.log(`${pages.length} pages, ${(bytes / 1e6).toFixed(1)} MB`);

let differ = 0;
const checked = reference && !timeTokenizer ? [...extractors, reference] : extractors;
for (const page of pages) {
  const first = checked[0](page);
  for (let i = 1; i < checked.length; i++) {
    const other = checked[i](page);
    if (other.title !== first.title || other.text !== first.text) differ++;
  }
}
const what = reference ? 'every DIST and the Tokenizer give' : 'every DIST gives';
console.log(differ === 0 ? `${what} the same title and text on every page` : `${differ} pages DIFFER`);

/** Each DIST's worker analysis: a fresh inverter a round, as a fresh worker has. */
const inverters = [];
if (timeInvert) {
  for (const d of distArgs.length > 0 ? distArgs : ['dist']) {
    const { DocumentInverter, LocalTerms } = await import(pathToFileURL(resolve(d, 'indexer/scan/document-inverter.js')).href);
    const { createTokenizer } = await import(pathToFileURL(resolve(d, 'indexer/analysis/tokenizer.js')).href);
    inverters.push({ dist: d, make: () => new DocumentInverter(createTokenizer({}), new LocalTerms()), rates: [] });
  }
}
const extracted = timeInvert ? pages.map((p) => extractors[0](p)) : [];

const rates = dists.map(() => []);
for (let r = 1; r <= rounds; r++) {
  for (let i = 0; i < dists.length; i++) {
    const c0 = process.cpuUsage();
    let chars = 0;
    for (const page of pages) {
      const { text } = extractors[i](page);
      // Read the text as the analysis does: a string built of pieces is joined (flattened) now, not later.
      chars += text.length + (text.charCodeAt(text.length >> 1) & 0);
    }
    const c = process.cpuUsage(c0);
    const s = (c.user + c.system) / 1e6;
    rates[i].push(bytes / 1e6 / s);
    console.log(`round ${r} ${dists[i]}: ${s.toFixed(2)} s CPU, ${(bytes / 1e6 / s).toFixed(1)} MB/s (${chars} text chars)`);
  }
  for (const inv of inverters) {
    const inverter = inv.make();
    const c0 = process.cpuUsage();
    let ids = 0;
    for (const d of extracted) ids += inverter.invert(d).length;
    const c = process.cpuUsage(c0);
    const s = (c.user + c.system) / 1e6;
    inv.rates.push(bytes / 1e6 / s);
    console.log(`round ${r} ${inv.dist} analysis: ${s.toFixed(2)} s CPU, ${(bytes / 1e6 / s).toFixed(1)} MB/s of HTML (${ids} term ids)`);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
for (let i = 0; i < dists.length; i++) console.log(`median ${dists[i]}: ${median(rates[i]).toFixed(1)} MB/s of HTML`);
for (const inv of inverters) console.log(`median ${inv.dist} analysis: ${median(inv.rates).toFixed(1)} MB/s of HTML`);
