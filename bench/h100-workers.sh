#!/usr/bin/env bash
# Worker count and GC threading on the 2 GB synthetic crawl (issue 4), gpu+ builds, alternating:
#   run: carry [".device", "dist"], command: source .device/prelude.sh && bash bench/h100-workers.sh
set -uo pipefail
OUT=${OUT:-$PWD/h100-out}; mkdir -p "$OUT"
export XDG_RUNTIME_DIR=/tmp/xdg; mkdir -p "$XDG_RUNTIME_DIR"
crawl=/tmp/crawl
log() { echo "[$(date +%T)] $*" | tee -a "$OUT/log.txt"; }
if [ ! -d $crawl ]; then
  log "gen-corpus"; node dist/src/cli.js gen-corpus --size 2GB --seed 1 --file-size 8MB -o $crawl | tail -1 | tee -a "$OUT/log.txt"
fi
build() { # tag, node flags, build args
  local tag=$1 flags=$2; shift 2
  rm -rf /tmp/idx-w
  node $flags dist/src/cli.js build $crawl -o /tmp/idx-w --block-size 16777216 --memory 4GiB --pipeline gpu+ --json "$@" > "$OUT/w-$tag.json" 2> "$OUT/w-$tag.err"
  log "$tag rc=$? $(node -e '
const s=require(process.argv[1]); const p=Object.entries(s.stages).filter(([k])=>k.startsWith("parser")).map(([,v])=>v);
const busy=p.map(v=>v.busyMs/1000); const avg=busy.reduce((a,b)=>a+b,0)/busy.length; const blk=p.map(v=>v.blockedMs/1000).reduce((a,b)=>a+b,0)/p.length; const mb=s.bytesRead/1e6; const t=s.timings;
console.log(`workers ${s.workers} total ${(t.totalMs/1000).toFixed(2)} s = ${(mb/(t.totalMs/1000)).toFixed(0)} MB/s; setup ${(t.setupMs/1000).toFixed(2)} parse+sort ${(t.parseSortMs/1000).toFixed(2)} merge ${(t.mergeMs/1000).toFixed(2)} finish ${(t.finishMs/1000).toFixed(2)}; parser busy avg ${avg.toFixed(2)} blocked ${blk.toFixed(2)}; fill ${(s.stages.fill.busyMs/1000).toFixed(2)} sort ${(s.stages.sort.busyMs/1000).toFixed(2)} writer ${(s.stages.writer.busyMs/1000).toFixed(2)}`)' "$OUT/w-$tag.json" 2>&1) sha $(sha256sum /tmp/idx-w/postings.bin | cut -c1-12)"
}
for round in 1 2; do
  build w15-$round "" --workers 15
  build w12-$round "" --workers 12
  build w13-$round "" --workers 13
  build w10-$round "" --workers 10
  build w15-stgc-$round "--single-threaded-gc" --workers 15
  build w12-stgc-$round "--single-threaded-gc" --workers 12
done
log done
