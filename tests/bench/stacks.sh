#!/bin/bash
# Benchmark (not a test): user stacks of programs built without frame
# pointers, flightrecd next to perf's DWARF unwinding, on four CPU-bound
# workloads, each a fixed amount of work in one process:
#   python3   Debian's /usr/bin/python3 in a pure-Python loop
#   xz        xz -6 -T1 compressing 4 MiB of generated text
#   gzip      gzip -6 over 12 x 8 MiB of it
#   fr-deep   tests/helpers/fr-deep rounds N (-O2 -fomit-frame-pointer -g:
#             main -> fr_deep_a -> fr_deep_b -> fr_deep_c)
# Alternately, REPS times, every workload runs under
#   none        nothing recording
#   flightrecd  the shipped default configuration (sampling at 49 Hz, its
#               default 16 KiB stack copy; debug files from /usr/lib/debug)
#   perf        perf record --call-graph dwarf -F 49 -a (8 KiB stack copy,
#               perf's default; PERF_CALLGRAPH=dwarf,16384 for ours), one
#               recording per workload, then perf script to unwind and name
# and per workload and recorder this prints:
#   depth     median user frames per sample of the workload's process.
#             Inlined functions count as frames in both: perf script shows
#             them (from the same debug information, libc6-dbg here) as
#             "(inlined)" lines, frctl's json as frames with "inlined".
#             Marker frames ([truncated], ...) are not frames.  Debian's
#             perf 6.1 unwinds with libunwind, which here mostly stops at
#             glibc's __libc_start_call_main (it reads a wrong return
#             address there, depending on the stack's alignment; when perf
#             starts the workload itself it often gets through): its depth
#             is then 2 short (__libc_start_main_impl, inlined, and _start),
#             the frames from main down being the same.
#   named     % of those frames with a function name: not perf's
#             "[unknown]", not a frame frctl knows only as module+offset
#   CPU/sample  the recorder's CPU per sample recorded, unwound and named,
#             counting the samples of every process (both record the whole
#             machine) but not the idle task's (flightrecd does not record
#             those; perf's are left out of its count).  flightrecd: the
#             daemon's CPU (/proc/PID/task/*/schedstat, utime + stime in
#             ns) plus its fr_sample BPF program's run time
#             (kernel.bpf_stats_enabled=1), from just before the workload
#             to SETTLE seconds after it (its samples drained and written).
#             perf: CPU of perf record (start-up, recording, its build-id
#             pass at exit) plus CPU of perf script over the file, both in
#             a cpuacct cgroup.  perf's in-kernel stack copy runs in the
#             sampled tasks' context and shows only in the slowdown.
#   bytes/sample  what is kept to read the samples later, per sample.
#             flightrecd: growth of the store's chunk bytes written
#             (status store.bytes_written) over the same interval: every
#             record the default config writes, with the names of the
#             frames (mapping, symbol and inline records, once per chunk)
#             and the other sources' records charged to the samples (an
#             upper bound; the share of sample records is in the json).
#             perf: size of perf.data (samples with their raw stack copies,
#             mmap/comm events, the build-id table) over its samples; perf
#             also needs the binaries and debug files at perf script time.
#   slowdown  median CPU time of the workload (its cpuacct cgroup: the
#             sampling work done in its context counts) over the median
#             without recording; wall time alongside.
#   tests/bench/stacks.sh BUILD_DIR [REPS]     QUICK=1: 1 rep, ~1 s workloads
# FR_BENCH_DEBUG=DIR keeps each run's per-sample counts, perf script output
# and frctl json of the workloads' samples in DIR.
BUILD=${1:-build}
REPS=${2:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
need_pkg perf linux-perf
need_pkg xz xz-utils
need_pkg gzip gzip
PYTHON=/usr/bin/python3 # Debian's: a pyenv or venv python would be another binary
FRCTL="$BUILD/ctl/frctl"
DEEP="$BUILD/tests/helpers/fr-deep"
CONF="$HERE/../../conf/flightrec.conf"
PERF_CALLGRAPH=${PERF_CALLGRAPH:-dwarf}
SETTLE=2.5 # > chunk_age (1 s) + sync_interval (1 s) of the default config
[ -x "$DEEP" ] || { echo "$DEEP is missing: ninja -C $BUILD" >&2; exit 1; }
[ -x "$PYTHON" ] || { echo "$PYTHON is missing (Debian package python3)" >&2; exit 1; }
if [ "$QUICK" = 1 ]; then
	REPS=1 PY_N=300 XZ_MIB=1 GZ_N=3 DEEP_N=50000
else
	PY_N=1200 XZ_MIB=4 GZ_N=12 DEEP_N=200000
fi
WORKLOADS="python3 xz gzip fr-deep"

# the workloads' and perf's cgroups (cgroup v1 cpuacct on these machines, else v2)
CG_ROOT=/sys/fs/cgroup/cpuacct
[ -d "$CG_ROOT" ] || CG_ROOT=/sys/fs/cgroup
CG_WL="$CG_ROOT/fr-bench-$$-workload" CG_PERF="$CG_ROOT/fr-bench-$$-perf"
mkdir "$CG_WL" "$CG_PERF"
trap 'bench_cleanup; rmdir "$CG_WL" "$CG_PERF" 2>/dev/null || true' EXIT
# usage_s CGROUP: CPU seconds its tasks have used
usage_s() {
	if [ -f "$1/cpuacct.usage" ]; then
		awk '{ printf "%.6f", $1 / 1e9 }' "$1/cpuacct.usage"
	else
		awk '$1 == "usage_usec" { printf "%.6f", $2 / 1e6 }' "$1/cpu.stat"
	fi
}
# in_cg CGROUP PIDFILE CMD...: runs CMD in CGROUP, its pid in PIDFILE
in_cg() { sh -c 'echo $$ >"$1/cgroup.procs"; echo $$ >"$2"; shift 2; exec "$@"' sh "$@"; }

# The input: text of words drawn from a 5000-word vocabulary (Zipf-like),
# seeded, so every run compresses the same bytes; xz -6 needs ~1 s per MiB.
"$PYTHON" - "$T/text" <<'PY'
import random, sys
r = random.Random(1)
words = [''.join(r.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(r.randint(2, 10))) for _ in range(5000)]
cum, t = [], 0.0
for i in range(len(words)):
    t += 1.0 / (i + 1)
    cum.append(t)
n = 0
with open(sys.argv[1], 'w') as f:
    while n < 8 << 20:
        line = ' '.join(r.choices(words, cum_weights=cum, k=12)) + ' %d\n' % r.randint(0, 10**9)
        f.write(line)
        n += len(line)
PY
head -c "$((XZ_MIB << 20))" "$T/text" >"$T/xz.in"
GZ_IN=()
for _ in $(seq "$GZ_N"); do GZ_IN+=("$T/text"); done
PY_LOOP='
import sys
def fr_py_hot(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
for _ in range(int(sys.argv[1])):
    fr_py_hot(100000)
'

# run_wl NAME: runs workload NAME in its cgroup; prints "wall_s cpu_s",
# its pid in $T/wl.pid
run_wl() {
	local t0 t1 u0 u1
	u0=$(usage_s "$CG_WL")
	t0=$(now)
	case $1 in
	python3) in_cg "$CG_WL" "$T/wl.pid" "$PYTHON" -c "$PY_LOOP" "$PY_N" ;;
	xz) in_cg "$CG_WL" "$T/wl.pid" xz -6 -T1 -c "$T/xz.in" >/dev/null ;;
	gzip) in_cg "$CG_WL" "$T/wl.pid" gzip -6 -c "${GZ_IN[@]}" >/dev/null ;;
	fr-deep) in_cg "$CG_WL" "$T/wl.pid" "$DEEP" rounds "$DEEP_N" >/dev/null ;;
	esac
	t1=$(now)
	u1=$(usage_s "$CG_WL")
	echo "$(calc "$t1 - $t0") $(calc "$u1 - $u0")"
}

# ours_stacks PID: "user_frames named_frames python_frames" per sample of
# PID (frctl json; Python frames, issue 47, count as user frames too)
ours_stacks() {
	"$FRCTL" --store "$T/store" dump --last 10m --pid "$1" --type sample --format json |
		jq -r '[.stack[.kernel_frames:][] | select((.sym // "") | test("^\\[(truncated|no unwind info|unwind failed)\\]$") | not)]
			| "\(length) \([.[] | select(.sym != null)] | length) \([.[] | select(.kind == "python")] | length)"'
}
# perf_stacks SCRIPT_OUT PID: the same from perf script -F comm,pid,ip,sym,dso
# output (a header line "comm pid", then "addr sym (dso)" lines, leaf
# first; "(inlined)" for inlined frames; a blank line after each sample)
perf_stacks() {
	awk -v want="$2" '
		function flush() { if (inside && pid == want) print u, named, 0; inside = 0 }
		/^[^ \t]/ { flush(); pid = $NF; u = named = 0; inside = 1; next }
		/^[ \t]*$/ { flush(); next }
		{ if ($0 ~ /\(\[kernel\.kallsyms\]\)$/ || $0 ~ /\(\[guest\.kernel/) next
		  u++; sym = $0; sub(/^[ \t]*[0-9a-f]+ /, "", sym); sub(/ \([^()]*\)$/, "", sym)
		  if (sym != "[unknown]" && sym !~ /^0x[0-9a-f]+$/) named++ }
		END { flush() }' "$1"
}
# perf_samples SCRIPT_OUT: samples of tasks other than the idle task
perf_samples() { awk '/^[^ \t]/ && $NF != 0 { n++ } END { print n + 0 }' "$1"; }
# fr_sample_ns PID: run time (ns) of the daemon's sampling program so far
fr_sample_ns() { bpf_prog_times "$1" | awk '$1 == "fr_sample" { s += $3 } END { print s + 0 }'; }

bpf_stats_on # for every mode: the machine is the same for all
declare -A wall cpu named frames nsamp cps bps share bpfps pyframes pysamples
modes="none flightrecd perf"
for m in $modes; do for w in $WORKLOADS; do : >"$T/depth.$m.$w"; done; done
for i in $(seq "$REPS"); do
	for m in $modes; do
		if [ "$m" = flightrecd ]; then
			start_flightrecd "$CONF"
			sleep "$SETTLE" # start-up work (kernel symbols, keyframe) out of the way
		fi
		for w in $WORKLOADS; do
			k="$m,$w"
			case $m in
			flightrecd)
				st0=$(frstatus); c0=$(cpu_of "$TOOL"); b0=$(fr_sample_ns "$TOOL") ;;
			perf)
				rm -f "$T/perf.data"
				u0=$(usage_s "$CG_PERF")
				# (sh execs perf: $! is perf, which stop_tool interrupts)
				sh -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' sh "$CG_PERF" \
					perf record -q --call-graph "$PERF_CALLGRAPH" -F 49 -a -o "$T/perf.data" >/dev/null 2>"$T/perf.log" &
				TOOL=$!
				sleep 1 ;; # no readiness signal: set up well within a second
			esac
			read -r wt wc <<<"$(run_wl "$w")"
			wall[$k]+="$wt " cpu[$k]+="$wc "
			pid=$(cat "$T/wl.pid")
			case $m in
			flightrecd)
				sleep "$SETTLE"
				kill -0 "$TOOL" 2>/dev/null || {
					rc=0; wait "$TOOL" || rc=$?; TOOL=
					echo "flightrecd exited (status $rc) during the $w run; its log:" >&2
					tail -20 "$T/daemon.log" >&2
					exit 1
				}
				st1=$(frstatus); c1=$(cpu_of "$TOOL"); b1=$(fr_sample_ns "$TOOL")
				s=$(jq -n --argjson a "$st0" --argjson b "$st1" '$b.sources.sample.records - $a.sources.sample.records')
				by=$(jq -n --argjson a "$st0" --argjson b "$st1" '$b.store.bytes_written - $a.store.bytes_written')
				share[$w]+="$(jq -n --argjson a "$st0" --argjson b "$st1" \
					'100 * ($b.sources.sample.records - $a.sources.sample.records) / ([$b.records - $a.records, 1] | max) | floor') "
				ours_stacks "$pid" >"$T/stacks" ;;
			perf)
				stop_tool
				in_cg "$CG_PERF" /dev/null perf script -i "$T/perf.data" -F comm,pid,ip,sym,dso \
					>"$T/perf.txt" 2>"$T/perf-script.log"
				u1=$(usage_s "$CG_PERF")
				s=$(perf_samples "$T/perf.txt")
				by=$(stat -c %s "$T/perf.data")
				perf_stacks "$T/perf.txt" "$pid" >"$T/stacks" ;;
			esac
			[ "$m" = none ] && continue
			if [ -n "${FR_BENCH_DEBUG:-}" ]; then
				mkdir -p "$FR_BENCH_DEBUG"
				cp "$T/stacks" "$FR_BENCH_DEBUG/stacks.$m.$w.$i"
				[ "$m" = perf ] && cp "$T/perf.txt" "$FR_BENCH_DEBUG/perf-script.$w.$i.txt"
				[ "$m" = flightrecd ] && "$FRCTL" --store "$T/store" dump --last 10m --pid "$pid" --type sample \
					--format json >"$FR_BENCH_DEBUG/samples.$w.$i.json"
			fi
			if [ "$m" = flightrecd ]; then
				c=$(calc "($c1 - $c0) + ($b1 - $b0) / 1e9")
				bpfps[$w]+="$([ "$s" -gt 0 ] && calc "($b1 - $b0) / 1e3 / $s" || echo 0) "
			else
				c=$(calc "$u1 - $u0")
			fi
			nsamp[$k]+="$(wc -l <"$T/stacks") "
			awk '{ print $1 }' "$T/stacks" >>"$T/depth.$m.$w"
			read -r f n pf ps <<<"$(awk '{ f += $1; n += $2; p += $3; s += ($3 > 0) } END { print f + 0, n + 0, p + 0, s + 0 }' "$T/stacks")"
			frames[$k]=$((${frames[$k]:-0} + f)) named[$k]=$((${named[$k]:-0} + n))
			pyframes[$k]=$((${pyframes[$k]:-0} + pf)) pysamples[$k]=$((${pysamples[$k]:-0} + ps))
			cps[$k]+="$([ "$s" -gt 0 ] && calc "1e6 * $c / $s" || echo 0) "
			bps[$k]+="$([ "$s" -gt 0 ] && calc "$by / $s" || echo 0) "
		done
		[ "$m" = flightrecd ] && stop_tool
	done
done
bpf_stats_off

machine
echo "workloads: python3 loop x$PY_N, xz -6 of $XZ_MIB MiB, gzip -6 of $GZ_N x 8 MiB, fr-deep rounds $DEEP_N;" \
	"$REPS alternating runs per mode; perf --call-graph $PERF_CALLGRAPH"
printf '%-8s %-10s %8s %6s %7s %13s %13s %9s %9s\n' workload recorder samples depth "named%" "CPU us/sample" \
	"bytes/sample" "CPU slow" "wall slow"
declare -A out
for w in $WORKLOADS; do
	cb=$(med "${cpu[none,$w]}") wb=$(med "${wall[none,$w]}")
	printf '%-8s %-10s %8s %6s %7s %13s %13s %9s %9s\n' "$w" none - - - - - "${cb}s" "${wb}s"
	for m in flightrecd perf; do
		k="$m,$w"
		d=$(median <"$T/depth.$m.$w")
		np=$(calc "${frames[$k]:-0} > 0 ? 100 * ${named[$k]:-0} / ${frames[$k]} : 0")
		cs=$(med "${cps[$k]}") bs=$(med "${bps[$k]}")
		sc=$(calc "100 * ($(med "${cpu[$k]}") - $cb) / $cb") sw=$(calc "100 * ($(med "${wall[$k]}") - $wb) / $wb")
		printf '%-8s %-10s %8s %6s %7.1f %13.1f %13.0f %8.2f%% %8.2f%%\n' "$w" "$m" "$(med "${nsamp[$k]}")" "${d:-0}" \
			"$np" "$cs" "$bs" "$sc" "$sw"
		out[$k,depth]=${d:-0} out[$k,named]=$np out[$k,cps]=$cs out[$k,bps]=$bs out[$k,slow]=$sc out[$k,wslow]=$sw
	done
done
echo "(samples: the workload's, median per run; CPU and bytes per sample: over every non-idle sample of the run)"
echo "flightrecd: its fr_sample BPF program's CPU per sample, us: python3 (with Python frames) $(med "${bpfps[python3]}")," \
	"xz $(med "${bpfps[xz]}"), gzip $(med "${bpfps[gzip]}"), fr-deep $(med "${bpfps[fr-deep]}") (native only)"
k=flightrecd,python3
echo "flightrecd: python3's Python frames: $(calc "${frames[$k]:-0} > 0 ? 100 * ${pyframes[$k]:-0} / ${frames[$k]} : 0") % of its user frames;" \
	"samples with Python frames: ${pysamples[$k]:-0} of $(awk '{ n += $1 } END { print n + 0 }' <<<"$(tr ' ' '\n' <<<"${nsamp[$k]}")")"
echo "flightrecd: sample records were $(med "${share[python3]} ${share[xz]} ${share[gzip]} ${share[fr-deep]}") % of the records written;" \
	"its fr_sample BPF program took $(med "${bpfps[python3]} ${bpfps[xz]} ${bpfps[gzip]} ${bpfps[fr-deep]}") us of the CPU per sample"

ratio() { [ "$(calc "$2 > 0")" = 1 ] && calc "$1 / $2" || echo null; }
for w in $WORKLOADS; do
	f="flightrecd,$w" p="perf,$w"
	extra=$(jq -cn --arg w "$w" --arg cg "$PERF_CALLGRAPH" --arg fw "${wall[$f]}" --arg pw "${wall[$p]}" \
		--arg nw "${wall[none,$w]}" --arg fc "${cpu[$f]}" --arg pc "${cpu[$p]}" --arg nc "${cpu[none,$w]}" \
		'{workload: $w, perf_callgraph: $cg, wall_s_runs: {none: $nw, flightrecd: $fw, perf: $pw},
		  cpu_s_runs: {none: $nc, flightrecd: $fc, perf: $pc}}')
	result "stacks $w: median user-stack depth" "frames" "${out[$f,depth]}" "${out[$p,depth]}" \
		"perf record --call-graph $PERF_CALLGRAPH + perf script" "$(ratio "${out[$f,depth]}" "${out[$p,depth]}")" "-" null "$extra"
	result "stacks $w: user frames named" "%" "${out[$f,named]}" "${out[$p,named]}" \
		"perf script" "$(ratio "${out[$f,named]}" "${out[$p,named]}")" "-" null \
		"$(jq -cn --argjson pf "${pyframes[$f]:-0}" --argjson fr "${frames[$f]:-0}" --argjson ps "${pysamples[$f]:-0}" \
			'{python_frames: $pf, frames: $fr, samples_with_python_frames: $ps}')"
	result "stacks $w: CPU per sample recorded, unwound and named" "us CPU per sample" "${out[$f,cps]}" "${out[$p,cps]}" \
		"perf record + perf script" "$(ratio "${out[$f,cps]}" "${out[$p,cps]}")" "-" null \
		"$(jq -cn --arg b "${bpfps[$w]}" --arg f "${cps[$f]}" --arg p "${cps[$p]}" \
			'{flightrecd_bpf_us_per_sample_runs: $b, flightrecd_us_per_sample_runs: $f, perf_us_per_sample_runs: $p}')"
	result "stacks $w: bytes kept per sample" "bytes per sample" "${out[$f,bps]}" "${out[$p,bps]}" \
		"perf.data" "$(ratio "${out[$f,bps]}" "${out[$p,bps]}")" "-" null \
		"$(jq -cn --arg s "${share[$w]}" '{flightrecd_sample_record_percent_runs: $s}')"
	result "stacks $w: slowdown (CPU time)" "% slower" "${out[$f,slow]}" "${out[$p,slow]}" \
		"perf record --call-graph $PERF_CALLGRAPH -F 49 -a" "$(ratio "${out[$f,slow]}" "${out[$p,slow]}")" "-" null \
		"$(jq -cn --arg a "${out[$f,wslow]}" --arg b "${out[$p,wslow]}" '{wall_slowdown_percent: {flightrecd: $a, perf: $b}}')"
done
