#!/usr/bin/env node
/**
 * The sorters side by side as an SVG bar chart: kernel G pairs/s of each GPU sorter at one size,
 * one group of bars per distribution, from `bench-sort --json` (bench/device.sh sorters writes
 * sorters.json), with CUB's keys-only sort beside them where a `bench/cub-sort.py` table is given.
 * The y axis is logarithmic: the sorters differ by up to 70x.
 *
 *   node bench/sorters-plot.mjs sorters.json [--cub cub.md] [--log2 24] > sorters.svg
 */
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const opt = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const report = JSON.parse(readFileSync(args[0], 'utf8'));
const n = 2 ** Number(opt('--log2', '24'));
const order = ['bsn', 'radix', 'adaptive', 'oddeven'];
const names = { bsn: 'network (bsn)', radix: 'radix', adaptive: 'adaptive bitonic', oddeven: 'odd-even merge', cub: 'CUB keys (cupy.sort)' };
const colors = { bsn: '#1f77b4', radix: '#d62728', adaptive: '#2ca02c', oddeven: '#9467bd', cub: '#7f7f7f' };

const rate = new Map(); // `${sorter} ${dist}` -> G pairs/s
for (const r of report.rows) if (r.n === n && r.sorter !== 'cpu') rate.set(`${r.sorter} ${r.distribution}`, r.kernelMpairsPerS / 1000);
const cubPath = opt('--cub');
const sorters = order.filter((s) => [...rate.keys()].some((k) => k.startsWith(`${s} `)));
if (cubPath) {
  for (const line of readFileSync(cubPath, 'utf8').split('\n')) {
    const c = line.split('|').map((x) => x.trim());
    if (c[1]?.startsWith('cupy.sort') && c[2] === `2^${Math.log2(n)}`) rate.set(`cub ${c[3]}`, Number(c[6]));
  }
  sorters.push('cub');
}
const dists = [...new Set(report.rows.filter((r) => r.n === n && r.sorter !== 'cpu').map((r) => r.distribution))];

const W = 760, H = 360, left = 60, right = 170, top = 30, bottom = 50;
const lo = 0.1, hi = 100; // G pairs/s, log scale
const y = (v) => top + (H - top - bottom) * (1 - (Math.log10(Math.max(lo, v)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo)));
const groupW = (W - left - right) / dists.length;
const barW = (groupW * 0.8) / sorters.length;
const out = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="11">`,
  `<text x="${left}" y="18" font-size="13">Kernel G pairs/s at 2^${Math.log2(n)} pairs (log scale), ${report.adapter?.device ?? ''}</text>`];
for (const v of [0.1, 1, 10, 100]) {
  out.push(`<line x1="${left}" x2="${W - right}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`, `<text x="${left - 6}" y="${y(v) + 4}" text-anchor="end">${v}</text>`);
}
dists.forEach((d, i) => {
  const x0 = left + i * groupW + groupW * 0.1;
  sorters.forEach((s, j) => {
    const v = rate.get(`${s} ${d}`);
    if (v === undefined) return;
    out.push(`<rect x="${(x0 + j * barW).toFixed(1)}" y="${y(v).toFixed(1)}" width="${(barW - 1).toFixed(1)}" height="${(H - bottom - y(v)).toFixed(1)}" fill="${colors[s]}"><title>${names[s]}, ${d}: ${v.toFixed(2)} G pairs/s</title></rect>`);
  });
  out.push(`<text x="${(left + (i + 0.5) * groupW).toFixed(1)}" y="${H - bottom + 16}" text-anchor="middle">${d}</text>`);
});
sorters.forEach((s, j) => {
  out.push(`<rect x="${W - right + 12}" y="${top + j * 18}" width="12" height="12" fill="${colors[s]}"/>`, `<text x="${W - right + 30}" y="${top + j * 18 + 10}">${names[s]}</text>`);
});
out.push('</svg>');
process.stdout.write(out.join('\n') + '\n');
