#!/usr/bin/env node
/**
 * What --positions costs: builds of each crawl with and without it, alternating within a round
 * (reversed every other round), `build --json` into a temporary index. With several --dist builds
 * (compiled dist/ folders, e.g. an earlier commit's), every round runs each of them in turn (the
 * order rotated each round), so that they share the host's slow and fast moments. Prints one line
 * a build (wall; the build's CPU, every thread, from bash's `times`; the parse+sort phase's process
 * CPU, `cpu.processMs` of the summary; the merge stage's wall; the 1-minute load average after it),
 * then per crawl and dist the median of each with and without positions and their ratio, the index's
 * bytes (every file but MANIFEST.json) with and without positions, positions.bin's share, whether
 * both wrote the same postings.bin, and whether every dist wrote the same positions.bin (or, where
 * their positions.bin formats differ, which they are).
 * With --fts5, the crawl's JSONL files (a folder of them) also go into SQLite FTS5 twice, both
 * contentless (FTS5 keeps positions): bench/search-prepare.mjs fts5 (porter unicode61, one
 * column, then 'optimize': the smallest FTS5 makes) and bench/fts5-index.mjs (unicode61, title
 * and text columns); their database sizes are the yardsticks.
 *
 * --block-size gives both builds the same blocks (--positions alone makes the memory plan's blocks
 * smaller: a crawl that fitted one block may then take two, and the one-block path is not
 * taken with --positions), so that the difference is the positions' own cost. --pipeline,
 * --workers and --merge-threads go to every build; --extra passes more build flags (one string).
 *
 *   node bench/positions.mjs [--rounds 3] [--workers 2] [--pipeline cpu] [--block-size N] [--merge-threads N]
 *     [--extra "<flags>"] [--dist <dir> ...] [--fts5] --crawl <path> [--crawl <path> ...]
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';

const o = { rounds: 3, workers: 2, pipeline: 'cpu', fts5: false, blockSize: undefined, mergeThreads: undefined, extra: [], dists: [], crawls: [] };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--rounds') o.rounds = Number(argv[++i]);
  else if (a === '--workers') o.workers = Number(argv[++i]);
  else if (a === '--pipeline') o.pipeline = argv[++i];
  else if (a === '--fts5') o.fts5 = true;
  else if (a === '--block-size') o.blockSize = Number(argv[++i]);
  else if (a === '--merge-threads') o.mergeThreads = Number(argv[++i]);
  else if (a === '--extra') o.extra.push(...argv[++i].split(/\s+/).filter(Boolean));
  else if (a === '--dist') o.dists.push(resolve(argv[++i]));
  else if (a === '--crawl') o.crawls.push(resolve(argv[++i]));
  else throw new Error(`unknown argument ${a}`);
}
if (o.crawls.length === 0) throw new Error('usage: node bench/positions.mjs [--rounds 3] [--workers 2] [--pipeline cpu] [--dist <dir> ...] [--fts5] --crawl <path> ...');
if (o.dists.length === 0) o.dists.push(resolve(new URL('..', import.meta.url).pathname, 'dist'));

const work = mkdtempSync(join(tmpdir(), 'gpuindex-bench-pos-'));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const sizes = (dir) => Object.fromEntries(readdirSync(dir).filter((f) => f !== 'MANIFEST.json').map((f) => [f, statSync(join(dir, f)).size]));
const mb = (b) => (b / 1e6).toFixed(1);
/** A dist's name in a build's line: its COMMIT file (written beside a build) or its path, as dists are often all named dist. */
const label = (dist) => {
  try {
    return `${basename(dist)}@${readFileSync(join(dist, 'COMMIT'), 'utf8').trim()}`;
  } catch {
    return dist;
  }
};

function build(dist, crawl, positions) {
  const out = join(work, `idx-${positions ? 'pos' : 'plain'}`);
  rmSync(out, { recursive: true, force: true });
  const args = [join(dist, 'src/cli.js'), 'build', crawl, '-o', out, '--json', '--workers', String(o.workers), '--pipeline', o.pipeline, ...(o.blockSize ? ['--block-size', String(o.blockSize)] : []), ...(o.mergeThreads ? ['--merge-threads', String(o.mergeThreads)] : []), ...o.extra, ...(positions ? ['--positions'] : [])];
  const t0 = performance.now();
  // bash's `times` after the build: its user and system CPU (every thread, the merge's included).
  const r = spawnSync('bash', ['-c', '"$@"; s=$?; times >&2; exit $s', 'bash', process.execPath, ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const wall = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`build failed: ${r.stderr}`);
  const summary = JSON.parse(r.stdout);
  const cpu = summary.cpu ? summary.cpu.processMs / 1000 : NaN;
  const times = /(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s\s*$/.exec(r.stderr);
  const buildCpu = times ? 60 * Number(times[1]) + Number(times[2]) + 60 * Number(times[3]) + Number(times[4]) : NaN;
  const merge = summary.timings ? summary.timings.mergeMs / 1000 : NaN;
  const files = sizes(out);
  const postings = readFileSync(join(out, 'postings.bin'));
  const bin = positions ? readFileSync(join(out, 'positions.bin')) : undefined;
  const positionsBin = bin && { sha256: createHash('sha256').update(bin).digest('hex'), magic: bin.subarray(0, 8).toString('latin1') };
  rmSync(out, { recursive: true, force: true });
  return { wall, cpu, buildCpu, merge, files, postings, positionsBin };
}

/** The FTS5 yardsticks' database sizes: search-prepare's (porter, one column, optimized) and fts5-index's (unicode61, title and text). */
function fts5Bytes(crawl) {
  const here = new URL('.', import.meta.url).pathname;
  const jsonl = readdirSync(crawl).filter((f) => f.endsWith('.jsonl')).sort().map((f) => join(crawl, f));
  const out = {};
  for (const [name, args] of [
    ['porter', [resolve(here, 'search-prepare.mjs'), 'fts5', crawl]],
    ['unicode61', [resolve(here, 'fts5-index.mjs'), ...jsonl, '--db']],
  ]) {
    const db = join(work, `fts5-${name}.sqlite`);
    const r = spawnSync(process.execPath, [...args, db], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`FTS5 (${name}) failed: ${r.stderr}`);
    out[name] = statSync(db).size;
    rmSync(db, { force: true });
  }
  return out;
}

try {
  for (const crawl of o.crawls) {
    const runs = new Map(o.dists.map((d) => [d, { plain: [], positions: [] }]));
    for (let round = 0; round < o.rounds; round++) {
      const dists = o.dists.map((_, i) => o.dists[(i + round) % o.dists.length]);
      for (const dist of dists) {
        const order = round % 2 ? [true, false] : [false, true];
        for (const positions of order) {
          const r = build(dist, crawl, positions);
          runs.get(dist)[positions ? 'positions' : 'plain'].push(r);
          process.stdout.write(`${crawl}  ${label(dist)}  ${positions ? '--positions' : 'plain      '}  wall ${r.wall.toFixed(2)} s  build cpu ${r.buildCpu.toFixed(2)} s  parse+sort cpu ${r.cpu.toFixed(2)} s  merge ${r.merge.toFixed(2)} s  load ${loadavg()[0].toFixed(2)}\n`);
        }
      }
    }
    process.stdout.write(`${crawl}  (medians of ${o.rounds})\n`);
    let posBytes = 0;
    for (const [dist, r] of runs) {
      const med = (k, key) => median(r[k].map((x) => x[key]));
      const ratio = (key) => `${med('plain', key).toFixed(2)} s vs ${med('positions', key).toFixed(2)} s (${(med('positions', key) / med('plain', key)).toFixed(2)}x)`;
      const total = (files) => Object.values(files).reduce((a, b) => a + b, 0);
      const plainBytes = total(r.plain[0].files);
      posBytes = total(r.positions[0].files);
      const same = r.positions.every((x) => x.postings.equals(r.plain[0].postings));
      process.stdout.write(`  ${label(dist)}\n    plain vs --positions: wall ${ratio('wall')}; build cpu ${ratio('buildCpu')}; parse+sort cpu ${ratio('cpu')}; merge ${ratio('merge')}\n`);
      process.stdout.write(`    index: plain ${mb(plainBytes)} MB, --positions ${mb(posBytes)} MB (positions.bin ${mb(r.positions[0].files['positions.bin'])} MB); same postings.bin: ${same}\n`);
    }
    if (o.dists.length > 1) {
      const bins = [...runs.values()].flatMap((r) => r.positions.map((x) => x.positionsBin));
      const formats = [...new Set(bins.map((b) => b.magic))];
      if (formats.length > 1) process.stdout.write(`  positions.bin formats differ (${formats.join(', ')}): compare their sizes\n`);
      else process.stdout.write(`  positions.bin the same bytes from every dist: ${new Set(bins.map((b) => b.sha256)).size === 1}\n`);
    }
    if (o.fts5) {
      const fts = fts5Bytes(crawl);
      process.stdout.write(`  FTS5, contentless (it keeps positions): porter unicode61, one column, optimized (search-prepare.mjs) ${mb(fts.porter)} MB: --positions index (last dist) / FTS5 = ${(posBytes / fts.porter).toFixed(2)}; unicode61, title and text (fts5-index.mjs) ${mb(fts.unicode61)} MB: ${(posBytes / fts.unicode61).toFixed(2)}\n`);
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
