#!/usr/bin/env python3
"""The reference for Hearth's transformer training step: the same DistilBERT/BERT-shaped
classifier in PyTorch eager with Hugging Face transformers (random init, default attention
implementation), the same batch, sequence length, threads and optimizer (Adam, lr 1e-3), one
forward + cross-entropy + backward + step per batch of random token ids. Prints one JSON object.

    .deps/python/bin/python bench/transformers_step.py --model distilbert --seq 128 --batch-size 8
"""
import argparse
import json
import time

import torch
from transformers import (BertConfig, BertForSequenceClassification, DistilBertConfig,
                          DistilBertForSequenceClassification)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="distilbert", choices=["distilbert", "bert"])
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--dim", type=int, default=768)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--ffn", type=int, default=3072)
    p.add_argument("--labels", type=int, default=2)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--precision", default="32-true", choices=["32-true", "bf16-mixed"])
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    if a.model == "distilbert":
        cfg = DistilBertConfig(vocab_size=30522, max_position_embeddings=max(512, a.seq), n_layers=a.layers,
                               n_heads=a.heads, dim=a.dim, hidden_dim=a.ffn, num_labels=a.labels)
        model = DistilBertForSequenceClassification(cfg)
    else:
        cfg = BertConfig(vocab_size=30522, max_position_embeddings=max(512, a.seq), num_hidden_layers=a.layers,
                         num_attention_heads=a.heads, hidden_size=a.dim, intermediate_size=a.ffn,
                         num_labels=a.labels)
        model = BertForSequenceClassification(cfg)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    batches = [(torch.randint(1000, 30000, (a.batch_size, a.seq), generator=g),
                torch.randint(0, a.labels, (a.batch_size,), generator=g)) for _ in range(4)]
    mask = torch.ones(a.batch_size, a.seq, dtype=torch.int64)

    def step(i):
        ids, labels = batches[i % len(batches)]
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.precision == "bf16-mixed"):
            loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for i in range(a.warmup):
        step(i)
    start = time.perf_counter()
    for i in range(a.steps):
        step(i)
    seconds = time.perf_counter() - start
    print(json.dumps({"engine": "transformers", "torch": torch.__version__, "model": a.model, "seq": a.seq,
                      "batch_size": a.batch_size, "threads": a.threads, "precision": a.precision,
                      "attention": model.config._attn_implementation,
                      "parameters": sum(x.numel() for x in model.parameters()),
                      "steady_samples_per_sec": a.steps * a.batch_size / seconds}))


if __name__ == "__main__":
    main()
