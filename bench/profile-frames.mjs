#!/usr/bin/env node
/**
 * Time under named functions in V8 CPU profiles (node --cpu-prof): each sample goes to the
 * innermost of the named frames on its stack, else to (idle), (gc) or (other); the mean over the
 * files given (e.g. a build's parse workers), in ms:
 *   node bench/profile-frames.mjs htmlUtf8ToTextBytes,scanUtf8,inflate DIR/*.cpuprofile
 * Inlined functions may be missing from a stack: their time goes to the frame that inlined them.
 */
import { readFileSync } from 'node:fs';

const [names, ...files] = process.argv.slice(2);
if (!names || files.length === 0) throw new Error('usage: node bench/profile-frames.mjs name,name,... FILE.cpuprofile ...');
const wanted = new Set(names.split(','));
const time = new Map();
let total = 0;
for (const file of files) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  profile.samples.forEach((id, i) => {
    total += profile.timeDeltas[i];
    let key;
    for (let at = id; at !== undefined && key === undefined; at = parent.get(at)) {
      const name = nodes.get(at).callFrame.functionName;
      if (wanted.has(name)) key = name;
    }
    const own = nodes.get(id).callFrame.functionName;
    key ??= own === '(idle)' ? '(idle)' : own === '(garbage collector)' ? '(gc)' : '(other)';
    time.set(key, (time.get(key) ?? 0) + profile.timeDeltas[i]);
  });
}
console.log(`${files.length} profiles, ${(total / 1000 / files.length).toFixed(0)} ms sampled each`);
for (const [key, us] of [...time].sort((a, b) => b[1] - a[1])) console.log(`${(us / 1000 / files.length).toFixed(1).padStart(9)}  ${key}`);
