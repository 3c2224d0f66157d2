#!/usr/bin/env bash
# Hearth vs plain PyTorch vs Lightning on CUDA: the same model, initialisation, batch size,
# precision and Fashion-MNIST data, each engine in its own process. A cell (model x precision x
# batch size) is measured BENCH_REPEATS times; in each repeat the three engines run one after the
# other, and the order rotates from one repeat to the next (hearth, pytorch, lightning; then
# pytorch, lightning, hearth; ...), so that drift on a shared GPU hits every engine alike. Every
# run goes as one JSON line, with its repeat number, to OUT_DIR/gpu-bench.jsonl; a Markdown table
# (per cell and engine the median steady samples/s after warm-up with its min-max over the
# repeats, the median peak CUDA memory, ratios of the medians) and the issue's targets follow.
# Called at the end of scripts/gpu-check.
#
#   bench/compare_gpu.sh OUT_DIR             run everything (or one part), then print the table
#   bench/compare_gpu.sh --table OUT_DIR     print the table of an existing OUT_DIR/gpu-bench.jsonl
#
# Environment: HEARTH_BUILD (build dir, default build/gpu), FASHION_MNIST (IDX folder), PYTHON
# (torch 2.x + lightning, default python3), BENCH_EPOCHS (1), BENCH_LIMIT (training samples,
# 0 = all 55,000; default 25600), BENCH_WARMUP (batches left out, 50), BENCH_THREADS (4),
# BENCH_TIMEOUT (seconds per run, 300), BENCH_DEVICE (cuda; cpu only to try the script itself),
# BENCH_SPECS (label:model:hidden:batches... to run part of the matrix, e.g. "cnn:cnn:256,128:256"),
# BENCH_HEARTH_FLAGS (Hearth's data path, default "--pin-memory", its default config: each next
# batch copied on a copy stream during the step; "--on-device" holds the training set on the GPU;
# "" copies each batch from pageable memory as the PyTorch loop does), BENCH_PRECISIONS (default
# "32-true bf16-mixed 16-mixed"),
# BENCH_REPEATS (runs of each engine per cell, default 3; at least 1, and fewer than 3 is not a
# valid timing, only a try of the script), BENCH_PART (i/n, e.g. 2/3: run only the i-th of n
# consecutive, nearly equal slices of the list of cells, that list being every spec x batch x
# precision in the order they run; the parts append to the same OUT_DIR/gpu-bench.jsonl, so that
#   for i in 1 2 3; do BENCH_PART=$i/3 bench/compare_gpu.sh OUT; done; bench/compare_gpu.sh --table OUT
# measures the whole matrix in calls that each take about a third of the time).
# The jsonl only grows: the table keeps, for each cell, the rows of the last invocation that ran it
# (rows written before the repeat field existed count as one repeat each, the last one kept).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-python3}"
table_only=0
if [[ "${1:-}" == "--table" ]]; then table_only=1; shift; fi
out="${1:?usage: bench/compare_gpu.sh [--table] OUT_DIR}"
jsonl="$out/gpu-bench.jsonl"

render_table() {
  "$python" - "$jsonl" <<'PY'
import json, statistics, sys
sys.stdout.reconfigure(encoding="utf-8")
ENGINES = ("hearth", "pytorch", "lightning")

# cell (label, precision, batch) -> {"run": invocation id, "rows": {(engine, repeat): row}}. A cell
# measured again by a later invocation starts over; rows without "run_id"/"repeat" (older files)
# are one repeat each and the last row of an engine wins, as before repeats existed.
cells = {}
for lineno, line in enumerate(open(sys.argv[1]), 1):
    if not line.strip():
        continue
    try:
        r = json.loads(line)
    except ValueError:
        print(f"compare_gpu.sh: {sys.argv[1]}:{lineno}: not JSON, skipped", file=sys.stderr)
        continue
    key = (r["label"], r["precision"], r["batch_size"])
    run = r.get("run_id")
    if key not in cells or cells[key]["run"] != run:
        cells[key] = {"run": run, "rows": {}}
    cells[key]["rows"][(r["engine"], r.get("repeat", 1))] = r

def stats(rows, engine):
    """Median, min and max steady samples/s and median peak memory over an engine's repeats."""
    mine = [r for (e, _), r in rows.items() if e == engine]
    ok = [r for r in mine if "error" not in r and r.get("steady_samples_per_sec")]
    rates = [r["steady_samples_per_sec"] for r in ok]
    return {"runs": len(mine), "failed": len(mine) - len(ok), "n": len(rates),
            "median": statistics.median(rates) if rates else None,
            "min": min(rates) if rates else None, "max": max(rates) if rates else None,
            "mib": statistics.median(r["peak_memory_bytes"] for r in ok) / 2**20 if ok else None}

def rate_text(s):
    if s["runs"] == 0:
        return "-"
    if s["median"] is None:
        return "failed"
    text = f"{s['median']:,.0f}"
    if s["n"] > 1:
        text += f" ({s['min']:,.0f}–{s['max']:,.0f})"
    if s["failed"]:
        text += f" [{s['failed']} failed]"
    return text

def mib(s): return f"{s['mib']:.0f}" if s["mib"] is not None else "-"
def ratio(a, b): return a / b if a and b else None
def fmt(x): return f"{x:.2f}x" if x else "-"

order = {"32-true": 0, "bf16-mixed": 1, "16-mixed": 2}
print("| model | precision | batch | repeats | Hearth samples/s | PyTorch samples/s | Lightning samples/s "
      "| Hearth MiB | PyTorch MiB | Lightning MiB | Hearth/PyTorch | Hearth/Lightning | Hearth vs own 32-true |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
speedups, small_batch, large_batch, few = {}, [], [], []
for key in sorted(cells, key=lambda k: (k[0], k[2], order.get(k[1], 9))):
    label, precision, batch = key
    rows = cells[key]["rows"]
    h, t, l = (stats(rows, n) for n in ENGINES)
    hr = h["median"]
    base = (stats(cells[(label, "32-true", batch)]["rows"], "hearth")["median"]
            if (label, "32-true", batch) in cells else None)
    speedup = ratio(hr, base) if precision != "32-true" else None
    if speedup:
        speedups[key] = speedup
    hl = ratio(hr, l["median"])
    if batch <= 32 and hl:
        small_batch.append((hl, label, precision, batch))
    if batch >= 256 and hl:
        large_batch.append((hl, label, precision, batch))
    repeats = max(len({rep for (e, rep) in rows if e == n}) for n in ENGINES)
    if min(s["n"] for s in (h, t, l)) < 3:
        few.append(f"{label} {precision} b{batch}")
    params = {r["parameters"] for r in rows.values() if "error" not in r and "parameters" in r}
    note = "" if len(params) <= 1 else " (parameter counts differ!)"
    print(f"| {label}{note} | {precision} | {batch} | {repeats} | {rate_text(h)} | {rate_text(t)} | {rate_text(l)} "
          f"| {mib(h)} | {mib(t)} | {mib(l)} | {fmt(ratio(hr, t['median']))} | {fmt(hl)} | {fmt(speedup)} |")

print("\nSamples/s: training samples per second after the warm-up batches, device synchronised at the"
      " edges; the median over the repeats, with the lowest and highest in parentheses (in each repeat"
      " the engines run in turn, the order rotating from one repeat to the next). MiB: median peak CUDA"
      " caching-allocator memory (torch.cuda.max_memory_allocated / Hearth's DeviceSample peak_bytes)."
      " Ratios are of the medians.\n")
print("Targets (from the medians):")
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
if few:
    print(f"- fewer than 3 good repeats of some engine (not a valid timing): {len(few)}/{len(cells)} rows: "
          + ", ".join(few))
failed = [f"{r['engine']} {k[0]} {k[1]} b{k[2]}" + (f" repeat {r['repeat']}" if "repeat" in r else "")
          for k, c in sorted(cells.items()) for r in c["rows"].values() if "error" in r]
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
repeats="${BENCH_REPEATS:-3}" part="${BENCH_PART:-1/1}"
hearth_flags="${BENCH_HEARTH_FLAGS---pin-memory}"
if [[ ! $repeats =~ ^[0-9]+$ ]] || (( 10#$repeats < 1 )); then
  echo "compare_gpu.sh: BENCH_REPEATS must be a whole number of at least 1 (3 or more for a valid timing), not '$repeats'" >&2
  exit 2
fi
repeats=$(( 10#$repeats ))
if (( repeats < 3 )); then
  echo "compare_gpu.sh: warning: BENCH_REPEATS=$repeats: fewer than 3 repeats is not a valid timing (use it only to try the script)" >&2
fi
if [[ ! $part =~ ^([0-9]+)/([0-9]+)$ ]] || (( 10#${BASH_REMATCH[1]} < 1 || 10#${BASH_REMATCH[1]} > 10#${BASH_REMATCH[2]} )); then
  echo "compare_gpu.sh: BENCH_PART must be i/n with 1 <= i <= n (e.g. 1/3), not '$part'" >&2
  exit 2
fi
part_i=$(( 10#${BASH_REMATCH[1]} )) part_n=$(( 10#${BASH_REMATCH[2]} ))
if [[ ! -x "$bench" ]]; then echo "compare_gpu.sh: no $bench (build hearth_bench_train first)" >&2; exit 2; fi

# label:model:hidden:batches. mlp-wide and mlp-xwide are the matmul-heavy models of the mixed-precision
# target; at batch 2048 the GPU's matmul throughput, not per-step overhead, sets the pace.
specs="${BENCH_SPECS:-mlp-xwide:mlp:8192,8192:2048 mlp-wide:mlp:4096,4096:32,256,2048 mlp:mlp:256,128:32,256 cnn:cnn:256,128:32,256}"
# The cells, label:model:hidden:batch:precision, in run order; BENCH_PART keeps a consecutive slice.
cells=()
for spec in $specs; do
  IFS=: read -r label model hidden batches <<< "$spec"
  for batch in ${batches//,/ }; do
    for precision in ${BENCH_PRECISIONS:-32-true bf16-mixed 16-mixed}; do
      cells+=("$label:$model:$hidden:$batch:$precision")
    done
  done
done
first=$(( (part_i - 1) * ${#cells[@]} / part_n )) end=$(( part_i * ${#cells[@]} / part_n ))

mkdir -p "$out"
: >> "$jsonl"   # appends: later parts (BENCH_PART, BENCH_SPECS) add rows; the table keeps the last run of each cell
logs="$out/gpu-bench-logs"
mkdir -p "$logs"
run_id="$(date -u +%Y%m%dT%H%M%SZ)-$$"   # tells this invocation's rows from earlier ones of the same cell
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1);" \
     "$("$python" -c 'import torch;print("torch", torch.__version__)' 2>&1)"
echo "   $device, epochs $epochs, limit $limit, warm-up $warmup batches, $threads threads, data $data"
echo "   part $part_i/$part_n: cells $(( first + 1 ))-$end of ${#cells[@]}, $repeats repeats each," \
     "$(( (end - first) * repeats * 3 )) runs"

# run ENGINE LABEL -- COMMAND...: appends the command's JSON line, tagged with LABEL, the repeat and
# the invocation, or an error line.
run() {
  local engine="$1" label="$2"; shift 3
  local log="$logs/$engine-$label-$precision-$batch-r$repeat.log" json
  json="$(timeout "$limit_s" "$@" 2> "$log" | grep '^{' | tail -n 1)"
  if [[ -z "$json" ]]; then
    echo "   $engine $label $precision batch $batch repeat $repeat: FAILED (see $log): $(tail -n 1 "$log")"
    "$python" -c 'import json,sys; print(json.dumps({"engine": sys.argv[1], "label": sys.argv[2],
      "precision": sys.argv[3], "batch_size": int(sys.argv[4]), "repeat": int(sys.argv[5]),
      "run_id": sys.argv[6], "error": sys.argv[7]}))' \
      "$engine" "$label" "$precision" "$batch" "$repeat" "$run_id" "$(tail -n 1 "$log")" >> "$jsonl"
    return
  fi
  "$python" -c 'import json,sys; r=json.loads(sys.argv[1]); r["label"]=sys.argv[2]; r["repeat"]=int(sys.argv[3])
r["run_id"]=sys.argv[4]; print(json.dumps(r))' "$json" "$label" "$repeat" "$run_id" >> "$jsonl"
  echo "   $engine $label $precision batch $batch repeat $repeat: $("$python" -c 'import json,sys; r=json.loads(sys.argv[1])
print("{:,.0f} samples/s, {:.0f} MiB".format(r["steady_samples_per_sec"], r["peak_memory_bytes"] / 2**20))' "$json")"
}

export OMP_NUM_THREADS="$threads"
engines=(hearth pytorch lightning)
for cell in "${cells[@]:first:end-first}"; do
  IFS=: read -r label model hidden batch precision <<< "$cell"
  # Large batches: the whole training set for 3 epochs, so that warm-up leaves enough steps.
  e="$epochs" l="$limit" w="$warmup"
  if (( batch >= 1024 )); then e=$(( epochs > 3 ? epochs : 3 )) l=0 w=10; fi
  common=(--model "$model" --hidden "$hidden" --batch-size "$batch" --precision "$precision"
          --epochs "$e" --limit "$l" --threads "$threads" --warmup-batches "$w"
          --data "$data")
  for (( repeat = 1; repeat <= repeats; repeat++ )); do
    for (( k = 0; k < 3; k++ )); do
      case "${engines[(repeat - 1 + k) % 3]}" in
        hearth) run hearth "$label" -- "$bench" "${common[@]}" --accelerator "$device" --workers 0 $hearth_flags ;;
        pytorch) run pytorch "$label" -- "$python" "$here/plain_torch_loop.py" "${common[@]}" --device "$device" ;;
        lightning) run lightning "$label" -- "$python" "$here/lightning_loop.py" "${common[@]}" --accelerator "$device" ;;
      esac
    done
  done
done
echo
render_table | tee "$out/gpu-bench.md"
