#!/usr/bin/env node
/**
 * Heaps' law of a crawl: distinct tokens V against tokens read n, V(n) = K·n^β, fitted by least
 * squares on log V = log K + β log n at doubling n (from 2^13 tokens to the whole crawl).
 *
 *   node bench/heaps-fit.mjs <crawl> [--shuffle] [--json]
 *
 * --shuffle: the documents in a seeded random order (the same every run) instead of crawl order.
 * Crawl order puts unlike parts of a crawl one after the other (mail: the ham folders, then the
 * spam ones, which bring new tokens faster), so its curve has steps; a shuffled order gives the
 * crawl's own growth rate, which is what a generator of independent documents can match.
 *
 * The crawl is read as `gpuindex build` reads it (indexer/corpus: documents in crawl order, the
 * title then the text) and tokenized by the default tokenizer. Two curves: raw tokens (what the
 * tokenizer scans: normalized, lowercased, before stopwords and stemming; what gen-corpus writes
 * as words) and terms (after stopwords and the Porter stemmer: what the index holds).
 * Reads dist/ (build first).
 */
import { readCorpus } from '../dist/indexer/corpus/index.js';
import { createTokenizer } from '../dist/indexer/analysis/tokenizer.js';

const args = process.argv.slice(2);
const crawl = args.find((a) => !a.startsWith('--'));
if (!crawl) {
  process.stderr.write('usage: node bench/heaps-fit.mjs <crawl> [--json]\n');
  process.exit(1);
}
const FIRST = 2 ** 13;

function curve() {
  return { n: 0, seen: new Set(), next: FIRST, points: [] };
}
function add(c, token) {
  c.n++;
  c.seen.add(token);
  if (c.n === c.next) {
    c.points.push([c.n, c.seen.size]);
    c.next *= 2;
  }
}
function finish(c) {
  if (c.points.at(-1)?.[0] !== c.n) c.points.push([c.n, c.seen.size]);
  return fit(c.points);
}

/** Least squares of log V on log n; the error as the RMS and the largest |V/fit - 1|. */
export function fit(points) {
  const xs = points.map(([n]) => Math.log(n));
  const ys = points.map(([, v]) => Math.log(v));
  const m = xs.length;
  const mx = xs.reduce((s, x) => s + x, 0) / m;
  const my = ys.reduce((s, y) => s + y, 0) / m;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < m; i++) (sxy += (xs[i] - mx) * (ys[i] - my)), (sxx += (xs[i] - mx) ** 2);
  const beta = sxy / sxx;
  const K = Math.exp(my - beta * mx);
  const rel = points.map(([n, v]) => v / (K * n ** beta) - 1);
  const rmsLog = Math.sqrt(xs.reduce((s, x, i) => s + (ys[i] - (Math.log(K) + beta * x)) ** 2, 0) / m);
  return { K, beta, rmsLog, maxRelError: Math.max(...rel.map(Math.abs)), points: points.map(([n, v], i) => ({ n, v, fitted: Math.round(K * n ** beta), relError: +rel[i].toFixed(4) })) };
}

const tokenizer = createTokenizer();
const raw = curve();
const terms = curve();
const stems = new Map();
let documents = 0;
let bytes = 0;
const tokenize = (doc) => {
  for (const text of [doc.title, doc.text]) {
    tokenizer.tokenizeRaw(text, (t) => {
      add(raw, t);
      let term = stems.get(t);
      if (term === undefined) stems.set(t, (term = tokenizer.analyzeToken(t)));
      if (term !== null) add(terms, term);
    });
  }
};
const shuffle = args.includes('--shuffle');
const held = [];
for await (const item of readCorpus(crawl)) {
  if (item.kind !== 'doc') continue;
  documents++;
  bytes += item.doc.bytes;
  if (shuffle) held.push({ title: item.doc.title, text: item.doc.text });
  else tokenize(item.doc);
}
if (shuffle) {
  // Fisher-Yates with a fixed 32-bit LCG: the same order every run.
  let x = 12345;
  for (let i = held.length - 1; i > 0; i--) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    const j = Math.floor((x / 2 ** 32) * (i + 1));
    [held[i], held[j]] = [held[j], held[i]];
  }
  for (const d of held) tokenize(d);
}
const out = { crawl, order: shuffle ? 'shuffled' : 'crawl', documents, bytes, rawTokens: { n: raw.n, distinct: raw.seen.size, ...finish(raw) }, terms: { n: terms.n, distinct: terms.seen.size, ...finish(terms) } };
if (args.includes('--json')) process.stdout.write(JSON.stringify(out, null, 2) + '\n');
else {
  process.stdout.write(`${crawl} (${out.order} order): ${documents} documents, ${(bytes / 1e6).toFixed(1)} MB\n`);
  for (const [name, c] of [['raw tokens', out.rawTokens], ['terms', out.terms]]) {
    process.stdout.write(`  ${name}: n = ${c.n}, V = ${c.distinct}; K = ${c.K.toFixed(2)}, beta = ${c.beta.toFixed(4)}, RMS log error ${c.rmsLog.toFixed(4)}, max |V/fit - 1| ${c.maxRelError.toFixed(3)}\n`);
    for (const p of c.points) process.stdout.write(`    n ${String(p.n).padStart(11)}  V ${String(p.v).padStart(9)}  fit ${String(p.fitted).padStart(9)}  ${(p.relError * 100).toFixed(1)} %\n`);
  }
}
