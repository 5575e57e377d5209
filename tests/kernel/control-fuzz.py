#!/usr/bin/python3
# Sends flightrecd's control socket (SOCK_SEQPACKET, one JSON request per
# connection) thousands of bad requests, reproducibly (seeded): truncated
# and bit-flipped good requests, binary junk, oversized messages, JSON that
# is not an object, wrong types, deep nesting, invalid UTF-8, clients that
# close before the reply, and empty messages; and junk datagrams to the
# annotation socket.  Prints one line of counts as JSON.  Every reply must
# be one JSON object; a connection the daemon refuses or drops is a
# failure, and so is a reply that is not JSON.
#   control-fuzz.py CONTROL_SOCKET ANNOTATE_SOCKET COUNT SEED
import json
import random
import socket
import sys

sock_path, annotate_path, count, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)

GOOD = [
    b'{"verb":"status"}',
    b'{"verb":"mark","text":"control-fuzz"}',
    b'{"verb":"freeze","reason":"control-fuzz"}',
]
WRONG = [
    b'{"verb":5}', b'{"verb":null}', b'{"verb":["status"]}', b'{"verb":{"a":1}}', b'{"verb":true}',
    b'{"verb":"mark"}', b'{"verb":"mark","text":5}', b'{"verb":"mark","text":null}',
    b'{"verb":"mark","text":""}', b'{"verb":"mark","text":["a"]}', b'{"verb":"mark","text":{"t":"x"}}',
    b'{"verb":"freeze","reason":{"a":1}}', b'{"verb":"freeze","reason":null}', b'{"verb":"freeze","reason":7}',
    b'{"verb":""}', b'{"verb":"STATUS"}', b'{"verb":"status\\u0000x"}', b'{"verb":"mark","text":"a\\u0000b"}',
    b'{}', b'[]', b'null', b'0', b'"status"', b'true', b'-1e999', b'{"verb":"status"}{"verb":"status"}',
    b'{"verb":"status"} trailing', b'{"verb":"status",}', b"{'verb':'status'}", b'{"verb":"status"',
    b'{"verb":"mark","text":"\xff\xfe\xc0\x80 invalid utf-8"}', b'{"verb":"mark","text":"\x1b[31mred\x07"}',
    b'{"verb":"status","verb":"mark","text":"dup"}', b'{"\xff":1}', b'\x00{"verb":"status"}',
    b'{"verb":"status"}\x00junk',
]


def oversized_mark():
    # the 1024-byte limit and the 16 KiB request limit from either side
    n = rng.choice([1023, 1024, 1025, 4096, 16000, 16384, 20000, 100000])
    return b'{"verb":"mark","text":"' + b'x' * n + b'"}'


def oversized_freeze():
    n = rng.choice([1024, 1025, 3000])
    return b'{"verb":"freeze","reason":"' + b'r' * n + b'"}'


def escaped_mark():
    # JSON escapes inflate on the wire, not in the text
    return b'{"verb":"mark","text":"' + b'\\u00e9' * rng.choice([170, 1024, 2700]) + b'"}'


def deep():
    d = rng.choice([30, 33, 100, 5000])
    return b'[' * d + b']' * d if rng.random() < 0.5 else b'{"a":' * d + b'1' + b'}' * d


def truncated():
    g = rng.choice(GOOD + WRONG)
    return g[:rng.randrange(len(g))] if len(g) > 1 else g


def flipped():
    g = bytearray(rng.choice(GOOD + WRONG))
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(g))
        g[i] ^= 1 << rng.randrange(8)
    return bytes(g)


def junk():
    return bytes(rng.getrandbits(8) for _ in range(rng.choice([1, 7, 64, 500, 4096, 16385, 60000])))


def huge_line():
    return b'{"verb":"status","x":"' + b'A' * rng.choice([16384, 65536, 200000])


GEN = [truncated, flipped, junk, huge_line, oversized_mark, oversized_freeze, escaped_mark, deep,
       lambda: rng.choice(WRONG), lambda: b'']

counts = {"sent": 0, "replies": 0, "errors": 0, "ok": 0, "no_reply": 0, "closed_early": 0, "annotations": 0,
          "too_big_to_send": 0, "closed_by_daemon": 0}


def one(msg, read_reply):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(10)
    s.connect(sock_path)
    try:
        s.send(msg)
    except (BrokenPipeError, ConnectionResetError):
        # the daemon already answered and closed (a large request it
        # refused, or a slow sender past its receive timeout)
        counts["sent"] += 1
        counts["closed_by_daemon"] += 1
        s.close()
        return
    except OSError as e:
        # above the socket's send buffer: the kernel refuses it, the
        # daemon sees a client that sends nothing
        if e.errno != 90:  # EMSGSIZE
            raise
        counts["too_big_to_send"] += 1
    counts["sent"] += 1
    if not read_reply:
        counts["closed_early"] += 1
        s.close()
        return
    r = s.recv(1 << 20)
    s.close()
    if not r:
        counts["no_reply"] += 1
        return
    o = json.loads(r)  # a reply that is not JSON fails the test
    if not isinstance(o, dict):
        raise SystemExit("reply is not a JSON object: %r" % r[:200])
    counts["replies"] += 1
    counts["errors" if "error" in o else "ok"] += 1


for i in range(count):
    msg = rng.choice(GEN)()
    one(msg, rng.random() > 0.1)
    if i % 10 == 0:
        a = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            a.sendto(rng.choice([junk(), b'', b'\x00' * 2000, oversized_mark()]), annotate_path)
            counts["annotations"] += 1
        except OSError as e:
            if e.errno != 90:
                raise
        a.close()
print(json.dumps(counts))
