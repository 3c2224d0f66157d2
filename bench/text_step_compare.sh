#!/usr/bin/env bash
# Transformer training throughput on this machine: Hearth (hearth_bench_train, the engine's real
# loop: loader, Trainer, Adam) vs the same model in PyTorch 2.11 eager with transformers
# (bench/transformers_step.py), same size, batch, sequence length and threads. Hearth is measured
# in each build given (default: build/dev = LibTorch 1.13, build/cuda = LibTorch 2.11 on CPU).
#
#   bench/text_step_compare.sh [--model distilbert] [--dim 768 --layers 6 --heads 12 --ffn 3072]
#                              [--seq 128] [--batch-size 8] [--threads 2] [--builds "build/dev build/cuda"]
set -euo pipefail
cd "$(dirname "$0")/.."
model=distilbert dim=768 layers=6 heads=12 ffn=3072 seq=128 batch=8 threads=2 builds="build/dev build/cuda"
steps=24 precision=32-true
while [ $# -gt 0 ]; do
  case "$1" in
    --model) model=$2; shift 2 ;; --dim) dim=$2; shift 2 ;; --layers) layers=$2; shift 2 ;;
    --heads) heads=$2; shift 2 ;; --ffn) ffn=$2; shift 2 ;; --seq) seq=$2; shift 2 ;;
    --batch-size) batch=$2; shift 2 ;; --threads) threads=$2; shift 2 ;; --builds) builds=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;; --precision) precision=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
py=.deps/python/bin/python
[ -x "$py" ] || { echo "needs .deps/python (scripts/install-deps)" >&2; exit 2; }
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
# Random whole-word texts long enough that every sample is cut to exactly --seq tokens.
n=$(( (steps + 4) * batch * 100 / 90 ))
"$py" bench/random_text_csv.py "$tmp/texts.csv" "$n" "$seq"
echo "$(date -u +%F), $(nproc) cores, $model dim $dim x $layers layers, $heads heads, ffn $ffn, seq $seq, batch $batch, $threads threads, $precision"
for build in $builds; do
  [ -x "$build/bench/hearth_bench_train" ] || { echo "skip $build (no bench/hearth_bench_train)" >&2; continue; }
  "$build/bench/hearth_bench_train" --model "$model" --text-csv "$tmp/texts.csv" \
    --vocab tests/fixtures/tokenizer/vocab.txt --seq "$seq" --dim "$dim" --layers "$layers" --heads "$heads" \
    --ffn "$ffn" --batch-size "$batch" --threads "$threads" --workers 1 --precision "$precision" \
    --warmup-batches 4 --epochs 1
done
"$py" bench/transformers_step.py --model "$model" --seq "$seq" --batch-size "$batch" --dim "$dim" \
  --layers "$layers" --heads "$heads" --ffn "$ffn" --threads "$threads" --steps "$steps" --precision "$precision"
