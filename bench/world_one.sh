#!/usr/bin/env bash
# The cost of the distributed machinery itself: one device (trainer.strategy=auto) against ddp in
# a world of one (one process, the same device: NCCL on a GPU, Gloo on the CPU), the two
# alternating over BENCH_REPEATS rounds (the first of each pair swaps every round). Issue 27's
# target on a GPU: ddp at most 3% fewer steady samples/s. Prints a Markdown table per model
# (bench/world_one_report.py): steady (last epoch) and whole-fit samples/s, median (min-max).
#
#   bench/world_one.sh [BUILD_DIR] [OUT_DIR]    (defaults build/dev, a scratch folder removed at the end)
#
# Environment: BENCH_ACCELERATOR (cpu; cuda), BENCH_MODELS ("mlp" on the CPU, whose CNN step is
# too long for a per-step cost to show; "mlp cnn" on a GPU; also distilbert: random texts of 512
# tokens, batch 12, bf16-mixed), BENCH_REPEATS (3), BENCH_DATA (Fashion-MNIST folder),
# BENCH_EPOCHS (3), BENCH_LIMIT (training samples; 0, the default: all).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/dev}"
# The scratch folder goes at the end unless a run failed (its log is there).
failed=0
if [ -n "${2:-}" ]; then out="$2"; else out="$(mktemp -d)"; trap '[ "$failed" != 0 ] || rm -rf "$out"' EXIT; fi
cli="$build/app/cli/hearth-cli"
[ -x "$cli" ] || { echo "bench/world_one.sh: no $cli (scripts/build)" >&2; exit 2; }
mkdir -p "$out"
db="$out/world-one.sqlite"
rm -f "$db"
accelerator="${BENCH_ACCELERATOR:-cpu}" repeats="${BENCH_REPEATS:-3}"
epochs="${BENCH_EPOCHS:-3}" limit="${BENCH_LIMIT:-0}"
if [ "$accelerator" = cpu ]; then
  backend=gloo models="${BENCH_MODELS:-mlp}"
  # Host-bound on purpose: a small model at a small batch, one thread, is where a per-step cost of
  # the machinery shows, as it does on a GPU whose step is bound by launches.
  mlp=(--set model.name=mlp --set "model.hidden=[64]" --set trainer.batch_size=32 --set trainer.num_threads=1)
  cnn=(--set model.name=cnn --set trainer.batch_size=64 --set trainer.num_threads=1)
else
  backend=nccl models="${BENCH_MODELS:-mlp cnn}"
  mlp=(--set model.name=mlp --set trainer.batch_size=256 --set trainer.precision=16-mixed)
  cnn=(--set model.name=cnn --set trainer.batch_size=256 --set trainer.precision=16-mixed)
fi
if [[ " $models " == *" distilbert "* ]]; then
  python3 bench/random_text_csv.py "$out/texts.csv" 3000 512
  distilbert=(--set data.kind=text_csv --set data.path="$out/texts.csv" --set data.tokenizer=tests/fixtures/tokenizer/vocab.txt
              --set data.max_length=512 --set data.padding=max_length --set model.name=distilbert
              --set trainer.batch_size=12 --set trainer.precision=bf16-mixed)
fi
common=(--set trainer.max_epochs="$epochs" --set trainer.num_workers=0 --set trainer.accelerator="$accelerator"
        --set trainer.devices=1 -q)
[ "$limit" != 0 ] && common+=(--set data.limit="$limit")
image_data=()
[ -n "${BENCH_DATA:-}" ] && image_data=(--set data.path="$BENCH_DATA")
run() {  # model, variant
  local model="$1" variant="$2" extra=()
  [ "$variant" = ddp ] && extra=(--set trainer.strategy=ddp --set trainer.ddp.backend="$backend")
  local -n spec="$model"
  local data=()
  [ "$model" != distilbert ] && data=("${image_data[@]}")
  "$cli" --db "$db" run --set "name=$model | $variant" "${common[@]}" "${spec[@]}" "${data[@]}" "${extra[@]}" \
    > "$out/$model-${variant// /-}-$r.log" 2>&1 || { failed=1; echo "bench/world_one.sh: $model, $variant (round $r) failed (see $out)" >&2; }
}
for r in $(seq "$repeats"); do
  for model in $models; do
    if [ $((r % 2)) = 1 ]; then run "$model" "one device"; run "$model" ddp; else run "$model" ddp; run "$model" "one device"; fi
  done
done
if [ "$accelerator" = cpu ]; then
  where="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
else
  where="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)"
fi
echo "$(date -u +%F), $where, $("$cli" --version 2>/dev/null | head -n 1); ddp over $backend in a world of one; $repeats rounds"
python3 bench/world_one_report.py "$cli" "$db"
