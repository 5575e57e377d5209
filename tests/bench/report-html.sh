#!/bin/bash
# Benchmark (not a test): the HTML report of a busy machine's window, its
# size and how fast a browser shows it.  flightrecd with the shipped
# default configuration records WINDOW_S (600) seconds of the busy
# workload (perf bench sched messaging loop + stress-ng --cpu 1 --get 1,
# as dump-window.sh); then `frctl report --format html` of its last 60 s
# and of all of it, each timed, and each page opened REPS times in
# headless Chromium (tests/tools/page-check.py --timings, network cut),
# each load in a new browser: the page's own DOMContentLoaded, first paint
# and end of drawing (performance.now() when its script is done), medians.
# Targets (issue 29): the 60 s page under 3 MB, shown (DOMContentLoaded
# and first paint) in under 2 s.
#   tests/bench/report-html.sh BUILD_DIR [REPS] [WINDOW_S]   QUICK=1: 1 rep, 70 s
BUILD=${1:-build}
REPS=${2:-3}
WINDOW=${3:-600}
. "$(dirname "$0")/lib.sh"
need_pkg perf linux-perf
need_pkg stress-ng stress-ng
need_pkg chromium chromium
[ "$QUICK" = 1 ] && REPS=1 WINDOW=70
CONF="$BUILD/../conf/flightrec.conf"
PAGE_CHECK="$(dirname "$0")/../tools/page-check.py"
FRCTL=("$BUILD/ctl/frctl" --config "$CONF" --store "$T/store" --socket "$T/control.sock")

start_flightrecd "$CONF"
busy_for "$WINDOW"
t0=$BUSY_T0 t1=$BUSY_T1
stop_tool # flightrecd: its store is final

iso() { date -u -d @"$1" +%Y-%m-%dT%H:%M:%SZ; }
machine
for span in 60 "$WINDOW"; do
	W=(--since "$(iso $((t1 - span)))" --until "$(iso "$t1")")
	page="$T/report-$span.html"
	gen=$(secs "${FRCTL[@]}" report "${W[@]}" --format html -o "$page")
	"${FRCTL[@]}" report "${W[@]}" --format html -o "$page"
	bytes=$(stat -c %s "$page")
	/usr/bin/python3 "$PAGE_CHECK" "$page" "$T/chromium-$span" --timings "$REPS" >"$T/page.json"
	jq -e '.ready and (.console | length == 0) and (.requests | length == 0)' "$T/page.json" >/dev/null ||
		{ echo "the $span s page is not clean: $(jq -c '{ready, console: .console[:3], requests}' "$T/page.json")" >&2; exit 1; }
	dcl=$(jq -r '[.loads[].dcl_ms] | join(" ")' "$T/page.json")
	fp=$(jq -r '[.loads[].fp_ms // empty] | join(" ")' "$T/page.json")
	render=$(jq -r '[.loads[].render_ms // empty] | join(" ")' "$T/page.json")
	# shown: DOMContentLoaded and first paint both past (the later one)
	shown=$(med "$(jq -r '[.loads[] | [.dcl_ms, (.fp_ms // 0)] | max] | join(" ")' "$T/page.json")")
	echo "window ${span}s: page $bytes bytes, written in ${gen}s; in Chromium: DOMContentLoaded $(med "$dcl") ms, first paint $(med "$fp") ms, drawn $(med "$render") ms (runs: $render)"
	if [ "$span" = 60 ]; then
		result "report page, 60 s busy window: size" MB "$(calc "$bytes / 1e6")" null "-" null "< 3 MB" \
			"$(le "$bytes" 3000000)" "{\"write_s\":$gen}"
		result "report page, 60 s busy window: shown (DOMContentLoaded, first paint)" ms "$shown" null "-" null \
			"< 2000 ms" "$(le "$shown" 2000)" "{\"dcl_ms\":\"$dcl\",\"fp_ms\":\"$fp\",\"drawn_ms\":\"$render\"}"
	else
		result "report page, ${span} s busy window: size" MB "$(calc "$bytes / 1e6")" null "-" null "bounded" null \
			"{\"write_s\":$gen,\"shown_ms\":$shown,\"drawn_ms\":\"$render\"}"
	fi
done
