#!/usr/bin/env bash
# The memory toggles' measured effect on this machine: the memory ladder (hearth-cli sweep
# --ladder=memory: gradients zeroed -> set to none -> + in-place ReLU -> + per-block activation
# checkpointing) on three models, each a fresh run store, and the ladder's table of each.
#
#   bench/memory_ladder.sh [BUILD_DIR] [OUT_DIR]     (defaults: build/dev, a temporary folder)
#
# cnn:      the default experiment (2 conv blocks, batch 64), 8,000 Fashion-MNIST samples
# cnn-deep: 4 conv blocks (32, 64, 128, 256), batch 256, 4,000 samples
# bert:     a new BERT (width 256, 4 layers, 4 heads, ffn 1024), batch 32 of 128 tokens, 1,200
#           WordNet glosses (needs .deps/models/all-MiniLM-L6-v2/vocab.txt: scripts/install-deps)
# One epoch each, loader on the training thread (the bert ladder: one worker).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/dev}"
out="${2:-$(mktemp -d)}"
mkdir -p "$out"
cli="$build/app/cli/hearth-cli"
[ -x "$cli" ] || { echo "no $cli: build first (scripts/build)" >&2; exit 2; }
common=(--set trainer.max_epochs=1 -q)
echo "$(date -u +%F), $(nproc) cores, $("$cli" --version | head -n 1)"
ladder() {   # ladder NAME ARGS...
  local name="$1"; shift
  rm -f "$out/$name.sqlite"
  echo; echo "## $name"
  "$cli" --db "$out/$name.sqlite" sweep --ladder=memory "${common[@]}" "$@" 2>/dev/null | sed -n '/^step /,/^(peak/p'
}
ladder cnn --set data.limit=8000 --set trainer.num_workers=0
ladder cnn-deep --set data.limit=4000 --set trainer.num_workers=0 --set 'model.channels=[32,64,128,256]' \
  --set trainer.batch_size=256
vocab=.deps/models/all-MiniLM-L6-v2/vocab.txt
if [ -f "$vocab" ] && [ -f /usr/share/wordnet/data.noun ]; then
  ladder bert --set data.kind=wordnet --set data.path=/usr/share/wordnet/data.noun --set data.tokenizer="$vocab" \
    --set data.limit=1200 --set model.name=bert --set model.hidden_size=256 --set model.num_layers=4 \
    --set model.num_heads=4 --set model.intermediate_size=1024 --set data.max_length=128 \
    --set data.padding=max_length --set trainer.batch_size=32 --set trainer.num_workers=1
else
  echo; echo "## bert: skipped (no $vocab or WordNet)"
fi
echo; echo "Run stores in $out (hearth-cli --db $out/cnn.sqlite compare 1 2 3 4: the breakdowns side by side)"
