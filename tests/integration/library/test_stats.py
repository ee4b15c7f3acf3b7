# SPDX-License-Identifier: BSD-3-Clause
"""eventlog_socket_stats(): counters that agree with what clients received,
and the CPU time streaming costs."""

import os
import re
import time

from harness import (COST_NOTICES, FLOOD, GCTL, check_stream, expect, note, serve, test,
                     upstream)


@test
def stats_match_clients(s):
    """The counters agree with what two clients actually received."""
    p, connect = serve(s, "stats")
    a, b = connect(), connect()
    p.wait_clients(2)
    p.cmd("flood %d s" % FLOOD)
    # bytes_sent counts finished writes, so it equals what the clients read
    # once the stream is quiet (on GHC >= 9.2 between two flushes). The
    # flood has reached the library once the RTS handed over its bytes
    # (bytes_received): the two clients' sum passes that mark at half.
    deadline = time.monotonic() + 30
    while True:
        second = p.stats()
        got = len(a.received()) + len(b.received())
        if got == second["bytes_sent"] and second["bytes_received"] >= FLOOD * 10:
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
    clients = [connect(), connect()]
    a = clients[0]
    first = p.wait_clients(2)
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


COST_NOTICE = "eventlog-socket: streaming cost "


@test(timeout=300)  # ghc-events reads three 10 MiB streams: slow on a loaded machine
def cost_notices_only_for_the_asking_client(s):
    """A client that sends GCTL 0x07 gets, about once a second, a notice of
    what streaming cost the program in CPU time, parsed by ghc-events as an
    ordinary message; a client beside it that did not ask gets the same
    stream without any. The upstream framing's id 7 asks too."""
    p, connect = serve(s, "cost")
    a, b, u = connect(), connect(), connect()
    p.wait_clients(3)
    a.wait_header()
    u.wait_header()
    a.send(GCTL + COST_NOTICES)
    u.send(upstream(7))
    a.wait_consumed()
    u.wait_consumed()
    n = int(p.query("flood-for 3.5 cost 2000").split()[1])
    p.cmd("quit")
    p.finish()
    sa = check_stream(s, a.wait_eof(), "a")
    sb = check_stream(s, b.wait_eof(), "b")
    su = check_stream(s, u.wait_eof(), "u")
    notices = [m for _, m in sa.messages if m.startswith(COST_NOTICE)]
    note("%d cost notices, the last: %s" % (len(notices), notices[-1] if notices else "-"))
    expect(len(notices) >= 2, "the asking client got %d cost notices" % len(notices))
    pattern = re.compile(r"^eventlog-socket: streaming cost \d+\.\d ms of CPU in the last "
                         r"\d+\.\d s \(RTS threads \d+\.\d, walker \d+\.\d, loop \d+\.\d\), "
                         r"\d+\.\d MiB sent$")
    for m in notices:
        expect(pattern.match(m), "a notice not in protocol.md's words: %r" % m)
    expect(any(float(m.split()[3]) > 0 for m in notices), "every notice says 0 ms: %r" % notices)
    expect(any(m.startswith(COST_NOTICE) for _, m in su.messages),
           "the upstream frame (id 7) got no cost notice")
    expect(not any(m.startswith(COST_NOTICE) for _, m in sb.messages),
           "the client that did not ask got a cost notice")
    want = list(range(1, n + 1))
    expect(sa.tagged("cost") == want and sb.tagged("cost") == want,
           "the messages differ: %d and %d of %d" % (len(sa.tagged("cost")),
                                                     len(sb.tagged("cost")), n))
