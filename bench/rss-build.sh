#!/bin/bash
# One build with its resident memory sampled every RSS_EVERY seconds (default 0.25), to see which
# phase holds the peak:
#   [RSS_EVERY=0.05] bash bench/rss-build.sh LABEL DIST CRAWL INDEX OUTDIR [build options...]
# RSS_CLI=env runs the CLI as its shebang does (as `gpuindex` does), not through `node`.
# writes OUTDIR/LABEL.json (the summary), LABEL.err, LABEL.rss (ms since the start, RSS MiB and
# the process's thread count a line) and prints the sampled peak beside the summary's phases and
# peakRssBytes.
set -u
label=$1 dist=$2 crawl=$3 index=$4 out=$5
shift 5
${RSS_CLI:-node} "$dist/src/cli.js" build "$crawl" -o "$index" --force --json "$@" > "$out/$label.json" 2> "$out/$label.err" &
pid=$!
t0=$(date +%s%N)
while kill -0 "$pid" 2>/dev/null; do
  r=$(awk '/VmRSS/ {r = int($2 / 1024)} /^Threads/ {t = $2} END {if (r != "") print r, t}' "/proc/$pid/status" 2>/dev/null)
  [ -n "$r" ] && echo "$(( ($(date +%s%N) - t0) / 1000000 )) $r" >> "$out/$label.rss"
  sleep "${RSS_EVERY:-0.25}"
done
wait "$pid"
rc=$?
echo "$label rc=$rc sampled peak (ms MiB threads): $(sort -k2 -n "$out/$label.rss" | tail -1); $(node -e "const s=require('$out/$label.json'); console.log(JSON.stringify(s.timings), 'peakRssBytes', s.peakRssBytes)" 2>/dev/null)"
