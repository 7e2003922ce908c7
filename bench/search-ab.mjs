#!/usr/bin/env node
/**
 * Two builds of gpuindex (two dist/ folders: a change and its base) searching one index, query
 * by query alternated in one process (the first rotating), so a shared, noisy machine loads both
 * alike:
 *
 *   node bench/search-ab.mjs --index IDX --crawl DIR --a DIST_A --b DIST_B [--queries 500] [--seed 7] [--sampling tokens|types] [--passes 2] [--evict MB]
 *
 * A dist folder is a copy of `dist/` inside the repository (so it finds node_modules), e.g.
 * `git stash; npm run build; cp -r dist dist-base; git stash pop; npm run build`. The queries are
 * bench/search.mjs's (same seed and sampling), OR, top 10, after 50 warm-up queries each; the
 * hits are checked equal. `--evict MB`: before each timed query, a write to every cache line of
 * an MB-sized buffer, so each query finds the CPU's caches holding other work (as after another
 * engine's query in bench/search.mjs with --batch 1). Prints the load average before and after,
 * p50/p95/mean of wall-clock and CPU time, and one JSON line.
 */
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { generator, makeQueries, optionArgs, pct, sampleTexts } from './search-queries.mjs';

const args = optionArgs(process.argv.slice(2));
if (!args.index || !args.crawl || !args.a || !args.b) {
  process.stderr.write('usage: node bench/search-ab.mjs --index IDX --crawl DIR --a DIST_A --b DIST_B [--queries 500] [--seed 7] [--sampling tokens|types] [--passes 2]\n');
  process.exit(1);
}
const QUERIES = Number(args.queries ?? 500);
const PASSES = Number(args.passes ?? 2);
const K = 10;
const EVICT_MB = Number(args.evict ?? 0);
const out = { loadBefore: loadavg(), queries: QUERIES, sampling: args.sampling ?? 'tokens', passes: PASSES, evictMB: EVICT_MB };
const other = new Uint8Array(EVICT_MB << 20);
const evict = () => {
  for (let i = 0; i < other.length; i += 64) other[i]++;
};
const builds = await Promise.all(
  ['a', 'b'].map(async (name) => {
    const { openIndex } = await import(pathToFileURL(resolve(args[name], 'src/index.js')).href);
    return { name, dist: args[name], reader: openIndex(args.index) };
  }),
);
const queries = makeQueries(builds[0].reader, sampleTexts(args.crawl), out.sampling, QUERIES, generator(Number(args.seed ?? 7)));
const run = (b, q) => {
  if (other.length > 0) evict();
  const c = process.cpuUsage();
  const t = performance.now();
  const hits = b.reader.search(q.join(' '), { k: K });
  const ms = performance.now() - t;
  const u = process.cpuUsage(c);
  return { ms, cpuMs: (u.user + u.system) / 1000, hits: hits.map((h) => `${h.docId}:${h.score}`).join(' ') };
};
for (const q of queries.slice(0, 50)) for (const b of builds) run(b, q);
const times = builds.map(() => ({ ms: [], cpu: [] }));
for (let pass = 0; pass < PASSES; pass++) {
  for (const [i, q] of queries.entries()) {
    const order = (i + pass) % 2 === 0 ? [0, 1] : [1, 0];
    const hits = [];
    for (const j of order) {
      const r = run(builds[j], q);
      times[j].ms.push(r.ms);
      times[j].cpu.push(r.cpuMs);
      hits[j] = r.hits;
    }
    if (hits[0] !== hits[1]) throw new Error(`query "${q.join(' ')}": the builds' hits differ`);
  }
}
const mean = (v) => v.reduce((a, b) => a + b, 0) / v.length;
out.results = builds.map((b, j) => ({
  build: b.name,
  dist: b.dist,
  p50: pct(times[j].ms, 0.5),
  p95: pct(times[j].ms, 0.95),
  mean: mean(times[j].ms),
  cpuP50: pct(times[j].cpu, 0.5),
  cpuP95: pct(times[j].cpu, 0.95),
  cpuMean: mean(times[j].cpu),
}));
out.loadAfter = loadavg();
const f = (x) => x.toFixed(3);
process.stdout.write(`load average before: ${out.loadBefore.map((x) => x.toFixed(2)).join(' ')}, after: ${out.loadAfter.map((x) => x.toFixed(2)).join(' ')}\n`);
process.stdout.write(`${QUERIES} queries (${out.sampling}) x ${PASSES} passes, OR, top ${K}${EVICT_MB ? `, ${EVICT_MB} MB written before each query` : ''}\n| build | p50 (ms) | p95 (ms) | mean (ms) | CPU p50 (ms) | CPU p95 (ms) | CPU mean (ms) |\n|---|---|---|---|---|---|---|\n`);
for (const r of out.results) process.stdout.write(`| ${r.build} (${r.dist}) | ${f(r.p50)} | ${f(r.p95)} | ${f(r.mean)} | ${f(r.cpuP50)} | ${f(r.cpuP95)} | ${f(r.cpuMean)} |\n`);
process.stdout.write(JSON.stringify(out) + '\n');
for (const b of builds) b.reader.close();
