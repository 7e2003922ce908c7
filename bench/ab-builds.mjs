#!/usr/bin/env node
/**
 * A/B of whole builds: each crawl with each DIST, alternating DISTs within a round (in reverse order every other round), `build
 * --sorter cpu --workers N --json` into a temporary index. Prints one line a build (wall, process
 * CPU, HTML/text MB/s, the 1-minute load average after it), then per (crawl, DIST) the median wall and CPU seconds, and whether every
 * DIST wrote the same index: postings.bin, impacts.bin's arrays and every lexicon entry (both read
 * through this tree's dist, whatever their formats), the document table and the collection
 * statistics but the format number.
 *
 *   node bench/ab-builds.mjs [--rounds 3] [--workers 2] [--pipeline cpu] --crawl <path> [--crawl <path> ...] DIST [DIST ...]
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const o = { rounds: 3, workers: 2, pipeline: 'cpu', crawls: [], dists: [] };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--rounds') o.rounds = Number(argv[++i]);
  else if (a === '--workers') o.workers = Number(argv[++i]);
  else if (a === '--pipeline') o.pipeline = argv[++i];
  else if (a === '--crawl') o.crawls.push(resolve(argv[++i]));
  else if (a.startsWith('--')) throw new Error(`unknown option ${a}`);
  else o.dists.push(a);
}
if (o.crawls.length === 0 || o.dists.length === 0) throw new Error('usage: node bench/ab-builds.mjs [--rounds 3] [--workers 2] --crawl <path> ... DIST ...');

const Database = createRequire(import.meta.url)('better-sqlite3');
// The lexicon read through this tree's reader, which opens every index format: DISTs writing
// different formats still compare by what their lexicons hold.
const { SegmentReader } = await import(new URL('../dist/merge/segment-reader.js', import.meta.url));
const { readImpacts } = await import(new URL('../dist/merge/impacts.js', import.meta.url));
/** A digest of what an index holds (not its settings, which name the build, nor its format number). */
function indexDigest(dir) {
  const h = createHash('sha256');
  h.update(readFileSync(join(dir, 'postings.bin')));
  const segment = new SegmentReader(dir);
  try {
    const impacts = readImpacts(dir, segment.stats.terms);
    if (impacts) for (const k of ['firstBlock', 'lastDoc', 'gapsAt', 'tfsAt', 'firstPair', 'pairTf', 'pairLength']) h.update(new Uint8Array(impacts[k].buffer, impacts[k].byteOffset, impacts[k].byteLength));
    const terms = segment.termsInIdOrder();
    const f = segment.figures();
    terms.forEach((term, t) => h.update(JSON.stringify([t, term, f.df[t], f.cf[t], f.offset[t], f.length[t]])));
  } finally {
    segment.close();
  }
  const db = new Database(join(dir, 'index.sqlite'), { readonly: true });
  try {
    for (const row of db.prepare('SELECT * FROM docs').raw().iterate()) h.update(JSON.stringify(row));
    for (const row of db.prepare("SELECT * FROM stats WHERE key != 'formatVersion'").raw().iterate()) h.update(JSON.stringify(row));
  } finally {
    db.close();
  }
  return h.digest('hex').slice(0, 16);
}

const work = mkdtempSync(join(tmpdir(), 'gpuindex-ab-'));
const runs = new Map();
const shas = new Map();
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
try {
  for (let round = 1; round <= o.rounds; round++) {
    for (const crawl of o.crawls) {
      // The DISTs' order flips every round: a machine getting busier or quieter favours none.
      for (const dist of round % 2 === 1 ? o.dists : [...o.dists].reverse()) {
        const out = join(work, 'index');
        rmSync(out, { recursive: true, force: true });
        const t0 = performance.now();
        const r = spawnSync(process.execPath, [resolve(dist, 'src', 'cli.js'), 'build', crawl, '-o', out, '--pipeline', o.pipeline, '--workers', String(o.workers), '--json', '-q'], { encoding: 'utf8', maxBuffer: 64 << 20 });
        const wall = (performance.now() - t0) / 1000;
        if (r.status !== 0) throw new Error(`${dist} build ${crawl} failed: ${r.stderr}`);
        const s = JSON.parse(r.stdout);
        const sha = indexDigest(out);
        const key = `${crawl}\t${dist}`;
        if (!runs.has(key)) runs.set(key, { wall: [], cpu: [], merge: [] });
        runs.get(key).wall.push(wall);
        runs.get(key).cpu.push(s.cpu.processMs / 1000);
        runs.get(key).merge.push(s.timings.mergeMs / 1000);
        if (!shas.has(crawl)) shas.set(crawl, new Set());
        shas.get(crawl).add(sha);
        const parsers = Object.entries(s.stages).filter(([k]) => k.startsWith('parser')).map(([, v]) => `${(v.busyMs / 1000).toFixed(1)}/${(v.idleMs / 1000).toFixed(1)}`);
        console.log(`round ${round} ${key}: ${wall.toFixed(2)} s wall, ${(s.cpu.processMs / 1000).toFixed(2)} s CPU, merge ${(s.timings.mergeMs / 1000).toFixed(2)} s, finish ${(s.timings.finishMs / 1000).toFixed(2)} s, ${s.terms} terms, ${s.documents} docs, ${(s.bytesRead / 1e6 / wall).toFixed(1)} MB/s, workers busy/idle s ${parsers.join(' ')}, fill waited ${(s.stages.fill.batchWaitMs / 1000).toFixed(1)} s, index ${sha}, load ${loadavg()[0].toFixed(1)}`);
      }
    }
  }
  console.log('\nmedians: wall s (each round), process CPU s, merge s');
  for (const [key, r] of runs) console.log(`${key}\t${median(r.wall).toFixed(2)}\t(${r.wall.map((w) => w.toFixed(2)).join(' ')})\t${median(r.cpu).toFixed(2)}\t${median(r.merge).toFixed(2)}`);
  for (const [crawl, set] of shas) console.log(`${crawl}: index (postings, impacts, lexicon, documents, statistics) ${set.size === 1 ? 'identical across DISTs' : `DIFFERS: ${[...set].join(' ')}`}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
