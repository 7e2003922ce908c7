/**
 * --resume: a build checkpoints each completed sorted run beside its output, and a later build of
 * the same crawl and settings reuses those runs. The resumed index must be byte-identical to a
 * clean build; a changed crawl, changed settings or a damaged checkpoint must not be reused.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIndex, type BuildSummary } from '../src/build.js';
import { AbortError, UserError } from '../src/shared/errors.js';
import { generateCorpus } from '../src/gen-corpus.js';
import type { BuildOptions } from '../src/shared/options.js';
import { resumeDirFor } from '../src/output.js';
import { readIndexContent, type IndexContent } from './helpers/index-files.js';
import { hasGpu } from './helpers/gpu-available.js';

const cli = new URL('../dist/src/cli.js', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'gpuindex-resume-'));
const master = join(work, 'crawl');
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Small blocks: the crawl (~5 MB, 10 files) makes about a hundred runs, each checkpointed. */
const BLOCK = 4000;
const BASE: Partial<BuildOptions> = { pipeline: 'cpu', workers: 1, blockSize: BLOCK };

beforeAll(async () => {
  await generateCorpus({ size: '5MB', seed: 3, files: 10, threads: 1, output: master });
  // A malformed line inside every file: skips must be counted once, resumed or not.
  for (const f of readdirSync(master)) {
    const lines = readFileSync(join(master, f), 'utf8').split('\n');
    lines.splice(lines.length >> 1, 0, '{"id": "broken", "text": ');
    writeFileSync(join(master, f), lines.join('\n'));
  }
});

let n = 0;
/** A fresh, empty parent folder: the output is `<parent>/index`, its resume folder a sibling. */
function freshOutput(): string {
  const parent = join(work, `out-${n++}`);
  mkdirSync(parent);
  return join(parent, 'index');
}

/** A private copy of the crawl, for tests that change it. */
function crawlCopy(): string {
  const dir = join(work, `crawl-${n++}`);
  cpSync(master, dir, { recursive: true });
  return dir;
}

interface Checkpoint {
  run: string;
  delta: string;
  documents: number;
}
function manifest(output: string): { key: string; checkpoints: Checkpoint[] } {
  return JSON.parse(readFileSync(join(resumeDirFor(output), 'resume.json'), 'utf8'));
}

/** Index content plus the raw postings bytes, compared both ways. */
function expectSameIndex(actual: IndexContent, expected: IndexContent): void {
  expect(actual.postings.length).toBe(expected.postings.length);
  expect(Buffer.compare(actual.postings, expected.postings)).toBe(0);
  expect(actual.terms).toEqual(expected.terms);
  expect(actual.docs).toEqual(expected.docs);
  expect(actual.stats).toEqual(expected.stats);
}

/** Clean builds (no resume) of a crawl with given settings, memoized per crawl and settings. */
const cleanBuilds = new Map<string, { content: IndexContent; summary: BuildSummary }>();
async function clean(crawl: string, opts: Partial<BuildOptions> = {}): Promise<{ content: IndexContent; summary: BuildSummary }> {
  const key = JSON.stringify([crawl, { ...BASE, ...opts }]);
  let r = cleanBuilds.get(key);
  if (!r) {
    const output = freshOutput();
    const summary = await buildIndex({ input: crawl, output, ...BASE, ...opts });
    expect(summary.resumed).toBeUndefined(); // only with resume
    r = { content: readIndexContent(output), summary };
    cleanBuilds.set(key, r);
  }
  return r;
}

/**
 * A build with resume that is aborted once `k` blocks are sorted (progress is throttled, so it
 * stops somewhat later): it must reject with AbortError and leave its checkpoints behind.
 */
async function interrupt(crawl: string, output: string, opts: Partial<BuildOptions> = {}, k = 3): Promise<Checkpoint[]> {
  const controller = new AbortController();
  const build = buildIndex({
    input: crawl,
    output,
    ...BASE,
    ...opts,
    resume: true,
    signal: controller.signal,
    onProgress: (e) => {
      if (e.stage === 'parse' && e.blocksSorted >= k) controller.abort();
    },
  });
  await expect(build).rejects.toBeInstanceOf(AbortError);
  expect(existsSync(output)).toBe(false);
  const dir = resumeDirFor(output);
  expect(existsSync(dir)).toBe(true);
  const { checkpoints } = manifest(output);
  expect(checkpoints.length).toBeGreaterThanOrEqual(k);
  for (const c of checkpoints) {
    expect(existsSync(join(dir, 'runs', c.run))).toBe(true);
    expect(existsSync(join(dir, c.delta))).toBe(true);
  }
  return checkpoints;
}

/** The resumed build: returns its summary and the index it wrote, and checks the cleanup. */
async function resume(crawl: string, output: string, opts: Partial<BuildOptions> = {}): Promise<{ summary: BuildSummary; content: IndexContent; warnings: string[] }> {
  const warnings: string[] = [];
  const summary = await buildIndex({ input: crawl, output, ...BASE, ...opts, resume: true, onWarning: (m) => warnings.push(m) });
  // A complete index makes the resume folder moot; no temporary folder is left either.
  expect(existsSync(resumeDirFor(output))).toBe(false);
  expect(readdirSync(dirname(output)).filter((f) => f.startsWith(`.${basename(output)}.gpuindex-`))).toEqual([]);
  expect(existsSync(join(output, 'index.sqlite'))).toBe(true);
  return { summary, content: readIndexContent(output), warnings };
}

const REUSING = /^resume: reusing (\d+) completed run\(s\) holding (\d+) document\(s\)$/;
const NOT_REUSING = 'resume: not reusing the earlier state: ';

describe('buildIndex({ resume: true }) after an interrupted build', () => {
  for (const workers of [1, 2]) {
    it(`reuses the completed runs and writes the same index as a clean build (cpu, ${workers} worker(s))`, async () => {
      const reference = await clean(master);
      const output = freshOutput();
      const saved = await interrupt(master, output, { workers });
      const r = await resume(master, output, { workers });
      const reusing = r.summary.notices.map((m) => REUSING.exec(m)).filter((m) => m !== null);
      expect(reusing.length).toBe(1);
      expect(Number(reusing[0]![1])).toBe(saved.length);
      expect(Number(reusing[0]![2])).toBe(saved.at(-1)!.documents);
      for (const m of r.summary.notices) expect(r.warnings).toContain(m); // notices also reach onWarning
      expect(r.summary.notices.some((m) => m.startsWith(NOT_REUSING))).toBe(false);
      expect(r.summary.resumed).toEqual({ runs: saved.length, documents: saved.at(-1)!.documents });
      // The interrupt landed mid-build, so the resumed build made runs of its own.
      expect(saved.length).toBeLessThan(reference.summary.blocks);
      // The counters carried over in the checkpoints add up to those of a clean build.
      const counts = (s: BuildSummary) => ({ documents: s.documents, terms: s.terms, pairs: s.pairs, postings: s.postings, blocks: s.blocks, bytesRead: s.bytesRead, runBytes: s.runBytes, skipped: s.skipped, warnings: s.warnings });
      expect(counts(r.summary)).toEqual(counts(reference.summary));
      expect(reference.summary.skipped.count).toBe(10);
      expectSameIndex(r.content, reference.content);
    });
  }

  it('resumes inside a line range of a cut file (GPUINDEX_RANGE_BYTES) to the index and skip lines of whole files', async () => {
    // A broken line every 10 lines, so every range has skips whose line numbers depend on the ranges before it.
    const crawl = crawlCopy();
    for (const f of readdirSync(crawl)) {
      const lines = readFileSync(join(crawl, f), 'utf8').split('\n');
      for (let i = lines.length - 1; i > 0; i -= 10) lines.splice(i, 0, '{"broken": ');
      writeFileSync(join(crawl, f), lines.join('\n'));
    }
    const reference = await clean(crawl);
    process.env.GPUINDEX_RANGE_BYTES = '100000'; // each ~500 KB file: about five ranges
    try {
      // Interrupt until the last checkpoint lies inside a range after a file's first.
      let output = '';
      let saved: Checkpoint[] = [];
      for (const k of [30, 37, 44, 51, 58, 65]) {
        output = freshOutput();
        saved = await interrupt(crawl, output, { workers: 2 }, k);
        const last = manifest(output).checkpoints.at(-1) as unknown as { resumeAt: { lines?: { lineBase: number } } };
        if ((last.resumeAt.lines?.lineBase ?? 0) > 0) break;
        saved = [];
      }
      expect(saved.length, 'no interrupt landed inside a later range').toBeGreaterThan(0);
      const r = await resume(crawl, output, { workers: 2 });
      expect(r.summary.resumed?.runs).toBe(saved.length);
      expect(r.summary.skipped).toEqual(reference.summary.skipped);
      expectSameIndex(r.content, reference.content);
    } finally {
      delete process.env.GPUINDEX_RANGE_BYTES;
    }
  });

  it('resumes with a different worker count (workers do not shape the runs)', async () => {
    const reference = await clean(master);
    const output = freshOutput();
    const saved = await interrupt(master, output, { workers: 2 }, 5);
    const r = await resume(master, output, { workers: 1 });
    expect(r.summary.resumed?.runs).toBe(saved.length);
    expectSameIndex(r.content, reference.content);
  });

  it('with nothing to resume, builds from scratch and reports resumed 0', async () => {
    const reference = await clean(master);
    const output = freshOutput();
    const r = await resume(master, output);
    expect(r.summary.resumed).toEqual({ runs: 0, documents: 0 });
    expect(r.summary.notices.filter((m) => m.startsWith('resume:'))).toEqual([]);
    expectSameIndex(r.content, reference.content);
  });

  it('resumes an output inside the crawl folder (its resume folder is no part of the crawl)', async () => {
    const crawl = crawlCopy();
    const reference = await clean(crawl); // before the crawl holds an index of its own
    const output = join(crawl, 'index');
    const saved = await interrupt(crawl, output);
    const r = await resume(crawl, output);
    expect(r.summary.notices).toContain(`resume: reusing ${saved.length} completed run(s) holding ${saved.at(-1)!.documents} document(s)`);
    expect(r.summary.skipped).toEqual(reference.summary.skipped);
    expectSameIndex(r.content, reference.content);
    rmSync(crawl, { recursive: true });
  });

  it.runIf(hasGpu())('reuses the completed runs of an Indexgpu+ build (GPU sorter, overlapped schedule)', async () => {
    const reference = await clean(master);
    const output = freshOutput();
    const saved = await interrupt(master, output, { pipeline: 'gpu+', workers: 2 });
    const r = await resume(master, output, { pipeline: 'gpu+', workers: 2 });
    expect(r.summary.pipeline).toBe('gpu+');
    expect(r.summary.resumed?.runs).toBe(saved.length);
    expect(r.summary.notices.some((m) => REUSING.test(m))).toBe(true);
    expectSameIndex(r.content, reference.content);
  });
});

describe('gpuindex build --resume (CLI) after kill -9', () => {
  it('reuses the checkpoints of a killed build and writes the same index as a clean build', async () => {
    const reference = await clean(master, { blockSize: 2000 });
    const output = freshOutput();
    const flags = ['--pipeline', 'cpu', '--workers', '1', '--block-size', '2000', '--resume'];
    const child = spawn(process.execPath, [cli, 'build', master, '-o', output, ...flags], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => child.on('exit', (code, signal) => res({ code, signal })));
    let killed = false;
    const poll = setInterval(() => {
      try {
        if (manifest(output).checkpoints.length >= 2 && !killed) {
          killed = true;
          child.kill('SIGKILL');
        }
      } catch {
        /* no resume.json yet */
      }
    }, 2);
    const first = await exited;
    clearInterval(poll);
    expect(first.signal, `the build ended before it was killed: ${stderr}`).toBe('SIGKILL');
    // Nothing that looks like an index at the output; the checkpoints are beside it.
    expect(existsSync(output)).toBe(false);
    expect(existsSync(join(output, 'index.sqlite'))).toBe(false);
    const saved = manifest(output).checkpoints;
    expect(saved.length).toBeGreaterThanOrEqual(2);

    const again = spawnSync(process.execPath, [cli, 'build', master, '-o', output, ...flags, '--json'], { encoding: 'utf8' });
    expect(again.status, again.stderr).toBe(0);
    expect(again.stderr).toContain(`gpuindex: resume: reusing ${saved.length} completed run(s) holding ${saved.at(-1)!.documents} document(s)\n`);
    const summary = JSON.parse(again.stdout) as BuildSummary;
    expect(summary.resumed).toEqual({ runs: saved.length, documents: saved.at(-1)!.documents });
    expect([summary.documents, summary.pairs, summary.blocks, summary.skipped.count]).toEqual([reference.summary.documents, reference.summary.pairs, reference.summary.blocks, reference.summary.skipped.count]);
    expect(existsSync(resumeDirFor(output))).toBe(false);
    // The killed build's temporary folder was cleared by the second build.
    expect(readdirSync(dirname(output))).toEqual([basename(output)]);
    expectSameIndex(readIndexContent(output), reference.content);
  });
});

describe('--resume does not reuse what no longer matches', () => {
  it('a changed crawl (a file rewritten at the same size, with or without its modification time put back, or a file added) starts afresh', async () => {
    for (const change of ['rewrite', 'rewrite keeping mtime', 'add'] as const) {
      const crawl = crawlCopy();
      const output = freshOutput();
      const files = readdirSync(crawl).sort();
      // A whole second, which utimes puts back exactly.
      const second = 1_700_000_000;
      if (change === 'rewrite keeping mtime') utimesSync(join(crawl, files[0]!), second, second);
      await interrupt(crawl, output);
      if (change !== 'add') {
        // Same size, different words: the modification time tells, or (put back) the status change time.
        const file = join(crawl, files[0]!);
        const text = readFileSync(file, 'utf8');
        writeFileSync(file, text.replace(/"text":"(\w)/, (_m, c: string) => `"text":"${c === 'q' ? 'z' : 'q'}`));
        expect(readFileSync(file).length).toBe(Buffer.byteLength(text));
        if (change === 'rewrite keeping mtime') {
          utimesSync(file, second, second);
          expect(statSync(file).mtimeMs).toBe(second * 1000);
        }
      } else {
        writeFileSync(join(crawl, 'aaa-new.jsonl'), JSON.stringify({ id: 'new-doc', title: 'new', text: 'a whale of a new document' }) + '\n');
      }
      const r = await resume(crawl, output);
      expect(r.summary.notices).toContain(`${NOT_REUSING}it was made from a different crawl or different settings`);
      expect(r.summary.notices.some((m) => REUSING.test(m))).toBe(false);
      expect(r.summary.resumed).toEqual({ runs: 0, documents: 0 });
      const reference = await clean(crawl);
      expect(reference.summary.documents).toBe(change === 'add' ? 1 + (await clean(master)).summary.documents : (await clean(master)).summary.documents);
      expectSameIndex(r.content, reference.content);
      rmSync(crawl, { recursive: true });
    }
  });

  it('changed settings (stemmer, block size) start afresh', async () => {
    for (const changed of [{ stem: 'none' as const }, { blockSize: BLOCK + 1000 }]) {
      const output = freshOutput();
      await interrupt(master, output);
      const r = await resume(master, output, changed);
      expect(r.summary.notices).toContain(`${NOT_REUSING}it was made from a different crawl or different settings`);
      expect(r.summary.resumed).toEqual({ runs: 0, documents: 0 });
      expectSameIndex(r.content, (await clean(master, changed)).content);
    }
  });

  it("files cut into other ranges (another machine's worker count) start afresh", async () => {
    const output = freshOutput();
    process.env.GPUINDEX_RANGE_BYTES = '100000';
    try {
      await interrupt(master, output, { workers: 2 });
    } finally {
      delete process.env.GPUINDEX_RANGE_BYTES;
    }
    const r = await resume(master, output, { workers: 2 });
    expect(r.summary.notices).toContain(`${NOT_REUSING}it was made from a different crawl or different settings`);
    expect(r.summary.resumed).toEqual({ runs: 0, documents: 0 });
    expectSameIndex(r.content, (await clean(master)).content);
  });

  it('a changed stopword file (same path) starts afresh', async () => {
    const list = join(work, `stopwords-${n++}.txt`);
    writeFileSync(list, 'the\nand\n');
    const output = freshOutput();
    await interrupt(master, output, { stopwords: list });
    writeFileSync(list, 'the\nand\nof\nwhale\n');
    const r = await resume(master, output, { stopwords: list });
    expect(r.summary.notices).toContain(`${NOT_REUSING}it was made from a different crawl or different settings`);
    expect(r.summary.resumed).toEqual({ runs: 0, documents: 0 });
    expectSameIndex(r.content, (await clean(master, { stopwords: list })).content);
  });

  it('a damaged run or delta is dropped with the checkpoints after it; the earlier ones are reused', async () => {
    const reference = await clean(master);
    for (const damaged of ['run', 'delta'] as const) {
      const output = freshOutput();
      const saved = await interrupt(master, output, {}, 4);
      expect(saved.length).toBeGreaterThanOrEqual(4);
      const c = saved[1]!; // not the last: checkpoint 0 stays usable, 1 and later are not
      const file = damaged === 'run' ? join(resumeDirFor(output), 'runs', c.run) : join(resumeDirFor(output), c.delta);
      const bytes = readFileSync(file);
      const at = bytes.length >> 1;
      bytes[at] = bytes[at]! ^ (damaged === 'run' ? 0xff : 0x01); // a delta stays valid JSON-ish text
      writeFileSync(file, bytes);
      const r = await resume(master, output);
      expect(r.summary.notices.some((m) => m.startsWith(NOT_REUSING))).toBe(false);
      expect(r.summary.notices).toContain(`resume: ${c.run} or its delta is missing or damaged; resuming before it`);
      expect(r.summary.notices).toContain(`resume: reusing 1 completed run(s) holding ${saved[0]!.documents} document(s)`);
      expect(r.summary.resumed).toEqual({ runs: 1, documents: saved[0]!.documents });
      expectSameIndex(r.content, reference.content);
    }
  });

  it('refuses resume for documents given as an iterable', async () => {
    const output = freshOutput();
    const docs = [{ id: 'a', text: 'call me ishmael' }, { id: 'b', text: 'the white whale' }];
    const build = buildIndex({ input: docs, output, resume: true });
    await expect(build).rejects.toBeInstanceOf(UserError);
    await expect(buildIndex({ input: docs, output, resume: true })).rejects.toThrow('--resume needs a crawl folder as input');
    expect(readdirSync(dirname(output))).toEqual([]);
    // Without resume the same documents build fine.
    const ok = await buildIndex({ input: docs, output });
    expect(ok.documents).toBe(2);
    expect(ok.resumed).toBeUndefined();
  });
});

describe('two --resume builds of one output at once', () => {
  it('the second is refused while the first holds the resume folder; the index is the first one whole', async () => {
    // Two crawls, so that a mix of their runs would show (it did: one build merged the other's
    // runs, "lexicon: termID ... after ...", or lost them to the other's clean-up, ENOENT).
    const other = join(work, `other-${n++}`);
    await generateCorpus({ size: '1MB', seed: 11, files: 2, threads: 1, output: other });
    const output = freshOutput();
    const results = await Promise.allSettled([
      buildIndex({ input: master, output, ...BASE, resume: true, force: true }),
      buildIndex({ input: other, output, ...BASE, resume: true, force: true }),
    ]);
    const refused = results.filter((r) => r.status === 'rejected');
    expect(refused.length).toBe(1);
    const reason = (refused[0] as PromiseRejectedResult).reason;
    expect(reason).toBeInstanceOf(UserError);
    expect(String(reason.message)).toMatch(/another build is using the --resume state of/);
    const winner = results[0]!.status === 'fulfilled' ? master : other;
    expectSameIndex(readIndexContent(output), (await clean(winner)).content);
    expect(existsSync(resumeDirFor(output))).toBe(false);
  });

  it('takes over the resume folder of a build whose process is gone, whatever its host (a cluster task rerun elsewhere)', async () => {
    const reference = await clean(master);
    const output = freshOutput();
    const saved = await interrupt(master, output);
    const gone = spawnSync(process.execPath, ['-e', 'process.pid']).pid!; // exited by now
    writeFileSync(join(resumeDirFor(output), 'lock'), JSON.stringify({ pid: gone, host: 'another-node', token: '0123456789abcdef' }));
    const r = await resume(master, output);
    expect(r.summary.resumed?.runs).toBe(saved.length);
    expectSameIndex(r.content, reference.content);
  });
});
