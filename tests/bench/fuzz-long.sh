#!/bin/bash
# The long fuzzing run (issue 49): each libFuzzer target of tests/fuzz for
# FUZZ_RUNS executions (10 M by default; CI runs each for 30 s), or at
# most FUZZ_MAX_S seconds, on a copy of its committed corpus, minimized
# back into the tree with -merge=1 when FUZZ_GROW=1 (so that the corpora
# grow from what the runs found).  Prints per target: executions, rate,
# coverage (libFuzzer's cov: and ft:), corpus size, and any finding with
# its input in base64.  fuzz-conf runs with -detect_leaks=0: libconfig
# leaks on every syntax error (suppressed, tests/sanitizers), and each of
# those made LeakSanitizer scan the whole heap, 24 executions a second
# instead of ~3000.  Every target's final corpus then runs once more in
# one process with leak detection on (the "leak pass"), so a leak on any
# path the run kept is still found.  FUZZ_FORK=N: N worker processes
# (libFuzzer's -fork=N, its parent merging what they find), the
# executions counted over all of them: a machine's CPUs on one target
# (fuzz-segment here: 2,159/s with 2, against 819/s alone; its cov: is
# the parent's count, not comparable with a single process's).
# FUZZ_MAX_LEN=N: inputs cut to N bytes (libFuzzer's -max_len; by default
# the corpus's largest): fuzz-incident's real seeds are ~55 KB and run at
# ~180/s in one process, 10 M of them ~7 h of the machine; at 8 KiB,
# ~1,400/s in one process, ~2,300/s with FUZZ_FORK=2 (10 M in 74 min,
# 2026-12-05: the files' headers, metadata and first chunks; what lies
# past 8 KiB is reached by a whole-size run of its own).
# Needs the fuzz build:
#   CC=clang meson setup -Dfuzzing=true build-fuzz && ninja -C build-fuzz
#   tests/bench/fuzz-long.sh [FUZZ_BUILD_DIR] [TARGET...]
set -uo pipefail
cd "$(dirname "$0")/../.."
SRC=$PWD
BUILD=$(readlink -f "${1:-build-fuzz}")
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(segment records incident conf control)
RUNS=${FUZZ_RUNS:-10000000}
MAX_S=${FUZZ_MAX_S:-14400}
unset DEBUGINFOD_URLS
export LSAN_OPTIONS="suppressions=$SRC/tests/sanitizers/lsan-libconfig.supp"
echo "fuzz-long: $RUNS executions or ${MAX_S}s per target${FUZZ_FORK:+, $FUZZ_FORK workers}${FUZZ_MAX_LEN:+, inputs cut to $FUZZ_MAX_LEN bytes}; commit $(git rev-parse --short HEAD), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
rc=0
work='' FR_FUZZ_SCRATCH=''
trap 'rm -rf "$work" "$FR_FUZZ_SCRATCH"' EXIT
for t in "${TARGETS[@]}"; do
	work=$(mktemp -d /tmp/fr-fuzz-long-XXXXXX)
	# the inputs the targets write and read back go to tmpfs, as in CI
	# (run-fuzzer.sh): on ext4 each execution's open, truncate and
	# close were ~13 % of fuzz-segment's time (perf, 2026-12-05)
	FR_FUZZ_SCRATCH=$(mktemp -d /dev/shm/fr-fuzz-long-XXXXXX)
	export FR_FUZZ_SCRATCH
	mkdir -p "$work/corpus"
	cp -r "$SRC/tests/fuzz/corpus/$t/." "$work/corpus/"
	extra=()
	[ "$t" = incident ] && extra+=(-close_fd_mask=3)
	leaks=()
	[ "$t" = conf ] && leaks+=(-detect_leaks=0 -close_fd_mask=2)
	long=() # the long run's own options (not the leak pass's)
	[ "${FUZZ_FORK:-0}" -gt 0 ] && long+=(-fork="$FUZZ_FORK")
	[ -n "${FUZZ_MAX_LEN:-}" ] && long+=(-max_len="$FUZZ_MAX_LEN")
	t0=$(date +%s)
	(cd "$work" && "$BUILD/tests/fuzz/fuzz-$t" -runs="$RUNS" -max_total_time="$MAX_S" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 "${extra[@]}" "${leaks[@]}" "${long[@]}" corpus >log 2>&1)
	frc=$?
	s=$(($(date +%s) - t0))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
	# -fork's parent prints no final stats: its last "#N:" line counts
	# every worker's executions
	[ -n "$execs" ] || execs=$(sed -n 's/^#\([0-9][0-9]*\): .*/\1/p' "$work/log" | tail -1)
	cov=$(grep -E '^#[0-9]+' "$work/log" | tail -1 | grep -o 'cov: [0-9]* ft: [0-9]*')
	echo "fuzz-$t: ${execs:-?} executions in ${s}s ($(( ${execs:-0} / (s > 0 ? s : 1) ))/s), $cov, corpus $(ls "$work/corpus" | wc -l) files, exit $frc"
	# the leak pass: every input of the final corpus once, leaks on
	lrc=0
	(cd "$work" && find corpus -type f -print0 | xargs -0 "$BUILD/tests/fuzz/fuzz-$t" -detect_leaks=1 "${extra[@]}" >leaks.log 2>&1) || lrc=$?
	echo "  leak pass over $(ls "$work/corpus" | wc -l) inputs: exit $lrc"
	if [ "$lrc" -ne 0 ]; then
		rc=1
		sed -n '/ERROR\|runtime error/,/SUMMARY/p' "$work/leaks.log" | head -30 | sed 's/^/  /'
	fi
	for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
		[ -e "$f" ] || continue
		rc=1
		echo "  finding $(basename "$f") ($(stat -c %s "$f") bytes), base64: $(base64 -w0 "$f")"
		sed -n '/ERROR\|runtime error/,/SUMMARY/p' "$work/log" | head -20 | sed 's/^/  /'
	done
	# (72: stopped by SIGINT; what it found so far is kept all the same)
	if [ "${FUZZ_GROW:-0}" = 1 ] && { [ "$frc" -eq 0 ] || [ "$frc" -eq 72 ]; }; then
		mkdir -p "$work/min"
		(cd "$work" && "$BUILD/tests/fuzz/fuzz-$t" -merge=1 "${extra[@]}" min "$SRC/tests/fuzz/corpus/$t" corpus >merge.log 2>&1)
		# libFuzzer names what it keeps by the SHA-1 of its bytes: the
		# inputs the tree already holds (under any name) are not copied
		have=$(sha1sum "$SRC/tests/fuzz/corpus/$t"/* | cut -d' ' -f1)
		n=0
		for f in "$work"/min/*; do
			[ -e "$f" ] || continue
			grep -qx "$(basename "$f")" <<<"$have" && continue
			# incidents grow from the ~45 KB real seeds: a run keeps
			# tens of MB of them; the tree takes the small ones
			[ "$t" = incident ] && [ "$(stat -c %s "$f")" -gt 8192 ] && continue
			cp -n "$f" "$SRC/tests/fuzz/corpus/$t/" && n=$((n + 1))
		done
		echo "  corpus grown by $n inputs"
	fi
	rm -rf "$work" "$FR_FUZZ_SCRATCH"
done
exit $rc
