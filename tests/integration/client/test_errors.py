# SPDX-License-Identifier: BSD-3-Clause
"""`eventlog-socket` facing what is not a working eventlog-socket server:
every case is one line on stderr and exit status 2, never a hang (each run
has a deadline); and --retry finds a program started after the client."""

import os
import re
import signal
import socket
import threading
import time

from client_cmd import Cmd, run
import harness
from harness import END_MARKER, Program, check_stream, expect, note, test

FIXTURE = os.path.join(harness.ROOT, "tests", "fixtures", "ghc-9.6.6.eventlog")


def one_line_error(s, args, words, timeout=15.0):
    """Run the command; it must exit 2 with one stderr line containing each of `words`."""
    rc, out, err = run(s, args, timeout)
    lines = err.strip().splitlines()
    expect(rc == 2, "%s: exit %d (expected 2): %r" % (args, rc, err))
    expect(len(lines) == 1, "%s: %d lines on stderr, not one: %r" % (args, len(lines), err))
    for w in words:
        expect(w in lines[0], "%s: %r does not say %r" % (args, lines[0], w))
    return lines[0]


class FakeServer:
    """A Unix socket server that answers each connection with `reply`
    (bytes, or None: accept and stay silent), in a thread."""

    def __init__(self, s, name, reply, close=True):
        self.path = s.path(name)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        self.sock.listen(8)
        self.reply, self.close_after = reply, close
        self.conns = []
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            if self.reply is not None:
                try:
                    conn.sendall(self.reply)
                except OSError:
                    pass
                if self.close_after:
                    conn.close()


@test(ghc_free=True)
def client_bad_address(s):
    """Addresses that cannot be: one line naming the problem, exit 2."""
    for addr, word in [("app.sock", "./NAME"), (":0", "port"), (":99999", "port"),
                       ("localhost:", "port"), ("::1:80", "brackets"), ("", "empty"),
                       ("tcp:nowhere", "not an address")]:
        one_line_error(s, ["record", addr], [word])
        one_line_error(s, ["control", addr, "census"], [word])
    # Usage errors too.
    for args in (["record"], ["control", "/x.sock", "explode"], ["nosuch"], ["record", "/a", "/b"],
                 ["record", "/a", "--duration", "soon"]):
        rc, _, err = run(s, args)
        expect(rc == 2 and err.strip(), "%s: exit %d, %r" % (args, rc, err))


@test(ghc_free=True)
def client_refused(s):
    """Nothing listening: a missing socket, a stale socket file, a closed TCP
    port, a file that is no socket; each one line, exit 2."""
    one_line_error(s, ["record", s.path("missing.sock")], ["no such socket", "--retry"])
    stale = s.path("stale.sock")
    sk = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sk.bind(stale)
    sk.close()  # the file stays, nobody listens
    one_line_error(s, ["record", stale], ["connection refused"])
    t = socket.socket()
    t.bind(("127.0.0.1", 0))
    port = t.getsockname()[1]
    t.close()
    one_line_error(s, ["record", ":%d" % port], ["connection refused"])
    one_line_error(s, ["control", "tcp:127.0.0.1:%d" % port, "census"], ["connection refused"])
    plain = s.path("plain-file")
    open(plain, "w").close()
    one_line_error(s, ["record", plain], ["a file, not a running program's socket", "report"])


@test(ghc_free=True)
def client_peer_not_eventlog_socket(s):
    """A server that answers with something else (an HTTP reply, random
    bytes) is no eventlog-socket server: one line, exit 2, no file."""
    http = FakeServer(s, "http.sock", b"HTTP/1.1 400 Bad Request\r\n\r\n")
    out = s.path("never.eventlog")
    one_line_error(s, ["record", http.path, "-o", out], ["not an eventlog-socket server"])
    expect(not os.path.exists(out), "a file was created for a stream without a header")
    noise = FakeServer(s, "noise.sock", os.urandom(100000), close=False)
    one_line_error(s, ["control", noise.path, "census"], ["not an eventlog-socket server"])
    # A server that accepts and closes at once (as one refusing clients does).
    closer = FakeServer(s, "closer.sock", b"")
    one_line_error(s, ["record", closer.path], ["closed the connection"])


def without_cut_notice(data, keep):
    """`data` with the cut notice record writes before its end marker (a
    block of its own after the first `keep` bytes) taken out, once it is
    checked to be one."""
    block = data[keep:-len(END_MARKER)]
    expect(block[:2] == b"\x00\x12" and int.from_bytes(block[10:14], "big") == len(block)
           and b"eventlog-socket: recording cut: " in block,
           "no cut notice after the %d bytes kept: %r" % (keep, block[:80]))
    return data[:keep] + data[-len(END_MARKER):]


@test(ghc_free=True)
def client_header_then_garbage(s):
    """A real eventlog header followed by garbage: one line saying where the
    stream went wrong, exit 2; record keeps a file that parses (the header
    and an end marker)."""
    with open(FIXTURE, "rb") as f:
        fixture = f.read()
    hlen = fixture.index(b"datb") + 4
    bad = FakeServer(s, "bad.sock", fixture[:hlen] + b"\x7f\x00garbage" * 1000)
    out = s.path("bad.eventlog")
    line = one_line_error(s, ["record", bad.path, "-o", out], ["malformed eventlog at byte"])
    note(line)
    with open(out, "rb") as f:
        data = f.read()
    expect(without_cut_notice(data, hlen) == fixture[:hlen] + END_MARKER,
           "the file is not the header, a cut notice and an end marker")
    check_stream(s, data, "header-only")
    # The same after whole blocks: they are kept. (The fixture's blocks by
    # their markers' sizes; its last block holds the end marker.)
    pos = last = hlen
    while pos + 24 <= len(fixture) and fixture[pos:pos + 2] == b"\x00\x12":
        last, pos = pos, pos + int.from_bytes(fixture[pos + 10:pos + 14], "big")
    blocks = fixture[:last]
    bad2 = FakeServer(s, "bad2.sock", blocks + b"\x00\x01garbage" * 1000)
    out2 = s.path("bad2.eventlog")
    one_line_error(s, ["record", bad2.path, "-o", out2], ["malformed"])
    with open(out2, "rb") as f:
        expect(without_cut_notice(f.read(), len(blocks)) == blocks + END_MARKER,
               "the whole blocks before the garbage were not kept")
    one_line_error(s, ["control", bad.path, "census", "--wait"], ["malformed"])


@test(ghc_free=True)
def client_connect_timeout(s):
    """A socket that is listened on but never accepted or answered (Unix
    and TCP): the header does not come, and --connect-timeout ends the wait
    with one line, exit 2."""
    u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    u.bind(s.path("silent.sock"))
    u.listen(1)
    t = socket.socket()
    t.bind(("127.0.0.1", 0))
    t.listen(1)
    start = time.monotonic()
    one_line_error(s, ["record", s.path("silent.sock"), "--connect-timeout", "0.5"],
                   ["no eventlog header", "0.5 s"])
    one_line_error(s, ["control", ":%d" % t.getsockname()[1], "stop", "--connect-timeout", "0.5"],
                   ["no eventlog header"])
    note("both in %.1f s" % (time.monotonic() - start))
    u.close()
    t.close()


@test
def client_retry_finds_late_program(s):
    """record --retry started before the program (GHC_EVENTLOG_WAIT=1)
    connects once it appears and records the whole run."""
    sock = s.path("late.sock")
    out = s.path("late.eventlog")
    rec = Cmd(s, ["record", sock, "--retry", "-o", out])
    time.sleep(0.5)
    expect(rec.proc.poll() is None, "record gave up: %r" % rec.stderr())
    p = Program(s, "probe", unix=sock, wait=True)
    p.cmd("flood 1000 late")
    p.cmd("quit")
    p.finish()
    rc, _, err = rec.wait()
    expect(rc == 0, "exit %d: %s" % (rc, err))
    with open(out, "rb") as f:
        summ = check_stream(s, f.read(), "late")
    expect(summ.tagged("late") == list(range(1, 1001)), "messages missing")


@test
def client_file_cannot_be_written(s):
    """A recording whose file cannot be created (-o in a missing directory,
    or the default name in a directory nobody can write, /proc): one line,
    exit 2, whether the file is opened at the header or at the end."""
    sock = s.path("nowrite.sock")
    p = Program(s, "probe", unix=sock)
    p.wait_socket(sock)
    one_line_error(s, ["record", sock, "-o", s.path("missing/dir.eventlog")],
                   ["cannot write", "missing/dir.eventlog", "does not exist"])
    # Named when the stream names the program, or at the interrupt.
    rec = Cmd(s, ["record", sock], cwd="/proc")
    # Interrupted once it is under way (connected, so its signal handlers
    # are in place), not while the process is still starting.
    p.wait_clients(1)
    time.sleep(0.5)
    rec.signal(signal.SIGINT)
    rc, _, err = rec.wait()
    lines = err.strip().splitlines()
    expect(rc == 2 and len(lines) == 1 and "cannot create" in lines[0],
           "exit %d: %r" % (rc, err))


@test(ghc_free=True)
def client_usage_errors(s):
    """Each subcommand's command line, through the one option parser:
    --help prints the help on stdout and exits 0; a missing address, an
    unknown option, an option without its value, a bad number of seconds
    or an extra argument exits 2 with a message on stderr that names the
    word at fault, before any connection is tried (the address below
    does not exist, and no "no such socket" may appear)."""
    sock = s.path("never.sock")
    cmds = {"record": "ADDR", "control": "ADDR", "heap": "ADDR|FILE", "top": "ADDR",
            "serve": "ADDR", "report": "FILE|ADDR"}
    for cmd, what in cmds.items():
        rc, out, err = run(s, [cmd, "--help"])
        expect(rc == 0 and out.startswith("usage: eventlog-socket " + cmd) and not err,
               "%s --help: exit %d, %r %r" % (cmd, rc, out[:80], err))
        rc, out, err = run(s, [cmd])
        expect(rc == 2 and err.startswith("eventlog-socket %s: %s is required\n"
                                          "usage: eventlog-socket %s" % (cmd, what, cmd))
               and not out,
               "%s without an address: exit %d, %r" % (cmd, rc, err[:80]))
    cases = [
        (["record", sock, "--bogus"], ["unknown option --bogus", "usage:"]),
        (["record", sock, "-o"], ["-o needs a file name"]),
        (["record", sock, "--duration", "abc"], ["--duration", "abc"]),
        (["record", sock, "--duration", "-1"], ["--duration", "-1"]),
        (["record", sock, "--connect-timeout", "nan"], ["--connect-timeout", "nan"]),
        (["record", sock, "other"], ["one address only", "other"]),
        (["control", sock, "start", "--timeout", "0"], ["--timeout"]),
        (["control", sock, "explode"], ["explode"]),
        (["heap", sock], ["--hp", "--csv"]),
        (["top", sock, "extra"], ["one address only", "extra"]),
        (["serve", sock, "--http"], ["--http"]),
        (["report", sock, "-o"], ["-o"]),
        (["bogus"], ["no subcommand bogus"]),
    ]
    for args, words in cases:
        rc, out, err = run(s, args)
        expect(rc == 2, "%s: exit %d (expected 2): %r" % (args, rc, err))
        for w in words:
            expect(w in err, "%s: %r does not say %r" % (args, err, w))
        expect("no such socket" not in err, "%s: tried to connect: %r" % (args, err))
    note("%d subcommands' --help and missing address, %d bad command lines"
         % (len(cmds), len(cases)))


@test(ghc_free=True)
def watch_memory_refusal_gives_values_it_takes(s):
    """watch --memory below its least (64K, 1000) or not a size (1.5M):
    exit 2, one line naming the value; every example of a size the line
    gives is one --memory takes (it gave 64K, which it refuses)."""
    sock = s.path("never.sock")
    examples = set()
    for bad in ("64K", "1000", "1.5M"):
        line = one_line_error(s, ["watch", sock, "--trigger", "exit-failure", "--memory", bad],
                              ["--memory %s:" % bad])
        m = re.search(r"\(([^()]*)\)\s*$", line)
        expect(m is not None, "no examples in %r" % line)
        found = re.findall(r"(?:^|[:,] )(\d+[A-Za-z]*)(?=,|$)", m.group(1))
        expect(found, "no examples in %r" % line)
        examples.update(found)
    for ex in sorted(examples):
        rc, _, err = run(s, ["watch", sock, "--trigger", "exit-failure", "--memory", ex])
        expect(rc == 2 and "no such socket" in err and "--memory" not in err,
               "--memory %s, given as an example, is refused: %r" % (ex, err))
    note("examples given, all taken: %s" % ", ".join(sorted(examples)))
