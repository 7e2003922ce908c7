import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UserError } from '../src/shared/errors.js';
import {
  AliasTable, ZIPF_S, corpusVocabulary, generateCorpus, inflect, parseSize, prng32, zipfProbabilities,
} from '../src/gen-corpus.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-gen-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const cli = new URL('../dist/src/cli.js', import.meta.url).pathname;
let n = 0;
const dir = () => join(work, `c${n++}`);

/** All files of a generated crawl, concatenated in name order. */
function crawlBytes(d: string): Buffer {
  return Buffer.concat(readdirSync(d).sort().map((f) => readFileSync(join(d, f))));
}

describe('parseSize', () => {
  it('reads decimal and binary units', () => {
    expect(parseSize('1GB')).toBe(1e9);
    expect(parseSize('500MB')).toBe(500e6);
    expect(parseSize('2GiB')).toBe(2 * 1024 ** 3);
    expect(parseSize('1.5g')).toBe(1.5e9);
    expect(parseSize('64 kib')).toBe(65536);
    expect(parseSize('100000')).toBe(100000);
    expect(parseSize(4096)).toBe(4096);
  });
  it('rejects what it cannot read, as a user error', () => {
    for (const bad of ['', 'abc', '1XB', '-5MB', '0', '0MB', 'MB', '1e9'])
      expect(() => parseSize(bad), bad).toThrow(UserError);
    expect(() => parseSize(0)).toThrow(UserError);
    expect(() => parseSize(Number.NaN)).toThrow(/--size/);
  });
});

describe('prng32 and sampling', () => {
  it('is deterministic per (seed, stream) and differs across them', () => {
    const take = (seed: number, stream: number) => Array.from({ length: 8 }, prng32(seed, stream));
    expect(take(1, 0)).toEqual(take(1, 0));
    expect(take(1, 0)).not.toEqual(take(2, 0));
    expect(take(1, 0)).not.toEqual(take(1, 1));
    expect(take(2 ** 40, 0)).not.toEqual(take(0, 0));
  });
  it('alias table draws ranks with the Zipf probabilities', () => {
    const p = zipfProbabilities(1000);
    const t = new AliasTable(p);
    const next = prng32(9);
    const counts = new Float64Array(1000);
    const draws = 400_000;
    for (let i = 0; i < draws; i++) counts[t.sample(next)]!++;
    for (const r of [0, 1, 9, 99]) expect(counts[r]! / draws).toBeCloseTo(p[r]!, 2);
  });
  it('inflects with English spelling rules', () => {
    expect(inflect('whale', 'ed')).toBe('whaled');
    expect(inflect('whale', 'ing')).toBe('whaling');
    expect(inflect('sea', 's')).toBe('seas');
    expect(inflect('box', 's')).toBe('boxes');
    expect(inflect('story', 's')).toBe('stories');
    expect(inflect('happy', 'ness')).toBe('happiness');
    expect(inflect('day', 's')).toBe('days');
  });
});

describe('vocabulary', () => {
  it('is 50,000 distinct words, real ones first, from corpus-samples', () => {
    const { words, source } = corpusVocabulary();
    expect(words.length).toBe(50_000);
    expect(new Set(words).size).toBe(50_000);
    expect(source).toBe('moby-dick');
    expect(words.slice(0, 3)).toEqual(['the', 'of', 'and']);
    expect(words.slice(0, 200)).toContain('whale');
    for (const w of words) expect(w).toMatch(/^[a-z0-9]+$/);
  });
});

describe('generateCorpus', () => {
  it('same seed, same bytes (whatever the thread count); another seed, other bytes', async () => {
    const a = dir();
    const b = dir();
    const c = dir();
    const ra = await generateCorpus({ size: '600KB', seed: 42, output: a, files: 3, threads: 1 });
    await generateCorpus({ size: 600_000, seed: 42, output: b, files: 3, threads: 2 });
    await generateCorpus({ size: '600KB', seed: 43, output: c, files: 3, threads: 1 });
    expect(readdirSync(a).sort()).toEqual(['part-00000.jsonl', 'part-00001.jsonl', 'part-00002.jsonl']);
    expect(crawlBytes(a).equals(crawlBytes(b))).toBe(true);
    expect(crawlBytes(a).equals(crawlBytes(c))).toBe(false);
    expect(ra.bytes).toBe(crawlBytes(a).length);
  });

  it('writes the requested size within 2 %, as valid JSONL with log-normal lengths and Zipf words', async () => {
    const out = dir();
    const size = 8_000_000;
    const r = await generateCorpus({ size, seed: 7, output: out, files: 4, threads: 1 });
    const total = readdirSync(out).reduce((s, f) => s + statSync(join(out, f)).size, 0);
    expect(total).toBe(r.bytes);
    expect(Math.abs(total - size) / size).toBeLessThan(0.02);
    expect(total).toBeLessThanOrEqual(size);
    const counts = new Map<string, number>();
    const lengths: number[] = [];
    const ids = new Set<string>();
    let tokens = 0;
    for (const f of readdirSync(out).sort()) {
      const lines = readFileSync(join(out, f), 'utf8').split('\n');
      expect(lines.pop()).toBe('');
      for (const line of lines) {
        const d = JSON.parse(line) as { id: string; title: string; text: string };
        expect(Object.keys(d)).toEqual(['id', 'title', 'text']);
        expect(typeof d.title).toBe('string');
        ids.add(d.id);
        const words = d.text.split(' ');
        lengths.push(words.length);
        for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1);
        tokens += words.length;
      }
    }
    expect(ids.size).toBe(r.documents);
    expect(tokens).toBe(r.words);
    // Log-normal lengths: median near 300 words, a heavy tail (mean well above the median).
    lengths.sort((x, y) => x - y);
    const median = lengths[lengths.length >> 1]!;
    const mean = tokens / lengths.length;
    expect(median).toBeGreaterThan(250);
    expect(median).toBeLessThan(350);
    expect(mean / median).toBeGreaterThan(1.3);
    expect(lengths.at(-1)! / median).toBeGreaterThan(5);
    // Zipf: the top word's share matches 1/H(V, s); frequency falls with rank at slope ~ -s.
    const byFreq = [...counts.values()].sort((x, y) => y - x);
    const p = zipfProbabilities(50_000);
    expect(byFreq[0]! / tokens).toBeGreaterThan(p[0]! * 0.9);
    expect(byFreq[0]! / tokens).toBeLessThan(p[0]! * 1.1);
    expect([...counts.entries()].sort((x, y) => y[1] - x[1])[0]![0]).toBe('the');
    const slope = (Math.log(byFreq[999]!) - Math.log(byFreq[9]!)) / (Math.log(1000) - Math.log(10));
    expect(slope).toBeGreaterThan(-ZIPF_S - 0.15);
    expect(slope).toBeLessThan(-ZIPF_S + 0.15);
  });

  it('splits into one file per ~64 MB by default, or per --file-size', async () => {
    const out = dir();
    const r = await generateCorpus({ size: '200KB', seed: 1, output: out, fileBytes: '50KB', threads: 1 });
    expect(r.files).toBe(4);
    for (const f of readdirSync(out)) expect(Math.abs(statSync(join(out, f)).size - 50_000)).toBeLessThan(1000);
  });

  it('takes a given vocabulary, escaping JSON', async () => {
    const out = dir();
    const r = await generateCorpus({ size: '20KB', seed: 3, output: out, vocabulary: ['a"b', 'c\\d', 'é', 'x'], threads: 1 });
    expect(r.vocabularySource).toBe('given');
    const words = new Set<string>();
    for (const line of readFileSync(join(out, 'part-00000.jsonl'), 'utf8').trim().split('\n'))
      for (const w of (JSON.parse(line) as { text: string }).text.split(' ')) words.add(w);
    expect([...words].sort()).toEqual(['a"b', 'c\\d', 'x', 'é']);
    expect(Math.abs(r.bytes - 20_000)).toBeLessThan(400);
  });

  it('reports user errors: bad size, bad seed, bad files, non-empty output', async () => {
    await expect(generateCorpus({ size: 'lots', seed: 1, output: dir() })).rejects.toThrow(UserError);
    await expect(generateCorpus({ size: '1GB', seed: 1.5, output: dir() })).rejects.toThrow(/--seed/);
    await expect(generateCorpus({ size: '10KB', seed: 1, output: dir(), files: 0 })).rejects.toThrow(/--files/);
    await expect(generateCorpus({ size: '10KB', seed: 1, output: dir(), files: 100 })).rejects.toThrow(/too small/);
    const used = dir();
    await generateCorpus({ size: '5KB', seed: 1, output: used, threads: 1 });
    await expect(generateCorpus({ size: '5KB', seed: 1, output: used })).rejects.toThrow(/not empty/);
  });
});

describe.skipIf(!existsSync(cli))('gpuindex gen-corpus', () => {
  const gpuindex = (...args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: { ...process.env, GPUINDEX_DEBUG: '' } });
  it('writes a crawl and prints what it wrote', () => {
    const out = dir();
    const r = gpuindex('gen-corpus', '--size', '300KB', '--seed', '5', '--files', '2', '-o', out, '--json');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const j = JSON.parse(r.stdout) as { files: number; bytes: number };
    expect(j.files).toBe(2);
    expect(readdirSync(out).length).toBe(2);
    expect(Math.abs(j.bytes - 300_000) / 300_000).toBeLessThan(0.02);
  });
  it('a bad size is one line on stderr and exit 1', () => {
    const r = gpuindex('gen-corpus', '--size', '12parsecs', '-o', dir());
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/--size: cannot read "12parsecs"/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
  it('corpus rejects an unknown name', () => {
    const r = gpuindex('corpus', 'nope');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/unknown corpus "nope"/);
  });
});
