#!/usr/bin/env bash
# The seed study's table on a GPU machine (scripts/gpu-check runs it as its `text` step):
# DistilBERT-base size (random init, no download), batch 12, sequence 512, in 32-true, bf16-mixed
# and 16-mixed: Hearth (hearth_bench_train, the engine's real loop) vs transformers eager vs
# Lightning (bench/transformers_step.py), samples/s, peak memory and MFU. Prints a Markdown table.
#
#   bench/text_gpu.sh [BUILD_DIR] [OUT_DIR]      (defaults build/cuda, out/text-gpu)
# Environment: PYTHON (python3), BENCH_STEPS (30), BENCH_SEQ (512), BENCH_BATCH (12),
# PEAK_TFLOPS_16 (989, H100 SXM dense bf16/fp16), PEAK_TFLOPS_32 (67, FP32 without TF32).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/cuda}" out="${2:-out/text-gpu}"
py="${PYTHON:-python3}" steps="${BENCH_STEPS:-30}" seq="${BENCH_SEQ:-512}" batch="${BENCH_BATCH:-12}"
mkdir -p "$out"
bench="$build/bench/hearth_bench_train"
[ -x "$bench" ] || { echo "bench/text_gpu.sh: no $bench (scripts/build cuda)" >&2; exit 2; }
n=$(( (steps + 6) * batch * 100 / 90 ))
"$py" bench/random_text_csv.py "$out/texts.csv" "$n" "$seq"
: > "$out/results.jsonl"
for precision in 32-true bf16-mixed 16-mixed; do
  echo "-- $precision" >&2
  "$bench" --model distilbert --text-csv "$out/texts.csv" --vocab tests/fixtures/tokenizer/vocab.txt --seq "$seq" \
    --batch-size "$batch" --workers 2 --precision "$precision" --accelerator cuda --warmup-batches 5 \
    >> "$out/results.jsonl" 2> "$out/hearth-$precision.log" || echo "hearth $precision failed" >&2
  for mode in "" --lightning; do
    "$py" bench/transformers_step.py --device cuda --seq "$seq" --batch-size "$batch" --precision "$precision" \
      --steps "$steps" --warmup 5 $mode >> "$out/results.jsonl" 2> "$out/py-$precision$mode.log" ||
      echo "transformers $precision $mode failed" >&2
  done
done
"$py" - "$out/results.jsonl" <<'PY'
import json, os, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
peak16 = float(os.environ.get("PEAK_TFLOPS_16", 989)) * 1e12
peak32 = float(os.environ.get("PEAK_TFLOPS_32", 67)) * 1e12
# Training FLOPs per sample: 6 x non-embedding parameters x tokens + attention scores (12 x L x T^2 x d).
layers, dim, ffn = 6, 768, 3072
def flops(seq):
    non_embedding = layers * (4 * dim * dim + 2 * dim * ffn) + dim * dim + 2 * dim
    return 6 * non_embedding * seq + 12 * layers * seq * seq * dim
print("| engine | precision | samples/s | peak memory | MFU | Hearth's stored MFU (whole fit) |")
print("|---|---|---:|---:|---:|---:|")
for r in rows:
    p = r["precision"]
    peak = peak32 if p == "32-true" else peak16
    mfu = r["steady_samples_per_sec"] * flops(r["seq"]) / peak
    mem = r.get("peak_memory_bytes", 0) / 2**30
    own = f"{100 * r['mfu']:.1f}%" if r.get("mfu", -1) >= 0 else "-"
    print(f"| {r['engine']} | {p} | {r['steady_samples_per_sec']:.1f} | {mem:.2f} GiB | {100 * mfu:.1f}% | {own} |")
PY
