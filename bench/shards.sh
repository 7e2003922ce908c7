#!/usr/bin/env bash
# bench/shards.sh: a crawl built as N shards in parallel processes on one machine (`build --shard
# i/N`), joined and optimized, against one build of the same crawl on the same machine; checks the
# joined index's answers and the optimized index's bytes against the single build.
#
#   bash bench/shards.sh <crawl> <N>...        e.g. bash bench/shards.sh /tmp/crawl 2 4 8
#
# Each shard process gets cores/N - 1 parse workers and SHARD_MEMORY (default 4GiB) of --memory;
# the single build runs with the defaults (the memory plan lowers the default workers to fit 1 GiB).
# On a GPU machine every process opens the first adapter (WebGPU gives no way to pick one of
# several identical cards). Through the device tool (see bench/device.sh for the packing):
#   source .device/prelude.sh && node dist/src/cli.js gen-corpus --size 8GB --seed 11 \
#     --file-size 32MB -o /tmp/crawl >/dev/null && bash bench/shards.sh /tmp/crawl 4 8
# Output: $OUT/shards.txt (./device-out when OUT is unset) and the builds' --json summaries in
# $OUT/shards-json.tgz.
set -uo pipefail
crawl=$1
shift
OUT=${OUT:-./device-out}
mkdir -p "$OUT" /tmp/shards-json
cli="node dist/src/cli.js"
cores=$(nproc)
now() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'; }
log() { echo "$*" | tee -a "$OUT/shards.txt"; }
mb=$(du -sm --apparent-size "$crawl" | cut -f1)
log "crawl $crawl: $mb MB; $cores cores; commit $(cat dist/COMMIT 2>/dev/null || echo '?')"
hashes() { node -e '
  const D = require("better-sqlite3"); const c = require("node:crypto"); const fs = require("node:fs");
  const d = process.argv[1]; const h = (b) => c.createHash("sha256").update(b).digest("hex").slice(0, 16);
  const db = new D(d + "/index.sqlite", { readonly: true }); const o = [h(fs.readFileSync(d + "/postings.bin"))];
  for (const t of ["terms ORDER BY term_id", "term_stats ORDER BY first_term_id", "docs ORDER BY doc_id", "stats ORDER BY key"]) {
    const x = c.createHash("sha256"); for (const r of db.prepare("SELECT * FROM " + t).raw().iterate()) x.update(JSON.stringify(r, (k, v) => Buffer.isBuffer(v) ? v.toString("base64") : v));
    o.push(x.digest("hex").slice(0, 16)); }
  console.log(o.join(" "));' "$1"; }

$cli build "$crawl" -o /tmp/shards-warm --force -q --json > /dev/null 2>&1   # first GPU start, page cache
s=$(now)
$cli build "$crawl" -o /tmp/shards-single --force --json > /tmp/shards-json/single.json 2> /tmp/shards-json/single.err
e=$(now)
log "single build: $(secs "$s" "$e") s ($(awk -v m="$mb" -v a="$s" -v b="$e" 'BEGIN { printf "%.0f", m / ((b - a) / 1e9) }') MB/s), $(node -e 'const j=require("/tmp/shards-json/single.json"); console.log(`${j.workers} workers, pipeline ${j.pipeline}, ${j.documents} documents, ${j.terms} terms`)')"
single=$(hashes /tmp/shards-single)
for n in "$@"; do
  w=$((cores / n - 1)); [ "$w" -lt 1 ] && w=1
  rm -rf /tmp/shards-$n; mkdir -p /tmp/shards-$n
  s=$(now)
  for ((i = 0; i < n; i++)); do
    $cli build "$crawl" -o /tmp/shards-$n/shard-$i --shard $i/$n --workers $w --memory "${SHARD_MEMORY:-4GiB}" --json > /tmp/shards-json/n$n-$i.json 2> /tmp/shards-json/n$n-$i.err &
  done
  wait
  e=$(now)
  for ((i = 0; i < n; i++)); do [ -s /tmp/shards-json/n$n-$i.json ] || { log "N=$n: shard $i failed: $(tail -1 /tmp/shards-json/n$n-$i.err)"; continue 2; }; done
  slowest=$(node -e 'let m=0,f=0;for(let i=0;i<+process.argv[1];i++){const j=require(`/tmp/shards-json/n${process.argv[1]}-${i}.json`);m=Math.max(m,j.timings.totalMs);f=Math.min(f||1e12,j.timings.totalMs)}console.log(`fastest shard ${(f/1000).toFixed(2)} s, slowest ${(m/1000).toFixed(2)} s`)' "$n")
  log "N=$n shards ($w workers each): $(secs "$s" "$e") s wall for all ($(awk -v m="$mb" -v a="$s" -v b="$e" 'BEGIN { printf "%.0f", m / ((b - a) / 1e9) }') MB/s); $slowest"
  s=$(now); $cli join /tmp/shards-$n/index /tmp/shards-$n/shard-* > /dev/null; e=$(now)
  log "  join: $(secs "$s" "$e") s (process included)"
  $cli verify /tmp/shards-$n/index >> "$OUT/shards.txt" 2>&1 || log "  VERIFY FAILED (joined)"
  same=yes
  for q in "the whale" "ship sea captain" "white harpoon storm deck" "ocean"; do
    a=$($cli search /tmp/shards-single "$q" -k 10 --json | sha256sum); b=$($cli search /tmp/shards-$n/index "$q" -k 10 --json | sha256sum)
    [ "$a" = "$b" ] || same=no
  done
  s=$(now); $cli search /tmp/shards-$n/index "ship sea captain" -k 10 > /dev/null; e=$(now); js=$(secs "$s" "$e")
  s=$(now); $cli search /tmp/shards-single "ship sea captain" -k 10 > /dev/null; e=$(now)
  log "  search answers equal to the single build's: $same; one CLI query: joined $js s, single $(secs "$s" "$e") s"
  pb=$(du -cm --apparent-size /tmp/shards-$n/shard-*/postings.bin | tail -1 | cut -f1)
  s=$(now); $cli optimize /tmp/shards-$n/index > /dev/null; e=$(now)
  log "  optimize: $(secs "$s" "$e") s for $pb MB of postings ($(awk -v m="$pb" -v a="$s" -v b="$e" 'BEGIN { printf "%.0f", m / ((b - a) / 1e9) }') MB/s)"
  [ "$(hashes /tmp/shards-$n/index)" = "$single" ] && log "  optimized = single build: yes (postings.bin and every table but settings)" || log "  optimized = single build: NO"
done
tar -C /tmp -czf "$OUT/shards-json.tgz" shards-json
