#!/usr/bin/env python3
"""Integration tests: the real programs, built with the real GHC and this
library, streaming to real clients over Unix and TCP sockets. Every stream
is judged by the ghc-events-based checker.

    python3 tests/integration/run.py [--build DIR] [TEST...]

Each test runs in its own process with a timeout; the output is TAP, ending
with "integration: N passed, N failed"."""

import os
import re
import resource
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Client, Program, Scope, Skip, check_stream, expect, note  # noqa: E402

TIMEOUT = 120  # seconds per test
END_MARKER = b"\xff\xff"
GCTL = b"GCTL"
START, STOP, CENSUS = b"\x01", b"\x02", b"\x03"
CC_START, CC_STOP = b"\x04", b"\x05"
# Upstream eventlog-socket's framing: magic, version 0, namespace length,
# namespace, command id; its built-in ids for our commands.
UMAGIC = b"\xf0\x9e\x97\x8c"
UPSTREAM_ID = {START: 3, STOP: 4, CENSUS: 5, CC_START: 1, CC_STOP: 2}


def upstream(cmd, namespace=b"eventlog-socket"):
    """The upstream frame for one of our command bytes (or an id, as int)."""
    cid = cmd if isinstance(cmd, int) else UPSTREAM_ID[cmd]
    return UMAGIC + b"\x00" + bytes([len(namespace)]) + namespace + bytes([cid])
# Enough user messages to fill GHC 9.0's 2 MiB capability buffer more than
# once, so chunks reach the library while the program runs.
FLOOD = 120000

TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def fib_markers(summary):
    return [m for _, m in summary.markers if m.startswith("fib ")]


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
    p.cmd("marker second-client")
    p.cmd("flood %d second" % FLOOD)
    p.cmd("quit")
    p.finish()
    expect(p.proc.returncode == 0, "probe exited with %s" % p.proc.returncode)
    summ = check_stream(s, b.wait_eof(), "second")
    expect(summ.tagged("second") == list(range(1, FLOOD + 1)), "second client has every message")
    summ.marker_time("second-client")


def serve(s, name, args=(), rts=(), tcp=False, exe="probe"):
    """Start the probe waiting for a client on a Unix socket or TCP; return
    the program and a function that connects a client."""
    if tcp:
        p = Program(s, exe, list(args), tcp_port=0, wait=True, rts=rts)
        port = p.tcp_port()
        return p, lambda: Client(s, tcp_port=port)
    sock = s.path(name + ".sock")
    p = Program(s, exe, list(args), unix=sock, wait=True, rts=rts)
    p.wait_socket(sock)
    return p, lambda: Client(s, unix=sock)


def many_clients(s, n, tcp=False):
    p, connect = serve(s, "many", tcp=tcp)
    clients = [connect() for _ in range(n)]
    time.sleep(0.2)  # let every connection be accepted before the data
    p.cmd("flood %d all" % FLOOD)
    p.cmd("quit")
    p.finish()
    first = None
    for i, c in enumerate(clients):
        data = c.wait_eof()
        summ = check_stream(s, data, "client%d" % i)
        expect(summ.tagged("all") == list(range(1, FLOOD + 1)), "client %d misses messages" % i)
        if first is None:
            first = data
            hlen = first.index(b"datb") + 4
        # Clients connect one after another, and on GHC >= 9.2 chunks flow
        # meanwhile: each gets the header, then a suffix of the first
        # client's stream, from a chunk boundary on.
        expect(data[:hlen] == first[:hlen], "client %d got another header" % i)
        rest = data[hlen:]
        if not first.endswith(rest) and rest[22:24] == b"\xff\xff":
            # A client that missed start-up chunks gets their definition
            # events first, in a block of their own (global buffer).
            rest = rest[int.from_bytes(rest[10:14], "big"):]
        expect(first.endswith(rest), "client %d's chunks are not the first client's" % i)


@test
def two_clients(s):
    """Two clients at once each get the full stream."""
    many_clients(s, 2)


@test
def sixteen_clients(s):
    """Sixteen clients at once each get the full, identical stream."""
    many_clients(s, 16)


@test
def sixteen_clients_tcp(s):
    """Sixteen TCP clients at once each get the full, identical stream."""
    many_clients(s, 16, tcp=True)


@test
def client_joins_mid_run(s):
    """A client joining while another streams gets a valid stream from the
    next chunk; the first client is undisturbed."""
    p, connect = serve(s, "mid")
    a = connect()
    p.cmd("flood %d before" % FLOOD)
    a.wait_bytes(1 << 20)
    b = connect()
    time.sleep(0.2)
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


def heap_script(s, name, steps, rts=("-hT", "-i0.02"), tcp=False, exe="probe"):
    """Run the probe (busy, heap profiling) with a client connected from the
    start, and play `steps`: a string is a marker to post, bytes are sent as
    they are (or a (bytes, pieces) pair, split into that many sends), a number
    is a pause in seconds. Returns the summary and every marker's time."""
    p, connect = serve(s, name, ["--busy"], rts=list(rts), tcp=tcp, exe=exe)
    c = connect()
    for step in steps:
        if isinstance(step, str):
            p.cmd("marker " + step)
        elif isinstance(step, (int, float)):
            time.sleep(step)
        elif isinstance(step, tuple):
            c.send(*step)
        else:
            c.send(step)
    p.cmd("quit")
    p.finish()
    summ = check_stream(s, c.wait_eof(), name)
    return summ, {m: summ.marker_time(m) for m in steps if isinstance(m, str)}


def heap_run(s, frames_for, pieces=1, garbage=b"", tcp=False):
    """Heap profiling phases: sampling (until A), stopped (B..C), one census
    (C..D), resumed (D..E)."""
    return heap_script(s, "heap", [
        0.5, "A", (garbage + frames_for(STOP), pieces), 0.3, "B", 1.0,
        "C", (garbage + frames_for(CENSUS), pieces), 0.5,
        "D", (garbage + frames_for(START), pieces), 0.5, "E"], tcp=tcp)


def check_heap_phases(summ, t):
    before = summ.samples_between(0, t["A"])
    stopped = summ.samples_between(t["B"], t["C"])
    census = summ.samples_between(t["C"], t["D"])
    resumed = summ.samples_between(t["D"], t["E"])
    detail = "samples: before=%d stopped=%d census=%d resumed=%d" % (before, stopped, census,
                                                                     resumed)
    expect(before >= 3, "heap profiling was not sampling before the stop; " + detail)
    expect(stopped == 0, "samples continued after 0x02; " + detail)
    expect(census == 1, "0x03 should give exactly one sample; " + detail)
    expect(resumed >= 3, "sampling did not resume after 0x01; " + detail)


@test
def heap_control(s):
    """0x02 stops heap samples, 0x03 gives exactly one, 0x01 resumes them."""
    summ, t = heap_run(s, lambda cmd: GCTL + cmd)
    check_heap_phases(summ, t)


@test
def heap_control_tcp(s):
    """Heap control over a TCP connection."""
    summ, t = heap_run(s, lambda cmd: GCTL + cmd, tcp=True)
    check_heap_phases(summ, t)


@test
def heap_control_garbage_and_split_frames(s):
    """The same commands buried in garbage, behind a partial magic, sent
    byte by byte: they still take effect, and nothing else does."""
    junk = bytes((i * 7 + 3) % 256 for i in range(1 << 20)).replace(b"G", b"g")
    summ, t = heap_run(s, lambda cmd: b"GCT" + GCTL + b"\x09" + GCTL + cmd, pieces=9,
                       garbage=junk)
    check_heap_phases(summ, t)


@test
def census_flood_rate_limited(s):
    """A client sending census requests without pause for 3 s (300000 of
    them) gets one census a second, not one each: the program is not made
    to collect its heap thousands of times."""
    p, connect = serve(s, "flood", ["--busy"], rts=["-hT", "-i100"])
    c = connect()
    time.sleep(0.3)
    p.cmd("marker A")
    for _ in range(30):
        c.send((GCTL + CENSUS) * 10000)
        time.sleep(0.1)
    p.cmd("marker B")
    time.sleep(1.5)  # the request folded last acts an interval after the one before
    p.cmd("marker C")
    p.cmd("quit")
    p.finish()
    summ = check_stream(s, c.wait_eof(), "flood")
    during = summ.samples_between(summ.marker_time("A"), summ.marker_time("B"))
    after = summ.samples_between(summ.marker_time("B"), summ.marker_time("C"))
    note("censuses: %d during 3 s of requests, %d after them" % (during, after))
    # One a second while requests come (3 or 4 in 3 s and a bit), and the
    # request folded last, an interval after the census before it.
    expect(3 <= during + after <= 6 and during >= 2,
           "%d + %d censuses for 3 s of requests (expected about 4)" % (during, after))


@test
def heap_control_upstream(s):
    """The same phases driven by upstream eventlog-socket's frames (ids 4,
    5, 3), as eventlog-live's control server writes them."""
    summ, t = heap_run(s, upstream)
    check_heap_phases(summ, t)


@test
def heap_control_mixed_framings_and_junk(s):
    """Both framings on one connection, each command behind junk of both
    kinds (a partial GCTL magic, a wrong version byte, an unknown namespace,
    an unknown id, a length byte running past its namespace), sent in
    pieces: each command takes effect exactly once, nothing else does."""
    junk = bytes((i * 7 + 3) % 256 for i in range(1 << 16)).replace(b"G", b"g")
    decoys = (b"GCT" + UMAGIC + b"\x01" + upstream(1, b"other") + upstream(6) + GCTL + b"\x09" +
              UMAGIC + b"\x00\xff" + b"eventlog-socket")
    framing = {STOP: upstream, CENSUS: lambda c: GCTL + c, START: upstream}
    summ, t = heap_run(s, lambda cmd: decoys + framing[cmd](cmd), pieces=13, garbage=junk)
    check_heap_phases(summ, t)


def profiled_probe(s):
    """The probe built with profiling (ghc -prof), once per build directory
    (BUILD/probe-prof, rebuilt when the library or the probe changed); skip
    the test where this GHC has no profiling libraries."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    exe = os.path.abspath(os.path.join(harness.BUILD, "probe-prof"))
    lib = os.path.abspath(os.path.join(harness.BUILD, "libeventlog-socket.a"))
    sources = [lib, os.path.join(root, "tests/probe/Main.hs"),
               os.path.join(root, "examples/fibber-c-main/cbits/fibber-c-main.c")]
    if os.path.exists(exe) and all(os.path.getmtime(exe) > os.path.getmtime(f) for f in sources):
        return exe
    major, minor = harness.ghc_version()
    uv = subprocess.run(["pkg-config", "--libs", "libuv"], capture_output=True, text=True)
    argv = (["ghc", "-prof", "-O", "-threaded", "-no-hs-main"] +
            (["-eventlog"] if (major, minor) < (9, 4) else []) +
            ["-Iinclude", "-outputdir", os.path.join(harness.BUILD, "hs", "probe-prof"), "-o", exe,
             "tests/probe/Main.hs",
             "examples/fibber-c-main/cbits/fibber-c-main.c",
             os.path.abspath(os.path.join(harness.BUILD, "libeventlog-socket.a"))] +
            uv.stdout.split())
    # Sources by relative path: GHC puts a C file's object under -outputdir
    # only then (next to an absolute path's source otherwise).
    res = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=root)
    if res.returncode != 0:
        out = res.stdout + res.stderr
        if "profiling libraries" in out:
            raise Skip("GHC %d.%d has no profiling libraries (Debian: apt-get install ghc-prof)"
                       % (major, minor))
        raise harness.TestFailure("ghc -prof failed:\n" + out)
    return exe


def check_cc_phases(summ, t):
    phases = [("before", 0, "A"), ("stopped", "B", "C"), ("started", "D", "E"),
              ("stopped again", "F", "G"), ("started again", "H", "I")]
    counts = [summ.cc_samples_between(t[a] if a else 0, t[b]) for _, a, b in phases]
    detail = "cost-centre samples: " + ", ".join(
        "%s=%d" % (name, n) for (name, _, _), n in zip(phases, counts))
    note(detail)
    expect(counts[0] >= 3, "no cost-centre samples before the stop; " + detail)
    expect(counts[1] == 0, "samples continued after GCTL 0x05; " + detail)
    expect(counts[2] >= 3, "upstream id 1 did not start sampling; " + detail)
    expect(counts[3] == 0, "samples continued after upstream id 2; " + detail)
    expect(counts[4] >= 3, "GCTL 0x04 did not start sampling; " + detail)


def cc_script(s, rts):
    exe = profiled_probe(s)
    return heap_script(s, "cc", [
        # A start or stop acts at most once a second (protocol.md, section 2).
        0.5, "A", GCTL + CC_STOP, 0.3, "B", 1.0, "C", upstream(CC_START), 0.3, "D", 1.0, "E",
        upstream(CC_STOP), 0.3, "F", 1.0, "G", GCTL + CC_START, 0.3, "H", 0.5, "I"],
        rts=rts, exe=exe)


@test
def cost_centre_control(s):
    """In a profiled program (+RTS -p), cost-centre samples stop and start
    on GCTL 0x05/0x04 and on upstream ids 2/1."""
    summ, t = cc_script(s, ["-p"])
    check_cc_phases(summ, t)


@test
def cost_centre_control_with_hc(s):
    """The same with heap profiling by cost centre (-hc -p), where heap
    samples go on: the two kinds of profiling are controlled separately."""
    summ, t = cc_script(s, ["-hc", "-i0.05", "-p"])
    check_cc_phases(summ, t)
    expect(summ.samples_between(t["B"], t["C"]) >= 3,
           "heap samples stopped with cost-centre profiling: %d"
           % summ.samples_between(t["B"], t["C"]))


@test
def cost_centre_start_without_p(s):
    """A profiled program run without -p takes no samples until a start
    command, then does."""
    exe = profiled_probe(s)
    summ, t = heap_script(s, "cc-nop", [0.5, "A", upstream(CC_START), 0.3, "B", 0.5, "C"], rts=[],
                          exe=exe)
    before, after = summ.cc_samples_between(0, t["A"]), summ.cc_samples_between(t["B"], t["C"])
    note("cost-centre samples: before=%d after start=%d" % (before, after))
    expect(before == 0 and after >= 3, "samples before=%d after=%d" % (before, after))


@test
def cost_centre_commands_before_ready(s):
    """A cost-centre stop and a heap stop sent the moment the client
    connects (before the RTS is up) are both held and applied when it is:
    no samples of either kind until the upstream start. (With -p the RTS
    starts cost-centre sampling inside hs_init, so a few samples may come
    before the library is told the RTS is ready; none after marker R.)"""
    exe = profiled_probe(s)
    summ, t = heap_script(s, "cc-early", [GCTL + CC_STOP + upstream(STOP), 0.3, "R", 0.7, "A",
                                          upstream(CC_START), 0.3, "B", 0.5, "C"],
                          rts=["-p", "-hc", "-i0.05"], exe=exe)
    cc_init = summ.cc_samples_between(0, t["R"])
    cc_held = summ.cc_samples_between(t["R"], t["A"])
    heap_before = summ.samples_between(0, t["A"])
    cc_after = summ.cc_samples_between(t["B"], t["C"])
    detail = ("cost-centre samples during start-up=%d held stop=%d after start=%d, "
              "heap samples before the start=%d" % (cc_init, cc_held, cc_after, heap_before))
    note(detail)
    expect(cc_held == 0 and heap_before == 0 and cc_after >= 3, detail)


@test
def commands_the_build_cannot_honour(s):
    """A program built without profiling and run without -h gets every
    command in both framings, many times: it keeps running, and says once
    per cause that it ignores them."""
    sock = s.path("cannot.sock")
    p = Program(s, "probe", ["--busy"], unix=sock, wait=True)
    p.wait_socket(sock)
    c = Client(s, unix=sock)
    every = b"".join(GCTL + cmd + upstream(cmd) for cmd in (CC_START, CC_STOP, START, STOP, CENSUS))
    c.send(every * 20)
    p.cmd("marker sent")
    time.sleep(0.3)
    c.send(every)
    p.cmd("marker still-alive")
    p.cmd("quit")
    p.finish()
    expect(p.proc.returncode == 0, "probe exited with %s" % p.proc.returncode)
    summ = check_stream(s, c.wait_eof(), "cannot")
    summ.marker_time("still-alive")
    expect(summ.samples == [] and summ.cc_samples == [], "samples in a plain run")
    err = p.stderr()
    for cause in ("cost-centre profiling commands are ignored",
                  "heap profiling commands are ignored"):
        n = err.count(cause)
        expect(n == 1, "%d log lines %r; stderr:\n%s" % (n, cause, err))


@test
def census_in_an_idle_program(s):
    """A census asked of a program that is idle (its only thread waits for
    input) is taken at once, not when the program next wakes up: the
    library runs the major GC that a census needs itself."""
    p, connect = serve(s, "idle-census", rts=["-hT", "-i100"])
    c = connect()
    p.cmd("marker A")
    # The program sleeps in threadDelay for 3 s, the census asked at 1 s.
    p.proc.stdin.write(b"sleep 3\n")
    p.proc.stdin.flush()
    time.sleep(1.0)
    c.send(GCTL + CENSUS)
    expect(p.readline(timeout=30) == "ok", "the probe did not wake up")
    p.cmd("marker B")
    p.cmd("quit")
    p.finish()
    summ = check_stream(s, c.wait_eof(), "idle-census")
    t = {m: summ.marker_time(m) for m in ("A", "B")}
    samples = [x for x in summ.samples if t["A"] <= x < t["B"]]
    delays = [(x - t["A"]) / 1e9 for x in samples]
    note("census taken %s s after marker A (requested about 1.0 s after it)" %
         ", ".join("%.3f" % d for d in delays))
    expect(len(samples) == 1, "%d samples between the markers" % len(samples))
    expect(0.9 <= delays[0] < 1.4, "the census came %.3f s after A, asked at about 1.0 s"
           % delays[0])


@test
def custom_commands_and_hooks(s):
    """Commands a program registers (tests/probe --custom, through the C
    API, handlers in Haskell) run when a client sends them in upstream
    framing; a slow handler holds up only its own namespace, never the
    stream or another namespace; POST_START runs at start and for each new
    client, PRE_END at exit, and what they post reaches the clients."""
    p, connect = serve(s, "custom", ["--custom"])
    a = connect()
    p.cmd("marker A")
    a.send(upstream(2, b"probe") + upstream(1, b"probe") + upstream(1, b"other") +
           upstream(1, b"nobody"))
    time.sleep(0.5)
    p.cmd("marker X")
    time.sleep(2.5)
    p.cmd("marker Y")
    b = connect()
    time.sleep(0.5)
    p.cmd("marker Z")
    p.cmd("quit")
    p.finish()
    sa = check_stream(s, a.wait_eof(), "custom-a")
    sb = check_stream(s, b.wait_eof(), "custom-b")
    t = {m: sa.marker_time(m) for m in ("A", "X", "Y", "Z")}
    other = sa.marker_time("custom other 1")
    done = sa.marker_time("custom probe 2 done")
    one = sa.marker_time("custom probe 1")
    expect(t["A"] < other < t["X"], "other/1 was held up by probe/2")
    expect(t["X"] < done < t["Y"], "probe/2 did not take its 2 s")
    expect(done <= one < t["Y"], "probe/1 did not run right after probe/2")
    posts = [ts for ts, m in sa.markers if m == "hook post-start"]
    # Registered after the start: it runs once then, and again for B.
    expect(len(posts) >= 2, "POST_START ran %d times in A's stream" % len(posts))
    expect(any(t["Y"] < ts < t["Z"] for ts, m in sb.markers if m == "hook post-start"),
           "the client that joined later got no POST_START of its own")
    for summ, name in ((sa, "A"), (sb, "B")):
        expect(any(m == "hook pre-end" for _, m in summ.markers), "no PRE_END in %s" % name)


@test
def commands_without_heap_profiling(s):
    """Without a -h mode the commands are harmless no-ops."""
    sock = s.path("noprof.sock")
    p = Program(s, "probe", ["--busy"], unix=sock, wait=True)
    p.wait_socket(sock)
    c = Client(s, unix=sock)
    c.send(GCTL + STOP + GCTL + CENSUS + GCTL + START)
    time.sleep(0.3)
    p.cmd("marker still-alive")
    p.cmd("quit")
    p.finish()
    expect(p.proc.returncode == 0, "probe exited with %s" % p.proc.returncode)
    summ = check_stream(s, c.wait_eof(), "noprof")
    expect(summ.samples == [], "samples without -h")
    summ.marker_time("still-alive")


@test
def no_client_at_all(s):
    """With nobody connecting, the program runs and exits normally."""
    sock = s.path("alone.sock")
    p = Program(s, "fibber-c-main", ["22"], unix=sock, stdin=False)
    out = p.finish()
    expect(p.proc.returncode == 0 and "fib 22 = 17711" in out, "program output %r" % out)
    expect(not os.path.exists(sock), "socket file left behind")


def config_error(s, env, args=("20",), expect_text=None):
    p = Program(s, "fibber-c-main", list(args), env=env, stdin=False)
    p.finish()
    err = p.stderr()
    expect(p.proc.returncode == 1, "exit status %s, stderr: %s" % (p.proc.returncode, err))
    if expect_text:
        expect(expect_text in err, "stderr lacks %r: %s" % (expect_text, err))
    return err


@test
def bad_configuration(s):
    """Every bad configuration is refused with a clear message, and a file in
    the way stays intact."""
    config_error(s, {}, expect_text="no socket configured")
    config_error(s, {"GHC_EVENTLOG_UNIX_PATH": "/tmp/" + "x" * 200}, expect_text="too long")
    precious = s.path("precious.txt")
    with open(precious, "w") as f:
        f.write("keep me")
    config_error(s, {"GHC_EVENTLOG_UNIX_PATH": precious}, expect_text="not a socket")
    with open(precious) as f:
        expect(f.read() == "keep me", "the file in the way was changed")
    # A path that cannot work: the message names the variable and the path,
    # says what is wrong and what to do, and nothing is created.
    missing_dir = s.path("no-such-dir")
    missing = os.path.join(missing_dir, "a.sock")
    err = config_error(s, {"GHC_EVENTLOG_UNIX_PATH": missing},
                       expect_text='GHC_EVENTLOG_UNIX_PATH="%s": the directory "%s" does not exist'
                       % (missing, missing_dir))
    expect("mkdir -p" in err, "no remedy for a missing directory: %s" % err)
    expect(not os.path.exists(missing_dir), "the missing directory was created")
    config_error(s, {"GHC_EVENTLOG_UNIX_PATH": s.path("a.sock") + "/"},
                 expect_text='GHC_EVENTLOG_UNIX_PATH="%s/" ends with \'/\'' % s.path("a.sock"))
    a_dir = s.path("a-directory")
    os.mkdir(a_dir)
    config_error(s, {"GHC_EVENTLOG_UNIX_PATH": a_dir},
                 expect_text='GHC_EVENTLOG_UNIX_PATH="%s" is a directory' % a_dir)
    config_error(s, {"GHC_EVENTLOG_UNIX_PATH": os.path.join(precious, "a.sock")},
                 expect_text='"%s" is a regular file, not a directory' % precious)
    expect(os.listdir(a_dir) == [], "something was created in the directory in the way")
    config_error(s, {"GHC_EVENTLOG_UNIX_PATH": s.path("a.sock"), "GHC_EVENTLOG_INET_PORT": "1"},
                 expect_text="set only one")
    config_error(s, {"GHC_EVENTLOG_UNIX_PATH": s.path("a.sock"), "GHC_EVENTLOG_WAIT": "maybe"},
                 expect_text="GHC_EVENTLOG_WAIT")
    config_error(s, {"GHC_EVENTLOG_INET_PORT": "99999"}, expect_text="invalid TCP port")
    config_error(s, {"GHC_EVENTLOG_INET_HOST": "127.0.0.1"}, expect_text="GHC_EVENTLOG_INET_PORT")
    sock = {"GHC_EVENTLOG_UNIX_PATH": s.path("b.sock")}
    config_error(s, dict(sock, GHC_EVENTLOG_MAX_BUFFER="lots"), expect_text="GHC_EVENTLOG_MAX_BUFFER")
    config_error(s, dict(sock, GHC_EVENTLOG_CLIENT_BUFFER="1K"),
                 expect_text="GHC_EVENTLOG_CLIENT_BUFFER")
    config_error(s, dict(sock, GHC_EVENTLOG_SLOW_CLIENT="maybe"),
                 expect_text="GHC_EVENTLOG_SLOW_CLIENT")


@test
def socket_in_use_and_stale(s):
    """A live socket is refused without disturbing its owner; a stale one is
    replaced."""
    sock = s.path("shared.sock")
    owner = Program(s, "probe", unix=sock, wait=True)
    owner.wait_socket(sock)
    config_error(s, {"GHC_EVENTLOG_UNIX_PATH": sock}, expect_text="already in use")
    c = Client(s, unix=sock)
    owner.cmd("marker owner-fine")
    owner.cmd("quit")
    owner.finish()
    check_stream(s, c.wait_eof(), "owner").marker_time("owner-fine")

    stale = s.path("stale.sock")
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(stale)
    dead.close()  # the file stays, nobody listens
    p = Program(s, "fibber-c-main", ["20"], unix=stale, wait=True, stdin=False)
    p.wait_stderr("replaced stale socket file")
    c = Client(s, unix=stale)
    p.finish()
    expect(p.proc.returncode == 0, "fibber exited with %s" % p.proc.returncode)
    check_stream(s, c.wait_eof(), "stale")


@test
def tcp_loopback_default(s):
    """No host means 127.0.0.1, never all interfaces."""
    p = Program(s, "fibber-c-main", ["20"], tcp_port=0, wait=True, stdin=False)
    m = p.wait_stderr(r"listening on (\S+)")
    expect(m.group(1).startswith("127.0.0.1:"), "listening on %s" % m.group(1))
    c = Client(s, tcp_port=p.tcp_port())
    p.finish()
    check_stream(s, c.wait_eof(), "loopback")


@test
def data_arrives_at_buffer_fill(s):
    """While the program runs, data reaches a client whenever the RTS hands a
    buffer over (GHC 9.0: when a capability's 2 MiB buffer fills)."""
    p, connect = serve(s, "fill")
    c = connect()
    p.cmd("flood %d fill" % FLOOD)
    c.wait_bytes(2 << 20)  # before the program exits
    partial = check_stream(s, c.received(), "live", partial=True)
    expect(len(partial.tagged("fill")) > 0, "live data holds messages")
    p.cmd("quit")
    p.finish()
    full = check_stream(s, c.wait_eof(), "fill")
    expect(full.tagged("fill") == list(range(1, FLOOD + 1)), "all messages by exit")


@test
def ghc90_global_buffer_arrives_at_exit(s):
    """What GHC 9.0 delivers while the program runs: only its capabilities'
    full 2 MiB buffers. The RTS's global buffer (start-up definitions, heap
    samples) has no hand-over before it fills or the program exits, so a
    client sees neither the capability sets nor any heap sample until then;
    at exit it gets all of them (README, "GHC 9.0")."""
    if harness.ghc_version() >= (9, 2):
        raise Skip("GHC 9.2+ flushes the global buffer (the flush tests cover it)")
    p, connect = serve(s, "global90", ["--busy"], rts=["-hT", "-i0.05"])
    c = connect()
    time.sleep(1.0)  # about 20 timed heap samples
    p.cmd("flood %d g" % FLOOD)
    c.wait_bytes(2 << 20)
    live = check_stream(s, c.received(), "live90", partial=True)
    p.cmd("marker end")
    p.cmd("quit")
    p.finish()
    full = check_stream(s, c.wait_eof(), "global90")
    note("while running: %d heap samples, %d capset events, %d messages; at exit: %d, %d, %d" %
         (len(live.samples), live.counts.get("CapsetCreate", 0), len(live.tagged("g")),
          len(full.samples), full.counts.get("CapsetCreate", 0), len(full.tagged("g"))))
    expect(len(live.tagged("g")) > 0, "no capability buffer arrived while running")
    expect(len(live.samples) == 0 and live.counts.get("CapsetCreate", 0) == 0,
           "GHC 9.0 delivered global-buffer events while running: README needs updating")
    expect(len(full.samples) >= 10 and full.counts.get("CapsetCreate", 0) >= 1,
           "the global buffer's events did not arrive at exit")


class Terminated(Exception):
    pass


def on_sigterm(signum, frame):
    raise Terminated()


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


@test
def commands_before_ready(s):
    """A stop sent the moment the client connects (before the RTS is up) is
    applied when it is: no timed samples at all; a census still works."""
    summ, t = heap_script(s, "early-cmd", [GCTL + STOP, 1.0, "A", GCTL + CENSUS, 0.5, "B"])
    a, b = t["A"], t["B"]
    expect(summ.samples_between(0, a) == 0,
           "%d timed samples despite the stop" % summ.samples_between(0, a))
    expect(summ.samples_between(a, b) == 1, "census gave %d samples" % summ.samples_between(a, b))


def needs_flush(what):
    major, minor = harness.ghc_version()
    if (major, minor) < (9, 2):
        raise Skip("GHC %d.%d cannot flush its eventlog buffers: %s" % (major, minor, what))


@test
def live_latency(s):
    """GHC >= 9.2: a marker from an otherwise quiet program reaches a
    connected client promptly (the library flushes the RTS's buffers every
    100 ms while clients are connected): median of 10 under 250 ms."""
    needs_flush("events reach clients when a buffer fills or at exit")
    p, connect = serve(s, "live")
    c = connect()
    time.sleep(0.5)
    latencies = []
    for i in range(10):
        tag = ("lat-%d-end" % i).encode()
        start = time.monotonic()
        p.cmd("marker lat-%d-end" % i)
        while tag not in c.received():
            expect(time.monotonic() - start < 5.0, "marker %d did not arrive within 5 s" % i)
            time.sleep(0.002)
        latencies.append((time.monotonic() - start) * 1000)
        time.sleep(0.3)  # quiet: the program waits on stdin
    p.cmd("quit")
    p.finish()
    check_stream(s, c.wait_eof(), "live")
    latencies.sort()
    median = (latencies[4] + latencies[5]) / 2
    note("marker latency ms: min %.0f, median %.0f, max %.0f"
         % (latencies[0], median, latencies[-1]))
    expect(median < 250, "median latency %.0f ms" % median)


@test
def flush_interval_off(s):
    """GHC >= 9.2: GHC_EVENTLOG_FLUSH_INTERVAL_MS=0 turns flushing off, so a
    quiet program's marker only arrives at exit."""
    needs_flush("there is no flushing to turn off")
    sock = s.path("noflush.sock")
    p = Program(s, "probe", unix=sock, wait=True, env={"GHC_EVENTLOG_FLUSH_INTERVAL_MS": "0"})
    p.wait_socket(sock)
    c = Client(s, unix=sock)
    p.cmd("marker quiet-marker")
    time.sleep(1.0)
    expect(b"quiet-marker" not in c.received(), "marker arrived although flushing is off")
    p.cmd("quit")
    p.finish()
    check_stream(s, c.wait_eof(), "noflush").marker_time("quiet-marker")


def flushes_during_flood(s, name, rts):
    """Flushes while the probe fills its buffer faster than the flush
    interval (200 ms), and how many intervals that flood lasted."""
    sock = s.path(name + ".sock")
    p = Program(s, "probe", unix=sock, wait=True, rts=rts,
                env={"GHC_EVENTLOG_FLUSH_INTERVAL_MS": "200"})
    p.wait_socket(sock)
    c = Client(s, unix=sock)
    time.sleep(0.5)
    idle = p.stats()["flushes"]
    expect(idle >= 1, "no flush in 0.5 s of an idle program")
    start = time.monotonic()
    # 8000 messages every 10 ms: a 2 MiB buffer fills in about 100 ms.
    answer = p.query("flood-for 2 %s 8000" % name, timeout=60)
    intervals = (time.monotonic() - start) / 0.2
    expect(answer.startswith("ok "), "flood-for answered %r" % answer)
    st = p.stats()
    flushes = st["flushes"] - idle
    p.cmd("quit")
    p.finish()
    data = c.wait_eof()
    expect(data.endswith(END_MARKER), "stream does not end with the end-of-data marker")
    note("%s: %d flushes in %.1f intervals of flooding; %.1f ms in all flushes"
         % (name, flushes, intervals, st["flush_us"] / 1000))
    expect(st["flush_us"] > 0, "%d flushes took no time: %r" % (st["flushes"], st))
    return flushes, intervals


@test
def flushes_skipped_while_buffers_fill(s):
    """GHC >= 9.2: while the program hands full buffers over faster than the
    flush interval, the library skips the flushes (each stops the program),
    keeping one every ten intervals for the global buffer; an idle program
    is still flushed every interval."""
    needs_flush("there is no flushing to skip")
    flushes, intervals = flushes_during_flood(s, "paced", ())
    expect(flushes <= intervals / 2,
           "%d flushes in %.1f intervals of full buffers" % (flushes, intervals))


@test
def flushes_kept_while_heap_profiling(s):
    """GHC >= 9.2: with a heap profiling mode every interval flushes even
    while buffers fill, because heap samples wait in the global buffer."""
    needs_flush("there is no flushing")
    flushes, intervals = flushes_during_flood(s, "unpaced", ("-hT",))
    expect(flushes >= intervals / 2,
           "%d flushes in %.1f intervals with -hT" % (flushes, intervals))


@test
def flush_interval_rejected_on_ghc90(s):
    """GHC 9.0: asking for a flush interval is refused with a clear error."""
    major, minor = harness.ghc_version()
    if (major, minor) >= (9, 2):
        raise Skip("GHC %d.%d can flush" % (major, minor))
    p = Program(s, "fibber-c-main", ["20"], unix=s.path("f.sock"), stdin=False,
                env={"GHC_EVENTLOG_FLUSH_INTERVAL_MS": "100"})
    p.finish()
    expect(p.proc.returncode == 1, "exit status %s" % p.proc.returncode)
    expect("cannot flush" in p.stderr(), "stderr: %s" % p.stderr())


@test
def no_automatic_heap_samples(s):
    """GHC >= 9.2 with --no-automatic-heap-samples: no sample until asked;
    0x03 gives one, 0x01 starts timed samples."""
    major, minor = harness.ghc_version()
    if (major, minor) < (9, 2):
        raise Skip("--no-automatic-heap-samples needs GHC 9.2")
    summ, t = heap_script(s, "noauto", [0.5, "A", GCTL + CENSUS, 0.5, "B", GCTL + START, 0.5,
                                        "C"],
                          rts=("-hT", "-i0.02", "--no-automatic-heap-samples"))
    a, b, cc = t["A"], t["B"], t["C"]
    detail = "samples: before=%d census=%d started=%d" % (
        summ.samples_between(0, a), summ.samples_between(a, b), summ.samples_between(b, cc))
    expect(summ.samples_between(0, a) == 0, "samples without a request; " + detail)
    expect(summ.samples_between(a, b) == 1, "0x03 should give one sample; " + detail)
    expect(summ.samples_between(b, cc) >= 3, "0x01 did not start sampling; " + detail)


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
    time.sleep(0.5)
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


@test
def sixty_four_clients(s):
    """64 concurrent clients, half of them joining late: every stream parses
    and carries the definitions."""
    p, connect = serve(s, "sixty-four")
    early = [connect() for _ in range(32)]
    p.cmd("flood %d one" % FLOOD)
    time.sleep(0.3)
    late = [connect() for _ in range(32)]
    time.sleep(0.3)
    p.cmd("flood %d two" % FLOOD)
    st = p.stats()
    expect(st["clients_connected"] == 64 and st["clients_accepted"] == 64, "stats %r" % st)
    p.cmd("quit")
    p.finish()
    for i, c in enumerate(early + late):
        summ = check_stream(s, c.wait_eof(), "c%d" % i)
        expect(summ.tagged("two") == list(range(1, FLOOD + 1)), "client %d misses data" % i)
        for ev in ("RtsIdentifier", "ProgramArgs", "CapsetCreate", "CapCreate"):
            expect(summ.counts.get(ev, 0) >= 1, "client %d has no %s" % (i, ev))


def many_clients_run(s, sock=None, port=None, readers=1, stalled=0, save=None):
    """Start build/many-clients (C clients, each stream parsed as it
    arrives); return the process."""
    argv = [os.path.join(harness.BUILD, "many-clients"), "--readers", str(readers),
            "--stalled", str(stalled), "--timeout", "90"]
    argv += ["--unix", sock] if sock else ["--tcp", str(port)]
    if save:
        argv += ["--save", save]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def many_clients_result(proc):
    out, _ = proc.communicate(timeout=120)
    summary = [line for line in out.splitlines() if line.startswith("many-clients:")]
    expect(summary, "many-clients printed no summary:\n%s" % out)
    return proc.returncode, summary[0], out


def enough_descriptors(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < n:
        raise Skip("RLIMIT_NOFILE hard limit %d is below the %d descriptors needed" % (hard, n))


def stderr_pipe_run(s, name, stalled, stderr_pipe):
    """fibber-c-main (400 x fib 30) with 64 KiB per client and 1 MiB in all,
    one reading client and `stalled` that never read; returns the exit
    status, peak RSS (KiB), the reader's saved stream and the program."""
    sock = s.path(name + ".sock")
    env = {"GHC_EVENTLOG_CLIENT_BUFFER": "64K", "GHC_EVENTLOG_MAX_BUFFER": "1M"}
    p = Program(s, "fibber-c-main", ["30"] * 400, unix=sock, wait=True, stdin=False, env=env,
                rts=["-l"], stderr_pipe=stderr_pipe)
    p.wait_socket(sock)
    saved = s.path(name + ".eventlog")
    c = many_clients_run(s, sock=sock, readers=1, stalled=stalled, save=saved)
    status, rss = p.wait_rusage(timeout=60)
    rc, summary, out = many_clients_result(c)
    note("%s: %s" % (name, summary))
    expect(rc == 0, "a client failed:\n%s" % out)
    with open(saved, "rb") as f:
        data = f.read()
    return status, rss, data, p


@test
def stderr_pipe_never_read(s):
    """stderr is a pipe nobody reads, 1000 clients never read: the library's
    log lines cannot block it, so it keeps serving, the reading client's
    stream is complete, memory stays bounded, and the program exits."""
    enough_descriptors(2100)
    status0, rss0, _, _ = stderr_pipe_run(s, "baseline", stalled=0, stderr_pipe=False)
    status, rss, data, p = stderr_pipe_run(s, "stalled", stalled=1000, stderr_pipe=True)
    expect(status == 0 and status0 == 0, "exit statuses %s, %s" % (status0, status))
    summ = check_stream(s, data, "reader")
    marks = fib_markers(summ)
    expect(len(marks) == 400 and set(marks) == {"fib 30 = 832040"},
           "the reader got %d of 400 markers" % len(marks))
    lines = p.stderr_pipe_output().splitlines()
    note("peak RSS %d KiB (baseline with one client: %d KiB); %d log lines" %
         (rss, rss0, len(lines)))
    # The bound (1 MiB), the free buffers kept for the RTS (8 MiB) and the
    # hand-off's limit when the library's threads lag (8 MiB), README.
    expect(rss - rss0 <= (1 + 8 + 8) * 1024, "peak RSS grew by %d KiB" % (rss - rss0))
    expect(len(lines) <= 20, "%d log lines for 1000 clients:\n%s" % (len(lines),
                                                                    "\n".join(lines[:40])))
    expect(any("more clients that stopped reading" in line for line in lines),
           "no summary line for the stalled clients:\n%s" % "\n".join(lines))


@test
def stalled_clients_join_one_by_one(s):
    """Clients that connect one after another during a flood and never read
    each pin an unfinished write at another place in the stream; the library
    disconnects such stuck clients rather than let them hold more than the
    bound (16 MiB) plus one write's slack, and a reading client is unaffected."""
    env = {"GHC_EVENTLOG_MAX_BUFFER": "%dM" % BOUND_MIB}
    sock = s.path("pin.sock")
    p = Program(s, "probe", unix=sock, wait=True, env=env)
    p.wait_socket(sock)
    saved = s.path("pin-reader.eventlog")
    c = subprocess.Popen([os.path.join(harness.BUILD, "many-clients"), "--unix", sock,
                          "--readers", "1", "--stalled", "150", "--stagger-ms", "30",
                          "--timeout", "90", "--save", saved],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    answer = p.query("flood-for 6 pin 20000", timeout=60)
    expect(answer.startswith("ok "), "flood-for answered %r" % answer)
    st = p.stats()
    p.cmd("quit")
    p.finish()
    rc, summary, out = many_clients_result(c)
    note("%s; stats %r" % (summary, st))
    expect(rc == 0, "the reading client's stream is not complete:\n%s" % out[-2000:])
    # The bound, one stuck client's unfinished write (at most 4 MiB), and the
    # chunk that arrives while closed clients' memory is coming back.
    expect(st["bytes_held_peak"] <= (BOUND_MIB + 6) << 20,
           "the library held %.1f MiB at peak" % (st["bytes_held_peak"] / 2**20))
    expect(st["clients_lagged"] > 0, "no stuck client was disconnected: %r" % st)
    expect(any("exceeds the buffer bound" in line for line in p.stderr().splitlines()),
           "no log line says why clients were disconnected")


@test
def clients_refused_at_the_limit(s):
    """GHC_EVENTLOG_MAX_CLIENTS=10 and 25 clients: 10 get complete streams,
    15 are refused at once (EOF, nothing sent), counted, and logged in a
    line and a summary, not 15 lines."""
    sock = s.path("cap.sock")
    p = Program(s, "probe", unix=sock, wait=True, env={"GHC_EVENTLOG_MAX_CLIENTS": "10"})
    p.wait_socket(sock)
    clients = [Client(s, unix=sock) for _ in range(25)]
    time.sleep(0.3)
    p.cmd("flood %d cap" % FLOOD)
    st = p.stats()
    p.cmd("quit")
    p.finish()
    got = [c.wait_eof() for c in clients]
    served = [d for d in got if d]
    expect(len(served) == 10 and sum(1 for d in got if not d) == 15,
           "%d clients served, %d got nothing" % (len(served), len(got) - len(served)))
    for i, d in enumerate(served):
        summ = check_stream(s, d, "cap%d" % i)
        expect(summ.tagged("cap") == list(range(1, FLOOD + 1)), "client %d misses data" % i)
    expect(st["clients_refused"] == 15 and st["clients_connected"] == 10, "stats %r" % st)
    lines = [line for line in p.stderr().splitlines() if "refus" in line]
    expect(len(lines) == 2 and "10 clients are connected, the most allowed" in lines[0]
           and "14 more clients refused" in lines[1], "log lines:\n%s" % "\n".join(lines))


@test
def descriptors_kept_for_the_program(s):
    """With RLIMIT_NOFILE 128 and 200 clients, the library refuses those
    that would take the program's last 32 descriptors: the program can
    still open files (its own descriptors are never the ones exhausted),
    and every client it served gets a complete stream."""
    sock = s.path("fd.sock")
    p = Program(s, "probe", unix=sock, wait=True, nofile=128)
    p.wait_socket(sock)
    c = many_clients_run(s, sock=sock, readers=200)
    time.sleep(1.0)
    answer = p.query("open-files 20")
    p.cmd("flood 1000 fd")
    st = p.stats()
    p.cmd("quit")
    p.finish()
    rc, summary, out = many_clients_result(c)
    note("%s; stats %r" % (summary, st))
    expect(answer == "ok 20", "the program could not open its own files: %r" % answer)
    # clients_accepted counts the clients served.
    expect(st["clients_accepted"] <= 128 - 32 and
           st["clients_refused"] == 200 - st["clients_accepted"], "stats %r" % st)
    served = int(re.search(r"(\d+) complete", summary).group(1))
    expect(served == st["clients_accepted"],
           "%d complete streams for %d clients served" % (served, st["clients_accepted"]))


def as_nobody(argv):
    """argv run as uid/gid 65534 (nobody) with setpriv; needs root."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        raise Skip("needs root and setpriv to run a client as another user")
    return ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"] + argv


def tcp_other_user_run(s, name, env=None, host=None):
    """The probe on TCP; one client as nobody (nc), one as us. Returns what
    each received, the stats and the program's stderr."""
    env = dict(env or {})
    if host:
        env["GHC_EVENTLOG_INET_HOST"] = host
    p = Program(s, "probe", tcp_port=0, env=env)
    port = int(p.wait_stderr(r"listening on \S+:(\d+)").group(1))
    nobody = subprocess.Popen(as_nobody(["nc", "-d", "127.0.0.1", str(port)]),
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    me = Client(s, tcp_port=port)
    time.sleep(0.2)
    p.cmd("flood 1000 users")
    st = p.stats()
    p.cmd("quit")
    p.finish()
    theirs, _ = nobody.communicate(timeout=30)
    return theirs, me.wait_eof(), st, p.stderr()


@test
def tcp_refuses_other_users(s):
    """Over loopback TCP, a client run by another user (nobody, through
    setpriv) is refused with a log line, as the Unix socket's mode 0600
    refuses it; the program's own user is served."""
    theirs, mine, st, err = tcp_other_user_run(s, "uid")
    expect(theirs == b"", "the other user's client got %d bytes" % len(theirs))
    expect(st["clients_refused"] == 1, "stats %r" % st)
    expect("it belongs to uid 65534 and the program runs as uid 0" in err,
           "no log line naming the user; stderr:\n%s" % err)
    summ = check_stream(s, mine, "uid-mine")
    expect(summ.tagged("users") == list(range(1, 1001)), "the owner's client misses data")


@test
def tcp_allow_other_users(s):
    """GHC_EVENTLOG_ALLOW_OTHER_USERS=1 serves another user's client too."""
    theirs, mine, st, err = tcp_other_user_run(s, "uid-allow",
                                               env={"GHC_EVENTLOG_ALLOW_OTHER_USERS": "1"})
    expect(st["clients_refused"] == 0, "stats %r" % st)
    summ = check_stream(s, theirs, "uid-theirs")
    expect(summ.tagged("users") == list(range(1, 1001)), "the other user's client misses data")


@test
def tcp_non_loopback_warns(s):
    """Binding every interface (0.0.0.0) is logged as open to anyone who
    can reach the port."""
    p = Program(s, "probe", tcp_port=0, env={"GHC_EVENTLOG_INET_HOST": "0.0.0.0"})
    p.wait_stderr(r"0\.0\.0\.0:\d+ is not a loopback address: anyone who can reach this port "
                  r"can read the program's eventlog")
    p.cmd("quit")
    p.finish()


def sigterm_run(s, name, args=(), env=None):
    """The probe with a client connected mid-run, then SIGTERM; returns the
    exit status, the client's stream, and the socket path."""
    sock = s.path(name + ".sock")
    p = Program(s, "probe", list(args), unix=sock, wait=True, env=env)
    p.wait_socket(sock)
    c = Client(s, unix=sock)
    p.cmd("flood 1000 before-term")
    os.kill(p.proc.pid, signal.SIGTERM)
    status, _ = p.wait_rusage(timeout=30)
    return status, c.wait_eof(), sock


@test
def sigterm_default_cuts_the_stream(s):
    """What README says of a plain SIGTERM: the program dies at once, the
    stream ends without the end marker (cut), the socket file stays."""
    status, data, sock = sigterm_run(s, "term-default")
    expect(status == -signal.SIGTERM, "exit status %s" % status)
    expect(not data.endswith(END_MARKER), "a stream cut by SIGTERM ends with the end marker?")
    check_stream(s, data, "term-default", partial=True)
    expect(os.path.exists(sock), "the socket file was removed (README says it stays)")


@test
def sigterm_haskell_handler(s):
    """README's remedy: a Haskell SIGTERM handler that ends main through
    hs_exit; the client gets the whole stream, end marker included."""
    status, data, sock = sigterm_run(s, "term-hs", ["--sigterm-handler"])
    expect(status == 143, "exit status %s" % status)
    summ = check_stream(s, data, "term-hs")
    expect(data.endswith(END_MARKER), "no end marker")
    expect(summ.tagged("before-term") == list(range(1, 1001)), "messages missing")
    expect(not os.path.exists(sock), "socket file left behind")


@test
def sigterm_graceful_setting(s):
    """GHC_EVENTLOG_GRACEFUL_SIGTERM=1: SIGTERM interrupts the program as
    Ctrl-C does, so it exits through hs_exit and the client gets the end
    marker, with no handler in the program."""
    status, data, sock = sigterm_run(s, "term-opt", env={"GHC_EVENTLOG_GRACEFUL_SIGTERM": "1"})
    # As after Ctrl-C: hs_exit runs, then the program ends itself by SIGINT.
    expect(status == -signal.SIGINT, "exit status %s (expected death by SIGINT)" % status)
    summ = check_stream(s, data, "term-opt")
    expect(data.endswith(END_MARKER), "no end marker")
    expect(summ.tagged("before-term") == list(range(1, 1001)), "messages missing")
    expect(not os.path.exists(sock), "socket file left behind")


def thousand_clients(s, tcp):
    enough_descriptors(2100)
    p, _ = serve(s, "thousand", tcp=tcp)
    port = p.tcp_port() if tcp else None
    c = many_clients_run(s, sock=None if tcp else s.path("thousand.sock"), port=port,
                         readers=1000)
    # Every client connected before the program writes: each gets the
    # same, whole run (and the test's reader, one process for a thousand
    # sockets, has little to read even on a busy machine).
    deadline = time.monotonic() + 30
    while p.stats()["clients_connected"] < 1000:
        expect(time.monotonic() < deadline, "clients connected: %r" % p.stats())
        time.sleep(0.05)
    p.cmd("flood 1000 thousand")
    p.cmd("quit")
    p.finish()
    rc, summary, out = many_clients_result(c)
    note(summary)
    expect(p.proc.returncode == 0, "probe exited with %s" % p.proc.returncode)
    expect(rc == 0 and " 1000 complete," in summary and "; 0 connects failed" in summary,
           "not every client got a complete stream:\n%s" % out[-3000:])
    expect("; 0 drop notices" in summary, "clients that kept up got drop notices: %s" % summary)


@test
def thousand_clients_unix(s):
    """1000 C clients connect back to back over a Unix socket: every one is
    accepted and gets a complete stream, header to end marker."""
    thousand_clients(s, tcp=False)


@test
def thousand_clients_tcp(s):
    """The same over TCP."""
    thousand_clients(s, tcp=True)


def gaps_have_notices(summ, tag):
    """Walk the user messages in stream order: every jump in the sequence of
    "TAG i" must come right after a drop notice. Returns (notices, chunks
    they report)."""
    last, noticed, notices, chunks = 0, False, 0, 0
    for _, text in summ.messages:
        if text.startswith("eventlog-socket: dropped "):
            noticed = True
            notices += 1
            chunks += int(text.split()[2])
        elif text.startswith(tag + " "):
            seq = int(text.split()[1])
            if seq != last + 1:
                expect(noticed, "messages %d..%d missing without a notice" % (last + 1, seq - 1))
            noticed = False
            last = seq
    return notices, chunks


STALL_SECONDS = 10
BOUND_MIB = 16


def stalled_run(s, name, stalled):
    """Flood for STALL_SECONDS with a client that reads (or not); return the
    probe's peak RSS in KiB, its stats, and the client's stream summary."""
    env = {"GHC_EVENTLOG_MAX_BUFFER": "%dM" % BOUND_MIB}
    sock = s.path(name + ".sock")
    p = Program(s, "probe", unix=sock, wait=True, env=env)
    p.wait_socket(sock)
    c = Client(s, unix=sock, read=not stalled)
    answer = p.query("flood-for %d %s" % (STALL_SECONDS, name), timeout=STALL_SECONDS + 60)
    expect(answer.startswith("ok "), "flood-for answered %r" % answer)
    hwm = int(p.query("hwm").split()[1])
    st = p.stats()
    if stalled:
        # Chunks flushed after the flood (the RTS's next flush of the
        # half-filled buffers) can still be dropped while the client lags, so
        # count drops only once the client has caught up: from then on the
        # backlog is far below the bound and the exit flush cannot drop.
        c.start_reading()
        # Caught up means the library holds next to nothing for it (the
        # idle program's flushes keep a trickle going).
        deadline = time.monotonic() + 60
        st = p.stats()
        while True:
            time.sleep(0.1)
            before, st = st, p.stats()
            if st["bytes_held"] < 1 << 20 and before["chunks_dropped"] == st["chunks_dropped"]:
                break
            expect(time.monotonic() < deadline,
                   "the stalled client did not catch up: %r" % st)
    p.cmd("quit")
    p.finish()
    return hwm, st, check_stream(s, c.wait_eof(), name), int(answer.split()[1])


@test
def stalled_client_bounded(s):
    """A client that never reads for 10 s under a flood: the program keeps
    going, its peak RSS stays within the buffer bound (16 MiB) plus a small
    constant over the same run with a reading client, and when the client
    finally reads it gets a parseable stream with a notice at every gap."""
    hwm_reading, _, _, posted_reading = stalled_run(s, "reading", stalled=False)
    hwm_stalled, st, summ, posted = stalled_run(s, "stalled", stalled=True)
    note("peak RSS: %d KiB with a reading client, %d KiB with a stalled one (bound %d MiB); "
         "messages posted: %d and %d" % (hwm_reading, hwm_stalled, BOUND_MIB, posted_reading,
                                          posted))
    expect(st["bytes_held_peak"] <= (BOUND_MIB + 4) << 20,
           "library held %d bytes at peak" % st["bytes_held_peak"])
    expect(hwm_stalled - hwm_reading <= (BOUND_MIB + 16) * 1024,
           "peak RSS grew by %d KiB" % (hwm_stalled - hwm_reading))
    expect(st["chunks_dropped"] > 0, "nothing was dropped: %r" % st)
    notices, chunks = gaps_have_notices(summ, "stalled")
    expect(notices > 0, "no drop notice in the stalled client's stream")
    expect(chunks == st["chunks_dropped"],
           "notices report %d chunks, stats %d" % (chunks, st["chunks_dropped"]))


@test
def slow_client_disconnect_policy(s):
    """GHC_EVENTLOG_SLOW_CLIENT=disconnect: a client that does not read is
    disconnected once it falls behind; a reading client and the program are
    unaffected."""
    env = {"GHC_EVENTLOG_CLIENT_BUFFER": "4M", "GHC_EVENTLOG_SLOW_CLIENT": "disconnect"}
    sock = s.path("disc.sock")
    p = Program(s, "probe", unix=sock, wait=True, env=env)
    p.wait_socket(sock)
    good = Client(s, unix=sock)
    bad = Client(s, unix=sock, read=False)
    time.sleep(0.2)
    p.cmd("flood %d x" % (4 * FLOOD))
    st = p.stats()
    p.wait_stderr("disconnecting it")
    p.cmd("quit")
    p.finish()
    expect(p.proc.returncode == 0, "probe exited with %s" % p.proc.returncode)
    expect(st["clients_lagged"] == 1 and st["chunks_dropped"] == 0, "stats %r" % st)
    summ = check_stream(s, good.wait_eof(), "good")
    expect(summ.tagged("x") == list(range(1, 4 * FLOOD + 1)), "reading client lost data")
    bad.start_reading()
    check_stream(s, bad.wait_eof(), "bad", partial=True)


@test
def stats_match_clients(s):
    """The counters agree with what two clients actually received."""
    p, connect = serve(s, "stats")
    a, b = connect(), connect()
    time.sleep(0.2)
    p.cmd("flood %d s" % FLOOD)
    # bytes_sent counts finished writes, so it equals what the clients read
    # once the stream is quiet (on GHC >= 9.2 between two flushes).
    deadline = time.monotonic() + 30
    while True:
        second = p.stats()
        got = len(a.received()) + len(b.received())
        if got == second["bytes_sent"] and got > FLOOD * 10:
            break
        expect(time.monotonic() < deadline,
               "sent %d, received %d" % (second["bytes_sent"], got))
        time.sleep(0.02)
    expect(second["clients_connected"] == 2 and second["clients_accepted"] == 2,
           "stats %r" % second)
    expect(second["bytes_received"] >= FLOOD * 10, "bytes from the RTS: %r" % second)
    expect(second["chunks_dropped"] == 0 and second["clients_lagged"] == 0, "stats %r" % second)
    expect(0 < second["bytes_held_peak"] <= 64 << 20, "stats %r" % second)
    p.cmd("quit")
    p.finish()
    check_stream(s, a.wait_eof(), "a")


def process_cpu_ns(pid):
    """utime + stime of a process, from /proc (clock ticks)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1e9 / os.sysconf("SC_CLK_TCK")


@test
def streaming_cpu_counters(s):
    """eventlog_socket_stats tells what streaming costs the program in CPU
    time, by thread role: each counter grows with the stream, and together
    they are part of the process's own CPU time."""
    p, connect = serve(s, "cpu")
    a, b = connect(), connect()
    time.sleep(0.2)
    first = p.stats()
    for _ in range(4):
        p.cmd("flood %d cpu" % FLOOD)
    a.wait_bytes(4 * FLOOD * 10)
    time.sleep(0.3)
    second = p.stats()
    total = process_cpu_ns(p.proc.pid)
    lib = second["cpu_ns_writer"] + second["cpu_ns_walker"] + second["cpu_ns_loop"]
    note("CPU ms: writer %.1f, walker %.1f, loop %.1f; process %.0f; %.1f MB received" % (
        second["cpu_ns_writer"] / 1e6, second["cpu_ns_walker"] / 1e6, second["cpu_ns_loop"] / 1e6,
        total / 1e6, second["bytes_received"] / 1e6))
    for k in ("cpu_ns_writer", "cpu_ns_walker", "cpu_ns_loop"):
        expect(second[k] > first[k], "%s did not grow: %r -> %r" % (k, first[k], second[k]))
    # /proc counts in clock ticks (10 ms), read a little later.
    expect(lib <= total + 20e6, "the library's CPU (%d ns) exceeds the process's (%d ns)"
           % (lib, total))
    p.cmd("quit")
    p.finish()
    check_stream(s, a.wait_eof(), "cpu")


def run_one(name):
    fn = next(t for t in TESTS if t.__name__ == name)
    # The runner sends SIGTERM on timeout: unwind, so the scope kills the
    # programs this test started and removes its sockets.
    signal.signal(signal.SIGTERM, on_sigterm)
    scope = Scope()
    try:
        fn(scope)
    except harness.TestFailure as e:
        print("# " + str(e).replace("\n", "\n# "))
        return 1
    except Terminated:
        print("# terminated (timeout)")
        return 1
    except Skip as e:
        print("SKIP " + str(e))
        return 77
    finally:
        scope.close()
    return 0


def main(argv):
    args = list(argv)
    if "--build" in args:
        i = args.index("--build")
        os.environ["ES_BUILD"] = args[i + 1]
        harness.BUILD = args[i + 1]
        del args[i:i + 2]
    if args and args[0] == "--one":
        return run_one(args[1])
    names = args or [t.__name__ for t in TESTS]
    print("1..%d" % len(names))
    passed = failed = skipped = 0
    for i, name in enumerate(names, 1):
        start = time.monotonic()
        proc = subprocess.Popen([sys.executable, __file__, "--build", harness.BUILD, "--one",
                                 name], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
        try:
            out, _ = proc.communicate(timeout=TIMEOUT)
            ok, detail = proc.returncode in (0, 77), out
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGTERM)
            try:
                out, _ = proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                out, _ = proc.communicate()
            ok, detail = False, "# timed out after %d s\n%s" % (TIMEOUT, out or "")
        took = time.monotonic() - start
        skip = [line[5:] for line in detail.splitlines() if line.startswith("SKIP ")]
        if ok and skip:
            print("ok %d - %s # SKIP %s" % (i, name, skip[0]))
            skipped += 1
            continue
        else:
            print("%sok %d - %s (%.1f s)" % ("" if ok else "not ", i, name, took))
            # Failures show everything; passes show their diagnostic notes.
            shown = detail if not ok else "\n".join(
                line for line in detail.splitlines() if line.startswith("# "))
            if shown.strip():
                print(shown.rstrip())
        sys.stdout.flush()
        passed += ok
        failed += not ok
    print("integration: %d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
