#!/usr/bin/python3
"""The plain PyTorch baseline for hearth_bench_train: the same model, initialisation, batch size,
optimizer and thread count, Fashion-MNIST held in memory as one float tensor, and a bare training
loop (no loader, no logging). Prints one JSON object like hearth_bench_train.

Run with Debian's /usr/bin/python3 (torch 1.13), the same LibTorch build Hearth links against.
"""
import argparse
import gzip
import json
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


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


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--model", choices=["mlp", "cnn"], default="mlp")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--limit", type=int, default=0, help="training samples (0 = 55,000 like Hearth's split)")
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--seed", type=int, default=42)
    a = p.parse_args()

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    images = read_idx(os.path.join(a.data, "train-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(a.data, "train-labels-idx1-ubyte.gz"))
    n = a.limit if a.limit > 0 else 55000   # Hearth keeps 5,000 of 60,000 for validation
    x = torch.from_numpy(images[:n].astype(np.float32) / 255.0).unsqueeze(1)
    x = (x - x.mean()) / x.std()
    y = torch.from_numpy(labels[:n].astype(np.int64))

    model = mlp() if a.model == "mlp" else cnn()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    seen, start = 0, time.perf_counter()
    for _ in range(a.epochs):
        order = torch.randperm(n)
        for i in range(0, n, a.batch_size):
            idx = order[i:i + a.batch_size]
            xb, yb = x[idx], y[idx]
            loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            seen += len(idx)
    elapsed = time.perf_counter() - start
    print(json.dumps({"engine": "pytorch", "model": a.model, "batch_size": a.batch_size, "threads": a.threads,
                      "epochs": a.epochs, "train_samples": n,
                      "parameters": sum(p.numel() for p in model.parameters()), "torch": torch.__version__,
                      "samples_per_sec": seen / elapsed, "train_time_s": elapsed, "final_loss": loss.item()}))


if __name__ == "__main__":
    main()
