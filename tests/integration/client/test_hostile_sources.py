# SPDX-License-Identifier: BSD-3-Clause
"""Sources that try to bloat `metrics` and `serve`: a glob that matches
hundreds of planted files and silent sockets beside one real program (a
source earns its model only with an eventlog header; descriptors, memory,
log lines and `source` labels stay bounded, and the program is followed),
and a program that floods its stream with IPE events (the info tables'
names are bounded per program, kept by no figures-only model, and freed
with it)."""

import os
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.request

import fakeprog as fp
from harness import expect, note, test
from test_metrics import samples, start_metrics, value
from test_trust import NOBODY, rss_kib, start

# A process holding `n` listening sockets at DIR/s-N.sock that never
# accept: connects succeed (up to the backlog) and no byte ever comes.
SILENT = r"""
import os, resource, socket, sys, time
d, n = sys.argv[1], int(sys.argv[2])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, n + 64)), hard))
held = []
for i in range(n):
    s = socket.socket(socket.AF_UNIX)
    s.bind(os.path.join(d, "s-%04d.sock" % i))
    s.listen(4)
    held.append(s)
print("listening", flush=True)
time.sleep(600)
"""


def fds(pid):
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except FileNotFoundError:
        return -1


def scrape_text(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        return r.read().decode("utf-8", errors="replace")


@test(timeout=180, ghc_free=True)
def metrics_glob_of_planted_paths(s):
    """300 regular files and 300 silent sockets planted where the glob
    looks, beside one program: the program is followed; the exporter
    never holds more than 64 connections of them at once (plus its own
    few), stays under 40 MiB, writes at most a line a second, and exports
    one `source` (it made a model, a connection, a line and a series for
    every path: 6 MB to 1.5 GB in the audit)."""
    d = s.path("g")
    os.mkdir(d)
    for i in range(300):
        with open(os.path.join(d, "f-%04d.sock" % i), "w") as f:
            f.write("not a socket\n")
    silent = s.spawn([sys.executable, "-c", SILENT, d, "300"], stdout=subprocess.PIPE, text=True)
    expect(silent.stdout.readline().strip() == "listening", "the silent sockets did not listen")
    real = os.path.join(d, "real.sock")
    fp.start(s, real, fp.eventlog(fp.block(fp.program([b"real"], 555) + fp.gc(10)), end=False))
    t0 = time.monotonic()
    exporter, port = start_metrics(s, d + "/*.sock")
    most_fds = rss = 0
    deadline = t0 + 120
    while True:
        most_fds = max(most_fds, fds(exporter.proc.pid))
        rss = max(rss, rss_kib(exporter.proc.pid))
        sm = samples(scrape_text(port))
        if value(sm, "eventlog_socket_connected", program="real") == 1:
            break
        expect(time.monotonic() < deadline, "the real program was not followed in 120 s")
        time.sleep(0.5)
    found = time.monotonic() - t0
    for _ in range(10):  # a few more tries of the planted paths
        most_fds = max(most_fds, fds(exporter.proc.pid))
        rss = max(rss, rss_kib(exporter.proc.pid))
        time.sleep(0.5)
    sources = {dict(k[1])["source"] for k in samples(scrape_text(port))}
    lines = len(exporter.stderr().splitlines())
    seconds = time.monotonic() - t0
    note("followed after %.1f s; at most %d descriptors, %d KiB; %d stderr lines in %.0f s; "
         "%d sources" % (found, most_fds, rss, lines, seconds, len(sources)))
    expect(sources == {"unix:" + real}, "sources exported: %d (%s)"
           % (len(sources), sorted(sources)[:3]))
    expect(most_fds <= 64 + 24, "the exporter held %d descriptors" % most_fds)
    expect(rss < 40 * 1024, "the exporter grew to %d KiB" % rss)
    expect(lines <= seconds + 3, "%d lines on stderr in %.0f s" % (lines, seconds))


def ipe_flood(n):
    """`n` IPE events of distinct tables, each named by a 255-byte label
    and a 511-byte source location (a 769-byte name), in 2 MiB blocks,
    after the program's own block."""
    blocks, evs, size = [], [], 0
    for i in range(n):
        evs.append(fp.ipe(0x400000 + 16 * i, (b"l%07d" % i).ljust(255, b"l"),
                          (b"f%07d" % i).ljust(511, b"f"), ms=2))
        size += 800
        if size > (2 << 20) - 4096:
            blocks.append(fp.block(evs))
            evs, size = [], 0
    if evs:
        blocks.append(fp.block(evs))
    return fp.header() + fp.block(fp.program([b"ipe"], 4711) + fp.heap_profile(breakdown=8) +
                                  fp.gc(1)) + b"".join(blocks)


@test(timeout=180, ghc_free=True)
def metrics_and_serve_bound_ipe_tables(s):
    """A program that sends 100 000 IPE events with 769-byte names (77 MB
    of them): `metrics` keeps none (it exports addresses) and stays within
    a few MiB of where it started; `serve` keeps at most 32 MiB of names
    and stays under 64 MiB (both kept them all: 823 MB and rising in the
    audit)."""
    data = ipe_flood(100000)
    sock_m, sock_s = s.path("m.sock"), s.path("s.sock")
    fp.start(s, sock_m, data)
    fp.start(s, sock_s, data)
    exporter, port = start_metrics(s, "unix:" + sock_m, extra=["--linger", "1"])
    base = rss_kib(exporter.proc.pid)
    srv, url = start(s, sock_s, "127.0.0.1:0")
    sport = int(re.search(r":(\d+)/", url).group(1))
    for who, p in (("metrics", port), ("serve", sport)):
        deadline = time.monotonic() + 90
        while True:
            sm = samples(scrape_text(p))
            got = value(sm, "eventlog_socket_received_bytes_total")
            if got is not None and got >= len(data):
                break
            expect(time.monotonic() < deadline,
                   "%s received %r of %d bytes" % (who, got, len(data)))
            time.sleep(0.5)
    grew = rss_kib(exporter.proc.pid) - base
    srss = rss_kib(srv.proc.pid)
    note("metrics grew by %d KiB; serve at %d KiB" % (grew, srss))
    expect(grew < 8 * 1024, "metrics grew by %d KiB for the IPE events" % grew)
    expect(srss < 64 * 1024, "serve holds %d KiB" % srss)


# A process holding `n` listening sockets at DIR/s-N.sock that accept
# every connection and never send a byte; it prints "ACCEPTED CLOSED"
# whenever either count changes (CLOSED: connections whose other end, the
# exporter, closed them).
SILENT_ACCEPTING = r"""
import os, selectors, socket, sys
d, n = sys.argv[1], int(sys.argv[2])
sel = selectors.DefaultSelector()
for i in range(n):
    s = socket.socket(socket.AF_UNIX)
    s.bind(os.path.join(d, "s-%04d.sock" % i))
    os.chmod(os.path.join(d, "s-%04d.sock" % i), 0o777)
    s.listen(64)
    s.setblocking(False)
    sel.register(s, selectors.EVENT_READ, True)
print("listening", flush=True)
accepted = closed = 0
said = None
while True:
    for key, _ in sel.select(0.5):
        if key.data:
            try:
                c, _ = key.fileobj.accept()
            except OSError:
                continue
            c.setblocking(False)
            sel.register(c, selectors.EVENT_READ, False)
            accepted += 1
            continue
        try:
            got = key.fileobj.recv(4096)
        except BlockingIOError:
            continue
        except OSError:
            got = b""
        if not got:
            sel.unregister(key.fileobj)
            key.fileobj.close()
            closed += 1
    if said != (accepted, closed):
        said = (accepted, closed)
        print("%d %d" % said, flush=True)
"""

# Silent sockets planted, and how long the program that starts among them
# may take to be exported: about 90 s for 3000 before discovery was
# shared by owner (tried 64 at a time, 2 s each, oldest paths first),
# about 5 s since (a rescan, a free probe, a publish).
PLANTED = 3000
FOUND_S = 30


class Counts:
    """The planter's latest "ACCEPTED CLOSED" line, read in a thread."""

    def __init__(self, proc):
        self.accepted = self.closed = 0
        threading.Thread(target=self._read, args=(proc.stdout,), daemon=True).start()

    def _read(self, f):
        for line in f:
            a, c = line.split()
            self.accepted, self.closed = int(a), int(c)


def socket_fds(pid):
    n = 0
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            n += os.readlink("/proc/%d/fd/%s" % (pid, fd)).startswith("socket:")
        except OSError:
            pass
    return n


@test(timeout=240, ghc_free=True, serial=True)
def metrics_silent_sockets_of_another_user(s):
    """3000 listening sockets that another user (uid 65534, with root and
    setpriv; else ours) planted where the glob looks, which accept and
    never send a byte: a program started while the exporter is busy with
    them is exported within 30 s (about 90 s before). The exporter holds
    at most 64 connections of them at once, and once the planted files
    are gone it has closed every connection it made to them and holds
    only its own few sockets."""
    other = os.geteuid() == 0 and shutil.which("setpriv") is not None
    os.chmod(s.dir, 0o711)  # the test's own directory: others may pass through
    d = s.path("g")
    os.mkdir(d)
    os.chmod(d, 0o1777)
    argv = [sys.executable, "-c", SILENT_ACCEPTING, d, str(PLANTED)]
    planter = s.spawn((NOBODY if other else []) + argv, stdout=subprocess.PIPE, text=True)
    expect(planter.stdout.readline().strip() == "listening", "the silent sockets did not listen")
    counts = Counts(planter)
    exporter, port = start_metrics(s, d + "/*.sock")
    # The exporter is busy with the planted sockets: the program starts now.
    deadline = time.monotonic() + 60
    while counts.accepted < 64:
        expect(time.monotonic() < deadline, "the exporter tried %d planted sockets in 60 s"
               % counts.accepted)
        time.sleep(0.1)
    real = os.path.join(d, "real.sock")
    fp.start(s, real, fp.eventlog(fp.block(fp.program([b"real"], 555) + fp.gc(10)), end=False))
    t0 = time.monotonic()
    most_fds = 0
    while True:
        most_fds = max(most_fds, fds(exporter.proc.pid))
        sm = samples(scrape_text(port))
        if value(sm, "eventlog_socket_connected", program="real") == 1:
            break
        expect(time.monotonic() < t0 + FOUND_S,
               "the program was not exported within %d s among %d silent sockets (%d of them "
               "tried)" % (FOUND_S, PLANTED, counts.accepted))
        time.sleep(0.25)
    found = time.monotonic() - t0
    # A few more rounds of probes: never more than 64 connections to the
    # planted sockets open at once.
    deadline = time.monotonic() + 60
    most_open = 0
    while counts.accepted < 5 * 64:
        most_fds = max(most_fds, fds(exporter.proc.pid))
        most_open = max(most_open, counts.accepted - counts.closed)
        expect(time.monotonic() < deadline, "the exporter tried %d planted sockets in 60 s"
               % counts.accepted)
        time.sleep(0.1)
    # The planted files go: every connection the exporter made to them is
    # closed, and what it holds is back to its own few sockets.
    for name in os.listdir(d):
        if name != "real.sock":
            os.unlink(os.path.join(d, name))
    deadline = time.monotonic() + 60
    while counts.closed < counts.accepted or socket_fds(exporter.proc.pid) > 8:
        most_fds = max(most_fds, fds(exporter.proc.pid))
        expect(time.monotonic() < deadline,
               "60 s after the planted files went: %d of %d connections to them closed, the "
               "exporter holds %d sockets" % (counts.closed, counts.accepted,
                                              socket_fds(exporter.proc.pid)))
        time.sleep(0.25)
    note("%s sockets: the program exported %.1f s after it started; %d connections to the "
         "planted sockets, at most %d open at once, all closed; at most %d descriptors; %d "
         "sockets held at the end" % ("uid 65534's" if other else "our own", found,
                                      counts.accepted, most_open, most_fds,
                                      socket_fds(exporter.proc.pid)))
    expect(most_fds <= 64 + 24, "the exporter held %d descriptors" % most_fds)
    expect(most_open <= 64 + 8, "%d connections to the planted sockets open at once" % most_open)
    sm = samples(scrape_text(port))
    expect(value(sm, "eventlog_socket_connected", program="real") == 1,
           "the program is no longer followed")
