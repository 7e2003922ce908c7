#!/usr/bin/env node
/**
 * What a fresh reader costs before its first answer: openIndex, then the first lexicon lookup,
 * then the first search, each timed with the RSS it added, in a fresh process per measurement,
 * for each (DIST, index) pair, alternated over rounds. An index lists the DIST that reads it:
 *   node bench/first-query.mjs [--rounds 5] [--query "q7 q1z7"] DIST=INDEX [DIST=INDEX ...]
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

const argv = process.argv.slice(2);
let rounds = 5;
let query = 'whale';
const pairs = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--rounds') rounds = Number(argv[++i]);
  else if (argv[i] === '--query') query = argv[++i];
  else if (argv[i] === '--child') {
    // One measurement: argv[i + 1] the dist, argv[i + 2] the index.
    const dist = argv[i + 1];
    const index = argv[i + 2];
    const mib = () => process.memoryUsage.rss() / 2 ** 20;
    const { openIndex } = await import(resolve(dist, 'src', 'reader.js'));
    const r0 = mib();
    let t = performance.now();
    const reader = openIndex(index);
    const openMs = performance.now() - t;
    const r1 = mib();
    const term = reader.analyze(query)[0] ?? query;
    t = performance.now();
    const entry = reader.lexiconEntry(term);
    const lookupMs = performance.now() - t;
    const r2 = mib();
    t = performance.now();
    const hits = reader.search(query, { k: 10 });
    const searchMs = performance.now() - t;
    const r3 = mib();
    t = performance.now();
    reader.search(query, { k: 10 });
    const againMs = performance.now() - t;
    reader.close();
    console.log(JSON.stringify({ openMs, lookupMs, searchMs, againMs, openMiB: r1 - r0, lookupMiB: r2 - r1, searchMiB: r3 - r2, df: entry?.df ?? 0, hits: hits.length }));
    process.exit(0);
  } else pairs.push(argv[i].split('='));
}
if (pairs.length === 0) throw new Error('usage: node bench/first-query.mjs [--rounds 5] [--query q] DIST=INDEX ...');

const results = new Map();
for (let round = 1; round <= rounds; round++) {
  for (const [dist, index] of round % 2 ? pairs : [...pairs].reverse()) {
    const r = spawnSync(process.execPath, [new URL(import.meta.url).pathname, '--query', query, '--child', resolve(dist), resolve(index)], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${dist} ${index}: ${r.stderr}`);
    const m = JSON.parse(r.stdout);
    const key = `${dist} ${index}`;
    if (!results.has(key)) results.set(key, []);
    results.get(key).push(m);
    console.log(`round ${round} ${key}: open ${m.openMs.toFixed(1)} ms (+${m.openMiB.toFixed(1)} MiB), first lookup ${m.lookupMs.toFixed(2)} ms (+${m.lookupMiB.toFixed(1)} MiB), first search ${m.searchMs.toFixed(1)} ms (+${m.searchMiB.toFixed(1)} MiB), again ${m.againMs.toFixed(2)} ms; df ${m.df}, ${m.hits} hits`);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log('\nmedians: open ms, first lookup ms, first search ms, search again ms, MiB added by open, lookup, search');
for (const [key, ms] of results) {
  const f = (k, d = 1) => median(ms.map((m) => m[k])).toFixed(d);
  console.log(`${key}\t${f('openMs')}\t${f('lookupMs', 2)}\t${f('searchMs')}\t${f('againMs', 2)}\t${f('openMiB')}\t${f('lookupMiB')}\t${f('searchMiB')}`);
}
