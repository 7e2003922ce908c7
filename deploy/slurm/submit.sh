#!/usr/bin/env bash
# Queues the shard builds (one array task per shard) and the join that waits for all of them.
#   deploy/slurm/submit.sh <crawl> <out> <N> [tasks]
# tasks: the array indices to run, default 0-<N-1>; after a failed task, pass just it (e.g. 2)
# to rebuild that shard and queue a new join (scancel the old join first: it never starts).
# Prints "build <array job id>" and "join <job id>". Environment, passed on to the jobs:
# GPUINDEX, GPUINDEX_BUILD_ARGS, GPUINDEX_OPTIMIZE (0: leave the index as N segments),
# GRES (e.g. gpu:1 on GPU nodes), SBATCH_ARGS (more sbatch options for both jobs, e.g.
# "--partition=gpu --time=2:00:00").
set -euo pipefail

usage="usage: submit.sh <crawl> <out> <N> [tasks]"
crawl=${1:?$usage} out=${2:?$usage} n=${3:?$usage}
tasks=${4:-0-$((n - 1))}
case $n in ''|*[!0-9]*|0) echo "submit.sh: N must be a positive integer: $n" >&2; exit 2;; esac
here=$(cd "$(dirname "$0")" && pwd)
crawl=$(cd "$(dirname "$crawl")" && pwd)/$(basename "$crawl")   # absolute: jobs may start elsewhere
mkdir -p "$out/shards" "$out/logs"
out=$(cd "$out" && pwd)

# shellcheck disable=SC2086  # SBATCH_ARGS is a word list
build=$(sbatch --parsable --array="$tasks" ${GRES:+--gres="$GRES"} ${SBATCH_ARGS:-} \
  --output="$out/logs/build-%A_%a.out" "$here/build-shards.sbatch" "$crawl" "$out" "$n")
build=${build%%;*}
# shellcheck disable=SC2086
join=$(sbatch --parsable --dependency="afterok:$build" ${SBATCH_ARGS:-} \
  --output="$out/logs/join-%j.out" "$here/join.sbatch" "$out" "$n")
join=${join%%;*}
echo "build $build"
echo "join $join"
