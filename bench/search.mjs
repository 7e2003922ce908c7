#!/usr/bin/env node
/**
 * Search latency against SQLite FTS5 (and Xapian on a subset), engines alternated query by query
 * in one run:
 *
 *   node bench/search.mjs --crawl DIR --index IDX --fts5 DB [--xapian DIR]
 *        [--subset-index IDX --subset-fts5 DB --subset-xapian DIR] [--queries 500] [--seed 7]
 *        [--sampling tokens|types] [--batch 1] [--warmup 50]
 *
 * The indexes: `gpuindex build DIR -o IDX`; the peers' with bench/search-prepare.mjs (FTS5,
 * porter unicode61) and bench/xapian-index.py --no-positions (Xapian, on the subset file).
 * Queries: `--queries` of 1-4 words, each word (one that gpuindex analyses to one term: no
 * stopwords) a token of a random document of the crawl's first 32 MB (`--sampling tokens`, the
 * default: frequent words come often, as in a query log) or one of the distinct words there
 * (`--sampling types`: mostly rare words); OR of the words, top 10. gpuindex runs in process (pruned, and exhaustive for
 * reference), FTS5 in process through better-sqlite3 (`MATCH 'a OR b' ORDER BY rank LIMIT 10`),
 * Xapian in a Python process that times itself (bench/search-xapian.py). After `--warmup`
 * queries (default 50, drawn as the timed ones with the next seed) on each engine, the queries run in batches of `--batch` (1: every query on each engine
 * in turn), each batch on each engine in turn, the first engine rotating. A batch of 1 runs every
 * query after the other engines' (FTS5's reads evict the caches); a longer batch runs most
 * queries after the same engine's, as a server answers them. Then the most frequent term alone,
 * top 10, 21 times each (median), in runs of up to `--batch`. Each time is wall clock and
 * the CPU time of the engine's process (process.cpuUsage; Python's process_time), which a busy
 * machine inflates less. Prints tables and one JSON line.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { openIndex } from '../dist/src/index.js';
import { generator, makeQueries, optionArgs, pct, sampleTexts } from './search-queries.mjs';

const args = optionArgs(process.argv.slice(2));
if (!args.crawl || !args.index || !args.fts5) {
  process.stderr.write('usage: node bench/search.mjs --crawl DIR --index IDX --fts5 DB [--subset-index IDX --subset-fts5 DB --subset-xapian DIR] [--queries 500] [--seed 7]\n');
  process.exit(1);
}
const QUERIES = Number(args.queries ?? 500);
const BATCH = Number(args.batch ?? 1);
const WARMUP = Number(args.warmup ?? 50);
if (!Number.isInteger(BATCH) || BATCH < 1) throw new Error('--batch is a positive integer');
const K = 10;
const rnd = generator(Number(args.seed ?? 7));

const summary = (t) => ({ p50: pct(t, 0.5), p95: pct(t, 0.95), qps: t.length / (t.reduce((a, b) => a + b, 0) / 1000) });

/** CPU milliseconds of this process since `from` (the engines in process run on this thread alone). */
const cpuMs = (from) => {
  const u = process.cpuUsage(from);
  return (u.user + u.system) / 1000;
};

function fts5Engine(path) {
  const db = new Database(path, { readonly: true });
  const stmt = db.prepare('SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT ?').pluck();
  return {
    name: 'SQLite FTS5',
    run: (words) => {
      const c = process.cpuUsage();
      const t = performance.now();
      const hits = stmt.all(words.map((w) => `"${w}"`).join(' OR '), K).length;
      return { ms: performance.now() - t, cpuMs: cpuMs(c), hits };
    },
    close: () => db.close(),
  };
}

function gpuindexEngine(reader, exhaustive) {
  return {
    name: exhaustive ? 'gpuindex, exhaustive' : 'gpuindex',
    run: (words) => {
      const c = process.cpuUsage();
      const t = performance.now();
      const hits = reader.search(words.join(' '), { k: K, exhaustive }).length;
      return { ms: performance.now() - t, cpuMs: cpuMs(c), hits };
    },
  };
}

async function xapianEngine(db) {
  const child = spawn('/usr/bin/python3', [new URL('./search-xapian.py', import.meta.url).pathname, db, String(K)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    name: 'Xapian',
    run: async (words) => {
      child.stdin.write(words.join(' ') + '\n');
      const { value } = await lines.next();
      return JSON.parse(value);
    },
    close: () => child.stdin.end(),
  };
}

/**
 * The queries in batches of BATCH, each batch run by each engine in turn (the first engine
 * rotating); returns each engine's milliseconds and hit counts.
 */
async function alternate(engines, queries) {
  for (const e of engines) for (const q of warmup) await e.run(q);
  const times = engines.map(() => []);
  const cpu = engines.map(() => []);
  const hits = engines.map(() => 0);
  for (let from = 0, round = 0; from < queries.length; from += BATCH, round++) {
    for (let j = 0; j < engines.length; j++) {
      const e = (round + j) % engines.length;
      for (const q of queries.slice(from, from + BATCH)) {
        const r = await engines[e].run(q);
        times[e].push(r.ms);
        cpu[e].push(r.cpuMs);
        hits[e] += r.hits;
      }
    }
  }
  return engines.map((e, i) => ({ engine: e.name, ...summary(times[i]), cpuP50: pct(cpu[i], 0.5), cpuP95: pct(cpu[i], 0.95), meanHits: hits[i] / queries.length }));
}

/** The term of the largest df, and the word that analyses to it. */
function mostFrequent(reader, texts) {
  let best;
  for (const e of reader.lexicon()) if (!best || e.df > best.df) best = e;
  for (const t of texts) for (const w of t.split(/\s+/)) if (reader.analyze(w)[0] === best.term) return { word: w.toLowerCase().replace(/[^a-z]/g, ''), term: best.term, df: best.df };
  throw new Error(`no word of the sample analyses to ${best.term}`);
}

/** One query, 21 times an engine after one warm-up run, in runs of at most BATCH an engine in turn; the medians. */
async function single(engines, words) {
  const times = engines.map(() => []);
  const cpu = engines.map(() => []);
  for (const e of engines) await e.run(words);
  for (let done = 0; done < 21; done += BATCH)
    for (const [j, e] of engines.entries())
      for (let i = done; i < Math.min(21, done + BATCH); i++) {
        const r = await e.run(words);
        times[j].push(r.ms);
        cpu[j].push(r.cpuMs);
      }
  return engines.map((e, j) => ({ engine: e.name, median: pct(times[j], 0.5), cpuMedian: pct(cpu[j], 0.5) }));
}

function table(title, rows) {
  const f = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
  process.stdout.write(`\n${title}\n| engine | p50 (ms) | p95 (ms) | QPS | CPU p50 (ms) | CPU p95 (ms) | mean hits |\n|---|---|---|---|---|---|---|\n`);
  for (const r of rows) process.stdout.write(`| ${r.engine} | ${f(r.p50)} | ${f(r.p95)} | ${Math.round(r.qps).toLocaleString('en-US')} | ${f(r.cpuP50)} | ${f(r.cpuP95)} | ${r.meanHits.toFixed(1)} |\n`);
}

const texts = sampleTexts(args.crawl);
const reader = openIndex(args.index);
const SAMPLING = args.sampling ?? 'tokens';
if (SAMPLING !== 'tokens' && SAMPLING !== 'types') throw new Error('--sampling is tokens or types');
const queries = makeQueries(reader, texts, SAMPLING, QUERIES, rnd);
// Warm-up queries drawn the same way with the next seed: the engines' code and caches as a
// server's after a while, sharing with the timed queries only what the sampling repeats.
const warmup = makeQueries(reader, texts, SAMPLING, WARMUP, generator(Number(args.seed ?? 7) + 1));
const out = { queries: QUERIES, warmup: WARMUP, batch: BATCH, sampling: SAMPLING, k: K, seed: Number(args.seed ?? 7), documents: reader.stats().documents, postings: reader.stats().postings };
{
  const fts = fts5Engine(args.fts5);
  const engines = [gpuindexEngine(reader, false), gpuindexEngine(reader, true), fts];
  if (args.xapian) engines.push(await xapianEngine(args.xapian));
  // Found before any timing: walking the lexicon leaves garbage whose collection would run
  // beside the timed queries.
  const top = mostFrequent(reader, texts);
  out.full = await alternate(engines, queries);
  table(`${out.documents.toLocaleString('en-US')} documents, ${out.postings.toLocaleString('en-US')} postings: ${QUERIES} queries of 1-4 words (${SAMPLING}), OR, top ${K}, engines alternated by ${BATCH === 1 ? 'query' : `batches of ${BATCH} queries`}`, out.full);
  out.mostFrequent = { ...top, times: await single(engines, [top.word]) };
  process.stdout.write(`\nmost frequent term "${top.term}" (df ${top.df.toLocaleString('en-US')}) alone, top ${K}, median of 21 (runs of ${Math.min(BATCH, 21)}): ${out.mostFrequent.times.map((t) => `${t.engine} ${t.median.toFixed(2)} ms (CPU ${t.cpuMedian.toFixed(2)} ms)`).join(', ')}\n`);
  for (const e of engines) e.close?.();
}
reader.close();
if (args['subset-index']) {
  const sub = openIndex(args['subset-index']);
  const engines = [gpuindexEngine(sub, false), gpuindexEngine(sub, true)];
  if (args['subset-fts5']) engines.push(fts5Engine(args['subset-fts5']));
  if (args['subset-xapian']) engines.push(await xapianEngine(args['subset-xapian']));
  out.subset = { documents: sub.stats().documents, results: await alternate(engines, queries) };
  table(`subset: ${out.subset.documents.toLocaleString('en-US')} documents, the same queries`, out.subset.results);
  for (const e of engines) e.close?.();
  sub.close();
}
process.stdout.write('\n' + JSON.stringify(out) + '\n');
