#!/bin/bash
# Source line coverage of the fuzz corpora (issue 49): each target's
# committed corpus (tests/fuzz/corpus/TARGET) replayed once through a build
# instrumented for coverage, and llvm-cov's count of the lines run in the
# files that target is for (the parsers it fuzzes, not the whole library
# it links).  libFuzzer's own "cov:" counts edges of everything linked;
# this says which of the reader's lines no input reaches.
#   tests/bench/fuzz-coverage.sh [COVERAGE_BUILD_DIR] [TARGET...]
# The build is made if missing (clang; llvm-cov and llvm-profdata come
# with Debian's llvm package):
#   CC=clang meson setup -Dfuzzing=true -Dfuzz_coverage=true build-fuzzcov
# FILES=1 prints the per-file rows too.
set -uo pipefail
cd "$(dirname "$0")/../.."
SRC=$PWD
BUILD=${1:-build-fuzzcov}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(segment records incident conf control)
for tool in clang llvm-cov llvm-profdata jq; do
	command -v "$tool" >/dev/null || { echo "fuzz-coverage: $tool is missing (apt-get install clang llvm jq)" >&2; exit 1; }
done
[ -d "$BUILD" ] || CC=clang meson setup -Dfuzzing=true -Dfuzz_coverage=true "$BUILD" >/dev/null || exit 1
BUILD=$(readlink -f "$BUILD")
ninja -C "$BUILD" $(printf 'tests/fuzz/fuzz-%s ' "${TARGETS[@]}") >/dev/null || exit 1

# What each target is for: the files whose lines count
files_for() {
	case $1 in
	segment) echo lib/segment-walk.c lib/store-reader.c lib/chunk.c lib/window*.c lib/record-codec.c ;;
	records) echo lib/record-codec.c lib/record-fields.c lib/symtab.c ;;
	incident) echo lib/incident.c lib/incident-header.c lib/redact.c lib/record-json.c ctl/dump*.c ctl/output-*.c ctl/report*.c ctl/redact-source.c ctl/source-host.c ;;
	conf) echo lib/conf.c lib/conf-error.c lib/rules.c lib/conditions.c lib/parse.c ;;
	control) echo lib/control-request.c ;;
	esac
}

unset DEBUGINFOD_URLS
echo "fuzz-coverage: commit $(git rev-parse --short HEAD), $(llvm-cov --version | sed -n 's/.*LLVM version *//p' | head -1)"
for t in "${TARGETS[@]}"; do
	work=$(mktemp -d /tmp/fr-fuzz-cov-XXXXXX)
	export FR_FUZZ_SCRATCH=$work/scratch
	mkdir -p "$FR_FUZZ_SCRATCH"
	extra=()
	[ "$t" = incident ] && extra+=(-close_fd_mask=3)
	# every input once, no mutation; -runs=0 after the corpus pass
	LLVM_PROFILE_FILE="$work/%p.profraw" "$BUILD/tests/fuzz/fuzz-$t" -runs=0 "${extra[@]}" \
		"$SRC/tests/fuzz/corpus/$t" >"$work/log" 2>&1
	rc=$?
	llvm-profdata merge -sparse "$work"/*.profraw -o "$work/merged.profdata" || rc=1
	llvm-cov export -summary-only -instr-profile="$work/merged.profdata" "$BUILD/tests/fuzz/fuzz-$t" >"$work/cov.json" || rc=1
	# the mapping names files as the compiler saw them (BUILD/../lib/x.c)
	want=$(cd "$SRC" && for f in $(files_for "$t"); do echo "$f"; done | jq -R . | jq -sc .)
	jq -r --arg t "$t" --arg n "$(ls "$SRC/tests/fuzz/corpus/$t" | wc -l)" --argjson want "$want" --arg files "${FILES:-0}" '
		def pct(c; n): if n > 0 then (c * 1000 / n | round / 10) else 0 end;
		[.data[0].files[] | .name = (.filename | sub("^.*?/\\.\\./"; "")) | select(.name as $f | $want | index($f))] as $fs
		| ([$fs[].summary.lines.covered] | add) as $lc | ([$fs[].summary.lines.count] | add) as $ln
		| ([$fs[].summary.branches.covered] | add) as $bc | ([$fs[].summary.branches.count] | add) as $bn
		| ([$fs[].summary.functions.covered] | add) as $fc | ([$fs[].summary.functions.count] | add) as $fn
		| "fuzz-\($t): \($n) inputs; in its \($fs | length) files: lines \($lc) of \($ln) (\(pct($lc; $ln)) %), branches \($bc) of \($bn) (\(pct($bc; $bn)) %), functions \($fc) of \($fn)",
		  (if $files == "1" then $fs[] | "  \(.name): lines \(.summary.lines.covered)/\(.summary.lines.count) (\(pct(.summary.lines.covered; .summary.lines.count)) %)" else empty end)' \
		"$work/cov.json" || rc=1
	[ "$rc" -eq 0 ] || echo "  (exit $rc; log: $(tail -2 "$work/log" | tr '\n' ' '))"
	rm -rf "$work"
done
