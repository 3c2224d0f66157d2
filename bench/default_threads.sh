#!/usr/bin/env bash
# trainer.num_threads=0 (one intra-op thread per physical core) against explicit thread counts,
# each REPEATS times, alternating, on the default experiment (DATA_LIMIT samples, one epoch).
# Prints each run's samples/s (the run's own figure, as `hearth-cli show` gives it), the
# effective setting of the default, and the median with min-max of each.
#
#   bench/default_threads.sh [BUILD_DIR] [REPEATS] [THREADS...]   (defaults: build/dev, 3, 1)
#   DATA_LIMIT=6000 by default.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/dev}"
repeats="${2:-3}"
shift $(( $# >= 2 ? 2 : $# ))
counts=("$@")
[ ${#counts[@]} -eq 0 ] && counts=(1)
limit="${DATA_LIMIT:-6000}"
cli="$build/app/cli/hearth-cli"
[ -x "$cli" ] || { echo "no $cli: build first (scripts/build)" >&2; exit 2; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
echo "$(date -u +%F), $(nproc) logical CPUs, $("$cli" --version | head -n 1), data.limit=$limit, 1 epoch"
declare -A rates
modes=(0 "${counts[@]}")
id=0
for ((i = 1; i <= repeats; ++i)); do
  for threads in "${modes[@]}"; do
    "$cli" --db "$out/s.sqlite" run -q --set data.limit="$limit" --set trainer.max_epochs=1 \
      --set trainer.num_threads="$threads" > "$out/run.log" 2>&1
    id=$((id + 1))
    shown="$("$cli" --db "$out/s.sqlite" show "$id")"
    rate="$(awk '$1 == "samples/s" { print $2; exit }' <<< "$shown")"
    effective="$(grep -E '^  trainer\.num_threads +=' <<< "$shown" | tail -n 1 | sed 's/  */ /g')"   # the effective one
    label="num_threads=$threads"
    [ "$threads" = 0 ] && label="num_threads=0 ($(sed 's/.*= //' <<< "$effective"))"
    echo "$i: $label: $rate samples/s"
    rates[$threads]+="$rate "
  done
done
for threads in "${modes[@]}"; do
  # shellcheck disable=SC2086
  printf '%s\n' ${rates[$threads]} | sort -g |
    awk -v m="num_threads=$threads" '{ v[NR] = $1 } END { printf "%s: median %.0f samples/s (%.0f-%.0f)\n", m, v[int((NR + 1) / 2)], v[1], v[NR] }'
done
