# SPDX-License-Identifier: BSD-3-Clause
"""How a program ends: without clients, with its standard streams closed,
and on SIGTERM (the stream cut, a Haskell handler,
GHC_EVENTLOG_GRACEFUL_SIGTERM)."""

import os
import re
import signal
import subprocess

import harness
from harness import Client, END_MARKER, Program, check_stream, expect, note, test


@test
def no_client_at_all(s):
    """With nobody connecting, the program runs and exits normally."""
    sock = s.path("alone.sock")
    p = Program(s, "fibber-c-main", ["22"], unix=sock, stdin=False)
    out = p.finish()
    expect(p.proc.returncode == 0 and "fib 22 = 17711" in out, "program output %r" % out)
    expect(not os.path.exists(sock), "socket file left behind")


@test
def standard_streams_closed(s):
    """A program started with stdout and stderr closed (`>&- 2>&-`, as a
    daemon may be): a client gets the whole stream, the library's
    descriptors took neither number (they are /dev/null while it runs),
    and the program exits 0 (libuv, had its loop's descriptors taken them,
    would stop it with SIGABRT at exit)."""
    sock = s.path("closed.sock")
    p = Program(s, "fibber-c-main", ["27"] * 20, unix=sock, wait=True, stdin=False,
                closed=(1, 2))
    p.wait_socket(sock)
    c = Client(s, unix=sock)
    fds = {fd: os.readlink("/proc/%d/fd/%d" % (p.proc.pid, fd)) for fd in (1, 2)}
    c.wait_eof(timeout=60)
    rc, _ = p.wait_rusage(timeout=60)
    expect(fds == {1: "/dev/null", 2: "/dev/null"}, "descriptors 1 and 2 were %s" % fds)
    expect(rc == 0, "the program exited %s (SIGABRT: -6)" % rc)
    summ = check_stream(s, c.received(), "closed")
    note("%d events; descriptors 1 and 2 while it ran: %s" % (summ.values["events"], fds))


def sigterm_run(s, name, args=(), env=None):
    """The probe with a client connected mid-run, then SIGTERM; returns the
    exit status, the client's stream, and the socket path."""
    sock = s.path(name + ".sock")
    p = Program(s, "probe", list(args), unix=sock, wait=True, env=env)
    p.wait_socket(sock)
    c = Client(s, unix=sock)
    p.cmd("flood 1000 before-term")
    # The stream has begun (the loop thread writes the header to a client
    # some time after taking it in): what SIGTERM then does to it is what
    # the tests judge.
    c.wait_header()
    os.kill(p.proc.pid, signal.SIGTERM)
    status, _ = p.wait_rusage(timeout=30)
    return status, c.wait_eof(), sock


@test
def sigterm_default_cuts_the_stream(s):
    """What docs/performance.md says of a plain SIGTERM: the program dies at once, the
    stream ends without the end marker (cut), the socket file stays."""
    status, data, sock = sigterm_run(s, "term-default")
    expect(status == -signal.SIGTERM, "exit status %s" % status)
    # Judged by the checker, not by the last two bytes: on GHC 9.2+ a flush
    # sends the global buffer's empty block, whose marker ends in FF FF
    # (capability 0xffff), and a stream may be cut right after it.
    summ = check_stream(s, data, "term-default", partial=True)
    expect(summ.partial, "a stream cut by SIGTERM ends with the end marker?")
    expect(os.path.exists(sock), "the socket file was removed (docs/performance.md says it stays)")


@test
def sigterm_haskell_handler(s):
    """docs/performance.md's remedy: a Haskell SIGTERM handler that ends main through
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


# What a paced reader at exit has left: a flood of this many messages is
# 10-12 MB of stream, so a reader taking 2 MB a second still has seconds of
# it to read when the program exits right after the flood.
EXIT_FLOOD = 300000
CUT_PREFIX = "eventlog-socket: recording cut: "


def exit_with_readers(s, name, env, readers, late=(), before_exit=None):
    """The probe with the clients `readers` (Client keyword arguments each)
    connected, a flood, then the program's exit; returns the program and
    the clients, their streams ended. The clients numbered in `late` read
    nothing until the flood is over: at exit the whole flood is their
    backlog, however fast the machine ran the program. before_exit(p,
    clients) runs between the flood and the exit."""
    sock = s.path(name + ".sock")
    p = Program(s, "probe", unix=sock, wait=True, env=env)
    p.wait_socket(sock)
    clients = [Client(s, unix=sock, **dict(kw, read=kw.get("read", True) and i not in late))
               for i, kw in enumerate(readers)]
    p.wait_clients(len(clients))
    p.cmd("flood %d x" % EXIT_FLOOD)
    for i in late:
        clients[i].start_reading()
        clients[i].wait_bytes(1)
    if before_exit:
        before_exit(p, clients)
    p.cmd("quit")
    p.finish(timeout=120)
    expect(p.proc.returncode == 0, "exit status %s" % p.proc.returncode)
    for c in clients:
        if not c.thread.is_alive() and not c.eof.is_set():
            c.start_reading()  # one that read nothing: what did it get?
        c.wait_eof(timeout=120)
    return p, clients


def judge_cut(s, data, name, tags=("x",)):
    """A stream the library cut: it parses as a whole (no partial event),
    ends with the end marker after a cut notice, and holds the floods'
    first messages in order (the floods of `tags`, one after another), not
    all of them. Returns the notice's why and the messages it holds."""
    summ = check_stream(s, data, name)
    expect(data.endswith(END_MARKER), "%s: no end marker" % name)
    expect(summ.messages and summ.messages[-1][1].startswith(CUT_PREFIX),
           "%s: the last message is not a cut notice: %r" % (name, summ.messages[-1:]))
    counts = []
    for tag in tags:
        got = summ.tagged(tag)
        expect(got == list(range(1, len(got) + 1)),
               "%s: the %s messages are not in order from the first" % (name, tag))
        counts.append(len(got))
    cut = next((i for i, n in enumerate(counts) if n < EXIT_FLOOD), None)
    expect(cut is not None and not any(counts[cut + 1:]),
           "%s: %r messages of floods of %d, not a prefix of them" % (name, counts, EXIT_FLOOD))
    return summ.messages[-1][1][len(CUT_PREFIX):], sum(counts)


@test(timeout=240)
def exit_waits_for_a_reader_that_keeps_reading(s):
    """At exit a client that keeps reading gets the rest of its stream and
    the end marker, even when that takes several times the linger time (a
    reader paced at 2 MB/s with megabytes left; GHC_EVENTLOG_LINGER_MS=1000),
    while a client that stopped reading is cut by the stall rule, not kept
    until the maximum."""
    env = {"GHC_EVENTLOG_LINGER_MS": "1000", "GHC_EVENTLOG_LINGER_MAX_MS": "120000"}
    p, (reader, stopped) = exit_with_readers(s, "keeps", env,
                                             [{"pace": 2e6}, {"read": False}])
    data = reader.received()
    summ = check_stream(s, data, "reader")
    expect(data.endswith(END_MARKER), "the reader's stream has no end marker")
    expect(summ.tagged("x") == list(range(1, EXIT_FLOOD + 1)), "the reader misses messages")
    err = p.stderr()
    expect(re.search(r"client \d+ stopped reading; cutting it", err) and
           "did not take the rest of the stream within" not in err and
           "too slowly" not in err, "log:\n%s" % err)


@test(timeout=240)
def slow_reader_cut_at_exit_ends_on_an_event_boundary(s):
    """A reader too slow to take the rest within GHC_EVENTLOG_LINGER_MAX_MS
    (1.5 s: it reads 2 MB/s and begins when the flood, 10-12 MB, is over)
    is cut, but what it gets ends on an event boundary with a cut
    notice and the end marker: it parses with ghc-events, and
    `eventlog-socket table` says "cut" (exit 1) with the library's reason."""
    env = {"GHC_EVENTLOG_LINGER_MS": "500", "GHC_EVENTLOG_LINGER_MAX_MS": "1500"}
    p, (reader,) = exit_with_readers(s, "slow", env, [{"pace": 2e6}], late=[0])
    data = reader.received()
    why, n = judge_cut(s, data, "slow")
    note("cut after %d of %d messages: %s" % (n, EXIT_FLOOD, why))
    expect(why.startswith("the program exited"), "why: %r" % why)
    path = s.path("slow.eventlog")
    t = subprocess.run([os.path.join(harness.BUILD, "eventlog-socket"), "table", "markers", path,
                        "--csv", "-"], capture_output=True, text=True, timeout=120)
    expect(t.returncode == 1 and "cut: the recording was cut (the program exited" in t.stderr,
           "table: exit %d, %s" % (t.returncode, t.stderr.strip()))


@test(timeout=240)
def slow_client_disconnect_ends_on_an_event_boundary(s):
    """GHC_EVENTLOG_SLOW_CLIENT=disconnect: a client that falls more than
    its 1 MiB behind is disconnected, and its stream ends on an event
    boundary with a cut notice saying so, then the end marker. The program
    runs on after the flood until the client is cut: at exit a reader that
    keeps reading would get the rest instead (GHC_EVENTLOG_LINGER_MAX_MS).
    The reader takes 500 kB/s; the flood (10-12 MB) leaves it megabytes
    behind unless the program writes it more slowly than that (over 16 s)."""
    env = {"GHC_EVENTLOG_SLOW_CLIENT": "disconnect", "GHC_EVENTLOG_CLIENT_BUFFER": "1M"}

    tags = ["x"]

    def until_cut(p, clients):
        # A loaded machine can run the program more slowly than the reader
        # reads: then more floods, up to three, until it falls behind.
        while not clients[0].eof.wait(40) and len(tags) < 4:
            tags.append("yzw"[len(tags) - 1])
            note("not cut yet (%d bytes read): flood %s" % (len(clients[0].received()), tags[-1]))
            p.cmd("flood %d %s" % (EXIT_FLOOD, tags[-1]), timeout=120)
        expect(clients[0].eof.wait(60), "the slow client was not disconnected after %d floods "
               "(it got %d bytes); log:\n%s" % (len(tags), len(clients[0].received()),
                                                p.stderr()))

    p, (reader,) = exit_with_readers(s, "disc", env, [{"pace": 5e5}], before_exit=until_cut)
    why, n = judge_cut(s, reader.received(), "disc", tags)
    note("cut after %d of %d messages: %s" % (n, EXIT_FLOOD * len(tags), why))
    expect(why.startswith("the program disconnected this slow client"), "why: %r" % why)
    expect("disconnecting it" in p.stderr(), "log:\n%s" % p.stderr())
