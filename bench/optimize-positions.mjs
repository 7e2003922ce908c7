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
 * postings.bin.
 *
 *   node bench/optimize-positions.mjs [--rounds 3] [--parts 4] [--workers 2] (--crawl <path> | --gen <size>)
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const o = { rounds: 3, parts: 4, workers: 2, crawl: undefined, gen: undefined };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--rounds') o.rounds = Number(argv[++i]);
  else if (a === '--parts') o.parts = Number(argv[++i]);
  else if (a === '--workers') o.workers = Number(argv[++i]);
  else if (a === '--crawl') o.crawl = resolve(argv[++i]);
  else if (a === '--gen') o.gen = argv[++i];
  else throw new Error(`unknown argument ${a}`);
}
if (!o.crawl === !o.gen) throw new Error('usage: node bench/optimize-positions.mjs [--rounds 3] [--parts 4] [--workers 2] (--crawl <path> | --gen <size>)');

const root = resolve(new URL('..', import.meta.url).pathname);
const cli = join(root, 'dist/src/cli.js');
const work = mkdtempSync(join(tmpdir(), 'gpuindex-bench-optpos-'));
const run = (...args) => execFileSync(process.execPath, [cli, ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
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

  const variants = [false, true];
  const template = {};
  for (const positions of variants) {
    const dir = join(work, `segments-${positions ? 'pos' : 'plain'}`);
    run('build', parts[0], '-o', dir, '--workers', String(o.workers), ...(positions ? ['--positions'] : []));
    for (const p of parts.slice(1)) run('add', dir, p);
    template[positions] = dir;
    console.log(`${positions ? '--positions' : 'plain      '} segments: ${o.parts}, ${mb(total(sizes(dir)))} MB`);
  }

  const child = `
    const { optimizeIndex } = await import(${JSON.stringify(pathToFileURL(join(root, 'dist/src/optimize.js')).href)});
    const c0 = process.cpuUsage(); const t0 = performance.now();
    const r = optimizeIndex(process.argv[1]);
    const c = process.cpuUsage(c0);
    console.log(JSON.stringify({ wall: (performance.now() - t0) / 1000, cpu: (c.user + c.system) / 1e6, segments: r.segments }));`;
  const results = { false: [], true: [] };
  const outputs = {};
  for (let round = 0; round < o.rounds; round++) {
    for (const positions of round % 2 ? [...variants].reverse() : variants) {
      const dir = join(work, `optimize-${positions ? 'pos' : 'plain'}`);
      rmSync(dir, { recursive: true, force: true });
      cpSync(template[positions], dir, { recursive: true });
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', child, dir], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`optimize failed: ${r.stderr}`);
      const m = JSON.parse(r.stdout);
      results[positions].push(m);
      outputs[positions] = { files: sizes(dir), postings: readFileSync(join(dir, 'postings.bin')) };
      console.log(`round ${round + 1} ${positions ? '--positions' : 'plain      '} optimize of ${m.segments} segments: wall ${m.wall.toFixed(2)} s, cpu ${m.cpu.toFixed(2)} s, load ${loadavg()[0].toFixed(2)}`);
    }
  }
  const wall = (p) => median(results[p].map((m) => m.wall));
  const cpu = (p) => median(results[p].map((m) => m.cpu));
  console.log(`\ncrawl ${crawl} (${mb(all)} MB, ${o.parts} segments), medians of ${o.rounds} rounds:`);
  console.log(`  optimize wall: plain ${wall(false).toFixed(2)} s, --positions ${wall(true).toFixed(2)} s (x${(wall(true) / wall(false)).toFixed(2)})`);
  console.log(`  optimize cpu:  plain ${cpu(false).toFixed(2)} s, --positions ${cpu(true).toFixed(2)} s (x${(cpu(true) / cpu(false)).toFixed(2)})`);
  const plain = total(outputs.false.files);
  const pos = total(outputs.true.files);
  console.log(`  merged index: plain ${mb(plain)} MB, --positions ${mb(pos)} MB (positions.bin ${mb(outputs.true.files['positions.bin'] ?? 0)} MB, ${(((outputs.true.files['positions.bin'] ?? 0) / pos) * 100).toFixed(0)} %)`);
  console.log(`  postings.bin the same bytes in both: ${outputs.false.postings.equals(outputs.true.postings)}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
