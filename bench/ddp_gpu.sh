#!/usr/bin/env bash
# Data-parallel training on a GPU machine (the cuda build; scripts/gpu-check runs it as its ddp
# step). Every run is stored in one scratch run store; prints Markdown tables (bench/ddp_report.py):
#   - one device (strategy auto) vs ddp over NCCL in a world of one: the cost of the distributed
#     machinery itself (the issue's target: at most 3% fewer samples/s);
#   - Gloo on CUDA, two processes sharing GPU 0 (the debug mode NCCL refuses);
#   - with G > 1 GPUs: ddp, zero1 and zero2 over NCCL on G GPUs, per-device batch fixed;
#   - NCCL asked for two ranks on one GPU must be refused before anything starts (exit 2).
#
#   bench/ddp_gpu.sh [BUILD_DIR] [OUT_DIR]     (defaults build/cuda, out/ddp-gpu)
#
# Environment: FASHION_MNIST (data folder), BENCH_EPOCHS (3), BENCH_BATCH (per device, 256),
# BENCH_MODEL (cnn), BENCH_PRECISION (16-mixed).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/cuda}"
out="${2:-out/ddp-gpu}"
cli="$build/app/cli/hearth-cli"
[ -x "$cli" ] || { echo "bench/ddp_gpu.sh: no $cli (scripts/build cuda)" >&2; exit 2; }
mkdir -p "$out"
db="$out/ddp-gpu.sqlite"
rm -f "$db"
gpus="$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)"
[ "${gpus:-0}" -ge 1 ] || { echo "bench/ddp_gpu.sh: no GPU (nvidia-smi -L lists none)" >&2; exit 2; }
epochs="${BENCH_EPOCHS:-3}" batch="${BENCH_BATCH:-256}" model="${BENCH_MODEL:-cnn}"
precision="${BENCH_PRECISION:-16-mixed}"
common=(--set trainer.max_epochs="$epochs" --set trainer.batch_size="$batch" --set model.name="$model"
        --set trainer.precision="$precision" --set trainer.accelerator=cuda --set trainer.ddp.timeout_s=120 -q)
[ -n "${FASHION_MNIST:-}" ] && common+=(--set data.path="$FASHION_MNIST")
failed=0
run() {  # name, then --set arguments
  local name="$1"; shift
  echo "-- $name" >&2
  if ! "$cli" --db "$db" run --set name="$name" "${common[@]}" "$@" > "$out/$(echo "$name" | tr ' ,/' '___').log" 2>&1; then
    echo "bench/ddp_gpu.sh: run '$name' failed (see $out)" >&2
    failed=1
  fi
}
run "1 GPU" --set trainer.devices=1
run "ddp, world 1, nccl" --set trainer.devices=1 --set trainer.strategy=ddp --set trainer.ddp.backend=nccl
run "zero2, world 1, nccl" --set trainer.devices=1 --set trainer.strategy=zero2 --set trainer.ddp.backend=nccl
run "ddp, 2 ranks on GPU 0, gloo" --set trainer.devices=2 --set trainer.strategy=ddp --set trainer.ddp.backend=gloo
if [ "$gpus" -gt 1 ]; then
  for s in ddp zero1 zero2; do
    run "$s, $gpus GPUs, nccl" --set trainer.devices="$gpus" --set trainer.strategy="$s" --set trainer.ddp.backend=nccl
  done
fi
# NCCL cannot put two ranks on one GPU: validation must say so and start nothing.
refusal="$("$cli" --db "$db" run "${common[@]}" --set trainer.devices=$((gpus + 1)) --set trainer.strategy=ddp \
           --set trainer.ddp.backend=nccl 2>&1)" && rc=0 || rc=$?
echo "$(date -u +%F), $(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1) x $gpus, $model, $precision," \
     "batch $batch per device, $epochs epochs:"
echo
python3 bench/ddp_report.py "$cli" "$db" "1 GPU"
echo
echo "nccl with $((gpus + 1)) ranks on $gpus GPUs: exit $rc, \"$(echo "$refusal" | grep -m1 -i 'error' || true)\""
[ "$rc" -eq 2 ] || failed=1
exit "$failed"
