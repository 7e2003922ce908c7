#!/usr/bin/env node
// One line per `gpuindex build --json` file, for the device benchmarks (bench/device.sh).
// Usage: node bench/build-summary.mjs [--parsers] [--memory] build.json ...
//   default    total s (MB/s), parse+sort, merge (threads), setup, finish, pipeline, workers, blocks,
//              terms, index MB, peak RSS
//   --parsers  also the parse workers (busy avg/min/max, blocked, MB/s per worker, when they started,
//              sent their first and last batch), the main thread's fill, the sort and writer stages and
//              the merge threads
//   --memory   also the memory plan: baseline, peak RSS, dictionary, working set against the budget
//   --cpu      also the CPU time of the parse+sort phase by thread group (the summary's `cpu`)
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const parsers = args.includes('--parsers');
const memory = args.includes('--memory');
const cpu = args.includes('--cpu');
const s3 = (ms) => (ms === undefined || ms === null || Number.isNaN(ms) ? '?' : (ms / 1000).toFixed(2));
const range = (values) => {
  const v = values.filter((x) => typeof x === 'number');
  return v.length ? `${Math.min(...v).toFixed(0)}..${Math.max(...v).toFixed(0)}` : '?';
};

for (const file of args.filter((a) => !a.startsWith('--'))) {
  let s;
  try {
    s = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    console.log(`${file}: no build summary (${e.message.split('\n')[0]})`);
    continue;
  }
  const t = s.timings;
  const mb = s.bytesRead / 1e6;
  const M = 2 ** 20;
  const parts = [
    `${s3(t.totalMs)} s total (${(mb / (t.totalMs / 1000)).toFixed(0)} MB/s)`,
    `parse+sort ${s3(t.parseSortMs)}`,
    `merge ${s3(t.mergeMs)} (${s.merge?.threads ?? '?'} threads)`,
    `setup ${s3(t.setupMs)}`,
    `finish ${s3(t.finishMs)}`,
    `pipeline ${s.pipeline}, ${s.workers} workers, ${s.blocks} blocks, ${s.terms} terms${s.lexiconGenerations !== undefined ? ` (${s.lexiconGenerations} lexicon generations)` : ''}`,
    `index ${(s.indexBytes / 1e6).toFixed(1)} MB, peak RSS ${(s.peakRssBytes / M).toFixed(0)} MiB`,
  ];
  if (parsers) {
    const p = Object.entries(s.stages ?? {})
      .filter(([k]) => /^parser\d+$/.test(k))
      .map(([, v]) => v);
    if (p.length) {
      const busy = p.map((v) => v.busyMs);
      const avg = busy.reduce((a, b) => a + b, 0) / busy.length;
      const blocked = p.reduce((a, v) => a + (v.blockedMs ?? 0), 0) / p.length;
      parts.push(
        `parsers busy avg ${s3(avg)} (${s3(Math.min(...busy))}..${s3(Math.max(...busy))}) blocked ${s3(blocked)} s, ${(mb / p.length / (avg / 1000)).toFixed(1)} MB/s per worker`,
        `started ${range(p.map((v) => v.startedAtMs))} ms, first batch ${range(p.map((v) => v.firstBatchAtMs))} ms, last ${range(p.map((v) => v.lastBatchAtMs))} ms`,
      );
      if (p.some((v) => v.blockWaitMs !== undefined)) {
        const mean = (k) => p.reduce((a, v) => a + (v[k] ?? 0), 0) / p.length;
        parts.push(`waiting for handed-over blocks avg ${s3(mean('blockWaitMs'))} s parsing, ${s3(mean('endWaitMs'))} s at the end`);
      }
    }
    const st = s.stages ?? {};
    if (st.fill) parts.push(`fill ${s3(st.fill.busyMs)} s, waiting for batches ${s3(st.fill.batchWaitMs ?? 0)} s`);
    parts.push(`sort ${s3(st.sort?.busyMs)} s, writer ${s3(st.writer?.busyMs)} s`);
    if (s.merge?.threadsMs !== undefined) parts.push(`merge threads ${s3(s.merge.threadsMs)} s, append ${s3(s.merge.appendMs)} s`);
  }
  if (memory && s.memory) {
    const m = s.memory;
    parts.push(
      `memory: block ${m.blockPairs} pairs, baseline ${(m.baselineBytes / M).toFixed(0)}, peak ${(m.peakRssBytes / M).toFixed(1)}, dictionary ${(m.dictionaryBytes / M).toFixed(1)}, working set ${(m.workingSetBytes / M).toFixed(1)} of ${(m.budgetBytes / M).toFixed(0)} MiB, ${s.merge?.runs ?? '?'} runs`,
    );
  }
  if (cpu && s.cpu) parts.push(`cpu ${JSON.stringify(s.cpu)}`);
  console.log(parts.join('; '));
}
