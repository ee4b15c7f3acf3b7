# SPDX-License-Identifier: BSD-3-Clause
"""`eventlog-socket top` in a real terminal: tmux runs it against a running
program, the test reads the screen (capture-pane) and presses keys
(send-keys). A private tmux server (-L) per test, always killed."""

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import threading
import time

import harness
from harness import Skip, check_stream, expect, ghc_version, note, serve, test
from tmuxpane import TmuxPane


class Tmux(TmuxPane):
    """The shared tmux driver (scripts/pylib/tmuxpane.py), closed by the
    test's scope, failing the test when the screen never shows a pattern."""

    def __init__(self, s, cmd, width=120, height=40):
        if shutil.which("tmux") is None:
            raise Skip("tmux is not installed")
        super().__init__(cmd, name="es-top", width=width, height=height)
        # tmux's server would keep running after the test: the scope's
        # cleanup list gets a closer that kills it.
        s.clients.append(self)

    def wait(self, pattern, timeout=15.0, what=None):
        """Wait until the screen matches `pattern`; return the match."""
        m, text = super().wait(pattern, timeout)
        if m is None:
            raise harness.TestFailure("the screen never showed %s; it shows:\n%s"
                                      % (what or repr(pattern), text))
        return m


class Tee:
    """A Unix socket between one viewer and the program that keeps a copy
    of what the viewer was sent: the stream it drew from, byte for byte,
    for an oracle to read. Closed by the test's scope."""

    def __init__(self, s, target, path, copy):
        self.target, self.copy = target, copy
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(1)
        self.socks = [self.listener]
        self.done = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()
        s.clients.append(self)

    def _run(self):
        try:
            viewer, _ = self.listener.accept()
            self.socks.append(viewer)
            program = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.socks.append(program)
            program.connect(self.target)
        except OSError:
            self.done.set()
            return
        threading.Thread(target=self._pass, args=(viewer, program, None), daemon=True).start()
        with open(self.copy, "wb") as out:
            self._pass(program, viewer, out)
        self.done.set()

    @staticmethod
    def _pass(src, dst, out):
        try:
            while True:
                data = src.recv(1 << 16)
                if not data:
                    break
                if out is not None:
                    out.write(data)
                dst.sendall(data)
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def stream(self, timeout=30):
        """What the viewer was sent, once the program's side has ended."""
        expect(self.done.wait(timeout), "the program's stream to the viewer never ended")
        with open(self.copy, "rb") as f:
            return f.read()

    def close(self):
        for so in self.socks:
            try:
                so.close()
            except OSError:
                pass


def top_command(sock, extra=""):
    exe = os.path.abspath(os.path.join(harness.BUILD, "eventlog-socket"))
    # The pane stays after top exits, with its exit status on screen.
    return ("env LANG=C.UTF-8 TERM=xterm-256color %s top unix:%s %s; echo TOP-EXIT=$?; "
            "sleep 600" % (exe, sock, extra))


def alloc_total(text):
    m = re.search(r"^\s+alloc .* tot (\S+ \S+)", text, re.M)
    return m.group(1) if m else None


def gc_count(text):
    m = re.search(r"^GC\s+(\d+) collections", text, re.M)
    return int(m.group(1)) if m else None


@test
def top_live_screen(s):
    """top shows the program's name, heap and GC figures that move, a
    census's closure types after `c`, survives resizes, and says "program
    exited" with a summary at the end; q quits with status 0."""
    # -i100: no timed census during the test, so closure types on screen
    # come from the census `c` asks for.
    p, _ = serve(s, "top", ["--busy"], rts=["-hT", "-i100"])
    sock = s.path("top.sock")
    t = Tmux(s, top_command(sock))
    t.wait(r"^ probe \(pid \d+\)", what="the program's name")
    t.wait(r"^GC\s+[1-9]\d* collections", what="GC figures")
    first = t.screen()
    n1, tot1 = gc_count(first), alloc_total(first)
    # The figures move as the program's event buffers arrive: continuously
    # on GHC 9.2+ (the library flushes them), each time one fills on 9.0.
    deadline = time.monotonic() + 40
    while True:
        time.sleep(0.5)
        second = t.screen()
        n2, tot2 = gc_count(second), alloc_total(second)
        if n2 > n1 and tot2 != tot1 or time.monotonic() > deadline:
            break
    note("GC count %s then %s; allocated %s then %s" % (n1, n2, tot1, tot2))
    expect(n2 > n1 and tot2 != tot1, "the GC and heap figures did not move:\n" + second)
    expect(re.search(r"^Caps\s+threads \d+\s+0 ", second, re.M),
           "no capability line:\n" + second)

    # A census on request.
    t.keys("c")
    t.wait(r"census: sent", what="the census request acknowledged")
    live_census = ghc_version() >= (9, 2)
    if live_census:
        t.wait(r"^\s+[\d.]+ [KMG]?i?B\s+\S*\s+(ARR_WORDS|THUNK|STACK)", what="closure types")
    # Pause and resume heap profiling.
    t.keys("p")
    t.wait(r"pause heap profiling: sent", what="pause acknowledged")
    t.keys("p")
    t.wait(r"resume heap profiling: sent", what="resume acknowledged")

    # Resizes: smaller, tiny, larger; the view follows each.
    for w, h in ((60, 20), (30, 8), (100, 30)):
        t.run("resize-window", "-t", "top", "-x", str(w), "-y", str(h))
        if w >= 40:
            t.wait(r"^ probe \(pid", what="the title after resizing to %dx%d" % (w, h))
            lines = t.screen().splitlines()
            expect(all(len(line) <= w for line in lines), "a line wider than %d" % w)
        else:
            t.wait(r"too small", what="the too-small notice at %dx%d" % (w, h))

    p.cmd("quit")
    p.finish()
    end = t.wait(r"program exited", what='"program exited"')
    final = t.wait(r"program exited\s+ran [\d.]+", what="the final summary").string
    if not live_census:
        # GHC 9.0 sends heap samples at exit: the census shows then.
        t.wait(r"^\s+[\d.]+ [KMG]?i?B\s+\S*\s+(ARR_WORDS|THUNK|STACK)",
               what="closure types at exit (GHC 9.0)")
    expect(re.search(r"GHC \d+\.\d+", final), "no GHC version on the final screen:\n" + final)
    expect(end, "no end")
    t.keys("q")
    t.wait(r"TOP-EXIT=0", what="top exiting with status 0 after q")


@test
def top_retry_reconnects(s):
    """top --retry waits for a program that is not there yet, shows it when
    it starts, and shows the next one after a restart."""
    sock = s.path("retry.sock")
    t = Tmux(s, top_command(sock, "--retry"), width=100, height=30)
    t.wait(r"waiting for the program", what="waiting")
    for round in (1, 2):
        p = harness.Program(s, "probe", ["--busy"], unix=sock, rts=["-hT", "-i100"])
        t.wait(r"^ probe \(pid %d\).*live" % p.proc.pid, what="program %d live" % round)
        p.cmd("marker round %d" % round)
        p.cmd("quit")
        p.finish()
        t.wait(r"marker\s+round %d" % round, what="marker of round %d" % round)
        t.wait(r"program exited", what="program %d exited" % round)
        # Reconnecting may reach the exiting program once more: its final
        # screen stays.
        time.sleep(1.5)
        text = t.screen()
        expect("program exited" in text and re.search(r"marker\s+round %d" % round, text),
               "the final screen of program %d was replaced:\n%s" % (round, text))
        # The socket is removed at exit; the next program creates it again.
        deadline = time.monotonic() + 10
        while os.path.exists(sock) and time.monotonic() < deadline:
            time.sleep(0.05)
    t.keys("q")
    t.wait(r"TOP-EXIT=0", what="exit status 0")


@test
def top_repaints_over_other_output(s):
    """Another program writes to top's terminal, as README's quick start's
    program does from the background of the same shell (its "listening"
    and "waiting" lines): the lines scroll the terminal under top. The
    screen is top's again within seconds: no stray line, the title on the
    first line and the heap's lines in place, and at the exit the alloc
    line's total is the summary's "allocated" (before, cells top never
    redrew kept the first frame's "alloc 0 B/s ... tot 0 B" on screen next
    to a summary of 951 MiB allocated)."""
    p, _ = serve(s, "noisy", ["--busy"])
    flag = s.path("noise-now")
    # The other writer: five lines on the terminal once the test says so,
    # then it ends; top runs in the same terminal.
    noise = ("(while [ ! -e %s ]; do sleep 0.05; done; for i in 1 2 3 4 5; do "
             "echo STRAY-LINE-$i; done) & " % shlex.quote(flag))
    t = Tmux(s, noise + top_command(s.path("noisy.sock")))
    t.wait(r"^GC\s+[1-9]\d* collections", timeout=40, what="GC figures")
    open(flag, "w").close()
    deadline = time.monotonic() + 15
    while True:
        time.sleep(0.25)
        lines = t.screen().splitlines()
        clean = (lines[0].startswith(" probe (pid") and lines[2].startswith("Heap  live")
                 and lines[4].lstrip().startswith("alloc")
                 and not any("STRAY-LINE" in line for line in lines))
        if clean or time.monotonic() > deadline:
            break
    expect(clean, "the other program's lines left top's screen garbled:\n" + "\n".join(lines))
    p.cmd("quit")
    p.finish()
    final = t.wait(r"program exited\s+ran [\d.]+ \S+, allocated (\S+ \S+),",
                   what="the final summary")
    time.sleep(1.5)  # a repaint or more after the exit
    text = t.screen()
    note("alloc line %r; summary: allocated %s" % (alloc_total(text), final.group(1)))
    expect(alloc_total(text) == final.group(1),
           "the alloc line says tot %s, the summary allocated %s:\n%s"
           % (alloc_total(text), final.group(1), text))
    t.keys("q")
    t.wait(r"TOP-EXIT=0", what="exit status 0")


@test(ghc_free=True)
def top_no_program(s):
    """top where no program listens: a one-line error and exit status 2,
    the terminal given back; without a terminal it refuses at once."""
    sock = s.path("nobody.sock")
    t = Tmux(s, top_command(sock, "--connect-timeout 1"), width=100, height=30)
    m = t.wait(r"TOP-EXIT=(\d+)", what="top exiting")
    text = t.screen()
    errors = [line for line in text.splitlines() if line.startswith("eventlog-socket:")]
    expect(m.group(1) == "2" and len(errors) == 1 and "nobody.sock" in errors[0],
           "top without a program: exit %s, screen:\n%s" % (m.group(1), text))
    exe = os.path.abspath(os.path.join(harness.BUILD, "eventlog-socket"))
    res = subprocess.run([exe, "top", "unix:" + sock], stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=30)
    expect(res.returncode == 2 and "terminal" in res.stderr,
           "top without a terminal: exit %d, %r" % (res.returncode, res.stderr))


@test
def top_program_killed(s):
    """A program killed mid-stream: top says the connection was lost (the
    stream has no end marker), keeps the last figures, and q quits."""
    p, _ = serve(s, "killed", ["--busy"], rts=["-hT", "-i100"])
    t = Tmux(s, top_command(s.path("killed.sock")), width=100, height=30)
    t.wait(r"^ probe \(pid \d+\).*live", what="the program live")
    p.cmd("marker before the kill")
    t.wait(r"^GC\s+[1-9]\d* collections", timeout=40, what="GC figures")
    p.kill()
    t.wait(r"connection lost: .*end", what='"connection lost"')
    expect(re.search(r"^GC\s+[1-9]\d* collections", t.screen(), re.M),
           "the last figures are gone:\n" + t.screen())
    t.keys("q")
    t.wait(r"TOP-EXIT=0", what="exit status 0")


@test
def top_shows_lossless_waits(s):
    """A lossless client that stops reading holds the program up; `top`,
    watching beside it, shows how long the program waited (from the
    library's wait notices), while it runs and in the final summary."""
    sock = s.path("waits.sock")
    p = harness.Program(s, "probe", unix=sock, wait=True,
                        env={"GHC_EVENTLOG_CLIENT_BUFFER": "1M"})
    p.wait_socket(sock)
    t = Tmux(s, top_command(sock))
    t.wait(r"^ probe \(pid \d+\)", what="the program's name")
    c = harness.stall_with_lossless_client(s, p, sock)
    c.close()
    expect(p.readline(timeout=30) == "ok", "the flood did not finish after the client left")
    m = t.wait(r"the program waited ([\d.]+) ms for lossless clients \((\d+) times\)",
               what="the wait line")
    note(m.group(0))
    # What top shows is what the library measured and told in its wait
    # notices: more than nothing, and no more than its own total (how long
    # the wait lasted depends on how busy the machine was).
    waited_ms = p.stats()["lossless_wait_ns"] / 1e6
    expect(0 < float(m.group(1)) <= waited_ms + 0.1 and int(m.group(2)) >= 1,
           "a wait of %.1f ms shown as %s" % (waited_ms, m.group(0)))
    p.cmd("quit")
    p.finish(timeout=30)
    final = t.wait(r"program exited\s+ran [\d.]+", what="the final summary").string
    expect(re.search(r"waited\s+[\d.]+\s+ms\s+for\s+lossless\s+clients", final),
           "no wait figure in the summary:\n" + final)


@test
def top_shows_streaming_cost(s):
    """top asks the library for cost notices and shows what streaming costs
    the program while it runs: CPU milliseconds per second, CPU seconds per
    GiB, and the share of each thread role; the notices do not crowd the
    list of messages."""
    p, _ = serve(s, "cost")
    sock = s.path("cost.sock")
    t = Tmux(s, top_command(sock))
    t.wait(r"^ probe \(pid \d+\)", what="the program's name")
    p.query("flood-for 3.5 cost 2000")
    m = t.wait(r"streaming costs the program ([\d.]+) ms CPU/s \(([\d.]+) s per GiB\): "
               r"RTS ([\d.]+), walker ([\d.]+), loop ([\d.]+)", what="the cost line")
    note(m.group(0))
    rts, walker, loop = (float(m.group(i)) for i in (3, 4, 5))
    expect(abs(rts + walker + loop - float(m.group(1))) <= 0.3,
           "the parts do not add up: %s" % m.group(0))
    expect(float(m.group(2)) > 0, "no CPU time per GiB: %s" % m.group(0))
    screen = t.screen()
    expect("message eventlog-socket: streaming cost" not in re.sub(r"\s+", " ", screen),
           "a cost notice listed as a message:\n" + screen)
    p.cmd("quit")
    p.finish(timeout=30)
    t.wait(r"program exited", what='"program exited"')


@test
def top_marker_flood_reads_as_a_rate(s):
    """A flood of messages (the list must not scroll too fast to read):
    above the latest ones top says how many came in all and how many in
    the last second of the program, and the list stays the latest."""
    p, _ = serve(s, "flood")
    sock = s.path("flood.sock")
    t = Tmux(s, top_command(sock))
    t.wait(r"^ probe \(pid \d+\)", what="the program's name")
    p.cmd("flood 100000 burst")
    p.cmd("quit")
    p.finish(timeout=60)
    m = t.wait(r"(\d+) in all; (at least )?(\d+) in the last second of the program; the latest:",
               timeout=30, what="the count line over the list")
    note(m.group(0))
    expect(int(m.group(1)) >= 100000, "fewer than the 100000 messages: %s" % m.group(0))
    expect(int(m.group(3)) > 0, "none in the last second: %s" % m.group(0))
    t.wait(r"message\s+burst 100000", what="the latest message in the list")


def report_words(s, rec):
    """What the page says of a recording (its report's state, the texts the
    model gives both views): the heap profile's kind, threads begun before
    the stream, since when the counts run."""
    from client_cmd import run
    out = s.path("words.html")
    rc, _, err = run(s, ["report", rec, "-o", out], 60)
    expect(rc == 0, "report: %d %r" % (rc, err))
    with open(out) as f:
        m = re.search(r'<script[^>]*id="es-data"[^>]*>(.*?)</script>', f.read(), re.S)
    expect(m is not None, "no state in the report")
    state = json.loads(m.group(1))
    return (state["info"]["profile_kind"], state["threads"]["before_note"],
            state["info"]["counted_since"], state["info"]["classes_off"])


@test(timeout=240)
def top_says_what_the_page_says_of_a_haskell_start(s):
    """A run started from Haskell (its heap profile's kind and its threads'
    start never streamed): top says what the page says, in its words,
    which come from the model for both: the census "its kind was not
    streamed: started from Haskell" (before: "by unknown"), threads "(and N
    begun before the stream)" with none "live" after the exit, the counts'
    start as the page says it, and no "none yet" once a census is on
    screen."""
    from test_first_hour_edges import haskell_started, record_haskell_run
    sock = s.path("hs.sock")
    p = haskell_started(s, sock, wait=True)
    p.wait_socket(sock)
    # The page's words are said of the stream top drew from: a client
    # that joins later starts later, and counts from later (a loaded
    # machine showed "since 0.4 s" to the recorder, "since start" to top).
    tee = Tee(s, sock, s.path("top.sock"), s.path("top.eventlog"))
    t = Tmux(s, top_command(s.path("top.sock")), width=120, height=40)
    record_haskell_run(s, p, sock, "top")
    t.wait(r"program exited\s+ran", timeout=60, what="the final summary")
    screen = t.wait(r"^Census\s+#\d+", timeout=30, what="a census").string
    expect(len(tee.stream()) > 0, "top was sent nothing")
    kind, before, since, _ = report_words(s, s.path("top.eventlog"))
    note("the page's words: %r, %r, %r" % (kind, before, since))
    flat = re.sub(r"\s+", " ", screen)
    expect("by unknown" not in flat and kind in flat and "started from Haskell" in kind,
           "the census line does not say %r:\n%s" % (kind, screen))
    expect("none yet" not in flat, "'none yet' beside a census:\n" + screen)
    thrd = re.search(r"^Thrd\s+(.*)$", screen, re.M).group(1)
    expect(before and before in thrd and "live" not in thrd,
           "the threads line %r, the page says %r" % (thrd, before))
    gc = re.search(r"^GC\s+(.*)$", screen, re.M).group(1)
    pause = re.search(r"^\s+pause p50/p99/max .*$", screen, re.M).group(0)
    # The stream may begin at the program's start or after it (when the
    # switch to the library came late): top says the page's words.
    expect(since.startswith("since ") and since in pause
           and (since == "since start" or since in gc),
           "the counts are not said to run %r: %r / %r" % (since, gc, pause))


@test(timeout=180)
def top_shows_spans(s):
    """top's Spans line: the labels with the most spans, each with its
    count, p50, p99 and max, as ghc-events' reading of a recording of the
    same run gives them (the count exact, the max to the 0.1 ms shown)."""
    from test_spans import ghc_events_spans
    p, connect = serve(s, "sp", [])
    sock = s.path("sp.sock")
    t = Tmux(s, top_command(sock))
    t.wait(r"^ probe \(pid \d+\)", what="the program's name")
    rec = connect()
    for _ in range(3):
        expect(p.query("spans 4 40 req") == "ok", "the probe's spans")
    p.cmd("quit")
    p.finish()
    check_stream(s, rec.wait_eof(), "sp")
    line = t.wait(r"^Spans\s+(.*)$", timeout=60, what="the spans line")
    got = {m.group(1): (int(m.group(2)), float(m.group(3))) for m in re.finditer(
        r"(\S+) (\d+) p50 \S+ p99 \S+ max ([\d.]+)ms", line.group(1))}
    want = {}
    for label, _, _, start, end, _ in ghc_events_spans(s.path("sp.eventlog")):
        n, mx = want.get(label, (0, 0))
        want[label] = (n + 1, max(mx, (end - start) / 1e6))
    note(line.group(0))
    expect(sorted(got) == sorted(want) and all(
        got[k][0] == want[k][0] and abs(got[k][1] - want[k][1]) <= 0.051 for k in want),
        "top says %r; ghc-events' spans %r" % (got, want))


def handed_over_before_joining(p, first):
    """GHC 9.0 hands a capability's buffer over only once it is full: a
    client that joins before the first one is gets it whole, from the
    program's start, and rightly counts "since start" (a loaded machine
    starves the busy thread, whose GCs fill it, past the test's sleep).
    Fill one with markers, seen arriving at the first client, before
    another joins."""
    for _ in range(3):
        before = len(first.received())
        p.cmd("flood %d early" % harness.FLOOD)
        try:
            first.wait_bytes(before + (1 << 20), timeout=20)
            return
        except harness.TestFailure:
            continue
    note("no buffer handed over before top joined, after three floods")


@test(timeout=240)
def top_joining_late_counts_since_it_joined(s):
    """A top that connects to a program running for seconds counts its
    collections and pauses since it joined and says so ("since T s"), not
    "since start"."""
    p, client = serve(s, "late", ["--busy"])
    first = client()
    p.wait_clients(1)
    # Seconds of the program before top joins, then more than a 2 MiB
    # buffer, so that GHC 9.0 hands events over while it runs.
    time.sleep(3)
    if ghc_version() < (9, 2):
        handed_over_before_joining(p, first)
    sock = s.path("late.sock")
    t = Tmux(s, top_command(sock), width=120, height=40)
    t.wait(r"^ probe \(pid \d+\)", what="the program's name")
    # On GHC 9.0 a flood may be spread over the capabilities' buffers
    # (the command thread moves between them on a loaded machine), none
    # of them full: flood again until one is handed over.
    # The GC events are in the busy thread's capability's buffer, which a
    # loaded machine (the busy thread starved) may not fill while the test
    # waits: then the program's exit hands it over, and top counts the
    # same way from what arrives at the end.
    gc_since = r"^GC\s+[1-9]\d* collections since ([\d.]+) s:"
    quit_sent = False
    for _ in range(3):
        p.cmd("flood %d joined" % harness.FLOOD)
        m, _ = TmuxPane.wait(t, gc_since, 20)
        if m is not None:
            break
    else:
        if ghc_version() < (9, 2):
            note("no buffer handed over while it ran: the exit's")
            p.cmd("quit")
            quit_sent = True
        m = t.wait(gc_since, timeout=20, what="collections counted since top joined")
    note(m.group(0))
    expect(float(m.group(1)) >= 1.0, "counted since %s s" % m.group(1))
    screen = t.screen()
    expect("since start" not in screen and re.search(r"pause p50/p99/max .* since [\d.]+ s ",
                                                     screen),
           "the pauses are said to count since the start:\n" + screen)
    first.close()
    if not quit_sent:
        p.cmd("quit")
    p.finish()
