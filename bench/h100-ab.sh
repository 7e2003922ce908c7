#!/usr/bin/env bash
# A/B of builds of gpuindex on the H100 2 GB crawl, alternating, gpu+, three rounds:
# build the baseline commit into dist-old/ (untracked, so the device tool carries it), then
#   run: carry [".device", "dist", "dist-old"], command: source .device/prelude.sh && bash bench/h100-ab.sh
# Knobs: DISTS (the builds compared, in order; default "dist-old dist"), ROUNDS (3),
# ONEFILE=1 (the same crawl as one 2 GB JSONL file), TAG (prefix of the result files), WARM=0
# (no first build to start the GPU, for a second call on a warm machine), EXTRA (more build flags).
set -uo pipefail
OUT=${OUT:-/tmp/about}; mkdir -p $OUT; export XDG_RUNTIME_DIR=/tmp/xdg; mkdir -p $XDG_RUNTIME_DIR
crawl=/tmp/crawl
[ -d $crawl ] || node dist/src/cli.js gen-corpus --size 2GB --seed 1 --file-size 8MB -o $crawl > /dev/null
if [ "${ONEFILE:-0}" = 1 ]; then mkdir -p /tmp/onefile; [ -f /tmp/onefile/crawl.jsonl ] || cat $crawl/*.jsonl > /tmp/onefile/crawl.jsonl; crawl=/tmp/onefile; fi
tag=${TAG:-ab}
[ "${WARM:-1}" = 0 ] || node dist/src/cli.js build $crawl -o /tmp/idx-warm --block-size 16777216 --memory 4GiB --force --json > /dev/null 2>&1  # first GPU start
for round in $(seq 1 ${ROUNDS:-3}); do for d in ${DISTS:-dist-old dist}; do
  rm -rf /tmp/idx; node $d/src/cli.js build $crawl -o /tmp/idx --block-size 16777216 --memory 4GiB --pipeline gpu+ ${EXTRA:-} --json > $OUT/$tag-$d-$round.json 2>/dev/null
  node -e 'const s=require(process.argv[1]);const p=Object.entries(s.stages).filter(([k])=>k.startsWith("parser")).map(([k,v])=>v);const avg=f=>(p.reduce((a,v)=>a+(v[f]??0),0)/p.length/1000).toFixed(2);console.log(`${process.argv[2].padEnd(8)} round ${process.argv[3]}: total ${(s.timings.totalMs/1000).toFixed(2)} s (${(s.bytesRead/1e6/(s.timings.totalMs/1000)).toFixed(0)} MB/s), parse+sort ${(s.timings.parseSortMs/1000).toFixed(2)}, merge ${(s.timings.mergeMs/1000).toFixed(2)}, setup ${(s.timings.setupMs/1000).toFixed(2)}, finish ${(s.timings.finishMs/1000).toFixed(2)}; parser avg busy ${avg("busyMs")} idle ${avg("idleMs")} blocked ${avg("blockedMs")}; started ${Math.min(...p.map(v=>v.startedAtMs??NaN)).toFixed(0)}-${Math.max(...p.map(v=>v.startedAtMs??NaN)).toFixed(0)} ms, first batch ${Math.min(...p.map(v=>v.firstBatchAtMs??NaN)).toFixed(0)}-${Math.max(...p.map(v=>v.firstBatchAtMs??NaN)).toFixed(0)} ms, last ${Math.min(...p.map(v=>v.lastBatchAtMs??NaN)).toFixed(0)}-${Math.max(...p.map(v=>v.lastBatchAtMs??NaN)).toFixed(0)} ms; fill ${(s.stages.fill.busyMs/1000).toFixed(2)} wait ${((s.stages.fill.batchWaitMs??0)/1000).toFixed(2)}; merge threads ${((s.merge.threadsMs??NaN)/1000).toFixed(2)} s, append ${((s.merge.appendMs??NaN)/1000).toFixed(2)} s`)' $OUT/$tag-$d-$round.json $d $round | tee -a $OUT/$tag.txt
  node bench/tail-summary.mjs $OUT/$tag-$d-$round.json | tee -a $OUT/$tag.txt
  sha256sum /tmp/idx/postings.bin | cut -c1-16 | tee -a $OUT/$tag.txt
done; done
