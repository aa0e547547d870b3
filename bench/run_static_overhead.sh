#!/usr/bin/env bash
# Times bench/churn four ways, median of N runs each, alternating: dynamic plain, dynamic under
# LD_PRELOAD=libmemtrack.so, static plain, static linked with libmemtrack_static.a. Prints ns
# per malloc+free pair and each mode's ratio to its own plain build.
# Usage: bench/run_static_overhead.sh [BUILD_DIR] [N]
set -euo pipefail
build=${1:-build/release}
runs=${2:-5}
bench=$build/bench
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
ns() { echo "$1 * 1000000000 / $pairs" | bc -l; }

for depth in 10 30; do
  dp=(); dt=(); sp=(); st=()
  for ((i = 0; i < runs; i++)); do
    dp+=("$(seconds "$bench/memtrack_bench_churn" $pairs $depth)")
    dt+=("$(seconds env LD_PRELOAD="$runtime" MEMTRACK_OPTIONS=report_at_exit=0 \
      "$bench/memtrack_bench_churn" $pairs $depth)")
    sp+=("$(seconds "$bench/memtrack_bench_churn_static_plain" $pairs $depth)")
    st+=("$(seconds env MEMTRACK_OPTIONS=report_at_exit=0 \
      "$bench/memtrack_bench_churn_static" $pairs $depth)")
  done
  a=$(printf '%s\n' "${dp[@]}" | median); b=$(printf '%s\n' "${dt[@]}" | median)
  c=$(printf '%s\n' "${sp[@]}" | median); d=$(printf '%s\n' "${st[@]}" | median)
  printf 'depth %2d: dynamic plain %4.0f, preload %4.0f ns/pair (%.1fx); ' \
    "$depth" "$(ns "$a")" "$(ns "$b")" "$(echo "$b / $a" | bc -l)"
  printf 'static plain %4.0f, linked %4.0f ns/pair (%.1fx)\n' \
    "$(ns "$c")" "$(ns "$d")" "$(echo "$d / $c" | bc -l)"
done
