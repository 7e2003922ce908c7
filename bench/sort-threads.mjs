#!/usr/bin/env node
// N threads each sort 2.5 M pairs at once (after a barrier), as a build's parse workers sort their
// last blocks together: the sorter's code cold or warmed up (warmUpRadixSort, where the dist has
// it), its scratch fresh or touched first. Usage: node bench/sort-threads.mjs [dist] [threads]
import { Worker, isMainThread, workerData, parentPort } from 'node:worker_threads';
import { resolve } from 'node:path';
const dist = resolve(process.argv[2] ?? 'dist');
if (isMainThread) {
  const n = Number(process.argv[3] ?? 15);
  for (const mode of ['cold-fresh', 'warm-fresh', 'cold-touched', 'warm-touched', 'warm-touched-gc']) {
    const sab = new SharedArrayBuffer(8); const flag = new Int32Array(sab);
    const ws = Array.from({ length: n }, () => new Worker(new URL(import.meta.url), { workerData: { mode, sab, dist } }));
    let ready = 0; const times = [];
    await new Promise((res) => ws.forEach((w) => w.on('message', (m) => { if (m === 'ready') { if (++ready === n) { Atomics.store(flag, 0, 1); Atomics.notify(flag, 0); } } else { times.push(m); if (times.length === n) res(); } })));
    times.sort((a, b) => a - b);
    console.log(mode.padEnd(16), n, 'threads: sort ms min/median/max', times[0].toFixed(0), times[n >> 1].toFixed(0), times[n - 1].toFixed(0));
    await Promise.all(ws.map((w) => w.terminate()));
  }
} else {
  const { radixSortPairs, warmUpRadixSort } = await import(dist + '/indexer/sort/cpu-sorter.js');
  const { mode, sab } = workerData;
  if (mode.startsWith('warm')) warmUpRadixSort?.();
  const V = 30000, n = 2_500_000;
  const keys = new Uint32Array(V); for (let i = 0; i < V; i++) keys[i] = (i * 7919) % V;
  const p = new Uint32Array(2 * n); let d = 0, s = 7;
  for (let i = 0; i < n; i++) { s = (Math.imul(s, 1103515245) + 12345) >>> 0; const r = s / 2 ** 32; p[2 * i] = Math.floor(r * r * r * V); if ((s & 255) === 0) d++; p[2 * i + 1] = d; }
  const scratch = new Uint32Array(2 * 3_400_000);
  if (mode.includes('touched')) scratch.fill(1, 0, 2 * n);
  if (mode.endsWith('gc')) { const junk = []; for (let i = 0; i < 200; i++) junk.push(new Array(10000).fill(i)); }
  parentPort.postMessage('ready');
  Atomics.wait(new Int32Array(sab), 0, 0);
  const t = performance.now(); radixSortPairs(p, n, scratch, keys); parentPort.postMessage(performance.now() - t);
}
