#!/usr/bin/env bash
# One gpu+ build of the 2 GB crawl under `node --cpu-prof` (main thread, every parse and merge
# worker), plus the top self-time functions of the main thread and of one parse worker.
#   run: carry [".device", "dist"], command: source .device/prelude.sh && bash bench/h100-profile.sh [build args]
set -uo pipefail
OUT=${OUT:-$PWD/h100-out}; mkdir -p "$OUT"; export XDG_RUNTIME_DIR=/tmp/xdg; mkdir -p $XDG_RUNTIME_DIR
crawl=/tmp/crawl
[ -d $crawl ] || node dist/src/cli.js gen-corpus --size 2GB --seed 1 --file-size 8MB -o $crawl > /dev/null
rm -rf /tmp/idx-p /tmp/prof; mkdir -p /tmp/prof
node --cpu-prof --cpu-prof-dir=/tmp/prof dist/src/cli.js build $crawl -o /tmp/idx-p --block-size 16777216 --memory 4GiB --pipeline gpu+ --json "$@" > $OUT/profile-build.json 2>/dev/null
cat > /tmp/top.mjs <<'JS'
import { readFileSync } from 'node:fs';
const p = JSON.parse(readFileSync(process.argv[2]));
const byId = new Map(p.nodes.map((n) => [n.id, n])); const self = new Map(); let total = 0;
for (let i = 0; i < p.samples.length; i++) { const n = byId.get(p.samples[i]); const f = n.callFrame; const k = `${f.functionName || '(anon)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber}`; self.set(k, (self.get(k) ?? 0) + p.timeDeltas[i]); total += p.timeDeltas[i]; }
console.log(`${process.argv[2].split('/').pop()}: ${(total / 1000).toFixed(0)} ms sampled`);
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`${(v / 1000).toFixed(1).padStart(9)}  ${k}`);
JS
ls -S /tmp/prof | head -3 > /dev/null
for f in $(ls /tmp/prof | sort | head -2); do node /tmp/top.mjs /tmp/prof/$f; done > $OUT/profile-top.txt 2>&1
tar czf $OUT/profiles.tgz -C /tmp/prof .
