#!/usr/bin/env bash
# Parse-worker scaling on the H100 machine (issue 4: why a worker parses 2-3x slower there than
# alone on the 2-core dev machine). Builds 512 MB of the 2 GB synthetic crawl with 1..15 workers
# and reports each build's per-worker parse rate (MB per busy second), plus CPU topology.
#   run: carry [".device", "dist"], command: source .device/prelude.sh && bash bench/h100-scaling.sh
set -uo pipefail
OUT=${OUT:-$PWD/h100-out}; mkdir -p "$OUT"
export XDG_RUNTIME_DIR=/tmp/xdg; mkdir -p "$XDG_RUNTIME_DIR"
cli="node dist/src/cli.js"
crawl=/tmp/crawl
log() { echo "[$(date +%T)] $*" | tee -a "$OUT/log.txt"; }
lscpu > "$OUT/lscpu.txt" 2>&1; log "$(grep -E '^(Model name|Thread|Core|Socket|CPU\(s\)|L2|L3)' "$OUT/lscpu.txt" | tr -s ' ' | tr '\n' ';')"
if [ ! -d $crawl ]; then
  log "gen-corpus"; $cli gen-corpus --size 2GB --seed 1 --file-size 8MB -o $crawl | tail -1 | tee -a "$OUT/log.txt"
fi
sub=/tmp/crawl512; mkdir -p $sub; ls $crawl | head -64 | while read f; do ln -f $crawl/$f $sub/$f; done
build() { # tag, env..., -- args
  local tag=$1; shift
  rm -rf /tmp/idx-s
  env "$@" $cli build ${CRAWL:-$sub} -o /tmp/idx-s --block-size 16777216 --memory 4GiB --pipeline gpu+ --json ${ARGS:-} > "$OUT/scale-$tag.json" 2> "$OUT/scale-$tag.err"
  log "$tag rc=$? $(node -e '
const s=require(process.argv[1]); const p=Object.entries(s.stages).filter(([k])=>k.startsWith("parser")).map(([,v])=>v);
const busy=p.map(v=>v.busyMs/1000); const avg=busy.reduce((a,b)=>a+b,0)/busy.length; const mb=s.bytesRead/1e6;
console.log(`workers ${s.workers} total ${(s.timings.totalMs/1000).toFixed(2)} s parse+sort ${(s.timings.parseSortMs/1000).toFixed(2)} s busy avg ${avg.toFixed(2)} min ${Math.min(...busy).toFixed(2)} max ${Math.max(...busy).toFixed(2)} s => ${(mb/p.length/avg).toFixed(1)} MB/s per worker, ${(mb/(s.timings.parseSortMs/1000)).toFixed(0)} MB/s parse+sort`)' "$OUT/scale-$tag.json" 2>&1)"
}
for w in 1 2 4 8 12 15; do ARGS="--workers $w" build w$w; done
ARGS="--workers 15" build w15-v8pool16 NODE_OPTIONS=--v8-pool-size=16
ARGS="--workers 15" build w15-uv16 UV_THREADPOOL_SIZE=16
ARGS="--workers 8" build w8-again
ARGS="--workers 15" build w15-again
log done
