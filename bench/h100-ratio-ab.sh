#!/usr/bin/env bash
# A/B of issue 4's ratio (Indexgpu+ Parse+Sort / parse alone) on the H100 2 GB crawl: rounds of
# `gpuindex bench --sizes 1 --pipelines gpu+ --repeat 2` (parse alone then a gpu+ build, then the
# same the other way round, in one process), one per variant in turn, so that the variants share
# the host's slow and fast moments and neither measurement always comes first.
#   run: carry [".device", "dist", "dist-old"], command: source .device/prelude.sh && bash bench/h100-ratio-ab.sh
# Knobs: VARIANTS (space-separated name:dist[:VAR=value,...]; default "old:dist-old new:dist"),
# ROUNDS (5), BUILDS=1 (first: one gpu+, gpu and cpu build of each dist, postings.bin sha256 and verify).
# Writes $OUT/ratio-ab.txt (every round, then the medians) and $OUT/ratio-ab-details.txt.
set -uo pipefail
OUT=${OUT:-$PWD/h100-out}; mkdir -p "$OUT"
export XDG_RUNTIME_DIR=/tmp/xdg; mkdir -p "$XDG_RUNTIME_DIR"
crawl=/tmp/crawl
[ -d $crawl ] || node dist/src/cli.js gen-corpus --size 2GB --seed 1 --file-size 8MB -o $crawl > /dev/null
VARIANTS=${VARIANTS:-"old:dist-old new:dist"}
if [ "${BUILDS:-1}" = 1 ]; then
  for v in $VARIANTS; do IFS=: read -r name d envs <<< "$v"; for p in gpu+ gpu cpu; do
    rm -rf /tmp/idx
    env ${envs//,/ } node $d/src/cli.js build $crawl -o /tmp/idx --block-size 16777216 --memory 4GiB --pipeline $p --json > /tmp/b.json 2> /tmp/b.err
    echo "build $name $p rc=$? $(node -e 'const s=require("/tmp/b.json");console.log(`${(s.timings.totalMs/1000).toFixed(2)} s, ${(s.bytesRead/1e6/(s.timings.totalMs/1000)).toFixed(0)} MB/s, parse+sort ${(s.timings.parseSortMs/1000).toFixed(2)} s, merge ${(s.timings.mergeMs/1000).toFixed(2)} s, sorter ${s.sorter}, cpu ${JSON.stringify(s.cpu)}`)' 2>&1) postings $(sha256sum /tmp/idx/postings.bin | cut -c1-16) $(node $d/src/cli.js verify /tmp/idx 2>&1 | tail -1)" | tee -a "$OUT/ratio-ab.txt"
    grep -v '^Warning' /tmp/b.err | head -3
  done; done
fi
for round in $(seq 1 ${ROUNDS:-5}); do for v in $VARIANTS; do
  IFS=: read -r name d envs <<< "$v"
  # Two bench rounds: parse alone first (a), then the gpu+ build first (b).
  env ${envs//,/ } node $d/src/cli.js bench $crawl --sizes 1 --pipelines gpu+ --repeat 2 --block-size 16777216 --memory 4GiB > /tmp/ab.log 2>&1
  for n in 1 2; do
    alone=$(grep -o "round $n: parse alone [0-9.]* ms" /tmp/ab.log | grep -o '[0-9.]* ms' | grep -o '[0-9.]*')
    gpu=$(grep -o "round $n: gpu+ parse+sort [0-9.]* ms" /tmp/ab.log | grep -o '[0-9.]* ms' | grep -o '[0-9.]*')
    order=$([ $n = 1 ] && echo a || echo b)
    echo "round $round$order $name: parse alone $alone ms, gpu+ parse+sort $gpu ms, ratio $(node -e "console.log(($gpu/$alone).toFixed(3))")" | tee -a "$OUT/ratio-ab.txt"
  done
  { echo "round $round $name"; grep -E 'parse alone|parse\+sort' /tmp/ab.log | sed 's/^/    /'; } >> "$OUT/ratio-ab-details.txt"
done; done
node -e '
const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n");
const by = {};
for (const l of lines) {
  const m = /^round \d+([ab]?) (\S+): parse alone ([\d.]+) ms, gpu\+ parse\+sort ([\d.]+) ms, ratio ([\d.]+)/.exec(l);
  if (!m) continue;
  for (const key of [m[2], m[1] ? `${m[2]} (${m[1] === "a" ? "parse alone first" : "build first"})` : undefined]) if (key) (by[key] ??= []).push([+m[3], +m[4], +m[5]]);
}
const med = (a) => { const v = [...a].sort((x, y) => x - y), h = v.length >> 1; return v.length % 2 ? v[h] : (v[h - 1] + v[h]) / 2; };
for (const [k, r] of Object.entries(by)) console.log(`${k}: ${r.length} rounds, ratio median ${med(r.map((x) => x[2])).toFixed(3)} (${r.map((x) => x[2].toFixed(3)).join(" / ")}), max ${Math.max(...r.map((x) => x[2])).toFixed(3)}, parse alone median ${med(r.map((x) => x[0])).toFixed(0)} ms, gpu+ median ${med(r.map((x) => x[1])).toFixed(0)} ms`);
' "$OUT/ratio-ab.txt" | tee -a "$OUT/ratio-ab.txt"
