#!/usr/bin/env bash
# V8 platform pool size on the H100 (issue 4): Parse+GpuSort / parse alone at 2 GB, gpu+, with
# node's default --v8-pool-size (4) and smaller ones, alternating rounds of `gpuindex bench`
# (one parse-alone and one gpu+ build per round, both in the same process, so both get the flag):
#   run: carry [".device", "dist"], command: source .device/prelude.sh && bash bench/h100-pool.sh
# Knobs: POOLS (default "default 2 1"), ROUNDS (3). Writes $OUT/pool.txt.
set -uo pipefail
OUT=${OUT:-$PWD/h100-out}; mkdir -p "$OUT"
export XDG_RUNTIME_DIR=/tmp/xdg; mkdir -p "$XDG_RUNTIME_DIR"
crawl=/tmp/crawl
[ -d $crawl ] || node dist/src/cli.js gen-corpus --size 2GB --seed 1 --file-size 8MB -o $crawl > /dev/null
for round in $(seq 1 ${ROUNDS:-3}); do for pool in ${POOLS:-default 2 1}; do
  flag=; [ "$pool" = default ] || flag=--v8-pool-size=$pool
  node $flag dist/src/cli.js bench $crawl --sizes 1 --pipelines gpu+ --repeat 1 --block-size 16777216 --memory 4GiB > /tmp/pool.log 2>&1
  alone=$(grep -o 'parse alone [0-9.]* ms' /tmp/pool.log | grep -o '[0-9.]*' | head -1)
  gpu=$(grep -o 'gpu+ parse+sort [0-9.]* ms' /tmp/pool.log | grep -o '[0-9.]*' | head -1)
  echo "round $round pool $pool: parse alone $alone ms, gpu+ parse+sort $gpu ms, ratio $(node -e "console.log(($gpu/$alone).toFixed(3))")" | tee -a "$OUT/pool.txt"
  grep -E 'parse alone|parse\+sort' /tmp/pool.log | sed 's/^/    /' >> "$OUT/pool.txt"
done; done
