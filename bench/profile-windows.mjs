#!/usr/bin/env node
/**
 * What every thread of one process did over time, from its V8 CPU profiles (node --cpu-prof
 * --cpu-prof-dir=DIR ...: one file a thread, on one clock): for each thread, its busy share in
 * windows of `--window` ms from the earliest profile's start, and from `--from` ms on the top
 * functions by self time in each window. Shows where a build's tail goes, thread by thread.
 *   node bench/profile-windows.mjs [--window 100] [--from 0] [--top 3] DIR/*.cpuprofile
 */
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const opt = { window: 100, from: 0, top: 3 };
while (args[0]?.startsWith('--')) {
  opt[args[0].slice(2)] = Number(args[1]);
  args.splice(0, 2);
}
const IDLE = new Set(['(idle)', '(program)', '(garbage collector)']);
const profiles = args.map((file) => ({ file, p: JSON.parse(readFileSync(file, 'utf8')) }));
const origin = Math.min(...profiles.map(({ p }) => p.startTime));
for (const { file, p } of profiles) {
  const nodes = new Map(p.nodes.map((n) => [n.id, n.callFrame]));
  const windows = new Map();
  let t = p.startTime;
  p.samples.forEach((id, i) => {
    t += p.timeDeltas[i];
    const f = nodes.get(id);
    const w = Math.floor((t - origin) / 1000 / opt.window);
    const win = windows.get(w) ?? { busy: 0, gc: 0, all: 0, self: new Map() };
    windows.set(w, win);
    const dt = p.timeDeltas[i] / 1000;
    win.all += dt;
    if (f.functionName === '(garbage collector)') win.gc += dt;
    if (IDLE.has(f.functionName)) return;
    win.busy += dt;
    const key = `${f.functionName || '(anon)'} ${f.url.split('/').slice(-1)[0]}:${f.lineNumber + 1}`;
    win.self.set(key, (win.self.get(key) ?? 0) + dt);
  });
  const keys = [...windows.keys()].sort((a, b) => a - b);
  console.log(`${file.split('/').pop()}: ${((p.startTime - origin) / 1000).toFixed(0)}..${((p.endTime - origin) / 1000).toFixed(0)} ms`);
  console.log('  busy %: ' + keys.map((w) => `${w * opt.window}:${Math.round((100 * windows.get(w).busy) / opt.window)}${windows.get(w).gc > opt.window / 10 ? `g${Math.round((100 * windows.get(w).gc) / opt.window)}` : ''}`).join(' '));
  for (const w of keys) {
    if (w * opt.window < opt.from) continue;
    const top = [...windows.get(w).self].sort((a, b) => b[1] - a[1]).slice(0, opt.top);
    if (top.length) console.log(`  ${w * opt.window}: ${top.map(([k, ms]) => `${k} ${ms.toFixed(0)}`).join(' | ')}`);
  }
}
