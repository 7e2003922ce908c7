#!/usr/bin/env node
// The tail of a build's parse+sort phase from `build --json` files: what happened after the
// workers' last batches (the time sorting adds past the parse). Usage: node bench/tail-summary.mjs a.json ...
import { readFileSync } from 'node:fs';

for (const file of process.argv.slice(2)) {
  const s = JSON.parse(readFileSync(file, 'utf8'));
  const parsers = Object.entries(s.stages).filter(([k]) => k.startsWith('parser')).map(([, v]) => v);
  const lastWorker = Math.max(...parsers.map((p) => p.lastBatchAtMs ?? 0));
  const end = s.timings.parseSortMs;
  // The blocks in flight at the workers' last batch, and everything after it.
  const since = Math.min(lastWorker, ...(s.timeline ?? []).filter((m) => m.event === 'sort' && m.atMs <= lastWorker).slice(-2).map((m) => m.atMs));
  const events = (s.timeline ?? []).filter((m) => m.atMs >= since).map((m) => `${m.event}${m.pairs !== undefined ? `(${(m.pairs / 2 ** 20).toFixed(2)}Mi)` : ''}@${(m.atMs - lastWorker).toFixed(0)}`);
  console.log(`${file}: parse+sort ${end.toFixed(0)} ms, last worker batch at ${lastWorker.toFixed(0)}, tail ${(end - lastWorker).toFixed(0)} ms; blocks ${s.blocks}; ms after the last worker batch: ${events.join(' ')}`);
}
