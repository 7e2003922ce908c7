#!/usr/bin/env bash
# End-to-end check of deploy/slurm on a one-node Slurm cluster started here (no systemd; as root).
# For corpus-samples/moby-dick and the first JSONL file under corpus-samples/, with 4 shards:
#  1. deploy/slurm/submit.sh with task 2 made to fail: the other shards are built, the join
#     never starts (DependencyNeverSatisfied) and is cancelled;
#  2. resume: submit.sh ... 4 2 rebuilds shard 2 and joins (GPUINDEX_OPTIMIZE=0); the joined
#     index verifies and answers searches exactly like a one-machine build;
#  3. join.sbatch again, optimizing: postings.bin and every index.sqlite table but settings are
#     byte-identical to the one-machine build, and verify passes.
# Installs slurmctld, slurmd, slurm-client and munge if missing, starts and stops the daemons,
# removes what it made (CI_SLURM_KEEP=1 keeps its temporary folder: logs, shards, indexes), and
# ends with a PASS or FAIL line (exit 1 on failure).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
t0=$(date +%s)
passed=0
say() { echo "ci-slurm: $*"; }
ok() { passed=$((passed + 1)); say "ok: $*"; }
fail() {
  say "FAIL: $*"
  show_logs
  say "FAIL after $(($(date +%s) - t0)) s"
  echo "ci-slurm: $passed passed, 1 failed"
  exit 1
}

# --- install -----------------------------------------------------------------------------
[ "$(id -u)" = 0 ] || { say "FAIL: must run as root (starts munged, slurmctld, slurmd)"; exit 1; }
need=()
for p in slurmctld slurmd slurm-client munge; do
  dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  say "installing ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
[ -f dist/src/cli.js ] || npm run build
gpuindex="node $repo/dist/src/cli.js"

# --- cluster -----------------------------------------------------------------------------
tmp=$(mktemp -d /tmp/gpuindex-ci-slurm.XXXXXX)
chmod 755 "$tmp"
export SLURM_CONF=$tmp/slurm.conf
jobs=() made_run_slurm=0 started_munge=0 made_run_munge=0

show_logs() {
  [ -d "${tmp:-/nonexistent}" ] || return 0
  for f in "$tmp"/*/logs/*.out "$tmp"/log/*.log; do
    [ -f "$f" ] && { echo "----- $f (last 20 lines)"; tail -n 20 "$f"; }
  done
  return 0
}
stop_pid() { # pid file: TERM, then KILL after 10 s
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 0
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.2; done
  kill -9 "$pid" 2>/dev/null || true
}
cleanup() {
  set +e
  [ ${#jobs[@]} -gt 0 ] && scancel "${jobs[@]}" 2>/dev/null
  stop_pid /run/slurm/slurmd.pid
  stop_pid /run/slurm/slurmctld.pid
  rm -f /run/slurm/slurmd.pid /run/slurm/slurmctld.pid
  [ "$made_run_slurm" = 1 ] && rmdir /run/slurm 2>/dev/null
  if [ "$started_munge" = 1 ]; then
    stop_pid /run/munge/munged.pid
    [ "$made_run_munge" = 1 ] && rm -rf /run/munge
  fi
  if [ -n "${CI_SLURM_KEEP:-}" ]; then echo "ci-slurm: kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

for d in slurmctld slurmd; do
  if pid=$(cat "/run/slurm/$d.pid" 2>/dev/null) && kill -0 "$pid" 2>/dev/null; then
    say "FAIL: a $d is already running here (pid $pid); stop it first"; exit 1
  fi
done
[ -d /run/slurm ] || { mkdir -p /run/slurm; made_run_slurm=1; }
[ -d /run/munge ] || { mkdir -p /run/munge; made_run_munge=1; }
chown munge:munge /run/munge && chmod 755 /run/munge
[ -s /etc/munge/munge.key ] || runuser -u munge -- /usr/sbin/mungekey --create
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  runuser -u munge -- /usr/sbin/munged
  started_munge=1
  for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.2; done
  munge -n | unmunge >/dev/null || fail "munged does not answer"
fi

host=$(hostname -s)
cpus=$(nproc)
mem=$(awk '/^MemAvailable:/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)
mkdir -p "$tmp/log" "$tmp/slurmctld" "$tmp/slurmd"
chown slurm:slurm "$tmp/log" "$tmp/slurmctld"
cat > "$SLURM_CONF" <<EOF
ClusterName=gpuindex-ci
SlurmctldHost=$host(127.0.0.1)
SlurmUser=slurm
AuthType=auth/munge
StateSaveLocation=$tmp/slurmctld
SlurmdSpoolDir=$tmp/slurmd
SlurmctldPidFile=/run/slurm/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
chmod 644 "$SLURM_CONF"
/usr/sbin/slurmctld -c || fail "slurmctld did not start"
/usr/sbin/slurmd || fail "slurmd did not start"
state=
for _ in $(seq 150); do
  state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.2
done
[ "$state" = idle ] || fail "node $host is '$state', not idle, 30 s after the daemons started"
ok "one-node cluster up: $host, $cpus CPUs, ${mem} MB ($(sinfo -V))"

# --- helpers -----------------------------------------------------------------------------
wait_gone() { # job ids: until none is in squeue (120 s at most)
  local end=$(($(date +%s) + 120)) ids
  ids=$(IFS=,; echo "$*")
  while [ -n "$(squeue -h -j "$ids" -o %i 2>/dev/null)" ]; do
    [ "$(date +%s)" -lt "$end" ] || fail "jobs $ids still queued or running after 120 s"
    sleep 1
  done
}
states() { # job id: "<JobId or ArrayJobId_TaskId>=<state>" per task, sorted
  scontrol -o show job "$1" | sed -E 's/^JobId=([0-9]+) .*ArrayJobId=([0-9]+) ArrayTaskId=([0-9]+) .*JobState=([A-Z_]+) .*/\2_\3=\4/; s/^JobId=([0-9]+) .*JobState=([A-Z_]+) .*/\1=\2/' | sort
}
all_completed() { # job ids
  local id s
  for id in "$@"; do
    s=$(states "$id")
    echo "$s" | grep -qv '=COMPLETED$' && fail "job $id did not complete: $(echo "$s" | tr '\n' ' ')"
  done
  return 0
}
submit() { # env and args of submit.sh; sets sub_build, sub_join
  local o
  o=$("$repo/deploy/slurm/submit.sh" "$@") || fail "submit.sh $* failed"
  sub_build=$(echo "$o" | awk '$1 == "build" { print $2 }')
  sub_join=$(echo "$o" | awk '$1 == "join" { print $2 }')
  { [ -n "$sub_build" ] && [ -n "$sub_join" ]; } || fail "submit.sh printed no job ids: $o"
  jobs+=("$sub_build" "$sub_join")
}

cat > "$tmp/compare.cjs" <<'EOF'
// node compare.cjs <repo> <a/index.sqlite> <b/index.sqlite>: every table but settings equal
const Database = require(process.argv[2] + '/node_modules/better-sqlite3');
const [a, b] = [process.argv[3], process.argv[4]].map((f) => new Database(f, { readonly: true }));
const tables = (db) => db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'settings' ORDER BY name").all();
const ta = tables(a), tb = tables(b);
if (JSON.stringify(ta) !== JSON.stringify(tb)) { console.log('tables or schemas differ'); process.exit(1); }
for (const { name } of ta) {
  const n = a.prepare(`SELECT * FROM "${name}" LIMIT 1`).columns().length;
  const order = Array.from({ length: n }, (_, i) => i + 1).join(', ');
  const dump = (db) => db.prepare(`SELECT * FROM "${name}" ORDER BY ${order}`).raw().all();
  const ra = dump(a), rb = dump(b);
  if (ra.length !== rb.length) { console.log(`${name}: ${ra.length} rows vs ${rb.length}`); process.exit(1); }
  for (let i = 0; i < ra.length; i++) {
    if (JSON.stringify(ra[i]) !== JSON.stringify(rb[i])) { console.log(`${name}: row ${i} differs`); process.exit(1); }
  }
}
console.log(ta.map((t) => t.name).join(' '));
EOF
# shellcheck disable=SC2016  # the wrapper's own $ expressions
printf '#!/bin/sh\n# fails the build of array task $CI_FAIL_TASK, else runs gpuindex\nif [ "$1" = build ] && [ "${SLURM_ARRAY_TASK_ID:-}" = "${CI_FAIL_TASK:-}" ]; then echo "ci-slurm: injected failure of task $SLURM_ARRAY_TASK_ID" >&2; exit 1; fi\nexec %s "$@"\n' "$gpuindex" > "$tmp/flaky-gpuindex"
chmod 755 "$tmp/flaky-gpuindex"

queries=("white whale" "ahab" "call me ishmael" "queequeg harpoon" "sea" "the" "zzzzqx")

run_corpus() { # name crawl
  local name=$1 crawl=$2 out=$tmp/$1 single=$tmp/$1-single s q i n a b
  export GPUINDEX="$gpuindex" GPUINDEX_BUILD_ARGS="--sorter cpu"
  $gpuindex build "$crawl" -o "$single" --sorter cpu -q >/dev/null || fail "$name: one-machine build failed"

  # 1. task 2 fails: the join must not run
  GPUINDEX=$tmp/flaky-gpuindex CI_FAIL_TASK=2 GPUINDEX_OPTIMIZE=0 submit "$crawl" "$out" 4
  wait_gone "$sub_build"
  s=$(states "$sub_build" | tr '\n' ' ')
  [ "$s" = "${sub_build}_0=COMPLETED ${sub_build}_1=COMPLETED ${sub_build}_2=FAILED ${sub_build}_3=COMPLETED " ] \
    || fail "$name: expected only task 2 to fail: $s"
  [ ! -e "$out/shards/shard-2" ] || fail "$name: a failed task left $out/shards/shard-2"
  grep -q '(--shard auto)' "$out/logs/build-${sub_build}_0.out" || fail "$name: task 0 did not use --shard auto"
  for _ in $(seq 30); do
    [ "$(squeue -h -j "$sub_join" -o %r)" = DependencyNeverSatisfied ] && break
    sleep 1
  done
  [ "$(squeue -h -j "$sub_join" -o '%T %r')" = "PENDING DependencyNeverSatisfied" ] \
    || fail "$name: join after a failed task: $(squeue -h -j "$sub_join" -o '%T %r')"
  scancel "$sub_join"
  ok "$name: task 2 failed, shards 0 1 3 built, the join never started and was cancelled"

  # 2. resume: rebuild shard 2 alone, join without optimizing
  GPUINDEX_OPTIMIZE=0 submit "$crawl" "$out" 4 2
  wait_gone "$sub_build" "$sub_join"
  all_completed "$sub_build" "$sub_join"
  grep -q '(--shard 2/4)' "$out/logs/build-${sub_build}_2.out" || fail "$name: the rerun of task 2 did not build shard 2/4"
  n=$(find "$out/index" -maxdepth 1 -name 'seg-*' | wc -l)
  [ "$n" = 4 ] || fail "$name: joined index has $n segments, not 4"
  $gpuindex verify "$out/index" >/dev/null || fail "$name: verify failed on the joined index"
  ok "$name: resumed (sbatch --array=2), joined into 4 segments, verify ok"
  for q in "${queries[@]}"; do
    a=$($gpuindex search "$out/index" "$q" --json -k 50) || fail "$name: search '$q' failed on the joined index"
    b=$($gpuindex search "$single" "$q" --json -k 50) || fail "$name: search '$q' failed on the one-machine build"
    [ "$a" = "$b" ] || fail "$name: search '$q' differs between the joined index and the one-machine build"
    [ "$q" != "${queries[0]}" ] || [ "$a" != "[]" ] || fail "$name: search '$q' found nothing"
  done
  ok "$name: ${#queries[@]} searches (--json -k 50) over the joined index equal the one-machine build's"

  # 3. join again, optimizing (the default)
  i=$(sbatch --parsable --output="$out/logs/join-%j.out" "$repo/deploy/slurm/join.sbatch" "$out" 4) \
    || fail "$name: sbatch join.sbatch failed"
  jobs+=("$i")
  wait_gone "$i"
  all_completed "$i"
  { [ -f "$out/index/postings.bin" ] && [ ! -e "$out/index/seg-0000" ]; } || fail "$name: optimize left segments"
  cmp "$out/index/postings.bin" "$single/postings.bin" || fail "$name: postings.bin differs"
  s=$(node "$tmp/compare.cjs" "$repo" "$out/index/index.sqlite" "$single/index.sqlite") \
    || fail "$name: index.sqlite differs: $s"
  $gpuindex verify "$out/index" >/dev/null || fail "$name: verify failed on the optimized index"
  ok "$name: joined+optimized = one-machine build (postings.bin cmp; tables $s), verify ok"
}

jsonl=$(find corpus-samples -name '*.jsonl' -type f | sort | head -n 1)
run_corpus moby-dick "$repo/corpus-samples/moby-dick"
if [ -n "$jsonl" ]; then run_corpus "$(basename "$jsonl")" "$repo/$jsonl"; else say "no JSONL sample in corpus-samples/"; fi

say "PASS in $(($(date +%s) - t0)) s: deploy/slurm (array build, failed task rerun, join, optimize, verify) on Slurm $(sinfo -V | awk '{ print $2 }')"
echo "ci-slurm: $passed passed, 0 failed"
