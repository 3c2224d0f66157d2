#!/usr/bin/env bash
# The image-folder loader on this machine: Fashion-MNIST written as 224-pixel JPEGs
# (image_loader_bench --write, encoded by libjpeg-turbo), samples/s of the loader alone with
# 0, 1, 2 (and more, up to the core count) workers, with random-resized-crop + flip, and from the
# decoded cache; REPEATS repeats each, alternating, as a Markdown table of the median and min-max.
#
#   bench/image_loader.sh [OUT_DIR]        (env: PER_CLASS=300 REPEATS=3 BATCHES=30 HEARTH_BUILD=build/dev)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/image-loader}
build=${HEARTH_BUILD:-build/dev}
per_class=${PER_CLASS:-300}
repeats=${REPEATS:-3}
batches=${BATCHES:-30}
bench="$build/bench/image_loader_bench"
mkdir -p "$out"
folder="$out/fmnist-224-jpeg"
[ -d "$folder/train" ] || "$bench" --write "$folder" --size 224 --per-class "$per_class" >&2
export HEARTH_CACHE_DIR="$out/cache"
cores=$(nproc)
cases=("0" "1" "2")
[ "$cores" -gt 2 ] && cases+=("$cores")
results="$out/results.jsonl"
: > "$results"
for r in $(seq "$repeats"); do
  for w in "${cases[@]}"; do
    "$bench" --folder "$folder" --workers "$w" --batches "$batches" >> "$results"
    "$bench" --folder "$folder" --workers "$w" --batches "$batches" --augment >> "$results"
  done
  "$bench" --folder "$folder" --workers 0 --batches "$batches" --cache >> "$results"
  "$bench" --folder "$folder" --workers 2 --batches "$batches" --cache --augment >> "$results"
done
python3 - "$results" "$cores" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
groups = {}
for r in rows:
    key = (r["cache"], r["augment"], r["workers"])
    groups.setdefault(key, []).append(r["samples_per_sec"])
print(f"| source | augmentation | workers | samples/s (median, min-max of {len(next(iter(groups.values())))}) |")
print("|---|---|---:|---:|")
for (cache, aug, w), v in sorted(groups.items()):
    print(f"| {'decoded cache' if cache else 'JPEG 224 decode + resize'} | {'random resized crop + flip' if aug else 'none'} | {w} | "
          f"{statistics.median(v):,.0f} ({min(v):,.0f}-{max(v):,.0f}) |")
print(f"\n{rows[0]['images']} training images of {rows[0]['image_size']}x{rows[0]['image_size']}, batch {rows[0]['batch_size']}, {sys.argv[2]} cores")
PY
