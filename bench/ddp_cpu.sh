#!/usr/bin/env bash
# Data-parallel training on this machine's CPU: one process vs two (ddp, zero1, zero2) at the
# same global batch, each run stored in a scratch run store; prints (bench/ddp_report.py) a
# Markdown table of train time, samples/s and accuracy as hearth-cli recorded them, then the
# communication share of a step per rank (gradient communication per step as c10d's Logger
# times it for ddp/zero1, and the part of the step it was not hidden under backward).
#
#   bench/ddp_cpu.sh [BUILD_DIR]        (default build/dev; needs a build with ddp: HEARTH_WITH_C10D)
#
# Environment: BENCH_LIMIT (training samples, 5000), BENCH_EPOCHS (2), BENCH_BATCH (global, 128),
# BENCH_MODEL (cnn).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/dev}"
cli="$build/app/cli/hearth-cli"
[ -x "$cli" ] || { echo "bench/ddp_cpu.sh: no $cli (scripts/build dev)" >&2; exit 2; }
limit="${BENCH_LIMIT:-5000}" epochs="${BENCH_EPOCHS:-2}" batch="${BENCH_BATCH:-128}" model="${BENCH_MODEL:-cnn}"
scratch="$(mktemp -d)"; trap 'rm -rf "$scratch"' EXIT
db="$scratch/ddp-bench.sqlite"
common=(--set data.limit="$limit" --set trainer.max_epochs="$epochs" --set trainer.num_workers=0
        --set model.name="$model" -q)
run() {  # name, then --set arguments
  local name="$1"; shift
  "$cli" --db "$db" run --set name="$name" "${common[@]}" "$@" > /dev/null 2>&1 ||
    echo "bench/ddp_cpu.sh: run '$name' failed" >&2
}
run "1 process, 1 thread" --set trainer.batch_size="$batch" --set trainer.num_threads=1
run "1 process, 2 threads" --set trainer.batch_size="$batch" --set trainer.num_threads=2
run "2 processes, ddp" --set trainer.batch_size=$((batch / 2)) --set trainer.num_threads=1 \
    --set trainer.devices=2 --set trainer.strategy=ddp
run "2 processes, zero1" --set trainer.batch_size=$((batch / 2)) --set trainer.num_threads=1 \
    --set trainer.devices=2 --set trainer.strategy=zero1
run "2 processes, zero2" --set trainer.batch_size=$((batch / 2)) --set trainer.num_threads=1 \
    --set trainer.devices=2 --set trainer.strategy=zero2
echo "$(date -u +%F), $(nproc) cores, $model, $limit samples, $epochs epochs, global batch $batch:"
echo
python3 bench/ddp_report.py "$cli" "$db" "1 process, 1 thread"
