# SPDX-License-Identifier: BSD-3-Clause
"""Clients that close are let go at once (docs/security.md; protocol.md
section 2): a client that connects, reads and closes against a program
that writes nothing is freed as soon as its end-of-file arrives, not when
a write to it fails much later, so such connections never fill the client
limit or the program's descriptors; over a Unix socket and over TCP, for
the owner and for another user the program lets in. A client that only
shuts down its writing side (`nc` once its input ends) is not one of
them: it keeps its stream to the end. Other users are played by uid 65534
(setpriv)."""

import os
import re
import shutil
import socket
import subprocess
import sys
import time

from harness import (CENSUS, END_MARKER, GCTL, Client, Program, Skip, TestFailure, check_stream,
                     expect, note, test)

LIMIT = 16
CYCLES = 200
# An idle program: no flushes on GHC 9.2+ either, so nothing is written to
# a client after its header; GHC 9.0 writes nothing while idle anyway.
IDLE = {"GHC_EVENTLOG_MAX_CLIENTS": str(LIMIT), "GHC_EVENTLOG_FLUSH_INTERVAL_MS": "0"}

# CYCLES times: connect, read the header and whatever follows it at once,
# close (all of it read, so that TCP closes with a FIN, not a reset).
# Prints how many connections got a header.
CYCLER = r"""
import socket, sys, time
family, where, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
served = 0
for i in range(n):
    if family == "unix":
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.settimeout(30)
        c.connect(where)
    else:
        c = socket.create_connection(("127.0.0.1", int(where)), timeout=30)
    data = b""
    while b"datb" not in data:
        b = c.recv(65536)
        if not b:
            break
        data += b
    if b"datb" in data:
        served += 1
        time.sleep(0.005)  # what comes right after the header (definitions)
        c.setblocking(False)
        try:
            while c.recv(65536):
                pass
        except BlockingIOError:
            pass
    c.close()
print(served, flush=True)
"""


def as_nobody(argv):
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        raise Skip("needs root and setpriv to run a client as another user")
    return ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"] + argv


def read_header(sock):
    """What arrives up to the end of the header."""
    sock.settimeout(30)
    data = b""
    while b"datb" not in data:
        b = sock.recv(65536)
        expect(b, "the stream ended before its header did")
        data += b
    return data


def descriptors(p):
    """The program's descriptors that are sockets (its listening socket and
    its clients' connections), by what they point to."""
    fds = "/proc/%d/fd" % p.proc.pid
    links = []
    for fd in os.listdir(fds):
        try:
            links.append(os.readlink(os.path.join(fds, fd)))
        except FileNotFoundError:
            pass
    return sorted(link for link in links if link.startswith("socket:"))


def cycle(s, prefix, family, where):
    k = s.spawn(prefix + [sys.executable, "-c", CYCLER, family, str(where), str(CYCLES)],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/")
    out, err = k.communicate(timeout=90)
    expect(k.returncode == 0, "the cycling client failed: %s" % err[-2000:])
    return int(out)


def wait_all_gone(p, timeout=30.0):
    """The stats once no client is connected; fails after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        st = p.stats()
        if st["clients_connected"] == 0:
            return st
        if time.monotonic() > deadline:
            raise TestFailure("%d closed clients still count as connected %.0f s after they "
                              "closed: %r" % (st["clients_connected"], timeout, st))
        time.sleep(0.05)


def check_freed(s, p, base_fds, served, owner):
    """Every cycle was served, none is left connected, the descriptors are
    back, and the owner's next client gets its stream."""
    refused = p.stats()["clients_refused"]
    expect(served == CYCLES, "%d of %d connect/read/close cycles got a header with "
           "GHC_EVENTLOG_MAX_CLIENTS=%d (%d refused): closed clients filled the limit"
           % (served, CYCLES, LIMIT, refused))
    st = wait_all_gone(p)
    fds = descriptors(p)
    note("%d cycles served, none left connected; socket descriptors %d before, %d after"
         % (served, len(base_fds), len(fds)))
    expect(fds == base_fds, "the program holds the sockets %s, before the clients %s"
           % (fds, base_fds))
    c = owner()
    c.wait_header()
    expect(st["clients_refused"] == 0, "clients were refused: %r" % st)
    p.cmd("marker after")
    p.cmd("quit")
    p.finish()
    summ = check_stream(s, c.wait_eof(), "owner-after")
    expect("after" in [m for _, m in summ.markers], "the owner's stream misses the marker")


@test
def closed_clients_freed_at_once_unix(s):
    """The owner connects, reads the header and closes, 200 times over
    the Unix socket of a program that writes nothing, with
    GHC_EVENTLOG_MAX_CLIENTS=16: every connection is served, no client is
    left connected, the program's descriptors are back where they were,
    and the next client gets the stream."""
    sock = s.path("closed.sock")
    p = Program(s, "probe", unix=sock, env=IDLE)
    p.wait_socket(sock)
    base = descriptors(p)
    served = cycle(s, [], "unix", sock)
    check_freed(s, p, base, served, lambda: Client(s, unix=sock))


@test
def closed_clients_freed_at_once_tcp_other_user(s):
    """The same over loopback TCP, by another user (uid 65534) whom the
    program lets in (GHC_EVENTLOG_ALLOW_OTHER_USERS=1): the 200 closed
    connections never fill the limit, and the owner is served after them."""
    prefix = as_nobody([])
    p = Program(s, "probe", tcp_port=0, env=dict(IDLE, GHC_EVENTLOG_ALLOW_OTHER_USERS="1"))
    port = p.tcp_port()
    base = descriptors(p)
    served = cycle(s, prefix, "tcp", port)
    check_freed(s, p, base, served, lambda: Client(s, tcp_port=port))


def half_closed(s, family):
    """A client that sends a census request, shuts down its writing side
    and reads on, while the program idles for 3 s (long enough for the
    library to look at it again) and then writes: its stream is whole."""
    if family == "unix":
        sock = s.path("half.sock")
        p = Program(s, "probe", unix=sock, env={"GHC_EVENTLOG_FLUSH_INTERVAL_MS": "0"})
        p.wait_socket(sock)
        c = Client(s, unix=sock)
    else:
        p = Program(s, "probe", tcp_port=0, env={"GHC_EVENTLOG_FLUSH_INTERVAL_MS": "0"})
        c = Client(s, tcp_port=p.tcp_port())
    c.wait_header()
    c.send(GCTL + CENSUS)
    c.sock.shutdown(socket.SHUT_WR)
    p.cmd("sleep 3")
    st = p.stats()
    expect(st["clients_connected"] == 1, "the half-closed client was let go: %r" % st)
    p.cmd("flood 1000 half")
    p.cmd("quit")
    p.finish()
    data = c.wait_eof()
    expect(data.endswith(END_MARKER), "the half-closed client's stream has no end marker")
    summ = check_stream(s, data, "half-" + family)
    expect(summ.tagged("half") == list(range(1, 1001)), "the half-closed client misses messages")
    return data


# An empty block of the global buffer: its marker alone (type 18, time,
# size 24, end time, capability 0xffff).
EMPTY_BLOCK = re.compile(rb"\x00\x12.{8}\x00\x00\x00\x18.{8}\xff\xff", re.S)


@test
def half_closed_client_keeps_its_stream_unix(s):
    """protocol.md section 2: a client MAY shut down its writing side (as
    `nc` does when its input ends) without affecting its stream; over the
    Unix socket."""
    half_closed(s, "unix")


@test
def half_closed_client_keeps_its_stream_tcp(s):
    """The same over TCP, where the library sends such a client an empty
    block to learn whether it is still there: the stream still parses and
    holds everything, and the empty block is in it."""
    data = half_closed(s, "tcp")
    expect(EMPTY_BLOCK.search(data), "no empty block in the half-closed TCP client's stream")


@test
def half_closed_then_gone_unix(s):
    """A client that shuts down its writing side and closes later, while
    the program writes nothing: it is let go within seconds (the library
    looks at such clients once a second), not at the next write."""
    sock = s.path("later.sock")
    p = Program(s, "probe", unix=sock, env=IDLE)
    p.wait_socket(sock)
    c = Client(s, unix=sock, read=False)  # read here: a reading thread would keep it open
    read_header(c.sock)
    c.sock.shutdown(socket.SHUT_WR)
    p.cmd("sleep 1")
    expect(p.stats()["clients_connected"] == 1, "the half-closed client was let go")
    c.close()
    wait_all_gone(p)
    p.cmd("quit")
    p.finish()


@test
def half_closed_then_gone_tcp_at_the_limit(s):
    """Over TCP a client that shut down its writing side, read the empty
    block it was sent, and closed later can only be told gone by sending it
    bytes again: with GHC_EVENTLOG_MAX_CLIENTS=2 and two such clients gone,
    the owner's next connection is served (the library sends them another
    empty block before it would refuse it), and they are let go."""
    p = Program(s, "probe", tcp_port=0, env=dict(IDLE, GHC_EVENTLOG_MAX_CLIENTS="2"))
    port = p.tcp_port()
    gone = [Client(s, tcp_port=port, read=False) for _ in range(2)]
    for c in gone:
        data = read_header(c.sock)
        c.sock.shutdown(socket.SHUT_WR)
        while not EMPTY_BLOCK.search(data):
            try:
                b = c.sock.recv(65536)
            except socket.timeout:
                raise TestFailure("no empty block within 30 s for a half-closed TCP client")
            expect(b, "the half-closed client's stream ended")
            data += b
        c.close()
    time.sleep(1.5)  # the next empty block may be sent a second after the first
    # Still counted, unless something else the program wrote reached them
    # after they closed (then their reset told already).
    note("%d of the 2 closed clients still counted before the owner connects"
         % p.stats()["clients_connected"])
    owner = Client(s, tcp_port=port)
    owner.wait_header()
    expect(p.stats()["clients_refused"] == 0, "a client was refused")
    # Any gone client the limit did not need is let go at its next empty
    # block (ES_CLIENT_PROBE_MS, 10 s).
    deadline = time.monotonic() + 30
    while (st := p.stats())["clients_connected"] != 1:
        expect(time.monotonic() < deadline, "closed clients still counted: %r" % st)
        time.sleep(0.1)
    p.cmd("quit")
    p.finish()
    check_stream(s, owner.wait_eof(), "owner-limit")
