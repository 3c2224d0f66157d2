#!/usr/bin/env python3
"""The Lightning baseline for hearth_bench_train: the same model (imported from
plain_torch_loop.py, so parameter counts match), initialisation, batch size, optimizer, precision
and data (a TensorDataset of the same IDX files held in memory, num_workers=0), trained by
lightning.Trainer.fit with no logger, checkpointing, progress bar or validation. A callback times
the training batches; steady_samples_per_sec leaves out the first --warmup-batches.
Prints one JSON object like hearth_bench_train (Lightning's own messages go to stderr).

Needs `lightning` (or the older `pytorch_lightning`); Debian's python3 has neither.
"""
import argparse
import contextlib
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

from plain_torch_loop import (add_common_args, build_model, check_precision, load_train,  # noqa: E402
                              match_hearth_backend_flags, peak_memory, sync)


def import_lightning():
    """(module with LightningModule/Trainer/Callback, version); exits with a clear message when
    neither package is importable."""
    errors = []
    try:
        import lightning
        import lightning.pytorch as pl
        return pl, lightning.__version__
    except ImportError as e:
        errors.append(f"lightning: {e}")
    try:
        import pytorch_lightning as pl
        return pl, pl.__version__
    except ImportError as e:
        errors.append(f"pytorch_lightning: {e}")
    sys.stderr.write(
        f"lightning_loop.py: Lightning is not installed for {sys.executable} (torch {torch.__version__}); "
        f"tried `import lightning` and `import pytorch_lightning` ({'; '.join(errors)}).\n"
        "Install it (pip install lightning) or run on the GPU machine, whose python3 has it.\n")
    raise SystemExit(3)


def lightning_precision(precision, version):
    """Lightning 2.x takes "32-true" / "16-mixed" / "bf16-mixed"; 1.x spelled them 32 / 16 / "bf16"."""
    if int(version.split(".")[0]) >= 2:
        return precision
    return {"32-true": 32, "16-mixed": 16, "bf16-mixed": "bf16"}[precision]


def make_classes(pl):
    class Classifier(pl.LightningModule):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def training_step(self, batch, batch_idx):
            xb, yb = batch
            return F.cross_entropy(self.model(xb), yb)

        def configure_optimizers(self):
            return torch.optim.Adam(self.parameters(), lr=1e-3)

    class ThroughputTimer(pl.Callback):
        """Times fit's training batches on the host, synchronising the device at the edges."""

        def __init__(self, warmup_batches):
            self.warmup = warmup_batches
            self.batches = self.seen = self.steady_seen = 0
            self.start = self.steady_start = self.end = None

        def on_train_batch_start(self, trainer, module, batch, batch_idx, *rest):
            if self.start is None:
                sync(module.device)
                self.start = time.perf_counter()

        def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx, *rest):
            n = len(batch[1])
            self.batches += 1
            self.seen += n
            if self.steady_start is not None:
                self.steady_seen += n
            elif self.batches == self.warmup:
                sync(module.device)
                self.steady_start = time.perf_counter()

        def on_train_end(self, trainer, module):
            sync(module.device)
            self.end = time.perf_counter()

    return Classifier, ThroughputTimer


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(p)
    p.add_argument("--accelerator", choices=["auto", "cpu", "cuda"], default="auto")
    a = p.parse_args()
    pl, version = import_lightning()

    use_cuda = a.accelerator == "cuda" or (a.accelerator == "auto" and torch.cuda.is_available())
    if use_cuda and not torch.cuda.is_available():
        raise SystemExit("--accelerator cuda: torch " + torch.__version__ + " sees no CUDA device")
    device = torch.device("cuda:0" if use_cuda else "cpu")
    check_precision(device, a.precision)
    match_hearth_backend_flags(device)
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    x, y = load_train(a.data, a.limit)
    Classifier, ThroughputTimer = make_classes(pl)
    module = Classifier(build_model(a.model, a.hidden))
    loader = DataLoader(TensorDataset(x, y), batch_size=a.batch_size, shuffle=True, num_workers=0,
                        pin_memory=False)
    timer = ThroughputTimer(a.warmup_batches)
    with contextlib.redirect_stdout(sys.stderr):   # keep stdout for the one JSON line
        trainer = pl.Trainer(accelerator="cuda" if use_cuda else "cpu", devices=1,
                             precision=lightning_precision(a.precision, version), max_epochs=a.epochs,
                             logger=False, enable_checkpointing=False, enable_progress_bar=False,
                             enable_model_summary=False, benchmark=False, num_sanity_val_steps=0,
                             callbacks=[timer])
        trainer.fit(module, train_dataloaders=loader)
    if timer.end is None or timer.seen == 0:
        raise SystemExit("lightning_loop.py: fit trained no batches")
    elapsed = timer.end - timer.start
    steady = timer.steady_seen / (timer.end - timer.steady_start) if timer.steady_seen else timer.seen / elapsed
    memory_kind, memory = peak_memory(device)
    print(json.dumps({"engine": "lightning", "model": a.model, "hidden": [int(h) for h in a.hidden.split(",")]
                      if a.model == "mlp" else None, "precision": a.precision, "device": str(device),
                      "batch_size": a.batch_size, "threads": a.threads, "epochs": a.epochs,
                      "warmup_batches": a.warmup_batches, "train_samples": len(y),
                      "parameters": sum(p.numel() for p in module.parameters()), "torch": torch.__version__,
                      "lightning": version, "samples_per_sec": timer.seen / elapsed,
                      "steady_samples_per_sec": steady, "train_time_s": elapsed,
                      "peak_memory_kind": memory_kind, "peak_memory_bytes": memory}))


if __name__ == "__main__":
    main()
