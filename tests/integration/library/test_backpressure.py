# SPDX-License-Identifier: BSD-3-Clause
"""Clients that do not read: the memory bound, drop notices at every gap,
the disconnect policy, and a program whose stderr nobody reads."""

import os
import subprocess
import time

import harness
from harness import (Client, FLOOD, Program, check_stream, enough_descriptors, expect,
                     fib_markers, many_clients_result, many_clients_run, note, test)


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
    start = time.monotonic()
    status, rss = p.wait_rusage(timeout=60)
    p.seconds = time.monotonic() - start
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
    note("peak RSS %d KiB (baseline with one client: %d KiB); %d log lines in %.1f s" %
         (rss, rss0, len(lines), p.seconds))
    # The bound (1 MiB), the free buffers kept for the RTS (8 MiB) and the
    # hand-off's limit when the library's threads lag (8 MiB), docs/performance.md.
    expect(rss - rss0 <= (1 + 8 + 8) * 1024, "peak RSS grew by %d KiB" % (rss - rss0))
    # A few lines at start and exit, then per cause at most one line and one
    # summary a second, however many clients misbehave (a loaded machine
    # makes the run, and so the seconds, longer).
    most = 10 + 4 * int(p.seconds + 1)
    expect(len(lines) <= most, "%d log lines for 1000 clients in %.1f s (at most %d):\n%s"
           % (len(lines), p.seconds, most, "\n".join(lines[:40])))
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
    c = s.spawn([os.path.join(harness.BUILD, "many-clients"), "--unix", sock,
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


@test(timeout=300)  # two 10 s floods and 30 MB to judge: 30 s quiet, 60 s seen under load
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
    # A client is cut once it has stayed more than 12 MiB behind for its
    # stall time (1 s): the one that reads nothing falls behind by the whole
    # flood (about 17 MiB) and stays there; the reading one, even when the
    # library's thread was held up through the flood and handed it all out
    # at once (a loaded machine), takes it in well within that.
    env = {"GHC_EVENTLOG_CLIENT_BUFFER": "12M", "GHC_EVENTLOG_SLOW_CLIENT": "disconnect"}
    sock = s.path("disc.sock")
    p = Program(s, "probe", unix=sock, wait=True, env=env)
    p.wait_socket(sock)
    good = Client(s, unix=sock)
    bad = Client(s, unix=sock, read=False)
    p.wait_clients(2)  # both taken in before the data
    p.cmd("flood %d x" % (8 * FLOOD))
    # The library judges the lag a stall time after it began: wait for it.
    p.wait_stderr("disconnecting it", timeout=60)
    deadline = time.monotonic() + 30
    while (st := p.stats())["clients_lagged"] < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    p.cmd("quit")
    p.finish()
    expect(p.proc.returncode == 0, "probe exited with %s" % p.proc.returncode)
    expect(st["clients_lagged"] == 1 and st["chunks_dropped"] == 0, "stats %r" % st)
    summ = check_stream(s, good.wait_eof(), "good")
    expect(summ.tagged("x") == list(range(1, 8 * FLOOD + 1)), "reading client lost data")
    bad.start_reading()
    check_stream(s, bad.wait_eof(), "bad", partial=True)
