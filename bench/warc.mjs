#!/usr/bin/env node
/**
 * WARC input bench: a crawl as one .warc.gz against the same pages as files.
 *
 *   node bench/warc.mjs [--corpus html-docs-small-warc|html-docs-warc] [--runs 3] [--workers N]
 *                       [--pipelines default,cpu] [--json out.json]
 *
 * 1. Reading, in this process, one core: node:zlib's gunzipSync of the whole file (the floor),
 *    the record layer alone (gzip members inflated with
 *    node:zlib, records split by Content-Length), then the whole reader (HTTP parsed, charset
 *    decided, HTML to text): MB/s of uncompressed WARC and of gzipped file.
 * 2. Whole builds with the CLI (dist/src/cli.js, an index written each time), the .warc.gz and
 *    the folder of pages alternated run by run, for each pipeline asked (`default`: what a user
 *    gets, Indexgpu+ where a GPU is; `cpu`: --pipeline cpu, Indexcpu): median wall seconds, MB/s
 *    of uncompressed WARC for the WARC build and of HTML for the files, and the process CPU
 *    seconds of the parse+sort phase (the summary's cpu.processMs: what to compare on a machine
 *    that other work shares).
 *
 * The corpus is fetched or written first (scripts/corpus/fetch.mjs). Needs `npm run build`.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fetchCorpus } from '../scripts/corpus/fetch.mjs';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(REPO, 'dist', 'src', 'cli.js');

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const corpusName = opt('--corpus', 'html-docs-small-warc');
const runs = Number(opt('--runs', '3'));
const workers = opt('--workers', undefined);
const pipelines = opt('--pipelines', 'default').split(',');
const jsonOut = opt('--json', undefined);
const log = (m) => process.stderr.write(`warc-bench: ${m}\n`);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const { manifest, data } = fetchCorpus(corpusName);
if (!manifest.from) throw new Error(`${corpusName} is not a WARC corpus (html-docs-warc, html-docs-small-warc)`);
const warcFile = join(data, `${manifest.from.name}.warc.gz`);
const pages = manifest.from.data;
const warcBytes = manifest.warc.rawBytes;
const gzBytes = statSync(warcFile).size;
const htmlBytes = manifest.from.bytes;
log(`${corpusName}: ${manifest.warc.pages} pages, ${(warcBytes / 1e6).toFixed(1)} MB of WARC (${(gzBytes / 1e6).toFixed(1)} MB gzipped); pages as files ${(htmlBytes / 1e6).toFixed(1)} MB`);

// 1. Reading.
const dist = pathToFileURL(join(REPO, 'dist') + '/');
const { readWarcRecords } = await import(new URL('indexer/corpus/warc.js', dist).href);
const { readCorpusFile } = await import(new URL('indexer/corpus/index.js', dist).href);
const reading = { gunzip: [], records: [], reader: [] };
for (let r = 0; r < runs; r++) {
  // The floor: node:zlib inflating the whole file in one call (every member, no records).
  let t0 = performance.now();
  gunzipSync(readFileSync(warcFile));
  reading.gunzip.push(performance.now() - t0);
  let records = 0;
  t0 = performance.now();
  for await (const _ of readWarcRecords(warcFile, 'x.warc.gz', true, gzBytes, () => {
    records++;
    return undefined;
  }));
  reading.records.push(performance.now() - t0);
  t0 = performance.now();
  let docs = 0;
  for await (const item of readCorpusFile(data, `${manifest.from.name}.warc.gz`)) if (item.kind === 'doc') docs++;
  reading.reader.push(performance.now() - t0);
  log(`read ${r + 1}/${runs}: records ${records} in ${reading.records.at(-1).toFixed(0)} ms; reader ${docs} documents in ${reading.reader.at(-1).toFixed(0)} ms`);
}

// 2. Builds, alternated.
const work = join(REPO, '.cache', 'bench', 'warc');
mkdirSync(work, { recursive: true });
const builds = {};
for (const p of pipelines) for (const input of ['warc', 'files']) builds[`${p} ${input}`] = [];
for (let r = 0; r < runs; r++) {
  for (const p of pipelines) {
    for (const input of r % 2 === 0 ? ['warc', 'files'] : ['files', 'warc']) {
      const out = join(work, `idx-${input}`);
      const argv = [CLI, 'build', input === 'warc' ? data : pages, '-o', out, '--force', '--json', '-q', ...(p === 'cpu' ? ['--pipeline', 'cpu'] : []), ...(workers ? ['--workers', workers] : [])];
      const t0 = performance.now();
      const res = spawnSync(process.execPath, argv, { encoding: 'utf8', maxBuffer: 64 << 20 });
      const ms = performance.now() - t0;
      if (res.status !== 0) throw new Error(`build failed: ${argv.join(' ')}\n${res.stderr}`);
      const s = JSON.parse(res.stdout);
      builds[`${p} ${input}`].push({ ms, cpuMs: s.cpu?.processMs, documents: s.documents, pipeline: s.pipeline, workers: s.workers });
      log(`build ${r + 1}/${runs} ${p} ${input}: ${(ms / 1000).toFixed(2)} s, ${s.documents} documents, pipeline ${s.pipeline}, ${s.workers} worker(s)`);
    }
  }
}
rmSync(work, { recursive: true, force: true });

const mbs = (bytes, ms) => (bytes / 1e6 / (ms / 1000)).toFixed(0);
const lines = [
  `${corpusName} on ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), node ${process.version}, medians of ${runs}:`,
  `- node:zlib gunzipSync of the whole file (the floor): ${median(reading.gunzip).toFixed(0)} ms, ${mbs(warcBytes, median(reading.gunzip))} MB/s of WARC`,
  `- records (inflate + split by Content-Length): ${median(reading.records).toFixed(0)} ms, ${mbs(warcBytes, median(reading.records))} MB/s of WARC (${mbs(gzBytes, median(reading.records))} MB/s gzipped)`,
  `- reader (records + HTTP + charset + HTML to text): ${median(reading.reader).toFixed(0)} ms, ${mbs(warcBytes, median(reading.reader))} MB/s of WARC`,
];
for (const p of pipelines) {
  const w = builds[`${p} warc`];
  const f = builds[`${p} files`];
  const wm = median(w.map((x) => x.ms));
  const fm = median(f.map((x) => x.ms));
  const cpu = (xs) => (median(xs.map((x) => x.cpuMs)) / 1000).toFixed(2);
  lines.push(
    `- build (${p === 'cpu' ? '--pipeline cpu' : 'default options'}: pipeline ${w[0].pipeline}, ${w[0].workers} worker(s)): .warc.gz ${(wm / 1000).toFixed(2)} s, ${mbs(warcBytes, wm)} MB/s of WARC, ` +
      `parse+sort CPU ${cpu(w)} s; the pages as files ${(fm / 1000).toFixed(2)} s, ${mbs(htmlBytes, fm)} MB/s of HTML, parse+sort CPU ${cpu(f)} s`,
  );
}
process.stdout.write(lines.join('\n') + '\n');
if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ corpus: corpusName, warcBytes, gzBytes, htmlBytes, runs, reading, builds, machine: { cores: cpus().length, cpu: cpus()[0]?.model } }, null, 2) + '\n');
