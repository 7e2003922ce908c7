#!/usr/bin/env node
/**
 * Self time by function of V8 CPU profiles (node --cpu-prof --cpu-prof-dir=DIR ...: one file for
 * the main thread and one per worker), the top N of each:
 *   node bench/profile-summary.mjs [--top 25] DIR/*.cpuprofile
 */
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
let top = 25;
if (args[0] === '--top') {
  top = Number(args[1]);
  args.splice(0, 2);
}
for (const file of args) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const { functionName, url, lineNumber } = nodes.get(id).callFrame;
    const key = `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + profile.timeDeltas[i]);
    total += profile.timeDeltas[i];
  });
  console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled`);
  for (const [key, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${(us / 1000).toFixed(1).padStart(9)}  ${key}`);
}
