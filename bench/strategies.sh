#!/usr/bin/env bash
# Memory and speed of every distributed strategy: BENCH_DEVICES processes (2) with ddp, zero1,
# zero2, zero3, zero3 with its optimizer offloaded and the pipeline (NAME+offload sets
# trainer.offload_optimizer; on the CPU it moves nothing off a device, so it shows only what its
# copies cost; +noprefetch sets trainer.fsdp.prefetch=false, +units2 trainer.fsdp.blocks_per_unit=2,
# +stagesA:B trainer.pipeline.stage_blocks=A,B: the pipeline cut by hand instead of by FLOPs)
# on an MLP wide enough that its parameters, gradients and Adam state
# show in each process's memory, the strategies alternating over BENCH_REPEATS rounds. Prints a
# Markdown table: per strategy the median (min-max) of rank 0's and rank 1's peak memory (RSS on
# the CPU, the caching allocator's peak on a GPU, as hearth-cli records each process), the median
# samples/s of the run, and rank 0's memory breakdown at its peak (parameters, gradients, optimizer
# state as the tensors' bytes, and what the offloaded optimizer holds on the host).
#
#   bench/strategies.sh [BUILD_DIR]        (default build/dev)
#
# Environment: BENCH_REPEATS (3), BENCH_LIMIT (training samples, 4000), BENCH_HIDDEN (2048,2048),
# BENCH_BATCH (per process, 64; the pipeline's batch is BENCH_DEVICES times it, the same global
# batch), BENCH_STRATEGIES ("ddp zero1 zero2 zero3 zero3+offload pipeline"), BENCH_ACCELERATOR
# (cpu; cuda puts every process on GPU 0 unless the machine has one per process),
# BENCH_BACKEND (auto: Gloo on the CPU, NCCL on GPUs), BENCH_DEVICES (2), BENCH_EPOCHS (1),
# BENCH_LOGS (a folder for each run's output and the run store; default: dropped), BENCH_DATA (data.path; default the
# default experiment's Fashion-MNIST).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/dev}"
cli="$build/app/cli/hearth-cli"
[ -x "$cli" ] || { echo "bench/strategies.sh: no $cli (scripts/build dev)" >&2; exit 2; }
repeats="${BENCH_REPEATS:-3}" limit="${BENCH_LIMIT:-4000}" hidden="${BENCH_HIDDEN:-2048,2048}"
batch="${BENCH_BATCH:-64}" strategies="${BENCH_STRATEGIES:-ddp zero1 zero2 zero3 zero3+offload pipeline}"
accelerator="${BENCH_ACCELERATOR:-cpu}" backend="${BENCH_BACKEND:-auto}" devices="${BENCH_DEVICES:-2}"
epochs="${BENCH_EPOCHS:-1}"
scratch="$(mktemp -d)"; trap 'rm -rf "$scratch"' EXIT   # its run store (GBs of wide-MLP checkpoints)
db="$scratch/strategies.sqlite"
if [ -n "${BENCH_LOGS:-}" ]; then mkdir -p "$BENCH_LOGS" && db="$BENCH_LOGS/strategies.sqlite" && rm -f "$db"; fi
for r in $(seq "$repeats"); do
  for s in $strategies; do
    # NAME[+offload][+noprefetch][+units2][+stagesA:B]: the strategy, then its options.
    extra=()
    [[ "$s" == *+offload* ]] && extra+=(--set trainer.offload_optimizer=true)
    [[ "$s" == *+noprefetch* ]] && extra+=(--set trainer.fsdp.prefetch=false)
    [[ "$s" == *+units2* ]] && extra+=(--set trainer.fsdp.blocks_per_unit=2)
    [[ "$s" == *+stages* ]] && { cut="${s##*+stages}"; extra+=(--set "trainer.pipeline.stage_blocks=${cut//:/,}"); }
    # The pipeline's batch is the whole step's: the same global batch as the processes' together.
    [[ "$s" == pipeline* ]] && extra+=(--set trainer.batch_size=$((batch * devices)))
    [ -n "${BENCH_DATA:-}" ] && extra+=(--set data.path="$BENCH_DATA")
    log=/dev/null
    [ -n "${BENCH_LOGS:-}" ] && log="$BENCH_LOGS/$s-$r.log"
    "$cli" --db "$db" run --set name="$s" --set model.name=mlp --set "model.hidden=[$hidden]" \
      --set data.limit="$limit" --set trainer.max_epochs="$epochs" --set trainer.batch_size="$batch" "${extra[@]}" \
      --set trainer.num_workers=0 --set trainer.num_threads=1 --set optimizer.name=adam \
      --set trainer.devices="$devices" --set trainer.strategy="${s%%+*}" --set trainer.ddp.backend="$backend" \
      --set trainer.accelerator="$accelerator" -q > "$log" 2>&1 ||
      echo "bench/strategies.sh: $s (round $r) failed" >&2
  done
done
if [ "$accelerator" = cpu ]; then
  where="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
else
  where="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1) x $(nvidia-smi -L 2>/dev/null | grep -c '^GPU')"
fi
echo "$(date -u +%F), $where; $devices processes on $accelerator, backend $backend;"
echo "mlp hidden [$hidden], adam, batch $batch per process, $limit samples, $epochs epoch(s), $repeats rounds"
echo
python3 - "$db" <<'PY'
import sqlite3, statistics, sys
c = sqlite3.connect(sys.argv[1])
def mib(b): return b / 2**20
def span(v, f=lambda x: x): return f"{f(statistics.median(v)):,.1f} ({f(min(v)):,.1f}–{f(max(v)):,.1f})"
rows = {}
for rid, name, sps, peak in c.execute(
        "select id, name, samples_per_sec, peak_memory_bytes from runs where status='completed' order by id"):
    ranks = dict(c.execute("select rank, peak_memory_bytes from run_ranks where run_id=?", (rid,)).fetchall())
    ranks.setdefault(0, peak or 0)   # a world of one may store no per-rank row
    mem = c.execute("select parameters_bytes, gradients_bytes, optimizer_state_bytes, offloaded_bytes from run_memory where run_id=?",
                    (rid,)).fetchone()
    rows.setdefault(name, []).append((ranks[0], ranks.get(1), sps, mem))
print("| strategy | runs | rank 0 peak MiB | rank 1 peak MiB | samples/s | rank 0 parameters / gradients / optimizer state / offloaded to host MiB |")
print("|---|---:|---:|---:|---:|---|")
for name, v in rows.items():
    m = v[-1][3]
    parts = " / ".join(f"{mib(x):.1f}" for x in m) if m else "-"
    print(f"| {name} | {len(v)} | {span([x[0] for x in v], mib)} | {span([x[1] for x in v], mib) if v[0][1] is not None else '-'} | "
          f"{span([x[2] for x in v])} | {parts} |")
PY
