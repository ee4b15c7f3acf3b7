# SPDX-License-Identifier: BSD-3-Clause
"""When data reaches clients: at a buffer hand-over, by the paced flush
(GHC >= 9.2), and what GHC 9.0 delivers while the program runs."""

import time

import harness
from harness import (Client, END_MARKER, FLOOD, Program, Skip, TestFailure, check_stream, expect,
                     note, serve, test)


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
    at exit it gets all of them (docs/performance.md, "GHC 9.0 cannot flush")."""
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
           "GHC 9.0 delivered global-buffer events while running: "
           "docs/performance.md needs updating")
    expect(len(full.samples) >= 10 and full.counts.get("CapsetCreate", 0) >= 1,
           "the global buffer's events did not arrive at exit")


def needs_flush(what):
    major, minor = harness.ghc_version()
    if (major, minor) < (9, 2):
        raise Skip("GHC %d.%d cannot flush its eventlog buffers: %s" % (major, minor, what))


@test(serial=True)  # measures time: alone under -j
def live_latency(s):
    """GHC >= 9.2: each marker from an otherwise quiet program reaches a
    connected client while the program sits idle. A quiet program never
    fills a buffer, so only the library's flush (every 100 ms while clients
    are connected) can bring it; the latency is a note here, measured by
    bench/bench_latency.py (no timed assertion)."""
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
            expect(time.monotonic() - start < 30.0,
                   "marker %d did not arrive within 30 s of an idle program" % i)
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


# The flush interval of the two pacing tests, and how long they flood.
PACE_INTERVAL = 0.5
PACE_FLOOD_S = 5


def flushes_during_flood(s, name, rts):
    """Flushes while the probe posts events without pause, handing a full
    2 MiB buffer over several times per flush interval (500 ms), and how
    many intervals that flood lasted. The premise depends on the machine:
    a program starved of CPU by others fills its buffer more slowly, so the
    rate it reached is measured, and a flood that handed fewer than two
    buffers over per interval is run again (3 tries), not judged."""
    sock = s.path(name + ".sock")
    p = Program(s, "probe", unix=sock, wait=True, rts=rts,
                env={"GHC_EVENTLOG_FLUSH_INTERVAL_MS": str(int(PACE_INTERVAL * 1000))})
    p.wait_socket(sock)
    c = Client(s, unix=sock, keep=False)  # 25 MB/s for seconds
    # An idle program is flushed: wait for the first flush.
    deadline = time.monotonic() + 30
    while p.stats()["flushes"] < 1:
        expect(time.monotonic() < deadline, "no flush in 30 s of an idle program")
        time.sleep(0.05)
    for attempt in range(3):
        before = p.stats()
        start = time.monotonic()
        answer = p.query("flood-fast %d %s%d" % (PACE_FLOOD_S, name, attempt), timeout=120)
        intervals = (time.monotonic() - start) / PACE_INTERVAL
        expect(answer.startswith("ok "), "flood-fast answered %r" % answer)
        st = p.stats()
        flushes = st["flushes"] - before["flushes"]
        buffers = (st["bytes_received"] - before["bytes_received"]) / (2 << 20)
        note("%s: %d flushes in %.1f intervals of flooding, %.1f buffers handed over; "
             "%.1f ms in all flushes" % (name, flushes, intervals, buffers, st["flush_us"] / 1000))
        if buffers >= 2 * intervals:
            break
        note("the program was too slow (a busy machine) to fill its buffer twice per "
             "interval: flooding again")
    else:
        raise TestFailure("in 3 floods the program never handed two buffers over per flush "
                          "interval: the machine is too busy for this test")
    expect(st["flush_us"] > 0, "%d flushes took no time: %r" % (st["flushes"], st))
    p.cmd("quit")
    p.finish()
    data = c.wait_eof()
    expect(data.endswith(END_MARKER), "stream does not end with the end-of-data marker")
    return flushes, intervals


@test(serial=True)  # measures time: alone under -j
def flushes_skipped_while_buffers_fill(s):
    """GHC >= 9.2: while the program hands full buffers over faster than the
    flush interval, the library skips the flushes (each stops the program),
    keeping one every ten intervals for the global buffer; an idle program
    is still flushed every interval."""
    needs_flush("there is no flushing to skip")
    flushes, intervals = flushes_during_flood(s, "paced", ())
    expect(flushes <= intervals / 2,
           "%d flushes in %.1f intervals of full buffers" % (flushes, intervals))


@test(serial=True)  # measures time: alone under -j
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
