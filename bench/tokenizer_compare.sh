#!/usr/bin/env bash
# Tokenizer throughput, one thread: Hearth's BertTokenizer (bench/src/tokenizer_throughput.cpp) vs
# Hugging Face's Rust tokenizer (tokenizers' BertWordPieceTokenizer, the pipeline of
# BertTokenizerFast) on the same texts: the tokenizer fixture's 3128 texts (3000 real sentences),
# repeated, truncated at 512.
#
#   bench/tokenizer_compare.sh [BUILD_DIR]    (default build/dev; needs .deps/python)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/dev}"
repeat="${BENCH_REPEAT:-20}"
vocab=tests/fixtures/tokenizer/vocab.txt corpus=tests/fixtures/tokenizer/cases.json
[ -x "$build/bench/tokenizer_bench" ] || { echo "no $build/bench/tokenizer_bench (scripts/build dev tokenizer_bench)" >&2; exit 2; }
echo "$(date -u +%F), $(nproc) cores, one thread each:"
"$build/bench/tokenizer_bench" "$vocab" "$corpus" --repeat "$repeat"
RAYON_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false .deps/python/bin/python - "$vocab" "$corpus" "$repeat" <<'PY'
import json, sys, time
from tokenizers import BertWordPieceTokenizer
vocab, corpus, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
texts = [c["text"] for c in json.load(open(corpus, encoding="utf-8"))["cases"]]
t = BertWordPieceTokenizer(vocab, lowercase=True)
t.enable_truncation(512)
nbytes = sum(len(x.encode("utf-8")) for x in texts)
start = time.perf_counter()
ids = 0
for _ in range(repeat):
    for x in texts:  # one text at a time, as a loader would; encode_batch would use every core
        ids += len(t.encode(x).ids)
s = time.perf_counter() - start
n = len(texts) * repeat
print(f"tokenizers (Rust), encode per text: {len(texts)} texts x {repeat} in {s:.2f} s: {n / s:.0f} texts/s, "
      f"{nbytes * repeat / s / 1e6:.1f} MB/s, {ids / n:.1f} ids per text")
start = time.perf_counter()
for _ in range(repeat):
    t.encode_batch(texts)  # one call per pass: no Python per text (RAYON_NUM_THREADS=1: one thread)
s = time.perf_counter() - start
print(f"tokenizers (Rust), encode_batch: {n / s:.0f} texts/s, {nbytes * repeat / s / 1e6:.1f} MB/s")
PY
