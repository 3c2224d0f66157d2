#!/usr/bin/env python3
"""The table of a bench/world_one.sh store: per model and variant ("MODEL | VARIANT" run names),
the steady (last epoch) and whole-fit samples/s, median (min-max) over the repeats, the steady
median against one device's, and the last run's stored step breakdown of its last epoch.

    bench/world_one_report.py HEARTH_CLI DB
"""
import json
import statistics
import subprocess
import sys


def main():
    cli, db = sys.argv[1], sys.argv[2]
    listing = subprocess.run([cli, "--db", db, "runs"], check=True, capture_output=True, text=True).stdout
    ids = sorted(int(line.split()[0]) for line in listing.splitlines()[1:] if line.split()[:1] and line.split()[0].isdigit())
    cells = {}
    for i in ids:
        run = json.loads(subprocess.run([cli, "--db", db, "export", str(i), "--format", "json", "--out", "-"],
                                        check=True, capture_output=True, text=True).stdout)
        name = run["run"]["name"]
        if " | " not in name:
            continue
        if run["run"]["status"] != "completed" or not run["epochs"]:
            print(f"run {i} ({name}): {run['run']['status']}, left out")
            continue
        model, variant = name.split(" | ")[:2]
        last = run["epochs"][-1]
        cells.setdefault((model, variant), []).append(
            (last["samples_per_sec"], run["run"]["samples_per_sec"] or 0.0, last.get("breakdown")))

    def fmt(xs):
        return f"{statistics.median(xs):,.1f} ({min(xs):,.1f}–{max(xs):,.1f})"

    print("| model | variant | repeats | steady samples/s | vs one device | whole fit samples/s |")
    print("|---|---|---:|---:|---:|---:|")
    for (model, variant), rows in cells.items():
        steady = [r[0] for r in rows]
        base = cells.get((model, "one device"))
        rel = ""
        if variant != "one device" and base:
            rel = f"{100.0 * (statistics.median(steady) / statistics.median([r[0] for r in base]) - 1):+.1f}%"
        print(f"| {model} | {variant} | {len(rows)} | {fmt(steady)} | {rel} | {fmt([r[1] for r in rows])} |")
    print()
    for (model, variant), rows in cells.items():
        print(f"- {model}, {variant}: the last run's last-epoch step breakdown {json.dumps(rows[-1][2])}")


if __name__ == "__main__":
    main()
