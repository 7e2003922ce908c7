/**
 * A synthetic crawl generator for benchmarks: JSONL files of documents whose words follow a
 * Zipf law over a real vocabulary (the words of corpus-samples, extended with deterministic
 * variants) and whose lengths follow a log-normal law (median about 300 words, heavy tail).
 * Deterministic for a seed: file i depends only on (seed, i), so files can be written in
 * parallel by worker threads and still be identical.
 */
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { UserError } from './errors.js';
import { parseMemory } from './options.js';

export interface GenCorpusOptions {
  /** Total bytes to write, e.g. '1GB'. */
  size: string | number;
  seed: number;
  output: string;
  /** Bytes per file; default 64 MB. */
  fileBytes?: number;
  /** Vocabulary types; default 50,000. */
  vocabularySize?: number;
  /** Parallel writers; default: cores. */
  threads?: number;
}

export interface GenCorpusResult {
  files: number;
  bytes: number;
  documents: number;
  ms: number;
}

const ZIPF_S = 1.07;

/** xoshiro128** seeded by splitmix32: fast, good enough, and the same everywhere. */
export function prng(seed: number): () => number {
  let x = seed >>> 0;
  const split = () => {
    x = (x + 0x9e3779b9) >>> 0;
    let z = x;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = split(), b = split(), c = split(), d = split();
  return () => {
    const r = Math.imul(rotl(Math.imul(b, 5) >>> 0, 7), 9) >>> 0;
    const t = (b << 9) >>> 0;
    c ^= a;
    d ^= b;
    b ^= c;
    a ^= d;
    c ^= t;
    d = rotl(d, 11);
    return r / 4294967296;
  };
}
const rotl = (x: number, k: number): number => ((x << k) | (x >>> (32 - k))) >>> 0;

/** The words of corpus-samples in order of first appearance, extended to `size` types. */
export function baseVocabulary(size: number): string[] {
  const counts = new Map<string, number>();
  const samples = fileURLToPath(new URL('../../corpus-samples/moby-dick/chapters.jsonl', import.meta.url));
  const fromSource = fileURLToPath(new URL('../corpus-samples/moby-dick/chapters.jsonl', import.meta.url));
  const path = existsSync(samples) ? samples : fromSource;
  if (existsSync(path)) {
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      if (!line) continue;
      const text = (JSON.parse(line) as { text: string }).text.toLowerCase();
      for (const w of text.match(/[a-z]+/g) ?? []) counts.set(w, (counts.get(w) ?? 0) + 1);
    }
  }
  // Real words by frequency (ties by first appearance): the Zipf ranks follow real usage.
  const words = [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([w]) => w);
  if (words.length === 0) words.push('whale', 'sea', 'ship', 'captain', 'harpoon', 'ocean', 'sail', 'crew');
  // Deterministic variants (suffixes, compounds) stand in for a large real vocabulary's tail.
  const suffixes = ['s', 'ed', 'ing', 'er', 'ly', 'ness', 'ful', 'ish', 'less', 'ward'];
  const base = words.length;
  for (let i = 0; words.length < size; i++) {
    const w = words[i % base]!;
    const round = Math.floor(i / base);
    words.push(round < suffixes.length ? w + suffixes[round] : w + words[(i * 7919) % base]);
  }
  return words.slice(0, size);
}

/** Cumulative Zipf probabilities over ranks 1..V. */
function zipfCdf(v: number): Float64Array {
  const cdf = new Float64Array(v);
  let sum = 0;
  for (let r = 0; r < v; r++) cdf[r] = sum += 1 / (r + 1) ** ZIPF_S;
  for (let r = 0; r < v; r++) cdf[r]! /= sum;
  return cdf;
}

function sampleRank(cdf: Float64Array, u: number): number {
  let lo = 0;
  let hi = cdf.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cdf[mid]! < u) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Writes file `index` of the crawl; returns [bytes, documents]. */
async function writeFileOf(output: string, seed: number, index: number, bytes: number, vocabulary: string[]): Promise<[number, number]> {
  const rand = prng((seed * 1000003 + index) >>> 0);
  const cdf = zipfCdf(vocabulary.length);
  const byRank = vocabulary;
  const out = createWriteStream(join(output, `part-${String(index).padStart(5, '0')}.jsonl`), { highWaterMark: 4 << 20 });
  let written = 0;
  let docs = 0;
  let chunk: string[] = [];
  let chunkLen = 0;
  while (written < bytes) {
    // Log-normal length: median 300 words, sigma 0.9 (heavy tail), at least 5.
    const g = Math.sqrt(-2 * Math.log(rand() || 1e-12)) * Math.cos(2 * Math.PI * rand());
    const len = Math.max(5, Math.round(Math.exp(Math.log(300) + 0.9 * g)));
    const words: string[] = new Array(len);
    for (let i = 0; i < len; i++) words[i] = byRank[sampleRank(cdf, rand())]!;
    const title = `${words[0]} ${words[1] ?? ''}`.trim();
    const line = `{"id":"gen-${seed}-${index}-${docs}","title":"${title}","text":"${words.join(' ')}"}\n`;
    chunk.push(line);
    chunkLen += line.length;
    written += line.length;
    docs++;
    if (chunkLen > 1 << 22) {
      if (!out.write(chunk.join(''))) await new Promise((r) => out.once('drain', r));
      chunk = [];
      chunkLen = 0;
    }
  }
  out.end(chunk.join(''));
  await new Promise<void>((resolve, reject) => {
    out.on('finish', resolve);
    out.on('error', reject);
  });
  return [written, docs];
}

export async function generateCorpus(o: GenCorpusOptions): Promise<GenCorpusResult> {
  const t0 = performance.now();
  const total = parseMemory(o.size);
  if (!Number.isInteger(o.seed)) throw new UserError(`--seed must be an integer, got ${o.seed}`);
  const fileBytes = o.fileBytes ?? 64e6;
  const files = Math.max(1, Math.ceil(total / fileBytes));
  if (existsSync(o.output) && readdirSync(o.output).length > 0) throw new UserError(`output folder is not empty: ${o.output}`);
  mkdirSync(o.output, { recursive: true });
  const vocabularySize = o.vocabularySize ?? 50_000;
  const threads = Math.max(1, Math.min(files, o.threads ?? availableParallelism()));
  let next = 0;
  let bytes = 0;
  let documents = 0;
  const sizeOf = (i: number) => (i === files - 1 ? total - fileBytes * (files - 1) : fileBytes);
  const script = new URL(import.meta.url);
  const runOne = (i: number): Promise<[number, number]> =>
    threads === 1 || !script.pathname.endsWith('.js')
      ? writeFileOf(o.output, o.seed, i, sizeOf(i), baseVocabulary(vocabularySize))
      : new Promise((resolve, reject) => {
          const w = new Worker(script, { workerData: { output: o.output, seed: o.seed, index: i, bytes: sizeOf(i), vocabularySize } });
          w.once('message', resolve);
          w.once('error', reject);
        });
  await Promise.all(
    Array.from({ length: threads }, async () => {
      while (next < files) {
        const [b, d] = await runOne(next++);
        bytes += b;
        documents += d;
      }
    }),
  );
  return { files, bytes, documents, ms: Math.round(performance.now() - t0) };
}

if (!isMainThread && workerData && (workerData as { vocabularySize?: number }).vocabularySize) {
  const d = workerData as { output: string; seed: number; index: number; bytes: number; vocabularySize: number };
  writeFileOf(d.output, d.seed, d.index, d.bytes, baseVocabulary(d.vocabularySize)).then((r) => parentPort!.postMessage(r));
}
