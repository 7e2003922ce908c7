#!/usr/bin/env node
/**
 * Times only the merge stage (run files -> postings part + impacts), A/B alternated between two
 * builds of the package, on one set of runs drawn once and kept (each dist writes them as run
 * files in its own format, once).
 *
 * The runs are synthetic but shaped like a worker-lexicons build's: `--workers` parse workers
 * take batches of `--batch` documents in turn (so their documents interleave in crawl order),
 * each keeps its own document numbers (mapped to docIDs by the run lexicon, as run-lexicons.ts
 * does) and seals a run every `--block-pairs` pairs; tokens follow a Zipf law over `--terms`
 * terms. Each round merges the same runs with every dist, in alternating order, and checks that
 * the postings bytes and impacts arrays are identical across dists.
 *
 *   node bench/merge-only.mjs --dists dist-base,dist --threads 1 --rounds 5
 *   node bench/merge-only.mjs --dists dist-base,dist --threads 1,2 --pairs 30000000
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof bench/merge-only.mjs --dists dist --rounds 1   # a profile of one merge thread
 *
 * --threads 1 runs mergeRange in this thread (one merge thread's cost per posting); above 1,
 * mergeInParallel with that many merge threads (what a build does).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => {
    if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1] && !all[i + 1].startsWith('--') ? all[i + 1] : 'true']);
    return acc;
  }, []),
);
const num = (k, d) => (args[k] === undefined ? d : Number(args[k]));
const opts = {
  workers: num('workers', 5),
  batch: num('batch', 64),
  terms: num('terms', 25000),
  pairs: num('pairs', 30_000_000),
  blockPairs: num('block-pairs', 2_000_000),
  docLength: num('doc-length', 400),
  chunkPairs: num('chunk-pairs', 1 << 16),
  seed: num('seed', 1),
};
const dists = (args.dists ?? 'dist-base,dist').split(',');
const threadList = (args.threads ?? '1').split(',').map(Number);
const rounds = num('rounds', 5);
const runDir = args['run-dir'] ?? join(tmpdir(), `merge-only-pairs-${opts.workers}w-${opts.batch}b-${opts.terms}t-${opts.pairs}p-${opts.blockPairs}bp-${opts.seed}s`);

/** xorshift32: the same runs for the same options. */
function rng(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
}

/**
 * Draws the runs' sorted pairs (if not already there) and returns their lexicons and document
 * lengths; each dist writes them as run files in its own format (runPathsFor).
 */
async function prepareRuns() {
  const meta = join(runDir, 'meta.json');
  if (existsSync(meta)) return loadRuns(JSON.parse(readFileSync(meta, 'utf8')));
  rmSync(runDir, { recursive: true, force: true });
  mkdirSync(runDir, { recursive: true });
  const random = rng(opts.seed);
  // Zipf(1) over the terms: a cumulative table searched by bisection.
  const cdf = new Float64Array(opts.terms);
  let s = 0;
  for (let t = 0; t < opts.terms; t++) cdf[t] = s += 1 / (t + 1);
  for (let t = 0; t < opts.terms; t++) cdf[t] /= s;
  const draw = () => {
    const u = random();
    let lo = 0;
    let hi = opts.terms - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const W = opts.workers;
  const workerDocs = Array.from({ length: W }, () => []); // each worker's docIDs, by its document number
  const pending = Array.from({ length: W }, () => ({ keys: [], docs: [] }));
  const runs = [];
  const lengths = [];
  const seal = (w) => {
    const p = pending[w];
    const n = p.keys.length;
    if (n === 0) return;
    // Counting sort by key, stable: document numbers stay ascending within a key.
    const counts = new Uint32Array(opts.terms + 1);
    for (const k of p.keys) counts[k + 1]++;
    for (let t = 0; t < opts.terms; t++) counts[t + 1] += counts[t];
    const sorted = new Uint32Array(2 * n);
    for (let i = 0; i < n; i++) {
      const at = counts[p.keys[i]]++;
      sorted[2 * at] = p.keys[i];
      sorted[2 * at + 1] = p.docs[i];
    }
    const name = `run-w${w}-${String(runs.length).padStart(5, '0')}`;
    writeFileSync(join(runDir, `${name}.pairs`), sorted);
    runs.push({ name, owner: w, count: n });
    pending[w] = { keys: [], docs: [] };
  };
  let pairs = 0;
  let doc = 0;
  while (pairs < opts.pairs) {
    const w = Math.floor(doc / opts.batch) % W;
    const number = workerDocs[w].length;
    workerDocs[w].push(doc);
    const length = 1 + Math.floor(random() * 2 * opts.docLength);
    lengths.push(length);
    const p = pending[w];
    for (let i = 0; i < length; i++) {
      p.keys.push(draw());
      p.docs.push(number);
    }
    pairs += length;
    doc++;
    if (p.keys.length >= opts.blockPairs) seal(w);
  }
  for (let w = 0; w < W; w++) seal(w);
  const m = { runs, workerDocs, lengths, pairs, documents: doc };
  writeFileSync(meta, JSON.stringify(m));
  return loadRuns(m);
}

function loadRuns(m) {
  const order = Uint32Array.from({ length: opts.terms }, (_, i) => i);
  return {
    runs: m.runs,
    lexicons: { lexicons: m.workerDocs.map((d) => ({ order, docIds: Uint32Array.from(d) })), owners: m.runs.map((r) => r.owner) },
    lengths: Uint32Array.from(m.lengths),
    pairs: m.pairs,
    documents: m.documents,
  };
}

const runPathsOf = new Map();
/** The runs as `dist` writes run files, written once per dist and kept in the run folder. */
async function runPathsFor(dist, runs) {
  if (runPathsOf.has(dist)) return runPathsOf.get(dist);
  const dir = join(runDir, `runs-${resolve(dist).replace(/[^A-Za-z0-9]+/g, '_')}`);
  const paths = runs.runs.map((r) => join(dir, `${r.name}.bin`));
  if (!existsSync(join(dir, 'done'))) {
    const { writeRunFile } = await import(pathToFileURL(resolve(dist, 'merge/runs.js')).href);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    runs.runs.forEach((r, i) => {
      const b = readFileSync(join(runDir, `${r.name}.pairs`));
      writeRunFile(paths[i], new Uint32Array(b.buffer, b.byteOffset, b.length / 4), r.count, opts.terms);
    });
    writeFileSync(join(dir, 'done'), '');
  }
  const bytes = paths.reduce((a, p) => a + statSync(p).size, 0);
  console.log(`${dist}: ${paths.length} run files, ${(bytes / 2 ** 20).toFixed(1)} MiB (${(bytes / runs.pairs).toFixed(2)} bytes a pair)`);
  runPathsOf.set(dist, paths);
  return paths;
}

const modules = new Map();
async function modulesOf(dist) {
  if (!modules.has(dist)) {
    const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
    modules.set(dist, {
      range: await load('merge/range-merge.js'),
      parallel: await load('merge/parallel-merge.js'),
      file: await load('merge/postings-file.js'),
      ranges: await load('merge/term-ranges.js'),
      lexicons: await load('merge/run-lexicons.js'),
    });
  }
  return modules.get(dist);
}

/** The impacts parts' bytes, in range order (impacts.bin format 2: parts join as bytes). */
const impactsDigest = (paths) => {
  const h = createHash('sha256');
  for (const p of paths) h.update(readFileSync(p));
  return h.digest('hex').slice(0, 16);
};

/** One merge of every run with `dist`; returns milliseconds and digests of what it wrote. */
async function mergeOnce(dist, threads, runs, scratch) {
  const m = await modulesOf(dist);
  const runPaths = await runPathsFor(dist, runs);
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  const lexicons = m.lexicons.sharedLexicons(runs.lexicons);
  if (threads === 1) {
    const keys = m.ranges.runKeysAt(runPaths, [0], lexicons);
    const partPath = join(scratch, 'part');
    const impactsPartPath = join(scratch, 'impacts.part');
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const r = m.range.mergeRange({ runPaths, chunkPairs: opts.chunkPairs, startTerm: 0, keys, lexicons, lengths: runs.lengths, partPath, impactsPartPath, figuresPartPath: join(scratch, 'figures.part') });
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(c0);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    const postings = createHash('sha256').update(readFileSync(partPath)).digest('hex').slice(0, 16);
    return { ms, cpuMs, postings, impacts: impactsDigest([r.impactsPart]), terms: r.counters.terms, segmentPops: r.counters.segmentPops };
  }
  const postingsPath = join(scratch, 'postings.bin');
  const writer = new m.file.PostingsFileWriter(postingsPath);
  let impacts;
  const t0 = performance.now();
  const c = await m.parallel.mergeInParallel({
    runPaths,
    lexicons: runs.lexicons,
    lengths: runs.lengths,
    onImpacts: (i) => (impacts = i),
    threads,
    chunkPairs: opts.chunkPairs,
    partDir: scratch,
    postings: writer,
    onList: () => {},
  });
  const ms = performance.now() - t0;
  writer.close();
  const postings = createHash('sha256').update(readFileSync(postingsPath)).digest('hex').slice(0, 16);
  return { ms, postings, impacts: impactsDigest(impacts), terms: c.terms, segmentPops: c.segmentPops, threadsMs: c.threadsMs };
}

const runs = await prepareRuns();
for (const dist of dists) await runPathsFor(dist, runs);
console.log(`runs: ${runs.runs.length} in ${runDir}; ${runs.pairs} pairs, ${runs.documents} documents, ${opts.workers} workers x ${opts.batch}-document batches, ${opts.terms} terms; chunk ${opts.chunkPairs} pairs`);
const scratch = join(tmpdir(), `merge-only-out-${process.pid}`);
const times = new Map();
/** The process's CPU time over an in-process merge (threads=1: the merge and V8's own threads): steadier than wall time on a loaded machine. */
const cpuTimes = new Map();
const digests = new Map();
try {
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? dists : [...dists].reverse();
    for (const threads of threadList) {
      for (const dist of order) {
        const r = await mergeOnce(dist, threads, runs, scratch);
        const key = `${dist} threads=${threads}`;
        if (!times.has(key)) times.set(key, []);
        times.get(key).push(r.ms);
        if (r.cpuMs !== undefined) {
          if (!cpuTimes.has(key)) cpuTimes.set(key, []);
          cpuTimes.get(key).push(r.cpuMs);
        }
        const digest = `${r.postings}/${r.impacts}/${r.terms}`;
        const prev = digests.get(threads);
        if (prev && prev.digest !== digest) throw new Error(`output differs: ${prev.dist} gave ${prev.digest}, ${dist} gave ${digest} (threads=${threads})`);
        digests.set(threads, { dist, digest });
        console.log(`round ${round} ${key.padEnd(28)} ${r.ms.toFixed(0).padStart(6)} ms  ${((r.ms * 1e6) / runs.pairs).toFixed(1)} ns/pair${r.cpuMs === undefined ? '' : `  cpu ${r.cpuMs.toFixed(0)} ms`}  pops ${r.segmentPops}  load ${loadavg()[0].toFixed(2)}  out ${digest}`);
      }
    }
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
console.log('\nmedian (min) over rounds:');
for (const [key, ms] of times) {
  const s = [...ms].sort((a, b) => a - b);
  console.log(`  ${key.padEnd(28)} ${s[s.length >> 1].toFixed(0).padStart(6)} ms (${s[0].toFixed(0)})  ${((s[s.length >> 1] * 1e6) / runs.pairs).toFixed(1)} ns/pair`);
}
for (const [key, ms] of cpuTimes) {
  const s = [...ms].sort((a, b) => a - b);
  console.log(`  ${key.padEnd(28)} cpu ${s[s.length >> 1].toFixed(0).padStart(6)} ms (${s[0].toFixed(0)})  ${((s[s.length >> 1] * 1e6) / runs.pairs).toFixed(1)} ns/pair`);
}
console.log(`load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
