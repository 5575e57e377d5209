#!/bin/bash
# Benchmark (not a test): the memory flightrecd holds with the shipped
# default configuration, on this machine's CPUs, after SETTLE seconds of a
# busy machine (perf bench sched messaging + stress-ng, so the rings, chunk
# builders, symbol caches and process tables fill as they would):
#   RSS        VmRSS of the daemon (/proc/PID/status); it includes the
#              pages of the BPF rings mapped into it that were touched;
#              plus its parser helper's, flightrec-parse, which holds the
#              unwinding and symbol caches (shared library pages counted
#              in both: an upper bound)
#   BPF maps   the sum of memlock of the maps the daemon holds, each map
#              once (/proc/PID/fdinfo of its map fds: what bpftool map show
#              prints as bytes_memlock; the per-CPU rings, the ring array,
#              task storage, config maps, ...), rings listed apart
# Total = RSS + BPF maps (the rings are partly counted twice: an upper
# bound).  REPS daemon starts, medians.  Next to it, for scale, perf record
# -a -g -F 49's RSS + its mmap ring (perf_event_mlock_kb per CPU).
# Peak: VmHWM of the daemon plus its parser's (each process's own high
# water mark, summed: an upper bound of what they held at once), + BPF
# maps: what a MemoryMax= must allow (issue 48), not only the steady state.
# And what the kernel charged: the daemon runs in a memory cgroup of its
# own, as under systemd, whose peak (memory.peak, or v1's
# memory.max_usage_in_bytes) counts its anonymous memory, BPF maps, kernel
# objects and the page cache it brought in (not the pages of programs'
# files it maps that were in the cache already: those are the programs').
# Target (issue 9): <= 64 MiB (the OpenTelemetry profiler states 250 MB).
# WORKLOAD=compile: instead of messaging, clean builds of this project
# (meson setup + ninja, a clone in the temporary directory) back to back
# for SETTLE seconds (150 by default): many short-lived large programs
# (cc1, as, ld), each unwound and named from its own files.
# With each run: the CPU the daemon and its parser used, and what their
# unwinding did (frctl status: stacks, complete, truncated, evictions):
# what a smaller cache costs; and the parser's resident memory looked at
# every 0.2 s (smaps_rollup), the highest seen of its anonymous part (its
# heap) and of its file part (the pages of the programs' files it maps,
# in the page cache already), which VmHWM sums without telling apart;
# and where that anonymous part was at its highest sample, by mapping
# (the heap, unnamed mappings: malloc's large blocks and arenas, files'
# private pages).
# PEER=0: no perf runs.
#   tests/bench/memory.sh BUILD_DIR [REPS]     QUICK=1: 1 rep, 10 s
BUILD=${1:-build}
REPS=${2:-3}
. "$(dirname "$0")/lib.sh"
need_pkg perf linux-perf
need_pkg stress-ng stress-ng
WORKLOAD=${WORKLOAD:-messaging}
case $WORKLOAD in
messaging) DEFAULT_SETTLE=30 ;;
compile) DEFAULT_SETTLE=150; git clone -q "$(dirname "$0")/../.." "$T/src" ;;
*) echo "WORKLOAD must be messaging or compile, not '$WORKLOAD'" >&2; exit 2 ;;
esac
if [ "$QUICK" = 1 ]; then REPS=1 SETTLE=10; else SETTLE=${SETTLE:-$DEFAULT_SETTLE}; fi
CONF="$BUILD/../conf/flightrec.conf"

busy() {
	if [ "$WORKLOAD" = compile ]; then
		local end=$(($(date +%s) + SETTLE))
		while [ "$(date +%s)" -lt "$end" ]; do
			rm -rf "$T/src/b"
			(cd "$T/src" && meson setup b >/dev/null 2>&1 && timeout $((end - $(date +%s) + 1)) ninja -C b >/dev/null 2>&1) || true
		done
		rm -rf "$T/src/b"
		return
	fi
	stress-ng --cpu 1 --get 1 -t "$SETTLE" >/dev/null 2>&1 & BENCH_PIDS+=($!)
	local end=$(($(date +%s) + SETTLE))
	while [ "$(date +%s)" -lt "$end" ]; do perf bench sched messaging -g 4 -l 200 >/dev/null 2>&1; done
	wait "${BENCH_PIDS[@]}" 2>/dev/null || true
	BENCH_PIDS=()
}
# child_files FILE PID: /proc/CHILD/FILE of each child of PID (its parser), one a line
child_files() {
	cat /proc/"$2"/task/*/children 2>/dev/null | tr ' ' '\n' | sed -n "s|^[0-9][0-9]*\$|/proc/&/$1|p"
}
# the process's VmRSS and its children's (perf has none)
rss_kib() {
	local kids
	kids=$(child_files status "$1")
	# shellcheck disable=SC2086 # one path per child
	awk '/^VmRSS:/ { s += $2 } END { print s }' /proc/"$1"/status $kids
}
# hwm_kib PID: "TOTAL OWN CHILDREN" VmHWM (KiB): the process's high water
# mark of resident memory, its children's (the parser), and their sum
hwm_kib() {
	local kids own
	kids=$(child_files status "$1")
	own=$(awk '/^VmHWM:/ { print $2 }' /proc/"$1"/status)
	# shellcheck disable=SC2086 # one path per child
	awk -v o="$own" '/^VmHWM:/ { s += $2 } END { print o + s, o, s + 0 }' /dev/null $kids
}
# maps PID: "TOTAL_BYTES RING_BYTES RING_COUNT" of the maps PID holds
# (BPF_MAP_TYPE_RINGBUF is 27)
map_fdinfo() {
	local f
	for f in /proc/"$1"/fdinfo/*; do grep -q '^map_id:' "$f" 2>/dev/null && tr '\n' ' ' <"$f" && echo || true; done |
		awk '{ for (i = 1; i < NF; i++) v[$i] = $(i + 1); print v["map_id:"], v["map_type:"], v["memlock:"], v["max_entries:"] }' | sort -u
}
maps() {
	map_fdinfo "$1" | awk '{ t += $3 } $2 == 27 { r += $3; n++ } END { print t + 0, r + 0, n + 0 }'
}

# a memory cgroup for the daemon (CG: removed at exit by lib.sh), made
# anew each run so that its peak is the run's
if [ -d /sys/fs/cgroup/memory ]; then MCG=/sys/fs/cgroup/memory/fr-bench-mem-$$
else MCG=/sys/fs/cgroup/fr-bench-mem-$$; fi
# proc_cpu_s PID: CPU seconds (user + system) of PID and its children
proc_cpu_s() {
	local kids
	kids=$(child_files stat "$1")
	# shellcheck disable=SC2086 # one path per child
	cat /proc/"$1"/stat $kids | sed 's/.*) //' | awk -v hz="$(getconf CLK_TCK)" '{ s += $12 + $13 } END { printf "%.2f", s / hz }'
}
# "PEAK ANON FILE" (KiB) of the cgroup: its peak, and now its anonymous
# memory and page cache
cg_mem_kib() {
	if [ -f "$MCG/memory.peak" ]; then
		awk -v p="$(cat "$MCG/memory.peak")" '$1 == "anon" { a = $2 } $1 == "file" { f = $2 }
			END { printf "%d %d %d\n", p / 1024, a / 1024, f / 1024 }' "$MCG/memory.stat"
	else
		awk -v p="$(cat "$MCG/memory.max_usage_in_bytes")" '$1 == "total_rss" { a = $2 } $1 == "total_cache" { f = $2 }
			END { printf "%d %d %d\n", p / 1024, a / 1024, f / 1024 }' "$MCG/memory.stat"
	fi
}

# parser_watch PID: until killed (or this script gone), the highest "RSS
# ANON FILE" (KiB) of PID's children seen every 0.2 s, into $T/parser-rss
parser_watch() {
	local mr=0 ma=0 mf=0 r a
	while sleep 0.2 && kill -0 $$ 2>/dev/null; do
		for c in $(child_files smaps_rollup "$1"); do
			read -r r a < <(awk '/^Rss:/ { r = $2 } /^Anonymous:/ { a = $2 } END { print r + 0, a + 0 }' "$c" 2>/dev/null)
			[ "${r:-0}" -gt "$mr" ] && mr=$r
			# where the anonymous memory is at its highest: the
			# whole smaps, summed by mapping at the end
			[ "${a:-0}" -gt "$ma" ] && ma=$a && cp "${c%_rollup}" "$T/parser-smaps-peak" 2>/dev/null
			[ $((${r:-0} - ${a:-0})) -gt "$mf" ] && mf=$((r - a))
		done
		echo "$mr $ma $mf" >"$T/parser-rss"
	done
}

declare -A rss bpf rings hwm
# the store's bytes written a second while busy, each run (the compile
# loop's retention row), and the bound store.size "auto" came to
wrate=
bound=
for i in $(seq "$REPS"); do
	mkdir "$MCG"
	CG=$MCG
	start_flightrecd "$CONF" "$MCG"
	echo "0 0 0" >"$T/parser-rss"
	parser_watch "$TOOL" & watch=$!
	w0=$(frstatus | jq .store.bytes_written); t0=$(now)
	busy
	read -r w1 bound < <(frstatus | jq -r '"\(.store.bytes_written) \(.store.bytes_bound)"'); t1=$(now)
	wrate+="$(calc "($w1 - $w0) / ($t1 - $t0)") "
	kill "$watch" 2>/dev/null; wait "$watch" 2>/dev/null || true
	read -r pr pa pf <"$T/parser-rss"
	p_rss+="$(calc "$pr / 1024") "; p_anon+="$(calc "$pa / 1024") "; p_file+="$(calc "$pf / 1024") "
	r=$(rss_kib "$TOOL"); read -r b rb rn < <(maps "$TOOL")
	read -r h ho hc < <(hwm_kib "$TOOL")
	hwm[flightrecd]+="$(calc "$h / 1024") "; hwm_own+="$(calc "$ho / 1024") "; hwm_parser+="$(calc "$hc / 1024") "
	read -r cp ca cf < <(cg_mem_kib)
	cg_peak+="$(calc "$cp / 1024") "; cg_anon+="$(calc "$ca / 1024") "; cg_file+="$(calc "$cf / 1024") "
	cpu_s+="$(proc_cpu_s "$TOOL") "
	"$BUILD/ctl/frctl" --config "$CONF" --store "$T/store" --socket "$T/control.sock" status --json |
		jq -c '{unwind: (.sampler.unwind | {stacks, complete, truncated, failed, evicted, heap_trims}),
			symbols: (.sampler.symbols | {cache_bytes, cached_files, user_named, user_module_only}),
			parser: (.sampler.parser | {stacks, over_budget, skipped, starts, crashes, timeouts, bad_replies})}' >>"$T/unwind.txt"
	map_fdinfo "$TOOL" | awk '{ n[$2]++; b[$2] += $3 } END { for (t in n) printf "  map type %s: %d maps, %.1f KiB\n", t, n[t], b[t] / 1024 }' >"$T/maps.txt"
	stop_tool
	# (its parser exits after it)
	for _ in $(seq 50); do rmdir "$MCG" 2>/dev/null && break; sleep 0.1; done
	[ ! -d "$MCG" ] || { echo "cannot remove $MCG" >&2; exit 1; }
	CG=
	rss[flightrecd]+="$(calc "$r / 1024") "; bpf[flightrecd]+="$(calc "$b / 1048576") "
	rings[flightrecd]+="$(calc "$rb / 1048576") "
	[ "${PEER:-1}" = 1 ] || continue
	start_perf -a -g -F 49 -o "$T/perf.data"
	busy
	r=$(rss_kib "$TOOL")
	read -r h ho hc < <(hwm_kib "$TOOL")
	hwm[perf]+="$(calc "$h / 1024") "
	stop_tool
	rm -f "$T/perf.data"
	# perf's ring: perf_event_mlock_kb per CPU (what it maps by default)
	mm=$(calc "$(sysctl -n kernel.perf_event_mlock_kb) * $(nproc) / 1024")
	rss[perf]+="$(calc "$r / 1024") "; bpf[perf]+="$mm "; rings[perf]+="$mm "
done

machine
if [ "$WORKLOAD" = compile ]; then what="clean builds of this project back to back (meson setup + ninja)"
else what="perf bench sched messaging + stress-ng"; fi
echo "default configuration, $(nproc) CPUs, after ${SETTLE}s of $what; $REPS runs, medians (MiB)"
printf '%-11s %8s %14s %10s %8s %8s %10s\n' tool RSS "BPF maps/ring" "of which rings" total "VmHWM" "peak"
TOOLS=flightrecd
[ "${PEER:-1}" = 1 ] && TOOLS="flightrecd perf"
for t in $TOOLS; do
	printf '%-11s %8.1f %14.1f %10.1f %8.1f %8.1f %10.1f   RSS runs %s, VmHWM runs %s\n' "$t" "$(med "${rss[$t]}")" "$(med "${bpf[$t]}")" \
		"$(med "${rings[$t]}")" "$(calc "$(med "${rss[$t]}") + $(med "${bpf[$t]}")")" "$(med "${hwm[$t]}")" \
		"$(calc "$(med "${hwm[$t]}") + $(med "${bpf[$t]}")")" "${rss[$t]}" "${hwm[$t]}"
done
echo "flightrecd's VmHWM: the daemon $(med "$hwm_own") MiB (runs $hwm_own), its parser $(med "$hwm_parser") MiB (runs $hwm_parser)"
echo "its parser every 0.2 s, highest seen: RSS $(med "$p_rss") MiB (runs $p_rss), anonymous $(med "$p_anon") (runs $p_anon), files $(med "$p_file") (runs $p_file)"
peak=$(calc "$(med "${hwm[flightrecd]}") + $(med "${bpf[flightrecd]}")")
if [ -s "$T/parser-smaps-peak" ]; then
	# by mapping: the heap ([heap]), malloc's own mappings and other
	# anonymous ones (unnamed), files' private pages (by path)
	echo "its parser's anonymous memory at its highest (last run), by mapping, KiB:"
	awk '/^[0-9a-f]+-[0-9a-f]+ / { name = NF >= 6 ? $6 : "(unnamed)"; if (name == "(unnamed)") n_unnamed++ }
		/^Anonymous:/ { anon[name] += $2 } END { for (k in anon) if (anon[k] > 0) printf "  %8d %s%s\n", anon[k], k,
		k == "(unnamed)" ? " (" n_unnamed " mappings)" : "" }' "$T/parser-smaps-peak" | sort -rn | head -8
fi
echo "flightrecd at its peak (VmHWM of both processes + BPF maps): $peak MiB (target <= 64 MiB: $(le "$peak" 64))"
echo "flightrecd's CPU (daemon and parser): $(med "$cpu_s") s (runs $cpu_s); its unwinding, each run:"
cat "$T/unwind.txt"
echo "flightrecd's memory cgroup: peak $(med "$cg_peak") MiB (runs $cg_peak); at the end anonymous $(med "$cg_anon") MiB, page cache $(med "$cg_file") MiB"
echo "flightrecd's maps (last run):"; cat "$T/maps.txt"
rate=$(med "$wrate")
printf 'the store written while busy: %.0f bytes/s (runs %s): the shipped store (%s bytes here) holds %.1f hours, 256 MiB %.1f (EXTRAPOLATED)\n' \
	"$rate" "$wrate" "$bound" "$(calc "$bound / $rate / 3600")" "$(calc "268435456 / $rate / 3600")"
tot=$(calc "$(med "${rss[flightrecd]}") + $(med "${bpf[flightrecd]}")")
ptot=null
[ "${PEER:-1}" = 1 ] && ptot=$(calc "$(med "${rss[perf]}") + $(med "${bpf[perf]}")")
met=$(le "$tot" 64)
echo "flightrecd: ${tot} MiB (target <= 64 MiB: $met); perf record -a -g -F 49: ${ptot} MiB"
rss_name="daemon RSS + BPF map memory, default config"
[ "$WORKLOAD" = messaging ] || rss_name+=", $WORKLOAD"
result "$rss_name" "MiB" "$tot" 64 "target 64 MiB (OTel profiler states 250 MB)" \
	"$(calc "$tot / 64")" "<= 64 MiB" "$met" "$(jq -cn --argjson r "$(med "${rss[flightrecd]}")" --argjson b "$(med "${bpf[flightrecd]}")" \
	--argjson rg "$(med "${rings[flightrecd]}")" --argjson p "$ptot" --arg runs "${rss[flightrecd]}" \
	'{rss_mib: $r, bpf_maps_mib: $b, rings_mib: $rg, perf_record_mib: $p, rss_runs_mib: $runs}')"
result "daemon peak (VmHWM of daemon and parser) + BPF map memory, default config, $WORKLOAD" "MiB" "$peak" 64 \
	"target 64 MiB" "$(calc "$peak / 64")" "<= 64 MiB" "$(le "$peak" 64)" \
	"$(jq -cn --arg own "$hwm_own" --arg parser "$hwm_parser" --arg w "$WORKLOAD" --argjson s "$SETTLE" \
		--arg cgp "$cg_peak" --arg cga "$cg_anon" --arg cgf "$cg_file" \
		--arg pr "$p_rss" --arg pa "$p_anon" --arg pf "$p_file" \
		'{workload: $w, settle_s: $s, daemon_hwm_runs_mib: $own, parser_hwm_runs_mib: $parser,
		  cgroup_peak_runs_mib: $cgp, cgroup_anon_runs_mib: $cga, cgroup_file_runs_mib: $cgf,
		  parser_rss_max_runs_mib: $pr, parser_anon_max_runs_mib: $pa, parser_file_max_runs_mib: $pf}')"
# the compile loop is the issue's second busy workload for retention
# (the first is retention.sh's messaging loop)
if [ "$WORKLOAD" = compile ]; then
	h=$(calc "$bound / $rate / 3600")
	result "retention of the shipped store (store.size \"auto\"), shipped config, compile loop (extrapolated)" "hours" "$h" null \
		"-" null ">= 24 h" "$(ge "$h" 24)" \
		"$(jq -cn --argjson r "$rate" --arg runs "$wrate" --argjson b "$bound" --argjson s "$SETTLE" \
			'{bytes_per_s: $r, bytes_per_s_runs: $runs, bytes_bound: $b, measured_s: $s, extrapolated: true,
			  hours_256mib: (268435456 / $r / 3600)}')"
fi
