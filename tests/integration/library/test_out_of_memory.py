# SPDX-License-Identifier: BSD-3-Clause
"""When memory runs out (docs/security.md): whatever the library loses
reaches every client as a drop notice where the gap is, a log line and a
counter of eventlog_socket_stats(), the program goes on, and a recording
with a gap does not say it is complete. Memory runs out for real, as far
as the program can tell: build/failalloc.so (tests/programs/failalloc/), preloaded
into the program, makes every allocation of 64 KiB or more fail while a
file of the test's exists."""

import os
import re

import harness
from client_cmd import Cmd, last_line
from harness import Client, Program, check_stream, expect, note, test

N = 1500000  # user messages while memory is out: tens of MB of eventlog


# What the program posts, in order: (tag, how many).
POSTED = (("before", 1000), ("oom", N), ("after", 1000))


def gaps(summ):
    """(time before, time after, first missing, last missing) of each run of
    POSTED's messages missing from the stream, numbered in posting order
    (one missing from the start has time 0 before it)."""
    first = {}
    n = 0
    for tag, k in POSTED:
        first[tag] = n
        n += k
    got = [(0, 0)]
    for t, m in summ.messages:
        tag, _, i = m.partition(" ")
        if tag in first and i.isdigit():
            got.append((first[tag] + int(i), t))
    got.sort()
    return [(t0, t1, i0 + 1, i1 - 1) for (i0, t0), (i1, t1) in zip(got, got[1:]) if i1 > i0 + 1]


@test(serial=True, timeout=300)
def out_of_memory_losses_are_reported(s):
    """A program whose large allocations fail (failalloc.so) while it
    posts 1.5 million messages, with one client that never reads and
    `eventlog-socket record` reading: the program finishes and exits 0;
    every run of messages missing from the recording has a drop notice
    between its neighbours (the RTS may hand over what was posted before
    memory ran out only after, GHC 9.2+ at its next flush); what was posted
    after memory came back is all there; record's last line says the
    recording has gaps, not that it is complete; the program logs what it
    lost; eventlog_socket_stats() counts it."""
    shim = os.path.abspath(os.path.join(harness.BUILD, "failalloc.so"))
    flag, log = s.path("out-of-memory"), s.path("failalloc.log")
    sock = s.path("oom.sock")
    p = Program(s, "probe", unix=sock, wait=True,
                env={"LD_PRELOAD": shim, "FAILALLOC_FLAG": flag, "FAILALLOC_LOG": log,
                     "GHC_EVENTLOG_MAX_BUFFER": "16M", "GHC_EVENTLOG_CLIENT_BUFFER": "4M"})
    p.wait_socket(sock)
    out = s.path("oom.eventlog")
    rec = Cmd(s, ["record", sock, "-o", out])
    stopped = Client(s, unix=sock, read=False)  # connected, never reads
    p.wait_clients(2)
    p.cmd("flood 1000 before")
    open(flag, "w").close()  # memory runs out from here
    p.cmd("flood %d oom" % N, timeout=180)
    os.unlink(flag)  # and comes back
    p.cmd("flood 1000 after")
    p.cmd("marker done")
    st = p.stats()
    p.cmd("quit")
    p.finish()
    expect(p.proc.returncode == 0, "the program exited %s" % p.proc.returncode)
    stopped.close()
    rc, _, err = rec.wait(timeout=60)
    with open(log) as f:
        refused = len(f.read().splitlines())
    expect(refused > 0, "the shim refused no allocation: nothing was tested")
    with open(out, "rb") as f:
        summ = check_stream(s, f.read(), "oom-recording")
    notices = [(t, m) for t, m in summ.messages if m.startswith("eventlog-socket: dropped")]
    holes = gaps(summ)
    got = len(summ.tagged("oom"))
    note("%d allocations refused; the recording has %d of %d messages, %d gaps, %d drop notices"
         % (refused, got, N, len(holes), len(notices)))
    expect(summ.tagged("after") == list(range(1, 1001)) and
           "done" in [m for _, m in summ.markers],
           "messages posted after memory came back are missing")
    expect(got < N, "nothing was lost: the test did not run out of memory")
    unmarked = [(a, b) for t0, t1, a, b in holes
                if not any(t0 <= t <= t1 for t, _ in notices)]
    expect(not unmarked, "%d of %d gaps have no drop notice, the first messages %d to %d"
           % (len(unmarked), len(holes), unmarked[0][0] if unmarked else 0,
              unmarked[0][1] if unmarked else 0))
    line = last_line(err)
    note(line)
    expect(rc == 0 and "complete" not in line and "gap" in line,
           "record (exit %d) says: %r" % (rc, line))
    lost = re.search(r"out of memory: lost (\d+) chunks", p.stderr())
    expect(lost, "no log line about the loss:\n%s" % p.stderr()[-3000:])
    note(lost.group(0))
    expect(st["chunks_lost"] > 0 and st["bytes_lost"] > 0, "stats %r" % st)
