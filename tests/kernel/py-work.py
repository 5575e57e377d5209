# The Python workloads of test-python.sh, one per argument:
#   hot SECONDS     main -> handle -> parse -> tokenize, the time in
#                   tokenize's str.split (a C builtin); each on its own line
#   wait            wait_for_backend blocks 1.5 s in a socket recv, then
#                   nap_between_tries 1.2 s in time.sleep
#   threads SECONDS two threads, spin_alpha and spin_beta; prints their
#                   native thread ids
#   brief           brief_work for 100 ms, then exits
#   crash           render_page reads address 0 through ctypes: SIGSEGV
import ctypes
import socket
import sys
import threading
import time


def tokenize(text):
    return len(text.split(","))


def parse(text):
    return tokenize(text)


def handle(text, until):
    total = 0
    while time.monotonic() < until:
        total += parse(text)
    return total


def main(seconds):
    text = ",".join(str(i) for i in range(4000))
    handle(text, time.monotonic() + seconds)


def wait_for_backend(sock):
    return sock.recv(16)


def reply_from_backend(sock):
    sock.send(b"ready")


def nap_between_tries():
    time.sleep(1.2)


def wait():
    a, b = socket.socketpair()
    threading.Timer(1.5, reply_from_backend, (b,)).start()
    wait_for_backend(a)
    nap_between_tries()


def spin_alpha(until):
    n = 0
    while time.monotonic() < until:
        n += sum(range(200))
    return n


def spin_beta(until):
    n = 0
    while time.monotonic() < until:
        n += len(str(n) * 50)
    return n


def threads(seconds):
    until = time.monotonic() + seconds
    ts = [threading.Thread(target=f, args=(until,)) for f in (spin_alpha, spin_beta)]
    for t in ts:
        t.start()
    time.sleep(0.2)
    print(ts[0].native_id, ts[1].native_id, flush=True)
    for t in ts:
        t.join()


def brief_work():
    until = time.monotonic() + 0.1
    n = 0
    while time.monotonic() < until:
        n += sum(range(100))
    return n


def render_page():
    return ctypes.string_at(0)


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "hot":
        main(float(sys.argv[2]))
    elif what == "wait":
        wait()
    elif what == "threads":
        threads(float(sys.argv[2]))
    elif what == "brief":
        brief_work()
    elif what == "crash":
        render_page()
