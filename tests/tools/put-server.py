#!/usr/bin/python3
"""A small HTTP server that takes PUT requests, as a WebDAV collection or
an object store's PUT endpoint would, for the tests of 'frctl upload'.
It listens on 127.0.0.1 only.

  put-server.py DIR --port-file FILE [--port N] [--status CODE] [--auth USER:PASSWORD] [--log FILE]

PUT /any/path/NAME stores the body as DIR/NAME (written to a temporary
file and renamed: a file in DIR is always whole) and answers 201 Created,
or 204 No Content when DIR/NAME existed.  A NAME that is hidden or no
plain file name gets 400; a body without Content-Length gets 411.
--status CODE answers every PUT with CODE instead, storing nothing (a
server that refuses).  --auth USER:PASSWORD answers 401 to a PUT without
those credentials (HTTP basic authentication).  Anything but PUT gets 405.

--port 0 (the default) takes a free port; the port is written to
--port-file once the server listens (so the caller can wait for that
file), and --port N takes that one again after a restart.  --log FILE
gets one line per request: method, path (with its query), status, bytes.
Runs until SIGTERM or SIGINT.
"""
import argparse
import base64
import http.server
import os
import signal
import sys
import urllib.parse


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--status", type=int, default=0)
    ap.add_argument("--auth")
    ap.add_argument("--log")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)

    class Handler(http.server.BaseHTTPRequestHandler):
        # HTTP/1.1: libcurl's "Expect: 100-continue" is answered, and its
        # connection kept from one upload to the next
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *a):
            pass

        def note(self, status, nbytes):
            if args.log:
                with open(args.log, "a") as f:
                    f.write(f"{self.command} {self.path} {status} {nbytes}\n")

        def reply(self, status, nbytes=0):
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()
            self.note(status, nbytes)

        def do_PUT(self):
            length = self.headers.get("Content-Length")
            if length is None:
                self.close_connection = True
                return self.reply(411)
            body = self.rfile.read(int(length))
            if args.auth:
                want = "Basic " + base64.b64encode(args.auth.encode()).decode()
                if self.headers.get("Authorization") != want:
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="put-server"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return self.note(401, len(body))
            if args.status:
                return self.reply(args.status, len(body))
            path = urllib.parse.urlsplit(self.path).path
            name = urllib.parse.unquote(path.rsplit("/", 1)[-1])
            if not name or name.startswith(".") or "/" in name or "\0" in name:
                return self.reply(400, len(body))
            dest = os.path.join(args.dir, name)
            existed = os.path.exists(dest)
            tmp = os.path.join(args.dir, f".{name}.{os.getpid()}.tmp")
            with open(tmp, "wb") as f:
                f.write(body)
            os.rename(tmp, dest)
            self.reply(204 if existed else 201, len(body))

        def do_GET(self):
            self.reply(405)

        do_POST = do_DELETE = do_GET

    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"{server.server_address[1]}\n")
    os.rename(tmp, args.port_file)

    def stop(signum, frame):
        # shutdown() waits for serve_forever(), which runs in this thread
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
