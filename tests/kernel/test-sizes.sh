#!/bin/bash
# frctl dump --sizes on a real recording (CPU samples with their symbol and
# mapping descriptions, process events, scheduler records, metrics):
#   - every record of the store is counted once, under its type: the
#     counts of the printed types are what dump prints, and all of them
#     add up to the store's records (frctl status);
#   - the bytes add up: the types' raw bytes are the chunks' raw sizes,
#     and the types' and the streams' estimated disk bytes are the
#     chunks' payloads (to rounding);
#   - a window counts only the chunks it overlaps;
#   - bad combinations are refused with one line and exit status 2.
BUILD=$1 # lib.sh
HELPERS=$2
. "$(dirname "$0")/lib.sh"

cat >"$T/fr.conf" <<CONF
store = { size = "32M"; segments = 4; sync_interval = "200ms"; };
sources = {
  sched = { full = true; };
  sample = { enabled = true; hz = 199; };
};
metrics = { interval = "200ms"; };
CONF
start_daemon "$T/fr.conf"
"$HELPERS/fr-spin" 1 >/dev/null
for _ in 1 2 3 4 5; do sh -c 'true' ; done
sleep 0.5
stop_daemon

"$FRCTL" --store "$T/store" dump --sizes --format json >"$T/sizes.json" || fail "dump --sizes --format json failed"
"$FRCTL" --store "$T/store" dump --format json >"$T/all.json" || fail "dump failed"
# (the daemon is stopped: status says so with its exit status, and prints the store)
"$FRCTL" --store "$T/store" status --json >"$T/status.json" || true

# each printed type: as many as dump prints
jq -r .type "$T/all.json" | sort | uniq -c | awk '{ print $2, $1 }' >"$T/dumped.txt"
for t in sample switch fork exit metrics; do
	grep -q "^$t " "$T/dumped.txt" || fail "the recording has no $t records: $(tr '\n' ' ' <"$T/dumped.txt")"
done
while read -r type n; do
	got=$(jq --arg t "$type" '[.types[] | select(.type == $t) | .records] | add // 0' "$T/sizes.json")
	[ "$got" = "$n" ] || fail "--sizes counts $got $type records, dump prints $n"
done <"$T/dumped.txt"
# the descriptions are counted too: every record of the store, once
total=$(jq '[.types[].records] | add' "$T/sizes.json")
store_records=$(jq .store.records "$T/status.json")
[ "$total" = "$store_records" ] || fail "--sizes counts $total records, the store has $store_records"
[ "$(jq .records "$T/sizes.json")" = "$total" ] || fail "records is not the sum of the types'"
jq -e '[.types[] | select(.type == "symbol" or .type == "mapping")] | length == 2' "$T/sizes.json" >/dev/null ||
	fail "no symbol and mapping descriptions counted: $(jq -c '[.types[].type]' "$T/sizes.json")"
ok "every record counted once, under its type ($total)"

# bytes: raw exactly, the estimates to rounding (one byte per row)
jq -e '([.types[].raw_bytes] | add) == .raw_bytes and ([.streams[].raw_bytes] | add) == .raw_bytes' \
	"$T/sizes.json" >/dev/null || fail "raw bytes do not add up: $(jq -c '{raw_bytes, types: [.types[].raw_bytes], streams: [.streams[].raw_bytes]}' "$T/sizes.json")"
jq -e '(([.types[].disk_bytes] | add) - .payload_bytes | fabs) <= (.types | length)
	and (([.streams[].disk_bytes] | add) - .payload_bytes | fabs) <= (.streams | length)
	and all(.types[]; ((.disk_bytes_by_stream | add) - .disk_bytes | fabs) <= 16)
	and .stored_bytes > .payload_bytes and .payload_bytes > 0' "$T/sizes.json" >/dev/null ||
	fail "disk bytes do not add up to the payloads: $(jq -c 'del(.types, .streams)' "$T/sizes.json")"
ok "raw bytes add up exactly, estimated disk bytes to the payloads"

# the text: one line per type, largest first, and the note on estimates
"$FRCTL" --store "$T/store" dump --sizes >"$T/sizes.txt" || fail "dump --sizes failed"
grep -qE '^TYPE +RECORDS' "$T/sizes.txt" || fail "no type table: $(head -5 "$T/sizes.txt")"
grep -qE '^STREAM +RAW' "$T/sizes.txt" || fail "no stream table"
grep -qE '^sample +[0-9]+ ' "$T/sizes.txt" || fail "no sample line"
grep -q 'estimated' "$T/sizes.txt" || fail "the estimate is not said to be one"

# a window of nothing: none of the chunks
"$FRCTL" --store "$T/store" dump --sizes --format json --since 2001-01-01T00:00:00Z --until 2001-01-01T00:01:00Z \
	>"$T/none.json" || fail "dump --sizes of an empty window failed"
jq -e '.chunks == 0 and .records == 0 and (.types | length) == 0' "$T/none.json" >/dev/null ||
	fail "an empty window counted chunks: $(jq -c 'del(.types, .streams)' "$T/none.json")"
ok "a window outside the recording counts nothing"

for bad in "--format folded" "-o $T/x" "--stats" "--follow"; do
	rc=0
	# shellcheck disable=SC2086
	"$FRCTL" --store "$T/store" dump --sizes $bad >"$T/bad.out" 2>"$T/bad.err" || rc=$?
	[ "$rc" = 2 ] || fail "dump --sizes $bad: exit $rc, not 2"
	[ "$(wc -l <"$T/bad.err")" = 1 ] || fail "dump --sizes $bad: not one line: $(cat "$T/bad.err")"
	[ ! -s "$T/bad.out" ] || fail "dump --sizes $bad printed on stdout"
done
[ ! -e "$T/x" ] || fail "dump --sizes -o created the file"
ok "--sizes with --format folded, -o, --stats or --follow: one line, exit 2"
