# SPDX-License-Identifier: BSD-3-Clause
"""Commands from clients: heap profiling (stop, census, start) in both
framings, among junk and in pieces; cost-centre profiling in a profiled
build; commands a program registers, and hooks."""

import fcntl
import os
import subprocess
import time

import harness
from harness import (CC_START, CC_STOP, CENSUS, Client, GCTL, Program, START, STOP, Skip, UMAGIC,
                     check_stream, expect, flood_nonblocking, note, serve, test, upstream)


def heap_script(s, name, steps, rts=("-hT", "-i0.02"), tcp=False, exe="probe"):
    """Run the probe (busy, heap profiling) with a client connected from the
    start, and play `steps`: a string is a marker to post, bytes are sent as
    they are (or a (bytes, pieces) pair, split into that many sends), a number
    is a pause in seconds, counted from when the program has read all that
    was sent. Returns the summary and every marker's time."""
    p, connect = serve(s, name, ["--busy"], rts=list(rts), tcp=tcp, exe=exe)
    c = connect()
    for step in steps:
        if isinstance(step, str):
            p.cmd("marker " + step)
        elif isinstance(step, (int, float)):
            c.wait_consumed()
            time.sleep(step)
        elif isinstance(step, tuple):
            c.send(*step)
        else:
            c.send(step)
    p.cmd("quit")
    p.finish()
    summ = check_stream(s, c.wait_eof(), name)
    return summ, {m: summ.marker_time(m) for m in steps if isinstance(m, str)}


# Timed heap samples a program started with GHC_EVENTLOG_WAIT may take
# before it applies a stop its first client sent on connecting: on a loaded
# machine (check-loaded on GHC 9.6: one sample) the loop thread may read
# the stop only after the RTS's first census, 250 ms in (the tests'
# -i0.25).
EARLY_CENSUS = 1


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


@test(serial=True)  # measures time: alone under -j
def census_flood_rate_limited(s):
    """A client sending census requests without pause for 3 s gets one
    census a second, not one each: the program is not made to collect its
    heap thousands of times (and, once a request is folded into the one
    waiting, reads that client a buffer a second)."""
    p, connect = serve(s, "flood", ["--busy"], rts=["-hT", "-i100"])
    c = connect()
    time.sleep(0.3)
    p.cmd("marker A")
    flood_nonblocking(c.sock, (GCTL + CENSUS) * 10000, 3)
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
    root = harness.ROOT
    exe = os.path.abspath(os.path.join(harness.BUILD, "probe-prof"))
    # Tests run side by side (run.py -j): one builds it at a time, into a
    # temporary name renamed into place, so that no test runs a half-written
    # binary or writes over one that another test runs.
    with open(exe + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return build_profiled_probe(root, exe)


def build_profiled_probe(root, exe):
    lib = os.path.abspath(os.path.join(harness.BUILD, "libeventlog-socket.a"))
    sources = [lib, os.path.join(root, "tests/programs/probe/Main.hs"),
               os.path.join(root, "tests/programs/common/Commands.hs"),
               os.path.join(root, "examples/fibber-c-main/cbits/fibber-c-main.c")]
    if os.path.exists(exe) and all(os.path.getmtime(exe) > os.path.getmtime(f) for f in sources):
        return exe
    major, minor = harness.ghc_version()
    uv = subprocess.run(["pkg-config", "--libs", "libuv"], capture_output=True, text=True)
    argv = ([harness.HC, "-prof", "-O", "-threaded", "-no-hs-main"] +
            (["-eventlog"] if (major, minor) < (9, 4) else []) +
            ["-Iinclude", "-itests/programs/common",
             "-outputdir", os.path.join(harness.BUILD, "hs", "probe-prof"), "-o", exe + ".new",
             "tests/programs/probe/Main.hs",
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
    os.rename(exe + ".new", exe)
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
                          # Heap samples every 250 ms: room for a stop read
                          # just after the RTS is up (commands_before_ready).
                          rts=["-p", "-hc", "-i0.25"], exe=exe)
    cc_init = summ.cc_samples_between(0, t["R"])
    cc_held = summ.cc_samples_between(t["R"], t["A"])
    heap_before = summ.samples_between(0, t["A"])
    cc_after = summ.cc_samples_between(t["B"], t["C"])
    detail = ("cost-centre samples during start-up=%d held stop=%d after start=%d, "
              "heap samples before the start=%d" % (cc_init, cc_held, cc_after, heap_before))
    note(detail)
    # At most one census before the stop is read (EARLY_CENSUS); 3 or 4 if
    # the stop were lost.
    expect(cc_held == 0 and heap_before <= EARLY_CENSUS and cc_after >= 3, detail)


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


@test(serial=True)  # measures time: alone under -j
def census_in_an_idle_program(s):
    """A census asked of a program that is idle (its only thread waits for
    input) is taken at once, not when the program next wakes up: the
    library runs the major GC that a census needs itself."""
    p, connect = serve(s, "idle-census", rts=["-hT", "-i100"])
    c = connect()
    p.cmd("marker A")
    # The program sleeps in threadDelay for 6 s, the census asked at 1 s.
    p.proc.stdin.write(b"sleep 6\n")
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
    # Taken when asked, not when the program woke up 6 s after A; the
    # bound is loose, as a busy machine delays the library's threads.
    expect(0.9 <= delays[0] < 4.0, "the census came %.3f s after A, asked at about 1.0 s; "
           "the program woke up at 6 s" % delays[0])


@test
def custom_commands_and_hooks(s):
    """Commands a program registers (tests/programs/probe --custom, through the C
    API, handlers in Haskell) run when a client sends them in upstream
    framing; a slow handler holds up only its own namespace, never the
    stream or another namespace; POST_START (registered after the start)
    runs at registration and for each later client, PRE_END at exit, and
    what they post reaches the clients."""
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
    p.wait_clients(2)
    time.sleep(0.5)  # its POST_START hook runs on a thread of the library's
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
def commands_before_ready(s):
    """A stop sent the moment the client connects (before the RTS is up) is
    applied when it is: no timed samples at all; a census still works."""
    # GHC_EVENTLOG_WAIT lets the program start when the client is taken in;
    # on a busy machine the loop thread may read the stop only after the
    # RTS is up, when it is applied at once instead of held. Timed samples
    # every 250 ms (not 20) leave room for that, and 3 or 4 of them would
    # still come before A if the stop were lost; one may come first on a
    # loaded machine (EARLY_CENSUS).
    summ, t = heap_script(s, "early-cmd", [GCTL + STOP, 1.0, "A", GCTL + CENSUS, 0.5, "B"],
                          rts=("-hT", "-i0.25"))
    a, b = t["A"], t["B"]
    expect(summ.samples_between(0, a) <= EARLY_CENSUS,
           "%d timed samples despite the stop" % summ.samples_between(0, a))
    expect(summ.samples_between(a, b) == 1, "census gave %d samples" % summ.samples_between(a, b))


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
