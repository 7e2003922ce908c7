import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readCiff } from './helpers/ciff-reader.js';

const cli = new URL('../dist/src/cli.js', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'gpuindex-cli-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function gpuindex(...args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: { ...process.env, GPUINDEX_DEBUG: '' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('the gpuindex bin', () => {
  it('runs as a program (npx gpuindex executes dist/src/cli.js directly: it needs its executable bit and shebang)', () => {
    const r = spawnSync(cli, ['--version'], { encoding: 'utf8' });
    expect(r.error).toBeUndefined();
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe('gpuindex build summary', () => {
  it('says when the crawl fitted in one block (no sort, no runs) and otherwise gives the sort and the runs', () => {
    const one = gpuindex('build', 'corpus-samples', '-o', join(work, 'summary-one'), '--sorter', 'cpu');
    expect(one.code).toBe(0);
    expect(one.stdout.split('\n')[2]).toMatch(/^ {2}[\d.]+ s \([\d]+ docs\/s, [\d.]+ MB\/s\): parse [\d.]+ ms, merge [\d.]+ ms \(one block, no sort: postings\.bin written from it in [\d.]+ ms beside the lexicon\)$/);
    const many = gpuindex('build', 'corpus-samples', '-o', join(work, 'summary-many'), '--sorter', 'cpu', '--block-size', '100000');
    expect(many.code).toBe(0);
    expect(many.stdout.split('\n')[1]).toMatch(/ in \d+ block\(s\) of 100,000;/);
    expect(many.stdout.split('\n')[2]).toMatch(/: parse\+sort [\d.]+ ms \(sorting [\d.]+ ms, writing runs [\d.]+ ms\), merge [\d.]+ ms$/);
  });
});

describe('gpuindex CLI on corpus-samples', () => {
  const index = join(work, 'moby');
  it('builds, searches, shows stats and postings, exports CIFF', () => {
    const b = gpuindex('build', 'corpus-samples', '-o', index, '--sorter', 'cpu', '--json');
    expect(b.stderr).toBe('');
    expect(b.code).toBe(0);
    const summary = JSON.parse(b.stdout);
    expect(summary.documents).toBeGreaterThan(100);
    expect(summary.skipped.count).toBe(0);
    expect(summary.sorter).toBe('cpu');
    expect(readdirSync(index).sort()).toEqual(['MANIFEST.json', 'impacts.bin', 'index.sqlite', 'lexicon.bin', 'postings.bin']);
    expect(gpuindex('verify', index).stdout).toMatch(/^ok: 4 files, [\d,]+ terms/);

    const s = gpuindex('search', index, 'white whale', '-k', '5', '--json');
    expect(s.code).toBe(0);
    const hits = JSON.parse(s.stdout);
    expect(hits).toHaveLength(5);
    expect(hits[0].score).toBeGreaterThanOrEqual(hits[4].score);

    const st = JSON.parse(gpuindex('stats', index, '--json').stdout);
    expect(st.stats.documents).toBe(summary.documents);
    expect(st.settings.tokenizer).toEqual({ stem: 'porter', stopwords: 'english', cjk: 'unigram', titleWeight: 2 });

    const p = JSON.parse(gpuindex('postings', index, 'whale', '--json').stdout);
    expect(p.term).toBe('whale');
    expect(p.df).toBe(p.postings.length);
    expect(p.postings.reduce((a: number, x: { tf: number }) => a + x.tf, 0)).toBe(p.cf);

    const ciffPath = join(work, 'moby.ciff');
    expect(gpuindex('export', index, '--format', 'ciff', '-o', ciffPath).code).toBe(0);
    const ciff = readCiff(ciffPath);
    expect(ciff.header.numDocs).toBe(summary.documents);
    expect(ciff.header.numPostingsLists).toBe(summary.terms);
    const whale = ciff.lists.find((l) => l.term === 'whale')!;
    expect(whale.postings.map((x) => x.docid)).toEqual(p.postings.map((x: { docId: number }) => x.docId));
  });

  it('refuses to overwrite an index without --force, and replaces it with --force', () => {
    const again = gpuindex('build', 'corpus-samples', '-o', index, '--sorter', 'cpu');
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`gpuindex: output already exists: ${index} (use --force to replace it)\n`);
    expect(gpuindex('build', 'corpus-samples', '-o', index, '--sorter', 'cpu', '--force', '-q').code).toBe(0);
  });
});

describe('gpuindex CLI on bad input', () => {
  it('reports a missing crawl in one line, exit 1, nothing written', () => {
    const out = join(work, 'never');
    const r = gpuindex('build', join(work, 'no-such-crawl'), '-o', out);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`gpuindex: crawl not found: ${join(work, 'no-such-crawl')}\n`);
    expect(existsSync(out)).toBe(false);
  });

  it('reports an unwritable output in one line', () => {
    if (process.getuid?.() === 0) {
      // root ignores permissions: use a path whose parent is a file instead
      const file = join(work, 'a-file');
      writeFileSync(file, 'x');
      const r = gpuindex('build', 'corpus-samples', '-o', join(file, 'idx'));
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^gpuindex: output's parent folder does not exist|^gpuindex: cannot write the output/);
      expect(r.stderr.split('\n')).toHaveLength(2);
      return;
    }
    const ro = join(work, 'ro');
    mkdirSync(ro);
    chmodSync(ro, 0o500);
    const r = gpuindex('build', 'corpus-samples', '-o', join(ro, 'idx'));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^gpuindex: cannot write the output: EACCES/);
  });

  it('skips malformed lines, empty and binary files with one warning each and indexes the rest', () => {
    const crawl = join(work, 'bad');
    mkdirSync(crawl);
    writeFileSync(join(crawl, 'docs.jsonl'), '{"id":"a","text":"first good document"}\n{"id":"b","text":\n{"id":"c","text":"third good document"}\n');
    writeFileSync(join(crawl, 'empty.txt'), '');
    writeFileSync(join(crawl, 'binary.txt'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 0, 1, 2, 3]));
    writeFileSync(join(crawl, 'bad-utf8.txt'), Buffer.from([0x68, 0x69, 0x20, 0xff, 0xfe, 0x20, 0x74, 0x68, 0x65, 0x72, 0x65]));
    const out = join(work, 'bad-index');
    const r = gpuindex('build', crawl, '-o', out, '--sorter', 'cpu', '--json');
    expect(r.code).toBe(0);
    const warnings = r.stderr.trim().split('\n');
    expect(warnings).toContain('gpuindex: skipped docs.jsonl:2: ' + JSON.parse(r.stdout).skipped.items.find((s: { line?: number }) => s.line === 2).reason);
    expect(warnings.some((w) => /^gpuindex: skipped empty\.txt: /.test(w))).toBe(true);
    expect(warnings.some((w) => /^gpuindex: skipped binary\.txt: /.test(w))).toBe(true);
    expect(warnings.every((w) => w.startsWith('gpuindex: '))).toBe(true);
    const summary = JSON.parse(r.stdout);
    expect(summary.skipped.count).toBe(warnings.filter((w) => w.startsWith('gpuindex: skipped')).length);
    const ids = JSON.parse(gpuindex('postings', out, 'document', '--json').stdout).postings.map((p: { externalId: string }) => p.externalId);
    expect(ids).toEqual(['a', 'c']);
    // A document with invalid UTF-8 is skipped with one line naming the file and the reason.
    expect(warnings.some((w) => /^gpuindex: skipped bad-utf8\.txt: invalid UTF-8/.test(w))).toBe(true);
    expect(summary.warnings.count).toBe(0);
  });

  it('reports files of unsupported types in one line of counts per extension (each under --verbose, all in --json); bad input keeps a line each', () => {
    const crawl = join(work, 'with-assets');
    mkdirSync(join(crawl, 'py', '_static'), { recursive: true });
    writeFileSync(join(crawl, 'py', 'index.html'), '<html><head><title>Index</title></head><body>the whale page</body></html>');
    writeFileSync(join(crawl, 'docs.jsonl'), '{"id":"a","text":"first whale"}\n{"id":"b","text":\n');
    const assets = ['py/_static/minus.png', 'py/_static/plus.png', 'py/_static/file.PNG', 'py/_static/doctools.js', 'py/_static/searchtools.js', 'py/_static/basic.css', 'py/Makefile'];
    for (const a of assets) writeFileSync(join(crawl, a), 'not text');
    const out = join(work, 'with-assets-index');
    const inCrawlOrder = [...assets].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
    const line = 'gpuindex: skipped 7 files of unsupported types: 3 .png, 2 .js, 1 .css, 1 (none)';
    const brokenLine = /^gpuindex: skipped docs\.jsonl:2: invalid JSON/;

    const plain = gpuindex('build', crawl, '-o', out, '--sorter', 'cpu');
    expect(plain.code).toBe(0);
    const lines = plain.stderr.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(brokenLine);
    expect(lines[1]).toBe(line);
    expect(plain.stdout).toContain('\n  skipped 1 file(s)/document(s); see the warnings above or --json\n');
    expect(plain.stdout).toContain('\n  not indexed: 7 file(s) of unsupported types; --verbose or --json lists them\n');

    const verbose = gpuindex('build', crawl, '-o', out, '--sorter', 'cpu', '--force', '--verbose');
    expect(verbose.code).toBe(0);
    const vlines = verbose.stderr.trim().split('\n');
    expect(vlines[0]).toMatch(brokenLine);
    expect(vlines.slice(1)).toEqual([...inCrawlOrder.map((p) => `gpuindex: skipped ${p}: unsupported file type`), line]);

    const json = gpuindex('build', crawl, '-o', out, '--sorter', 'cpu', '--force', '--json');
    expect(json.code).toBe(0);
    const summary = JSON.parse(json.stdout);
    expect(summary.unsupported).toEqual({ count: 7, byExtension: { '.png': 3, '.js': 2, '.css': 1, '(none)': 1 }, items: inCrawlOrder });
    expect(summary.skipped.count).toBe(1);
    expect(summary.skipped.items.map((s: { path: string }) => s.path)).toEqual(['docs.jsonl']);
    expect(summary.documents).toBe(2);
  });

  it('rejects bad options in one line', () => {
    expect(gpuindex('build', 'corpus-samples', '-o', join(work, 'x'), '--memory', 'lots').stderr).toBe('gpuindex: --memory: cannot read "lots" (examples: 1GiB, 256MiB, 500MB)\n');
    expect(gpuindex('build', 'corpus-samples', '-o', join(work, 'x'), '--pipeline', 'cpu', '--sorter', 'gpu').stderr).toBe('gpuindex: --pipeline cpu sorts on the CPU; it cannot be combined with --sorter gpu\n');
    expect(existsSync(join(work, 'x'))).toBe(false);
  });
});

describe('parse workers started while the CLI loads', () => {
  it('many of them: no listener warning on stderr, and their memory is not counted twice in the memory plan', () => {
    const out = join(work, 'many-workers');
    const run = (env: Record<string, string>) => {
      const r = spawnSync(process.execPath, [cli, 'build', 'corpus-samples', '-o', out, '--force', '--sorter', 'cpu', '--workers', '12', '--memory', '2GiB', '--json'], { encoding: 'utf8', env: { ...process.env, GPUINDEX_DEBUG: '', ...env } });
      expect(r.status).toBe(0);
      expect(r.stderr).not.toMatch(/Warning/);
      return JSON.parse(r.stdout) as { workers: number; memory: { baselineBytes: number } };
    };
    const ahead = run({});
    const plain = run({ GPUINDEX_PRESTART: '0' });
    expect(ahead.workers).toBe(12);
    // 12 spares hold ~120 MiB when the baseline is measured; taken out, the baselines agree within noise.
    expect(Math.abs(ahead.memory.baselineBytes - plain.memory.baselineBytes)).toBeLessThan(40 * 2 ** 20);
  });
});
