#!/bin/sh
# The simulation report in a real browser: podctl simulate replays the demo's
# week (examples/sim/week.csv) on the demo board with fit and kep (overlaid
# with their difference, provenance at the top), headless
# Chromium opens the HTML page offline (it loads nothing from elsewhere: the
# network is off for it) and takes a screenshot like the one docs/simulation.md
# shows, into $PODKERNEL_BUILD/sim-report.png (the test never writes the tree:
# copy it over docs/sim-report.png by hand when the page changes).
set -eu
. "$PODKERNEL_SRC/tests/e2e/lib.sh"
e2e_setup
need_tool chromium
"$PODKERNEL_BIN/podctl" simulate --board "$PODKERNEL_SRC/boards/tpu-superslice.yaml" \
	--trace "$PODKERNEL_SRC/examples/sim/week.csv" --strategy fit,kep --seed 1 \
	-o "$WORK/report.html" > "$WORK/summary.txt" 2> "$WORK/err.txt" ||
	{ cat "$WORK/err.txt"; fail "podctl simulate"; }
grep -qE '<script|src=|href=|@import|url\(' "$WORK/report.html" && fail "the page loads something"
[ "$(grep -c '<svg' "$WORK/report.html")" -eq 10 ] ||
	fail "expected the 2 charts of the runs overlaid and 4 charts per strategy"
grep -q "Runs overlaid" "$WORK/report.html" || fail "the runs are not overlaid"
grep -q '<th>trace</th><td>.*examples/sim/week.csv</td>' "$WORK/report.html" || fail "no provenance"
timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
	--no-first-run --user-data-dir="$WORK/chromium" --window-size=1200,1500 \
	--proxy-server=127.0.0.1:9 --screenshot="$WORK/sim-report.png" \
	"file://$WORK/report.html" > /dev/null 2>> "$WORK/chromium.log" ||
	{ cat "$WORK/chromium.log"; fail "chromium --screenshot"; }
[ "$(wc -c < "$WORK/sim-report.png")" -gt 20000 ] || fail "the screenshot is (nearly) empty"
cp "$WORK/sim-report.png" "$PODKERNEL_BUILD/sim-report.png"
echo "screenshot: $PODKERNEL_BUILD/sim-report.png"
echo "ok"
