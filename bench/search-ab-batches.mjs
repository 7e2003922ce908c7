#!/usr/bin/env node
/**
 * Several builds of gpuindex (dist/ folders, as for bench/search-ab.mjs) searching one index,
 * alternated by batches of queries (the order rotating from batch to batch), for comparing more
 * than two builds in one process:
 *
 *   node bench/search-ab-batches.mjs --index IDX --crawl DIR [--sampling tokens|types] [--passes 3] [--batch 25] [--fts5 DB] DIST...
 *
 * A DIST given as DIST=INDEX searches that index instead of --index (builds whose index formats
 * differ, each reading the same documents built by itself).
 *
 * The queries are bench/search.mjs's (seed 7), OR, top 10, after one warm-up pass of all of them
 * for each build. Prints each build's CPU mean and p50 a query, and the median over batches of
 * its batch's CPU time over the first build's. `--fts5 DB` (bench/search-prepare.mjs fts5): the
 * batch's queries run on SQLite FTS5 before each build's turn, so each batch finds the CPU's
 * caches as bench/search.mjs leaves them (`--batch 1`: every query after an FTS5 query); then
 * the p50 and p95 of wall-clock time a query are printed too.
 */
import Database from 'better-sqlite3';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { generator, makeQueries, pct, sampleTexts } from './search-queries.mjs';

const argv = process.argv.slice(2);
const opts = {};
const dists = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i].startsWith('--')) opts[argv[i].slice(2)] = argv[++i];
  else dists.push(argv[i]);
}
if ((!opts.index && !dists.every((d) => d.includes('='))) || !opts.crawl || dists.length === 0) {
  process.stderr.write('usage: node bench/search-ab-batches.mjs --index IDX --crawl DIR [--sampling tokens|types] [--passes 3] [--batch 25] DIST...\n');
  process.exit(1);
}
const passes = Number(opts.passes ?? 3);
const batchSize = Number(opts.batch ?? 25);
const fts5 = opts.fts5 ? new Database(opts.fts5, { readonly: true }).prepare('SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT 10').pluck() : undefined;
/** The batch on FTS5, its words quoted as bench/search.mjs quotes them. */
const otherEngine = (batch) => {
  if (fts5) for (const q of batch) fts5.all(q.split(' ').map((w) => `"${w}"`).join(' OR '));
};
const builds = await Promise.all(
  dists.map(async (arg) => {
    const [d, index] = arg.includes('=') ? arg.split('=') : [arg, opts.index];
    return { dist: arg, reader: (await import(pathToFileURL(resolve(d, 'src/index.js')).href)).openIndex(index) };
  }),
);
const sameHits = (a, b) => JSON.stringify(a.map((h) => [h.docId, h.score])) === JSON.stringify(b.map((h) => [h.docId, h.score]));
const queries = makeQueries(builds[0].reader, sampleTexts(opts.crawl), opts.sampling ?? 'tokens', 500, generator(7)).map((q) => q.join(' '));
for (const q of queries) {
  const first = builds[0].reader.search(q, { k: 10 });
  for (const b of builds.slice(1)) if (!sameHits(first, b.reader.search(q, { k: 10 }))) throw new Error(`${b.dist} answers "${q}" otherwise than ${builds[0].dist}`);
}
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const total = builds.map(() => 0);
const perQuery = builds.map(() => []);
const wall = builds.map(() => []);
const ratios = builds.map(() => []);
let round = 0;
for (let p = 0; p < passes; p++) {
  for (let s = 0; s < queries.length; s += batchSize) {
    const batch = queries.slice(s, s + batchSize);
    const spent = [];
    for (let j = 0; j < builds.length; j++) {
      const i = (j + round) % builds.length;
      let sum = 0;
      otherEngine(batch);
      for (const q of batch) {
        const c = cpuMs();
        const t = performance.now();
        builds[i].reader.search(q, { k: 10 });
        wall[i].push(performance.now() - t);
        const ms = cpuMs() - c;
        perQuery[i].push(ms);
        sum += ms;
      }
      spent[i] = sum;
    }
    round++;
    spent.forEach((ms, i) => {
      total[i] += ms;
      ratios[i].push(ms / spent[0]);
    });
  }
}
const n = passes * queries.length;
for (const [i, b] of builds.entries()) {
  const wallText = fts5 ? `; wall p50 ${pct(wall[i], 0.5).toFixed(3)} ms, p95 ${pct(wall[i], 0.95).toFixed(3)} ms` : '';
  process.stdout.write(`${b.dist}: CPU mean ${(total[i] / n).toFixed(3)} ms, p50 ${pct(perQuery[i], 0.5).toFixed(3)} ms, batch ratio to ${builds[0].dist} (median) ${pct(ratios[i], 0.5).toFixed(3)}${wallText}\n`);
}
for (const b of builds) b.reader.close();
