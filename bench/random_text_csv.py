#!/usr/bin/env python3
"""Writes a text,label CSV of N random whole-word texts, each longer than SEQ WordPiece tokens,
so that every sample is cut to exactly SEQ tokens (one batch shape for throughput benches).

    python3 bench/random_text_csv.py OUT.csv N SEQ
"""
import csv
import random
import sys


def main():
    path, n, seq = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    words = [w.strip() for w in open("tests/fixtures/tokenizer/vocab.txt", encoding="utf-8")][2000:20000]
    words = [w for w in words if w.isalpha()]
    rng = random.Random(0)
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["text", "label"])
        for i in range(n):
            out.writerow([" ".join(rng.choice(words) for _ in range(seq + 8)), i % 2])


if __name__ == "__main__":
    main()
