#!/usr/bin/env bash
# The current build (dist) against a base build (.cache/dist-base, any earlier commit) on the
# GPU machine: the 2 GB synthetic crawl built with Indexgpu+ by each, alternating, and a 200 MB
# crawl that fits one block built with Indexcpu; postings.bin compared between the two, the new
# indexes verified, and the same search answered by both. Used for index format 2 and the
# sort-free one-block postings (3babe8e against 3c44c6f, thirteenth session) and for the
# fourteenth session's parse changes (against ecc4b8d) and the fifteenth's (against 9fa670f).
#   npm ci && npm run build && cp -r dist .cache/dist-base (at the base commit), then the current build; bash ../shared/device/pack.sh
#   run: carry [".device", "dist", ".cache/dist-base"], command: source .device/prelude.sh && bash bench/h100-base-ab.sh
# Knobs: ROUNDS (3), ONLY=gpuplus (the 2 GB builds only), OUT.
set -uo pipefail
OUT=${OUT:-$PWD/h100-out}; mkdir -p "$OUT"
ROUNDS=${ROUNDS:-3}; ONLY=${ONLY:-all}
export XDG_RUNTIME_DIR=/tmp/xdg; mkdir -p "$XDG_RUNTIME_DIR"
log() { echo "[$(date +%T)] $*" | tee -a "$OUT/log.txt"; }
log "nproc $(nproc); $(node --version)"
node dist/src/cli.js gen-corpus --size 2GB --seed 1 --file-size 8MB -o /tmp/crawl >> "$OUT/log.txt" 2>&1; log "gen 2GB rc=$?"
node dist/src/cli.js gen-corpus --size 200MB --seed 2 --file-size 8MB -o /tmp/small >> "$OUT/log.txt" 2>&1; log "gen 200MB rc=$?"
build() { # label, dist, crawl, output, pipeline, extra...
  local label=$1 dist=$2 crawl=$3 out=$4 pipeline=$5; shift 5
  rm -rf "$out"
  node "$dist/src/cli.js" build "$crawl" -o "$out" --memory 4GiB --pipeline "$pipeline" --json "$@" > "/tmp/build-$label.json" 2> "/tmp/build-$label.err"
  local rc=$?
  log "$label rc=$rc $(node -e 'const s=require(process.argv[1]);console.log(`${(s.timings.totalMs/1000).toFixed(3)} s, parse+sort ${(s.timings.parseSortMs/1000).toFixed(3)} s, merge ${(s.timings.mergeMs/1000).toFixed(3)} s, blocks ${s.blocks}, terms ${s.terms}, index ${(s.indexBytes/1e6).toFixed(1)} MB, pipeline ${s.pipeline}`)' "/tmp/build-$label.json" 2>&1) postings $(sha256sum "$out/postings.bin" | cut -c1-16)"
}
for round in $(seq 1 "$ROUNDS"); do
  build "new-gpuplus-$round" dist /tmp/crawl /tmp/idx-new gpu+ --block-size 16777216
  build "base-gpuplus-$round" .cache/dist-base /tmp/crawl /tmp/idx-base gpu+ --block-size 16777216
done
node dist/src/cli.js verify /tmp/idx-new >> "$OUT/log.txt" 2>&1; log "verify new 2GB rc=$?"
[ "$ONLY" = gpuplus ] && exit 0
for round in 1 2 3; do
  build "new-cpu-oneblock-$round" dist /tmp/small /tmp/one-new cpu
  build "base-cpu-oneblock-$round" .cache/dist-base /tmp/small /tmp/one-base cpu
done
node dist/src/cli.js verify /tmp/one-new >> "$OUT/log.txt" 2>&1; log "verify new one-block rc=$?"
for q in "time people" "world"; do
  a=$(node dist/src/cli.js search /tmp/one-new "$q" | sha256sum | cut -c1-16); b=$(node .cache/dist-base/src/cli.js search /tmp/one-base "$q" | sha256sum | cut -c1-16)
  log "search '$q': new $a base $b"
done
ls -l /tmp/idx-new /tmp/idx-base /tmp/one-new /tmp/one-base >> "$OUT/log.txt"
