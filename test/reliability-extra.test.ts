/**
 * Reliability under hostile conditions (issue "Reliability", points 1, 3 and 4): crawl files
 * that vanish or change while the build runs, single documents and lines of hundreds of MB,
 * a full disk, and a GPU adapter that refuses the limits the build asks for.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The published entry point, as a consumer imports it (package self-reference to dist/).
import { buildIndex, openIndex, type ProgressEvent } from 'gpuindex';
import { hasGpu } from './helpers/gpu-available.js';

const cli = new URL('../dist/src/cli.js', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'gpuindex-reliability-'));
const mounts: string[] = [];
afterAll(() => {
  for (const m of mounts) spawnSync('umount', [m]);
  // A file made unreadable must not stop the cleanup of a non-root run.
  spawnSync('chmod', ['-R', 'u+rwX', work]);
  rmSync(work, { recursive: true, force: true });
});

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The child's peak resident set in bytes (GNU time's %M), when measured. */
  peakRss?: number;
}

const GNU_TIME = '/usr/bin/time';

/** Runs the CLI; with `measure`, under GNU time for the child's peak RSS. */
function gpuindex(args: string[], o: { env?: Record<string, string>; measure?: boolean } = {}): CliResult {
  const env = { ...process.env, GPUINDEX_DEBUG: '', GPUINDEX_TEST_GPU: '', ...o.env };
  const rssFile = join(work, `rss-${process.hrtime.bigint()}`);
  const timed = o.measure && existsSync(GNU_TIME);
  const [cmd, argv] = timed ? [GNU_TIME, ['-f', '%M', '-o', rssFile, process.execPath, cli, ...args]] : [process.execPath, [cli, ...args]];
  const r = spawnSync(cmd, argv, { encoding: 'utf8', env, maxBuffer: 64 << 20 });
  const result: CliResult = { code: r.status, stdout: r.stdout, stderr: r.stderr };
  if (timed && existsSync(rssFile)) result.peakRss = Number(readFileSync(rssFile, 'utf8').trim().split('\n').pop()) * 1024;
  return result;
}

/** The child's peak RSS: GNU time's figure, else the summary's (process.resourceUsage().maxRSS in the child). */
const peakRssOf = (r: CliResult): number => r.peakRss ?? JSON.parse(r.stdout).peakRssBytes;

const MiB = 2 ** 20;
/** 64 bytes, six indexable words (none a stopword, each its own stem); 1 MiB holds 16384 of them. */
const UNIT = 'whalebone harpooner leviathan mariners nantucket quarterdeck    ';
const UNITS_PER_MIB = MiB / UNIT.length;
const WORDS_PER_UNIT = 6;

/** Writes head + `mib` MiB of repeated words + tail with a reused 1 MiB buffer (fast, little memory). */
function writeRepeated(path: string, head: string, mib: number, tail: string): void {
  const buf = Buffer.alloc(MiB, UNIT, 'latin1');
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, head);
    for (let i = 0; i < mib; i++) writeSync(fd, buf);
    writeSync(fd, tail);
  } finally {
    closeSync(fd);
  }
}

/** Lines gpuindex printed; the rest of stderr may only be Dawn's own native warnings (lavapipe). */
function gpuindexLines(stderr: string): string[] {
  const lines = stderr.split('\n').filter(Boolean);
  const others = lines.filter((l) => !l.startsWith('gpuindex: '));
  expect(others.every((l) => /^Warning: /.test(l)), `unexpected stderr lines: ${others.join(' | ')}`).toBe(true);
  return lines.filter((l) => l.startsWith('gpuindex: '));
}

// ---------------------------------------------------------------------------------------------

describe('crawl files that change while the build runs', () => {
  it('a file deleted, one made unreadable, one turned into a dangling link and a folder removed mid-build are skipped with a reason; every other document is indexed', async () => {
    const crawl = join(work, 'changing');
    mkdirSync(join(crawl, 'sub'), { recursive: true });
    // The workers read ahead of the main thread; under a loaded full suite on 2 cores the first
    // progress event once came after ~72 files had been taken (files 80 and 90 were read before the
    // mutation), so the mutated files sit far beyond that.
    const FILES = 420;
    const DOCS = 3;
    const name = (i: number) => `f-${String(i).padStart(3, '0')}.jsonl`;
    const idsOf = (i: number) => Array.from({ length: DOCS }, (_, d) => `f${i}d${d}`);
    for (let i = 0; i < FILES; i++) {
      writeFileSync(join(crawl, name(i)), idsOf(i).map((id) => JSON.stringify({ id, text: `zzmarker document ${id} of file ${i}` })).join('\n') + '\n');
    }
    // 'sub' sorts after every f-*.jsonl: its files are read last.
    for (let i = 0; i < 3; i++) writeFileSync(join(crawl, 'sub', `s-${i}.jsonl`), JSON.stringify({ id: `s${i}`, text: 'zzmarker in the folder' }) + '\n');

    const root = process.getuid?.() === 0;
    const deleted = 380;
    const unreadable = 390;
    const dangling = 400;
    let mutatedAt: number | undefined;
    const mutate = () => {
      unlinkSync(join(crawl, name(deleted)));
      if (root) {
        // chmod does not stop root: a folder where the file was is what its reader meets instead.
        unlinkSync(join(crawl, name(unreadable)));
        mkdirSync(join(crawl, name(unreadable)));
      } else chmodSync(join(crawl, name(unreadable)), 0o000);
      unlinkSync(join(crawl, name(dangling)));
      symlinkSync(join(crawl, 'no-such-target.jsonl'), join(crawl, name(dangling)));
      rmSync(join(crawl, 'sub'), { recursive: true });
    };
    const warnings: string[] = [];
    // Small files sharing a batch are read dozens at a time, so a loaded machine could read the
    // mutated files before the first progress event: one batch a file keeps them ahead of it (the
    // index is the same either way; the shared batches' own bad-file tests are in small-files-batches).
    process.env.GPUINDEX_SMALL_FILES_TOGETHER = '0';
    // And one batch in flight a worker: the workers stay a file or two ahead of the batches the
    // main thread takes, so none reads the files mutated at the first progress event before it
    // (with 8 credits a fast machine once had every file read by then, and no skip to see).
    process.env.GPUINDEX_CREDITS = '1';
    const summary = await buildIndex({
      input: crawl,
      output: join(work, 'changing-idx'),
      sorter: 'cpu',
      workers: 2,
      onWarning: (m) => warnings.push(m),
      onProgress: (e: ProgressEvent) => {
        if (mutatedAt !== undefined) return;
        mutatedAt = e.documents;
        mutate();
      },
    }).finally(() => {
      delete process.env.GPUINDEX_SMALL_FILES_TOGETHER;
      delete process.env.GPUINDEX_CREDITS;
    });
    // The first event comes after the first file's batch: the workers hold at most a file or two then.
    expect(mutatedAt).toBeLessThan(deleted * DOCS);

    const enoent = 'cannot read (ENOENT: no such file or directory)';
    const expectedSkips = [
      { path: name(deleted), reason: enoent },
      { path: name(unreadable), reason: root ? 'not a regular file' : 'cannot read (EACCES: permission denied)' },
      { path: name(dangling), reason: enoent },
      ...[0, 1, 2].map((i) => ({ path: `sub/s-${i}.jsonl`, reason: enoent })),
    ];
    expect(summary.skipped).toEqual({ count: expectedSkips.length, items: expectedSkips });
    expect(warnings).toEqual(expectedSkips.map((s) => `skipped ${s.path}: ${s.reason}`));

    const expectedIds = Array.from({ length: FILES }, (_, i) => i)
      .filter((i) => ![deleted, unreadable, dangling].includes(i))
      .flatMap(idsOf);
    expect(summary.documents).toBe(expectedIds.length);
    const reader = openIndex(summary.output);
    try {
      expect([...reader.documents()].map((d) => d.externalId)).toEqual(expectedIds);
      expect(reader.search('zzmarker', { k: 10_000 }).map((h) => h.externalId).sort()).toEqual([...expectedIds].sort());
    } finally {
      reader.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe('huge inputs with bounded memory', () => {
  const big = join(work, 'big');
  beforeAll(() => mkdirSync(big));
  // The inputs are GBs: each test removes its own, afterAll the rest.
  afterAll(() => rmSync(big, { recursive: true, force: true }));

  /** Builds `crawl` with the CLI under GNU time; checks the one document `id` holds `units` repeats. */
  function buildOne(crawl: string, id: string, units: number, extraTerms: number) {
    const out = `${crawl}-idx`;
    const r = gpuindex(['build', crawl, '-o', out, '--sorter', 'cpu', '--json'], { measure: true });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary.documents).toBe(1);
    expect(summary.skipped.count).toBe(0);
    const reader = openIndex(out);
    try {
      const docs = [...reader.documents()];
      expect(docs.map((d) => [d.externalId, d.length])).toEqual([[id, units * WORDS_PER_UNIT + extraTerms]]);
      const [term] = reader.analyze('leviathan');
      const { docIds, tfs } = reader.postingsOf(term!);
      expect([...docIds, ...tfs]).toEqual([0, units]);
    } finally {
      reader.close();
    }
    rmSync(crawl, { recursive: true, force: true });
    rmSync(out, { recursive: true, force: true });
    return peakRssOf(r);
  }

  // A document is read whole (its bytes, its text, its pairs): a few times its size, and no more.
  const DOC_RSS_LIMIT = 1.5 * 2 ** 30;

  // [name, folder, file, document id, before the repeated text, MiB of text, after it, extra terms (an HTML title's one term, counted twice: the default title weight)]
  const bigDocuments: [string, string, string, string, string, number, string, number][] = [
    ['a 200 MB document on one JSONL line', 'line200', 'big.jsonl', 'big', '{"id":"big","text":"', 200, '"}\n', 0],
    ['a 200 MB .txt file', 'txt200', 'big.txt', 'big.txt', '', 200, '\n', 0],
    ['an HTML page with a 100 MB <pre>', 'html100', 'big.html', 'big.html', '<html><head><title>Big</title></head><body><pre>', 100, '</pre></body></html>\n', 2],
  ];
  for (const [name, folder, file, id, before, mib, after, extraTerms] of bigDocuments) {
    it(`${name} is indexed`, { timeout: 90_000 }, () => {
      const crawl = join(big, folder);
      mkdirSync(crawl);
      writeRepeated(join(crawl, file), before, mib, after);
      const rss = buildOne(crawl, id, mib * UNITS_PER_MIB, extraTerms);
      console.info(`${name}: peak RSS ${(rss / MiB).toFixed(0)} MiB`);
      expect(rss).toBeLessThan(DOC_RSS_LIMIT);
    });
  }

  it('a 1 GB JSONL line with no newline is skipped with the reason, in far less memory than its size; the file beside it is indexed', { timeout: 90_000 }, () => {
    const crawl = join(big, 'line1g');
    mkdirSync(crawl);
    writeFileSync(join(crawl, 'good.jsonl'), '{"id":"g1","text":"a small good document"}\n{"id":"g2","text":"another good document"}\n');
    writeRepeated(join(crawl, 'huge.jsonl'), '{"id":"huge","text":"', 1024, '');
    const out = join(big, 'line1g-idx');
    const r = gpuindex(['build', crawl, '-o', out, '--sorter', 'cpu', '--json'], { measure: true });
    rmSync(crawl, { recursive: true, force: true });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('gpuindex: skipped huge.jsonl:1: line longer than 256 MiB\n');
    const summary = JSON.parse(r.stdout);
    expect(summary.skipped).toEqual({ count: 1, items: [{ path: 'huge.jsonl', line: 1, reason: 'line longer than 256 MiB' }] });
    const reader = openIndex(out);
    try {
      expect([...reader.documents()].map((d) => d.externalId)).toEqual(['g1', 'g2']);
      expect(reader.search('document').map((h) => h.externalId).sort()).toEqual(['g1', 'g2']);
    } finally {
      reader.close();
    }
    const rss = peakRssOf(r);
    console.info(`1 GiB JSONL line without newline: peak RSS ${(rss / MiB).toFixed(0)} MiB`);
    expect(rss).toBeLessThan(600e6);
  });
});

// ---------------------------------------------------------------------------------------------

describe('a full disk', () => {
  const crawl = join(work, 'disk-crawl');
  /** Blocks small enough for several runs (the whole 6 MB crawl fits one block by default). */
  const RUNS = ['--sorter', 'cpu', '--block-size', '200000'];
  let reference: { runBytes: number; postingsBytes: number; sqliteBytes: number; lexiconBytes: number };
  /** The default build: one block, sorted and written as postings.bin by the parse worker. */
  let oneBlock: { runBytes: number; blocks: number; postingsBytes: number; sqliteBytes: number; lexiconBytes: number };
  let n = 0;

  const figures = (out: string, stdout: string) => ({ runBytes: JSON.parse(stdout).runBytes, blocks: JSON.parse(stdout).blocks, postingsBytes: statSync(join(out, 'postings.bin')).size, sqliteBytes: statSync(join(out, 'index.sqlite')).size, lexiconBytes: statSync(join(out, 'lexicon.bin')).size });

  beforeAll(() => {
    const g = gpuindex(['gen-corpus', '--size', '6MB', '--seed', '3', '--files', '3', '-o', crawl]);
    expect(g.code).toBe(0);
    const out = join(work, 'disk-reference');
    const r = gpuindex(['build', crawl, '-o', out, ...RUNS, '--json']);
    expect(r.code).toBe(0);
    reference = figures(out, r.stdout);
    const one = join(work, 'disk-reference-one-block');
    const r1 = gpuindex(['build', crawl, '-o', one, '--sorter', 'cpu', '--json']);
    expect(r1.code).toBe(0);
    oneBlock = figures(one, r1.stdout);
  });

  /** A fresh tmpfs with mount options `opts`, or the reason there is none. */
  function tmpfs(opts: string): string | { reason: string } {
    const dir = join(work, `tmpfs-${n++}`);
    mkdirSync(dir);
    const r = spawnSync('mount', ['-t', 'tmpfs', '-o', opts, 'tmpfs', dir], { encoding: 'utf8' });
    if (r.status !== 0) return { reason: (r.stderr || r.error?.message || `mount exited ${r.status}`).trim().replace(/\s+/g, ' ') };
    mounts.push(dir);
    return dir;
  }

  /** Builds onto a tmpfs mounted with `opts`; undefined (a visible skip) where mounting is not allowed. */
  function buildOnto(opts: string, skip: () => void, args: string[] = RUNS) {
    const dir = tmpfs(opts);
    if (typeof dir !== 'string') {
      console.warn(`gpuindex tests: cannot mount a tmpfs (${dir.reason}); the disk-full test is skipped`);
      skip();
      throw new Error('unreachable');
    }
    const out = join(dir, 'index');
    return { dir, out, r: gpuindex(['build', crawl, '-o', out, ...args, '--json']) };
  }

  /** Exit 1, the one line `line`, no stack, and nothing left on the device: no index, no temporary sibling. */
  function expectCleanFailure(dir: string, r: CliResult, line: RegExp): void {
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(line);
    expect(r.stderr.split('\n')).toHaveLength(2);
    expect(readdirSync(dir)).toEqual([]);
  }

  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

  it('a device too small for the runs: exit 1, one line naming ENOSPC and the output, nothing left', ({ skip }) => {
    // The runs (and the temporary folder they are in) live beside the output: there is no
    // separate option for them, so they are on the tmpfs too.
    const { dir, out, r } = buildOnto('size=2m', skip);
    expect(reference.runBytes).toBeGreaterThan(2 * MiB);
    expect(r.stderr).toBe(`gpuindex: no space left on the device for ${out} (ENOSPC: no space left on device, write)\n`);
    expectCleanFailure(dir, r, /^gpuindex: no space left/);
  });

  it.runIf(hasGpu())('a device too small for the runs that GpuSort writes on its thread (Indexgpu+): the same one line, no CPU fallback, nothing left', ({ skip }) => {
    const { dir, out, r } = buildOnto('size=2m', skip, ['--pipeline', 'gpu+', '--block-size', '20000']);
    expect(r.stderr).not.toMatch(/GPU failed/);
    expect(r.stderr.split('\n').filter((l) => !l.startsWith('Warning: ')).join('\n')).toBe(`gpuindex: no space left on the device for ${out} (ENOSPC: no space left on device, write)\n`);
    expect(r.code).toBe(1);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('the crawl in one block, whose postings.bin the parse worker writes while this thread writes the lexicon: one line (ENOSPC or SQLITE_FULL, whichever fills the device first), nothing left', ({ skip }) => {
    expect(oneBlock).toMatchObject({ runBytes: 0, blocks: 1 });
    const bytes = Math.ceil((oneBlock.sqliteBytes + oneBlock.lexiconBytes + oneBlock.postingsBytes / 2) / 4096) * 4096;
    const { dir, out, r } = buildOnto(`size=${bytes}`, skip, ['--sorter', 'cpu']);
    expectCleanFailure(dir, r, new RegExp(`^gpuindex: no space left on the device for ${esc(out)} \\((ENOSPC: no space left on device, write|SQLITE_FULL: database or disk is full)\\)\\n$`));
  });

  it('room for the runs and postings but not the lexicon and the SQLite tables: the same one line (ENOSPC or SQLITE_FULL, whichever fills the device first), nothing left', ({ skip }) => {
    // Room for half the lexicon and the database beside the runs and postings.
    const tables = reference.sqliteBytes + reference.lexiconBytes;
    expect(tables).toBeGreaterThan(256 * 1024);
    const bytes = Math.ceil((reference.runBytes + reference.postingsBytes + tables / 2) / 4096) * 4096;
    const { dir, out, r } = buildOnto(`size=${bytes}`, skip);
    expectCleanFailure(dir, r, new RegExp(`^gpuindex: no space left on the device for ${esc(out)} \\((ENOSPC: no space left on device, write|SQLITE_FULL: database or disk is full)\\)\\n$`));
  });

  it('no inode left at each step (temporary folder, runs folder, run file, postings, database): one line, nothing left', ({ skip }) => {
    for (const args of [RUNS, ['--sorter', 'cpu']]) {
      for (let inodes = 1; inodes <= 5; inodes++) {
        const { dir, out, r } = buildOnto(`size=64m,nr_inodes=${inodes}`, skip, args);
        const line = new RegExp(`^gpuindex: (no space left on the device for|cannot write the index) ${esc(out)} \\((ENOSPC|SQLITE_\\w+): [^\\n]+\\)\\n$`);
        expectCleanFailure(dir, r, line);
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------

const gpuOk = hasGpu();

describe.runIf(gpuOk)('an adapter that refuses the requested limits', () => {
  const LIMIT = 'maxComputeInvocationsPerWorkgroup';

  it('openGpu returns the reason as one line, whether a device is open or not, and the adapter stays usable', async () => {
    const { closeGpu, openGpu } = await import('../gpu/device.js');
    const plain = await openGpu();
    if (typeof plain === 'string') throw new Error(plain);
    const offered = plain.limits[LIMIT];
    const beyond = { [LIMIT]: offered + 1 };
    try {
      // A device is open and shared: it cannot serve more than it has.
      expect(await openGpu({ requiredLimits: beyond })).toBe(`the open GPU device lacks a requested limit (${LIMIT}: ${offered + 1} requested, ${offered} offered)`);
    } finally {
      closeGpu();
    }
    const refused = await openGpu({ requiredLimits: beyond });
    expect(typeof refused).toBe('string');
    expect(refused).toMatch(/^the adapter refused the device \(.+\)$/);
    expect(refused).not.toMatch(/\n/);
    expect(refused).toContain(LIMIT);
    expect(refused).toContain(String(offered + 1));
    const again = await openGpu();
    expect(typeof again).not.toBe('string');
    closeGpu();
  });

  describe('a CLI build', () => {
    const crawl = join(work, 'gpu-crawl');
    let hook: string;
    beforeAll(() => {
      mkdirSync(crawl);
      writeFileSync(join(crawl, 'docs.jsonl'), Array.from({ length: 50 }, (_, i) => JSON.stringify({ id: `d${i}`, text: `the white whale number ${i} swims` })).join('\n') + '\n');
      const info = JSON.parse(gpuindex(['gpu-info', '--json']).stdout);
      expect(info.available).toBe(true);
      // acceptSoftware: lavapipe stands in for a hardware GPU, so auto asks for the device too.
      hook = JSON.stringify({ requiredLimits: { [LIMIT]: info.limits[LIMIT] + 1 }, acceptSoftware: true });
    });

    // Blocks the crawl overfills, whatever the worker count: auto then asks for the GPU (a crawl
    // the workers' blocks hold is sorted on the CPU without one: pipeline-choice.test.ts).
    const FILLS_BLOCKS = ['--block-size', '16'];
    const refusal = new RegExp(`the adapter refused the device \\([^\\n]*${LIMIT}[^\\n]*\\)`);

    it('--sorter gpu fails with one clear line and writes nothing', () => {
      const out = join(work, 'gpu-refused');
      const r = gpuindex(['build', crawl, '-o', out, '--sorter', 'gpu'], { env: { GPUINDEX_TEST_GPU: hook } });
      expect(r.code).toBe(1);
      const lines = gpuindexLines(r.stderr);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^gpuindex: --sorter gpu: no usable GPU \\(${refusal.source}\\)$`));
      expect(existsSync(out)).toBe(false);
      expect(readdirSync(work).filter((f) => f.startsWith('.gpu-refused'))).toEqual([]);
    });

    it('--sorter auto falls back to the CPU sorter with one notice line, and indexes everything', () => {
      const out = join(work, 'gpu-auto');
      const r = gpuindex(['build', crawl, '-o', out, '--sorter', 'auto', '--json', ...FILLS_BLOCKS], { env: { GPUINDEX_TEST_GPU: hook } });
      expect(r.code).toBe(0);
      const lines = gpuindexLines(r.stderr);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^gpuindex: no GPU \\(${refusal.source}\\); sorting on the CPU$`));
      const summary = JSON.parse(r.stdout);
      expect([summary.sorter, summary.pipeline, summary.documents]).toEqual(['cpu', 'cpu', 50]);
      expect(summary.notices).toEqual([lines[0]!.slice('gpuindex: '.length)]);
    });

    it('control: without the refused limit the same hook lets auto sort on the GPU', () => {
      const r = gpuindex(['build', crawl, '-o', join(work, 'gpu-control'), '--sorter', 'auto', '--json', ...FILLS_BLOCKS], { env: { GPUINDEX_TEST_GPU: JSON.stringify({ acceptSoftware: true }) } });
      expect(r.code).toBe(0);
      expect(gpuindexLines(r.stderr)).toEqual([]);
      expect(JSON.parse(r.stdout).sorter).toBe('gpu');
    });
  });
});
