import fc from 'fast-check';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UserError } from '../src/shared/errors.js';
import {
  AliasTable, ZIPF_S, corpusVocabulary, generateCorpus, inflect, parseSize, prng32, zipfProbabilities,
} from '../src/gen-corpus.js';
import {
  HEAPS_PRESETS, PowerLawSampler, calibrateCrossover, expectedDistinct, parseGrowthOptions, parseHeaps, powerSum, rankLaw, rankProbability, resolveGrowth,
} from '../src/gen-corpus-growth.js';
import { pseudoWord, syllableWord } from '../src/gen-corpus-words.js';

const FIXED_50KB_SHA256 = '2c8a210d65fc1f7de32ca1bc762aa8b7c3aafb088e741fdc890a0283a012b119';
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

/** Distinct words of a generated crawl after n words, at each n of `at` (a naive scan: title, then text, split on spaces). */
function distinctAt(d: string, at: number[]): { n: number; v: number }[] {
  const seen = new Set<string>();
  const out: { n: number; v: number }[] = [];
  let n = 0;
  let i = 0;
  for (const f of readdirSync(d).sort())
    for (const line of readFileSync(join(d, f), 'utf8').split('\n')) {
      if (!line) continue;
      const doc = JSON.parse(line) as { title: string; text: string };
      for (const w of `${doc.title} ${doc.text}`.split(' ')) {
        if (!w) continue;
        seen.add(w);
        if (++n === at[i]) (out.push({ n, v: seen.size }), i++);
      }
    }
  return out;
}

describe('growing vocabulary: the law', () => {
  it('rejection-inversion draws P(k) ∝ k^-a, bounded and unbounded', () => {
    const next = prng32(3);
    const u = () => next() / 4294967296;
    for (const [a, lo, hi] of [[1.07, 1, 40], [1.4, 300, Infinity], [1, 1, 10]] as const) {
      const sampler = new PowerLawSampler(a, lo, hi);
      const draws = 200_000;
      const counts = new Map<number, number>();
      let least = Infinity;
      let most = -Infinity;
      for (let i = 0; i < draws; i++) {
        const k = sampler.sample(u);
        least = Math.min(least, k);
        most = Math.max(most, k);
        counts.set(k, (counts.get(k) ?? 0) + 1);
      }
      expect(least).toBe(lo);
      expect(most).toBeLessThanOrEqual(hi);
      expect(Number.isInteger(most)).toBe(true);
      const total = powerSum(lo, hi, a);
      for (const k of [lo, lo + 1, lo + 5, lo + 20].filter((k) => k <= hi)) {
        const p = k ** -a / total;
        // Within 4 standard deviations of the binomial count.
        expect(Math.abs((counts.get(k) ?? 0) - draws * p)).toBeLessThan(4 * Math.sqrt(draws * p * (1 - p)) + 1);
      }
    }
  });

  it('powerSum agrees with the plain sum', () => {
    let plain = 0;
    for (let r = 5; r <= 100_000; r++) plain += r ** -1.3;
    expect(powerSum(5, 100_000, 1.3)).toBeCloseTo(plain, 9);
  });

  it('the rank law sums to 1 and its expected distinct count matches the plain sum over ranks', () => {
    const l = rankLaw({ K: 3, beta: 0.7 }, 40);
    let total = 0;
    let distinct = 0;
    const n = 50_000;
    // Ranks past 10^7 are all but unseen at n = 50,000 (n·P(r) < 1e-4 each); their mass is added in closed form.
    for (let r = 1; r <= 1e7; r++) {
      const p = rankProbability(l, r);
      total += p;
      distinct += -Math.expm1(-n * p);
    }
    const rest = l.c * 40 ** (l.tailA - l.headS) * powerSum(1e7 + 1, Infinity, l.tailA);
    expect(total + rest).toBeCloseTo(1, 6);
    expect(Math.abs(expectedDistinct(l, n) - (distinct + n * rest)) / distinct).toBeLessThan(1e-3);
  });

  it("the presets' crossover ranks are what calibration gives, and fit K·n^β within 0.1 % (RMS of the log)", () => {
    for (const preset of Object.values(HEAPS_PRESETS)) {
      const c = calibrateCrossover(preset);
      expect(c.crossover).toBe(preset.crossover);
      expect(c.rmsLog).toBeLessThan(1e-3);
    }
    // A given law: calibrated when called; refused when out of reach (more distinct words than words at 2^16).
    expect(resolveGrowth({ K: 20, beta: 0.4 }).rankLaw.crossover).toBe(calibrateCrossover({ K: 20, beta: 0.4 }).crossover);
    expect(() => resolveGrowth({ K: 100, beta: 0.6 })).toThrow(/--heaps 100,0.6: the generator cannot follow it \(its best fit is off by \d+ % RMS/);
  });

  it('reads --vocabulary and --heaps, one line per mistake', () => {
    expect(parseGrowthOptions(undefined, undefined)).toBe('fixed');
    expect(parseGrowthOptions(undefined, undefined, 'mail')).toBe('mail');
    expect(parseGrowthOptions('html-docs', undefined)).toBe('html-docs');
    expect(parseGrowthOptions(undefined, ' 4.5, 0.6 ')).toEqual({ K: 4.5, beta: 0.6 });
    expect(parseHeaps('2.93,0.7167')).toEqual({ K: 2.93, beta: 0.7167 });
    expect(() => parseGrowthOptions('nope', undefined)).toThrow('--vocabulary: unknown "nope" (known: fixed, mail, html-docs)');
    expect(() => parseGrowthOptions('toString', undefined)).toThrow(UserError);
    expect(() => parseGrowthOptions('mail', '3,0.7')).toThrow('give --vocabulary or --heaps, not both');
    expect(() => parseHeaps('3')).toThrow(/cannot read "3"/);
    expect(() => parseHeaps('0,0.5')).toThrow(/K must be a positive number/);
    expect(() => parseHeaps('3,1.5')).toThrow(/beta must be within 0.3 .. 0.9/);
  });
});

describe('growing vocabulary: the words past the list', () => {
  const { words } = corpusVocabulary();
  const real = new Set(words);

  it('pseudo-words are one-to-one with their number and look like syllables', () => {
    fc.assert(
      fc.property(fc.nat({ max: 2 ** 52 }), fc.nat({ max: 2 ** 52 }), (i, j) => {
        const a = syllableWord(i);
        expect(a).toMatch(/^([bcdfghlmnprstv][aeiou][nrslmt]?){2,}$/);
        if (i !== j) expect(syllableWord(j)).not.toBe(a);
      }),
    );
    expect(syllableWord(0)).toBe(syllableWord(0));
  });

  it('the first 300,000 ranks past the list give 300,000 distinct words, none a word of the list, of every kind', () => {
    const seen = new Set<string>();
    const kinds = { syllables: 0, names: 0, typos: 0, ids: 0, numbers: 0 };
    const ranks = 300_000;
    const bad: string[] = [];
    for (let r = words.length + 1; r <= words.length + ranks; r++) {
      const w = pseudoWord(r, words, real);
      if (!/^[a-z0-9]+$/.test(w) || real.has(w)) bad.push(w);
      seen.add(w);
      if (/^\d+$/.test(w)) kinds.numbers++;
      else if (/\d/.test(w)) kinds.ids++;
      else if (/(sky|wicz|berg|ez|ov|ard|ovic|ek|field|wood)$/.test(w)) kinds.names++;
      else if (/^([bcdfghlmnprstv][aeiou][nrslmt]?){2,}q?$/.test(w)) kinds.syllables++;
      else kinds.typos++;
    }
    expect(bad).toEqual([]);
    // Typos of different words can coincide ("cat" and "bat" both give "hat"): at most 0.02 % here.
    expect(seen.size).toBeGreaterThan(ranks * 0.9998);
    expect(kinds.numbers).toBe(ranks / 10);
    expect(kinds.ids).toBe(ranks / 10);
    for (const k of [kinds.names, kinds.typos]) expect(k).toBeGreaterThan(ranks * 0.08);
    expect(kinds.syllables).toBeGreaterThan(ranks * 0.58);
    expect(pseudoWord(words.length + 1, words, real)).toBe(pseudoWord(words.length + 1, words, real));
  });
});

describe('growing vocabulary: generated crawls', () => {
  it('same seed, same bytes whatever the thread count; file i hangs on its budget only, not on the file count', async () => {
    const a = dir();
    const b = dir();
    const c = dir();
    await generateCorpus({ size: '400KB', seed: 8, output: a, files: 4, threads: 1, growth: 'mail' });
    await generateCorpus({ size: '400KB', seed: 8, output: b, files: 4, threads: 2, growth: 'mail' });
    await generateCorpus({ size: '800KB', seed: 8, output: c, files: 8, threads: 2, growth: 'mail' });
    expect(crawlBytes(a).equals(crawlBytes(b))).toBe(true);
    for (const f of readdirSync(a)) expect(readFileSync(join(c, f)).equals(readFileSync(join(a, f))), f).toBe(true);
    const fixed = dir();
    await generateCorpus({ size: '400KB', seed: 8, output: fixed, files: 4, threads: 1 });
    expect(crawlBytes(fixed).equals(crawlBytes(a))).toBe(false);
  });

  it('the fixed vocabulary is the default, and its bytes are those of the recorded crawls', async () => {
    const out = dir();
    const r = await generateCorpus({ size: '50KB', seed: 1, output: out, files: 1, threads: 1 });
    expect(r.growth).toBe('fixed');
    expect(r.heaps).toBeUndefined();
    // sha256 of `gen-corpus --size 50KB --seed 1 --files 1` before the growing vocabulary existed (commit d988ff6).
    const { createHash } = await import('node:crypto');
    expect(createHash('sha256').update(crawlBytes(out)).digest('hex')).toBe(FIXED_50KB_SHA256);
  });

  // Tolerance: 6 % of K·n^β at every size from 2^15 words on (measured: within 3 % for mail; the
  // titles' redraws of the commonest words add about 1 %).
  for (const name of ['mail', 'html-docs'] as const) {
    it(`${name}: distinct words follow the fitted K·n^β within 6 % (naive token scan)`, async () => {
      const out = dir();
      const r = await generateCorpus({ size: '6MB', seed: 21, output: out, files: 3, threads: 1, growth: name });
      const { K, beta } = HEAPS_PRESETS[name];
      expect(r.heaps).toMatchObject({ K, beta, crossover: HEAPS_PRESETS[name].crossover });
      const at = [2 ** 15, 2 ** 17, 2 ** 19, 2 ** 20];
      const points = distinctAt(out, at);
      expect(points.map((p) => p.n)).toEqual(at);
      for (const { n, v } of points) expect(Math.abs(v / (K * n ** beta) - 1), `n = ${n}: ${v} distinct against ${Math.round(K * n ** beta)}`).toBeLessThan(0.06);
    });
  }

  it('the fixed vocabulary stops growing where the growing one goes on', async () => {
    const fixed = dir();
    await generateCorpus({ size: '6MB', seed: 21, output: fixed, files: 3, threads: 1 });
    const [half, whole] = distinctAt(fixed, [2 ** 19, 2 ** 20]);
    expect(whole!.v).toBeLessThanOrEqual(50_000);
    // Twice the words: the growing vocabulary gains 2^β − 1 = 64 % more words (mail), the fixed one far fewer.
    expect(whole!.v / half!.v).toBeLessThan(1.3);
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
  it('--vocabulary mail writes a growing crawl; a bad --vocabulary or --heaps is one line and exit 1', () => {
    const out = dir();
    const r = gpuindex('gen-corpus', '--size', '100KB', '--seed', '5', '--files', '2', '--vocabulary', 'mail', '-o', out, '--json');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ growth: 'mail', heaps: { K: 2.93, beta: 0.7167 } });
    const human = gpuindex('gen-corpus', '--size', '20KB', '--heaps', '3,0.7', '-o', dir());
    expect(human.status).toBe(0);
    expect(human.stdout).toMatch(/growing \(heaps 3,0.7: V\(n\) = 3·n\^0.7\)/);
    for (const [args, msg] of [[['--vocabulary', 'web'], '--vocabulary: unknown "web"'], [['--heaps', '3'], '--heaps: cannot read "3"'], [['--heaps', '3,0.7', '--vocabulary', 'fixed'], 'not both']] as const) {
      const bad = gpuindex('gen-corpus', '--size', '20KB', ...args, '-o', dir());
      expect(bad.status).toBe(1);
      expect(bad.stderr).toContain(msg);
      expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    }
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
