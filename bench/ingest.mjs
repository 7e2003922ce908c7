#!/usr/bin/env node
/**
 * A live index under a stream of documents: the crawl's JSONL documents sent in batches, each
 * system in a process of its own (peak RSS is its own), one after the other.
 *
 *   node bench/ingest.mjs --crawl <dir> --work <dir> [--batch 100] [--docs N] [--memory 1GiB]
 *        [--cap-seconds 60] [--systems writer,build,fts5,rebuild,minisearch,orama] [--json out.json]
 *        [--dist dist] [--dists old=<dist>,new=dist --rounds 2] [--rate docs/s]
 *
 * --dist       the compiled gpuindex the systems import (default the repository's dist/).
 * --dists      A/B: the writer alone, once per named dist each round, the order alternated;
 *              --options-<name> '<JSON>' adds openWriter options to that one (e.g. flushBytes)
 *              round by round (a dist outside the repository finds no node_modules: copy it in).
 * --rate       the writer's batches at most this many documents a second (an offered load below
 *              what it sustains: visibility then measures the refresh path, not a backlog).
 *
 * writer      openWriter: each batch one add() (logged, fsynced before it resolves), refresh
 *             every second (refreshMs 1000), a commit every 10 s, merges by the default policy in
 *             the background; close() at the end. Reports documents/s over the adds, the p50/p99
 *             from an add resolving to the batch being searchable through writer.reader(), the
 *             most segments, write amplification (segment bytes written by flushes and merges /
 *             bytes of the final index), and top-10 BM25 p95 on the final live index against the
 *             same index optimized (same queries, alternated rounds).
 * build       one buildIndex of the same crawl (the one-shot figure).
 * fts5        SQLite FTS5 (better-sqlite3): a contentless table (title, text; porter unicode61),
 *             WAL journal, synchronous=FULL: each batch one transaction, fsynced at its commit;
 *             FTS5 merges its segments as it goes (automerge, the default).
 * rebuild     the old ingestion example: each batch rebuilds the index of every document so far.
 *             Run for --cap-seconds, then extrapolated (a batch's time is fitted as linear in the
 *             documents so far).
 * minisearch  MiniSearch addAll per batch, in memory; Orama insertMultiple per batch, in memory:
 * orama       both run for --cap-seconds at most, the rate over what they indexed.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, cpSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { lines } from './lines.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const crawl = opt('crawl');
const work = opt('work', '/tmp/ingest-bench');
const batch = Number(opt('batch', 100));
const maxDocs = Number(opt('docs', Infinity));
const memory = opt('memory', '1GiB');
const capSeconds = Number(opt('cap-seconds', 60));
const rate = Number(opt('rate', Infinity));
const run = opt('run');
const dist = resolve(opt('dist', join(dirname(fileURLToPath(import.meta.url)), '..', 'dist')));
const gpuindex = () => import(pathToFileURL(join(dist, 'src', 'index.js')).href);
if (!crawl) {
  process.stderr.write('usage: node bench/ingest.mjs --crawl <dir> --work <dir> [--batch 100] [--docs N] [--memory 1GiB] [--cap-seconds 60] [--systems ...] [--json out.json]\n');
  process.exit(1);
}

/** The crawl's documents in order, `batch` at a time (the last may be short). */
function* batches() {
  let out = [];
  let n = 0;
  for (const f of readdirSync(crawl).filter((f) => f.endsWith('.jsonl')).sort()) {
    for (const line of lines(join(crawl, f))) {
      const d = JSON.parse(line);
      out.push({ id: String(d.id), text: d.text ?? d.contents ?? '', ...(d.title ? { title: d.title } : {}) });
      if (++n >= maxDocs || out.length === batch) {
        yield out;
        out = [];
        if (n >= maxDocs) return;
      }
    }
  }
  if (out.length) yield out;
}


/** Documents of the stream: lines of the crawl's files, at most --docs. */
function countDocuments() {
  let n = 0;
  const buf = Buffer.allocUnsafe(16 << 20);
  for (const f of readdirSync(crawl).filter((f) => f.endsWith('.jsonl'))) {
    const fd = openSync(join(crawl, f), 'r');
    for (let k; (k = readSync(fd, buf, 0, buf.length, null)) > 0; ) for (let i = buf.indexOf(10); i >= 0 && i < k; i = buf.indexOf(10, i + 1)) n++;
    closeSync(fd);
  }
  return Math.min(n, maxDocs);
}

const du = (dir) => readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).reduce((a, e) => a + statSync(join(e.parentPath ?? e.path, e.name)).size, 0);
const peakRss = () => process.resourceUsage().maxRSS * 1024;
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : NaN;
};
const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

/** Queries of 1 to 3 words taken from documents of the stream (deterministic). */
function queriesFrom(count) {
  const qs = [];
  let i = 0;
  for (const b of batches()) {
    if (i++ % 10 !== 0) continue;
    const words = b[0].text.split(/\s+/).filter((w) => w.length > 3);
    if (words.length < 3) continue;
    const k = 1 + (qs.length % 3);
    const at = (qs.length * 7) % Math.max(1, words.length - k);
    qs.push(words.slice(at, at + k).join(' '));
    if (qs.length === count) break;
  }
  return qs;
}

const systems = {
  async writer() {
    const { openWriter, openIndex, optimizeIndex } = await gpuindex();
    const dir = join(work, 'writer');
    rmSync(dir, { recursive: true, force: true });
    const warnings = [];
    const writer = await openWriter(dir, { refreshMs: 1000, memory, onWarning: (m) => warnings.push(m), ...JSON.parse(opt('writer-options', '{}')) });
    // Visibility: each batch's sequence number and when its add resolved, until a refresh covers it.
    const waiting = [];
    const visible = [];
    const seen = () => {
      const now = performance.now();
      while (waiting.length && waiting[0].seq <= writer.searchableSequence) visible.push(now - waiting.shift().at);
    };
    const poll = setInterval(seen, 5);
    let committing = Promise.resolve();
    const committer = setInterval(() => (committing = writer.commit().then(() => {})), 10_000);
    let n = 0;
    let maxSegments = 0;
    let checks = 0;
    let nextCheck = performance.now() + 20_000;
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    for (const b of batches()) {
      // An offered load: the batch waits until the stream's schedule reaches it.
      const due = t0 + (n / rate) * 1000;
      if (due > performance.now()) await new Promise((r) => setTimeout(r, due - performance.now()));
      await writer.add(b);
      n += b.length;
      // Batches arrive as a service's requests do: the event loop turns between them (timers run).
      await new Promise((r) => setImmediate(r));
      waiting.push({ seq: writer.sequence(), at: performance.now() });
      seen();
      maxSegments = Math.max(maxSegments, writer.segmentList().length);
      // Now and then, what reader() sees is checked against what searchableSequence claims.
      if (performance.now() > nextCheck) {
        nextCheck = performance.now() + 20_000;
        const claimed = n - waiting.reduce((a, w) => a + batch, 0);
        const r = writer.reader();
        const docs = r.stats().documents;
        r.close();
        if (docs < claimed) throw new Error(`reader sees ${docs} documents, ${claimed} were claimed searchable`);
        checks++;
      }
    }
    const addSeconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    clearInterval(committer);
    await committing;
    // The last batches' visibility: the refresh timer still runs.
    while (waiting.length) await new Promise((r) => setTimeout(r, 5)).then(seen);
    clearInterval(poll);
    const t1 = performance.now();
    await writer.close();
    const closeSeconds = (performance.now() - t1) / 1000;
    const indexBytes = du(dir);
    const written = writer.bytesWritten.flushes + writer.bytesWritten.merges;
    const live = openIndex(dir);
    const segments = live.segmentList().length;
    const documents = live.stats().documents;
    const peak = peakRss();
    // Query latency: the live index against a copy optimized into one segment.
    const optimized = join(work, 'writer-optimized');
    rmSync(optimized, { recursive: true, force: true });
    cpSync(dir, optimized, { recursive: true });
    optimizeIndex(optimized);
    const one = openIndex(optimized);
    const qs = queriesFrom(200);
    const times = { live: [], optimized: [] };
    for (const q of qs) {
      live.search(q, { k: 10 });
      one.search(q, { k: 10 });
    }
    for (let round = 0; round < 5; round++) {
      for (const [name, r] of round % 2 ? [['optimized', one], ['live', live]] : [['live', live], ['optimized', one]]) {
        for (const q of qs) {
          const s = performance.now();
          r.search(q, { k: 10 });
          times[name].push(performance.now() - s);
        }
      }
    }
    live.close();
    one.close();
    return {
      documents: n,
      indexedDocuments: documents,
      addSeconds: round(addSeconds),
      // The process's CPU (every thread: the bench's JSON parsing, the writer, feed and merge threads) while adding.
      addCpuSeconds: round((cpu.user + cpu.system) / 1e6),
      closeSeconds: round(closeSeconds),
      docsPerSecond: Math.round(n / addSeconds),
      visibilityP50Ms: Math.round(quantile(visible, 0.5)),
      visibilityP99Ms: Math.round(quantile(visible, 0.99)),
      visibilityMaxMs: Math.round(Math.max(...visible)),
      readerChecks: checks,
      maxSegments,
      finalSegments: segments,
      indexBytes,
      bytesWritten: writer.bytesWritten,
      writeAmplification: round(written / indexBytes),
      timings: Object.fromEntries(Object.entries(writer.timings).map(([k, v]) => [k, Math.round(v)])),
      queryP95Ms: { live: round(quantile(times.live, 0.95), 3), optimized: round(quantile(times.optimized, 0.95), 3), queries: qs.length },
      queryP95Ratio: round(quantile(times.live, 0.95) / quantile(times.optimized, 0.95)),
      memory,
      ...(rate < Infinity ? { offeredDocsPerSecond: rate } : {}),
      peakRssBytes: peak,
      warnings: warnings.slice(0, 5),
    };
  },

  async build() {
    const { buildIndex } = await gpuindex();
    const dir = join(work, 'build');
    const t0 = performance.now();
    const s = await buildIndex({ input: maxDocs < Infinity ? (function* () { for (const b of batches()) yield* b; })() : crawl, output: dir, force: true, memory });
    const seconds = (performance.now() - t0) / 1000;
    return { documents: s.documents, seconds: round(seconds), docsPerSecond: Math.round(s.documents / seconds), indexBytes: du(dir), peakRssBytes: peakRss() };
  },

  async fts5() {
    const { default: Database } = await import('better-sqlite3');
    const path = join(work, 'fts5.sqlite');
    for (const f of [path, `${path}-wal`, `${path}-shm`]) rmSync(f, { force: true });
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec("CREATE VIRTUAL TABLE docs USING fts5(title, text, content='', tokenize='porter unicode61')");
    const insert = db.prepare('INSERT INTO docs(rowid, title, text) VALUES (?, ?, ?)');
    const tx = db.transaction((docs, base) => {
      for (let i = 0; i < docs.length; i++) insert.run(base + i, docs[i].title ?? '', docs[i].text);
    });
    let n = 0;
    const t0 = performance.now();
    for (const b of batches()) {
      tx(b, n + 1);
      n += b.length;
    }
    const seconds = (performance.now() - t0) / 1000;
    db.close();
    const bytes = statSync(path).size;
    return { documents: n, seconds: round(seconds), docsPerSecond: Math.round(n / seconds), indexBytes: bytes, peakRssBytes: peakRss() };
  },

  async rebuild() {
    const { buildIndex } = await gpuindex();
    const dir = join(work, 'rebuild');
    const all = [];
    const points = [];
    const t0 = performance.now();
    for (const b of batches()) {
      all.push(...b);
      const s = performance.now();
      await buildIndex({ input: all, output: dir, force: true, memory, sorter: 'cpu' });
      points.push([all.length, performance.now() - s]);
      if ((performance.now() - t0) / 1000 > capSeconds) break;
    }
    // Least squares: a batch's ms = a + b × documents so far; the whole stream is the sum over its batches.
    const total = countDocuments();
    const m = points.length;
    const sx = points.reduce((a, p) => a + p[0], 0);
    const sy = points.reduce((a, p) => a + p[1], 0);
    const sxx = points.reduce((a, p) => a + p[0] * p[0], 0);
    const sxy = points.reduce((a, p) => a + p[0] * p[1], 0);
    const slope = (m * sxy - sx * sy) / (m * sxx - sx * sx);
    const intercept = (sy - slope * sx) / m;
    let ms = 0;
    for (let k = batch; k < total + batch; k += batch) ms += intercept + slope * Math.min(k, total);
    return { documents: all.length, measuredSeconds: round((performance.now() - t0) / 1000), batches: m, msPerBatchAtEnd: Math.round(points.at(-1)[1]), extrapolatedDocuments: total, extrapolatedSeconds: Math.round(ms / 1000), docsPerSecond: round(total / (ms / 1000), 1), peakRssBytes: peakRss() };
  },

  async minisearch() {
    const { default: MiniSearch } = await import('minisearch');
    const ms = new MiniSearch({ fields: ['title', 'text'], idField: 'id' });
    return capped((b) => ms.addAll(b));
  },

  async orama() {
    const { create, insertMultiple } = await import('@orama/orama');
    const db = create({ schema: { title: 'string', text: 'string' } });
    return capped(async (b) => {
      await insertMultiple(db, b, b.length);
    });
  },
};

/** Feeds batches to `add` for at most --cap-seconds; the rate over what was added. */
async function capped(add) {
  let n = 0;
  let complete = true;
  const t0 = performance.now();
  for (const b of batches()) {
    await add(b);
    n += b.length;
    if ((performance.now() - t0) / 1000 > capSeconds) {
      complete = false;
      break;
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  return { documents: n, complete, seconds: round(seconds), docsPerSecond: Math.round(n / seconds), peakRssBytes: peakRss() };
}

if (run) {
  mkdirSync(work, { recursive: true });
  const result = await systems[run]();
  process.stdout.write(JSON.stringify(result) + '\n');
  process.exit(0);
}

const chosen = opt('systems', 'writer,build,fts5,rebuild,minisearch,orama').split(',');
const results = { crawl, batch, memory, capSeconds, node: process.version, loadBefore: loadavg().map((x) => round(x)), systems: {} };
const self = fileURLToPath(import.meta.url);
/** Runs one system in a process of its own (with `extra` arguments): its result, with the load average at its start. */
function runSystem(name, extra = []) {
  const load = loadavg();
  const r = spawnSync(process.execPath, ['--max-old-space-size=16384', self, ...args, ...extra, '--run', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 26 });
  const line = r.stdout.trim().split('\n').at(-1);
  let out;
  try {
    out = JSON.parse(line);
  } catch {
    out = { error: `exit ${r.status}${r.signal ? ` (${r.signal})` : ''}` };
  }
  return { ...out, loadAverageAtStart: round(load[0]), loadAverage5AtStart: round(load[1]) };
}
const dists = opt('dists');
if (dists) {
  // A/B of the writer: each named dist once a round, the order alternated.
  const named = dists.split(',').map((d) => d.split('='));
  results.ab = Object.fromEntries(named.map(([label]) => [label, []]));
  const rounds = Number(opt('rounds', 2));
  for (let round = 0; round < rounds; round++) {
    for (const [label, path] of round % 2 ? [...named].reverse() : named) {
      const options = opt(`options-${label}`);
      const out = runSystem('writer', ['--dist', resolve(path), ...(options ? ['--writer-options', options] : [])]);
      results.ab[label].push(out);
      process.stderr.write(`writer ${label} round ${round + 1}: ${JSON.stringify(out)}\n`);
    }
  }
} else {
  for (const name of chosen) {
    results.systems[name] = runSystem(name);
    process.stderr.write(`${name}: ${JSON.stringify(results.systems[name])}\n`);
  }
}
results.loadAfter = loadavg().map((x) => round(x));
const w = results.systems.writer;
const b = results.systems.build;
const f = results.systems.fts5;
if (w?.docsPerSecond && b?.docsPerSecond) results.writerShareOfBuild = round(w.docsPerSecond / b.docsPerSecond);
if (w?.docsPerSecond && f?.docsPerSecond) results.writerOverFts5 = round(w.docsPerSecond / f.docsPerSecond);
const json = opt('json');
if (json) writeFileSync(json, JSON.stringify(results, null, 2) + '\n');
process.stdout.write(JSON.stringify(results, null, 2) + '\n');
