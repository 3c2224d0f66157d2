#!/usr/bin/env bash
# Data-parallel training on this machine's CPU: one process vs two (ddp, zero1, zero2) at the
# same global batch, each run stored in a scratch run store; prints a Markdown table of train
# time, samples/s and accuracy as hearth-cli recorded them, then the communication share of a
# step per rank (gradient communication per step as c10d's Logger times it for ddp/zero1, and the
# part of the step it was not hidden under backward).
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
db="$(mktemp -d)/ddp-bench.sqlite"
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
"$cli" --db "$db" runs | python3 -c '
import sys
lines = sys.stdin.read().splitlines()[1:]
print("| run | train time | samples/s | best val acc | test acc |")
print("|---|---:|---:|---:|---:|")
for line in reversed(lines):
    parts = line.split()
    # ID NAME... STATUS DATE TIME EPOCHS BEST TEST TRAIN(2 fields) SAMPLES
    status_at = next(i for i, p in enumerate(parts) if p in ("completed", "failed", "stopped", "running"))
    name = " ".join(parts[1:status_at])
    best, test, train, unit, rate = parts[status_at + 4: status_at + 9]
    print(f"| {name} | {train} {unit} | {rate} | {best} | {test} |")
'
echo
echo "| run | rank | step | comm/step | overlapped | exposed comm share |"
echo "|---|---:|---:|---:|---:|---:|"
for id in 3 4 5; do
  "$cli" --db "$db" export "$id" --format json --out - | python3 -c '
import json, sys
run = json.load(sys.stdin)
name = run["run"]["name"]
for r in run["ranks"]:
    step = r["train_time_s"] * 1000.0 / max(r["steps"], 1)
    exposed = max(0.0, r["comm_ms"] - r["overlap_ms"])
    rank, comm, overlap = r["rank"], r["comm_ms"], r["overlap_ms"]
    print(f"| {name} | {rank} | {step:.1f} ms | {comm:.1f} ms | {overlap:.1f} ms | {100.0 * exposed / step:.1f}% |")
'
done
