#!/usr/bin/env python3
"""Markdown tables of a data-parallel bench's run store (bench/ddp_cpu.sh, bench/ddp_gpu.sh).

    bench/ddp_report.py HEARTH_CLI DB [BASELINE_RUN_NAME]

First table: every run's train time, samples/s (as hearth-cli recorded them) and accuracy, and
with a baseline name the samples/s relative to that run. Second: per rank of every multi-process
run, the step time, gradient communication per step (c10d's Logger for ddp/zero1, the adapter's
own timer for zero2), the part overlapped with backward, and the exposed share of the step.
"""
import json
import subprocess
import sys


def export(cli, db, run_id):
    out = subprocess.run([cli, "--db", db, "export", str(run_id), "--format", "json", "--out", "-"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    cli, db = sys.argv[1], sys.argv[2]
    baseline = sys.argv[3] if len(sys.argv) > 3 else None
    listing = subprocess.run([cli, "--db", db, "runs"], check=True, capture_output=True, text=True).stdout
    ids = sorted(int(line.split()[0]) for line in listing.splitlines()[1:] if line.split()[:1] and line.split()[0].isdigit())
    runs = [export(cli, db, i) for i in ids]
    rate = {}
    for r in runs:
        rate[r["run"]["name"]] = r["run"].get("samples_per_sec") or 0.0
    base = rate.get(baseline) if baseline else None
    print("| run | status | train time | samples/s |" + (" vs baseline |" if base else "") + " best val acc | test acc |")
    print("|---|---|---:|---:|" + ("---:|" if base else "") + "---:|---:|")
    for r in runs:
        run = s = r["run"]
        name = run["name"]
        rel = f" {100.0 * (rate[name] / base - 1.0):+.1f}% |" if base else ""
        val = s.get("best_val_accuracy")
        test = s.get("test_accuracy")
        print(f"| {name} | {run['status']} | {s.get('train_time_s', 0.0):.1f} s | {rate[name]:.0f} |{rel}"
              f" {'' if val is None else f'{100 * val:.2f}%'} | {'' if test is None else f'{100 * test:.2f}%'} |")
    rows = [(r["run"]["name"], k) for r in runs for k in r.get("ranks", [])]
    if not rows:
        return
    print()
    print("| run | rank | device | step | comm/step | overlapped | exposed comm share |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for name, k in rows:
        step = k["train_time_s"] * 1000.0 / max(k["steps"], 1)
        exposed = max(0.0, k["comm_ms"] - k["overlap_ms"])
        print(f"| {name} | {k['rank']} | {k['device']} | {step:.1f} ms | {k['comm_ms']:.1f} ms | {k['overlap_ms']:.1f} ms |"
              f" {100.0 * exposed / step if step > 0 else 0.0:.1f}% |")


if __name__ == "__main__":
    main()
