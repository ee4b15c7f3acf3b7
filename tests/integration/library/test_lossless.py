# SPDX-License-Identifier: BSD-3-Clause
"""The lossless choice: a client that asks for every byte gets every byte,
and the program waits for it as it would for a slow disk; other clients
keep the drop policy; a lossless client that stops reading stalls the
program until it disconnects, and never the program's exit."""

import os
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time

from harness import (GCTL, LOSSLESS, Program, TestFailure, expect, many_clients_result,
                     many_clients_run, note, stall_with_lossless_client, test, upstream)
import harness

# About 1.1 GB of eventlog: 50 million user messages "x N" of 12 to 20 bytes.
BIG_FLOOD = 50_000_000


class Closer:
    """A raw socket in the Scope's list of clients, closed with the test."""

    def __init__(self, sock):
        self.sock = sock

    def close(self):
        self.sock.close()


def reader_counts(out, i=0):
    """bytes, drop notices and tagged messages of many-clients' reader i."""
    m = re.search(r"^reader %d: (\d+) bytes, (\d+) drop notices, (\d+) tagged$" % i, out, re.M)
    expect(m, "no counts for reader %d:\n%s" % (i, out))
    return tuple(int(x) for x in m.groups())


@test(timeout=600)
def lossless_flood_every_byte(s):
    """GHC_EVENTLOG_SLOW_CLIENT=wait, over a gigabyte of eventlog and a
    client that parses every event and reads slower than the program writes:
    the client gets every message, with the end marker and no drop notice,
    exactly as many as the RTS's own file writer records for the same run;
    the program waited for it (stats count the waits)."""
    sock = s.path("wait.sock")
    p = Program(s, "probe", unix=sock, wait=True,
                env={"GHC_EVENTLOG_SLOW_CLIENT": "wait", "GHC_EVENTLOG_CLIENT_BUFFER": "4M"})
    p.wait_socket(sock)
    # Slower than the program floods (about 40-70 MB/s here), so that it
    # has to wait for the client.
    c = many_clients_run(s, sock=sock, extra=["--tag", "x ", "--read-mbps", "30"], timeout=300)
    p.cmd("flood %d x" % BIG_FLOOD, timeout=280)
    st = p.stats()
    p.finish(timeout=120)
    rc, summary, out = many_clients_result(c, timeout=300)
    nbytes, notices, tagged = reader_counts(out)
    note("socket: %.2f GB, %d messages, %d drop notices; the program waited %d times, %.1f s in "
         "all, %.0f ms at most" % (nbytes / 1e9, tagged, notices, st["lossless_waits"],
                                   st["lossless_wait_ns"] / 1e9, st["lossless_wait_max_ns"] / 1e6))
    expect(rc == 0, "the client's stream is not complete (end marker):\n%s" % out)
    expect(nbytes >= 1 << 30, "only %d bytes of eventlog" % nbytes)
    expect(notices == 0 and st["chunks_dropped"] == 0,
           "%d drop notices, %d chunks dropped" % (notices, st["chunks_dropped"]))
    expect(tagged == BIG_FLOOD, "the client got %d of %d messages" % (tagged, BIG_FLOOD))
    expect(st["clients_lossless"] == 1, "the client is not counted as lossless: %r" % st)
    if st["lossless_waits"] == 0:
        note("the client kept up with the program: it never had to wait")
    # The same run with the RTS's file writer: the same messages.
    f = Program(s, "probe-late")
    f.cmd("flood %d x" % BIG_FLOOD, timeout=280)
    f.finish(timeout=120)
    path = s.path("probe-late.eventlog")
    r = subprocess.run([os.path.join(harness.BUILD, "many-clients"), "--file", path, "--tag", "x "],
                       capture_output=True, text=True, timeout=300)
    fbytes, _, ftagged = reader_counts(r.stdout)
    os.unlink(path)
    note("file writer: %.2f GB, %d messages" % (fbytes / 1e9, ftagged))
    expect(r.returncode == 0 and ftagged == tagged,
           "the file writer recorded %d messages, the client %d" % (ftagged, tagged))


@test
def lossless_beside_a_slow_dropping_client(s):
    """One client asks for lossless delivery, another reads slowly under the
    default drop policy: the first gets every message, the second gets drop
    notices and a valid stream, and the memory held stays within the bound
    plus the lossless client's own limit."""
    sock = s.path("mixed.sock")
    env = {"GHC_EVENTLOG_CLIENT_BUFFER": "2M", "GHC_EVENTLOG_MAX_BUFFER": "4M"}
    p = Program(s, "probe", unix=sock, wait=True, env=env)
    p.wait_socket(sock)
    fast = many_clients_run(s, sock=sock, extra=["--lossless", "--tag", "y "])
    p.wait_lossless(1)  # its request read before the data
    slow = many_clients_run(s, sock=sock, extra=["--tag", "y ", "--read-mbps", "5"])
    p.wait_clients(2)
    n = 4_000_000
    p.cmd("flood %d y" % n, timeout=120)
    st = p.stats()
    p.finish(timeout=60)
    rc1, _, out1 = many_clients_result(fast)
    rc2, _, out2 = many_clients_result(slow)
    _, notices1, tagged1 = reader_counts(out1)
    _, notices2, tagged2 = reader_counts(out2)
    note("lossless: %d messages, %d notices; dropping: %d messages, %d notices; peak held %.1f MiB"
         % (tagged1, notices1, tagged2, notices2, st["bytes_held_peak"] / 2**20))
    expect(rc1 == 0 and rc2 == 0, "a stream is not complete:\n%s\n%s" % (out1, out2))
    expect(tagged1 == n and notices1 == 0, "the lossless client got %d of %d messages, %d notices"
           % (tagged1, n, notices1))
    expect(notices2 > 0 and tagged2 < n,
           "the slow client got no drop notice (%d messages)" % tagged2)
    expect(st["bytes_held_peak"] <= (4 + 2 + 8) << 20,
           "%.1f MiB held at the peak" % (st["bytes_held_peak"] / 2**20))


def stalled_lossless_client(s, name, framing):
    """The probe flooding, with one lossless client that has stopped reading:
    returns the program (its flood blocked) and the client."""
    sock = s.path(name + ".sock")
    p = Program(s, "probe", unix=sock, wait=True, env={"GHC_EVENTLOG_CLIENT_BUFFER": "1M"})
    p.wait_socket(sock)
    return p, stall_with_lossless_client(s, p, sock, framing)


@test
def lossless_client_that_stops_reading_stalls_until_it_leaves(s):
    """A client that asked for lossless delivery (GCTL framing) and stops
    reading stops the program; when it disconnects, the program goes on at
    once and its stats show what waiting cost."""
    p, c = stalled_lossless_client(s, "stall", GCTL + LOSSLESS)
    c.close()
    expect(p.readline(timeout=30) == "ok", "the flood did not finish after the client left")
    st = p.stats()
    note("waited %d times, %.1f s in all, %.1f s at most" % (
        st["lossless_waits"], st["lossless_wait_ns"] / 1e9, st["lossless_wait_max_ns"] / 1e9))
    expect(st["lossless_waits"] >= 1 and st["lossless_wait_max_ns"] >= 1e9,
           "stats show no wait: %r" % st)
    p.finish(timeout=30)
    expect(p.proc.returncode == 0, "exit status %s" % p.proc.returncode)


@test
def lossless_client_killed_releases_the_program(s):
    """The same with upstream framing, and a client process that is killed
    (SIGKILL) instead of closing its socket."""
    sock = s.path("killed.sock")
    p = Program(s, "probe", unix=sock, wait=True, env={"GHC_EVENTLOG_CLIENT_BUFFER": "1M"})
    p.wait_socket(sock)
    frame = upstream(LOSSLESS)
    code = ("import socket,sys,time\nc=socket.socket(socket.AF_UNIX)\nc.connect(sys.argv[1])\n"
            "c.sendall(bytes.fromhex(sys.argv[2]))\nprint('connected',flush=True)\n"
            "time.sleep(600)\n")
    k = s.spawn([sys.executable, "-c", code, sock, frame.hex()], stdout=subprocess.PIPE, text=True)
    expect(k.stdout.readline().strip() == "connected", "the client did not connect")
    p.wait_lossless(1)  # its request read before the data
    p.proc.stdin.write(b"flood 2000000 z\n")
    p.proc.stdin.flush()
    try:
        p.readline(timeout=3)
        raise TestFailure("the flood finished although the lossless client read nothing")
    except TestFailure as e:
        if "no answer" not in str(e):
            raise
    k.kill()
    expect(p.readline(timeout=30) == "ok", "the flood did not finish after the client was killed")
    p.finish(timeout=30)
    expect(p.proc.returncode == 0, "exit status %s" % p.proc.returncode)


def exit_with_a_stopped_lossless_client(s, attempt):
    """One run of the scenario below. Returns the program's stderr, or None
    when the premise did not hold: the program already waited for the
    client during the second flood (on a busy machine the RTS may hand
    over a second full buffer then) and the stall rule demoted it before
    the exit began."""
    sock = s.path("exit%d.sock" % attempt)
    # No periodic flush (GHC 9.2+): chunks come only from full buffers and
    # at exit, as on GHC 9.0, so what the RTS holds at exit is known.
    env = {"GHC_EVENTLOG_CLIENT_BUFFER": "64K"}
    if harness.ghc_version() >= (9, 2):
        env["GHC_EVENTLOG_FLUSH_INTERVAL_MS"] = "0"
    p = Program(s, "probe", unix=sock, wait=True, env=env)
    p.wait_socket(sock)
    c = socket.socket(socket.AF_UNIX)
    c.connect(sock)
    s.clients.append(Closer(c))
    c.sendall(GCTL + LOSSLESS)
    p.wait_lossless(1)  # its request read before the data
    got = [0]
    reading = threading.Event()
    reading.set()

    def read():
        while reading.is_set():
            if select.select([c], [], [], 0.05)[0]:
                chunk = c.recv(1 << 16)
                if not chunk:
                    return
                got[0] += len(chunk)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    p.cmd("flood 200000 a", timeout=60)  # read as it comes
    # Stop reading once everything sent so far has been read, so that the
    # client holds nothing back when the program goes on.
    deadline = time.monotonic() + 30
    while got[0] < p.stats()["bytes_sent"] and time.monotonic() < deadline:
        time.sleep(0.05)
    reading.clear()
    t.join()
    # (On GHC 9.2+ the periodic flush goes on sending meanwhile, and a write
    # counts as sent only once complete: read is not compared with sent.)
    expect(got[0] > 0, "the client read nothing")
    # What the RTS writes at exit must find no room: the rest of this flood
    # stays in the RTS's buffers until then, behind what the client left
    # unread in its socket. 20 000 messages (about 0.8 MB) are more than
    # the socket and the 64K buffer hold, and seldom fill the RTS's 2 MiB
    # buffer behind the first flood's rest (a full one goes out before the
    # exit, which waits for the client and demotes it: the premise lost).
    p.cmd("flood 20000 b", timeout=60)
    if p.stats()["clients_lossless"] != 1:
        note("attempt %d: the client was demoted before the exit" % attempt)
        p.kill()
        return None
    p.proc.stdin.close()
    start = time.monotonic()
    status, _ = p.wait_rusage(timeout=60)
    note("exited %.1f s after its input ended" % (time.monotonic() - start))
    expect(status == 0, "exit status %s" % status)
    return p.stderr()


@test(timeout=240)
def lossless_client_never_hangs_exit(s):
    """A lossless client that stops reading just before the program exits
    cannot keep it from exiting: at exit no wait lasts beyond the linger
    time, and the library says so. (The premise, a client still lossless
    when the exit begins, is set up again, up to three times, when a busy
    machine broke it.)"""
    for attempt in range(3):
        err = exit_with_a_stopped_lossless_client(s, attempt)
        if err is not None:
            break
    expect(err is not None, "the client was demoted before the exit in all three attempts")
    expect("did not take the end of the stream within the linger time" in err,
           "no wait at exit was cut short:\n%s" % err)


@test
def record_lossless_pauses_the_program_not_the_data(s):
    """`eventlog-socket record --lossless`: a recorder that is paused
    (SIGSTOP) holds the program up instead of losing chunks; resumed, it
    gets every message, and the recording is complete."""
    sock = s.path("rec.sock")
    p = Program(s, "probe", unix=sock, wait=True, env={"GHC_EVENTLOG_CLIENT_BUFFER": "1M"})
    p.wait_socket(sock)
    out = s.path("rec.eventlog")
    rec = s.spawn([os.path.join(harness.BUILD, "eventlog-socket"), "record", sock, "-o", out,
                   "--lossless"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.wait_stderr("asked for lossless delivery")
    os.kill(rec.pid, signal.SIGSTOP)
    n = 2_000_000
    p.proc.stdin.write(b"flood %d r\n" % n)
    p.proc.stdin.flush()
    try:
        p.readline(timeout=3)
        raise TestFailure("the flood finished although the recorder was stopped")
    except TestFailure as e:
        if "no answer" not in str(e):
            raise
    os.kill(rec.pid, signal.SIGCONT)
    expect(p.readline(timeout=60) == "ok", "the flood did not finish once the recorder resumed")
    p.finish(timeout=60)
    _, err = rec.communicate(timeout=60)
    expect(rec.returncode == 0, "record exited %s: %s" % (rec.returncode, err))
    r = subprocess.run([os.path.join(harness.BUILD, "many-clients"), "--file", out, "--tag", "r "],
                       capture_output=True, text=True, timeout=120)
    nbytes, notices, tagged = reader_counts(r.stdout)
    note("recorded %.1f MB, %d messages, %d drop notices" % (nbytes / 1e6, tagged, notices))
    expect(r.returncode == 0 and tagged == n and notices == 0,
           "the recording has %d of %d messages, %d drop notices" % (tagged, n, notices))
