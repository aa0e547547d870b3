#!/usr/bin/env bash
# Times bench/churn plain and under libmemtrack.so (median of N runs each, alternating) and
# prints ns per malloc+free pair and the ratio. Usage: bench/run_overhead.sh [BUILD_DIR] [N]
set -euo pipefail
build=${1:-build/release}
runs=${2:-5}
churn=$build/bench/memtrack_bench_churn
runtime=$(realpath "$build/runtime/libmemtrack.so")
pairs=1000000

seconds() {  # prints wall seconds of "$@"
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

for depth in 10 30; do
  plain=(); tracked=()
  for ((i = 0; i < runs; i++)); do
    plain+=("$(seconds "$churn" $pairs $depth)")
    tracked+=("$(seconds env LD_PRELOAD="$runtime" MEMTRACK_OPTIONS=report_at_exit=0 "$churn" $pairs $depth)")
  done
  p=$(printf '%s\n' "${plain[@]}" | median)
  t=$(printf '%s\n' "${tracked[@]}" | median)
  printf 'depth %2d: plain %6.0f ns/pair, memtrack %6.0f ns/pair, ratio %.1fx\n' \
    "$depth" "$(echo "$p * 1000000000 / $pairs" | bc -l)" "$(echo "$t * 1000000000 / $pairs" | bc -l)" \
    "$(echo "$t / $p" | bc -l)"
done
