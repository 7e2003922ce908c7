#!/usr/bin/env node
/**
 * What a search costs when its thread has just resumed, against the same search run again at
 * once: each query runs right after the thread waits `--idle` ms (Atomics.wait: nothing of
 * this process runs meanwhile), after `--evict` MB of memory is written, or after `--spin` ms
 * of arithmetic on a few registers (no memory touched, no system call), then a second time.
 * Prints the medians of both, over all queries and by the time of the second run.
 *
 *   node bench/search-resume.mjs --crawl DIR --index IDX [--queries 500] [--passes 2]
 *        [--idle 60 | --evict 64 | --spin 60] [--dist dist]
 *
 * The queries are bench/search.mjs's (tokens sampling, seed 7), warmed once each first.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { generator, makeQueries, optionArgs, pct, sampleTexts } from './search-queries.mjs';

const args = optionArgs(process.argv.slice(2));
if (!args.crawl || !args.index) {
  process.stderr.write('usage: node bench/search-resume.mjs --crawl DIR --index IDX [--queries 500] [--passes 2] [--idle 60 | --evict 64 | --spin 60] [--dist dist]\n');
  process.exit(2);
}
const QUERIES = Number(args.queries ?? 500);
const PASSES = Number(args.passes ?? 2);
const EVICT_MB = args.evict !== undefined ? Number(args.evict) : 0;
const SPIN_MS = args.spin !== undefined ? Number(args.spin) : 0;
const IDLE_MS = EVICT_MB > 0 || SPIN_MS > 0 ? 0 : Number(args.idle ?? 60);
const { openIndex } = await import(pathToFileURL(resolve(args.dist ?? 'dist', 'src/index.js')).href);

const reader = openIndex(args.index);
const queries = makeQueries(reader, sampleTexts(args.crawl), 'tokens', QUERIES, generator(7)).map((q) => q.join(' '));
const gate = new Int32Array(new SharedArrayBuffer(4));
const junk = new Uint8Array(EVICT_MB << 20);
let sink = 0;
/** Gaps of the spin in which the clock jumped by more than 0.5 ms between two reads: the thread was descheduled. */
let descheduled = 0;
/** SPIN_MS of a dependent chain of multiplies; the clock read every 2,000 of them. */
const spin = () => {
  const t0 = performance.now();
  let last = t0;
  let jumped = false;
  let x = 1;
  for (let now = t0; now - t0 < SPIN_MS; ) {
    for (let i = 0; i < 2000; i++) x = x * 1.0000001 + 1e-9;
    now = performance.now();
    if (now - last > 0.5) jumped = true;
    last = now;
  }
  if (jumped) descheduled++;
  sink += x;
};
/** The pause before each first run: the thread blocked, the caches filled with other data, or the thread busy on no memory. */
const pause = EVICT_MB > 0 ? () => { for (let i = 0; i < junk.length; i += 64) junk[i]++; } : SPIN_MS > 0 ? spin : () => Atomics.wait(gate, 0, 0, IDLE_MS);

for (const q of queries) reader.search(q, { k: 10 });
const first = queries.map(() => []);
const again = queries.map(() => []);
for (let p = 0; p < PASSES; p++) {
  for (const [i, q] of queries.entries()) {
    pause();
    let t = performance.now();
    reader.search(q, { k: 10 });
    first[i].push(performance.now() - t);
    t = performance.now();
    reader.search(q, { k: 10 });
    again[i].push(performance.now() - t);
  }
}
const f = first.map((x) => pct(x, 0.5));
const a = again.map((x) => pct(x, 0.5));
const ms = (x) => x.toFixed(3);
const gaps = SPIN_MS > 0 ? ` (descheduled for more than 0.5 ms in ${descheduled} of ${PASSES * queries.length} gaps)` : '';
process.stdout.write(`${queries.length} queries, ${PASSES} passes, each first run after ${EVICT_MB > 0 ? `${EVICT_MB} MB written` : SPIN_MS > 0 ? `${SPIN_MS} ms of arithmetic` : `${IDLE_MS} ms idle`}${gaps}: p50 ${ms(pct(f, 0.5))} ms first, ${ms(pct(a, 0.5))} ms again\n`);
process.stdout.write('| time again (ms) | queries | p50 again | p50 first | first − again |\n|---|---|---|---|---|\n');
const edges = [0, 0.1, 0.2, 0.4, 0.8, 1.6, Infinity];
for (let b = 0; b + 1 < edges.length; b++) {
  const idx = a.map((_, i) => i).filter((i) => a[i] >= edges[b] && a[i] < edges[b + 1]);
  if (idx.length === 0) continue;
  const pf = pct(idx.map((i) => f[i]), 0.5);
  const pa = pct(idx.map((i) => a[i]), 0.5);
  process.stdout.write(`| ${edges[b]}–${edges[b + 1]} | ${idx.length} | ${ms(pa)} | ${ms(pf)} | ${ms(pf - pa)} |\n`);
}
reader.close();
if (sink === 42) process.stdout.write('\n');
