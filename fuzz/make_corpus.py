"""Writes the seed corpora of the fuzz targets (fuzz/corpus/<target>/) from the test fixtures
and small hand-made files. Run with the project's Python: .deps/python/bin/python fuzz/make_corpus.py
The corpora also hold what the 10-minute runs found that adds coverage, merged in with
`build/dev/fuzz/fuzz_<t> -merge=1 fuzz/corpus/fuzz_<t> build/fuzz-work/fuzz_<t>/new`; regression
inputs for fixed findings are named regression-*."""
import gzip
import json
import pathlib
import struct

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "fuzz" / "corpus"


def write(target, name, data):
    d = OUT / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data if isinstance(data, bytes) else data.encode())


def idx(magic, dims, payload):
    return struct.pack(">I", magic) + b"".join(struct.pack(">I", d) for d in dims) + payload


# IDX: the first byte picks the rank (1 + b % 3) and, with its high bit, a ".gz" name.
labels = idx(0x801, [6], bytes([0, 1, 2, 3, 4, 9]))
images = idx(0x803, [2, 4, 4], bytes(range(32)))
write("fuzz_idx", "labels-raw", b"\x00" + labels)
write("fuzz_idx", "labels-gz", b"\x81" + gzip.compress(labels, mtime=0))
write("fuzz_idx", "images-raw", b"\x02" + images)
write("fuzz_idx", "images-gz", b"\x83" + gzip.compress(images, mtime=0))
write("fuzz_idx", "images-truncated", b"\x02" + images[:20])
write("fuzz_idx", "bomb-header", b"\x83" + gzip.compress(idx(0x803, [2**31, 65536, 65536], b""), mtime=0))

# CSV: the fixtures, quoting, CRLF, Windows-1252.
for f in (ROOT / "tests/fixtures/data").glob("*.csv"):
    write("fuzz_csv", f.name, f.read_bytes()[:4096])
write("fuzz_csv", "quoted.csv", 'text,label\r\n"a, ""quoted"" line\nbreak",pos\r\nplain,neg\r\n')
write("fuzz_csv", "cp1252.csv", b"name,label\ncaf\xe9,x\n")

# Experiment configs: every preset.
for f in (ROOT / "resources/presets").glob("*.json"):
    write("fuzz_config", f.name, f.read_bytes())
write("fuzz_config", "minimal.json", '{"trainer":{"max_epochs":1,"precision":"bf16-mixed","devices":2,"strategy":"zero2"}}')

# safetensors: the fixtures (the larger ones cut to their header and a little data).
for f in [ROOT / "tests/fixtures/safetensors/tiny.safetensors", *sorted((ROOT / "tests/fixtures/safetensors/sharded").glob("*.safetensors"))]:
    write("fuzz_safetensors", f.name, f.read_bytes())
header = json.dumps({"__metadata__": {"format": "pt"}, "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                     "b": {"dtype": "BF16", "shape": [1, 2], "data_offsets": [8, 12]}}).encode()
write("fuzz_safetensors", "two.safetensors", struct.pack("<Q", len(header)) + header + bytes(12))

# Tokenizer input text: the reference cases' texts.
cases = json.loads((ROOT / "tests/fixtures/tokenizer/cases.json").read_text())["cases"]
for i, text in enumerate(sorted({c["text"] for c in cases})[:40]):
    write("fuzz_tokenizer", f"case{i:02d}.txt", text.encode()[:2048])

# Vocabularies (first byte even: vocab.txt) and tokenizer.json (odd).
vocab = (ROOT / "tests/fixtures/tokenizer/vocab.txt").read_text().splitlines()
small = vocab[:1100] + [t for t in vocab[1100:] if t.isascii()][:400]
write("fuzz_vocab", "vocab.txt", b"\x00" + ("\n".join(small) + "\n").encode())
tokenizer_json = {
    "version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
    "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                   "strip_accents": None, "lowercase": True},
    "pre_tokenizer": {"type": "BertPreTokenizer"},
    "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
              "max_input_chars_per_word": 100, "vocab": {t: i for i, t in enumerate(small[:300])}},
}
write("fuzz_vocab", "tokenizer.json", b"\x01" + json.dumps(tokenizer_json).encode())
print("corpora in", OUT)
