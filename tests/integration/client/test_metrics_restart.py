# SPDX-License-Identifier: BSD-3-Clause
"""`eventlog-socket metrics` and a program started again at the same
socket while the exporter still shows its previous run: the new run's
events are skimmed by the new run's own window. The exporter keeps the old
run's model beside it and puts a fresh one in its place when the new run's
header comes; the reader skimmed with the window of the model it was
opened with, the old one, and handed the new model a run of events that
crossed the second it had not reached (its assertion stopped the
exporter). Two stand-in programs, each its own process (so a new pid),
serve hand-made eventlogs on one path in turn."""

import subprocess
import sys
import time

from harness import expect, note, test
from test_metrics import samples, scrape, start_metrics, value
from test_web import SyntheticProgram

# A stand-in program: listens at PATH, frees the path once the exporter is
# connected (the next run binds it), then sends FILE's bytes and closes
# when told to (a line on stdin each).
SERVE = r"""
import os, socket, sys
path, data = sys.argv[1], open(sys.argv[2], "rb").read()
srv = socket.socket(socket.AF_UNIX)
srv.bind(path)
srv.listen(1)
print("listening", flush=True)
c, _ = srv.accept()
os.unlink(path)
srv.close()
print("connected", flush=True)
sys.stdin.readline()
c.sendall(data)
sys.stdin.readline()
c.close()
"""


def stand_in(s, sock, name, data):
    path = s.path(name + ".eventlog")
    with open(path, "wb") as f:
        f.write(data)
    p = s.spawn([sys.executable, "-c", SERVE, sock, path], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, text=True)
    expect(p.stdout.readline().strip() == "listening", "%s did not listen" % name)
    return p


def say(p, line="go"):
    p.stdin.write(line + "\n")
    p.stdin.flush()


def wait_gcs(port, pid, n, what, exporter):
    deadline = time.monotonic() + 20
    while True:
        expect(exporter.proc.poll() is None, "the exporter stopped (%s): exit %r, %s"
               % (what, exporter.proc.poll(), exporter.stderr()[-2000:]))
        sm = samples(scrape(port))
        got = value(sm, "ghc_gc_collections_total", pid=pid, generation="0")
        if got == n:
            return sm
        expect(time.monotonic() < deadline, "%s: %r GCs exported for pid %d, not %d"
               % (what, got, pid, n))
        time.sleep(0.1)


@test(timeout=120, ghc_free=True)
def metrics_restart_skims_with_the_new_run(s):
    '''A program started again while its previous run lingers: the new run's
    events skimmed by its own window (the exporter stopped on an
    assertion).'''
    sock = s.path("r.sock")
    exporter, port = start_metrics(s, "unix:" + sock)
    P = object.__new__(SyntheticProgram)  # its event builders only
    mk = P.MARKER
    # Run 1: a GC every 200 ms for 5 s, then its end.
    run1 = P.header() + P.block(0, [e for ms in range(100, 5001, 200) for e in P.gc(ms, 1)])
    run1 += P.block(None, [(mk, 5200, b"run 1 ends")]) + b"\xff\xff"
    # Run 2: a GC, markers (which `metrics` skims) across two seconds, a GC.
    run2 = P.header() + P.block(0, P.gc(100, 1) + [(mk, ms, b"m") for ms in (300, 1500, 2500)] +
                                P.gc(4000, 1))
    first = stand_in(s, sock, "run1", run1)
    expect(first.stdout.readline().strip() == "connected", "the exporter did not connect")
    second = stand_in(s, sock, "run2", run2)  # the path is free again
    say(first)
    wait_gcs(port, first.pid, 25, "run 1", exporter)
    say(first)  # it exits; the exporter connects to run 2 within 500 ms
    first.wait(10)
    expect(second.stdout.readline().strip() == "connected", "the exporter did not reconnect")
    say(second)
    sm = wait_gcs(port, second.pid, 2, "run 2", exporter)
    expect(value(sm, "ghc_gc_collections_total", pid=first.pid, generation="0") == 25,
           "run 1 still shown beside run 2, with its 25 GCs")
    expect(value(sm, "eventlog_socket_connected", pid=second.pid) == 1, "run 2 connected")
    note("run 1 (pid %d): 25 GCs, lingering; run 2 (pid %d): 2 GCs, its markers skimmed "
         "across 0.3-2.5 s" % (first.pid, second.pid))
    say(second)
    second.wait(10)
