# SPDX-License-Identifier: BSD-3-Clause
"""`eventlog-socket metrics` and the socket file a killed program leaves
behind, which matches the exporter's glob and refuses every connection:
the exporter probes it less and less often (one connect a probe, the
pause 5 s, then doubling up to 80 s) instead of ten times a second for as
long as the file stays, and still picks up a program started again at the
same path. The attempts are counted with strace (its connect calls), over
a fixed stretch: a count, which a loaded machine can only make smaller."""

import os
import re
import shutil
import socket
import subprocess
import time

import harness
from harness import Program, expect, note, test
from test_metrics import samples, scrape, value

# Seconds the stale file is watched. Retrying every 100 ms makes about 120
# attempts in that time; the exporter's probes make 2 (the first, and one
# 5 s later, within a rescan of 2 s).
WATCH_S = 12
MOST = 20


def refused(trace, path):
    """The connect calls to `path` that were refused, from strace's file."""
    try:
        with open(trace, errors="replace") as f:
            text = f.read()
    except FileNotFoundError:
        return 0
    return len(re.findall(r'connect\(\d+, \{sa_family=AF_UNIX, sun_path="%s"\}.*ECONNREFUSED'
                          % re.escape(path), text))


@test(timeout=120)
def metrics_stale_socket_backoff(s):
    '''A killed program's stale socket: tried at most 20 times in 12 s (not
    ~120), still tried, and a new program there is still found.'''
    if shutil.which("strace") is None:
        raise harness.Skip("strace is not installed")
    os.mkdir(s.path("g"))
    stale = s.path("g/a.sock")
    # What a killed program leaves: a socket file that nothing listens on.
    sk = socket.socket(socket.AF_UNIX)
    sk.bind(stale)
    sk.close()
    trace = s.path("connect.trace")
    out = open(s.path("metrics.out"), "wb")
    exe = os.path.abspath(os.path.join(harness.BUILD, "eventlog-socket"))
    proc = s.spawn(["strace", "-f", "-qq", "-e", "trace=connect", "-o", trace, exe, "metrics",
                    "--http", "127.0.0.1:0", "--linger", "300", s.path("g") + "/*.sock"],
                   stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    port = None
    while port is None:
        with open(s.path("metrics.out"), errors="replace") as f:
            m = re.search(r"http://127\.0\.0\.1:(\d+)/metrics", f.read())
        if m:
            port = int(m.group(1))
        elif proc.poll() is not None or time.monotonic() > deadline:
            raise harness.TestFailure("metrics did not start under strace (ptrace not allowed?)")
        else:
            time.sleep(0.05)
    # The first attempt, then the stretch counted from it.
    deadline = time.monotonic() + 30
    while refused(trace, stale) == 0:
        expect(time.monotonic() < deadline, "the exporter never tried %s" % stale)
        time.sleep(0.05)
    first = refused(trace, stale)
    time.sleep(WATCH_S)
    n = refused(trace, stale) - first + 1
    note("%d refused connects to the stale socket in %d s" % (n, WATCH_S))
    expect(n <= MOST, "%d connects to a stale socket in %d s: no backing off (at most %d)"
           % (n, WATCH_S, MOST))
    expect(n >= 2, "only %d connects in %d s: the stale socket is no longer tried" % (n, WATCH_S))
    # A program started again at the same path (the library replaces the
    # stale file) is found within a pause or a rescan.
    p = Program(s, "fibber-c-main", ["--forever", "20"], unix=stale, stdin=False)
    p.wait_socket(stale)
    deadline = time.monotonic() + 30
    while True:
        sm = samples(scrape(port))
        if value(sm, "eventlog_socket_connected", source="unix:" + stale) == 1:
            break
        expect(time.monotonic() < deadline,
               "the program started at the stale socket's path was not followed in 30 s")
        time.sleep(0.2)
    p.kill()
