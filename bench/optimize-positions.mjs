#!/usr/bin/env node
/**
 * What positions cost `gpuindex optimize`: a crawl's files cut into --parts contiguous pieces
 * (balanced by bytes), the first built (`build`, with and without --positions) and the others
 * added (`gpuindex add`, one segment each), then that multi-segment index optimized, the two
 * variants alternating within a round (reversed every other round), each from a fresh copy of
 * its segments. Each optimize runs in a child process that reports its own CPU time
 * (process.cpuUsage: the segment merge runs on the main thread) and wall time. Prints one line
 * an optimize, then per variant the median wall and CPU seconds, the ratio, the merged index's
 * bytes (every file but MANIFEST.json), positions.bin's, and whether both wrote the same
 * postings.bin. With several --dist (built dist folders, e.g. two commits'), each dist builds its
 * own segments and optimizes them, all variants alternating within a round.
 *
 *   node bench/optimize-positions.mjs [--rounds 3] [--parts 4] [--workers 2] [--dist <dir> ...] (--crawl <path> | --gen <size>)
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const o = { rounds: 3, parts: 4, workers: 2, crawl: undefined, gen: undefined, dists: [] };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--rounds') o.rounds = Number(argv[++i]);
  else if (a === '--parts') o.parts = Number(argv[++i]);
  else if (a === '--workers') o.workers = Number(argv[++i]);
  else if (a === '--crawl') o.crawl = resolve(argv[++i]);
  else if (a === '--gen') o.gen = argv[++i];
  else if (a === '--dist') o.dists.push(resolve(argv[++i]));
  else throw new Error(`unknown argument ${a}`);
}
if (!o.crawl === !o.gen) throw new Error('usage: node bench/optimize-positions.mjs [--rounds 3] [--parts 4] [--workers 2] (--crawl <path> | --gen <size>)');

const root = resolve(new URL('..', import.meta.url).pathname);
if (o.dists.length === 0) o.dists.push(join(root, 'dist'));
const work = mkdtempSync(join(tmpdir(), 'gpuindex-bench-optpos-'));
const runWith = (dist, ...args) => execFileSync(process.execPath, [join(dist, 'src/cli.js'), ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
const run = (...args) => runWith(o.dists[0], ...args);
/** A dist's name in the output: its COMMIT file where it has one, else its folder. */
const label = (dist) => {
  try {
    return `${dist} (${readFileSync(join(dist, 'COMMIT'), 'utf8').trim()})`;
  } catch {
    return dist;
  }
};
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const mb = (b) => (b / 1e6).toFixed(1);
/** Bytes of every file of an index but MANIFEST.json (segment folders included), by file name. */
function sizes(dir, into = {}) {
  for (const f of readdirSync(dir, { withFileTypes: true })) {
    if (f.isDirectory()) sizes(join(dir, f.name), into);
    else if (f.name !== 'MANIFEST.json') into[f.name] = (into[f.name] ?? 0) + statSync(join(dir, f.name)).size;
  }
  return into;
}
const total = (s) => Object.values(s).reduce((a, b) => a + b, 0);

try {
  let crawl = o.crawl;
  if (o.gen) {
    crawl = join(work, 'crawl');
    run('gen-corpus', '--size', o.gen, '--file-size', '4MB', '-o', crawl);
  }
  // The crawl's files (sorted, as a build lists them) cut into contiguous parts of about equal bytes.
  const files = readdirSync(crawl).filter((f) => statSync(join(crawl, f)).isFile()).sort();
  if (files.length < o.parts) throw new Error(`${crawl}: ${files.length} files for ${o.parts} parts`);
  const bytes = files.map((f) => statSync(join(crawl, f)).size);
  const all = bytes.reduce((a, b) => a + b, 0);
  const parts = Array.from({ length: o.parts }, (_, p) => join(work, `part-${p}`));
  for (const p of parts) mkdirSync(p);
  let seen = 0;
  files.forEach((f, i) => {
    const p = Math.min(o.parts - 1, Math.floor((seen * o.parts) / all));
    linkSync(join(crawl, f), join(parts[p], f));
    seen += bytes[i];
  });

  /** Each dist with and without positions: `${dist index}:${positions}`. */
  const variants = o.dists.flatMap((_, d) => [`${d}:false`, `${d}:true`]);
  const distOf = (v) => o.dists[Number(v.split(':')[0])];
  const positionsOf = (v) => v.endsWith(':true');
  const name = (v) => `${o.dists.length > 1 ? `dist ${v.split(':')[0]} ` : ''}${positionsOf(v) ? '--positions' : 'plain      '}`;
  const template = {};
  for (const v of variants) {
    const dir = join(work, `segments-${v.replace(':', '-')}`);
    runWith(distOf(v), 'build', parts[0], '-o', dir, '--workers', String(o.workers), ...(positionsOf(v) ? ['--positions'] : []));
    for (const p of parts.slice(1)) runWith(distOf(v), 'add', dir, p);
    template[v] = dir;
    console.log(`${name(v)} segments: ${o.parts}, ${mb(total(sizes(dir)))} MB`);
  }

  const child = (dist) => `
    const { optimizeIndex } = await import(${JSON.stringify(pathToFileURL(join(dist, 'src/optimize.js')).href)});
    const c0 = process.cpuUsage(); const t0 = performance.now();
    const r = optimizeIndex(process.argv[1]);
    const c = process.cpuUsage(c0);
    console.log(JSON.stringify({ wall: (performance.now() - t0) / 1000, cpu: (c.user + c.system) / 1e6, segments: r.segments }));`;
  const results = Object.fromEntries(variants.map((v) => [v, []]));
  const outputs = {};
  for (let round = 0; round < o.rounds; round++) {
    for (const v of round % 2 ? [...variants].reverse() : variants) {
      const dir = join(work, `optimize-${v.replace(':', '-')}`);
      rmSync(dir, { recursive: true, force: true });
      cpSync(template[v], dir, { recursive: true });
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', child(distOf(v)), dir], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`optimize failed: ${r.stderr}`);
      const m = JSON.parse(r.stdout);
      results[v].push(m);
      outputs[v] = { files: sizes(dir), postings: readFileSync(join(dir, 'postings.bin')), positions: positionsOf(v) ? readFileSync(join(dir, 'positions.bin')) : undefined };
      console.log(`round ${round + 1} ${name(v)} optimize of ${m.segments} segments: wall ${m.wall.toFixed(2)} s, cpu ${m.cpu.toFixed(2)} s, load ${loadavg()[0].toFixed(2)}`);
    }
  }
  const wall = (v) => median(results[v].map((m) => m.wall));
  const cpu = (v) => median(results[v].map((m) => m.cpu));
  console.log(`\ncrawl ${crawl} (${mb(all)} MB, ${o.parts} segments), medians of ${o.rounds} rounds:`);
  o.dists.forEach((dist, d) => {
    const [plainV, posV] = [`${d}:false`, `${d}:true`];
    if (o.dists.length > 1) console.log(`dist ${d}: ${label(dist)}`);
    console.log(`  optimize wall: plain ${wall(plainV).toFixed(2)} s, --positions ${wall(posV).toFixed(2)} s (x${(wall(posV) / wall(plainV)).toFixed(2)})`);
    console.log(`  optimize cpu:  plain ${cpu(plainV).toFixed(2)} s, --positions ${cpu(posV).toFixed(2)} s (x${(cpu(posV) / cpu(plainV)).toFixed(2)})`);
    const plain = total(outputs[plainV].files);
    const pos = total(outputs[posV].files);
    console.log(`  merged index: plain ${mb(plain)} MB, --positions ${mb(pos)} MB (positions.bin ${mb(outputs[posV].files['positions.bin'] ?? 0)} MB, ${(((outputs[posV].files['positions.bin'] ?? 0) / pos) * 100).toFixed(0)} %)`);
    console.log(`  postings.bin the same bytes in both: ${outputs[plainV].postings.equals(outputs[posV].postings)}`);
  });
  if (o.dists.length > 1) console.log(`every dist's positions.bin the same bytes: ${variants.filter(positionsOf).every((v) => outputs[v].positions.equals(outputs['0:true'].positions))}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
