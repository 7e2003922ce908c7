#!/usr/bin/env bash
# The H100 benchmark of issue 4, as run through the `device` tool (see docs/benchmarks.md):
#   bash ../shared/device/pack.sh   (after npm ci && npm run build)
#   run: carry [".device", "dist"], command: source .device/prelude.sh && bash bench/h100.sh [builds|table|memory|onefile|all]
# Knobs: DIST (the build to run, default dist), REPEAT (bench table), MEMORY_CASES (e.g. "1GiB"), TAG.
# Writes everything under $OUT (or ./h100-out).
set -uo pipefail
OUT=${OUT:-$PWD/h100-out}; mkdir -p "$OUT"
export XDG_RUNTIME_DIR=/tmp/xdg; mkdir -p "$XDG_RUNTIME_DIR"
what=${1:-all}
cli="node ${DIST:-dist}/src/cli.js"
crawl=/tmp/crawl
log() { echo "[$(date +%T)] $*" | tee -a "$OUT/log.txt"; }
log "nproc $(nproc); $(node --version); $(uname -r)"
$cli gpu-info --json > "$OUT/gpu-info.json" 2>&1 || true
if [ ! -d $crawl ]; then
  log "gen-corpus"; /usr/bin/time -v $cli gen-corpus --size 2GB --seed 1 --file-size 8MB -o $crawl 2> "$OUT/gen.time" | tee -a "$OUT/log.txt"
fi
build() { # name, extra args
  local name=$1; shift
  rm -rf /tmp/idx-$name
  /usr/bin/time -v $cli build $crawl -o /tmp/idx-$name --block-size 16777216 --memory 4GiB --json "$@" > "$OUT/build-$name.json" 2> "$OUT/build-$name.err"
  log "build $name rc=$? $(node -e 'const s=require(process.argv[1]);const mb=s.bytesRead/1e6;console.log(`${(s.timings.totalMs/1000).toFixed(2)} s total, ${(mb/(s.timings.totalMs/1000)).toFixed(0)} MB/s, parse+sort ${(s.timings.parseSortMs/1000).toFixed(2)} s, merge ${(s.timings.mergeMs/1000).toFixed(2)} s (${s.merge.threads} threads), pipeline ${s.pipeline}, peak RSS ${(s.peakRssBytes/2**20).toFixed(0)} MiB`)' "$OUT/build-$name.json" 2>&1)"
  sha256sum /tmp/idx-$name/postings.bin | cut -c1-16 | sed "s/^/  postings.bin sha /" | tee -a "$OUT/log.txt"
}
if [ "$what" = builds ] || [ "$what" = all ]; then
  build gpuplus --pipeline gpu+
  GPUINDEX_CREDITS=2 build gpuplus-credits2 --pipeline gpu+
  GPUINDEX_CREDITS=16 build gpuplus-credits16 --pipeline gpu+
  build gpuplus-merge1 --pipeline gpu+ --merge-threads 1
  build gpuplus-again --pipeline gpu+
  build cpu --pipeline cpu
  build gpu --pipeline gpu
  $cli verify /tmp/idx-gpuplus >> "$OUT/log.txt" 2>&1; log "verify rc=$?"
  rm -rf /tmp/idx-*
fi
if [ "$what" = table ] || [ "$what" = all ]; then
  log "bench table"
  $cli bench $crawl --sizes 5 --repeat ${REPEAT:-3} --block-size 16777216 --memory 4GiB -o "$OUT/bench" > "$OUT/bench.log" 2>&1; log "bench rc=$?"
  tail -12 "$OUT/bench.log" | tee -a "$OUT/log.txt"
fi
if [ "$what" = memory ] || [ "$what" = all ]; then
  mkdir -p /tmp/crawl1g; ls $crawl | head -125 | while read f; do ln -f $crawl/$f /tmp/crawl1g/$f; done
  for m in ${MEMORY_CASES:-"1GiB" "2GiB" "512MiB --workers 4" "384MiB"}; do
    rm -rf /tmp/idx-m; tag=${TAG:-}$(echo "$m" | tr -d ' -')
    $cli build /tmp/crawl1g -o /tmp/idx-m --memory $m --json > "$OUT/memory-$tag.json" 2> "$OUT/memory-$tag.err"
    log "memory $m rc=$? $(tail -2 "$OUT/memory-$tag.err" | tr '\n' ' ') $(node -e 'const s=require(process.argv[1]);const M=2**20,m=s.memory;console.log(`workers ${s.workers} merge threads ${s.merge.threads} runs ${s.merge.runs} block ${m.blockPairs} baseline ${(m.baselineBytes/M).toFixed(0)} peak ${(m.peakRssBytes/M).toFixed(1)} dict ${(m.dictionaryBytes/M).toFixed(1)} working ${(m.workingSetBytes/M).toFixed(1)} of ${m.budgetBytes/M} MiB, ${(s.timings.totalMs/1000).toFixed(2)} s`)' "$OUT/memory-$tag.json" 2>&1)"
  done
fi
if [ "$what" = onefile ] || [ "$what" = all ]; then
  # One 2 GB JSONL file: the parse is cut into line-aligned ranges so every worker has work.
  mkdir -p /tmp/onefile; cat $crawl/*.jsonl > /tmp/onefile/crawl.jsonl
  crawl=/tmp/onefile
  build onefile-gpuplus --pipeline gpu+
  GPUINDEX_RANGE_BYTES=1000000000000 build onefile-norange --pipeline gpu+
  rm -rf /tmp/idx-* /tmp/onefile
fi
log done
