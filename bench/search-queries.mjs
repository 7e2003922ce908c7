// The queries of the search benchmarks (bench/search.mjs, search-ab.mjs, search-resume.mjs,
// block-codec.mjs): words of the crawl's first documents, drawn by a seeded generator, so the
// scripts run the same queries; and the `--name value` options they take.
import { closeSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';

/** The first `bytes` of the crawl's first file, as documents' texts. */
export function sampleTexts(dir, bytes = 32 << 20) {
  const file = join(dir, readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort()[0]);
  const fd = openSync(file, 'r');
  const buf = Buffer.alloc(bytes);
  const n = readSync(fd, buf, 0, bytes, 0);
  closeSync(fd);
  const lines = buf.toString('utf8', 0, n).split('\n');
  lines.pop();
  return lines.map((l) => JSON.parse(l).text);
}

/** The seeded generator of the queries (an LCG: the same seed, the same queries). */
export function generator(seed) {
  return () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

/**
 * `count` queries of 1-4 words, each a word the index analyses to one term (no stopwords).
 * `tokens`: each word a random token of a random document (frequent words come often, as in a
 * query log); `types`: each word drawn uniformly from the sample's distinct words (mostly rare).
 */
export function makeQueries(reader, texts, sampling, count, rnd) {
  const clean = (w) => w?.toLowerCase().replace(/[^a-z]/g, '');
  let types;
  if (sampling === 'types') types = [...new Set(texts.flatMap((t) => t.split(/\s+/).map(clean)))].filter((w) => w && reader.analyze(w).length === 1).sort();
  const queries = [];
  while (queries.length < count) {
    const n = 1 + Math.floor(rnd() * 4);
    const words = [];
    while (words.length < n) {
      let w;
      if (types) w = types[Math.floor(rnd() * types.length)];
      else {
        const tokens = texts[Math.floor(rnd() * texts.length)].split(/\s+/).filter(Boolean);
        w = clean(tokens[Math.floor(rnd() * tokens.length)]);
      }
      if (w && reader.analyze(w).length === 1 && !words.includes(w)) words.push(w);
    }
    queries.push(words);
  }
  return queries;
}

/** The p-quantile of `t` (0 < p < 1). */
export const pct = (t, p) => {
  const s = [...t].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};

/** `--name value` pairs of the search benchmarks' command lines, as { name: value } (a flag alone: ''). */
export function optionArgs(argv) {
  return Object.fromEntries(
    argv
      .join(' ')
      .split(/\s*--/)
      .filter(Boolean)
      .map((a) => {
        const [k, ...v] = a.split(' ');
        return [k, v.join(' ')];
      }),
  );
}
