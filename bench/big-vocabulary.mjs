#!/usr/bin/env node
// A crawl past V8's 2^24 Map entries: --terms distinct terms (default 2^24 + 2^20), 1,000 a
// document, each used once; builds it, verifies it, checks the term count and that the first,
// middle and last terms are found, and prints the build's figures as JSON.
//   node bench/big-vocabulary.mjs [--terms N] [--dir /tmp/big-vocabulary] [--crawl-only] [-- build options...]
// --crawl-only: write DIR/crawl and stop (benchmarks that build it their own way).
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const terms = Number(opt('--terms', 2 ** 24 + 2 ** 20));
const dir = opt('--dir', '/tmp/big-vocabulary');
const extra = args.includes('--') ? args.slice(args.indexOf('--') + 1) : [];
const cli = fileURLToPath(new URL('../dist/src/cli.js', import.meta.url));
// A term the stemmer leaves alone: a letter, base-36 digits, a closing digit.
const term = (i) => `q${i.toString(36)}7`;

rmSync(dir, { recursive: true, force: true });
mkdirSync(join(dir, 'crawl'), { recursive: true });
const out = createWriteStream(join(dir, 'crawl', 'terms.jsonl'));
for (let i = 0, d = 0; i < terms; d++) {
  const words = [];
  for (let k = 0; k < 1000 && i < terms; k++, i++) words.push(term(i));
  if (!out.write(JSON.stringify({ id: `d${d}`, text: words.join(' ') }) + '\n')) await once(out, 'drain');
}
out.end();
await once(out, 'finish');

if (args.includes('--crawl-only')) process.exit(0);
const t0 = Date.now();
const build = spawnSync(process.execPath, [cli, 'build', join(dir, 'crawl'), '-o', join(dir, 'index'), '--force', '--json', ...extra], { encoding: 'utf8', maxBuffer: 1 << 28 });
if (build.status !== 0) {
  console.error(build.stderr);
  process.exit(1);
}
const summary = JSON.parse(build.stdout);
const verify = spawnSync(process.execPath, [cli, 'verify', join(dir, 'index')], { encoding: 'utf8' });
const found = [0, terms >> 1, terms - 1].map((i) => {
  const r = spawnSync(process.execPath, [cli, 'postings', join(dir, 'index'), term(i), '--json'], { encoding: 'utf8' });
  return r.status === 0 && JSON.parse(r.stdout).df === 1;
});
const result = { terms, indexedTerms: summary.terms, lexiconGenerations: summary.lexiconGenerations, blocks: summary.blocks, verified: verify.status === 0, found, buildAndVerifyMs: Date.now() - t0, timings: summary.timings, peakRssBytes: summary.peakRssBytes, memory: summary.memory, bytesRead: summary.bytesRead };
console.log(JSON.stringify(result));
if (summary.terms !== terms || verify.status !== 0 || found.includes(false)) process.exit(1);
