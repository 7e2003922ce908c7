// The union of parse workers' lexicons (merge/lexicon-union.ts) alone: W sorted lists of N terms
// each, a share of them common to all lists and the rest each list's own (as a growing
// vocabulary gives), united on 1 thread and on every core, alternated.
//   node bench/lexicon-union.mjs [--workers 15] [--terms 330000] [--common 0.3] [--rounds 3]
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { byteLexicon, uniteLexicons, uniteRange } from '../dist/merge/lexicon-union.js';

const { values } = parseArgs({ options: { workers: { type: 'string', default: '15' }, terms: { type: 'string', default: '330000' }, common: { type: 'string', default: '0.3' }, rounds: { type: 'string', default: '3' } } });
const W = Number(values.workers), N = Number(values.terms), common = Number(values.common);
let seed = 7;
const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
const lists = [];
for (let w = 0; w < W; w++) {
  const set = new Set();
  while (set.size < N) set.add(rnd() < common ? `w${Math.floor(rnd() * 50000)}` : `r${Math.floor(rnd() * 3e7).toString(36)}x${w}`);
  lists.push(byteLexicon([...set].sort(), true));
}
const cores = availableParallelism();
for (let r = 0; r < Number(values.rounds); r++) {
  for (const threads of r % 2 ? [cores, 1] : [1, cores]) {
    const t0 = performance.now();
    const u = await uniteLexicons(lists, threads);
    console.log(`round ${r}: ${threads} thread(s): ${u.count} terms from ${W} lists of ${N}: ${(performance.now() - t0).toFixed(0)} ms`);
  }
}
const finals = lists.map((l) => new Uint32Array(l.ends.length));
const t0 = performance.now();
const one = uniteRange({ lists, finals, starts: lists.map(() => 0), stops: lists.map((l) => l.ends.length) });
const t1 = performance.now();
const terms = one.texts.join('\0').split('\0');
console.log(`one range on this thread: merge ${(t1 - t0).toFixed(0)} ms, split ${(performance.now() - t1).toFixed(0)} ms (${terms.length} terms)`);
