#!/usr/bin/env node
/**
 * What reading positions.bin costs, index against index (the same crawl built by two builds,
 * e.g. positions.bin format 2 and format 3), with this checkout's reader (dist/, which reads
 * both): per round, each index in turn (the order alternated), (1) every posting's positions of
 * the --terms most frequent terms decoded (their lists read before the clock starts), and (2)
 * --phrases two-term phrase queries ("a b", a and b drawn with a fixed seed from the 100 most
 * frequent terms) through IndexReader.search. Prints per round and index the process CPU and
 * wall milliseconds of each, then the medians, positions.bin's bytes, and whether both indexes
 * gave the same positions and the same phrase hits.
 *
 *   node bench/positions-decode.mjs --index <dir> --index <dir> [--rounds 5] [--terms 300] [--phrases 200]
 */
import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';

const o = { rounds: 5, terms: 300, phrases: 200, indexes: [] };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--rounds') o.rounds = Number(argv[++i]);
  else if (a === '--terms') o.terms = Number(argv[++i]);
  else if (a === '--phrases') o.phrases = Number(argv[++i]);
  else if (a === '--index') o.indexes.push(resolve(argv[++i]));
  else throw new Error(`unknown argument ${a}`);
}
if (o.indexes.length < 1) throw new Error('usage: node bench/positions-decode.mjs --index <dir> [--index <dir> ...] [--rounds 5] [--terms 300] [--phrases 200]');

const root = new URL('..', import.meta.url).pathname;
const { openIndex } = await import(join(root, 'dist/src/reader.js'));
const { PositionsFile } = await import(join(root, 'dist/merge/positions-file.js'));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

// The terms: the most frequent of the first index; the phrases: pairs of its 100 most frequent, drawn with a fixed seed.
const first = openIndex(o.indexes[0]);
const byDf = [...first.lexicon()].sort((a, b) => b.df - a.df || (a.term < b.term ? -1 : 1));
first.close();
const terms = byDf.slice(0, o.terms).map((e) => e.term);
let seed = 12345;
const draw = (n) => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) % n;
const top = byDf.slice(0, 100).map((e) => e.term);
const phrases = Array.from({ length: o.phrases }, () => `"${top[draw(top.length)]} ${top[draw(top.length)]}"`);

const opened = o.indexes.map((dir) => {
  const reader = openIndex(dir);
  const file = new PositionsFile(join(dir, 'positions.bin'));
  const lists = terms.map((t) => {
    const e = reader.lexiconEntry(t);
    return { termId: e.termId, list: reader.readList(e) };
  });
  return { dir, reader, file, lists, decode: [], phrase: [], checksum: 0, hits: '' };
});

function decodeAll(x) {
  let sum = 0;
  for (const { termId, list } of x.lists) {
    const cursor = x.file.cursor(termId, list);
    for (let i = 0; i < list.docIds.length; i++) {
      const p = cursor.positionsOf(i);
      sum += p.length + p[p.length - 1];
    }
  }
  return sum;
}

function searchAll(x) {
  let hits = '';
  for (const q of phrases) hits += x.reader.search(q, { k: 10 }).map((h) => h.docId).join(',') + ';';
  return hits;
}

for (let round = 0; round < o.rounds; round++) {
  const order = round % 2 ? [...opened].reverse() : opened;
  for (const x of order) {
    let c = cpuMs();
    let t = performance.now();
    x.checksum = decodeAll(x);
    const decode = { cpu: cpuMs() - c, wall: performance.now() - t };
    c = cpuMs();
    t = performance.now();
    x.hits = searchAll(x);
    const phrase = { cpu: cpuMs() - c, wall: performance.now() - t };
    x.decode.push(decode);
    x.phrase.push(phrase);
    process.stdout.write(`round ${round}  ${x.dir}  decode ${terms.length} terms: cpu ${decode.cpu.toFixed(0)} ms wall ${decode.wall.toFixed(0)} ms  ${phrases.length} phrase queries: cpu ${phrase.cpu.toFixed(0)} ms wall ${phrase.wall.toFixed(0)} ms\n`);
  }
}
for (const x of opened) {
  const m = (k, f) => median(x[k].map((r) => r[f])).toFixed(0);
  process.stdout.write(`${x.dir} (format ${x.file.format}, positions.bin ${(statSync(join(x.dir, 'positions.bin')).size / 1e6).toFixed(1)} MB): decode cpu ${m('decode', 'cpu')} ms wall ${m('decode', 'wall')} ms; phrases cpu ${m('phrase', 'cpu')} ms wall ${m('phrase', 'wall')} ms (medians of ${o.rounds})\n`);
}
process.stdout.write(`same positions: ${opened.every((x) => x.checksum === opened[0].checksum)}; same phrase hits: ${opened.every((x) => x.hits === opened[0].hits)}\n`);
for (const x of opened) {
  x.file.close();
  x.reader.close();
}
