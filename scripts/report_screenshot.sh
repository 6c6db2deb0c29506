#!/usr/bin/env bash
# Opens a roboaudit report (index.html) in headless Chromium (Debian's `chromium`), saves a
# full-page screenshot, and fails (non-zero) when the page logs any console message (the page
# has no scripts, so any message is an error such as a blocked resource) or when a plot that
# report.json lists as available is missing from the rendered DOM (a <figure id=…> holding an
# <svg>, or the embedded thumbnails of an FQE frame strip).
#
# Usage: scripts/report_screenshot.sh REPORT_DIR OUT.png
# Needs: chromium (apt-get install -y chromium), python3 (standard library only).
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 REPORT_DIR OUT.png" >&2
  exit 2
fi
report_dir=$1
out_png=$2
html="$report_dir/index.html"
json="$report_dir/report.json"
for f in "$html" "$json"; do
  [[ -f $f ]] || { echo "error: $f not found" >&2; exit 1; }
done
chromium_bin=${CHROMIUM:-/usr/bin/chromium}
[[ -x $chromium_bin ]] || { echo "error: $chromium_bin not found (apt-get install -y chromium)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
url="file://$(cd "$(dirname "$html")" && pwd)/$(basename "$html")"
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-component-update --disable-sync
  --disable-dev-shm-usage --hide-scrollbars --enable-logging=stderr --v=0)

# 1. The DOM after load, with the console log on stderr.
"$chromium_bin" "${flags[@]}" --user-data-dir="$work/profile-dom" --virtual-time-budget=5000 \
  --dump-dom "$url" >"$work/dom.html" 2>"$work/dom.log" || {
  echo "error: chromium failed to load $url" >&2; tail -20 "$work/dom.log" >&2; exit 1; }

# 2. Expected plots vs the DOM; page height for the screenshot.
python3 - "$json" "$work/dom.html" "$work/height" <<'PY'
import json, re, sys
report = json.load(open(sys.argv[1]))
dom = open(sys.argv[2], encoding="utf-8").read()
# Charts are inline SVG; the FQE frame strip is a grid of embedded PNG thumbnails.
expected = [p["id"] for p in report["plots"] if p["available"] and p["kind"] != "fqe_frames"]
strips = [p["id"] for p in report["plots"] if p["available"] and p["kind"] == "fqe_frames"]
skipped = [p["id"] for p in report["plots"] if not p["available"]]
missing = []
for pid in expected + strips:
    m = re.search(r'<figure id="%s"[^>]*>(.*?)</figure>' % re.escape(pid), dom, re.S)
    body = "<svg" if pid in expected else '<img src="data:image/png;base64,'
    if not m or body not in m.group(1) or "<figcaption" not in m.group(1):
        missing.append(pid)
for pid in skipped:
    if f'data-plot="{pid}"' not in dom:
        missing.append(pid + " (skip note)")
svgs = len(re.findall(r"<svg\b", dom))
print(f"plots: {len(expected)} expected, {svgs} <svg> in the page, {len(strips)} frame strip(s), {len(skipped)} skipped with a note")
if missing:
    print("error: missing from the page: " + ", ".join(missing), file=sys.stderr)
    sys.exit(1)
if svgs != len(expected):
    print(f"error: {svgs} <svg> elements, expected {len(expected)}", file=sys.stderr)
    sys.exit(1)
# Generous page height (blank space at the bottom is harmless, a cut-off page is not), capped
# below Chromium's texture limit.
heights = sum(int(h) for h in re.findall(r'<(?:svg|img)[^>]*\bheight="(\d+)"', dom))
count = lambda pat: len(re.findall(pat, dom))
estimate = 800 + heights + 220 * len(expected) + 48 * count(r"<tr>") + 90 * count(r"<h[23]") + 90 * count(r"<p[ >]") + 80 * len(skipped)
open(sys.argv[3], "w").write(str(min(16000, estimate)))
PY

# 3. The screenshot (a window as tall as the page).
height=$(cat "$work/height")
"$chromium_bin" "${flags[@]}" --user-data-dir="$work/profile-shot" --virtual-time-budget=5000 \
  --window-size=920,"$height" --screenshot="$work/shot.png" "$url" >/dev/null 2>"$work/shot.log" || {
  echo "error: chromium failed to take the screenshot" >&2; tail -20 "$work/shot.log" >&2; exit 1; }
[[ -s $work/shot.png ]] || { echo "error: no screenshot written" >&2; exit 1; }
mkdir -p "$(dirname "$out_png")"
cp "$work/shot.png" "$out_png"

# 4. Console messages from either run fail the check.
if grep -h "CONSOLE" "$work/dom.log" "$work/shot.log" >"$work/console.txt"; then
  echo "error: the page logged console messages:" >&2
  cat "$work/console.txt" >&2
  exit 1
fi
echo "ok: screenshot $out_png (920x$height), no console messages"
