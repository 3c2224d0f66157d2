#!/usr/bin/env bash
# Hearth vs plain PyTorch vs Lightning on CUDA: the same model, initialisation, batch size,
# precision and Fashion-MNIST data, each engine in its own process. Every result goes as one JSON
# line to OUT_DIR/gpu-bench.jsonl; a Markdown table (steady samples/s after warm-up, peak CUDA
# memory, ratios) and the issue's targets follow. Called at the end of scripts/gpu-check.
#
#   bench/compare_gpu.sh OUT_DIR             run everything, then print the table
#   bench/compare_gpu.sh --table OUT_DIR     print the table of an existing OUT_DIR/gpu-bench.jsonl
#
# Environment: HEARTH_BUILD (build dir, default build/gpu), FASHION_MNIST (IDX folder), PYTHON
# (torch 2.x + lightning, default python3), BENCH_EPOCHS (1), BENCH_LIMIT (training samples,
# 0 = all 55,000; default 25600), BENCH_WARMUP (batches left out, 50), BENCH_THREADS (4),
# BENCH_TIMEOUT (seconds per run, 300), BENCH_DEVICE (cuda; cpu only to try the script itself),
# BENCH_SPECS (label:model:hidden:batches... to run part of the matrix, e.g. "cnn:cnn:256,128:256").
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-python3}"
table_only=0
if [[ "${1:-}" == "--table" ]]; then table_only=1; shift; fi
out="${1:?usage: bench/compare_gpu.sh [--table] OUT_DIR}"
jsonl="$out/gpu-bench.jsonl"

render_table() {
  "$python" - "$jsonl" <<'PY'
import json, sys
rows = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    key = (r["label"], r["precision"], r["batch_size"])
    rows.setdefault(key, {})[r["engine"]] = r

def rate(r): return r.get("steady_samples_per_sec") if r and "error" not in r else None
def mib(r): return f"{r['peak_memory_bytes'] / 2**20:.0f}" if r and "error" not in r else "-"
def num(v): return f"{v:,.0f}" if v else "failed"
def ratio(a, b): return a / b if a and b else None
def fmt(x): return f"{x:.2f}x" if x else "-"

order = {"32-true": 0, "bf16-mixed": 1, "16-mixed": 2}
print("| model | precision | batch | Hearth samples/s | PyTorch samples/s | Lightning samples/s "
      "| Hearth MiB | PyTorch MiB | Lightning MiB | Hearth/PyTorch | Hearth/Lightning | Hearth vs own 32-true |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
speedups, small_batch, large_batch = {}, [], []
for key in sorted(rows, key=lambda k: (k[0], k[2], order.get(k[1], 9))):
    label, precision, batch = key
    e = rows[key]
    h, t, l = (e.get(n) for n in ("hearth", "pytorch", "lightning"))
    hr = rate(h)
    base = rate(rows.get((label, "32-true", batch), {}).get("hearth"))
    speedup = ratio(hr, base) if precision != "32-true" else None
    if speedup:
        speedups[(label, precision, batch)] = speedup
    hl = ratio(hr, rate(l))
    if batch <= 32 and hl:
        small_batch.append((hl, label, precision, batch))
    if batch >= 256 and hl:
        large_batch.append((hl, label, precision, batch))
    params = {r["parameters"] for r in (h, t, l) if r and "error" not in r}
    note = "" if len(params) <= 1 else " (parameter counts differ!)"
    print(f"| {label}{note} | {precision} | {batch} | {num(hr)} | {num(rate(t))} | {num(rate(l))} "
          f"| {mib(h)} | {mib(t)} | {mib(l)} | {fmt(ratio(hr, rate(t)))} | {fmt(hl)} | {fmt(speedup)} |")

print("\nSamples/s: training samples per second after the warm-up batches, device synchronised at the"
      " edges; MiB: peak CUDA caching-allocator memory (torch.cuda.max_memory_allocated / Hearth's"
      " DeviceSample peak_bytes).\n")
print("Targets:")
wide = {k: v for k, v in speedups.items() if "wide" in k[0]}   # mlp-wide and mlp-xwide
if wide:
    best = max(wide.items(), key=lambda kv: kv[1])
    print(f"- mixed precision >= 2.5x Hearth 32-true on the matmul-heavy MLP: best {best[1]:.2f}x "
          f"({best[0][0]}, {best[0][1]}, batch {best[0][2]}) -> {'MET' if best[1] >= 2.5 else 'NOT MET'}; all: "
          + ", ".join(f"{m} {p} b{b} {v:.2f}x" for (m, p, b), v in sorted(wide.items())))
else:
    print("- mixed precision >= 2.5x Hearth 32-true on the matmul-heavy MLP: no results")
if small_batch:
    worst = min(small_batch)
    met = sum(1 for s in small_batch if s[0] >= 1.2)
    print(f"- Hearth >= 1.2x Lightning at batch 32: {met}/{len(small_batch)} rows meet it; lowest "
          f"{worst[0]:.2f}x ({worst[1]}, {worst[2]}) -> {'MET' if met == len(small_batch) else 'NOT MET'}")
else:
    print("- Hearth >= 1.2x Lightning at batch 32: no results")
if large_batch:
    worst = min(large_batch)
    met = sum(1 for s in large_batch if s[0] >= 1.0)
    print(f"- Hearth >= 1.0x Lightning at batch >= 256: {met}/{len(large_batch)} rows meet it; lowest "
          f"{worst[0]:.2f}x ({worst[1]}, {worst[2]}, b{worst[3]}) -> {'MET' if met == len(large_batch) else 'NOT MET'}")
failed = [f"{r['engine']} {k[0]} {k[1]} b{k[2]}" for k, e in rows.items() for r in e.values() if "error" in r]
if failed:
    print("- failed runs: " + "; ".join(failed))
PY
}

if [[ $table_only == 1 ]]; then render_table; exit $?; fi

build="${HEARTH_BUILD:-build/gpu}"
bench="$build/bench/hearth_bench_train"
data="${FASHION_MNIST:-/usr/share/datasets/fashion-mnist}"
epochs="${BENCH_EPOCHS:-1}" limit="${BENCH_LIMIT:-25600}" warmup="${BENCH_WARMUP:-50}"
threads="${BENCH_THREADS:-4}" limit_s="${BENCH_TIMEOUT:-300}" device="${BENCH_DEVICE:-cuda}"
if [[ ! -x "$bench" ]]; then echo "compare_gpu.sh: no $bench (build hearth_bench_train first)" >&2; exit 2; fi
mkdir -p "$out"
: >> "$jsonl"   # appends: a later partial run (BENCH_SPECS) adds rows; the table keeps the last of each
logs="$out/gpu-bench-logs"
mkdir -p "$logs"
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1);" \
     "$("$python" -c 'import torch;print("torch", torch.__version__)' 2>&1)"
echo "   $device, epochs $epochs, limit $limit, warm-up $warmup batches, $threads threads, data $data"

# run ENGINE LABEL -- COMMAND...: appends the command's JSON line, tagged with LABEL, or an error line.
run() {
  local engine="$1" label="$2"; shift 3
  local log="$logs/$engine-$label-$precision-$batch.log" json
  json="$(timeout "$limit_s" "$@" 2> "$log" | grep '^{' | tail -n 1)"
  if [[ -z "$json" ]]; then
    echo "   $engine $label $precision batch $batch: FAILED (see $log): $(tail -n 1 "$log")"
    "$python" -c 'import json,sys; print(json.dumps({"engine": sys.argv[1], "label": sys.argv[2],
      "precision": sys.argv[3], "batch_size": int(sys.argv[4]), "error": sys.argv[5]}))' \
      "$engine" "$label" "$precision" "$batch" "$(tail -n 1 "$log")" >> "$jsonl"
    return
  fi
  "$python" -c 'import json,sys; r=json.loads(sys.argv[1]); r["label"]=sys.argv[2]; print(json.dumps(r))' \
    "$json" "$label" >> "$jsonl"
  echo "   $engine $label $precision batch $batch: $("$python" -c 'import json,sys; r=json.loads(sys.argv[1])
print("{:,.0f} samples/s, {:.0f} MiB".format(r["steady_samples_per_sec"], r["peak_memory_bytes"] / 2**20))' "$json")"
}

export OMP_NUM_THREADS="$threads"
# label:model:hidden:batches. mlp-wide and mlp-xwide are the matmul-heavy models of the mixed-precision
# target; at batch 2048 the GPU's matmul throughput, not per-step overhead, sets the pace.
specs="${BENCH_SPECS:-mlp-xwide:mlp:8192,8192:2048 mlp-wide:mlp:4096,4096:32,256,2048 mlp:mlp:256,128:32,256 cnn:cnn:256,128:32,256}"
for spec in $specs; do
  IFS=: read -r label model hidden batches <<< "$spec"
  for batch in ${batches//,/ }; do
    # Large batches: the whole training set for 3 epochs, so that warm-up leaves enough steps.
    e="$epochs" l="$limit" w="$warmup"
    if (( batch >= 1024 )); then e=$(( epochs > 3 ? epochs : 3 )) l=0 w=10; fi
    for precision in 32-true bf16-mixed 16-mixed; do
      common=(--model "$model" --hidden "$hidden" --batch-size "$batch" --precision "$precision"
              --epochs "$e" --limit "$l" --threads "$threads" --warmup-batches "$w"
              --data "$data")
      run hearth "$label" -- "$bench" "${common[@]}" --accelerator "$device" --workers 0
      run pytorch "$label" -- "$python" "$here/plain_torch_loop.py" "${common[@]}" --device "$device"
      run lightning "$label" -- "$python" "$here/lightning_loop.py" "${common[@]}" --accelerator "$device"
    done
  done
done
echo
render_table | tee "$out/gpu-bench.md"
