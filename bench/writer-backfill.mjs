#!/usr/bin/env node
/**
 * The writer on a large machine (bench/device.sh writer):
 *
 *   node bench/writer-backfill.mjs backfill <crawl> [--rounds 2] [--dist dist] [build flags...]
 *     A backfill of the crawl into an empty index through the writer, against one build of it,
 *     alternated: `buildIndex(crawl)`, then `openWriter` + `addCrawl(crawl)` + `close()` with the
 *     same build flags, then `add()` of its documents in batches of 10,000 (flushes of
 *     --flush-bytes, default 256 MiB, merges in the background; close() waits for them), with
 *     flushes completing in the background (`add`) and waited for (`addForeground`). One JSON
 *     line per run; the last line, the medians and the ratios to the build.
 *
 *   node bench/writer-backfill.mjs flushes <crawl> [--sizes 1000,10000,100000,400000] [--reps 3] [--sorters gpu,cpu]
 *     Flushes of growing size: that many of the crawl's documents added to an empty writer and
 *     refreshed (one flush: a build of the buffer), with the GPU sorter and the CPU sorter in
 *     alternation; the refresh's milliseconds and its build's sort figures.
 *
 * Build flags understood: --memory, --block-size, --pipeline, --workers, --sorter.
 */
import { closeSync, mkdirSync, openSync, readdirSync, readSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [mode, crawl, ...rest] = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = rest.indexOf(`--${name}`);
  return i >= 0 ? rest[i + 1] : fallback;
};
if (!['backfill', 'flushes'].includes(mode) || !crawl) {
  process.stderr.write('usage: node bench/writer-backfill.mjs backfill|flushes <crawl> [options]\n');
  process.exit(1);
}
const dist = resolve(flag('dist', 'dist'));
const { buildIndex, openWriter } = await import(pathToFileURL(join(dist, 'src/index.js')).href);
const work = flag('work', '/tmp/writer-backfill');
mkdirSync(work, { recursive: true });
const build = {
  ...(flag('memory') ? { memory: flag('memory') } : {}),
  ...(flag('block-size') ? { blockSize: Number(flag('block-size')) } : {}),
  ...(flag('pipeline') ? { pipeline: flag('pipeline') } : {}),
  ...(flag('workers') ? { workers: Number(flag('workers')) } : {}),
  ...(flag('sorter') ? { sorter: flag('sorter') } : {}),
};
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
};
const log = (o) => process.stdout.write(JSON.stringify(o) + '\n');

/** The crawl's JSONL documents in order, `size` at a time, at most `max`. */
function* batches(size, max = Infinity) {
  let out = [];
  let n = 0;
  for (const f of readdirSync(crawl).filter((f) => f.endsWith('.jsonl')).sort()) {
    const fd = openSync(join(crawl, f), 'r');
    const buf = Buffer.allocUnsafe(16 << 20);
    let carry = '';
    for (let k; (k = readSync(fd, buf, 0, buf.length, null)) > 0; ) {
      const last = buf.lastIndexOf(0x0a, k - 1);
      const text = carry + buf.toString('utf8', 0, last + 1);
      carry = buf.toString('utf8', last + 1, k);
      for (const line of text.split('\n')) {
        if (!line) continue;
        const d = JSON.parse(line);
        out.push({ id: String(d.id), text: d.text ?? d.contents ?? '', ...(d.title ? { title: d.title } : {}) });
        if (++n >= max || out.length === size) {
          yield out;
          out = [];
          if (n >= max) {
            closeSync(fd);
            return;
          }
        }
      }
    }
    closeSync(fd);
  }
  if (out.length) yield out;
}

async function timed(fn) {
  const t0 = performance.now();
  const r = await fn();
  return { ms: Math.round(performance.now() - t0), ...r };
}

if (mode === 'backfill') {
  const rounds = Number(flag('rounds', 2));
  const flushBytes = Number(flag('flush-bytes', 256 << 20));
  const runs = { build: [], addCrawl: [], add: [], addForeground: [] };
  for (let round = 1; round <= rounds; round++) {
    const out = join(work, 'index');
    rmSync(out, { recursive: true, force: true });
    const b = await timed(async () => ({ documents: (await buildIndex({ ...build, input: crawl, output: out, force: true })).documents }));
    log({ round, path: 'build', ...b });
    runs.build.push(b.ms);
    rmSync(out, { recursive: true, force: true });
    const c = await timed(async () => {
      const w = await openWriter(out, { refreshMs: 0, ...(build.memory ? { memory: build.memory } : {}), ...(build.sorter ? { sorter: build.sorter } : {}) });
      const { added } = await w.addCrawl(crawl, build);
      await w.close();
      return { documents: added };
    });
    log({ round, path: 'addCrawl', ...c });
    runs.addCrawl.push(c.ms);
    for (const [path, backgroundFlushes] of round % 2 ? [['add', true], ['addForeground', false]] : [['addForeground', false], ['add', true]]) {
      rmSync(out, { recursive: true, force: true });
      const a = await timed(async () => {
        const w = await openWriter(out, { refreshMs: 0, flushBytes, fsyncGroupMs: 10, backgroundFlushes, ...(build.memory ? { memory: build.memory } : {}), ...(build.sorter ? { sorter: build.sorter } : {}) });
        let documents = 0;
        for (const docs of batches(10_000)) documents += (await w.add(docs)).added;
        await w.close();
        return { documents, segments: w.segmentList().length, bytesWritten: w.bytesWritten, timings: w.timings };
      });
      log({ round, path, flushBytes, ...a });
      runs[path].push(a.ms);
    }
  }
  const med = Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, median(v)]));
  log({ medians: med, addCrawlOverBuild: +(med.addCrawl / med.build).toFixed(3), addOverBuild: +(med.add / med.build).toFixed(3), addForegroundOverBuild: +(med.addForeground / med.build).toFixed(3) });
  rmSync(work, { recursive: true, force: true });
} else {
  const sizes = flag('sizes', '1000,10000,100000,400000').split(',').map(Number);
  const reps = Number(flag('reps', 3));
  const sorters = flag('sorters', 'gpu,cpu').split(',');
  for (const size of sizes) {
    const [docs] = batches(size, size);
    const bytes = docs.reduce((a, d) => a + d.text.length + (d.title?.length ?? 0), 0);
    const ms = { gpu: [], cpu: [] };
    for (let rep = 0; rep < reps; rep++) {
      for (const sorter of rep % 2 ? [...sorters].reverse() : sorters) {
        const dir = join(work, `flush-${sorter}`);
        rmSync(dir, { recursive: true, force: true });
        const w = await openWriter(dir, { refreshMs: 0, sorter, memory: build.memory ?? '8GiB', flushBytes: 2 ** 40, mergePolicy: false, fsyncGroupMs: 10 });
        await w.add(docs);
        const t0 = performance.now();
        await w.refresh();
        const refreshMs = performance.now() - t0;
        await w.close();
        ms[sorter].push(refreshMs);
        log({ size, bytes, sorter, rep, refreshMs: Math.round(refreshMs) });
      }
    }
    log({ size, bytes, ...Object.fromEntries(sorters.map((s) => [`${s}MedianMs`, Math.round(median(ms[s]))])), ...(ms.gpu.length && ms.cpu.length ? { cpuOverGpu: +(median(ms.cpu) / median(ms.gpu)).toFixed(2) } : {}) });
  }
  rmSync(work, { recursive: true, force: true });
}
