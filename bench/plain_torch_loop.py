#!/usr/bin/python3
"""The plain PyTorch baseline for hearth_bench_train: the same model, initialisation, batch size,
optimizer, precision and thread count, Fashion-MNIST held in memory as one float tensor (batches
copied to the device one at a time, as a loader would), and a bare training loop (no loader, no
logging). Prints one JSON object like hearth_bench_train.

Runs on Debian's /usr/bin/python3 (torch 1.13, CPU; the same LibTorch build Hearth links against)
and on torch 2.x with CUDA. bench/lightning_loop.py imports the model and data code from here.
"""
import argparse
import contextlib
import gzip
import json
import os
import resource
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

PRECISIONS = ["32-true", "16-mixed", "bf16-mixed"]


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def load_train(folder, limit=0):
    """The first `limit` (default 55,000: Hearth keeps 5,000 of 60,000 for validation) training
    images as a normalised float tensor N x 1 x 28 x 28, and their labels."""
    images = read_idx(os.path.join(folder, "train-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(folder, "train-labels-idx1-ubyte.gz"))
    n = limit if limit > 0 else 55000
    x = torch.from_numpy(images[:n].astype(np.float32) / 255.0).unsqueeze(1)
    x = (x - x.mean()) / x.std()
    y = torch.from_numpy(labels[:n].astype(np.int64))
    return x, y


def mlp(hidden=(256, 128), dropout=0.25, classes=10):
    layers, width = [nn.Flatten()], 28 * 28
    for h in hidden:
        layers += [nn.Linear(width, h), nn.ReLU(), nn.Dropout(dropout)]
        width = h
    return nn.Sequential(*layers, nn.Linear(width, classes))


def cnn(channels=(32, 64), dropout=0.25, classes=10):
    layers, cin, size = [], 1, 28
    for c in channels:
        layers += [nn.Conv2d(cin, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU(),
                   nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU(),
                   nn.MaxPool2d(2)]
        cin, size = c, size // 2
    return nn.Sequential(*layers, nn.Flatten(), nn.Dropout(dropout), nn.Linear(cin * size * size, classes))


def build_model(name, hidden="256,128"):
    return mlp(tuple(int(h) for h in hidden.split(","))) if name == "mlp" else cnn()


def add_common_args(p):
    """The options every benchmark of this folder shares, with the same defaults as Hearth's."""
    p.add_argument("--model", choices=["mlp", "cnn"], default="mlp")
    p.add_argument("--hidden", default="256,128", help="mlp hidden widths, comma-separated")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--limit", type=int, default=0, help="training samples (0 = 55,000 like Hearth's split)")
    p.add_argument("--precision", choices=PRECISIONS, default="32-true")
    p.add_argument("--warmup-batches", type=int, default=50,
                   help="batches left out of steady_samples_per_sec")
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--seed", type=int, default=42)


def match_hearth_backend_flags(device):
    """Hearth's defaults (trainer.tf32=false, cudnn_benchmark=false): no TF32 anywhere, no cuDNN
    autotuning. torch 2.x enables cuDNN TF32 by default, so 32-true would otherwise differ."""
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.benchmark = False


def check_precision(device, precision):
    if precision == "16-mixed" and device.type == "cpu" and int(torch.__version__.split(".")[0]) < 2:
        raise SystemExit(f"16-mixed on CPU needs torch >= 2 (float16 CPU autocast); this is torch "
                         f"{torch.__version__}: use bf16-mixed or 32-true")
    if precision == "bf16-mixed" and device.type == "cuda" and not torch.cuda.is_bf16_supported():
        raise SystemExit("bf16-mixed: this GPU does not support bfloat16")


def autocast(device, dtype):
    """torch.autocast for mixed precision; nothing for 32-true (torch 1.13's CPU autocast refuses
    any dtype but bfloat16, even disabled)."""
    return torch.autocast(device_type=device.type, dtype=dtype) if dtype is not None else contextlib.nullcontext()


def grad_scaler(device):
    if hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler"):   # torch >= 2.3
        return torch.amp.GradScaler(device.type)
    return torch.cuda.amp.GradScaler()


def peak_memory(device):
    if device.type == "cuda":
        return "cuda_allocated", torch.cuda.max_memory_allocated(device)
    return "host_rss", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024   # ru_maxrss is KiB


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(p)
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    a = p.parse_args()

    if a.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: torch " + torch.__version__ + " sees no CUDA device")
    device = torch.device("cuda:0" if a.device == "cuda" else "cpu")
    check_precision(device, a.precision)
    match_hearth_backend_flags(device)
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    x, y = load_train(a.data, a.limit)
    n = len(y)

    model = build_model(a.model, a.hidden).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    amp_dtype = {"16-mixed": torch.float16, "bf16-mixed": torch.bfloat16}.get(a.precision)
    scaler = grad_scaler(device) if a.precision == "16-mixed" else None
    model.train()
    seen, steps, steady_seen, steady_start = 0, 0, 0, None
    start = time.perf_counter()
    for _ in range(a.epochs):
        order = torch.randperm(n)
        for i in range(0, n, a.batch_size):
            idx = order[i:i + a.batch_size]
            xb, yb = x[idx].to(device), y[idx].to(device)
            with autocast(device, amp_dtype):
                loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad(set_to_none=True)
            if scaler is not None:
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
            else:
                loss.backward()
                opt.step()
            seen += len(idx)
            steps += 1
            if steady_start is not None:
                steady_seen += len(idx)
            elif steps == a.warmup_batches:
                sync(device)
                steady_start = time.perf_counter()
    sync(device)
    end = time.perf_counter()
    elapsed = end - start
    steady = steady_seen / (end - steady_start) if steady_seen > 0 else seen / elapsed
    memory_kind, memory = peak_memory(device)
    print(json.dumps({"engine": "pytorch", "model": a.model, "hidden": [int(h) for h in a.hidden.split(",")]
                      if a.model == "mlp" else None, "precision": a.precision, "device": str(device),
                      "batch_size": a.batch_size, "threads": a.threads, "epochs": a.epochs,
                      "warmup_batches": a.warmup_batches, "train_samples": n,
                      "parameters": sum(p.numel() for p in model.parameters()), "torch": torch.__version__,
                      "samples_per_sec": seen / elapsed, "steady_samples_per_sec": steady,
                      "train_time_s": elapsed, "final_loss": loss.item(),
                      "peak_memory_kind": memory_kind, "peak_memory_bytes": memory}))


if __name__ == "__main__":
    main()
