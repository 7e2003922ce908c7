#!/usr/bin/env node
/**
 * Top-10 BM25 latency on a live (multi-segment) index against the same index optimized, with
 * several dists alternated in one run (an A/B of the search code on the same files):
 *
 *   node bench/live-search.mjs --live <index> --optimized <index> --crawl <jsonl crawl> [--dists a=dist,b=<dist>] [--queries 200] [--rounds 5]
 *
 * The queries are bench/ingest.mjs's (1 to 3 words from documents of the crawl); after one
 * warm-up pass, each round runs them all on the live index and on the optimized one (order
 * alternated). Prints p50, p95 and mean per dist and index, and the live / optimized p95.
 */
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { lines } from './lines.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const [liveDir, optimizedDir, crawl] = [opt('live'), opt('optimized'), opt('crawl')];
if (!liveDir || !optimizedDir || !crawl) {
  process.stderr.write('usage: node bench/live-search.mjs --live <index> --optimized <index> --crawl <dir> [--dists a=dist,b=<dist>] [--queries 200] [--rounds 5]\n');
  process.exit(1);
}
const count = Number(opt('queries', 200));
const rounds = Number(opt('rounds', 5));
const dists = opt('dists', 'dist=dist').split(',').map((d) => d.split('='));

/** bench/ingest.mjs's queries: every 10th batch of 100 documents, 1 to 3 words of its first document's text. */
function queries() {
  const qs = [];
  let n = 0;
  let batch = 0;
  for (const f of readdirSync(crawl).filter((f) => f.endsWith('.jsonl')).sort()) {
    for (const line of lines(join(crawl, f))) {
      if (n++ % 100 !== 0) continue;
      if (batch++ % 10 !== 0) continue;
      const words = (JSON.parse(line).text ?? '').split(/\s+/).filter((w) => w.length > 3);
      if (words.length < 3) continue;
      const k = 1 + (qs.length % 3);
      const at = (qs.length * 7) % Math.max(1, words.length - k);
      qs.push(words.slice(at, at + k).join(' '));
      if (qs.length === count) return qs;
    }
  }
  return qs;
}

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const qs = queries();
const readers = [];
for (const [label, path] of dists) {
  const { openIndex } = await import(pathToFileURL(join(resolve(path), 'src/index.js')).href);
  readers.push({ label, live: openIndex(liveDir), optimized: openIndex(optimizedDir), times: { live: [], optimized: [] } });
}
for (const r of readers) for (const q of qs) for (const which of ['live', 'optimized']) r[which].search(q, { k: 10 });
for (let round = 0; round < rounds; round++) {
  for (const r of round % 2 ? [...readers].reverse() : readers) {
    for (const which of round % 2 ? ['optimized', 'live'] : ['live', 'optimized']) {
      for (const q of qs) {
        const t = performance.now();
        r[which].search(q, { k: 10 });
        r.times[which].push(performance.now() - t);
      }
    }
  }
}
for (const r of readers) {
  const row = { dist: r.label, segments: r.live.segmentList().length };
  for (const which of ['live', 'optimized']) {
    const xs = r.times[which];
    row[which] = { p50: +quantile(xs, 0.5).toFixed(3), p95: +quantile(xs, 0.95).toFixed(3), mean: +(xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(3) };
  }
  row.p95Ratio = +(row.live.p95 / row.optimized.p95).toFixed(2);
  process.stdout.write(JSON.stringify(row) + '\n');
  r.live.close();
  r.optimized.close();
}
