# Sourced by the tests that upload (test-upload, test-systemd): the PUT
# server of tests/tools/put-server.py on the host's 127.0.0.1, storing into
# $T/put and logging each request to $T/requests.log.  Expects T and fail.
PUT_SERVER="$(dirname "$0")/../tools/put-server.py"
SPID=
PORT=0

# start_server [ARGS]: the server (on the port of the last one again, once
# there was one); ARGS go to put-server.py (--auth, --status).
start_server() {
	rm -f "$T/port"
	/usr/bin/python3 "$PUT_SERVER" "$T/put" --port-file "$T/port" --port "$PORT" --log "$T/requests.log" "$@" \
		2>>"$T/server.log" &
	SPID=$!
	for _ in $(seq 100); do
		[ -s "$T/port" ] && break
		kill -0 "$SPID" 2>/dev/null || fail "the PUT server exited: $(tail -3 "$T/server.log")"
		sleep 0.1
	done
	[ -s "$T/port" ] || fail "the PUT server did not listen within 10 s"
	PORT=$(cat "$T/port")
}

stop_server() {
	if [ -n "$SPID" ] && kill -0 "$SPID" 2>/dev/null; then
		kill -TERM "$SPID"
		wait "$SPID" 2>/dev/null || true
	fi
	SPID=
}
