#!/usr/bin/env bash
# Screenshot of heed serve's page (GET /) in headless Chromium, with a sentence in its text box
# and the translation beside it. Not run by ctest: it needs Chromium and a model.
#
# Usage: scripts/serve-page-screenshot.sh [MODEL_DIR] [OUT.png] [TEXT]
#   MODEL_DIR defaults to runs/quickstart (what scripts/demo.sh trains); without it, the
#   quickstart config is trained for TRAIN_TIME (default 2m) into a temporary directory.
#   OUT.png defaults to serve-page.png; TEXT to "The file was not found."
# The page fills its box from the query string (/?text=...) and translates it as if typed; the
# script also reads the page's DOM after the answer and fails when no translation is shown.
# Installs chromium (and a font) with apt-get when missing; needs root or sudo then.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
model=${1:-$root/runs/quickstart}
out=${2:-serve-page.png}
text=${3:-The file was not found.}
heed=${HEED:-$root/build/heed}
[ -x "$heed" ] || { echo "missing: $heed (build it first: cmake --build build)" >&2; exit 1; }

if ! command -v chromium >/dev/null; then
  as_root=()
  if [ "$(id -u)" -ne 0 ]; then as_root=(sudo env DEBIAN_FRONTEND=noninteractive); fi
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y --no-install-recommends chromium fonts-dejavu-core
fi

work=$(mktemp -d)
server=""
cleanup() {
  if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then kill -TERM "$server"; wait "$server" || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

if [ ! -f "$model/model.safetensors" ]; then
  echo "no model in $model: training configs/quickstart.json for ${TRAIN_TIME:-2m}"
  model=$work/model
  (cd "$root" && "$heed" --quiet train -c configs/quickstart.json -m "$model" \
    --set "training.max_time=${TRAIN_TIME:-2m}" --set training.validate_every=100000)
fi

"$heed" --threads 1 serve -m "$model" --port 0 > "$work/url.txt" 2> "$work/serve.log" &
server=$!
for _ in $(seq 300); do [ -s "$work/url.txt" ] && break; sleep 0.1; done
url=$(head -1 "$work/url.txt")
[ -n "$url" ] || { cat "$work/serve.log" >&2; exit 1; }

page="${url}?text=$(printf '%s' "$text" | od -An -tx1 -v | tr -d ' \n' | sed 's/../%&/g')"
# A fresh profile, nothing fetched but the page; the virtual time budget lets the page's
# request finish before the shot.
chrome=(chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run
        --disable-background-networking --disable-component-update --disable-sync
        --user-data-dir="$work/profile" --hide-scrollbars --window-size=1000,420 --virtual-time-budget=10000)
"${chrome[@]}" --dump-dom "$page" 2> "$work/chrome.log" > "$work/dom.html"
shown=$(sed -n 's/.*<div id="out"[^>]*>\([^<]*\)<\/div>.*/\1/p' "$work/dom.html")
[ -n "$shown" ] || { echo "the page shows no translation" >&2; cat "$work/dom.html" >&2; exit 1; }
"${chrome[@]}" --screenshot="$work/shot.png" "$page" 2>> "$work/chrome.log" > /dev/null
[ -s "$work/shot.png" ] || { echo "no screenshot" >&2; cat "$work/chrome.log" >&2; exit 1; }
mv "$work/shot.png" "$out"
echo "$text -> $shown"
echo "screenshot: $out"
