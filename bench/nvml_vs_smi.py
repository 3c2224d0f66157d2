#!/usr/bin/env python3
"""Hearth's NVML samples of a run beside nvidia-smi's, taken at the same moments.

    nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used,temperature.gpu,power.draw,\
power.limit,clocks.sm --format=csv,noheader,nounits -lms 500 > smi.csv &   # while the run trains
    python3 bench/nvml_vs_smi.py RUNS.sqlite RUN_ID smi.csv

Each of the run's GPU samples (device_samples: started_at + elapsed_s) is paired with the
nvidia-smi line of the same GPU nearest in time (within 0.6 s); prints a Markdown table of both
means and the mean absolute difference per value. Standard library only (the GPU machine's python).
"""
import csv
import datetime
import sqlite3
import sys


def smi_rows(path):
    rows = []
    with open(path, newline="") as f:
        for r in csv.reader(f):
            if len(r) < 8:
                continue
            r = [c.strip() for c in r]
            try:
                t = datetime.datetime.strptime(r[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
                rows.append({"t": t, "index": int(r[1]), "util": float(r[2]), "mem_mib": float(r[3]),
                             "temp": float(r[4]), "power": float(r[5]), "limit": float(r[6]), "sm": float(r[7])})
            except ValueError:
                continue
    return rows


def main():
    db, run_id, smi_path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    con = sqlite3.connect(db)
    started = con.execute("SELECT started_at FROM runs WHERE id = ?", (run_id,)).fetchone()[0]
    samples = con.execute(
        "SELECT elapsed_s, device, utilization, driver_used_bytes, temperature_c, power_w, power_limit_w, "
        "sm_clock_mhz FROM device_samples WHERE run_id = ? AND device >= 0 ORDER BY id", (run_id,)).fetchall()
    smi = smi_rows(smi_path)
    pairs = []
    for elapsed, device, util, used, temp, power, limit, sm in samples:
        t = started + elapsed
        near = [s for s in smi if s["index"] == device and abs(s["t"] - t) <= 0.6]
        if not near:
            continue
        s = min(near, key=lambda s: abs(s["t"] - t))
        pairs.append(((util * 100.0, used / 1048576.0, temp, power, limit, sm),
                      (s["util"], s["mem_mib"], s["temp"], s["power"], s["limit"], s["sm"])))
    names = ["utilisation (%)", "memory used (MiB)", "temperature (C)", "power (W)", "power limit (W)",
             "SM clock (MHz)"]
    print(f"{len(pairs)} of {len(samples)} Hearth GPU samples paired with nvidia-smi (within 0.6 s)\n")
    print("| value | Hearth (NVML), mean | nvidia-smi, mean | mean abs. difference |")
    print("|---|---:|---:|---:|")
    for i, name in enumerate(names):
        ours = [p[0][i] for p in pairs if p[0][i] >= 0]
        theirs = [p[1][i] for p in pairs if p[0][i] >= 0]
        if not ours:
            print(f"| {name} | unknown | - | - |")
            continue
        diff = sum(abs(a - b) for a, b in zip(ours, theirs)) / len(ours)
        print(f"| {name} | {sum(ours) / len(ours):.1f} | {sum(theirs) / len(theirs):.1f} | {diff:.1f} |")
    return 0 if pairs else 1


if __name__ == "__main__":
    sys.exit(main())
