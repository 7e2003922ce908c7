#!/usr/bin/env node
/**
 * Peers bench: the same corpus, the same machine, one run each of
 *   - gpuindex `build --sorter cpu` (dist/src/cli.js; default workers, and --workers 2),
 *   - SQLite FTS5 through better-sqlite3 (bench/fts5-index.mjs: one transaction, unicode61,
 *     contentless), fed the documents' text as gpuindex's own reader extracts it,
 *   - Xapian: `omindex` on HTML crawls; the Python bindings (bench/xapian-index.py, with and
 *     without positions) on JSONL, and on gpuindex's extracted text of HTML crawls,
 * each under /usr/bin/time -v (peak RSS, CPU time). On a WARC corpus (html-docs-warc) gpuindex
 * reads the .warc.gz, omindex (which cannot read WARC) the same pages as files, FTS5 and the
 * Xapian bindings gpuindex's extracted text. Then the retrieval sanity check
 * (bench/retrieval-sanity.mjs) on the whole corpus.
 *
 *   node bench/peers.mjs [--corpus html-docs|html-docs-small|html-docs-warc|html-docs-small-warc|mail|multilingual|synthetic-1GB|<folder>|all|<name>,<name>,...]
 *                        [--tools gpuindex,gpuindex-w2,fts5,xapian,xapian-nopos,xapian-text]
 *                        [--sanity-terms 200] [--out file.json] [--work dir] [--keep] [--dist dir]
 *   node bench/peers.mjs --render bench/results/peers-mail.json ...   (the tables of saved runs)
 *
 * Prints a markdown table on stdout (progress on stderr) and writes the JSON to --out (default
 * bench/results/peers-<corpus>.json). `--corpus all` (the five named corpora, fetched or
 * generated when missing) or a comma-separated list runs them one after the other, each with
 * its default tools unless --tools is given and its JSON at the default path, then prints the
 * targets (TARGETS) against the runs (a corpus that fails is reported and the others still run;
 * the exit code is 1 if any failed). --dist runs a copy of dist/ (so that a rebuild by someone
 * else during a long run does not change the code measured). Needs `npm run build` first, and for Xapian the Debian
 * packages xapian-omega and python3-xapian (used through /usr/bin/python3).
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { createReadStream } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CORPORA, checksum, fetchCorpus, listFiles } from '../scripts/corpus/fetch.mjs';
import { formatSanity, retrievalSanity } from './retrieval-sanity.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, '..');
let DIST = join(REPO, 'dist');
let CLI = join(DIST, 'src', 'cli.js');
const PY = '/usr/bin/python3';
const TIME = '/usr/bin/time';

const HOLDS = {
  gpuindex: {
    short: 'tf, no positions; Porter + stopwords',
    long: 'docIDs + term frequencies, no positions; Porter stemming, English stopwords removed; lexicon and document table (id, path, length) in SQLite; text not stored',
  },
  fts5: {
    short: 'positions; no stemming',
    long: "positions (detail=full) per column; unicode61 (case folded, diacritics removed), no stemming, no stopwords; contentless (content=''), text not stored; rowid -> id table",
  },
  omindex: {
    short: 'positions + wdf; Snowball STEM_SOME; stored fields',
    long: 'positions + wdf; English Snowball stemming, STEM_SOME (unstemmed terms and Z-prefixed stems), no stopwords; title, 512-byte sample, URL, size, mtime, MD5 stored as data/values, plus boolean terms (U, P, T, D/M/Y dates)',
  },
  'xapian-py': {
    short: 'positions + wdf; Snowball STEM_SOME',
    long: 'positions + wdf; English Snowball stemming, STEM_SOME (unstemmed terms and Z-prefixed stems), no stopwords; document data = id, Q-term per id',
  },
  'xapian-py-nopos': {
    short: 'wdf, no positions; Snowball STEM_SOME',
    long: 'wdf, no positions; English Snowball stemming, STEM_SOME (unstemmed terms and Z-prefixed stems), no stopwords; document data = id, Q-term per id',
  },
};

function log(m) {
  process.stderr.write(`peers: ${m}\n`);
}

function parseArgs(argv) {
  const o = { corpus: 'mail', tools: undefined, sanityTerms: 200, out: undefined, work: undefined, keep: false, dist: undefined, render: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--corpus') o.corpus = v();
    else if (a === '--tools') o.tools = v().split(',').map((s) => s.trim()).filter(Boolean);
    else if (a === '--sanity-terms') o.sanityTerms = Number(v());
    else if (a === '--out') o.out = v();
    else if (a === '--work') o.work = v();
    else if (a === '--keep') o.keep = true;
    else if (a === '--dist') o.dist = v();
    else if (a === '--render') {
      o.render = argv.slice(i + 1);
      break;
    }
    else if (a === '--help' || a === '-h') {
      process.stdout.write(readFileSync(fileURLToPath(import.meta.url), 'utf8').split('*/')[0].replace(/^#!.*\n\/\*\*\n/, '').replace(/^ \* ?/gm, '') + '\n');
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  return o;
}

/** Apparent size of a file or folder (sum of file sizes). */
function sizeOf(p) {
  if (!existsSync(p)) return 0;
  const st = statSync(p);
  if (!st.isDirectory()) return st.size;
  return listFiles(p).reduce((s, f) => s + statSync(join(p, f)).size, 0);
}

/** Busy CPU seconds of the whole machine so far (/proc/stat), to see what else ran meanwhile. */
function machineBusyS() {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, idle, iowait, irq, softirq, steal] = f;
    return (user + nice + system + irq + softirq + steal) / 100; // USER_HZ is 100 on Linux
  } catch {
    return NaN;
  }
}

/** Runs a command under GNU time -v; returns wall ms, peak RSS, CPU seconds, exit code, stdout. */
function timed(name, cmd, args, work, env = {}) {
  const timeFile = join(work, `${name}.time`);
  const outFile = join(work, `${name}.stdout`);
  const errFile = join(work, `${name}.stderr`);
  const out = openSync(outFile, 'w');
  const err = openSync(errFile, 'w');
  log(`${name}: ${[cmd, ...args].join(' ')}`);
  const busy0 = machineBusyS();
  const t0 = performance.now();
  const r = spawnSync(TIME, ['-v', '-o', timeFile, cmd, ...args], { stdio: ['ignore', out, err], env: { ...process.env, ...env } });
  const wallMs = performance.now() - t0;
  const busyS = machineBusyS() - busy0;
  closeSync(out);
  closeSync(err);
  if (r.error) throw r.error;
  const tv = existsSync(timeFile) ? readFileSync(timeFile, 'utf8') : '';
  const num = (re) => {
    const m = re.exec(tv);
    return m ? Number(m[1]) : NaN;
  };
  const stdout = readFileSync(outFile, 'utf8');
  const stderrTail = readFileSync(errFile, 'utf8').split('\n').slice(-5).join('\n');
  const res = {
    command: [cmd, ...args].join(' '),
    exitCode: r.status,
    wallMs: Math.round(wallMs),
    peakRssBytes: num(/Maximum resident set size \(kbytes\): (\d+)/) * 1024,
    userS: num(/User time \(seconds\): ([\d.]+)/),
    systemS: num(/System time \(seconds\): ([\d.]+)/),
    stdout,
    stderrTail,
  };
  // CPU seconds the rest of the machine used meanwhile (other processes): near 0 on a quiet machine.
  res.otherCpuS = Math.max(0, Math.round((busyS - res.userS - res.systemS) * 10) / 10);
  if (r.status !== 0) log(`${name} exited ${r.status}: ${stderrTail}`);
  else log(`${name}: ${(wallMs / 1000).toFixed(1)} s, peak RSS ${(res.peakRssBytes / 2 ** 20).toFixed(0)} MiB, other processes ${res.otherCpuS} CPU s`);
  return res;
}

function lastJsonLine(s) {
  const lines = s.trim().split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    try {
      return JSON.parse(lines.slice(i).join('\n'));
    } catch {
      /* keep looking */
    }
  }
  return undefined;
}

function versionOf(cmd, args) {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return r.status === 0 ? (r.stdout || r.stderr).trim().split('\n')[0] : undefined;
}

/** The crawl folder of a corpus name, fetching or generating it when needed. */
function resolveCorpus(name) {
  if (CORPORA[name]) {
    const { manifest, data } = fetchCorpus(name);
    // A WARC crawl: gpuindex reads the .warc.gz; omindex, which cannot, the same pages as files.
    if (CORPORA[name].kind === 'warc-of') return { name, kind: 'warc', data, manifest, files: manifest.from.data };
    const kind = CORPORA[name].kind === 'npm-mail' ? 'jsonl' : 'html';
    return { name, kind, data, manifest };
  }
  const syn = /^synthetic-(\d+(?:\.\d+)?[kmgt]i?b?)$/i.exec(name);
  if (syn) {
    const dir = join(REPO, '.cache', 'corpora', name);
    const data = join(dir, 'data');
    const manifestPath = join(dir, 'MANIFEST.json');
    if (!existsSync(manifestPath)) {
      rmSync(data, { recursive: true, force: true });
      log(`generating ${name} (seed 1)`);
      const r = spawnSync(process.execPath, [CLI, 'gen-corpus', '--size', syn[1], '--seed', '1', '-o', data, '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
      if (r.status !== 0) throw new Error(`gen-corpus failed (exit ${r.status})`);
      const gen = JSON.parse(r.stdout);
      const c = checksum(data);
      writeFileSync(manifestPath, JSON.stringify({ name, description: `gpuindex gen-corpus --size ${syn[1]} --seed 1`, data: 'data', ...c, generator: gen }, null, 2) + '\n');
    }
    return { name, kind: 'jsonl', data, manifest: JSON.parse(readFileSync(manifestPath, 'utf8')) };
  }
  const p = resolve(name);
  if (existsSync(p) && statSync(p).isDirectory()) {
    const files = listFiles(p);
    const kind = files.every((f) => /\.jsonl$/i.test(f)) ? 'jsonl' : 'html';
    return { name: p.split('/').at(-1), kind, data: p, manifest: { files: files.length, bytes: sizeOf(p) } };
  }
  throw new Error(`unknown corpus "${name}" (known: ${Object.keys(CORPORA).join(', ')}, synthetic-<size>, or a folder)`);
}

async function* extractedDocuments(path) {
  const rl = createInterface({ input: createReadStream(path, { highWaterMark: 1 << 20 }), crlfDelay: Infinity });
  for await (const line of rl) {
    if (!line) continue;
    const d = JSON.parse(line);
    yield { externalId: d.id, path: d.path, title: d.title, text: d.text };
  }
}

function fmt(n, digits = 1) {
  return Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '—';
}

export function markdownTable(report) {
  const mb = report.corpus.textBytes / 1e6;
  const lines = [
    `Corpus **${report.corpus.name}**: ${report.corpus.documents.toLocaleString('en-US')} documents, ${fmt(report.corpus.sourceBytes / 1e6)} MB of source, ${fmt(mb)} MB of text (title + text as gpuindex's reader extracts it); ${report.machine.cores} cores, ${report.machine.cpu}.`,
    '',
    '| tool | input | documents | wall s | docs/s | MB text/s | CPU s (user+sys) | other procs CPU s | index MB | peak RSS MiB | index holds |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of report.results) {
    if (r.error) {
      lines.push(`| ${r.tool} | ${r.input} | — | — | — | — | — | — | — | — | failed: ${r.error} |`);
      continue;
    }
    const s = r.wallMs / 1000;
    lines.push(
      `| ${r.tool} | ${r.input} | ${r.documents.toLocaleString('en-US')} | ${fmt(s, 2)} | ${fmt(r.documents / s, 0)} | ${fmt(mb / s)} | ${fmt(r.userS + r.systemS)} | ${fmt(r.otherCpuS)} | ${fmt(r.indexBytes / 1e6)} | ${fmt(r.peakRssBytes / 2 ** 20, 0)} | ${r.holds.short} |`,
    );
  }
  lines.push('', 'What each index holds:', '');
  const seen = new Set();
  for (const r of report.results) {
    if (!r.holds || seen.has(r.holds.long)) continue;
    seen.add(r.holds.long);
    lines.push(`- ${r.tool}: ${r.holds.long}`);
  }
  if (report.extraction) {
    const e = report.extraction;
    const given = report.corpus.kind !== 'jsonl' ? 'the text FTS5 and the Xapian Python bindings were given instead of the HTML, so this time is not in their rows' : 'used for the text MB and the sanity check; FTS5 and Xapian read the JSONL files themselves';
    lines.push('', `Text extraction alone (gpuindex's reader, \`bench/extract.mjs\`; ${given}): ${fmt(e.wallMs / 1000, 2)} s, peak RSS ${fmt(e.peakRssBytes / 2 ** 20, 0)} MiB.`);
  }
  if (report.sanity) lines.push('', `Retrieval sanity: ${report.sanity.line}`);
  return lines.join('\n');
}

/** What `--corpus all` runs, in this order (the quick ones first). */
export const ALL_CORPORA = ['mail', 'html-docs-small', 'multilingual', 'html-docs', 'synthetic-1GB'];

/**
 * The targets, checked against a run's results: the best gpuindex row (default workers or
 * --workers 2) against the peer named, by wall time.
 */
const TARGETS = { 'html-docs': { peer: 'Xapian omindex', ratio: 1.5 }, mail: { peer: 'SQLite FTS5', ratio: 1 }, 'synthetic-1GB': { peer: 'SQLite FTS5', ratio: 1 } };

/** One line per corpus run: gpuindex's best wall time against its target peer's. */
export function targetLines(reports) {
  const lines = [];
  for (const r of reports) {
    const target = TARGETS[r.corpus.name];
    const ok = r.results.filter((x) => !x.error);
    const best = ok.filter((x) => x.tool.startsWith('gpuindex')).sort((a, b) => a.wallMs - b.wallMs)[0];
    const peer = target && ok.find((x) => x.tool.startsWith(target.peer));
    if (!best) lines.push(`- ${r.corpus.name}: no gpuindex result`);
    else if (!target) lines.push(`- ${r.corpus.name}: gpuindex ${(best.wallMs / 1000).toFixed(2)} s (no target)`);
    else if (!peer) lines.push(`- ${r.corpus.name}: gpuindex ${(best.wallMs / 1000).toFixed(2)} s; ${target.peer} did not run`);
    else {
      const ratio = peer.wallMs / best.wallMs;
      lines.push(`- ${r.corpus.name}: gpuindex ${(best.wallMs / 1000).toFixed(2)} s, ${target.peer} ${(peer.wallMs / 1000).toFixed(2)} s: ${ratio.toFixed(2)}x (target ${target.ratio}x: ${ratio >= target.ratio ? 'met' : 'not met'})`);
    }
  }
  return lines;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.render) {
    for (const f of o.render) process.stdout.write(markdownTable(JSON.parse(readFileSync(f, 'utf8'))) + '\n\n');
    return;
  }
  if (o.dist) {
    DIST = resolve(o.dist);
    CLI = join(DIST, 'src', 'cli.js');
  }
  if (!existsSync(CLI)) throw new Error('dist/src/cli.js not found: run `npm run build` first');
  if (!existsSync(TIME)) throw new Error(`${TIME} not found: apt-get install time`);
  const names = o.corpus === 'all' ? ALL_CORPORA : o.corpus.split(',').map((n) => n.trim()).filter(Boolean);
  if (names.length === 1) {
    await runCorpus(o, names[0]);
    return;
  }
  if (o.out || o.work) throw new Error('--out and --work take one corpus (each of several goes to its default path)');
  const reports = [];
  let failed = 0;
  for (const name of names) {
    try {
      reports.push(await runCorpus(o, name));
    } catch (err) {
      failed++;
      log(`${name}: failed: ${err?.message ?? err}`);
      process.stdout.write(`Corpus **${name}**: failed: ${err?.message ?? err}\n\n`);
    }
  }
  process.stdout.write(['Targets (this machine, these runs):', ...targetLines(reports)].join('\n') + '\n');
  if (failed) process.exitCode = 1;
}

/** The peers bench on one corpus: the tools, the sanity check, the JSON; returns the report. */
async function runCorpus(o, name) {
  const corpus = resolveCorpus(name);
  const work = resolve(o.work ?? join(REPO, '.cache', 'bench', 'peers', corpus.name));
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const haveOmindex = !!versionOf('omindex', ['--version']);
  const havePyXapian = spawnSync(PY, ['-c', 'import xapian'], { stdio: 'ignore' }).status === 0;
  const tools = o.tools ?? (corpus.kind !== 'jsonl' ? ['gpuindex', 'gpuindex-w2', 'fts5', 'xapian', 'xapian-text'] : ['gpuindex', 'gpuindex-w2', 'fts5', 'xapian', 'xapian-nopos']);
  const sourceFiles = listFiles(corpus.data).map((f) => join(corpus.data, f));

  // 0. gpuindex's reader output: the text every tool is measured against.
  const extractedPath = join(work, 'extracted.jsonl');
  const ex = timed('extract', process.execPath, [join(HERE, 'extract.mjs'), corpus.data, extractedPath], work, { GPUINDEX_DIST: DIST });
  if (ex.exitCode !== 0) throw new Error(`extraction failed: ${ex.stderrTail}`);
  const exStats = JSON.parse(ex.stdout.trim());
  const jsonlInput = corpus.kind === 'jsonl' ? sourceFiles : [extractedPath];
  const jsonlInputName = corpus.kind === 'jsonl' ? 'the JSONL files' : "gpuindex's extracted text (JSONL)";
  const INPUT_OF = { jsonl: 'the JSONL files', html: 'the HTML files', warc: 'the .warc.gz' };

  const results = [];
  const add = (tool, input, holds, run, outPath, documentsOf) => {
    if (run.exitCode !== 0) {
      results.push({ tool, input, holds, command: run.command, error: `exit ${run.exitCode}: ${run.stderrTail.split('\n').filter(Boolean).at(-1) ?? ''}` });
      return;
    }
    results.push({ tool, input, holds, command: run.command, documents: documentsOf(run), wallMs: run.wallMs, userS: run.userS, systemS: run.systemS, otherCpuS: run.otherCpuS, peakRssBytes: run.peakRssBytes, indexBytes: sizeOf(outPath) });
  };

  let gpuSummary;
  for (const tool of tools) {
    if (tool === 'gpuindex' || tool === 'gpuindex-w2') {
      const out = join(work, tool);
      const extra = tool === 'gpuindex-w2' ? ['--workers', '2'] : [];
      const r = timed(tool, process.execPath, [CLI, 'build', corpus.data, '-o', out, '--sorter', 'cpu', '--json', '-q', '--force', ...extra], work);
      const summary = r.exitCode === 0 ? JSON.parse(r.stdout) : undefined;
      if (tool === 'gpuindex' || !gpuSummary) gpuSummary = summary && { ...summary, skipped: summary.skipped.count, warnings: summary.warnings.count, index: out };
      add(`gpuindex build --sorter cpu${extra.length ? ' --workers 2' : ` (workers ${summary?.workers ?? '?'})`}`, INPUT_OF[corpus.kind], HOLDS.gpuindex, r, out, () => summary.documents);
    } else if (tool === 'fts5') {
      const db = join(work, 'fts5.sqlite');
      const r = timed(tool, process.execPath, [join(HERE, 'fts5-index.mjs'), '--db', db, ...jsonlInput], work);
      add('SQLite FTS5 (better-sqlite3)', jsonlInputName, HOLDS.fts5, r, db, (x) => lastJsonLine(x.stdout).documents);
    } else if (tool === 'xapian' && corpus.kind !== 'jsonl') {
      if (!haveOmindex) {
        results.push({ tool: 'Xapian omindex', input: 'the HTML files', error: 'omindex not installed (apt-get install xapian-omega)' });
        continue;
      }
      const db = join(work, 'omindex');
      const r = timed(tool, 'omindex', ['--db', db, '--url', '/', '--overwrite', '-p', '--empty-docs=index', '-Mhtml:text/html', '-Mhtm:text/html', corpus.files ?? corpus.data], work);
      add('Xapian omindex', corpus.kind === 'warc' ? 'the same pages as HTML files' : 'the HTML files', HOLDS.omindex, r, db, () => Number(spawnSync(PY, ['-c', `import xapian,sys; print(xapian.Database(sys.argv[1]).get_doccount())`, db], { encoding: 'utf8' }).stdout.trim()));
    } else if (tool === 'xapian' || tool === 'xapian-text' || tool === 'xapian-nopos') {
      if (!havePyXapian) {
        results.push({ tool: `Xapian (python3-xapian)`, input: jsonlInputName, error: 'python3-xapian not installed' });
        continue;
      }
      const db = join(work, tool);
      const nopos = tool === 'xapian-nopos';
      const r = timed(tool, PY, [join(HERE, 'xapian-index.py'), '--db', db, ...(nopos ? ['--no-positions'] : []), ...jsonlInput], work);
      add(`Xapian ${xapianVersion()} Python bindings${nopos ? ', no positions' : ''}`, jsonlInputName, nopos ? HOLDS['xapian-py-nopos'] : HOLDS['xapian-py'], r, db, (x) => lastJsonLine(x.stdout).documents);
    } else throw new Error(`unknown tool ${tool}`);
  }

  // Retrieval sanity on the whole corpus, against the first gpuindex index.
  let sanity;
  if (o.sanityTerms > 0 && gpuSummary) {
    log(`retrieval sanity: ${o.sanityTerms} terms`);
    const { openIndex } = await import(pathToFileURL(join(DIST, 'src', 'reader.js')).href);
    const reader = openIndex(gpuSummary.index);
    try {
      const dbPath = join(work, 'sanity.sqlite');
      const r = await retrievalSanity({ reader, documents: extractedDocuments(extractedPath), terms: o.sanityTerms, seed: 1, dbPath });
      rmSync(dbPath, { force: true });
      sanity = { ...r, mismatches: r.mismatches.slice(0, 20), line: formatSanity(r) };
      log(`sanity: ${sanity.line} (${r.loadMs} ms load, ${r.queryMs} ms queries)`);
    } finally {
      reader.close();
    }
  }

  const report = {
    date: new Date().toISOString(),
    machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version },
    versions: {
      gpuindex: JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).version,
      git: gitState(),
      sqlite: lastJsonLine(readFileIf(join(work, 'fts5.stdout')))?.sqlite,
      omindex: versionOf('omindex', ['--version']),
      xapian: xapianVersion(),
    },
    corpus: {
      name: corpus.name,
      kind: corpus.kind,
      path: corpus.data,
      files: corpus.manifest.files,
      sha256: corpus.manifest.sha256,
      documents: exStats.documents,
      skipped: exStats.skipped,
      sourceBytes: corpus.manifest.bytes,
      textBytes: exStats.textBytes,
    },
    extraction: { wallMs: ex.wallMs, peakRssBytes: ex.peakRssBytes, userS: ex.userS, systemS: ex.systemS, otherCpuS: ex.otherCpuS },
    gpuindex: gpuSummary && { timings: gpuSummary.timings, terms: gpuSummary.terms, postings: gpuSummary.postings, skipped: gpuSummary.skipped, workers: gpuSummary.workers },
    results,
    sanity,
  };
  const outFile = resolve(o.out ?? join(HERE, 'results', `peers-${corpus.name}.json`));
  mkdirSync(dirname(outFile), { recursive: true });
  writeFileSync(outFile, JSON.stringify(report, null, 2) + '\n');
  process.stdout.write(markdownTable(report) + '\n');
  log(`JSON: ${outFile}`);
  if (!o.keep) for (const f of readdirSync(work)) if (!/\.(time|stdout|stderr)$/.test(f)) rmSync(join(work, f), { recursive: true, force: true });
  return report;
}

let xv;
function xapianVersion() {
  if (xv === undefined) xv = spawnSync(PY, ['-c', 'import xapian; print(xapian.version_string())'], { encoding: 'utf8' }).stdout?.trim() || '';
  return xv;
}

/** The checkout's commit, and whether dist/ may hold uncommitted source changes. */
function gitState() {
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).stdout?.trim();
  const dirty = spawnSync('git', ['status', '--porcelain', '--', 'src', 'indexer', 'merge', 'gpu'], { cwd: REPO, encoding: 'utf8' }).stdout?.trim();
  return head ? `${head}${dirty ? ' + uncommitted changes' : ''}` : undefined;
}

function readFileIf(p) {
  return existsSync(p) ? readFileSync(p, 'utf8') : '';
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    process.stderr.write(`peers: ${err?.message ?? err}\n`);
    if (process.env.GPUINDEX_DEBUG) process.stderr.write(`${err?.stack}\n`);
    process.exit(1);
  });
}
