#!/usr/bin/env bash
# The batch-size finder's time and answer: the default bisection (multiples of 8, within 5%)
# against the exact one (--multiple-of 1 --tolerance 0), each REPEATS times, alternating, on the
# default experiment under a CPU memory limit. Prints one line per search and the median with
# min-max of each.
#
#   bench/batch_finder.sh [BUILD_DIR] [LIMIT] [REPEATS]    (defaults: build/dev, 2GiB, 3)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/dev}"
limit="${2:-2GiB}"
repeats="${3:-3}"
cli="$build/app/cli/hearth-cli"
[ -x "$cli" ] || { echo "no $cli: build first (scripts/build)" >&2; exit 2; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
echo "$(date -u +%F), $(nproc) cores, $("$cli" --version | head -n 1), limit $limit"
declare -A times
for ((i = 1; i <= repeats; ++i)); do
  for mode in default exact; do
    extra=()
    [ "$mode" = exact ] && extra=(--multiple-of 1 --tolerance 0)
    start=$(date +%s.%N)
    "$cli" --db "$out/s.sqlite" tune --batch-size --memory-limit "$limit" "${extra[@]}" > "$out/$mode.log" 2>&1
    seconds=$(echo "$(date +%s.%N) - $start" | bc)
    trials=$(grep -cE '^ +[0-9]+ +(fits|oom) ' "$out/$mode.log")
    echo "$mode $i: $(printf %.1f "$seconds") s, $trials trials, $(grep 'Largest batch' "$out/$mode.log")"
    times[$mode]+="$seconds "
  done
done
for mode in default exact; do
  # shellcheck disable=SC2086
  printf '%s\n' ${times[$mode]} | sort -g |
    awk -v m="$mode" '{ v[NR] = $1 } END { printf "%s: median %.1f s (%.1f-%.1f)\n", m, v[int((NR + 1) / 2)], v[1], v[NR] }'
done
