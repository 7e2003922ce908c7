#!/usr/bin/env node
/**
 * Does one GPU sorter's work leave the process's later GPU work slower? bench-sort runs every
 * sorter's distributions in one process; this replays its steps one at a time and times a fixed
 * probe after each: the same 2^24-pair uniform block sorted by the same sorter (kernel ms,
 * median of 7 after 5 unmeasured sorts), so a step after which the probe slows is the culprit.
 *
 *   node bench/sorter-state.mjs [--sorter radix|bsn] [--log2 24]
 *
 * Steps: probe; sort a second distribution (zipf); probe; 5 zero-copy sorts (stagingBlock);
 * probe; a second sorter of the same kind in profile mode sorts once; probe; that sorter
 * disposed; probe; BigUint64Array.prototype.sort of the block (bench-sort's reference, 2 s of
 * CPU); probe; 5 s idle; probe; a bitonic-network sorter sorts; probe; 10 s idle; probe.
 * Prints one line per step, with the GPU's clocks, temperature, power and throttle reasons
 * where nvidia-smi is there (read between steps, so while the GPU idles).
 * Not a test: nothing is asserted.
 */
import { execFileSync } from 'node:child_process';
import { openGpu } from '../dist/gpu/device.js';
import { makePairs } from '../dist/gpu/distributions.js';
import { GpuSorter } from '../dist/gpu/gpu-sorter.js';
import { RadixSorter } from '../dist/gpu/radix-sorter.js';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const kind = arg('sorter', 'radix');
const n = 2 ** Number(arg('log2', '24'));
// Each sorter holds one user of the shared device (its dispose() gives it up), as in bench-sort.
async function context() {
  const ctx = await openGpu();
  if (typeof ctx === 'string') throw new Error(ctx);
  return ctx;
}
const make = async (options = {}) => {
  const ctx = await context();
  return kind === 'radix' ? new RadixSorter(ctx, options) : new GpuSorter(ctx, options);
};
const uniform = makePairs('uniform', n, 42);
const zipf = makePairs('zipf', n, 42);

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
async function kernelMs(sorter, block, reps = 7, unmeasured = 5) {
  const ms = [];
  for (let i = 0; i < unmeasured + reps; i++) {
    const t = await sorter.sortBlock(block, n, () => {});
    if (i >= unmeasured) ms.push(t.kernelMs ?? t.totalMs);
  }
  return median(ms).toFixed(2);
}

const a = await make();
await a.compile();
function smi() {
  try {
    const q = 'clocks.sm,clocks.mem,temperature.gpu,power.draw,clocks_throttle_reasons.active';
    return execFileSync('nvidia-smi', [`--query-gpu=${q}`, '--format=csv,noheader'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'no nvidia-smi';
  }
}
const line = async (step) => console.log(`${kind} 2^${Math.log2(n)} | ${step} | probe (uniform) ${await kernelMs(a, uniform)} ms | ${smi()}`);
const idle = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
await line('first');
console.log(`${kind} 2^${Math.log2(n)} | zipf | ${await kernelMs(a, zipf)} ms`);
await line('after zipf');
for (let i = 0; i < 5; i++) {
  const view = await a.stagingBlock(n);
  view.set(uniform);
  await a.sortBlock(view, n, () => {});
}
await line('after 5 zero-copy sorts');
const profiler = await make({ profile: true });
await profiler.compile();
const prof = await profiler.sortBlock(uniform, n, () => {});
console.log(`${kind} 2^${Math.log2(n)} | profiled sort | ${prof.kernelMs?.toFixed(2)} ms | ${JSON.stringify(prof.byKind)}`);
await line('after a profiled sort by a second sorter');
profiler.dispose();
await line('after that sorter is disposed');
const keys = new BigUint64Array(n);
for (let i = 0; i < n; i++) keys[i] = (BigInt(uniform[2 * i]) << 32n) | BigInt(uniform[2 * i + 1]);
keys.sort();
await line('after BigUint64Array.prototype.sort');
await idle(5000);
await line('after 5 s idle');
const network = new GpuSorter(await context());
await network.compile();
console.log(`${kind} 2^${Math.log2(n)} | a bsn sorter | ${await kernelMs(network, uniform)} ms`);
network.dispose();
await line('after a bsn sorter ran and was disposed');
await idle(10_000);
await line('after 10 s idle');
a.dispose();
