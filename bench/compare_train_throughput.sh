#!/usr/bin/env bash
# Trains the same model with the same batch size and thread count through Hearth
# (hearth_bench_train) and through a plain PyTorch loop (plain_torch_loop.py, Debian's torch 1.13),
# and prints both results and the ratio hearth/pytorch of training samples per second.
#
#   bench/compare_train_throughput.sh [BUILD_DIR] [--model mlp|cnn] [--batch-size N] [--threads N]
#                                     [--epochs N] [--limit N] [--precision 32-true|bf16-mixed]
# Both run on the CPU. bench/compare_gpu.sh is the CUDA counterpart (and adds Lightning).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="${1:-$here/../build/dev}"
[[ $# -gt 0 ]] && shift
bench="$build/bench/hearth_bench_train"
python=/usr/bin/python3   # Debian's python3-torch; the pyenv python3 on PATH has no torch

if [[ ! -x "$bench" ]]; then
  echo "no $bench; build it with: ninja -C $build hearth_bench_train" >&2
  exit 2
fi

model=mlp batch=64 threads=2 epochs=1 limit=0 precision=32-true
while [[ $# -gt 0 ]]; do
  case "$1" in
    --model) model="$2"; shift 2 ;;
    --batch-size) batch="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --epochs) epochs="$2"; shift 2 ;;
    --limit) limit="$2"; shift 2 ;;
    --precision) precision="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
args=(--model "$model" --batch-size "$batch" --threads "$threads" --epochs "$epochs" --limit "$limit"
      --precision "$precision")

# Both use exactly `threads` intra-op threads; keep OpenMP from oversubscribing either.
export OMP_NUM_THREADS="$threads"
hearth_json="$("$bench" "${args[@]}" --accelerator cpu --workers 0)"
torch_json="$("$python" "$here/plain_torch_loop.py" "${args[@]}" --device cpu)"

echo "date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "cpu:     $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
echo "command: $0 $build ${args[*]}"
echo "hearth:  $hearth_json"
echo "pytorch: $torch_json"
"$python" - "$hearth_json" "$torch_json" <<'PY'
import json, sys
h, t = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert h["parameters"] == t["parameters"], f"models differ: {h['parameters']} vs {t['parameters']} parameters"
print(f"ratio:   {h['samples_per_sec'] / t['samples_per_sec']:.3f}  "
      f"(hearth {h['samples_per_sec']:.0f} samples/s vs pytorch {t['samples_per_sec']:.0f} samples/s, "
      f"{h['model']}, {h['precision']}, batch {h['batch_size']}, {h['threads']} threads)")
print(f"steady:  {h['steady_samples_per_sec'] / t['steady_samples_per_sec']:.3f}  "
      f"(after {h['warmup_batches']} warm-up batches: hearth {h['steady_samples_per_sec']:.0f} vs "
      f"pytorch {t['steady_samples_per_sec']:.0f} samples/s)")
PY
