#!/usr/bin/env python3
"""Resume, end to end, on whatever device the experiment runs on (the GPU check's `resume` step).

Trains a reference run, then the same run stopped with SIGINT after step --stop-after, resumes it
with `hearth-cli resume`, and compares every stored step (loss, accuracy, learning rate, loss
scale) and the test accuracy with the reference. Bit-identical is expected with
trainer.deterministic (on a GPU too: the state holds the CUDA generator that dropout draws from).
Standard library only.

  bench/resume_check.py --cli build/cuda/app/cli/hearth-cli --db /tmp/r.sqlite \
      --set trainer.precision=16-mixed --set data.limit=6000
Exits 0 when the resumed run equals the reference, 1 otherwise (the first difference printed).
"""
import argparse
import csv
import json
import signal
import subprocess
import sys
import tempfile
from pathlib import Path


def run_cli(cli, db, args, check=True):
    p = subprocess.run([cli, "--db", db] + args, capture_output=True, text=True)
    if check and p.returncode != 0:
        sys.exit(f"hearth-cli {' '.join(args)} exited {p.returncode}:\n{p.stderr[-3000:]}")
    return p


def interrupted_run(cli, db, settings, stop_after):
    """Starts `run --events`, sends SIGINT once step `stop_after` is reported; returns the run id."""
    p = subprocess.Popen([cli, "--db", db, "run", "--events"] + settings, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    run_id, sent = None, False
    for line in p.stdout:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") == "run":
            run_id = event.get("run_id")
        if not sent and event.get("event") == "step" and event.get("global_step", 0) >= stop_after:
            p.send_signal(signal.SIGINT)
            sent = True
    p.wait()
    if not sent:
        sys.exit(f"the run ended before step {stop_after}: raise trainer.max_epochs or data.limit")
    return run_id


def steps(cli, db, run_id, folder):
    out = Path(folder) / f"run{run_id}.csv"
    run_cli(cli, db, ["export", str(run_id), "--format", "csv", "--out", str(out)])
    with open(out, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["train_loss"] != ""]
    return [(r["step"], r["train_loss"], r["train_acc"], r["lr"], r["loss_scale"]) for r in rows]


def stored_runs(cli, db):
    """{id: row} of `hearth-cli runs --csv -`."""
    rows = csv.DictReader(run_cli(cli, db, ["runs", "--csv", "-"]).stdout.splitlines())
    return {int(r["id"]): r for r in rows}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--db", help="run store (default: a temporary one)")
    ap.add_argument("--stop-after", type=int, default=30)
    ap.add_argument("--set", action="append", default=[], help="config override, as hearth-cli run --set")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = a.db or str(Path(tmp) / "resume.sqlite")
        settings = ["--set", "trainer.deterministic=true", "--set", "trainer.log_every_n_steps=1"]
        for s in a.set:
            settings += ["--set", s]
        run_cli(cli := a.cli, db, ["run", "-q", "--set", "name=resume-reference"] + settings)
        reference_id = max(stored_runs(cli, db))
        stopped_id = interrupted_run(cli, db, ["--set", "name=resume-stopped"] + settings, a.stop_after)
        stopped_steps = len(steps(cli, db, stopped_id, tmp))
        resumed = run_cli(cli, db, ["resume", str(stopped_id), "-q"], check=False)
        if resumed.returncode != 0:
            print(f"FAIL: hearth-cli resume exited {resumed.returncode}:\n{resumed.stderr[-3000:]}")
            return 1
        want, got = steps(cli, db, reference_id, tmp), steps(cli, db, stopped_id, tmp)
        print(f"reference run #{reference_id}: {len(want)} steps; run #{stopped_id} stopped after "
              f"{stopped_steps} steps and resumed: {len(got)} steps")
        if len(want) != len(got):
            print(f"FAIL: {len(got)} steps after the resume, the reference has {len(want)}")
            return 1
        for w, g in zip(want, got):
            if w != g:
                print(f"FAIL: step {w[0]} differs: (loss, acc, lr, scale) {g[1:]} vs the reference's {w[1:]}")
                return 1
        runs = stored_runs(cli, db)
        ta, tb = runs[reference_id]["test_acc"], runs[stopped_id]["test_acc"]
        if runs[stopped_id]["status"] != "completed" or ta != tb:
            print(f"FAIL: resumed run {runs[stopped_id]['status']}, test accuracy {tb} vs the reference's {ta}")
            return 1
        print(f"PASS: every step bit-identical, test accuracy {ta}")
        return 0


if __name__ == "__main__":
    sys.exit(main())
