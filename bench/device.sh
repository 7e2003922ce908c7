#!/usr/bin/env bash
# bench/device.sh: gpuindex benchmarks on a GPU machine, run through the `device` tool.
#
# The GPU machine has no Node.js and no package registry, so prepare everything here and carry it:
#   npm ci && npm run build
#   git rev-parse --short HEAD > dist/COMMIT      # optional: the logs then name the commit
#   bash ../shared/device/pack.sh                 # node, production node_modules, Vulkan loader -> .device/
# then call the device tool with carry [".device", "dist"] (and every other build the subcommand
# names, e.g. ".cache/dist-base") and the command
#   source .device/prelude.sh && bash bench/device.sh <subcommand> [args]
# Output goes to $OUT (the device tool's output folder; ./device-out when unset): log.txt (one line
# per build, and what each subcommand prints), gpu-info.json, details.tgz (each build's `--json`
# summary and stderr, lscpu) and the files named below. The device tool brings back at most 8 files,
# so everything else goes into details.tgz; several subcommands in one command add to it.
#
# A base build for the A/B subcommands (any earlier commit, built here):
#   mkdir -p /tmp/base && git archive <commit> | tar -x -C /tmp/base && (cd /tmp/base && npm ci && npm run build)
#   mkdir -p .cache && cp -r /tmp/base/dist .cache/dist-base
#
# Crawls, generated on the machine once per machine start:
#   /tmp/crawl  2 GB synthetic JSONL, 250 files: gen-corpus --size 2GB --seed 1 --file-size 8MB
#   /tmp/small  200 MB synthetic JSONL that fits one block: gen-corpus --size 200MB --seed 2 --file-size 8MB
# Builds of /tmp/crawl use --block-size 16777216 (2^24 pairs) --memory 4GiB.
#
# Subcommands:
#   info          gpu-info --json and lscpu only.
#   sort          GpuSort alone: `bench-sort --dist zipf --reps 5` at 2^22 and 2^24 pairs, each size in a
#                 fresh process, with the plain and the fused tile kernels (--fuse). SWEEP=1 adds the
#                 sweep: 2^16..2^26 and the largest block (--max), zipf, uniform, few-terms and sorted,
#                 with the CPU radix sorter on the same data. -> sort.md, sort-sweep.md
#   sorters       the sorters side by side, in one process: `bench-sort --sorters bsn,radix,adaptive,oddeven,cpu` at
#                 SIZES (default 16,20,24) over every distribution, --reps 5, table and JSON; then the
#                 radix sort alone at 2^24 zipf and uniform (--sorters radix) in a fresh process.
#                 -> sorters.md, sorters.json, sorters.svg (bench/sorters-plot.mjs), sorters-radix.md
#   cub           the CUB reference on the same card: bench/cub-sort.py (the image's python3, CuPy and PyTorch)
#                 at SIZES (default 20,24), zipf, uniform, sorted and few-terms. -> cub.md
#   table         Table 2: `bench --sizes 5 --repeat $REPEAT` (default 3) of /tmp/crawl: Indexcpu, Indexgpu
#                 and Indexgpu+ against parse alone at five doubling sizes, medians of alternating rounds;
#                 GPU_SORT=radix (or auto) sorts the GPU pipelines' blocks with it (bench --gpu-sort).
#                 -> bench/ (bench.json, bench.csv, bench.svg, bench.md), bench.log
#   builds        single builds of /tmp/crawl: gpu+ (first GPU start), gpu+ with GPUINDEX_CREDITS=2 and 16,
#                 gpu+ with --merge-threads 1, gpu+ again, cpu, gpu; postings.bin sha256 of each; verify.
#   memory        the memory bound: builds of the first 1 GB of /tmp/crawl under each --memory case of
#                 MEMORY_CASES, separated by commas (default "1GiB,2GiB,512MiB --workers 4,384MiB"):
#                 working set, peak RSS and dictionary against the budget.
#   onefile       /tmp/crawl as one 2 GB JSONL file, gpu+: in line-aligned ranges, and as one task.
#   ab [DIST...]  A/B of builds, alternating (default: .cache/dist-base dist). ROUNDS (3) rounds of
#                 /tmp/crawl for each pipeline of PIPELINES (default "gpu+"), with the parse workers'
#                 figures and the tail after their last batch (bench/tail-summary.mjs); then three rounds
#                 of /tmp/small with Indexcpu (skipped with ONLY=gpuplus); postings.bin sha256 of each
#                 build, verify, and the same searches on every DIST's index. Knobs: ONEFILE=1 (/tmp/crawl
#                 as one file), EXTRA (more build flags), WARM=0 (no first build to start the GPU).
#                 Bundled against tsc output: build `npx tsc -p tsconfig.json --outDir .cache/unb` (copy
#                 the scanner's .wasm and gpu/kernels beside it), then PIPELINES="gpu+ cpu" ONLY=gpuplus
#                 bash bench/device.sh ab .cache/unb dist
#   ratio         Indexgpu+ Parse+Sort / parse alone at 2 GB, A/B: per variant in turn one `bench --sizes 1
#                 --pipelines gpu+ --repeat 2` (round a: parse alone first; round b: the build first), so
#                 the variants share the host's slow and fast moments. VARIANTS: "name:dist[:VAR=value,...]"
#                 ... (default "base:.cache/dist-base new:dist"); ROUNDS (5); BUILDS=1 (default) first
#                 builds each variant with gpu+, gpu and cpu (sha256, verify). -> ratio-ab.txt (every round,
#                 then the medians; each round's bench lines in details.tgz)
#   pool          `ratio` of one build with V8's platform pool at each of POOLS (default "default 2 1"),
#                 through NODE_OPTIONS=--v8-pool-size=N; BUILDS=0.
#   scaling       parse rate per worker: 512 MB of /tmp/crawl (its first 64 files), gpu+, with each worker
#                 count of WORKERS (default "1 2 4 8 12 <cores - 1>"), then at cores - 1 with
#                 NODE_OPTIONS=--v8-pool-size=16 and with UV_THREADPOOL_SIZE=16.
#   workers       whole builds of /tmp/crawl, gpu+, ROUNDS (2) alternating rounds of each worker count of
#                 WORKERS (default "<cores - 1> 12 13 10"), and of STGC_WORKERS (default "<cores - 1> 12")
#                 under node --single-threaded-gc.
#   profile [ARG...]  one gpu+ build of /tmp/crawl under node --cpu-prof (main thread and every worker),
#                 extra build flags as arguments; the top self time of each thread
#                 (bench/profile-summary.mjs). -> profile-top.txt, profiles.tgz
#   setup         opening the GPU and compiling the sort kernels, three times (bench/setup-time.mjs).
#   html [DIST...]  the HTML crawl: the PostgreSQL 15 + Python 3.11 documentation (html-docs-small, 1,699
#                 pages, 66.8 MB; carried packed: `node scripts/corpus/fetch.mjs html-docs-small && tar czf
#                 .cache/html-docs-small.tgz -C .cache/corpora/html-docs-small data`, 9.8 MB) copied COPIES
#                 (20) times into /tmp/html; ROUNDS (3) alternating rounds of each DIST (default
#                 .cache/dist-base dist) with the default pipeline (Indexgpu+) and with --pipeline cpu
#                 (Indexcpu), --parsers summaries (MB/s of HTML a worker), postings.bin sha256 of each; first
#                 the text extraction alone on one core (bench/html-extract.mjs, every DIST alternated, and
#                 whether they give the same text on every page).
#   warc [DIST...]  the same pages as WARC: html-docs-small written as one .warc.gz (request, response and
#                 metadata records, a gzip member each; scripts/corpus/warc-writer.mjs) copied COPIES (20)
#                 times into /tmp/warc; ROUNDS (3) alternating rounds of each DIST with Indexgpu+ and
#                 Indexcpu, as html does.
#   smallfiles [DIST...]  the many-small-files crawl (200 folders x 1,000 .txt files of 60 words) and the
#                 same documents as one JSONL file, bench/small-files.mjs, ROUNDS (3) rounds alternating the
#                 DISTs (default .cache/dist-base dist), default worker count. -> smallfiles.txt
#   writer        the live index (bench/writer-backfill.mjs): a backfill of /tmp/crawl through the
#                 writer (`addCrawl`, and `add` in batches of 10,000 with 256 MiB flushes, completing in
#                 the background and waited for) against one build of it, gpu+, ROUNDS (2) alternated
#                 rounds; then flushes of FLUSH_SIZES documents (default 1000,10000,100000,400000; none:
#                 skipped) with the GPU and the CPU sorter, 3 each, alternated.
#                 -> writer-backfill.jsonl, writer-flushes.jsonl
#   vocab [sweep|growth]  (both when not named) the scaling and vocabulary targets:
#                 sweep: `bench --workers W1,W2,...` of an 8 GB crawl with the fixed vocabulary
#                 (gen-corpus --size $SWEEP_SIZE --seed 11 --file-size 32MB --vocabulary fixed; SWEEP_SIZE
#                 default 8GB), WORKERS (default "1 2 4 8 16 32 <cores - 1>", those below cores), REPEAT (1)
#                 alternating rounds, --memory $SWEEP_MEMORY (default cores/2 GiB, so that every count fits)
#                 -> workers/ (workers.{json,csv,svg,md}), workers.log;
#                 growth: `build --json` with default options of two crawls of $GROWTH_SIZE (default 1GB,
#                 seed 12, --file-size 32MB), the fixed vocabulary and the mail-fitted growing one, ROUNDS (3)
#                 alternating rounds; verify; the medians and the MB/s ratio growing / fixed (target >= 0.5)
#                 -> vocab-growth.txt. On the 2-core machine:
#                 GROWTH_SIZE=256MB ROUNDS=2 OUT=/tmp/vocab-out bash bench/device.sh vocab growth
#   lexicons      parse workers with lexicons of their own against the shared dictionary, same DIST, default
#                 options: GPUINDEX_WORKER_LEXICONS=1 and =0 alternated, ROUNDS (2) rounds of each crawl of
#                 LEX_CRAWLS (default "fixed:2GB mail:1GB": gen-corpus --seed 12 --file-size 32MB --vocabulary
#                 V --size S) with each pipeline of PIPELINES (default "gpu+ cpu"), EXTRA build flags;
#                 postings.bin sha256 of each (they must agree), verify; medians -> lexicons.txt
#   positions [DIST...]  what --positions costs, old and new builds alternated: bench/positions.mjs --rounds
#                 ROUNDS (2) --workers <cores - 1> --pipeline PIPELINE (gpu+) of /tmp/crawl, every DIST (default
#                 .cache/dist-base dist) in turn each round, each with and without --positions; EXTRA (more build
#                 flags). Per DIST the median wall, build CPU (every thread), parse+sort CPU and merge stage of both, their ratio, the index
#                 and positions.bin sizes, and whether every DIST wrote the same positions.bin. -> positions.txt
#   spill [DIST...]  the parse workers' lexicons within --memory, default options: ROUNDS (2) alternating
#                 rounds of each DIST (default .cache/dist-base dist) on each crawl of SPILL_CRAWLS (default
#                 "fixed:8GB mail:1GB": gen-corpus --seed 12 --file-size 32MB --vocabulary V --size S),
#                 postings.bin sha256 of each (they must agree); then the crawl of
#                 bench/big-vocabulary.mjs --terms SPILL_TERMS (default 100000000) built by each DIST, with
#                 peak RSS against --memory (--memory flag), verified and looked up by the last (SPILL_TERMS=0:
#                 none; SPILL_BIG_AB=0: the last DIST's build and verify only).
#                 -> log.txt, details/
#   all           builds, table, memory and onefile, in that order.
# Common knobs: DIST (the build that single-build subcommands run; default dist), OUT, CRAWL and
# SMALL (other folders for the two crawls; generated there only when missing).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
OUT=${OUT:-$PWD/device-out}; mkdir -p "$OUT"
details=$OUT/details
[ -f "$OUT/details.tgz" ] && tar xzf "$OUT/details.tgz" -C "$OUT" && rm -f "$OUT/details.tgz"
mkdir -p "$details"
trap 'tar czf "$OUT/details.tgz" -C "$OUT" details && rm -rf "$details"' EXIT
export XDG_RUNTIME_DIR=/tmp/xdg; mkdir -p "$XDG_RUNTIME_DIR"
DIST=${DIST:-dist}
cores=$(nproc)
crawl=${CRAWL:-/tmp/crawl}
small=${SMALL:-/tmp/small}
big=(--block-size 16777216 --memory 4GiB)

log() { echo "[$(date +%T)] $*" | tee -a "$OUT/log.txt"; }
commit_of() { [ -f "$1/COMMIT" ] && echo "$1 at $(cat "$1/COMMIT")" || echo "$1"; }
# with_env "VAR=value,VAR=value" command...: the command with those variables set
with_env() { ( local kv e; IFS=, read -r -a kv <<< "$1"; shift; for e in ${kv[@]+"${kv[@]}"}; do export "${e?}"; done; "$@" ) }
sha() { sha256sum "$1/postings.bin" 2>/dev/null | cut -c1-16; }
summary() { node bench/build-summary.mjs "$@" 2>&1; }

gen_crawl() {
  [ -d $crawl ] && return
  log "gen-corpus 2GB"
  node "$DIST/src/cli.js" gen-corpus --size 2GB --seed 1 --file-size 8MB -o $crawl 2>&1 | tail -1 | tee -a "$OUT/log.txt"
}
gen_small() {
  [ -d $small ] && return
  log "gen-corpus 200MB"
  node "$DIST/src/cli.js" gen-corpus --size 200MB --seed 2 --file-size 8MB -o $small 2>&1 | tail -1 | tee -a "$OUT/log.txt"
}
# gen_vocab_crawl DIST V SIZE: /tmp/crawl-V-SIZE (gen-corpus --seed 12 --file-size 32MB --vocabulary V), unless there
gen_vocab_crawl() {
  local dist=$1 v=$2 size=$3
  [ -d "/tmp/crawl-$v-$size" ] && return
  log "gen-corpus $size $v"
  node "$dist/src/cli.js" gen-corpus --size "$size" --seed 12 --file-size 32MB --vocabulary "$v" -o "/tmp/crawl-$v-$size" 2>&1 | tail -1 | tee -a "$OUT/log.txt"
}
# build LABEL DIST CRAWL INDEX [node flags --] build args...: one build, its summary in details/build-LABEL.json
build() {
  local label=$1 dist=$2 from=$3 index=$4; shift 4
  local flags=()
  if [[ " $* " == *" -- "* ]]; then while [ "$1" != -- ]; do flags+=("$1"); shift; done; shift; fi
  rm -rf "$index"
  node ${flags[@]+"${flags[@]}"} "$dist/src/cli.js" build "$from" -o "$index" --json "$@" > "$details/build-$label.json" 2> "$details/build-$label.err"
  log "$label rc=$? $(summary ${SUMMARY:-} "$details/build-$label.json") postings $(sha "$index")"
}

header() {
  log "$1: $(nproc) cores, node $(node --version), $(uname -r); $(commit_of "$DIST")"
  lscpu > "$details/lscpu.txt" 2>&1
  [ -f "$OUT/gpu-info.json" ] || node "$DIST/src/cli.js" gpu-info --json > "$OUT/gpu-info.json" 2>&1
}

cmd_info() {
  grep -E '^(Model name|Thread|Core|Socket|CPU\(s\)|L2|L3)' "$details/lscpu.txt" | tr -s ' ' | tee -a "$OUT/log.txt"
  cat "$OUT/gpu-info.json"
}

cmd_sort() {
  local cli="node $DIST/src/cli.js"
  for size in 22 24; do for fuse in "" --fuse; do
    log "bench-sort 2^$size zipf ${fuse:-plain}"
    $cli bench-sort --sizes $size --dist zipf --reps 5 $fuse >> "$OUT/sort.md" 2>&1
    tail -3 "$OUT/sort.md" | tee -a "$OUT/log.txt"
  done; done
  if [ "${SWEEP:-0}" = 1 ]; then
    log "bench-sort sweep"
    $cli bench-sort --sizes 16..26 --max --reps 5 --dist zipf,uniform,few-terms,sorted > "$OUT/sort-sweep.md" 2>&1
    log "sweep rc=$?"
  fi
}

cmd_sorters() {
  local cli="node $DIST/src/cli.js" sizes=${SIZES:-16,20,24}
  log "bench-sort --sorters bsn,radix,adaptive,oddeven,cpu --sizes $sizes (every distribution)"
  $cli bench-sort --sorters bsn,radix,adaptive,oddeven,cpu --sizes "$sizes" --reps 5 > "$OUT/sorters.md" 2>&1
  log "rc=$?"
  $cli bench-sort --sorters bsn,radix,adaptive,oddeven,cpu --sizes "$sizes" --reps 5 --json > "$OUT/sorters.json" 2>> "$details/sorters-json.stderr"
  log "json rc=$?"
  node bench/sorters-plot.mjs "$OUT/sorters.json" > "$OUT/sorters.svg" 2>> "$details/sorters-json.stderr"
  $cli bench-sort --sorters radix --sizes 24 --dist zipf,uniform --reps 5 > "$OUT/sorters-radix.md" 2>&1
  tail -4 "$OUT/sorters-radix.md" | tee -a "$OUT/log.txt"
}

cmd_cub() {
  log "cub-sort --sizes ${SIZES:-20,24}"
  python3 bench/cub-sort.py --sizes "${SIZES:-20,24}" > "$OUT/cub.md" 2>&1
  log "rc=$?"
  tail -10 "$OUT/cub.md" | tee -a "$OUT/log.txt"
}

cmd_table() {
  gen_crawl
  log "bench --sizes 5 --repeat ${REPEAT:-3} --gpu-sort ${GPU_SORT:-bsn}"
  node "$DIST/src/cli.js" bench $crawl --sizes 5 --repeat "${REPEAT:-3}" --gpu-sort "${GPU_SORT:-bsn}" "${big[@]}" -o "$OUT/bench" > "$OUT/bench.log" 2>&1
  log "bench rc=$?"
  tail -12 "$OUT/bench.log" | tee -a "$OUT/log.txt"
}

cmd_builds() {
  gen_crawl
  SUMMARY=--parsers
  build gpuplus "$DIST" $crawl /tmp/idx-b "${big[@]}" --pipeline gpu+
  GPUINDEX_CREDITS=2 build gpuplus-credits2 "$DIST" $crawl /tmp/idx-b "${big[@]}" --pipeline gpu+
  GPUINDEX_CREDITS=16 build gpuplus-credits16 "$DIST" $crawl /tmp/idx-b "${big[@]}" --pipeline gpu+
  build gpuplus-merge1 "$DIST" $crawl /tmp/idx-b "${big[@]}" --pipeline gpu+ --merge-threads 1
  build gpuplus-again "$DIST" $crawl /tmp/idx-b "${big[@]}" --pipeline gpu+
  build cpu "$DIST" $crawl /tmp/idx-b "${big[@]}" --pipeline cpu
  build gpu "$DIST" $crawl /tmp/idx-b "${big[@]}" --pipeline gpu
  node "$DIST/src/cli.js" verify /tmp/idx-b >> "$OUT/log.txt" 2>&1; log "verify rc=$?"
  SUMMARY=
  rm -rf /tmp/idx-b
}

cmd_memory() {
  gen_crawl
  mkdir -p /tmp/crawl1g; ls $crawl | head -125 | while read -r f; do ln -f "$crawl/$f" "/tmp/crawl1g/$f"; done
  local cases
  IFS=, read -r -a cases <<< "${MEMORY_CASES:-1GiB,2GiB,512MiB --workers 4,384MiB}"
  for m in "${cases[@]}"; do
    local tag; tag=memory-$(echo "$m" | tr -d ' -')
    SUMMARY=--memory build "$tag" "$DIST" /tmp/crawl1g /tmp/idx-m --memory $m
    grep -v -e '^Warning' -e '^$' "$details/build-$tag.err" | tail -2 | sed 's/^/    /' | tee -a "$OUT/log.txt"
  done
  rm -rf /tmp/idx-m
}

cmd_onefile() {
  gen_crawl
  mkdir -p /tmp/onefile; [ -f /tmp/onefile/crawl.jsonl ] || cat $crawl/*.jsonl > /tmp/onefile/crawl.jsonl
  SUMMARY=--parsers
  build onefile-ranges "$DIST" /tmp/onefile /tmp/idx-o "${big[@]}" --pipeline gpu+
  GPUINDEX_RANGE_BYTES=1000000000000 build onefile-one-task "$DIST" /tmp/onefile /tmp/idx-o "${big[@]}" --pipeline gpu+
  SUMMARY=
  rm -rf /tmp/idx-o
}

cmd_ab() {
  local dists=("$@"); [ ${#dists[@]} -gt 0 ] || dists=(.cache/dist-base dist)
  local names=() i j
  for i in "${!dists[@]}"; do
    [ -f "${dists[$i]}/src/cli.js" ] || { log "ab: ${dists[$i]}/src/cli.js not found (build it here and carry it)"; return 1; }
    names[i]=$(basename "${dists[$i]}")
    for ((j = 0; j < i; j++)); do [ "${names[j]}" != "${names[i]}" ] || names[i]+="-$i"; done
    log "ab: ${names[i]} = $(commit_of "${dists[$i]}")"
  done
  gen_crawl
  local from=$crawl last=${dists[$((${#dists[@]} - 1))]} n=$((${#dists[@]} - 1))
  if [ "${ONEFILE:-0}" = 1 ]; then
    mkdir -p /tmp/onefile; [ -f /tmp/onefile/crawl.jsonl ] || cat $crawl/*.jsonl > /tmp/onefile/crawl.jsonl; from=/tmp/onefile
  fi
  # The machine's first GPU start takes seconds: one build first, not counted.
  [ "${WARM:-1}" = 0 ] || build warm-up "$last" $from /tmp/idx-ab "${big[@]}" --pipeline gpu+
  for round in $(seq 1 "${ROUNDS:-3}"); do
    for p in ${PIPELINES:-gpu+}; do for i in "${!dists[@]}"; do
      local d=${dists[$i]} label=${names[$i]}-${p/+/plus}-$round
      # shellcheck disable=SC2086
      SUMMARY=--parsers build "$label" "$d" $from "/tmp/idx-ab$i" "${big[@]}" --pipeline "$p" ${EXTRA:-}
      [ "$p" = cpu ] || node bench/tail-summary.mjs "$details/build-$label.json" | sed 's/^/    /' | tee -a "$OUT/log.txt"
    done; done
  done
  node "$last/src/cli.js" verify "/tmp/idx-ab$n" >> "$OUT/log.txt" 2>&1; log "verify $last rc=$?"
  if [ "${ONLY:-all}" != gpuplus ]; then
    gen_small
    for round in 1 2 3; do for i in "${!dists[@]}"; do
      local d=${dists[$i]}
      build "${names[$i]}-cpu-oneblock-$round" "$d" $small "/tmp/one$i" --memory 4GiB --pipeline cpu
    done; done
    node "$last/src/cli.js" verify "/tmp/one$n" >> "$OUT/log.txt" 2>&1; log "verify one-block $last rc=$?"
    for q in "time people" "world"; do
      local line="search '$q':"
      for i in "${!dists[@]}"; do line+=" ${names[$i]} $(node "${dists[$i]}/src/cli.js" search "/tmp/one$i" "$q" 2>&1 | sha256sum | cut -c1-16)"; done
      log "$line"
    done
  fi
  rm -rf /tmp/idx-ab* /tmp/one[0-9]*
}

cmd_ratio() {
  gen_crawl
  local variants=${VARIANTS:-"base:.cache/dist-base new:dist"} name d envs
  for v in $variants; do
    IFS=: read -r name d envs <<< "$v"
    [ -f "$d/src/cli.js" ] || { log "ratio: $d/src/cli.js not found (build it here and carry it)"; return 1; }
    log "ratio: variant $name = $(commit_of "$d") ${envs//,/ }"
  done
  if [ "${BUILDS:-1}" = 1 ]; then
    for v in $variants; do
      IFS=: read -r name d envs <<< "$v"
      for p in gpu+ gpu cpu; do
        SUMMARY=--cpu with_env "$envs" build "$name-${p/+/plus}" "$d" $crawl /tmp/idx-r "${big[@]}" --pipeline "$p"
        node "$d/src/cli.js" verify /tmp/idx-r 2>&1 | tail -1 | sed 's/^/    /' | tee -a "$OUT/log.txt"
      done
    done
    rm -rf /tmp/idx-r
  fi
  for round in $(seq 1 "${ROUNDS:-5}"); do for v in $variants; do
    IFS=: read -r name d envs <<< "$v"
    with_env "$envs" node "$d/src/cli.js" bench $crawl --sizes 1 --pipelines gpu+ --repeat 2 "${big[@]}" > /tmp/ratio.log 2>&1
    for n in 1 2; do
      local alone gpu order
      alone=$(grep -o "round $n: parse alone [0-9.]* ms" /tmp/ratio.log | grep -o '[0-9.]* ms' | grep -o '[0-9.]*')
      gpu=$(grep -o "round $n: gpu+ parse+sort [0-9.]* ms" /tmp/ratio.log | grep -o '[0-9.]* ms' | grep -o '[0-9.]*')
      order=$([ "$n" = 1 ] && echo a || echo b)
      echo "round $round$order $name: parse alone $alone ms, gpu+ parse+sort $gpu ms, ratio $(node -e "console.log(($gpu/$alone).toFixed(3))" 2>/dev/null)" | tee -a "$OUT/ratio-ab.txt" "$OUT/log.txt"
    done
    { echo "round $round $name"; grep -E 'parse alone|parse\+sort' /tmp/ratio.log | sed 's/^/    /'; } >> "$details/ratio-ab-details.txt"
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
' "$OUT/ratio-ab.txt" > /tmp/ratio-medians.txt
  tee -a "$OUT/ratio-ab.txt" "$OUT/log.txt" < /tmp/ratio-medians.txt
}

cmd_pool() {
  local variants="" p
  for p in ${POOLS:-default 2 1}; do
    if [ "$p" = default ]; then variants+=" pool-default:$DIST"; else variants+=" pool-$p:$DIST:NODE_OPTIONS=--v8-pool-size=$p"; fi
  done
  VARIANTS=$variants BUILDS=0 ROUNDS=${ROUNDS:-3} cmd_ratio
}

cmd_scaling() {
  gen_crawl
  grep -E '^(Model name|Thread|Core|Socket|CPU\(s\)|L2|L3)' "$details/lscpu.txt" | tr -s ' ' | tr '\n' ';' | tee -a "$OUT/log.txt"; echo | tee -a "$OUT/log.txt"
  local sub=/tmp/crawl512 w top=$((cores - 1))
  mkdir -p $sub; ls $crawl | head -64 | while read -r f; do ln -f "$crawl/$f" "$sub/$f"; done
  SUMMARY=--parsers
  for w in ${WORKERS:-1 2 4 8 12 $top}; do build "scale-w$w" "$DIST" $sub /tmp/idx-s "${big[@]}" --pipeline gpu+ --workers "$w"; done
  NODE_OPTIONS=--v8-pool-size=16 build "scale-w$top-v8pool16" "$DIST" $sub /tmp/idx-s "${big[@]}" --pipeline gpu+ --workers $top
  UV_THREADPOOL_SIZE=16 build "scale-w$top-uv16" "$DIST" $sub /tmp/idx-s "${big[@]}" --pipeline gpu+ --workers $top
  SUMMARY=
  rm -rf /tmp/idx-s
}

cmd_workers() {
  gen_crawl
  local top=$((cores - 1)) w round
  SUMMARY=--parsers
  for round in $(seq 1 "${ROUNDS:-2}"); do
    for w in ${WORKERS:-$top 12 13 10}; do build "w$w-$round" "$DIST" $crawl /tmp/idx-w "${big[@]}" --pipeline gpu+ --workers "$w"; done
    for w in ${STGC_WORKERS:-$top 12}; do build "w$w-stgc-$round" "$DIST" $crawl /tmp/idx-w --single-threaded-gc -- "${big[@]}" --pipeline gpu+ --workers "$w"; done
  done
  SUMMARY=
  rm -rf /tmp/idx-w
}

cmd_profile() {
  gen_crawl
  rm -rf /tmp/prof; mkdir -p /tmp/prof
  SUMMARY=--parsers build profile "$DIST" $crawl /tmp/idx-p --cpu-prof --cpu-prof-dir=/tmp/prof -- "${big[@]}" --pipeline gpu+ "$@"
  node bench/profile-summary.mjs --top 30 /tmp/prof/*.cpuprofile > "$OUT/profile-top.txt" 2>&1
  head -32 "$OUT/profile-top.txt"
  tar czf "$OUT/profiles.tgz" -C /tmp/prof .
  rm -rf /tmp/idx-p
}

cmd_writer() {
  gen_crawl
  log "writer backfill: build vs addCrawl vs add, ${ROUNDS:-2} rounds"
  node bench/writer-backfill.mjs backfill $crawl --dist "$DIST" --rounds "${ROUNDS:-2}" "${big[@]}" --pipeline gpu+ > "$OUT/writer-backfill.jsonl" 2> "$details/writer-backfill.err"
  log "backfill rc=$?"
  tail -1 "$OUT/writer-backfill.jsonl" | tee -a "$OUT/log.txt"
  [ "${FLUSH_SIZES:-}" = none ] && return
  log "writer flushes: GPU vs CPU sorter at ${FLUSH_SIZES:-1000,10000,100000,400000} documents"
  node bench/writer-backfill.mjs flushes $crawl --dist "$DIST" --sizes "${FLUSH_SIZES:-1000,10000,100000,400000}" --reps 3 --memory 8GiB > "$OUT/writer-flushes.jsonl" 2> "$details/writer-flushes.err"
  log "flushes rc=$?"
  grep MedianMs "$OUT/writer-flushes.jsonl" | tee -a "$OUT/log.txt"
}

cmd_setup() {
  node bench/setup-time.mjs "$DIST" 2>&1 | tee -a "$OUT/log.txt"
}

cmd_html() {
  local dists=("$@")
  [ ${#dists[@]} -gt 0 ] || dists=(.cache/dist-base dist)
  if [ ! -d /tmp/html ]; then
    log "unpacking html-docs-small x${COPIES:-20} into /tmp/html"
    rm -rf /tmp/html-src && mkdir -p /tmp/html-src /tmp/html && tar xzf .cache/html-docs-small.tgz -C /tmp/html-src || return 1
    for i in $(seq -w 1 "${COPIES:-20}"); do cp -r /tmp/html-src/data "/tmp/html/copy-$i"; done
    log "$(find /tmp/html -type f | wc -l) files, $(du -sb /tmp/html | cut -f1) bytes"
  fi
  log "HTML text extraction alone, one core, each DIST alternated (bench/html-extract.mjs, html-docs-small once)"
  node bench/html-extract.mjs --rounds 5 /tmp/html-src/data "${dists[@]}" > "$details/html-extract.txt" 2>&1
  log "html-extract rc=$?"
  grep -E '^(every|[0-9]+ pages|median)' "$details/html-extract.txt" | tee -a "$OUT/log.txt"
  pipelines_ab html /tmp/html "${dists[@]}"
}

# pipelines_ab LABEL CRAWL DIST...: ROUNDS (3) rounds of Indexgpu+ then Indexcpu builds of CRAWL, each
# DIST in turn, with the parse workers' summaries (build-LABEL-<pipeline>-<dist>-<round>)
pipelines_ab() {
  local label=$1 from=$2 round p d
  shift 2
  SUMMARY=--parsers
  for round in $(seq 1 "${ROUNDS:-3}"); do
    for p in gpu+ cpu; do
      for d in "$@"; do build "$label-$p-$(basename "$d")-$round" "$d" "$from" "/tmp/idx-$label" --pipeline "$p"; done
    done
  done
  SUMMARY=
  rm -rf "/tmp/idx-$label"
}

cmd_warc() {
  local dists=("$@")
  [ ${#dists[@]} -gt 0 ] || dists=(.cache/dist-base dist)
  if [ ! -d /tmp/warc ]; then
    [ -d /tmp/html-src/data ] || { rm -rf /tmp/html-src && mkdir -p /tmp/html-src && tar xzf .cache/html-docs-small.tgz -C /tmp/html-src; } || return 1
    log "the WARC form of html-docs-small (scripts/corpus/warc-writer.mjs) x${COPIES:-20} into /tmp/warc"
    mkdir -p /tmp/warc
    node -e "import('./scripts/corpus/warc-writer.mjs').then((m) => console.log(JSON.stringify(m.writeWarcOfFolder('/tmp/html-src/data', '/tmp/warc/copy-01.warc.gz', { baseUri: 'http://docs.example/' }))))" 2>&1 | tee -a "$OUT/log.txt"
    for i in $(seq -w 2 "${COPIES:-20}"); do cp /tmp/warc/copy-01.warc.gz "/tmp/warc/copy-$i.warc.gz"; done
    log "$(ls /tmp/warc | wc -l) files, $(du -sb /tmp/warc | cut -f1) bytes gzipped"
  fi
  pipelines_ab warc /tmp/warc "${dists[@]}"
}

cmd_smallfiles() {
  local dists=("$@")
  [ ${#dists[@]} -gt 0 ] || dists=(.cache/dist-base dist)
  node bench/small-files.mjs --root /tmp --rounds "${ROUNDS:-3}" --workers $((cores - 1)) "${dists[@]}" > "$OUT/smallfiles.txt" 2>&1
  log "small-files rc=$?"
  tail -12 "$OUT/smallfiles.txt" | tee -a "$OUT/log.txt"
}

cmd_vocab() {
  local part=${1:-all} top=$((cores - 1)) w list=""
  if [ "$part" = all ] || [ "$part" = sweep ]; then
    local sweep=/tmp/crawl-sweep
    [ -d $sweep ] || { log "gen-corpus ${SWEEP_SIZE:-8GB} fixed"; node "$DIST/src/cli.js" gen-corpus --size "${SWEEP_SIZE:-8GB}" --seed 11 --file-size 32MB --vocabulary fixed -o $sweep 2>&1 | tail -1 | tee -a "$OUT/log.txt"; }
    for w in ${WORKERS:-1 2 4 8 16 32 $top}; do [ "$w" -le "$top" ] || [ "$w" = 1 ] && list+="${list:+,}$w"; done
    log "bench --workers $list --memory ${SWEEP_MEMORY:-$((cores / 2))GiB} --repeat ${REPEAT:-1}"
    local counts=(--workers "$list"); [[ $list == *,* ]] || counts=(--workers-sweep)
    node "$DIST/src/cli.js" bench $sweep "${counts[@]}" --memory "${SWEEP_MEMORY:-$((cores / 2))GiB}" --repeat "${REPEAT:-1}" -o "$OUT/workers" > "$OUT/workers.log" 2>&1
    log "bench rc=$?"
    grep -v '^wrote' "$OUT/workers.log" | tail -12 | tee -a "$OUT/log.txt"
  fi
  if [ "$part" = all ] || [ "$part" = growth ]; then
    local size=${GROWTH_SIZE:-1GB} v round
    for v in fixed mail; do
      gen_vocab_crawl "$DIST" "$v" "$size"
    done
    for round in $(seq 1 "${ROUNDS:-3}"); do
      local order="fixed mail"; [ $((round % 2)) = 0 ] && order="mail fixed"
      for v in $order; do build "vocab-$v-$size-$round" "$DIST" "/tmp/crawl-$v-$size" "/tmp/idx-v-$v"; done
    done
    for v in fixed mail; do node "$DIST/src/cli.js" verify "/tmp/idx-v-$v" 2>&1 | tail -1 | sed "s/^/    verify $v: /" | tee -a "$OUT/log.txt"; done
    node -e '
const fs = require("fs"), path = require("path");
const [dir, size] = process.argv.slice(1);
const med = (a) => { const v = [...a].sort((x, y) => x - y), h = v.length >> 1; return v.length % 2 ? v[h] : (v[h - 1] + v[h]) / 2; };
const by = {};
for (const f of fs.readdirSync(dir)) {
  const m = new RegExp(`^build-vocab-(fixed|mail)-${size}-\\d+\\.json$`).exec(f);
  if (!m) continue;
  try { (by[m[1]] ??= []).push(JSON.parse(fs.readFileSync(path.join(dir, f), "utf8"))); } catch {}
}
const rate = {};
for (const [v, runs] of Object.entries(by)) {
  const total = med(runs.map((s) => s.timings.totalMs)), bytes = runs[0].bytesRead;
  rate[v] = bytes / 1e6 / (total / 1000);
  console.log(`${v}: ${runs.length} builds, ${(bytes / 1e6).toFixed(0)} MB, ${runs[0].terms} terms, whole build median ${(total / 1000).toFixed(2)} s (${runs.map((s) => (s.timings.totalMs / 1000).toFixed(2)).join(" / ")}), ${rate[v].toFixed(1)} MB/s, merge median ${(med(runs.map((s) => s.timings.mergeMs)) / 1000).toFixed(2)} s, peak RSS ${(Math.max(...runs.map((s) => s.peakRssBytes)) / 2 ** 20).toFixed(0)} MiB, ${runs[0].pipeline}, ${runs[0].workers} workers`);
}
if (rate.fixed && rate.mail) console.log(`growing (mail) / fixed MB/s: ${(rate.mail / rate.fixed).toFixed(3)} (target >= 0.5)`);
' "$details" "$size" | tee "$OUT/vocab-growth.txt" | tee -a "$OUT/log.txt"
    rm -rf /tmp/idx-v-fixed /tmp/idx-v-mail
  fi
}

cmd_lexicons() {
  local spec v size round lex p order
  for spec in ${LEX_CRAWLS:-fixed:2GB mail:1GB}; do
    v=${spec%%:*}; size=${spec#*:}
    gen_vocab_crawl "$DIST" "$v" "$size"
    for round in $(seq 1 "${ROUNDS:-2}"); do
      order="1 0"; [ $((round % 2)) = 0 ] && order="0 1"
      for p in ${PIPELINES:-gpu+ cpu}; do
        for lex in $order; do
          # shellcheck disable=SC2086
          with_env "GPUINDEX_WORKER_LEXICONS=$lex" build "lex-$v-$size-$p-$lex-$round" "$DIST" "/tmp/crawl-$v-$size" "/tmp/idx-lex-$lex" --pipeline "$p" ${EXTRA:-}
        done
      done
    done
    for lex in 0 1; do node "$DIST/src/cli.js" verify "/tmp/idx-lex-$lex" 2>&1 | tail -1 | sed "s/^/    verify $v $size lexicons=$lex: /" | tee -a "$OUT/log.txt"; done
    rm -rf /tmp/idx-lex-0 /tmp/idx-lex-1
  done
  node -e '
const fs = require("fs"), path = require("path");
const dir = process.argv[1];
const med = (a) => { const v = [...a].sort((x, y) => x - y), h = v.length >> 1; return v.length % 2 ? v[h] : (v[h - 1] + v[h]) / 2; };
const by = {};
for (const f of fs.readdirSync(dir).sort()) {
  const m = /^build-lex-(.+)-([01])-\d+\.json$/.exec(f);
  if (!m) continue;
  try { (by[`${m[1]} lexicons=${m[2] === "1" ? "own" : "shared"}`] ??= []).push(JSON.parse(fs.readFileSync(path.join(dir, f), "utf8"))); } catch {}
}
for (const [k, runs] of Object.entries(by)) {
  const s = (f) => (med(runs.map(f)) / 1000).toFixed(2);
  const total = med(runs.map((r) => r.timings.totalMs));
  console.log(`${k}: ${(runs[0].bytesRead / 1e6 / (total / 1000)).toFixed(0)} MB/s, whole ${s((r) => r.timings.totalMs)} s (${runs.map((r) => (r.timings.totalMs / 1000).toFixed(2)).join(" / ")}), parse+sort ${s((r) => r.timings.parseSortMs)} s, merge ${s((r) => r.timings.mergeMs)} s, ${runs[0].terms} terms, ${runs[0].blocks} runs, ${runs[0].workers} workers, peak RSS ${(Math.max(...runs.map((r) => r.peakRssBytes)) / 2 ** 20).toFixed(0)} MiB`);
}
' "$details" | tee "$OUT/lexicons.txt" | tee -a "$OUT/log.txt"
}

cmd_positions() {
  gen_crawl
  local dists=("$@") args=() d
  [ ${#dists[@]} -gt 0 ] || dists=(.cache/dist-base dist)
  for d in "${dists[@]}"; do log "dist $(commit_of "$d")"; args+=(--dist "$d"); done
  log "positions.mjs --rounds ${ROUNDS:-2} --workers $((cores - 1)) --pipeline ${PIPELINE:-gpu+} ${EXTRA:-}"
  node bench/positions.mjs --rounds "${ROUNDS:-2}" --workers $((cores - 1)) --pipeline "${PIPELINE:-gpu+}" ${EXTRA:+--extra "$EXTRA"} "${args[@]}" --crawl $crawl > "$OUT/positions.txt" 2> "$details/positions.err"
  log "positions rc=$?"
  tee -a "$OUT/log.txt" < "$OUT/positions.txt"
}

cmd_spill() {
  local dists=("$@"); [ ${#dists[@]} -gt 0 ] || dists=(.cache/dist-base dist)
  local last=${dists[$((${#dists[@]} - 1))]} spec v size round i d
  for d in "${dists[@]}"; do log "spill: $(commit_of "$d")"; done
  for spec in ${SPILL_CRAWLS:-fixed:8GB mail:1GB}; do
    v=${spec%%:*}; size=${spec#*:}
    gen_vocab_crawl "$last" "$v" "$size"
    for round in $(seq 1 "${ROUNDS:-2}"); do
      local order=("${!dists[@]}"); [ $((round % 2)) = 1 ] || order=($(printf '%s\n' "${!dists[@]}" | tac))
      for i in "${order[@]}"; do
        SUMMARY=--memory build "spill-$v-$size-$i-$round" "${dists[$i]}" "/tmp/crawl-$v-$size" "/tmp/idx-spill$i"
      done
    done
    rm -rf "/tmp/crawl-$v-$size"
  done
  local terms=${SPILL_TERMS:-100000000}
  [ "$terms" != 0 ] || return 0
  log "big-vocabulary $terms terms, $(commit_of "$last")"
  node bench/big-vocabulary.mjs --terms "$terms" --dir /tmp/bigv > "$details/bigv-last.json" 2> "$details/bigv-last.err"
  log "big-vocabulary rc=$? $(head -c 600 "$details/bigv-last.json")"
  rm -rf /tmp/bigv/index
  [ "${SPILL_BIG_AB:-1}" = 1 ] || return 0
  for i in "${!dists[@]}"; do
    SUMMARY=--memory build "bigv-$i" "${dists[$i]}" /tmp/bigv/crawl "/tmp/bigv/idx$i"
    rm -rf "/tmp/bigv/idx$i"
  done
}

what=${1:-}
[ $# -gt 0 ] && shift
case "$what" in
  info|sort|sorters|cub|table|builds|memory|onefile|ab|ratio|pool|scaling|workers|profile|setup|html|warc|smallfiles|writer|vocab|lexicons|positions|spill)
    header "$what"; "cmd_$what" "$@" ;;
  all)
    header all; cmd_builds; cmd_table; cmd_memory; cmd_onefile ;;
  *)
    sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    [ -z "$what" ] || { echo "device.sh: unknown subcommand '$what'" >&2; exit 2; }
    exit 0 ;;
esac
log done
