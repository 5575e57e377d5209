#!/bin/bash
# flightrecd as a service under a real systemd.  The host's own OS is booted
# as a throw-away container (systemd-nspawn --volatile=yes, see
# shared/SYSTEMD-TESTING.md), and the `meson install` tree is bound over its
# /usr/local, so the installed unit, binaries and man pages are used as they
# are.  The test checks that:
#   a. `systemd-analyze verify` passes on the installed units (flightrecd
#      and the upload's service, path and timer), with nothing on stderr;
#   b. `meson install` provides the units and the default configuration;
#   c. `systemctl enable --now` brings the service up: active, and the
#      journal has "Recording to ..." (logged just before READY=1);
#   d. in the sandbox every source attaches, `frctl dump --last 10s` has
#      records, and kernel frames get names;
#   e. `systemctl reload` applies a new syscall threshold.  At 10s a
#      0.3 s sleep leaves no record; at 100ms, after a reload, it leaves a
#      clock_nanosleep record for its pid with its cgroup named;
#   f. a reload with a bad configuration logs file:line and "keeping the
#      running configuration"; the service stays up and keeps recording
#      with the old settings;
#   g. `systemctl kill -s ABRT` gets a restart (NRestarts=1);
#   h. `systemctl stop` ends cleanly (Result=success, status 0), and frctl
#      then reads the store with exit 0 and no damage;
#   i. `systemd-analyze security` rates the unit; its exposure is printed
#      and must stay at most 3.0;
#   j. incidents leave the host: with upload.url pointing at a PUT server
#      on the host's loopback (tests/tools/put-server.py; the container
#      shares the host's network) and flightrec-upload.path enabled, a
#      `frctl freeze` reaches the server byte for byte (sha256) with no one
#      running `frctl upload`, and the journal has the upload's entry;
#   k. with the server down at the freeze, flightrec-upload.service fails,
#      the journal has the failure's entry, and once the server is back its
#      restart (RestartSec=, 2 s by a drop-in here) delivers the incident;
#   l. `journalctl MESSAGE_ID=<incident> -o json` has every documented
#      field of that real incident, equal to `frctl incidents --json`;
#   m. flightrecd keeps RestrictAddressFamilies=AF_UNIX (no AF_INET): the
#      network is the upload service's alone;
#   n. a crash's incident entry has the crash line and its stack trace in
#      MESSAGE, and the line in CRASH=;
#   o. systemd-coredump, running in the container, catches the same crash,
#      and `frctl report` (text and HTML) names the `coredumpctl` command
#      of its core dump, which coredumpctl then finds.  The kernel's
#      core_pattern is global and its helper runs in the host's namespaces,
#      where no systemd listens: for the test's run it points at a bridge
#      that runs the container's systemd-coredump in the container's mount
#      namespace with a /proc of the host's pid namespace (the pid the
#      kernel passes, %P, is the host's, as on a machine booted with
#      systemd); the host's pattern is put back right after.
# Everything the test creates goes away at its end: the container, its
# private mounts (unshare -m), the cgroups nspawn creates under
# frtest-PID, the PUT server, the core_pattern, and the temporary directory.
BUILD=$1
set -euo pipefail

T=$(mktemp -d /tmp/fr-systemd-XXXXXX)
MACHINE=frtest-$$
NSPAWN=
LEADER=
CGDIRS=()
# the host's core_pattern while step o has replaced it
CORE_PATTERN=
# start_server, stop_server: the PUT server the upload steps send to
. "$(dirname "$0")/put-server.sh"

# Runs a command inside the container (all its namespaces), with a clean
# environment.
in_ct() {
	nsenter -t "$LEADER" -a -r -w env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

# restore_core_pattern: the host's own core_pattern back
restore_core_pattern() {
	if [ -n "$CORE_PATTERN" ]; then
		printf '%s\n' "$CORE_PATTERN" >/proc/sys/kernel/core_pattern ||
			echo "warning: could not restore kernel.core_pattern to '$CORE_PATTERN'" >&2
		CORE_PATTERN=
	fi
}

teardown() {
	restore_core_pattern
	stop_server
	if [ -n "$NSPAWN" ] && kill -0 "$NSPAWN" 2>/dev/null; then
		# nspawn halts the container on SIGTERM
		kill -TERM "$NSPAWN" 2>/dev/null || true
		for _ in $(seq 300); do
			kill -0 "$NSPAWN" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$NSPAWN" 2>/dev/null; then
			echo "container did not halt within 30 s; killing it" >&2
			kill -KILL "$NSPAWN" 2>/dev/null || true
			# only what this test started is in its cgroup
			for d in "${CGDIRS[@]}"; do
				if [ -f "$d/cgroup.kill" ]; then
					echo 1 >"$d/cgroup.kill" 2>/dev/null || true
				fi
			done
		fi
		wait "$NSPAWN" 2>/dev/null || true
	fi
	NSPAWN=
	# the payload/ and supervisor/ trees nspawn leaves behind, then ours
	for d in "${CGDIRS[@]}"; do
		[ -d "$d" ] || continue
		for _ in $(seq 50); do
			find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
			[ -d "$d" ] || break
			sleep 0.1
		done
		[ ! -d "$d" ] || echo "warning: could not remove cgroup $d" >&2
	done
	rm -rf "$T"
}
trap teardown EXIT
trap 'exit 143' TERM INT

fail() {
	echo "FAIL: $*" >&2
	if [ -n "$LEADER" ] && [ -n "$NSPAWN" ] && kill -0 "$NSPAWN" 2>/dev/null; then
		echo "--- systemctl status flightrecd:" >&2
		in_ct systemctl status --no-pager -l flightrecd >&2 || true
		echo "--- journalctl -u flightrecd (tail):" >&2
		in_ct journalctl -u flightrecd --no-pager -n 30 >&2 || true
	elif [ -s "$T/console.log" ]; then
		echo "--- container console (tail):" >&2
		tail -20 "$T/console.log" >&2
	fi
	exit 1
}

ok() {
	echo "ok: $*"
}

# retry SECONDS CMD...: runs CMD every 0.1 s until it succeeds.
retry() {
	local tries=$(($1 * 10))
	shift
	for _ in $(seq "$tries"); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# journal_count PATTERN: lines of flightrecd's journal that contain PATTERN.
journal_count() {
	in_ct journalctl -u flightrecd --no-pager -o cat | grep -c -F -- "$1" || true
}

# journal_has PATTERN N: at least N such lines.
journal_has() {
	[ "$(journal_count "$1")" -ge "$2" ]
}

prop() {
	in_ct systemctl show -p "$1" --value flightrecd
}

# synced: returns once everything recorded so far is in the store.  status
# drains the rings; each sync after that closes every open chunk.
syncs() {
	in_ct frctl status --json | jq -e .store.syncs
}
synced() {
	local s0 s
	s0=$(syncs) || fail "frctl status failed"
	for _ in $(seq 100); do
		s=$(syncs) || fail "frctl status failed"
		[ "$s" -ge $((s0 + 2)) ] && return 0
		sleep 0.1
	done
	fail "the store did not sync twice within 10 s"
}

# nap NAME: a 0.3 s sleep in a unit of its own inside the container, named
# NAME (the comm follows the symlink's name).  Waits for it to end.
nap() {
	in_ct ln -sf /usr/bin/sleep "/run/$1"
	in_ct systemd-run --quiet --wait --collect --unit="$1" "/run/$1" 0.3 >/dev/null ||
		fail "systemd-run $1 failed"
}

# nap_records NAME: NAME's records as JSON Lines.
nap_records() {
	in_ct frctl dump --comm "$1" --format json
}

# nap_pid NAME: the pid of NAME's exec record.
nap_pid() {
	nap_records "$1" | jq -e -s 'map(select(.type == "exec")) | .[0].pid'
}

# nap_syscall NAME: NAME's clock_nanosleep record of at least 0.3 s, from
# its own pid in its own cgroup.
nap_syscall() {
	local pid
	pid=$(nap_pid "$1") || return 1
	nap_records "$1" | jq -e -s -c --argjson p "$pid" --arg cg "/system.slice/$1.service" \
		'map(select(.type == "syscall" and .pid == $p and .syscall == "clock_nanosleep"
			and .duration_ns >= 300000000 and .cgroup == $cg)) | first // empty' >"$T/nap.json"
}

# --- prerequisites
for tool in systemd-nspawn unshare nsenter findmnt jq; do
	command -v "$tool" >/dev/null ||
		fail "$tool not found (scripts/deps.sh installs systemd-container and util-linux)"
done

# --- b. install
meson install -C "$BUILD" --destdir "$T/root" --no-rebuild --quiet >"$T/install.log" 2>&1 ||
	{ cat "$T/install.log" >&2; fail "meson install failed"; }
UNIT=$(find "$T/root" -path '*/systemd/system/flightrecd.service' | head -1)
[ -n "$UNIT" ] || fail "meson install put no flightrecd.service under $T/root"
EXEC=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$UNIT")
PREFIX=${EXEC%/sbin/flightrecd}
case "$PREFIX" in
/usr | "$EXEC" | "") fail "ExecStart=$EXEC: this test binds the install over its prefix, which must be like /usr/local" ;;
esac
[ -x "$T/root$EXEC" ] || fail "the unit starts $EXEC, which meson install did not provide"
[ "${UNIT#"$T/root"}" = "$PREFIX/lib/systemd/system/flightrecd.service" ] ||
	fail "the unit is installed at ${UNIT#"$T/root"}, not in $PREFIX/lib/systemd/system"
[ -f "$T/root/etc/flightrec/flightrec.conf" ] || fail "meson install put no /etc/flightrec/flightrec.conf"
for u in flightrec-upload.service flightrec-upload.path flightrec-upload.timer; do
	[ -f "$T/root$PREFIX/lib/systemd/system/$u" ] || fail "meson install put no $u in $PREFIX/lib/systemd/system"
done
grep -q "^ExecStart=$PREFIX/bin/frctl upload$" "$T/root$PREFIX/lib/systemd/system/flightrec-upload.service" ||
	fail "flightrec-upload.service does not start $PREFIX/bin/frctl upload: $(grep ExecStart= "$T/root$PREFIX/lib/systemd/system/flightrec-upload.service")"
ok "meson install: $EXEC, ${UNIT#"$T/root"}, flightrec-upload.{service,path,timer}, /etc/flightrec/flightrec.conf"

# --- boot
# nspawn --keep-unit makes payload/ and supervisor/ cgroups beside itself:
# it runs in a cgroup of its own, in every hierarchy that systemd uses.
CG2=$(findmnt -n -t cgroup2 -o TARGET | head -1)
[ -n "$CG2" ] || fail "no cgroup2 mount"
CGDIRS+=("$CG2$(sed -n 's/^0:://p' /proc/self/cgroup)/$MACHINE")
CG1=$(findmnt -n -t cgroup -o TARGET,OPTIONS | awk '$2 ~ /(^|,)name=systemd(,|$)/ { print $1; exit }')
if [ -n "$CG1" ]; then
	CGDIRS+=("$CG1$(sed -n 's/^[0-9]*:name=systemd://p' /proc/self/cgroup)/$MACHINE")
fi
for d in "${CGDIRS[@]}"; do
	mkdir "$d" || fail "cannot create cgroup $d"
done
# nspawn leaves state under /run/systemd/nspawn: a tmpfs over /run/systemd
# in a private mount namespace keeps it off the host
RUNDIR=/run/systemd
[ -d "$RUNDIR" ] || RUNDIR=/run
# The container boots the host's own OS, so it would start every service
# the host has enabled (a PostgreSQL or nginx installed for a benchmark
# held is-system-running for minutes): it boots to basic.target, and the
# test starts what it tests itself.
# man (for verify's check of Documentation=) needs its configuration, and the
# volatile /etc lacks it
MANCONF=()
[ -f /etc/manpath.config ] && MANCONF=(--bind-ro=/etc/manpath.config)
(
	for d in "${CGDIRS[@]}"; do
		echo "$BASHPID" >"$d/cgroup.procs"
	done
	# open_by_handle_at: the daemon names cgroups with it; nspawn's
	# default filter refuses it
	# shellcheck disable=SC2016 # $1 and $@ are the inner shell's
	exec unshare -m --propagation private sh -c '
		mount -t tmpfs tmpfs "$1" && shift && exec systemd-nspawn "$@"' sh "$RUNDIR" \
		-D / --volatile=yes --boot --register=no --keep-unit --console=pipe -M "$MACHINE" \
		--bind-ro="$T/root$PREFIX:$PREFIX" --bind-ro="$T/root/etc:/opt/fr-etc" \
		"${MANCONF[@]}" \
		--capability=all --system-call-filter="bpf perf_event_open open_by_handle_at" \
		--bind=/sys/kernel/tracing:/sys/kernel/tracing \
		-- systemd.mask=systemd-firstboot.service systemd.unit=basic.target
) </dev/null >"$T/console.log" 2>&1 &
NSPAWN=$!
# the container's PID 1 is nspawn's child
for _ in $(seq 100); do
	LEADER=$(pgrep -P "$NSPAWN" -x systemd || true)
	[ -n "$LEADER" ] && break
	kill -0 "$NSPAWN" 2>/dev/null || fail "systemd-nspawn exited"
	sleep 0.1
done
[ -n "$LEADER" ] || fail "the container's systemd did not start within 10 s"
# (until its manager listens, systemctl cannot connect and prints nothing;
# until it has made /run/systemd/system, systemctl says "offline")
booted() {
	state=$(timeout 60 nsenter -t "$LEADER" -a -r -w systemctl is-system-running --wait 2>/dev/null || true)
	case "$state" in
	running | degraded) return 0 ;;
	"" | offline) return 1 ;;
	*) fail "the container did not boot: state '$state'" ;;
	esac
}
retry 30 booted || fail "the container's systemd did not answer within 30 s (last state: '${state:-none}')"
ok "container $MACHINE booted ($state)"

# --- a. verify: the installed units, their binaries, /bin/kill and man pages
in_ct systemd-analyze verify "$PREFIX/lib/systemd/system/flightrecd.service" \
	"$PREFIX/lib/systemd/system/flightrec-upload.service" "$PREFIX/lib/systemd/system/flightrec-upload.path" \
	"$PREFIX/lib/systemd/system/flightrec-upload.timer" >"$T/verify.out" 2>"$T/verify.err" ||
	{ cat "$T/verify.out" "$T/verify.err" >&2; fail "systemd-analyze verify failed"; }
if grep . "$T/verify.err" >/dev/null; then
	cat "$T/verify.err" >&2
	fail "systemd-analyze verify printed warnings"
fi
ok "systemd-analyze verify: no warnings"

# --- c. enable --now
in_ct mkdir -p /etc/flightrec
in_ct cp /opt/fr-etc/flightrec/flightrec.conf /etc/flightrec/flightrec.conf
in_ct systemctl daemon-reload
in_ct systemctl enable --now flightrecd >"$T/enable.log" 2>&1 ||
	{ cat "$T/enable.log" >&2; fail "systemctl enable --now flightrecd failed"; }
in_ct systemctl is-enabled --quiet flightrecd || fail "flightrecd is not enabled"
[ "$(in_ct systemctl is-active flightrecd || true)" = active ] || fail "flightrecd is not active after enable --now"
retry 10 journal_has "Recording to /var/lib/flightrec" 1 || fail "no \"Recording to ...\" in the journal"
ok "enable --now: active; journal: $(in_ct journalctl -u flightrecd --no-pager -o cat | grep -F 'Recording to' | head -1)"

# --- d. records, sources, symbols, in the sandbox
in_ct frctl status --json >"$T/status.json" || fail "frctl status failed"
jq -e '[.sources[] | select(.enabled and (.attached | not))] | length == 0' "$T/status.json" >/dev/null ||
	fail "sources enabled but not attached: $(jq -c '[.sources | to_entries[] | select(.value.enabled and (.value.attached | not)) | .key]' "$T/status.json")"
count_last10() {
	last10=$(in_ct frctl dump --last 10s | wc -l)
	[ "$last10" -gt 0 ]
}
retry 10 count_last10 || fail "frctl dump --last 10s has no records"
ok "frctl dump --last 10s: $last10 records; sources attached: $(jq -r '[.sources | to_entries[] | select(.value.attached) | .key] | join(" ")' "$T/status.json")"
kernel_named() {
	in_ct frctl status --json >"$T/status.json" &&
		jq -e '.sampler.symbols.kernel_symbols > 10000 and .sampler.symbols.kernel_named > 0' "$T/status.json" >/dev/null
}
retry 15 kernel_named || fail "kernel frames are not named in the sandbox: $(jq -c .sampler "$T/status.json")"
ok "kernel frames named in the sandbox: $(jq -c '.sampler.symbols | {kernel_symbols, kernel_named, kernel_unnamed}' "$T/status.json")"

# --- e. reload applies the syscall threshold.  Neither configuration
# excludes clock_nanosleep, so only the threshold decides.
cat >"$T/high.conf" <<'EOF'
store = { sync_interval = "200ms"; };
recorder = { chunk_age = "200ms"; };
sources = { syscall = { enabled = true; threshold = "10s"; exclude = [ "futex" ]; }; };
EOF
sed 's/"10s"/"100ms"/' "$T/high.conf" >"$T/low.conf"
in_ct sh -c 'cat >/etc/flightrec/flightrec.conf' <"$T/high.conf"
in_ct systemctl reload flightrecd || fail "systemctl reload failed"
retry 10 journal_has "Configuration reloaded" 1 || fail "no \"Configuration reloaded\" in the journal after the reload"
nap frt-nap-high
synced
retry 5 nap_pid frt-nap-high >/dev/null || fail "no exec record of frt-nap-high"
if nap_syscall frt-nap-high; then
	fail "threshold 10s, yet a 0.3 s sleep was recorded: $(cat "$T/nap.json")"
fi
ok "threshold 10s: no record of a 0.3 s sleep (pid $(nap_pid frt-nap-high))"

in_ct sh -c 'cat >/etc/flightrec/flightrec.conf' <"$T/low.conf"
in_ct systemctl reload flightrecd || fail "systemctl reload failed"
retry 10 journal_has "Configuration reloaded" 2 || fail "no second \"Configuration reloaded\" in the journal"
nap frt-nap-low
retry 10 nap_syscall frt-nap-low ||
	fail "threshold 100ms after the reload, yet the 0.3 s sleep left no clock_nanosleep record; its records: $(nap_records frt-nap-low | jq -s -c 'map([.type, .pid, .syscall, .duration_ns, .cgroup])')"
ok "reload to threshold 100ms: $(jq -r '"\(.comm)[\(.pid)] \(.syscall) \(.duration_ns / 1e6 | floor) ms in \(.cgroup)"' "$T/nap.json")"

# --- f. a bad configuration is refused, the running one kept
MAINPID=$(prop MainPID)
printf 'sources = {\n  syscall = {\n    thresold = "1s";\n  };\n};\n' |
	in_ct sh -c 'cat >/etc/flightrec/flightrec.conf'
in_ct systemctl reload flightrecd || fail "systemctl reload (bad configuration) failed"
retry 10 journal_has "keeping the running configuration" 1 ||
	fail "no \"keeping the running configuration\" in the journal after a bad reload"
journal_has "/etc/flightrec/flightrec.conf:3:" 1 ||
	fail "the journal does not name /etc/flightrec/flightrec.conf:3 for the unknown setting on line 3"
[ "$(in_ct systemctl is-active flightrecd || true)" = active ] || fail "flightrecd is not active after a bad reload"
[ "$(prop MainPID)" = "$MAINPID" ] || fail "flightrecd was restarted by a bad reload"
# frctl is not locked out of the store by the broken file: --store is enough
out=$(in_ct frctl --store /var/lib/flightrec dump --last 10s 2>&1) ||
	fail "frctl --store refused to read while the configuration is broken: $(head -3 <<<"$out")"
grep -q "warning: .*flightrec.conf:3:" <<<"$out" || fail "frctl did not warn about the broken configuration: $(head -3 <<<"$out")"
[ "$(wc -l <<<"$out")" -gt 1 ] || fail "frctl --store dump printed no records with the configuration broken"
ok "frctl --store reads the store while the configuration is broken (with a warning)"
# the good file back, without a reload
in_ct sh -c 'cat >/etc/flightrec/flightrec.conf' <"$T/low.conf"
nap frt-nap-kept
retry 10 nap_syscall frt-nap-kept ||
	fail "after the bad reload the 0.3 s sleep left no record (the 100ms threshold was not kept)"
ok "bad configuration refused: $(in_ct journalctl -u flightrecd --no-pager -o cat | grep -F 'flightrec.conf:3:' | tail -1); still active, still recording"

# --- g. SIGABRT: Restart=on-failure
in_ct systemctl kill -s ABRT flightrecd
restarted() {
	local pid
	pid=$(prop MainPID)
	[ "$pid" != 0 ] && [ "$pid" != "$MAINPID" ] && [ "$(in_ct systemctl is-active flightrecd || true)" = active ]
}
retry 20 restarted || fail "flightrecd was not restarted after SIGABRT"
[ "$(prop NRestarts)" = 1 ] || fail "NRestarts=$(prop NRestarts) after one SIGABRT, want 1"
retry 10 journal_has "Recording to /var/lib/flightrec" 2 || fail "the restarted daemon did not log \"Recording to ...\""
nap frt-nap-again
retry 10 nap_syscall frt-nap-again || fail "the restarted daemon does not record"
ok "SIGABRT: restarted as pid $(prop MainPID), NRestarts=1, recording"

# --- h. clean stop, intact store
in_ct systemctl stop flightrecd || fail "systemctl stop failed"
res=$(in_ct systemctl show -p Result -p ExecMainCode -p ExecMainStatus flightrecd | sort | tr '\n' ' ')
[ "$res" = "ExecMainCode=1 ExecMainStatus=0 Result=success " ] ||
	fail "systemctl stop: $res (want Result=success, exited with status 0)"
journal_has "flushing and exiting" 1 || fail "no \"flushing and exiting\" in the journal after stop"
rc=0
in_ct frctl --store /var/lib/flightrec status --json >"$T/status.json" || rc=$?
[ "$rc" -eq 3 ] || fail "frctl status after stop: exit $rc, want 3 (not running)"
jq -e '.running == false and .store.records > 0' "$T/status.json" >/dev/null ||
	fail "frctl status after stop: $(jq -c . "$T/status.json")"
rc=0
in_ct frctl --store /var/lib/flightrec dump --format json >"$T/all.json" 2>"$T/dump.err" || rc=$?
[ "$rc" -eq 0 ] || { cat "$T/dump.err" >&2; fail "frctl dump of the stopped store: exit $rc"; }
if grep -i -e damaged -e undecodable "$T/dump.err" >&2; then
	fail "frctl dump reports damage in the store"
fi
jq -e -s 'any(.[]; .comm == "frt-nap-again" and .type == "syscall")' "$T/all.json" >/dev/null ||
	fail "the record made just before the stop is not in the store"
ok "stop: $res; store read back: $(wc -l <"$T/all.json") records, exit 0, no damage"

# --- i. exposure
in_ct systemd-analyze security --no-pager flightrecd.service >"$T/security.txt" 2>&1 ||
	{ cat "$T/security.txt" >&2; fail "systemd-analyze security failed"; }
line=$(grep -F 'Overall exposure level' "$T/security.txt" || true)
exposure=$(sed -n 's/.*: \([0-9.]*\) .*/\1/p' <<<"$line")
[ -n "$exposure" ] || { cat "$T/security.txt" >&2; fail "no exposure level in systemd-analyze security's output"; }
echo "systemd-analyze security: $line"
awk -v e="$exposure" 'BEGIN { exit !(e <= 3.0) }' ||
	{ grep '✗' "$T/security.txt" >&2; fail "exposure $exposure: the unit lost hardening (it was 2.9)"; }
ok "exposure $exposure"

# --- j. incidents leave the host: flightrec-upload.path and .service
INCIDENT_ID=7c1d8b3e5a6f4e2d9b0a1c3e5f7a9b2d
UPLOADED_ID=cb03bb4fd9604aff80444726cb8a0397
UPLOAD_FAILED_ID=4865af81d24149248a3dd0be067bf352
start_server
in_ct sh -c 'cat >/etc/flightrec/flightrec.conf' <<EOF
store = { sync_interval = "200ms"; };
triggers = { rules = ( { name = "manual"; condition = "manual"; before = "2s"; after = "500ms"; },
                       { name = "crash"; condition = "signal"; signals = [ "SIGSEGV" ]; before = "2s"; after = "500ms"; } ); };
upload = { url = "http://127.0.0.1:$PORT/incidents/"; timeout = "5s"; };
EOF
# retries every 2 s instead of 2 minutes
in_ct mkdir -p /etc/systemd/system/flightrec-upload.service.d
printf '[Service]\nRestartSec=2s\n' | in_ct sh -c 'cat >/etc/systemd/system/flightrec-upload.service.d/test.conf'
in_ct systemctl daemon-reload
in_ct systemctl start flightrecd || fail "systemctl start flightrecd failed"
in_ct systemctl enable --now flightrec-upload.path >"$T/enable.log" 2>&1 ||
	{ cat "$T/enable.log" >&2; fail "systemctl enable --now flightrec-upload.path failed"; }
[ "$(in_ct systemctl is-active flightrec-upload.path || true)" = active ] || fail "flightrec-upload.path is not active"

# freeze REASON: an incident; prints its id
freeze() {
	in_ct frctl freeze --reason "$1" | awk 'NR == 1 && $1 == "incident" { print $2 }'
}
# delivered ID: the server has ID.fri, byte for byte the container's
delivered() {
	[ -f "$T/put/$1.fri" ] &&
		[ "$(in_ct sha256sum "/var/lib/flightrec/incidents/$1.fri" | cut -d' ' -f1)" = "$(sha256sum <"$T/put/$1.fri" | cut -d' ' -f1)" ]
}
# entry MESSAGE_ID ID: the journal entry of that id for incident ID, as JSON
entry() {
	in_ct journalctl --no-pager -o json "MESSAGE_ID=$1" "INCIDENT=$2" >"$T/entry.json" && [ -s "$T/entry.json" ]
}
ID1=$(freeze "upload test")
[ -n "$ID1" ] || fail "frctl freeze printed no incident id"
# upload_state: what to look at when an incident did not arrive
upload_state() {
	cat "$T/requests.log" 2>/dev/null
	in_ct ls -la /var/lib/flightrec/incidents
	in_ct systemctl status --no-pager -l flightrec-upload.path flightrec-upload.service
	in_ct systemctl list-jobs --no-pager
	in_ct journalctl --no-pager -n 30 -u flightrec-upload.path -u flightrec-upload.service
}
retry 20 delivered "$ID1" || fail "incident $ID1 did not reach the server within 20 s: $(upload_state 2>&1)"
retry 5 entry "$UPLOADED_ID" "$ID1" || fail "no upload entry (MESSAGE_ID=$UPLOADED_ID) for $ID1 in the journal"
jq -e -s --arg sha "$(sha256sum <"$T/put/$ID1.fri" | cut -d' ' -f1)" --arg p "$PORT" --arg id "$ID1" \
	'.[0] | ._SYSTEMD_UNIT == "flightrec-upload.service" and .SHA256 == $sha and .HTTP_STATUS == "201"
		and .UPLOAD_URL == "http://127.0.0.1:\($p)/incidents/\($id).fri"
		and .INCIDENT_PATH == "/var/lib/flightrec/incidents/\($id).fri" and (.BYTES | tonumber) > 0' \
	"$T/entry.json" >/dev/null || fail "the upload entry: $(jq -c -s '.[0]' "$T/entry.json")"
ok "freeze -> $ID1.fri on the server, sha256 equal, by flightrec-upload.service: $(jq -r -s '.[0].MESSAGE' "$T/entry.json")"

# --- k. the server down at the freeze: the unit fails, and its restart
# delivers once the server is back
stop_server
restarts0=$(in_ct systemctl show -p NRestarts --value flightrec-upload.service)
ID2=$(freeze "upload while the server is down")
[ -n "$ID2" ] || fail "frctl freeze printed no incident id"
retry 20 entry "$UPLOAD_FAILED_ID" "$ID2" ||
	fail "no failure entry (MESSAGE_ID=$UPLOAD_FAILED_ID) for $ID2: $(in_ct journalctl -u flightrec-upload --no-pager -n 20)"
jq -e -s '.[0] | .PRIORITY == "3" and (.ERROR | length) > 0 and ._SYSTEMD_UNIT == "flightrec-upload.service"' \
	"$T/entry.json" >/dev/null || fail "the failure entry: $(jq -c -s '.[0]' "$T/entry.json")"
failmsg=$(jq -r -s '.[0].MESSAGE' "$T/entry.json")
unit_failed() {
	in_ct journalctl -u flightrec-upload --no-pager -o cat | grep -q "Failed with result 'exit-code'"
}
retry 10 unit_failed || fail "flightrec-upload.service did not fail with the server down"
[ ! -f "$T/put/$ID2.fri" ] || fail "$ID2 reached a server that was down"
start_server
retry 20 delivered "$ID2" || fail "incident $ID2 was not delivered within 20 s of the server's return"
retry 5 entry "$UPLOADED_ID" "$ID2" || fail "no upload entry for $ID2 after the server came back"
restarts=$(in_ct systemctl show -p NRestarts --value flightrec-upload.service)
[ "$restarts" -gt "$restarts0" ] || fail "NRestarts=$restarts: the delivery was not a restart"
ok "server down: '$failmsg'; back: delivered by a restart (NRestarts=$restarts), sha256 equal"
echo "flightrec-upload.service ran $(in_ct journalctl -u flightrec-upload.service --no-pager -o cat | grep -c '^Starting') times for 2 incidents"

# --- l. the incident's journal entry: every documented field
retry 5 entry "$INCIDENT_ID" "$ID1" || fail "no incident entry (MESSAGE_ID=$INCIDENT_ID) for $ID1"
in_ct frctl incidents --json | jq --arg id "$ID1" '.[] | select(.id == $id)' >"$T/incident.json"
[ -s "$T/incident.json" ] || fail "frctl incidents does not list $ID1"
jq -e -s --slurpfile i "$T/incident.json" '.[0] as $e | $i[0] as $i |
	$e.INCIDENT == $i.id and $e.RULE == "manual" and ($e.RULES | fromjson) == $i.rules
	and $e.INCIDENT_PATH == $i.path and ($e.BYTES | tonumber) == $i.bytes
	and ($e.TRIGGERS | tonumber) == ($i.triggers | length) and $e.REASON == $i.reason
	and $e.WINDOW_START == $i.start and $e.WINDOW_END == $i.end
	and ($e.WINDOW_START_NS | test("^[0-9]{19}$")) and ($e.WINDOW_END_NS | test("^[0-9]{19}$"))
	and ($e.TRIGGER_TIME | test("^[0-9-]{10}T[0-9:.]+Z$")) and $e.PRIORITY == "4"
	and ($e._BOOT_ID | length) == 32 and $e._SYSTEMD_UNIT == "flightrecd.service"' \
	"$T/entry.json" >/dev/null ||
	fail "the incident entry does not match frctl incidents: $(jq -c -s '.[0]' "$T/entry.json"); $(jq -c . "$T/incident.json")"
ok "journalctl MESSAGE_ID=$INCIDENT_ID -o json: $(jq -c -s '.[0] | {INCIDENT, RULE, RULES, INCIDENT_PATH, TRIGGERS, REASON, WINDOW_START, WINDOW_END, WINDOW_START_NS, WINDOW_END_NS, TRIGGER_TIME, BYTES}' "$T/entry.json")"

# --- n. a crash's incident entry says where (issue 43): a crash rule (the
# shipped one's, with a short window) fires on python3's SIGSEGV in a unit
# of its own, and the
# entry's MESSAGE has the crash line and the stack trace under it, as
# systemd-coredump's entries do.  (In the container's own pid namespace
# flightrecd names kernel frames only: the user frames are addresses.)
# (o: systemd-coredump catches it too, through the bridge)
COREDUMP_SYSCTL=/usr/lib/sysctl.d/50-coredump.conf
[ -f "$COREDUMP_SYSCTL" ] || fail "no $COREDUMP_SYSCTL (scripts/deps.sh installs systemd-coredump)"
read -r COREDUMP_HELPER COREDUMP_ARGS < <(sed -n 's/^kernel\.core_pattern *= *|//p' "$COREDUMP_SYSCTL") || true
[ -n "${COREDUMP_HELPER:-}" ] && [ -n "${COREDUMP_ARGS:-}" ] ||
	fail "$COREDUMP_SYSCTL sets no piped kernel.core_pattern"
in_ct systemctl is-active --quiet systemd-coredump.socket || fail "systemd-coredump.socket is not active in the container"
{
	echo '#!/bin/sh'
	echo '# the kernel'"'"'s core_pattern helper for test-systemd: the core on stdin'
	echo "exec nsenter -t $LEADER -m -- unshare -m --propagation private \\"
	echo "	sh -c 'mount -t proc proc /proc && exec \"\$0\" \"\$@\"' $COREDUMP_HELPER \"\$@\""
} >"$T/cd"
chmod 0755 "$T/cd"
# (the kernel resolves the helper's path in the host's mount namespace:
# through this shell's root, which is another under tests/tools/fresh-root.sh)
CORE_PATTERN=$(cat /proc/sys/kernel/core_pattern)
echo "|/proc/$$/root$T/cd $COREDUMP_ARGS" >/proc/sys/kernel/core_pattern ||
	fail "cannot set kernel.core_pattern to the bridge"
in_ct systemd-run --quiet --wait --collect --unit=fr-crashy /usr/bin/python3 -c "import ctypes; ctypes.string_at(0)" \
	>/dev/null 2>&1 || true
crash_entry() {
	in_ct journalctl --no-pager -o json "MESSAGE_ID=$INCIDENT_ID" RULE=crash >"$T/entry.json" && [ -s "$T/entry.json" ]
}
retry 40 crash_entry || fail "no crash incident entry (MESSAGE_ID=$INCIDENT_ID RULE=crash) within 40 s"
jq -e -s '.[0] | (.MESSAGE | test("\n\npython3\\[[0-9]+\\] SIGSEGV \\(SEGV_MAPERR, address 0x0\\)\n\nStack trace of thread [0-9]+:\n#0  0x[0-9a-f]{16} "))
	and (.CRASH | test("^python3\\[[0-9]+\\] SIGSEGV \\(SEGV_MAPERR, address 0x0\\)"))' "$T/entry.json" >/dev/null ||
	fail "the crash incident's entry: $(jq -c -s '.[0] | {MESSAGE, CRASH}' "$T/entry.json")"
ok "crash incident entry: $(jq -r -s '.[0].MESSAGE' "$T/entry.json" | head -6 | paste -sd'|')"

# --- o. the crash's core dump, from the report: systemd-coredump's journal
# entry for python3's pid (the host's, as flightrecd records it)
CRASH_PID=$(jq -r -s '.[0].CRASH' "$T/entry.json" | sed -n 's/^python3\[\([0-9]*\)\].*/\1/p')
[ -n "$CRASH_PID" ] || fail "no pid in CRASH=$(jq -r -s '.[0].CRASH' "$T/entry.json")"
coredump_entry() {
	in_ct journalctl --no-pager -o json MESSAGE_ID=fc2e22bc6ee647b6b90729ab34a250b1 "COREDUMP_PID=$CRASH_PID" \
		>"$T/coredump.json" && [ -s "$T/coredump.json" ]
}
retry 30 coredump_entry || fail "systemd-coredump logged no core dump of pid $CRASH_PID within 30 s"
restore_core_pattern
CRASH_INCIDENT=$(jq -r -s '.[0].INCIDENT_PATH' "$T/entry.json")
in_ct frctl report --input "$CRASH_INCIDENT" >"$T/crash-report.txt" || fail "frctl report --input $CRASH_INCIDENT failed"
BOOT=$(jq -r -s '.[0]._BOOT_ID' "$T/coredump.json")
grep -q -F "open it with: coredumpctl debug COREDUMP_PID=$CRASH_PID _BOOT_ID=$BOOT" "$T/crash-report.txt" ||
	fail "the report does not name the core dump of pid $CRASH_PID ($(jq -c -s '.[0] | {_BOOT_ID, __REALTIME_TIMESTAMP, COREDUMP_TIMESTAMP, _MACHINE_ID}' "$T/coredump.json")): $(head -8 "$T/crash-report.txt")"
in_ct frctl report --input "$CRASH_INCIDENT" --format html >"$T/crash-report.html" ||
	fail "frctl report --format html failed"
grep -q -F "coredumpctl debug COREDUMP_PID=$CRASH_PID _BOOT_ID=$BOOT" "$T/crash-report.html" ||
	fail "the HTML report does not name the core dump of pid $CRASH_PID"
in_ct coredumpctl info --no-pager "COREDUMP_PID=$CRASH_PID" "_BOOT_ID=$BOOT" >"$T/coredumpctl.txt" 2>&1 ||
	fail "coredumpctl info COREDUMP_PID=$CRASH_PID _BOOT_ID=$BOOT: $(cat "$T/coredumpctl.txt")"
grep -q "Signal: 11 (SEGV)" "$T/coredumpctl.txt" ||
	fail "coredumpctl's core dump of pid $CRASH_PID is not a SIGSEGV: $(cat "$T/coredumpctl.txt")"
ok "core dump: $(grep -F 'core dump kept by systemd-coredump' "$T/crash-report.txt" | sed 's/^ *//'); coredumpctl info: $(grep -E '^ *(PID|Signal|Storage):' "$T/coredumpctl.txt" | sed 's/^ *//' | paste -sd' ')"

# --- m. the recorder keeps its sandbox: no inet
families=$(prop RestrictAddressFamilies)
[ "$families" = AF_UNIX ] || fail "flightrecd: RestrictAddressFamilies=$families, want AF_UNIX alone"
[ -n "$(prop IPAddressDeny)" ] || fail "flightrecd lost IPAddressDeny="
upfam=$(in_ct systemctl show -p RestrictAddressFamilies --value flightrec-upload.service)
ok "flightrecd: RestrictAddressFamilies=$families, IPAddressDeny=$(prop IPAddressDeny); flightrec-upload.service: $upfam"
in_ct systemd-analyze security --no-pager flightrec-upload.service >"$T/security-upload.txt" 2>&1 || true
echo "systemd-analyze security flightrec-upload.service: $(grep -F 'Overall exposure level' "$T/security-upload.txt" || true)"
in_ct systemctl stop flightrec-upload.path flightrecd
