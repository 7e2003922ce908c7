#!/usr/bin/env node
/**
 * The 128-posting bit-packed block codec (merge/block-codec.ts) against postings.bin's varints,
 * on the same index, alternated in one run:
 *
 *   node bench/block-codec.mjs --index IDX --crawl DIR [--queries 500] [--seed 7] [--rounds 5]
 *
 * The index's lists are re-encoded in memory (no file is written). Figures:
 * - size: postings.bin against the packed lists (2 bytes a block of widths, no other overhead:
 *   the skip data, last docIDs and offsets, is impacts.bin's in both formats);
 * - decode: every block of every list of df >= 128 decoded, docIDs and tfs, through the query
 *   cursor's own decoders (src/query/cursor.ts), varint and packed in turn, `--rounds` times;
 * - queries: the queries of bench/search.mjs (same seed, `tokens` sampling), OR, top 10, each
 *   run by the pruned evaluation over each format in turn (the first rotating), after 50
 *   warm-up queries each; the hits are checked equal.
 * Prints the load average before and after, tables, and one JSON line.
 */
import { loadavg } from 'node:os';
import { blockBounds, BlockCursor, END } from '../dist/src/query/cursor.js';
import { prunedTopK } from '../dist/src/query/evaluate.js';
import { planQuery } from '../dist/src/query/plan.js';
import { openIndex } from '../dist/src/index.js';
import { packSegment } from '../dist/merge/block-codec.js';
import { readImpacts, computeImpacts } from '../dist/merge/impacts.js';
import { impactsByTerm } from '../dist/merge/impact-blocks.js';
import { SegmentReader } from '../dist/merge/segment-reader.js';
import { generator, makeQueries, optionArgs, pct, sampleTexts } from './search-queries.mjs';

const args = optionArgs(process.argv.slice(2));
if (!args.index || !args.crawl) {
  process.stderr.write('usage: node bench/block-codec.mjs --index IDX --crawl DIR [--queries 500] [--seed 7] [--rounds 5]\n');
  process.exit(1);
}
const QUERIES = Number(args.queries ?? 500);
const ROUNDS = Number(args.rounds ?? 5);
const K = 10;
const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');
const out = { loadBefore: loadavg() };
process.stdout.write(`load average before: ${load()}\n`);

const segment = new SegmentReader(args.index);
segment.loadPostings();
const impacts = readImpacts(args.index, segment.stats.terms) ?? computeImpacts(segment);
let t = performance.now();
const packed = packSegment(segment, impacts);
out.packSeconds = (performance.now() - t) / 1000;
const f = segment.figures();
const varintBytes = segment.postingsBytes;
out.size = { varint: varintBytes, packed: packed.bytes.length, ratio: packed.bytes.length / varintBytes };
// Lists of at least one full block, where a block codec can differ from varint at all.
let longVarint = 0;
let longPacked = 0;
const long = [];
for (let term = 0; term < segment.stats.terms; term++) {
  if (f.df[term] < 128) continue;
  long.push(term);
  longVarint += f.length[term];
  longPacked += packed.length[term];
}
out.size.longLists = { lists: long.length, varint: longVarint, packed: longPacked, ratio: longPacked / longVarint };
process.stdout.write(
  `size: postings.bin ${(varintBytes / 2 ** 20).toFixed(1)} MiB, packed ${(packed.bytes.length / 2 ** 20).toFixed(1)} MiB (${out.size.ratio.toFixed(3)}x); ` +
    `the ${long.length.toLocaleString('en-US')} lists of df >= 128: ${(longVarint / 2 ** 20).toFixed(1)} MiB against ${(longPacked / 2 ** 20).toFixed(1)} MiB (${out.size.longLists.ratio.toFixed(3)}x); packed in ${out.packSeconds.toFixed(1)} s\n`,
);

const listOf = (format, term) =>
  format === 'varint' ? segment.view.subarray(f.offset[term], f.offset[term] + f.length[term]) : packed.bytes.subarray(packed.offset[term], packed.offset[term] + packed.length[term]);
const byTerm = { varint: impactsByTerm(impacts), bp128: impactsByTerm(packed.impacts) };
const impactsOf = (format, term) => byTerm[format].term(term);

/** Every block of the long lists decoded (docIDs and tfs) through the cursor; returns ms and a checksum. */
function decodeAll(format) {
  const cursors = long.map((term) => new BlockCursor(listOf(format, term), f.df[term], impactsOf(format, term), blockBounds(impactsOf(format, term), () => 0, 0)));
  const start = performance.now();
  let sum = 0;
  for (const c of cursors) {
    while (c.doc !== END) {
      sum = (sum + c.doc + c.tf()) % 1000000007;
      c.nextBlock();
    }
  }
  return { ms: performance.now() - start, sum };
}
const decode = { varint: [], packed: [] };
let postingsDecoded = 0;
for (const term of long) postingsDecoded += f.df[term];
for (let r = 0; r < ROUNDS + 1; r++) {
  const order = r % 2 === 0 ? ['varint', 'packed'] : ['packed', 'varint'];
  const sums = {};
  for (const format of order) {
    const { ms, sum } = decodeAll(format === 'packed' ? 'bp128' : 'varint');
    sums[format] = sum;
    if (r > 0) decode[format].push(ms);
  }
  if (sums.varint !== sums.packed) throw new Error('the formats decode to different postings');
}
out.decode = Object.fromEntries(
  Object.entries(decode).map(([k, v]) => [k, { medianMs: pct(v, 0.5), nsPerPosting: (pct(v, 0.5) * 1e6) / postingsDecoded, roundsMs: v.map((x) => +x.toFixed(1)) }]),
);
process.stdout.write(
  `decode (first docID and tf of every block, whole blocks decoded; ${postingsDecoded.toLocaleString('en-US')} postings, median of ${ROUNDS}): ` +
    `varint ${out.decode.varint.medianMs.toFixed(0)} ms (${out.decode.varint.nsPerPosting.toFixed(2)} ns a posting), packed ${out.decode.packed.medianMs.toFixed(0)} ms (${out.decode.packed.nsPerPosting.toFixed(2)} ns a posting)\n`,
);

// Queries: the pruned evaluation over either format.
const reader = openIndex(args.index);
const texts = sampleTexts(args.crawl);
const queries = makeQueries(reader, texts, 'tokens', QUERIES, generator(Number(args.seed ?? 7)));
const lengths = segment.documentLengths();
const termIdStmt = { get: (term) => segment.lexicon.entry(term)?.termId };
const N = segment.stats.documents;
const avg = segment.stats.averageLength || 1;
function run(format, words) {
  const cpu = process.cpuUsage();
  const start = performance.now();
  const plan = planQuery(words.join(' '), (x) => reader.analyze(x), { positions: false, fields: [] });
  const ids = plan.terms.map((p) => termIdStmt.get(p.term));
  const idf = Float64Array.from(ids, (id) => {
    const df = id === undefined ? 0 : f.df[id];
    return df > 0 ? Math.log(1 + (N - df + 0.5) / (df + 0.5)) : 0;
  });
  const input = {
    docBase: 0,
    lengths,
    impacts: (term) => impactsOf(format, term),
    list: (term) => {
      const id = ids[plan.terms.findIndex((p) => p.term === term)];
      return id === undefined ? undefined : { termId: id, df: f.df[id], bytes: listOf(format, id) };
    },
    decoded: () => undefined,
  };
  const hits = prunedTopK([input], plan, { k1: 0.9, b: 0.4, avg, idf }, K);
  const ms = performance.now() - start;
  const u = process.cpuUsage(cpu);
  return { ms, cpuMs: (u.user + u.system) / 1000, hits };
}
const formats = ['varint', 'bp128'];
for (const q of queries.slice(0, 50)) for (const format of formats) run(format, q);
const times = { varint: [], bp128: [] };
const cpuTimes = { varint: [], bp128: [] };
for (const [i, q] of queries.entries()) {
  const order = i % 2 === 0 ? formats : [...formats].reverse();
  const results = order.map((format) => {
    const r = run(format, q);
    times[format].push(r.ms);
    cpuTimes[format].push(r.cpuMs);
    return JSON.stringify(r.hits);
  });
  if (results[0] !== results[1]) throw new Error(`query ${q.join(' ')}: the formats give different hits`);
}
const mean = (v) => v.reduce((a, b) => a + b, 0) / v.length;
out.queries = Object.fromEntries(
  Object.entries(times).map(([k, v]) => [k, { p50: pct(v, 0.5), p95: pct(v, 0.95), mean: mean(v), cpuP50: pct(cpuTimes[k], 0.5), cpuP95: pct(cpuTimes[k], 0.95), cpuMean: mean(cpuTimes[k]) }]),
);
process.stdout.write(
  `\n${QUERIES} queries of 1-4 words (tokens), OR, top ${K}, pruned, on ${N.toLocaleString('en-US')} documents:\n| format | p50 (ms) | p95 (ms) | mean (ms) | CPU p50 (ms) | CPU p95 (ms) | CPU mean (ms) |\n|---|---|---|---|---|---|---|\n`,
);
for (const [k, v] of Object.entries(out.queries)) process.stdout.write(`| ${k} | ${[v.p50, v.p95, v.mean, v.cpuP50, v.cpuP95, v.cpuMean].map((x) => x.toFixed(3)).join(' | ')} |\n`);
out.loadAfter = loadavg();
process.stdout.write(`load average after: ${load()}\n${JSON.stringify(out)}\n`);
reader.close();
segment.close();
