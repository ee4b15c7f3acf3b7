# SPDX-License-Identifier: BSD-3-Clause
"""`eventlog-socket control`: the frames it sends act as protocol.md says,
and --wait sees their effect in the stream, or says why it cannot."""

import os
import re
import socket
import struct
import threading
import time

import harness
from client_cmd import Cmd, last_line, run
from harness import Client, Program, Skip, check_stream, expect, ghc_version, note, test


def busy(s, name, rts):
    sock = s.path(name + ".sock")
    p = Program(s, "probe", ["--busy"], unix=sock, rts=rts)
    p.wait_socket(sock)
    return p, sock


def need_live_samples():
    if ghc_version() < (9, 2):
        raise Skip("GHC 9.0 hands heap samples to clients only when the RTS's global buffer "
                   "fills or at exit (docs/performance.md, \"GHC 9.0 cannot flush\"), so no effect "
                   "can be "
                   "seen live")


@test
def control_sends_each_command(s):
    """Without --wait each command is sent and the command exits 0; a
    plain client of the same program sees the census it asked for between
    two markers."""
    p, sock = busy(s, "send", ["-hT", "-i100"])
    c = Client(s, unix=sock)
    p.wait_clients(1)  # taken in before marker A
    p.cmd("marker A")
    for word in ("census", "stop", "start"):
        rc, out, err = run(s, ["control", sock, word])
        expect(rc == 0 and ("%s: sent" % word) in out, "%s: exit %d, %r %r" % (word, rc, out, err))
        if word == "census":
            time.sleep(0.5)
            p.cmd("marker B")
    p.cmd("quit")
    p.finish()
    summ = check_stream(s, c.wait_eof(), "send")
    n = summ.samples_between(summ.marker_time("A"), summ.marker_time("B"))
    expect(n >= 1, "no heap sample between the markers around the census request")


@test
def control_census_wait(s):
    """census --wait on a busy program sees its census: a sample taken after
    the request, and seen long before the 10 s timeout (on a quiet machine
    within a second; a busy one delays the library's threads and the
    flush)."""
    need_live_samples()
    p, sock = busy(s, "census", ["-hT", "-i100"])
    time.sleep(0.5)
    rc, out, err = run(s, ["control", sock, "census", "--wait", "--timeout", "10"])
    expect(rc == 0, "exit %d: %r %r" % (rc, out, err))
    m = re.search(r"heap sample at program time ([\d.]+) s, ([\d.]+) s after the request "
                  r"\(seen after ([\d.]+) s\)", out)
    expect(m, "output %r" % out)
    note(out.strip())
    expect(0 <= float(m.group(2)) < 5.0, "the census came %s s after the request" % m.group(2))


@test(timeout=120)
def control_census_wait_after_losing_the_core(s):
    """census --wait when the command's process loses its core right after
    sending (a loaded machine; build/slowsend.so sleeps 1 s after each
    send) while the program takes the census at once: the census is the
    answer, though taken before the command ran again, and --wait says so
    at once; an idle program takes no other sample that would end the
    wait."""
    need_live_samples()
    sock = s.path("lost.sock")
    p = Program(s, "probe", unix=sock, rts=["-hT", "-i0.5"])
    p.wait_socket(sock)
    p.cmd("marker idle")  # started: the program waits on its stdin from now on
    log = s.path("slowsend.log")
    shim = os.path.abspath(os.path.join(harness.BUILD, "slowsend.so"))
    rc, out, err = Cmd(s, ["control", sock, "census", "--wait", "--timeout", "30"],
                       env={"LD_PRELOAD": shim, "SLOWSEND_MS": "1000",
                            "SLOWSEND_LOG": log}).wait(60)
    expect(os.path.exists(log), "the shim never slept after a send")
    expect(rc == 0, "exit %d: %r %r" % (rc, out, err))
    m = re.search(r"heap sample at program time [\d.]+ s, ([\d.]+) s after the request "
                  r"\(seen after ([\d.]+) s\)", out)
    expect(m, "output %r" % out)
    note(out.strip())
    expect(float(m.group(1)) < 10, "the census came %s s after the request" % m.group(1))
    p.cmd("quit")
    p.finish()


@test
def control_stop_start_wait(s):
    """stop --wait sees timed heap samples stop, start --wait sees them
    resume."""
    need_live_samples()
    p, sock = busy(s, "stopstart", ["-hT", "-i0.1"])
    time.sleep(0.5)
    rc, out, err = run(s, ["control", sock, "stop", "--wait", "--timeout", "15"], timeout=30)
    # A sample the RTS was already taking when the frame arrived may land
    # just after the request; the client reports it as the last one. Either
    # way the samples stopped, which is what a user asked for.
    expect(rc == 0 and ("no heap sample after the request" in out
                        or "stop: heap samples stopped" in out),
           "stop: exit %d, %r %r" % (rc, out, err))
    note(out.strip())
    rc, out, err = run(s, ["control", sock, "start", "--wait", "--timeout", "15"], timeout=30)
    expect(rc == 0 and "heap sample" in out, "start: exit %d, %r %r" % (rc, out, err))
    note(out.strip())


@test
def control_wait_timeout_hint(s):
    """--wait that cannot see the effect exits 1 at once: on GHC 9.0 (the
    program has -hT) saying that the sample can only be seen at exit, on
    9.2+ that the program runs without a heap profiling mode."""
    old = ghc_version() < (9, 2)
    p, sock = busy(s, "hint", ["-hT"] if old else [])
    time.sleep(0.3)
    start = time.monotonic()
    rc, out, err = run(s, ["control", sock, "census", "--wait", "--timeout", "3"])
    took = time.monotonic() - start
    expect(rc == 1, "exit %d: %r %r" % (rc, out, err))
    if old:
        hint = last_line(err)
        expect("census: sent" in out and "not waiting" in hint and "GHC 9.0" in hint
               and "when the program exits" in hint, "stdout %r, stderr %r" % (out, err))
    else:
        # The stream says at once that no sample can come.
        hint = last_line(err)
        expect("without a heap profiling mode" in hint and "+RTS -hT" in hint,
               "stderr %r" % err)
    note("%s (after %.1f s)" % (hint, took))


# --wait's judgement, on every GHC: the host's GHC 9.0 cannot show heap
# samples live, so these tests serve a stream shaped as GHC 9.2+ streams
# it (the 9.6.6 fixture's header, the wall clock, heap samples every 100 ms
# of program time, a census sample on request) from a small server that
# acts on the GCTL frames as the library does. The real programs are in the
# tests above, which run on GHC 9.2+.

FIXTURE = os.path.join(harness.ROOT, "tests", "fixtures", "ghc-9.6.6.eventlog")
USER_MSG, PROGRAM_ARGS, WALL_CLOCK_TIME = 19, 30, 43
HEAP_PROF_BEGIN, HEAP_PROF_SAMPLE_BEGIN, BLOCK_MARKER = 160, 162, 18


def header_sizes(header):
    """Payload size of each event type the header declares (0xffff: variable)."""
    sizes, pos = {}, 0
    while True:
        pos = header.find(b"etb\x00", pos)
        if pos < 0:
            return sizes
        tid, size = struct.unpack(">Hh", header[pos + 4:pos + 8])
        sizes[tid] = size & 0xffff
        pos += 8


class FakeProgram:
    """A 9.2+-shaped eventlog stream: ticks every 50 ms, timed heap samples
    every 100 ms while on, one sample per census request; `heap_mode`
    False: no HEAP_PROF_BEGIN and the commands are ignored; `obey_stop`
    False: a stop changes nothing."""

    def __init__(self, s, name, sampling=True, heap_mode=True, obey_stop=True):
        with open(FIXTURE, "rb") as f:
            fixture = f.read()
        self.header = fixture[:fixture.index(b"datb") + 4]
        self.sizes = header_sizes(self.header)
        self.sampling, self.heap_mode, self.obey_stop = sampling, heap_mode, obey_stop
        self.path = s.path(name + ".sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        self.sock.listen(4)
        self.t0 = time.monotonic()
        self.wall0 = time.time()
        self.stopped = threading.Event()
        threading.Thread(target=self.serve, daemon=True).start()

    def now(self):
        return int((time.monotonic() - self.t0) * 1e9)

    def event(self, etype, t, payload):
        if self.sizes[etype] == 0xffff:
            return struct.pack(">HQH", etype, t, len(payload)) + payload
        return struct.pack(">HQ", etype, t) + payload

    def block(self, events):
        t = self.now()
        body = b"".join(events)
        return struct.pack(">HQIQH", BLOCK_MARKER, t, 24 + len(body), t, 0xffff) + body

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.client, args=(conn,), daemon=True).start()

    def client(self, conn):
        t = self.now()
        wall = self.wall0 + t / 1e9  # the wall clock at program time t
        # A program without a heap profiling mode was started without -hT.
        args = b"\0\0\0\0fake\0+RTS\0-hT\0" if self.heap_mode else b"\0\0\0\0fake\0"
        start = [self.event(PROGRAM_ARGS, t, args),
                 self.event(WALL_CLOCK_TIME, t, struct.pack(">IQI", 0, int(wall),
                                                            int(wall % 1 * 1e9)))]
        if self.heap_mode:
            start.append(self.event(HEAP_PROF_BEGIN, t, b"\x00" + struct.pack(">Q", 100000000)
                                    + b"\0\0\0\0" + b"\0" * 8))
        conn.sendall(self.header + self.block(start))
        conn.setblocking(False)
        pending, next_sample = b"", 0
        try:
            while not self.stopped.is_set():
                events = [self.event(USER_MSG, self.now(), b"tick")]
                try:
                    pending += conn.recv(4096)
                except BlockingIOError:
                    pass
                while b"GCTL" in pending and len(pending) >= pending.index(b"GCTL") + 5:
                    i = pending.index(b"GCTL")
                    cmd, pending = pending[i + 4], pending[i + 5:]
                    if not self.heap_mode:
                        continue
                    if cmd == 3:
                        events.append(self.event(HEAP_PROF_SAMPLE_BEGIN, self.now(), b"\0" * 8))
                    elif cmd == 2 and self.obey_stop:
                        self.sampling = False
                    elif cmd == 1:
                        self.sampling = True
                if self.sampling and self.heap_mode and self.now() >= next_sample:
                    events.append(self.event(HEAP_PROF_SAMPLE_BEGIN, self.now(), b"\0" * 8))
                    next_sample = self.now() + 100000000
                conn.setblocking(True)
                conn.sendall(self.block(events))
                conn.setblocking(False)
                time.sleep(0.05)
        except OSError:
            pass
        conn.close()


@test(ghc_free=True)
def control_wait_judgement(s):
    """Against a stream shaped as GHC 9.2+ sends it: census --wait and
    start --wait report the sample after the request, stop --wait reports
    samples stopping; a program that ignores the command or has no heap
    profiling mode makes --wait exit 1 with the hint."""
    census = FakeProgram(s, "census", sampling=False)
    time.sleep(0.3)
    rc, out, err = run(s, ["control", census.path, "census", "--wait", "--timeout", "5"])
    expect(rc == 0 and "census: heap sample at program time" in out, "census: %d %r %r"
           % (rc, out, err))
    note(out.strip())
    sampling = FakeProgram(s, "sampling", sampling=True)
    time.sleep(0.5)
    rc, out, err = run(s, ["control", sampling.path, "stop", "--wait", "--timeout", "5"])
    expect(rc == 0 and ("stop: heap samples stopped, the last at" in out or
                        "stop: no heap sample after the request" in out), "stop: %d %r %r"
           % (rc, out, err))
    note(out.strip())
    rc, out, err = run(s, ["control", sampling.path, "start", "--wait", "--timeout", "5"])
    expect(rc == 0 and "start: heap sample at" in out, "start: %d %r %r" % (rc, out, err))
    stubborn = FakeProgram(s, "stubborn", sampling=True, obey_stop=False)
    time.sleep(0.3)
    rc, out, err = run(s, ["control", stubborn.path, "stop", "--wait", "--timeout", "2"])
    expect(rc == 1 and "heap samples did not stop within 2 s" in err, "stubborn: %d %r %r"
           % (rc, out, err))
    plain = FakeProgram(s, "plain", sampling=False, heap_mode=False)
    time.sleep(0.3)
    rc, out, err = run(s, ["control", plain.path, "census", "--wait", "--timeout", "2"])
    expect(rc == 1 and "no heap sample arrived" in err and "hint:" in last_line(err)
           and "+RTS -hT" in last_line(err), "plain: %d %r %r" % (rc, out, err))
    for p in (census, sampling, stubborn, plain):
        p.stopped.set()
        p.sock.close()
