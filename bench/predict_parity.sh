#!/usr/bin/env bash
# `hearth-cli predict` against transformers, end to end, on a checkpoint no test has seen: a fresh
# random DistilBERT (seed given, full uncased vocabulary, three labels) saved with save_pretrained,
# the tokenizer fixture's texts (3128: real sentences and tricky strings) as a CSV, and the class
# probabilities of transformers' DistilBertForSequenceClassification (eval, BertTokenizerFast,
# from_pretrained on the folder, truncation at 128) vs Hearth's. HTML line breaks are read as line breaks on both sides, as
# Hearth reads text CSVs.
#
#   bench/predict_parity.sh [BUILD_DIR] [SEED]     (default build/dev, seed 2026; needs .deps/python)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/dev}" seed="${2:-2026}"
py=.deps/python/bin/python
tmp="${PARITY_TMP:-$(mktemp -d)}"; [ -n "${PARITY_TMP:-}" ] || trap 'rm -rf "$tmp"' EXIT; mkdir -p "$tmp"
"$py" tests/fixtures/make_transformer_fixtures.py --out "$tmp/model" --seed "$seed" >/dev/null 2>&1
HF_HUB_OFFLINE=1 "$py" - "$tmp" <<'PY'
import csv, json, re, sys
import torch
from transformers import BertTokenizerFast, DistilBertForSequenceClassification
tmp = sys.argv[1]
texts = [c["text"] for c in json.load(open("tests/fixtures/tokenizer/cases.json", encoding="utf-8"))["cases"]]
texts = [re.sub(r"<br\s*/?>", "\n", t, flags=re.I) for t in texts]
with open(f"{tmp}/input.csv", "w", newline="", encoding="utf-8") as f:
    w = csv.writer(f)
    w.writerow(["text"])
    for t in texts:
        w.writerow([t])
tok = BertTokenizerFast.from_pretrained(f"{tmp}/model")   # the folder's vocab.txt, uncased
model = DistilBertForSequenceClassification.from_pretrained(f"{tmp}/model").eval()
probs = []
with torch.no_grad():
    for i in range(0, len(texts), 64):
        enc = tok(texts[i:i + 64], truncation=True, max_length=128, padding=True, return_tensors="pt")
        probs.append(torch.softmax(model(**enc).logits, -1))
torch.save(torch.cat(probs), f"{tmp}/expected.pt")
PY
"$build/app/cli/hearth-cli" predict --model "$tmp/model" --input "$tmp/input.csv" --output "$tmp/predicted.csv" \
  --max-length 128
"$py" - "$tmp" <<'PY'
import csv, sys
import torch
tmp = sys.argv[1]
expected = torch.load(f"{tmp}/expected.pt")
rows = list(csv.DictReader(open(f"{tmp}/predicted.csv", encoding="utf-8")))
names = ["negative", "neutral", "positive"]
got = torch.tensor([[float(r["prob:" + n]) for n in names] for r in rows])
same = (got.argmax(1) == expected.argmax(1)).sum().item()
print(f"{len(rows)} texts: max |p_hearth - p_transformers| = {(got - expected).abs().max().item():.2e}, "
      f"same predicted class for {same}/{len(rows)}")
PY
