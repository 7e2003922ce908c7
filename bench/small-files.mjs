#!/usr/bin/env node
/**
 * A crawl of many small files against the same documents as one JSONL file, A/B across builds.
 *
 *   node bench/small-files.mjs [--folders 200] [--files 1000] [--words 60] [--rounds 3]
 *                              [--workers 1,2] [--sorter cpu|auto] [--html] [--root .cache/corpora] [DIST ...]
 *
 * Generates (once; kept) <root>/small-files-<folders>x<files>[-html]/: `data/dNNN/fNNNN.txt`
 * (or `.html`: a small page with a <title>, a <script> and paragraphs), each file a document of
 * `--words` words drawn from a Zipf-like vocabulary (seeded, the same bytes every time), and
 * `jsonl/docs.jsonl`, the same documents (id = the file's path, title and text) one a line.
 * Then builds each folder with each DIST (default: dist; e.g. `.cache/dist-base dist` for an
 * A/B), each --workers count, alternating DISTs within a round, and the JSONL file once a
 * round per DIST and worker count, `build --sorter cpu --json` into a temporary index
 * (`--sorter auto`: the default options, whose GPU probe finds only a software adapter here).
 * Prints one line a build: wall time, the whole process's CPU time (the build's child process,
 * from /proc; the summary's `cpu` covers the parse and sort only), the summary's phases
 * (set-up, parse+sort, merge, finish, ms), the wall time before the parse began (the wall time
 * less those last three: Node's start, the CLI's modules, the walk, the GPU probe, the plan, and the exit) and
 * the 1-minute load average after it (wall times compare only on a quiet machine, CPU time less
 * badly on a busy one); then the median wall time, CPU time and time before the parse of each
 * (DIST, input, workers) and its postings.bin sha256 (all DISTs must agree).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function parseArgs(argv) {
  const o = { folders: 200, files: 1000, words: 60, rounds: 3, workers: [1, 2], sorter: 'cpu', html: false, root: join(REPO, '.cache', 'corpora'), dists: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => argv[++i];
    if (a === '--folders') o.folders = Number(v());
    else if (a === '--files') o.files = Number(v());
    else if (a === '--words') o.words = Number(v());
    else if (a === '--rounds') o.rounds = Number(v());
    else if (a === '--workers') o.workers = v().split(',').map(Number);
    else if (a === '--sorter') o.sorter = v();
    else if (a === '--html') o.html = true;
    else if (a === '--root') o.root = resolve(v());
    else if (a.startsWith('--')) throw new Error(`unknown option ${a}`);
    else o.dists.push(a);
  }
  if (o.dists.length === 0) o.dists.push('dist');
  if (!['cpu', 'auto'].includes(o.sorter)) throw new Error(`--sorter must be cpu or auto, got ${o.sorter}`);
  return o;
}

/** A seeded generator (mulberry32): the same crawl on every machine. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'po', 'se', 'di', 'fu', 'ga', 'hi', 'jo', 'be', 'zu', 'wa', 'yo', 'ce', 'vi', 'xo'];

function vocabulary(n, rnd) {
  const words = new Set();
  while (words.size < n) {
    const k = 1 + Math.floor(rnd() * 4);
    let w = '';
    for (let i = 0; i < k; i++) w += SYLLABLES[Math.floor(rnd() * SYLLABLES.length)];
    words.add(w);
  }
  return [...words];
}

function generate(o, dir) {
  if (existsSync(join(dir, 'DONE'))) return;
  rmSync(dir, { recursive: true, force: true });
  const tmp = `${dir}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(join(tmp, 'jsonl'), { recursive: true });
  const rnd = rng(1);
  const vocab = vocabulary(50_000, rnd);
  const word = () => vocab[Math.floor(vocab.length * rnd() ** 3)];
  const sentence = (n) => Array.from({ length: n }, word).join(' ');
  const lines = [];
  const ext = o.html ? 'html' : 'txt';
  for (let d = 0; d < o.folders; d++) {
    const folder = `d${String(d).padStart(3, '0')}`;
    mkdirSync(join(tmp, 'data', folder), { recursive: true });
    for (let f = 0; f < o.files; f++) {
      const rel = `${folder}/f${String(f).padStart(4, '0')}.${ext}`;
      const text = sentence(o.words);
      let bytes;
      if (o.html) {
        const title = sentence(4);
        const half = text.indexOf(' ', text.length >> 1);
        bytes = `<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>${title}</title>\n<script>var x = "${word()}";</script></head>\n<body><div class="c"><p>${text.slice(0, half)}</p>\n<p><a href="/${word()}.html">${text.slice(half + 1)}</a></p></div></body></html>\n`;
        lines.push(JSON.stringify({ id: rel, title, text: `${text.slice(0, half)} ${text.slice(half + 1)}` }));
      } else {
        bytes = text + '\n';
        lines.push(JSON.stringify({ id: rel, text }));
      }
      writeFileSync(join(tmp, 'data', rel), bytes);
    }
  }
  writeFileSync(join(tmp, 'jsonl', 'docs.jsonl'), lines.join('\n') + '\n');
  writeFileSync(join(tmp, 'DONE'), '');
  renameSync(tmp, dir);
}

/** CPU seconds of this process's waited-for children (cutime + cstime of /proc/self/stat); NaN off Linux. */
function childrenCpuSeconds() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 16 and 17 of stat(5), counted from the state (field 3); clock ticks of 1/100 s.
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return NaN;
  }
}

function build(dist, input, workers, work, sorter) {
  const out = join(work, 'index');
  rmSync(out, { recursive: true, force: true });
  const t0 = performance.now();
  const cpu0 = childrenCpuSeconds();
  const sorterArgs = sorter === 'auto' ? [] : ['--sorter', sorter];
  const r = spawnSync(process.execPath, [join(REPO, dist, 'src', 'cli.js'), 'build', input, '-o', out, ...sorterArgs, '--workers', String(workers), '--json', '-q'], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const wall = (performance.now() - t0) / 1000;
  const processCpu = childrenCpuSeconds() - cpu0;
  if (r.status !== 0) throw new Error(`${dist} build ${input} failed: ${r.stderr}`);
  const summary = JSON.parse(r.stdout);
  const sha = createHash('sha256').update(readFileSync(join(out, 'postings.bin'))).digest('hex').slice(0, 16);
  return { wall, processCpu, summary, sha };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

const o = parseArgs(process.argv.slice(2));
const dir = join(o.root, `small-files-${o.folders}x${o.files}-${o.words}w${o.html ? '-html' : ''}`);
process.stderr.write(`small-files: generating ${dir} (once)\n`);
generate(o, dir);
const work = mkdtempSync(join(tmpdir(), 'gpuindex-small-files-'));
const results = new Map();
const cpu = new Map();
const beforeParse = new Map();
const shas = new Map();
try {
  for (let round = 1; round <= o.rounds; round++) {
    for (const workers of o.workers) {
      for (const input of ['data', 'jsonl']) {
        // The DISTs' order flips every round: a machine getting busier or quieter favours none.
        for (const dist of round % 2 === 1 ? o.dists : [...o.dists].reverse()) {
          const r = build(dist, join(dir, input), workers, work, o.sorter);
          const key = `${dist}\t${input}\tw${workers}`;
          if (!results.has(key)) results.set(key, []);
          results.get(key).push(r.wall);
          if (!cpu.has(key)) cpu.set(key, []);
          cpu.get(key).push(r.processCpu);
          const t = r.summary.timings;
          const before = r.wall - (t.parseSortMs + t.mergeMs + t.finishMs) / 1000;
          if (!beforeParse.has(key)) beforeParse.set(key, []);
          beforeParse.get(key).push(before);
          const shaKey = `${input}`;
          if (!shas.has(shaKey)) shas.set(shaKey, new Set());
          shas.get(shaKey).add(r.sha);
          const s = r.summary;
          console.log(`round ${round} ${key}: ${r.wall.toFixed(2)} s wall, ${r.processCpu.toFixed(2)} s CPU (parse+sort ${(s.cpu.processMs / 1000).toFixed(2)}), phases ${[t.setupMs, t.parseSortMs, t.mergeMs, t.finishMs].map(Math.round).join('/')} ms, ${before.toFixed(2)} s before the parse, ${s.documents} docs, postings ${r.sha}, load ${loadavg()[0].toFixed(1)}`);
        }
      }
    }
  }
  console.log(`\nmedians (--sorter ${o.sorter}): wall s (each round), whole-process CPU s, s before the parse:`);
  for (const [key, walls] of results) console.log(`${key}\t${median(walls).toFixed(2)}\t(${walls.map((w) => w.toFixed(2)).join(' ')})\t${median(cpu.get(key)).toFixed(2)}\t${median(beforeParse.get(key)).toFixed(2)}`);
  for (const [input, set] of shas) console.log(`${input}: postings.bin ${set.size === 1 ? 'identical across builds' : `DIFFER: ${[...set].join(' ')}`}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
