#!/usr/bin/env bash
# How fast an exported report opens in a browser: report_bench writes a 100,000-step run's report
# (and a 100-run comparison), then headless Chromium opens each page --repeat times with no
# network; the page itself records, when its last chart is drawn, the time since navigation
# started (<body data-render-ms>): parsing the file, its scripts and data, and drawing every chart.
# Usage: bench/report_open.sh [build dir] [--steps N] [--compare N] [--repeat N]
set -euo pipefail
build="${1:-build/dev}"; shift || true
steps=100000 compare=100 repeat=5
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) steps="$2"; shift 2 ;;
    --compare) compare="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    *) echo "report_open.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
browser="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
[ -n "$browser" ] || { echo "report_open.sh needs Chromium (apt-get install chromium)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$build/bench/report_bench" --steps "$steps" --compare "$compare" --out "$work"

open_page() {   # file -> "render_ms wall_ms" of one headless open
  local start end dom ms
  start=$(date +%s%N)
  dom="$("$browser" --headless --no-sandbox --disable-gpu --no-first-run --proxy-server=127.0.0.1:9 \
        --user-data-dir="$work/profile" --window-size=1280,2000 --dump-dom "file://$1" 2>/dev/null)"
  end=$(date +%s%N)
  ms="$(grep -o '<body [^>]*data-render-ms="[0-9.]*"' <<< "$dom" | grep -o '[0-9.]*"$' | tr -d '"')"
  grep -q 'data-render="done"' <<< "$dom" || { echo "the page did not finish drawing: $(grep -o '<body [^>]*>' <<< "$dom")" >&2; exit 1; }
  echo "$ms $(( (end - start) / 1000000 ))"
}

report() {   # name file
  local results=() line
  for _ in $(seq "$repeat"); do results+=("$(open_page "$2")"); done
  printf '%s\n' "${results[@]}" | sort -n | awk -v name="$1" -v n="$repeat" '
    { r[NR] = $1; w[NR] = $2 }
    END { printf "%s: drawn %.0f ms after navigation started (median of %d; min %.0f, max %.0f); browser process %d-%d ms\n",
                 name, r[int((n + 1) / 2)], n, r[1], r[n], w[1], w[n] }' | sort -t' ' -k1
}
report "run report ($steps steps)" "$work/report-run.html"
[ "$compare" -gt 0 ] && report "comparison ($compare runs)" "$work/report-compare.html"
exit 0
