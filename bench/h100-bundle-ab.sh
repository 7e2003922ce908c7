#!/usr/bin/env bash
# The bundled CLI and workers (scripts/bundle.mjs) against the same code as tsc writes it, on the
# GPU machine: the 2 GB synthetic crawl built with Indexgpu+ and Indexcpu by each, alternating,
# postings.bin compared, the index verified, and one GpuSort measurement.
#   npm ci && npm run build && npx tsc -p tsconfig.json --outDir .cache/unb   (then copy the
#   scanner's .wasm to .cache/unb/indexer/wasm/ and gpu/kernels to .cache/unb/gpu/)
#   bash ../shared/device/pack.sh
#   run: carry [".device", "dist", ".cache/unb"], command: source .device/prelude.sh && bash bench/h100-bundle-ab.sh
set -uo pipefail
OUT=${OUT:-$PWD/h100-out}; mkdir -p "$OUT"
export XDG_RUNTIME_DIR=/tmp/xdg; mkdir -p "$XDG_RUNTIME_DIR"
log() { echo "[$(date +%T)] $*" | tee -a "$OUT/log.txt"; }
log "nproc $(nproc); $(node --version)"
node dist/src/cli.js gpu-info --json > "$OUT/gpu-info.json" 2>&1; log "gpu-info rc=$?"
node dist/src/cli.js gen-corpus --size 2GB --seed 1 --file-size 8MB -o /tmp/crawl >> "$OUT/log.txt" 2>&1; log "gen rc=$?"
build() { # label, dist, pipeline
  rm -rf /tmp/idx
  node "$2/src/cli.js" build /tmp/crawl -o /tmp/idx --block-size 16777216 --memory 4GiB --pipeline "$3" --json > "$OUT/build-$1.json" 2> "$OUT/build-$1.err"
  local rc=$?
  log "$1 rc=$rc $(node -e 'const s=require(process.argv[1]);console.log(`${(s.timings.totalMs/1000).toFixed(2)} s, parse+sort ${(s.timings.parseSortMs/1000).toFixed(2)} s, merge ${(s.timings.mergeMs/1000).toFixed(2)} s, pipeline ${s.pipeline}`)' "$OUT/build-$1.json" 2>&1) postings $(sha256sum /tmp/idx/postings.bin | cut -c1-16)"
}
for round in 1 2 3; do
  build "bundled-gpuplus-$round" dist gpu+
  build "unbundled-gpuplus-$round" .cache/unb gpu+
done
build bundled-cpu dist cpu
build unbundled-cpu .cache/unb cpu
node dist/src/cli.js verify /tmp/idx >> "$OUT/log.txt" 2>&1; log "verify rc=$?"
node dist/src/cli.js bench-sort --sizes 24 --dist zipf > "$OUT/bench-sort.md" 2>&1; log "bench-sort rc=$?"
tail -4 "$OUT/bench-sort.md" | tee -a "$OUT/log.txt"
