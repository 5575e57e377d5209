#!/bin/bash
# The EXAMPLES of frctl(1) and flightrecd(8) run as printed.
#
# The convention of the pages: in the EXAMPLES section, a line of an
# .EX/.EE block that begins with "$ " is a command; a line that follows one
# ending in "|" or "\" continues it; other lines of the block are output,
# not run.  This test takes those commands, in page order, and runs them in
# one bash (so that "id=$(...)" carries on to the next line) in a scratch
# directory, against a private daemon on a temporary store, with:
#   - "frctl" and "flightrecd" in command position replaced by the built
#     binaries, with --config $T/fr.conf and --store $T/store added (frctl:
#     after the verb's name, as global options; unless the example names a
#     --store or --config of its own); "frctl upload" also gets
#     --state $T/uploaded.json;
#   - upload.url of $T/fr.conf set to the PUT server of put-server.sh,
#     and prometheus.textfile to $T (not the system's node_exporter dir);
#   - flamegraph.pl, when not installed, a stand-in on PATH that reads its
#     input and writes an empty SVG (the example is about frctl's side);
#   - before the commands: a mark, some processes, and one incident made
#     with frctl freeze (the manual rule with a 2 s window), so that
#     incidents, --incident and upload have something to work on.
# A command that exits non-zero fails the test, with its output.
#   test-man-examples.sh BUILD_DIR
BUILD=$1
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/put-server.sh"
trap 'stop_server; cleanup' EXIT
MAN=$(dirname "$0")/../../man

start_server
cat >"$T/fr.conf" <<CONF
store = { size = "64M"; segments = 4; sync_interval = "200ms"; };
sources = {
  syscall = { enabled = true; threshold = "50ms"; };
  sample = { enabled = true; hz = 49; };
};
triggers = {
  rules = (
    { name = "manual"; condition = "manual"; before = "5s"; after = "1s"; }
  );
};
upload = { url = "http://127.0.0.1:$PORT/flightrec/"; };
prometheus = { textfile = "$T/flightrec.prom"; };
CONF
"$FLIGHTRECD" --check-config --config "$T/fr.conf" >/dev/null || fail "test configuration rejected"
start_daemon "$T/fr.conf"

# something to show: processes, a slow call, a mark; then an incident
for _ in 1 2 3; do /bin/true; done
sleep 0.3
"$FRCTL" --config "$T/fr.conf" --store "$T/store" mark "man examples test" >/dev/null || fail "mark failed"
wait_for_record '.type == "mark" and .text == "man examples test"'
"$FRCTL" --config "$T/fr.conf" --store "$T/store" freeze --reason "man examples test" >/dev/null || fail "freeze failed"
for _ in $(seq 100); do
	[ "$("$FRCTL" --store "$T/store" incidents --json | jq length)" -gt 0 ] && break
	sleep 0.1
done
[ "$("$FRCTL" --store "$T/store" incidents --json | jq length)" -gt 0 ] || fail "no incident within 10 s of frctl freeze"

mkdir -p "$T/bin" "$T/work"
if ! command -v flamegraph.pl >/dev/null; then
	printf '#!/bin/sh\ncat >/dev/null\necho "<svg/>"\n' >"$T/bin/flamegraph.pl"
	chmod +x "$T/bin/flamegraph.pl"
fi

# examples PAGE: the commands of PAGE's EXAMPLES, one a line (continuations joined)
examples() {
	/usr/bin/python3 - "$1" <<'PY'
import re, sys
lines = open(sys.argv[1], encoding='utf-8').read().split('\n')
inex = inblock = False
cmds = []
cont = False
for l in lines:
    if l.startswith('.SH '):
        inex = l.strip() == '.SH EXAMPLES'
        continue
    if not inex:
        continue
    if l.startswith('.EX'):
        inblock = True
        continue
    if l.startswith('.EE'):
        inblock = cont = False
        continue
    if not inblock:
        continue
    t = l.replace('\\-', '-').replace('\\(aq', "'").replace('\\(dq', '"').replace('\\e', '\\').replace('\\&', '')
    if cont:
        cmds[-1] += '\n' + t
    elif t.startswith('$ '):
        cmds.append(t[2:])
    else:
        continue
    cont = t.rstrip().endswith('|') or t.rstrip().endswith('\\')
for c in cmds:
    print(c.replace('\n', '\x01'))
PY
}

n=0
for page in "$MAN/frctl.1" "$MAN/flightrecd.8"; do
	script="$T/examples-$(basename "$page").sh"
	{
		echo 'set -o pipefail'
		echo "cd '$T/work'"
		echo "export PATH='$T/bin':\"\$PATH\""
	} >"$script"
	count=0
	while IFS= read -r cmd; do
		cmd=${cmd//$'\x01'/$'\n'}
		run=$(/usr/bin/python3 - "$cmd" "$FRCTL" "$FLIGHTRECD" "$T" <<'PY'
import re, sys
cmd, frctl, flightrecd, t = sys.argv[1:]
glob = '' if re.search(r'--(store|config)\b', cmd) else f" --config '{t}/fr.conf' --store '{t}/store'"
def fr(m):
    extra = glob
    verb = m.group(2)
    if verb == 'upload' and '--state' not in cmd:
        return f"{m.group(1)}'{frctl}'{extra} upload --state '{t}/uploaded.json'"
    return f"{m.group(1)}'{frctl}'{extra} {verb}"
cmd = re.sub(r'(^|[|;&(]\s*|\$\()frctl (\S+)', fr, cmd, flags=re.M)
cmd = re.sub(r'(^|[|;&(]\s*|\$\()flightrecd\b', lambda m: f"{m.group(1)}'{flightrecd}'" + glob, cmd, flags=re.M)
print(cmd)
PY
)
		count=$((count + 1))
		n=$((n + 1))
		printf '%s\n' "echo \"+ example $count: \"$(printf '%q' "$cmd")" \
			"{ $run" "} >>'$T/out.log' 2>&1 || { rc=\$?; echo \"FAIL: $(basename "$page") example $count exited \$rc:\"; echo $(printf '%q' "$cmd"); tail -15 '$T/out.log'; exit 1; }" >>"$script"
	done < <(examples "$page")
	[ "$count" -gt 0 ] || fail "no example found in $(basename "$page")"
	start=$SECONDS
	bash "$script" || fail "an example of $(basename "$page") failed (above)"
	ok "$(basename "$page"): $count examples ran, in $((SECONDS - start)) s"
done
ok "$n examples of the man pages run as printed"
