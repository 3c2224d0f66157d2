#!/usr/bin/env python3
"""The reference for Hearth's transformer training step: the same DistilBERT/BERT-shaped
classifier in PyTorch eager with Hugging Face transformers (random init, default attention
implementation), the same batch, sequence length, threads and optimizer (Adam, lr 1e-3), one
forward + cross-entropy + backward + step per batch of random token ids. Prints one JSON object.
On CUDA (--device cuda) also the peak allocated memory; --lightning runs the same model and
batches through a LightningModule and lightning.Trainer (the seed study's loop).

    .deps/python/bin/python bench/transformers_step.py --model distilbert --seq 128 --batch-size 8
    python3 bench/transformers_step.py --device cuda --seq 512 --batch-size 12 --precision 16-mixed [--lightning]
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
    p.add_argument("--precision", default="32-true", choices=["32-true", "bf16-mixed", "16-mixed"])
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--lightning", action="store_true")
    a = p.parse_args()
    if a.device == "cpu":
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
    device = torch.device(a.device)
    model.to(device).train()
    g = torch.Generator().manual_seed(1)
    batches = [(torch.randint(1000, 30000, (a.batch_size, a.seq), generator=g).to(device),
                torch.randint(0, a.labels, (a.batch_size,), generator=g).to(device)) for _ in range(4)]
    mask = torch.ones(a.batch_size, a.seq, dtype=torch.int64, device=device)
    if a.device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    seconds = lightning_loop(a, model, batches, mask) if a.lightning else eager_loop(a, model, batches, mask)
    out = {"engine": "lightning" if a.lightning else "transformers", "torch": torch.__version__, "model": a.model,
           "seq": a.seq, "batch_size": a.batch_size, "threads": a.threads, "precision": a.precision,
           "device": a.device, "attention": model.config._attn_implementation,
           "parameters": sum(x.numel() for x in model.parameters()),
           "steady_samples_per_sec": a.steps * a.batch_size / seconds}
    if a.device == "cuda":
        out["peak_memory_bytes"] = torch.cuda.max_memory_allocated()
        out["gpu"] = torch.cuda.get_device_name()
    print(json.dumps(out))


def eager_loop(a, model, batches, mask):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    dtype = torch.bfloat16 if a.precision == "bf16-mixed" else torch.float16
    autocast = a.precision != "32-true"
    scaler = torch.amp.GradScaler(a.device, enabled=a.precision == "16-mixed")

    def step(i):
        ids, labels = batches[i % len(batches)]
        with torch.autocast(a.device, dtype=dtype, enabled=autocast):
            loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)

    for i in range(a.warmup):
        step(i)
    sync(a)
    start = time.perf_counter()
    for i in range(a.steps):
        step(i)
    sync(a)
    return time.perf_counter() - start


def sync(a):
    if a.device == "cuda":
        torch.cuda.synchronize()


def lightning_loop(a, model, batches, mask):
    import lightning as L

    class Module(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.model = model

        def training_step(self, batch, _):
            ids, labels = batch
            return self.model(input_ids=ids, attention_mask=mask, labels=labels).loss

        def configure_optimizers(self):
            return torch.optim.Adam(self.parameters(), lr=1e-3)

    class Timer(L.Callback):
        start = None

        def on_train_batch_start(self, trainer, *_):
            if trainer.global_step == a.warmup:
                sync(a)
                Timer.start = time.perf_counter()

    data = [batches[i % len(batches)] for i in range(a.warmup + a.steps)]
    trainer = L.Trainer(max_steps=a.warmup + a.steps, accelerator="gpu" if a.device == "cuda" else "cpu", devices=1,
                        precision=a.precision, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, callbacks=[Timer()])
    trainer.fit(Module(), train_dataloaders=torch.utils.data.DataLoader(data, batch_size=None))
    sync(a)
    return time.perf_counter() - Timer.start


if __name__ == "__main__":
    main()
