/**
 * A synthetic crawl generator for benchmarks: JSONL files (`{"id","title","text"}` a line)
 * whose words follow a Zipf law over a vocabulary and whose document lengths follow a
 * log-normal law (median 300 words, sigma 0.9: a heavy tail).
 *
 * Vocabulary: the words of corpus-samples/moby-dick/chapters.jsonl ranked by their frequency
 * there (a built-in list of common English words when that file is missing), extended to
 * 50,000 types by deterministic morphological variants (suffixes and prefixes with English
 * spelling rules) and compounds, each ranked by a pseudo-frequency derived from its base word,
 * so variants of frequent words sit among the real mid-frequency words as they do in a crawl.
 * Then one of two laws (`growth`):
 * - 'fixed' (the default): Zipf s = 1.07 over those 50,000 words; the crawl's vocabulary stops
 *   growing after its first megabytes. The crawls of the recorded figures used it.
 * - a growing vocabulary ('mail', 'html-docs' or a given K, β): Heaps' law V(n) = K·n^β
 *   fitted to the real crawl of that name (gen-corpus-growth.ts; mail K = 2.93, β = 0.7167;
 *   html-docs K = 6.69, β = 0.6023; docs/benchmarks.md), over an unbounded rank space whose
 *   ranks past the 50,000 words are pseudo-words, names, typos, identifiers and numbers made
 *   from the rank (gen-corpus-words.ts).
 *
 * Deterministic: file i depends only on (seed, i, vocabulary, growth, its byte budget), never
 * on the number of threads, so files are written in parallel by worker threads. Ranks are
 * sampled in O(1) (a Walker/Vose alias table; rejection-inversion for the growing tail) and
 * words copied as pre-encoded bytes into a large buffer.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, writeSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { UserError } from './shared/errors.js';
import { PowerLawSampler, ZIPF_HEAD_S, resolveGrowth, type RankLaw, type VocabularyGrowth } from './gen-corpus-growth.js';
import { pseudoWord } from './gen-corpus-words.js';

export interface GenCorpusOptions {
  /** Total bytes to write: a number of bytes or a size such as '1GB', '500MB', '2GiB'. */
  size: string | number;
  /** Any safe integer; the same seed gives the same bytes. */
  seed: number;
  /** Folder to write; it must be missing or empty. */
  output: string;
  /** Number of files. Default: one per ~64 MB (at least 1). */
  files?: number;
  /** Bytes per file instead of `files` (e.g. '8MB'); ignored when `files` is given. */
  fileBytes?: string | number;
  /** Words by rank (most frequent first). Default: corpusVocabulary(vocabularySize). */
  vocabulary?: string[];
  /** Types in the default vocabulary. Default 50,000. */
  vocabularySize?: number;
  /** Worker threads writing files. Default: min(files, cores). 1 writes on the calling thread. */
  threads?: number;
  /**
   * The vocabulary's law: 'fixed' (Zipf over the vocabulary only, the default) or a growing
   * one following Heaps' law: 'mail', 'html-docs' (fitted to those crawls) or a given K, β.
   */
  growth?: VocabularyGrowth;
}

export interface GenCorpusResult {
  output: string;
  files: number;
  bytes: number;
  documents: number;
  words: number;
  vocabulary: number;
  /** Where the vocabulary came from: 'moby-dick', 'built-in' or 'given'. */
  vocabularySource: string;
  /** 'fixed', 'mail', 'html-docs' or 'heaps K,beta'. */
  growth: string;
  /** A growing vocabulary's law: Heaps' K and β, and the rank law drawn from (gen-corpus-growth.ts). */
  heaps?: { K: number; beta: number; crossover: number; headShare: number };
  ms: number;
}

export const ZIPF_S = ZIPF_HEAD_S;
export const DEFAULT_FILE_BYTES = 64e6;
export const DEFAULT_VOCABULARY_SIZE = 50_000;
/** Log-normal document lengths in words: median and sigma of ln(length). */
export const LENGTH_MEDIAN = 300;
export const LENGTH_SIGMA = 0.9;
const MIN_WORDS = 5;
const MAX_WORDS = 100_000;
/** Smallest file budget: a few documents' worth. */
const MIN_FILE_BYTES = 1024;

const SIZE_UNITS: Record<string, number> = {
  '': 1, b: 1, k: 1e3, kb: 1e3, kib: 1024, m: 1e6, mb: 1e6, mib: 1024 ** 2, g: 1e9, gb: 1e9, gib: 1024 ** 3, t: 1e12, tb: 1e12, tib: 1024 ** 4,
};

/** Parses '1GB', '500MB', '2GiB', '1.5g', '100000' into bytes (decimal units; KiB/MiB/GiB binary). */
export function parseSize(value: string | number, what = '--size'): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || !(value >= 1)) throw new UserError(`${what} must be a positive number of bytes, got ${value}`);
    return Math.floor(value);
  }
  const m = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*([a-z]*)\s*$/i.exec(String(value));
  const unit = m ? SIZE_UNITS[m[2]!.toLowerCase()] : undefined;
  const bytes = m && unit !== undefined ? Math.floor(Number(m[1]) * unit) : NaN;
  if (!(bytes >= 1)) throw new UserError(`${what}: cannot read "${value}" (examples: 1GB, 500MB, 2GiB, 100000)`);
  return bytes;
}

// ---------------------------------------------------------------------------------------------
// PRNG: sfc32 seeded through splitmix32 (same numbers on every platform, no Math.random).

function splitmix32(state: { x: number }): number {
  state.x = (state.x + 0x9e3779b9) | 0;
  let z = state.x;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/** A 32-bit generator (sfc32) for a seed and a stream number: returns uint32 values. */
export function prng32(seed: number, stream = 0): () => number {
  if (!Number.isSafeInteger(seed)) throw new UserError(`--seed must be an integer, got ${seed}`);
  const st = { x: (seed | 0) ^ Math.imul(Math.floor(seed / 2 ** 32) | 0, 0x27d4eb2d) };
  const s2 = { x: Math.imul(stream | 0, 0x165667b1) ^ 0x5bd1e995 };
  let a = splitmix32(st) ^ splitmix32(s2);
  let b = splitmix32(st) ^ splitmix32(s2);
  let c = splitmix32(st) ^ splitmix32(s2);
  let d = 1;
  const next = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
  for (let i = 0; i < 12; i++) next();
  return next;
}

/** Uniform in [0, 1) from a 32-bit generator (53 bits). */
function uniform(next: () => number): number {
  return ((next() >>> 5) * 67108864 + (next() >>> 6)) / 9007199254740992;
}

// ---------------------------------------------------------------------------------------------
// Vocabulary.

/** Used when corpus-samples/moby-dick is not there (a fresh checkout before the samples land). */
const BUILT_IN_WORDS = (
  'the of and to a in is that for it as was with be by on not he i this are or his from at which but have an they you were her ' +
  'she there been one all we their has would when if will more no so what out up who about into them can time some could other than ' +
  'then its only two may these first new any my like now over also such after our most made very where before years through back ' +
  'much well great should because each people how those way many down even state world same being just still own here between ' +
  'life both under never day without another while last might know house must part however again against place old home since ' +
  'number right small long large often until end upon system called water work found high important children side thought left ' +
  'around few form country different city name family given went every during less following school others used water light ' +
  'night sea ship whale captain harpoon ocean sail crew boat deck island shore wind storm wave voyage sailor harbour mast rope ' +
  'anchor island coast river mountain forest field road town village market church king queen war peace army power law court ' +
  'government public private money business company market trade price value cost report research study science history art ' +
  'music book story letter word language question answer problem reason idea fact point case example order group member ' +
  'friend father mother brother sister child woman man girl boy body head hand eye face heart mind voice foot blood fire air ' +
  'earth stone tree flower bird animal horse dog fish food bread wine table chair door window room wall floor street garden ' +
  'morning evening summer winter spring autumn year month week hour minute moment century age death birth love fear hope joy'
).split(' ');

/** Affixes of the variant generator: suffix (with a spelling rule) or prefix, and a weight. */
const AFFIXES: { affix: string; prefix?: boolean; weight: number }[] = [
  { affix: 's', weight: 0.12 }, { affix: 'ed', weight: 0.06 }, { affix: 'ing', weight: 0.06 }, { affix: 'er', weight: 0.04 },
  { affix: 'ly', weight: 0.03 }, { affix: 'ness', weight: 0.015 }, { affix: 'less', weight: 0.012 }, { affix: 'ful', weight: 0.01 },
  { affix: 'able', weight: 0.01 }, { affix: 'ment', weight: 0.008 }, { affix: 'ist', weight: 0.006 }, { affix: 'ism', weight: 0.005 },
  { affix: 'ize', weight: 0.005 }, { affix: 'ish', weight: 0.005 }, { affix: 'ward', weight: 0.003 }, { affix: 'est', weight: 0.008 },
  { affix: 'un', prefix: true, weight: 0.02 }, { affix: 're', prefix: true, weight: 0.02 }, { affix: 'over', prefix: true, weight: 0.006 },
  { affix: 'under', prefix: true, weight: 0.005 }, { affix: 'non', prefix: true, weight: 0.005 }, { affix: 'pre', prefix: true, weight: 0.005 },
  { affix: 'out', prefix: true, weight: 0.004 }, { affix: 'mis', prefix: true, weight: 0.004 }, { affix: 'sub', prefix: true, weight: 0.003 },
  { affix: 'anti', prefix: true, weight: 0.002 },
];
const VOWEL = /[aeiou]/;

/** English spelling for word + suffix: drop a final e before a vowel, y -> i, "es" after sibilants. */
export function inflect(word: string, suffix: string): string {
  const last = word[word.length - 1]!;
  if (suffix === 's') {
    if (/(s|x|z|ch|sh)$/.test(word)) return word + 'es';
    if (last === 'y' && !VOWEL.test(word[word.length - 2] ?? 'a')) return word.slice(0, -1) + 'ies';
    return word + 's';
  }
  if (VOWEL.test(suffix[0]!)) {
    if (last === 'e' && suffix !== 'ing') return word.slice(0, -1) + suffix;
    if (last === 'e' && suffix === 'ing' && !/(ee|ye|oe)$/.test(word)) return word.slice(0, -1) + suffix;
    if (last === 'y' && !VOWEL.test(word[word.length - 2] ?? 'a') && suffix !== 'ing' && suffix !== 'ish') return word.slice(0, -1) + 'i' + suffix;
  } else if (last === 'y' && !VOWEL.test(word[word.length - 2] ?? 'a') && suffix !== 'ward') return word.slice(0, -1) + 'i' + suffix;
  return word + suffix;
}

function readMobyDickCounts(): Map<string, number> | undefined {
  const candidates = [
    new URL('../../corpus-samples/moby-dick/chapters.jsonl', import.meta.url), // dist/src/gen-corpus.js
    new URL('../corpus-samples/moby-dick/chapters.jsonl', import.meta.url), // src/gen-corpus.ts
  ].map((u) => fileURLToPath(u));
  const path = candidates.find((p) => existsSync(p));
  if (!path) return undefined;
  const counts = new Map<string, number>();
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    let text: unknown;
    try {
      text = (JSON.parse(line) as { text?: unknown }).text;
    } catch {
      continue;
    }
    if (typeof text !== 'string') continue;
    for (const w of text.toLowerCase().match(/[a-z]+/g) ?? []) {
      if (w.length === 1 && w !== 'a' && w !== 'i') continue;
      counts.set(w, (counts.get(w) ?? 0) + 1);
    }
  }
  return counts.size ? counts : undefined;
}

const byCountThenWord = (a: [string, number], b: [string, number]) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

/**
 * The default vocabulary, most frequent first: Moby-Dick's words (or the built-in list) ranked
 * by frequency, then deterministic variants and compounds up to `size` types, no duplicates.
 */
export function corpusVocabulary(size = DEFAULT_VOCABULARY_SIZE): { words: string[]; source: 'moby-dick' | 'built-in' } {
  if (!Number.isInteger(size) || size < 1) throw new UserError(`vocabulary size must be a positive integer, got ${size}`);
  const real = readMobyDickCounts();
  const source = real ? 'moby-dick' : 'built-in';
  // The built-in list is in rough frequency order already: give it Zipf-like pseudo-counts.
  const counts = real ?? new Map(BUILT_IN_WORDS.map((w, i) => [w, 1e5 / (i + 1)] as [string, number]));
  const ranked = [...counts.entries()].sort(byCountThenWord);
  if (ranked.length >= size) return { words: ranked.slice(0, size).map(([w]) => w), source };
  const seen = new Set(ranked.map(([w]) => w));
  const extra: [string, number][] = [];
  // Variants come from words that look like base forms: not the function words of the top
  // ranks, not short, not already inflected (plurals, -ed, -ing, -ly, ...).
  const inflected = /(s|ed|ing|ly|est|ness|ful|less|ish|ment|self|selves)$/;
  const bases = ranked.filter(([w], i) => i >= Math.min(150, ranked.length >> 2) && w.length >= 4 && !inflected.test(w));
  const add = (w: string, f: number) => {
    if (seen.has(w)) return;
    seen.add(w);
    extra.push([w, f]);
  };
  for (const { affix, prefix, weight } of AFFIXES) {
    for (const [w, f] of bases) add(prefix ? affix + w : inflect(w, affix), f * weight);
  }
  // Affixes stacked on the commonest bases (un...able, re...ing, ...lessness), then compounds.
  for (const [w, f] of bases.slice(0, 3000)) {
    add('un' + inflect(w, 'able'), f * 0.0005);
    add('re' + inflect(w, 'ing'), f * 0.0005);
    add(inflect(inflect(w, 'less'), 'ness'), f * 0.0003);
  }
  const need = size - ranked.length;
  const nb = Math.max(1, Math.min(bases.length, 4000));
  for (let i = 0; extra.length < need && i < need * 4 + 1000; i++) {
    const [a, fa] = bases[(i * 7919) % nb] ?? ranked[i % ranked.length]!;
    const [b, fb] = bases[(i * 104_729 + 17) % nb] ?? ranked[(i * 31) % ranked.length]!;
    if (a === b) continue;
    add(a + b, Math.min(fa, fb) * 1e-4);
  }
  // Still short (tiny base list, huge size): numbered forms, which always exist.
  for (let i = 0; extra.length < need; i++) add(`${ranked[i % ranked.length]![0]}${Math.floor(i / ranked.length) + 2}`, 1e-9);
  extra.sort(byCountThenWord);
  const all = ranked.concat(extra).sort(byCountThenWord);
  return { words: all.slice(0, size).map(([w]) => w), source };
}

// ---------------------------------------------------------------------------------------------
// Sampling.

/** Zipf probabilities over ranks 1..v with exponent s. */
export function zipfProbabilities(v: number, s = ZIPF_S): Float64Array {
  const p = new Float64Array(v);
  let sum = 0;
  for (let r = 0; r < v; r++) sum += p[r] = 1 / (r + 1) ** s;
  for (let r = 0; r < v; r++) p[r]! /= sum;
  return p;
}

/** Vose's alias table: one uint32 draw picks a column (high part) and a coin (low part). */
export class AliasTable {
  readonly n: number;
  /** Threshold in [0, 2^32) per column, scaled so `frac32 < threshold` keeps the column. */
  private readonly prob: Float64Array;
  private readonly alias: Uint32Array;

  constructor(p: Float64Array) {
    const n = (this.n = p.length);
    this.prob = new Float64Array(n);
    this.alias = new Uint32Array(n);
    const scaled = new Float64Array(n);
    const small: number[] = [];
    const large: number[] = [];
    for (let i = 0; i < n; i++) {
      scaled[i] = p[i]! * n;
      (scaled[i]! < 1 ? small : large).push(i);
    }
    while (small.length && large.length) {
      const s = small.pop()!;
      const l = large.pop()!;
      this.prob[s] = scaled[s]!;
      this.alias[s] = l;
      scaled[l] = scaled[l]! + scaled[s]! - 1;
      (scaled[l]! < 1 ? small : large).push(l);
    }
    for (const i of large) (this.prob[i] = 1), (this.alias[i] = i);
    for (const i of small) (this.prob[i] = 1), (this.alias[i] = i);
  }

  /** A rank from two uint32 draws (column and coin independent). */
  sample(next: () => number): number {
    const col = Math.floor((next() / 4294967296) * this.n);
    return next() / 4294967296 < this.prob[col]! ? col : this.alias[col]!;
  }
}

// ---------------------------------------------------------------------------------------------
// Writing one file.

interface EncodedVocabulary {
  bytes: Uint8Array;
  offsets: Uint32Array;
  lengths: Uint16Array;
}

function encodeVocabulary(words: string[]): EncodedVocabulary {
  const parts = words.map((w) => Buffer.from(JSON.stringify(w).slice(1, -1), 'utf8'));
  const bytes = Buffer.concat(parts);
  const offsets = new Uint32Array(words.length);
  const lengths = new Uint16Array(words.length);
  let o = 0;
  parts.forEach((p, i) => {
    if (p.length === 0 || p.length > 0xffff) throw new UserError(`vocabulary word ${i} is empty or longer than 65,535 bytes`);
    offsets[i] = o;
    lengths[i] = p.length;
    o += p.length;
  });
  return { bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length), offsets, lengths };
}

export function fileName(index: number): string {
  return `part-${String(index).padStart(5, '0')}.jsonl`;
}

interface FileTask {
  output: string;
  seed: number;
  index: number;
  bytes: number;
}

interface FileResult {
  bytes: number;
  documents: number;
  words: number;
}

const BUF_BYTES = 8 << 20;
const TITLE_MIN_RANK = 50;

/**
 * Where the words come from: ranks (0-based) drawn by `sample`, whose bytes are the encoded
 * vocabulary's below its size and `extraWord(rank)` at or past it (the growing vocabulary).
 */
interface WordSource {
  v: EncodedVocabulary;
  sample(next: () => number): number;
  extraWord?: (rank: number) => string;
}

/** The fixed vocabulary: the alias table of Zipf s = 1.07 over its words. */
function fixedSource(v: EncodedVocabulary, words: number): WordSource {
  const table = new AliasTable(zipfProbabilities(words));
  return { v, sample: (next) => table.sample(next) };
}

/**
 * The growing vocabulary: a coin between the head (ranks 1..R, alias table) and the tail
 * (R+1..∞, rejection-inversion); ranks past the word list are pseudo-words.
 */
function growingSource(v: EncodedVocabulary, words: string[], law: RankLaw): WordSource {
  // An alias table of a large head would cost 12 bytes a rank in every thread.
  const headTable = law.crossover <= 1 << 20 ? new AliasTable(zipfProbabilities(law.crossover, law.headS)) : undefined;
  const headLaw = new PowerLawSampler(law.headS, 1, law.crossover);
  const head = { sample: (next: () => number) => (headTable ? headTable.sample(next) : headLaw.sample(() => uniform(next)) - 1) };
  const tail = new PowerLawSampler(law.tailA, law.crossover + 1, Infinity);
  const headBelow = law.headShare * 4294967296;
  const real = new Set(words);
  return {
    v,
    sample: (next) => (next() < headBelow ? head.sample(next) : tail.sample(() => uniform(next)) - 1),
    extraWord: (rank) => pseudoWord(rank + 1, words, real),
  };
}

/**
 * Writes file `index` of the crawl: documents until the byte budget is used, the last one cut
 * short to fit, so the file is within a few dozen bytes of `bytes` (never over).
 */
function writeOneFile(task: FileTask, source: WordSource): FileResult {
  const next = prng32(task.seed, task.index + 1);
  const { bytes: wb, offsets, lengths } = source.v;
  const known = lengths.length;
  const extraWord = source.extraWord;
  const buf = Buffer.allocUnsafe(BUF_BYTES);
  const fd = openSync(join(task.output, fileName(task.index)), 'w');
  let pos = 0;
  let written = 0;
  let documents = 0;
  let words = 0;
  const flush = () => {
    let off = 0;
    while (off < pos) off += writeSync(fd, buf, off, pos - off);
    written += pos;
    pos = 0;
  };
  // A word past the encoded vocabulary: its text (ASCII letters and digits, no JSON escapes).
  let extra = '';
  const lengthOf = (r: number): number => (r < known ? lengths[r]! : (extra = extraWord!(r)).length);
  const put = (r: number, wl: number) => {
    if (r < known) {
      const o = offsets[r]!;
      for (let k = 0; k < wl; k++) buf[pos++] = wb[o + k]!;
    } else pos += buf.write(extra, pos, 'latin1');
  };
  const budget = task.bytes;
  const CLOSE = 3; // "}\n and the closing quote
  try {
    for (;;) {
      const used = written + pos;
      const head = `{"id":"gen-${task.seed}-${task.index}-${documents}","title":"`;
      // Room for the head, a short title, the text key, a few words and the close?
      if (budget - used < head.length + 64) break;
      // Lengths: log-normal (Box-Muller), at least MIN_WORDS.
      const u1 = uniform(next) || 2 ** -53;
      const u2 = uniform(next);
      const g = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
      const len = Math.min(MAX_WORDS, Math.max(MIN_WORDS, Math.round(LENGTH_MEDIAN * Math.exp(LENGTH_SIGMA * g))));
      const titleLen = 2 + (next() % 7);
      if (pos + head.length + 64 > BUF_BYTES) flush();
      pos += buf.write(head, pos, 'latin1');
      // Title: content words (ranks past the function words), redrawn a few times at most.
      let limit = budget - written - CLOSE - 12; // leave room for ","text":" and one word
      for (let t = 0; t < titleLen; t++) {
        let r = source.sample(next);
        for (let k = 0; k < 4 && r < TITLE_MIN_RANK; k++) r = source.sample(next);
        const wl = lengthOf(r);
        if (pos + wl + 1 > limit - 16) break;
        if (pos + wl + 1 > BUF_BYTES) {
          flush();
          limit = budget - written - CLOSE - 12;
        }
        if (t > 0) buf[pos++] = 0x20;
        put(r, wl);
      }
      if (pos + 10 > BUF_BYTES) flush();
      pos += buf.write('","text":"', pos, 'latin1');
      limit = budget - written - CLOSE;
      for (let i = 0; i < len; i++) {
        const r = source.sample(next);
        const wl = lengthOf(r);
        if (pos + wl + 1 > limit) break; // the budget's last document is cut short
        if (pos + wl + 1 + CLOSE > BUF_BYTES) {
          flush();
          limit = budget - written - CLOSE;
        }
        if (i > 0) buf[pos++] = 0x20;
        put(r, wl);
        words++;
      }
      buf[pos++] = 0x22; // "
      buf[pos++] = 0x7d; // }
      buf[pos++] = 0x0a; // \n
      documents++;
    }
    flush();
  } finally {
    closeSync(fd);
  }
  return { bytes: written, documents, words };
}

// ---------------------------------------------------------------------------------------------
// The generator.

interface WorkerInit {
  __genCorpus: true;
  words: string[];
  /** The growing vocabulary's rank law; absent for the fixed one. */
  rankLaw?: RankLaw;
}

function wordSource(words: string[], rankLaw: RankLaw | undefined): WordSource {
  const v = encodeVocabulary(words);
  return rankLaw ? growingSource(v, words, rankLaw) : fixedSource(v, words.length);
}

function workerScript(): URL | undefined {
  // This module compiled, by name: from a bundle that inlines it (dist/src/cli.js,
  // scripts/bundle.mjs) import.meta.url is the bundle, which must not run as the worker.
  const beside = new URL('./gen-corpus.js', import.meta.url);
  if (existsSync(fileURLToPath(beside))) return beside;
  // Running from the TypeScript sources (the tests): the compiled module, when built.
  const compiled = new URL('../dist/src/gen-corpus.js', import.meta.url);
  return existsSync(fileURLToPath(compiled)) ? compiled : undefined;
}

export async function generateCorpus(o: GenCorpusOptions): Promise<GenCorpusResult> {
  const t0 = performance.now();
  if (!o || typeof o !== 'object') throw new UserError('gen-corpus options are required');
  const total = parseSize(o.size, '--size');
  if (!Number.isSafeInteger(o.seed)) throw new UserError(`--seed must be an integer, got ${o.seed}`);
  if (!o.output) throw new UserError('an output folder is required (-o <dir>)');
  let files: number;
  if (o.files !== undefined) {
    if (!Number.isInteger(o.files) || o.files < 1) throw new UserError(`--files must be a positive integer, got ${o.files}`);
    files = o.files;
  } else {
    const per = o.fileBytes !== undefined ? parseSize(o.fileBytes, '--file-size') : DEFAULT_FILE_BYTES;
    files = Math.max(1, Math.round(total / per));
  }
  if (total / files < MIN_FILE_BYTES)
    throw new UserError(`--size ${total} bytes is too small for ${files} file(s): each file needs at least ${MIN_FILE_BYTES} bytes`);
  let words: string[];
  let vocabularySource: string;
  if (o.vocabulary !== undefined) {
    if (!Array.isArray(o.vocabulary) || o.vocabulary.length === 0 || o.vocabulary.some((w) => typeof w !== 'string' || w === '' || /\s/.test(w)))
      throw new UserError('vocabulary must be a non-empty array of words without spaces');
    words = o.vocabulary;
    vocabularySource = 'given';
  } else {
    const v = corpusVocabulary(o.vocabularySize ?? DEFAULT_VOCABULARY_SIZE);
    words = v.words;
    vocabularySource = v.source;
  }
  const growth = o.growth ?? 'fixed';
  const resolved = growth === 'fixed' ? undefined : resolveGrowth(growth);
  if (existsSync(o.output) && readdirSync(o.output).length > 0) throw new UserError(`output folder is not empty: ${o.output}`);
  mkdirSync(o.output, { recursive: true });

  // Budgets: equal shares, the remainder spread over the first files.
  const base = Math.floor(total / files);
  const budgetOf = (i: number) => base + (i < total - base * files ? 1 : 0);
  const tasks: FileTask[] = Array.from({ length: files }, (_, i) => ({ output: o.output, seed: o.seed, index: i, bytes: budgetOf(i) }));
  const threads = Math.max(1, Math.min(files, o.threads ?? availableParallelism()));
  const script = threads > 1 ? workerScript() : undefined;
  const results: FileResult[] = [];
  if (!script) {
    const source = wordSource(words, resolved?.rankLaw);
    for (const t of tasks) results.push(writeOneFile(t, source));
  } else {
    let nextTask = 0;
    await Promise.all(
      Array.from({ length: threads }, () =>
        new Promise<void>((resolve, reject) => {
          const w = new Worker(script, { workerData: { __genCorpus: true, words, rankLaw: resolved?.rankLaw } satisfies WorkerInit });
          const give = () => {
            if (nextTask < tasks.length) w.postMessage(tasks[nextTask++]);
            else void w.terminate().then(() => resolve());
          };
          w.on('message', (m: FileResult | { error: string }) => {
            if ('error' in m) {
              void w.terminate();
              reject(new Error(m.error));
              return;
            }
            results.push(m);
            give();
          });
          w.once('error', reject);
          w.once('online', give);
        }),
      ),
    );
  }
  return {
    output: o.output,
    files,
    bytes: results.reduce((s, r) => s + r.bytes, 0),
    documents: results.reduce((s, r) => s + r.documents, 0),
    words: results.reduce((s, r) => s + r.words, 0),
    vocabulary: words.length,
    vocabularySource,
    growth: resolved?.name ?? 'fixed',
    ...(resolved ? { heaps: { K: resolved.law.K, beta: resolved.law.beta, crossover: resolved.rankLaw.crossover, headShare: resolved.rankLaw.headShare } } : {}),
    ms: Math.round(performance.now() - t0),
  };
}

if (!isMainThread && parentPort && (workerData as WorkerInit | undefined)?.__genCorpus) {
  const init = workerData as WorkerInit;
  const source = wordSource(init.words, init.rankLaw);
  const port = parentPort;
  port.on('message', (t: FileTask) => {
    try {
      port.postMessage(writeOneFile(t, source));
    } catch (err) {
      port.postMessage({ error: (err as Error)?.stack ?? String(err) });
    }
  });
}
