// bench/segment-search.mjs <index> [<index>...]: in-process search latency (300 queries of 1-4 terms,
// top 10, after 30 warm-up queries) of each index, e.g. a joined index against its optimized copy.
import { openIndex } from '../dist/src/index.js';
const dirs = process.argv.slice(2);
const words = ['the','whale','ship','sea','captain','white','harpoon','storm','deck','ocean','boat','oil','crew','night','water','old','man','great','head','side'];
let seed = 3; const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
const queries = Array.from({ length: 300 }, () => Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => words[Math.floor(rnd() * words.length)]).join(' '));
for (const dir of dirs) {
  const r = openIndex(dir);
  for (const q of queries.slice(0, 30)) r.search(q); // warm: lengths loaded, code compiled
  const t = [];
  for (const q of queries) { const s = performance.now(); r.search(q); t.push(performance.now() - s); }
  t.sort((x, y) => x - y);
  console.log(`${dir}: segments ${r.segmentList().length}, p50 ${t[150].toFixed(2)} ms, p95 ${t[285].toFixed(2)} ms, mean ${(t.reduce((x, y) => x + y) / t.length).toFixed(2)} ms`);
  r.close();
}
