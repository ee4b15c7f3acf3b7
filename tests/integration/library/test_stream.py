# SPDX-License-Identifier: BSD-3-Clause
"""What a client receives: whole streams over Unix and TCP sockets, from
the start or joining mid-run, after reconnecting, after a switch from the
RTS's file writer."""

import os
import socket
import stat
import subprocess
import time

from harness import (Client, END_MARKER, FLOOD, GCTL, Program, check_stream, expect, fib_markers,
                     ghc_version, serve, test)


@test
def full_stream_unix(s):
    """A client connected from the start gets the whole run, end marker included."""
    sock = s.path("fib.sock")
    p = Program(s, "fibber-c-main", ["20", "21", "22"], unix=sock, wait=True, stdin=False)
    p.wait_socket(sock)
    mode = stat.S_IMODE(os.stat(sock).st_mode)
    expect(mode == 0o600, "socket mode is %o, expected 600" % mode)
    c = Client(s, unix=sock)
    data = c.wait_eof()
    out = p.finish()
    expect(p.proc.returncode == 0, "fibber exited with %s" % p.proc.returncode)
    expect(data.endswith(END_MARKER), "stream does not end with the end-of-data marker")
    summ = check_stream(s, data, "full")
    expect(fib_markers(summ) == ["fib 20 = 6765", "fib 21 = 10946", "fib 22 = 17711"],
           "markers: %r" % fib_markers(summ))
    expect("fib 22 = 17711" in out, "program output: %r" % out)
    for ev in ("RtsIdentifier", "ProgramArgs", "CapsetCreate", "CapCreate", "WallClockTime"):
        expect(summ.counts.get(ev, 0) >= 1, "no %s event" % ev)
    expect(not os.path.exists(sock), "socket file left behind at exit")


@test
def full_stream_tcp(s):
    """The same over TCP on a port picked by the system, on loopback."""
    p = Program(s, "fibber-c-main", ["20", "21"], tcp_port=0, wait=True, stdin=False)
    port = p.tcp_port()
    c = Client(s, tcp_port=port)
    data = c.wait_eof()
    p.finish()
    expect(p.proc.returncode == 0, "fibber exited with %s" % p.proc.returncode)
    summ = check_stream(s, data, "tcp")
    expect(fib_markers(summ) == ["fib 20 = 6765", "fib 21 = 10946"],
           "markers: %r" % fib_markers(summ))


@test
def nc_client(s):
    """`nc -U` as the client: what a user types from the README."""
    sock = s.path("nc.sock")
    out_path = s.path("nc.eventlog")
    p = Program(s, "fibber-c-main", ["19", "20"], unix=sock, wait=True, stdin=False)
    p.wait_socket(sock)
    with open(out_path, "wb") as out:
        nc = subprocess.run(["nc", "-U", sock], stdin=subprocess.DEVNULL, stdout=out,
                            timeout=60)
    p.finish()
    expect(nc.returncode == 0, "nc exited with %d" % nc.returncode)
    with open(out_path, "rb") as f:
        summ = check_stream(s, f.read(), "nc")
    expect(len(fib_markers(summ)) == 2, "markers: %r" % fib_markers(summ))


@test
def events_before_first_client(s):
    """Nothing is lost before the first client: it gets what came before it."""
    sock = s.path("early.sock")
    p = Program(s, "probe", unix=sock)
    p.wait_socket(sock)
    p.cmd("marker early")
    p.cmd("flood %d pre" % FLOOD)  # several MiB: chunks are written now
    c = Client(s, unix=sock)
    p.wait_clients(1)
    p.cmd("flood 1000 post")
    p.cmd("quit")
    p.finish()
    summ = check_stream(s, c.wait_eof(), "early")
    expect(summ.marker_time("early") > 0, "early marker present")
    pre = summ.tagged("pre")
    expect(pre == list(range(1, FLOOD + 1)), "got %d of %d early messages" % (len(pre), FLOOD))
    expect(summ.tagged("post") == list(range(1, 1001)), "later messages complete")
    expect(summ.counts.get("RtsIdentifier", 0) == 1, "start-up events present")


@test
def reconnect(s):
    """A client leaves mid-run; a new one gets a complete, valid stream."""
    p, connect = serve(s, "re")
    a = connect()
    p.cmd("flood %d first" % FLOOD)
    a.wait_bytes(1 << 20)
    a.close()
    b = connect()
    p.wait_clients(2)  # taken in before what it must get
    p.cmd("marker second-client")
    p.cmd("flood %d second" % FLOOD)
    p.cmd("quit")
    p.finish()
    expect(p.proc.returncode == 0, "probe exited with %s" % p.proc.returncode)
    summ = check_stream(s, b.wait_eof(), "second")
    expect(summ.tagged("second") == list(range(1, FLOOD + 1)), "second client has every message")
    summ.marker_time("second-client")


@test
def client_joins_mid_run(s):
    """A client joining while another streams gets a valid stream from the
    next chunk; the first client is undisturbed."""
    p, connect = serve(s, "mid")
    a = connect()
    p.cmd("flood %d before" % FLOOD)
    a.wait_bytes(1 << 20)
    b = connect()
    p.wait_clients(2)  # taken in before what it must get
    p.cmd("flood %d after" % FLOOD)
    p.cmd("quit")
    p.finish()
    sa = check_stream(s, a.wait_eof(), "first")
    sb = check_stream(s, b.wait_eof(), "joiner")
    expect(sa.tagged("before") == list(range(1, FLOOD + 1)), "first client misses early data")
    expect(sa.tagged("after") == list(range(1, FLOOD + 1)), "first client misses late data")
    expect(sb.tagged("after") == list(range(1, FLOOD + 1)), "joiner misses data after joining")
    expect(len(sb.tagged("before")) < FLOOD, "joiner should not get the whole past")


@test
def client_vanishes(s):
    """Clients that disconnect abruptly do not disturb the program."""
    sock = s.path("gone.sock")
    p = Program(s, "probe", unix=sock, wait=True)
    p.wait_socket(sock)
    keep = Client(s, unix=sock)
    for i in range(5):
        c = Client(s, unix=sock)
        c.send(GCTL)  # half a frame, then gone
        c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        c.close()
        p.cmd("flood 20000 x%d" % i)
    p.cmd("quit")
    p.finish()
    expect(p.proc.returncode == 0, "probe exited with %s" % p.proc.returncode)
    summ = check_stream(s, keep.wait_eof(), "kept")
    expect(summ.tagged("x4") == list(range(1, 20001)), "remaining client got everything")


@test
def start_on_running_rts(s):
    """eventlog_socket_start_unix switches a running program from the RTS's
    file writer to the socket; the client's stream parses (on GHC 9.0 the
    restart puts a stale block marker before the header, which must not
    reach the client)."""
    sock = s.path("late.sock")
    p = Program(s, "probe-late")
    p.cmd("marker before-switch")
    p.cmd("start-unix " + sock)
    c = Client(s, unix=sock)
    p.wait_clients(1)  # taken in before what it must get
    p.cmd("marker after-switch")
    p.cmd("flood %d after" % FLOOD)
    p.proc.stdin.write(("start-unix " + s.path("again.sock") + "\n").encode())
    p.proc.stdin.flush()
    again = p.readline()
    expect(again.startswith("error ") and "already" in again, "second start: %r" % again)
    p.cmd("quit")
    p.finish()
    expect(p.proc.returncode == 0, "probe exited with %s" % p.proc.returncode)
    summ = check_stream(s, c.wait_eof(), "switched")
    summ.marker_time("after-switch")
    expect(summ.tagged("after") == list(range(1, FLOOD + 1)), "all messages after the switch")
    with open(s.path("probe-late.eventlog"), "rb") as f:
        file_part = check_stream(s, f.read(), "file-part")
    file_part.marker_time("before-switch")


DEFINITIONS = ("RtsIdentifier", "ProgramArgs", "CapsetCreate", "CapCreate", "HeapProfBegin",
               "CapsetAssignCap", "WallClockTime", "OsProcessPid", "HeapInfoGHC")


@test
def late_joiner_self_contained(s):
    """A client joining after 5 s of a -hT run gets the start-up definitions
    (RTS, program, capabilities, heap profile) in a block after the header,
    and its heap samples decode."""
    p, connect = serve(s, "late", ["--busy"], rts=["-hT", "-i0.1"])
    early = connect()
    p.cmd("flood %d before" % FLOOD)
    time.sleep(5.0)
    late = connect()
    p.wait_clients(2)  # taken in before what it must get
    if ghc_version() >= (9, 2):
        # Heap samples reach it live (GHC 9.0 sends them all at exit, in
        # the global buffer): wait for one rather than a fixed time.
        deadline = time.monotonic() + 30
        while not check_stream(s, late.received(), "late-so-far", partial=True).samples:
            expect(time.monotonic() < deadline, "no heap sample reached the late joiner")
            time.sleep(0.2)
    p.cmd("flood 1000 after")
    p.cmd("quit")
    p.finish()
    se = check_stream(s, early.wait_eof(), "early")
    sl = check_stream(s, late.wait_eof(), "late")
    for ev in DEFINITIONS:
        expect(sl.counts.get(ev, 0) >= 1, "late joiner has no %s" % ev)
        expect(sl.counts.get(ev, 0) == se.counts.get(ev, 0),
               "%s: late joiner %d, early client %d" % (ev, sl.counts.get(ev, 0),
                                                        se.counts.get(ev, 0)))
    expect(len(sl.samples) > 0 and sl.counts.get("HeapProfSampleString", 0) > 0,
           "late joiner's heap samples: %d" % len(sl.samples))
    expect(len(sl.tagged("before")) < FLOOD, "late joiner should not get the whole past")
    expect(sl.tagged("after") == list(range(1, 1001)), "late joiner gets what follows")
