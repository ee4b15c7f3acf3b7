# SPDX-License-Identifier: BSD-3-Clause
"""`eventlog-socket record`: a recording is what a plain client receives,
a valid eventlog wherever it stops, named after the program, and says how
it ended."""

import fcntl
import os
import re
import random
import signal
import subprocess
import threading
import time

import harness

from client_cmd import Cmd, last_line, pty_stderr_of
from harness import (END_MARKER, FLOOD, Client, Program, check_stream, expect, ghc_version, note,
                     test)


def quiet_env():
    """No periodic flushing on GHC 9.2+ (9.0 has none and refuses the
    setting), so that no chunk is written before the test floods: every
    client connected by then gets the same stream from its first chunk."""
    return {} if ghc_version() < (9, 2) else {"GHC_EVENTLOG_FLUSH_INTERVAL_MS": "0"}


def wait_clients(p, n):
    deadline = time.monotonic() + 20
    while p.stats()["clients_connected"] < n:
        expect(time.monotonic() < deadline, "the program never saw %d clients" % n)
        time.sleep(0.05)


def wait_recording(rec, out):
    """Wait until `record` has begun: its file is created once the header
    has come, after its signal handlers are in place."""
    deadline = time.monotonic() + 30
    while not os.path.exists(out):
        expect(rec.proc.poll() is None and time.monotonic() < deadline,
               "the recording did not begin: %s" % rec.stderr())
        time.sleep(0.01)


@test
def record_equals_plain_client(s):
    """A recording of a whole run is byte for byte what a plain client
    connected at the same time receives; exit 0, and the last line says the
    program's end marker arrived."""
    sock = s.path("rec.sock")
    p = Program(s, "probe", unix=sock, wait=True, env=quiet_env())
    p.wait_socket(sock)
    out = s.path("run.eventlog")
    # A first client starts the program (GHC_EVENTLOG_WAIT); what the RTS
    # writes as it starts (GHC 9.10 hands its first events over at once)
    # goes to that one. The two compared then join an idle program, so both
    # get the same header, definitions block and chunks.
    Client(s, unix=sock)
    wait_clients(p, 1)
    p.cmd("marker started")
    time.sleep(0.5)
    rec = Cmd(s, ["record", sock, "-o", out])
    c = Client(s, unix=sock)
    wait_clients(p, 3)
    p.cmd("flood %d rec" % FLOOD)
    p.cmd("marker recorded")
    p.cmd("quit")
    p.finish()
    plain = c.wait_eof()
    rc, _, err = rec.wait()
    expect(rc == 0, "record exited %d: %s" % (rc, err))
    expect("complete" in last_line(err) and "end marker arrived" in last_line(err),
           "last line: %r" % last_line(err))
    expect(len(err.strip().splitlines()) == 1, "stderr is not a terminal, yet: %r" % err)
    with open(out, "rb") as f:
        data = f.read()
    expect(data == plain, "the recording (%d bytes) differs from the plain client's stream "
           "(%d bytes)" % (len(data), len(plain)))
    summ = check_stream(s, data, "recorded")
    expect(summ.tagged("rec") == list(range(1, FLOOD + 1)), "messages missing")
    expect(data.endswith(END_MARKER), "no end marker")
    note("%d bytes, identical" % len(data))


@test
def record_over_tcp_names_the_file(s):
    """Without -o, over TCP, the file is PROGRAM-PID.eventlog from the
    stream's own events, in the current directory."""
    p = Program(s, "probe", tcp_port=0, wait=True)
    port = p.tcp_port()
    rec = Cmd(s, ["record", ":%d" % port])
    p.cmd("flood 1000 named")
    p.cmd("quit")
    p.finish()
    rc, _, err = rec.wait()
    expect(rc == 0, "record exited %d: %s" % (rc, err))
    name = "probe-%d.eventlog" % p.proc.pid
    expect(name in last_line(err), "last line %r does not name %s" % (last_line(err), name))
    with open(s.path(name), "rb") as f:
        summ = check_stream(s, f.read(), "named")
    expect(summ.tagged("named") == list(range(1, 1001)), "messages missing")


@test(timeout=300)  # 21 recordings and checks: about a minute on a quiet machine
def record_cut_by_sigint_twenty_times(s):
    """Twenty recordings of a busy program, each stopped by SIGINT at a
    random moment (one by SIGTERM): every file parses with ghc-events and
    ends with an end marker; exit 1, and the last line says it was cut."""
    sock = s.path("busy.sock")
    p = Program(s, "probe", unix=sock)
    p.wait_socket(sock)
    # About 6 MB/s of user messages for a minute; the answer is not awaited.
    p.proc.stdin.write(b"flood-for 60 busy 2000\n")
    p.proc.stdin.flush()
    seed = random.randrange(1 << 30)
    rnd = random.Random(seed)
    note("seed %d" % seed)
    sizes = []
    for i in range(21):
        out = s.path("cut%d.eventlog" % i)
        rec = Cmd(s, ["record", sock, "-o", out])
        # A signal before that would find a process still starting, which
        # it kills.
        wait_recording(rec, out)
        time.sleep(rnd.uniform(0.05, 1.2))
        sig = signal.SIGTERM if i == 20 else signal.SIGINT
        rec.signal(sig)
        rc, _, err = rec.wait()
        expect(rc == 1, "recording %d exited %d: %s" % (i, rc, err))
        expect("cut" in last_line(err) and
               ("SIGINT" if sig == signal.SIGINT else "SIGTERM") in last_line(err),
               "recording %d, last line: %r" % (i, last_line(err)))
        with open(out, "rb") as f:
            data = f.read()
        expect(data.endswith(END_MARKER), "recording %d does not end with an end marker" % i)
        check_stream(s, data, "cut%d" % i)
        sizes.append(len(data))
        os.unlink(out)
    note("sizes %d..%d bytes" % (min(sizes), max(sizes)))


@test
def record_duration(s):
    """--duration stops the recording where the user asked: exit 0 (so
    `record --duration 60 && next-step` goes on), the last line says it
    stopped as asked; the file is a valid eventlog ending with an end
    marker, after a notice saying where it stopped (the program time)."""
    sock = s.path("dur.sock")
    p = Program(s, "probe", unix=sock)
    p.wait_socket(sock)
    p.proc.stdin.write(b"flood-for 30 dur 2000\n")
    p.proc.stdin.flush()
    out = s.path("dur.eventlog")
    rc, _, err = Cmd(s, ["record", sock, "-o", out, "--duration", "1.5"]).wait()
    expect(rc == 0 and "stopped after --duration 1.5 s" in last_line(err)
           and "as asked" in last_line(err), "exit %d, %r" % (rc, err))
    with open(out, "rb") as f:
        data = f.read()
    expect(data.endswith(END_MARKER), "no end marker")
    expect(re.search(rb"recording cut: stopped after --duration 1\.5 s, at program time "
                     rb"[0-9.]+ s", data), "no notice saying where it stopped")
    check_stream(s, data, "dur")


@test
def record_cut_when_program_killed(s):
    """A program killed outright (no end marker from it) leaves a recording
    that still parses; exit 1 and the last line says the stream was cut."""
    sock = s.path("kill.sock")
    p = Program(s, "probe", unix=sock, wait=True)
    p.wait_socket(sock)
    out = s.path("killed.eventlog")
    rec = Cmd(s, ["record", sock, "-o", out])
    p.cmd("flood %d k" % FLOOD)
    wait_recording(rec, out)  # killed once the stream has begun
    p.kill()
    rc, _, err = rec.wait()
    expect(rc == 1 and "without its end marker" in last_line(err), "exit %d, %r" % (rc, err))
    with open(out, "rb") as f:
        data = f.read()
    expect(data.endswith(END_MARKER), "no end marker")
    check_stream(s, data, "killed")


@test
def record_progress_on_a_terminal(s):
    """On a terminal, a progress line (MiB, MiB/s, events/s, drop notices)
    is redrawn on stderr; the final line follows it."""
    sock = s.path("tty.sock")
    p = Program(s, "probe", unix=sock, wait=True)
    p.wait_socket(sock)

    def work():
        p.cmd("flood 1000 t")
        p.cmd("sleep 1")
        p.cmd("quit")
        p.finish()

    rc, text = pty_stderr_of(s, ["record", sock, "-o", s.path("tty.eventlog")], work)
    expect(rc == 0, "exit %d: %r" % (rc, text))
    expect("\r" in text and "MiB/s" in text and "events/s" in text and "drop notices" in text,
           "no progress line: %r" % text)
    expect("complete" in last_line(text.replace("\r", "\n")), "final line: %r" % text)


@test
def record_counts_drop_notices(s):
    """A recorder that stops reading (SIGSTOP) falls behind; the server
    skips chunks for it and says so in the stream: the final line counts
    the drop notices, and the file still parses."""
    sock = s.path("drop.sock")
    p = Program(s, "probe", unix=sock, wait=True,
                env={"GHC_EVENTLOG_CLIENT_BUFFER": "1M"})
    p.wait_socket(sock)
    out = s.path("drop.eventlog")
    rec = Cmd(s, ["record", sock, "-o", out])
    p.cmd("flood 1000 before")
    rec.signal(signal.SIGSTOP)
    p.cmd("flood %d during" % (FLOOD * 3))
    rec.signal(signal.SIGCONT)
    p.cmd("flood 1000 after")
    p.cmd("quit")
    p.finish()
    rc, _, err = rec.wait()
    expect(rc == 0, "exit %d: %s" % (rc, err))
    expect("drop notice" in last_line(err), "no drop notices counted: %r" % last_line(err))
    with open(out, "rb") as f:
        summ = check_stream(s, f.read(), "dropped")
    notices = [m for _, m in summ.messages if m.startswith("eventlog-socket: dropped")]
    expect(notices and (" %d drop notice" % len(notices)) in last_line(err),
           "the stream has %d notices, the line says %r" % (len(notices), last_line(err)))
    note(last_line(err))


@test(timeout=180)
def record_says_when_the_program_cut_it(s):
    """A recorder slower than the program under GHC_EVENTLOG_SLOW_CLIENT=
    disconnect (its output a pipe read at about 1.5 MB/s) is cut by the
    program on an event boundary: the recording parses, ends with the
    program's cut notice and the end marker, and `record` says "cut" with
    the program's reason (exit 1), not that the stream simply ended."""
    sock = s.path("slowrec.sock")
    p = Program(s, "probe", unix=sock, wait=True,
                env={"GHC_EVENTLOG_SLOW_CLIENT": "disconnect", "GHC_EVENTLOG_CLIENT_BUFFER": "1M",
                     # "Stopped reading" is half the linger: 5 s, not 1 s,
                     # so a loaded machine's pauses in the drain below (and
                     # record blocked writing to it meanwhile) never look
                     # like a recorder that stopped.
                     "GHC_EVENTLOG_LINGER_MS": "10000"})
    p.wait_socket(sock)
    exe = os.path.join(harness.BUILD, "eventlog-socket")
    rec = s.spawn([exe, "record", sock, "-o", "-"], stdout=subprocess.PIPE,
                  stderr=subprocess.PIPE)
    got = bytearray()
    # A 1 MiB pipe: record's writes of 2 MiB blocks never hold its loop for
    # long, whatever the machine's load.
    fcntl.fcntl(rec.stdout.fileno(), 1031, 1 << 20)  # F_SETPIPE_SZ

    def drain():
        """The consumer of record's output, about 1.5 MB/s on average:
        slower than the flood even on a loaded machine (at 2 MB/s, beside
        two other suites, a program slowed down to it was never cut), and
        fast enough that record never stops reading its
        socket for long (a recorder blocked for the stall time has stopped
        reading, and the program closes it at once). Paced by the clock, so
        after a pause (a loaded machine) it reads at full speed until it has
        caught up instead of falling further behind."""
        began = time.monotonic()
        while True:
            chunk = rec.stdout.read1(1 << 15)
            if not chunk:
                return
            got.extend(chunk)
            ahead = began + len(got) / 1.5e6 - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)

    t = threading.Thread(target=drain, daemon=True)
    t.start()
    wait_clients(p, 1)
    # The program writes faster than the drain for 12 s (3000 messages
    # every 10 ms, up to 6 MB/s; a loaded machine slows it, not below the
    # drain's pace): the recorder falls behind and does not catch up, so it
    # is cut once it has stayed past its 1 MiB for its stall time (5 s). A
    # single burst it could drain at its pace would not cut it.
    answer = p.query("flood-for 12 r 3000", timeout=120)
    expect(answer.startswith("ok "), "flood-for answered %r" % answer)
    p.cmd("quit")
    p.finish(timeout=60)
    t.join(timeout=120)
    err = rec.stderr.read().decode(errors="replace")
    rec.wait(timeout=30)
    note(last_line(err))
    expect(rec.returncode == 1 and "cut, the program cut this connection short: the program "
           "disconnected this slow client" in last_line(err),
           "exit %s, %r" % (rec.returncode, err))
    summ = check_stream(s, bytes(got), "slowrec")
    expect(got.endswith(END_MARKER) and summ.messages and
           summ.messages[-1][1].startswith("eventlog-socket: recording cut: the program "
                                           "disconnected"),
           "the recording's last message: %r" % summ.messages[-1:])
