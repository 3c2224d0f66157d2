#!/usr/bin/env python3
"""Predict, then measure: how close `hearth-cli tune --footprint` comes to what the run measures.

For each built-in model at three batch sizes: the footprint's prediction (a probe at a quarter
and half the batch, each in a fresh process), then the run itself at that batch; the run's
memory breakdown and last-epoch step time from the store. Prints a Markdown table of predicted /
measured / error for the peak, the activations and the optimizer step, and the largest peak error.

    bench/footprint_accuracy.py [--cli build/dev/app/cli/hearth-cli] [--out DIR] [--models cnn,mlp,...]
                                [--repeats 3]

Each cell is predicted and run --repeats times (the measured peak RSS itself moves by some 10%
from run to run: the C heap's slack); the table shows the medians and each error's median with
its min to max.

Runs on whatever device the config resolves to (CPU here; a GPU machine's build on a GPU).
"""
import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

COMMON = ["--set", "trainer.max_epochs=2", "--set", "trainer.num_workers=0"]
MODELS = {
    # name: (arguments, batch sizes)
    "cnn": (["--set", "data.limit=3000"], [32, 64, 128]),
    "mlp": (["--set", "model.name=mlp", "--set", "data.limit=3000"], [64, 128, 256]),
    # Fashion-MNIST written as 32-pixel PNGs (an image folder: a resnet needs 32x32 at least).
    "resnet18": (["--set", "model.name=resnet18", "--set", "data.kind=image_folder", "--set", "data.path={images}",
                  "--set", "data.image_size=32"], [16, 32, 64]),
    # A DistilBERT-shaped encoder (2 layers, 128 wide) on WordNet glosses, padded to 64 tokens.
    "distilbert": (["--config", os.path.join(ROOT, "resources/presets/wordnet-transformer-scratch.json"),
                    "--set", "data.limit=3000", "--set", "data.padding=max_length",
                    "--set", "data.bucket_by_length=false",
                    "--set", "data.tokenizer=" + os.path.join(ROOT, "tests/fixtures/tokenizer/vocab.txt")],
                   [16, 32, 64]),
}


def mib(b):
    return f"{b / 2**20:.1f} MiB"


def err(p, m):
    return (p - m) / m if m else float("nan")


def measure(cli, db, cfg, name, batch):
    """One prediction, then the run it predicts; both as numbers."""
    probe = subprocess.run([cli, "--db", db, "tune", "--footprint", "--json"] + cfg, capture_output=True, text=True)
    if probe.returncode != 0:
        sys.exit(f"{name} batch {batch}: the probe failed:\n{probe.stderr}")
    pred = json.loads([l for l in probe.stdout.splitlines() if l.startswith("{")][-1])
    run = subprocess.run([cli, "--db", db, "run", "-q"] + cfg, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"{name} batch {batch}: the run failed:\n{run.stderr[-2000:]}")
    con = sqlite3.connect(db)
    run_id = con.execute("SELECT MAX(id) FROM runs").fetchone()[0]
    peak, act = con.execute("SELECT peak_bytes, activations_bytes FROM run_memory WHERE run_id=?",
                            (run_id,)).fetchone()
    sps = con.execute("SELECT samples_per_sec FROM epoch_metrics WHERE run_id=? ORDER BY epoch DESC LIMIT 1",
                      (run_id,)).fetchone()[0]
    con.close()
    step = 1000.0 * batch * pred["accumulate"] * pred["world_size"] / sps
    m = pred["memory"]
    return {"p_peak": m["peak_bytes"], "m_peak": peak, "e_peak": err(m["peak_bytes"], peak),
            "p_act": m["activations_bytes"], "m_act": act, "e_act": err(m["activations_bytes"], act),
            "p_step": pred["step_ms"], "m_step": step, "e_step": err(pred["step_ms"], step),
            "probe_s": pred["probe_s"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(ROOT, "build/dev/app/cli/hearth-cli"))
    ap.add_argument("--out", default="/tmp/hearth-footprint")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--accelerator", default="cpu")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--data", help="Fashion-MNIST's folder for cnn and mlp (default: the config's)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    db = os.path.join(args.out, "footprint.sqlite")
    if os.path.exists(db):
        os.remove(db)
    images = os.path.join(args.out, "fmnist-32")
    if "resnet18" in args.models and not os.path.isdir(os.path.join(images, "train")):
        writer = os.path.normpath(os.path.join(os.path.dirname(args.cli), "../../bench/image_loader_bench"))
        subprocess.run([writer, "--write", images, "--size", "32", "--per-class", "150"], check=True,
                       stdout=subprocess.DEVNULL)
    rows, worst = [], 0.0
    for name in args.models.split(","):
        extra, batches = MODELS[name]
        extra = [a.replace("{images}", images) for a in extra]
        if args.data and name in ("cnn", "mlp"):
            extra = extra + ["--set", f"data.path={args.data}"]
        for batch in batches:
            cfg = extra + COMMON + ["--set", f"trainer.batch_size={batch}", "--set",
                                    f"trainer.accelerator={args.accelerator}"]
            cells = []
            for _ in range(args.repeats):
                cells.append(measure(args.cli, db, cfg, name, batch))
            med = lambda key: statistics.median(c[key] for c in cells)
            def error(key):
                errs = [c[key] for c in cells]
                return f"{100 * statistics.median(errs):+.1f}% ({100 * min(errs):+.1f} to {100 * max(errs):+.1f})"
            worst = max([worst] + [abs(c["e_peak"]) for c in cells])
            rows.append(f"| {name} | {batch} | {mib(med('p_peak'))} / {mib(med('m_peak'))} | {error('e_peak')} | "
                        f"{mib(med('p_act'))} / {mib(med('m_act'))} | {error('e_act')} | "
                        f"{med('p_step'):.1f} / {med('m_step'):.1f} ms | {error('e_step')} | {med('probe_s'):.1f} s |")
            print(rows[-1], flush=True)
    print()
    print("| model | batch | peak: predicted / measured | error | activations: predicted / measured | error | "
          "step: predicted / measured | error | probe |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    print(f"\nLargest peak error of any run: {100 * worst:.1f}% ({args.repeats} predictions and runs per cell)")


if __name__ == "__main__":
    main()
