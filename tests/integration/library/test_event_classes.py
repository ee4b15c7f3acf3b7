# SPDX-License-Identifier: BSD-3-Clause
"""Event classes switched while the program runs: by the program
(eventlog_socket_switch_event_classes), by a client in both framings, and
with `eventlog-socket control ADDR events`. Judged by ghc-events' reading of
the recording (no scheduler or GC event between a switch off and the
switch back on, then both again, with the GC statistics a GC's end needs)
and by the notices in the stream; a flood of switches is rate limited and
ends as its last frame says."""

import errno
import os
import re
import subprocess
import time

import harness
from client_cmd import Cmd
from harness import GCTL, Program, Skip, check_stream, expect, note, serve, test, upstream

SCHED, GC, NONMOVING, SAMPLED, FULL, USER = 1, 2, 4, 8, 16, 32
DEFAULTS = SCHED | GC | SAMPLED | USER  # what a bare +RTS -l switches on
ON, OFF, REPORT = b"\x0a", b"\x0b", b"\x09"  # GCTL's bytes; ON and OFF take the classes
UP_ON, UP_OFF = 0x40, 0x80  # upstream's ids, the classes in their low bits


def shown(path):
    """ghc-events' reading of a recording: [(time ns, text)] of every event
    line."""
    out = subprocess.run(["ghc-events", "show", path], capture_output=True, text=True,
                         timeout=120).stdout
    return [(int(m.group(1)), m.group(2)) for m in
            (re.match(r"\s*(\d+): (.*)$", line) for line in out.splitlines()) if m]


def count(lines, pattern, a, b):
    """Event lines matching `pattern` stamped in (a, b)."""
    return sum(1 for t, text in lines if a < t < b and re.search(pattern, text))


def classes(p):
    """The probe's eventlog_socket_event_classes: (result, on, switchable)."""
    words = p.query("classes").split()
    return int(words[1]), int(words[2]), int(words[3])


def record_run(s, name, steps, rts=("-l",)):
    """The probe with a client from the start: `steps` (probe commands, or
    callables given the program) played in order, then quit; returns the
    recording's path and ghc-events' lines."""
    p, connect = serve(s, name, rts=list(rts))
    c = connect()
    for step in steps:
        if callable(step):
            step(p)
        else:
            p.cmd(step)
    p.finish()
    data = c.wait_eof()
    check_stream(s, data, name)  # parses from byte 0
    path = s.path(name + ".eventlog")
    return path, shown(path), p


def switch(on, off):
    def step(p):
        answer = p.query("classes-switch %d %d" % (on, off))
        expect(answer == "ok 0", "eventlog_socket_switch_event_classes(%d, %d): %s"
               % (on, off, answer))
    return step


def marker_time(lines, name):
    for t, text in lines:
        if re.search(r"marker: %s$" % name, text):
            return t
    raise AssertionError("marker %s not in the recording" % name)


@test(timeout=180)
def event_classes_switched_by_the_program(s):
    """A program run with +RTS -l switches scheduler and GC events off, then
    on again: between the two switches no thread runs and no GC starts in
    the recording, though 30 threads ran and a GC was forced; before and
    after, both are there, GC ends included; each switch has its notice,
    stamped between the markers around it."""
    seen = {}

    def ask(key):
        def step(p):
            seen[key] = classes(p)
        return step
    path, lines, _ = record_run(s, "classes", [
        ask("start"), "marker A", "churn 30", "gc", switch(0, SCHED | GC), "marker B",
        "churn 30", "gc", "marker C", ask("off"), switch(SCHED | GC, 0), "marker D", "churn 30",
        "gc", "marker E", ask("end")])
    expect(seen["start"] == (0, DEFAULTS, 63), "at start: %s (want on %d, all switchable)"
           % (seen["start"], DEFAULTS))
    expect(seen["off"][1] == DEFAULTS & ~(SCHED | GC), "after the switch off: %s" % (seen["off"],))
    expect(seen["end"][1] == DEFAULTS, "after the switch on: %s" % (seen["end"],))
    t = {m: marker_time(lines, m) for m in "ABCDE"}
    runs = [count(lines, r"running thread", t[a], t[b]) for a, b in ("AB", "BC", "DE")]
    gcs = [count(lines, r"starting GC", t[a], t[b]) for a, b in ("AB", "BC", "DE")]
    ends = [count(lines, r"finished GC", t[a], t[b]) for a, b in ("AB", "BC", "DE")]
    note("threads run A-B %d, B-C %d, D-E %d; GCs %s, ended %s" % (*runs, gcs, ends))
    expect(runs[0] >= 30 and runs[2] >= 30, "threads ran %s times while switched on" % runs)
    # A capability that loaded the switch just before the store may post
    # one more event; nothing beyond that.
    expect(runs[1] <= 2, "threads ran %d times while scheduler events were off" % runs[1])
    expect(gcs[1] == 0, "%d GCs started while GC events were off" % gcs[1])
    expect(gcs[0] >= 1 and gcs[2] >= 1 and ends[2] >= 1, "GCs while on: %s, ended %s"
           % (gcs, ends))
    notices = [(tt, text) for tt, text in lines if "event classes switched" in text]
    expect(len(notices) == 2, "switch notices: %s" % notices)
    off, on = notices
    expect("switched off: scheduler, gc; now on: sparks-sampled, user" in off[1] and
           "asked by the program" in off[1], "the first notice: %s" % off[1])
    expect("switched on: scheduler, gc; switched off: none" in on[1], "the second: %s" % on[1])
    expect(t["A"] < off[0] < t["B"] and t["C"] < on[0] < t["D"],
           "the notices at %d and %d, the markers at %s" % (off[0], on[0], t))


@test(timeout=180)
def event_classes_gc_on_from_a_start_without_them(s):
    """A program started without GC events (+RTS -l-g) switches them on:
    its GCs from then on start, end and carry their statistics (the RTS
    posts a GC's end only with statistics collected, which +RTS -lg would
    have switched on at start)."""
    path, lines, p = record_run(s, "gcon", [
        "marker A", "gc", switch(GC, 0), "marker B", "gc", "gc", "marker C"], rts=("-l-g",))
    t = {m: marker_time(lines, m) for m in "ABC"}
    before = count(lines, r"starting GC", -1, t["B"])
    started = count(lines, r"starting GC", t["B"], t["C"])
    ended = count(lines, r"finished GC", t["B"], t["C"])
    stats = count(lines, r"GC stats for heap capset", t["B"], t["C"])
    note("GCs before the switch %d; after: %d started, %d ended, %d with statistics"
         % (before, started, ended, stats))
    expect(before == 0, "%d GCs posted before GC events were on" % before)
    expect(started >= 2 and ended >= 2 and stats >= 2,
           "after the switch: %d started, %d ended, %d statistics (want 2 of each)"
           % (started, ended, stats))


def wait_received(c, needle, timeout=30.0):
    deadline = time.monotonic() + timeout
    while needle not in c.received():
        expect(time.monotonic() < deadline, "%r not in the stream within %.0f s"
               % (needle, timeout))
        time.sleep(0.05)


def wait_classes(p, on, timeout=30.0):
    deadline = time.monotonic() + timeout
    while True:
        got = classes(p)
        if got[1] == on:
            return
        expect(time.monotonic() < deadline, "classes on %d, want %d" % (got[1], on))
        time.sleep(0.1)


@test(timeout=180)
def event_classes_from_a_client(s):
    """A client asks which classes are on (GCTL 0x09: a notice for it
    alone), switches scheduler events off in our framing and GC events off
    in upstream's (id 0x82), and the program says who asked; then
    `eventlog-socket control ADDR events` prints them, switches all on,
    refuses a word that is no class."""
    p, connect = serve(s, "client", rts=["-l"])
    sock = s.path("client.sock")
    c = connect()
    c.wait_header()
    c.send(GCTL + REPORT)
    wait_received(c, b"event classes now on: scheduler, gc, sparks-sampled, user; now off: "
                     b"nonmoving-gc, sparks-full; cannot be switched here: none")
    other = connect()
    other.wait_header()
    c.send(GCTL + OFF + bytes([SCHED]))
    wait_classes(p, DEFAULTS & ~SCHED)
    c.send(upstream(UP_OFF | GC))
    wait_classes(p, DEFAULTS & ~(SCHED | GC))
    err = p.wait_stderr(r"a client of the Unix socket \(uid \d+\) asks to switch event classes "
                        r"off: gc").group(0)
    note(err)
    expect("asks to switch event classes off: scheduler" in p.stderr(), p.stderr())
    wait_received(other, b"now on: sparks-sampled, user; now off: scheduler, gc, nonmoving-gc, "
                         b"sparks-full (asked by a client)")
    expect(b"event classes now on" not in other.received(),
           "the report went to a client that did not ask")
    rc, out, err = Cmd(s, ["control", "unix:" + sock, "events"]).wait(30)
    expect(rc == 0 and "  on:  sparks-sampled, user\n  off: scheduler, gc, nonmoving-gc, "
           "sparks-full" in out, "control events: status %d, %r %r" % (rc, out, err))
    rc, out, err = Cmd(s, ["control", "unix:" + sock, "events", "on", "all"]).wait(30)
    expect(rc == 0 and "on now: scheduler, gc, nonmoving-gc, sparks-sampled, sparks-full, user"
           in out, "control events on all: status %d, %r %r" % (rc, out, err))
    wait_classes(p, 63)
    rc, out, err = Cmd(s, ["control", "unix:" + sock, "events", "off", "scheduler,bogus"]).wait(30)
    expect(rc == 2 and "bogus is no class" in err,
           "a word that is no class: status %d, %r" % (rc, err))
    p.finish()
    check_stream(s, c.wait_eof(), "client")


@test(timeout=180)
def event_classes_flood_is_rate_limited(s):
    """A client sends 20 000 switches of scheduler events (on, off, ...,
    ending with off) at once: the program stays responsive, the stream gets
    a handful of switch notices, the program's log a handful of lines, and
    the switches end as the last one said."""
    p, connect = serve(s, "flood", rts=["-l"])
    c = connect()
    c.wait_header()
    frames = b"".join(GCTL + (ON if i % 2 == 0 else OFF) + bytes([SCHED]) for i in range(20000))
    c.send(frames)
    t0 = time.monotonic()
    p.cmd("marker alive")
    answered = time.monotonic() - t0
    c.wait_consumed()
    wait_classes(p, DEFAULTS & ~SCHED)
    time.sleep(1.5)  # what the gate held has acted; not an assertion
    p.finish()
    data = c.wait_eof()
    summ = check_stream(s, data, "flood")
    notices = [m for _, m in summ.messages if "event classes switched" in m]
    logged = p.stderr().count("asks to switch event classes")
    note("the program answered in %.1f s; %d notices, %d log lines for 20000 switches"
         % (answered, len(notices), logged))
    expect(1 <= len(notices) <= 20, "%d switch notices for a flood" % len(notices))
    expect(1 <= logged <= 20, "%d log lines for a flood" % logged)
    expect("now off: scheduler" in notices[-1], "the last notice: %s" % notices[-1])


@test(timeout=180)
def event_classes_gap_in_top_and_report(s):
    """`top` watching a program whose scheduler and GC events are switched
    off says since when, then from when to when they were off once they
    are back, and that the five threads forked in the gap were first seen
    after it (not that they are new); the report of a recording of the
    same run from its start says the same, at the times of the switch
    notices."""
    from test_top import Tmux, report_words, top_command
    sock = s.path("gap.sock")
    p = Program(s, "probe", unix=sock, wait=True, rts=["-l"])
    p.wait_socket(sock)
    # The recording from the program's start (its first client): a stream
    # that joined later cannot tell a thread begun in the gap from one
    # begun before it and not seen until after.
    rec = s.path("gap.eventlog")
    recorder = Cmd(s, ["record", "unix:" + sock, "-o", rec])
    p.wait_clients(1)
    t = Tmux(s, top_command(sock))
    t.wait(r"^ probe \(pid \d+\)", what="the program's name")
    p.wait_clients(2)
    switch(0, SCHED | GC)(p)
    off = t.wait(r"scheduler, gc events off since ([\d.]+) s", what="the classes off")
    p.cmd("sleepers 5 1500")  # begun in the gap, seen when they wake after it
    switch(SCHED | GC, 0)(p)
    gap = t.wait(r"scheduler, gc events were off from ([\d.]+) s to ([\d.]+) s",
                 what="the gap once they are back")
    note(gap.group(0))
    expect(off.group(1) == gap.group(1), "off since %s, the gap from %s"
           % (off.group(1), gap.group(1)))
    p.cmd("sleep 2")  # the sleepers wake and end
    p.cmd("churn 10")
    p.finish()
    # After the exit: GHC 9.0 hands its threads' events over only then.
    # top joined after the recorder: a thread begun before it joined and
    # not seen until after the gap counts among them too (on 9.10, one).
    seen = t.wait(r"\(and (\d+) first seen after scheduler events were off\)", timeout=30,
                  what="the threads begun in the gap")
    expect(int(seen.group(1)) in (5, 6), "top: %s" % seen.group(0))
    rc, _, err = recorder.wait(60)
    expect(rc == 0, "record: %d %s" % (rc, err))
    lines = shown(rec)
    notices = [tt for tt, text in lines if "event classes switched" in text]
    expect(len(notices) == 2, "switch notices in the recording: %d" % len(notices))
    words = report_words(s, rec)
    state = words[3]
    want = "scheduler, gc events were off from %.1f s to %.1f s" % (notices[0] / 1e9,
                                                                    notices[1] / 1e9)
    expect(want in state, "the report says %r, want %r" % (state, want))
    expect("(and 5 first seen after scheduler events were off)" in words[1],
           "the report's threads: %r" % words[1])
    # `table` says it beside its rows' count: a gap in the rows is not an
    # idle program.
    rc, _, err = Cmd(s, ["table", "threads", rec, "--csv", s.path("threads.csv")]).wait(60)
    expect(rc == 0 and want in err and "missing there" in err, "table: %d %r" % (rc, err))
    banner_seen(s, s.path("words.html"), want)


def banner_seen(s, html, want):
    """The report's banner as a person sees it in Chromium: shown, saying
    `want`, above the charts; a screenshot in the build directory."""
    from cdp import Browser
    from test_web import need_chromium
    need_chromium()
    b = Browser(s, width=1280, height=700)
    b.goto("file://" + html)
    said = b.wait_js("(function () { var e = document.getElementById('classes-off');"
                     " var r = e.getBoundingClientRect();"
                     " return !e.hidden && r.height > 0 && r.top < 700 ? e.innerText : ''; })()",
                     what="the event classes banner")
    expect(want in said, "the banner says %r, want %r" % (said, want))
    b.screenshot(os.path.join(harness.BUILD, "web-classes-off.png"))
    expect(not b.errors(), "console errors: %r" % b.errors()[:5])


@test(timeout=180)
def event_classes_off_in_metrics(s):
    """`metrics` over a program whose scheduler and GC events are switched
    off: ghc_threads and the heap gauges are absent (not zero, not stale)
    and ghc_eventlog_lacking_info says which classes lack; once they are
    back, the gauges are back and the lack is gone."""
    from test_metrics import samples, scrape, start_metrics
    p, _ = serve(s, "metrics", rts=["-l"])  # waits for its first client: metrics
    sock = s.path("metrics.sock")
    _, port = start_metrics(s, "unix:" + sock)
    p.cmd("gc")

    def names(text):
        return {name for name, _ in samples(text)}

    def lacks(text):
        return {dict(labels)["lacks"] for name, labels in samples(text)
                if name == "ghc_eventlog_lacking_info"}

    def wait_for(cond, what):
        deadline = time.monotonic() + 30
        while True:
            text = scrape(port)
            if cond(text):
                return text
            expect(time.monotonic() < deadline, "%s never came; the last scrape:\n%s"
                   % (what, text[-1500:]))
            time.sleep(0.2)
    switch(0, SCHED | GC)(p)
    off = wait_for(lambda t: {"scheduler_events", "gc_events"} <= lacks(t), "the lack")
    expect("ghc_threads" not in names(off) and "ghc_heap_size_bytes" not in names(off),
           "gauges while off: %s" % sorted(n for n in names(off) if n.startswith("ghc_")))
    switch(SCHED | GC, 0)(p)
    on = wait_for(lambda t: not ({"scheduler_events", "gc_events"} & lacks(t)), "the lack gone")
    expect("ghc_threads" in names(on), "ghc_threads back: %s" % sorted(names(on)))
    note("off: lacks %s; on: lacks %s" % (sorted(lacks(off)), sorted(lacks(on))))
    p.finish()


@test(timeout=180)
def event_classes_off_told_by_watch(s):
    """`watch --trigger 'gc-pause>1s'` over a program whose GC events are
    switched off says that its condition cannot hold from then, and how
    to switch them back; once they are back, that it watches again. A
    marker condition (user events, still on) is not mentioned."""
    p, _ = serve(s, "watch", rts=["-l"])  # waits for its first client: watch
    sock = s.path("watch.sock")
    w = Cmd(s, ["watch", "unix:" + sock, "--trigger", "gc-pause>1s", "--trigger",
                "marker~never", "-o", s.path("shots")])
    p.wait_clients(1)
    switch(0, GC)(p)
    switch(GC, 0)(p)
    p.finish()
    rc, _, err = w.wait(60)
    note(" / ".join(line for line in err.splitlines() if "gc-pause" in line))
    expect(re.search(r"gc-pause>1s cannot hold from [\d.]+ s: the program's gc events were "
                     r"switched off \(eventlog-socket control ADDR events on gc\)", err),
           "watch did not say the condition cannot hold: %r" % err)
    expect(re.search(r"gc-pause>1s is watched again from [\d.]+ s: gc events are on", err),
           "watch did not say it watches again: %r" % err)
    expect("marker~never cannot" not in err, "the marker condition was said off: %r" % err)


def build_dynamic_probe():
    """The probe linked with -dynamic (GHC >= 9.4; on 9.0 the library's
    heap control needs the static RTS's hidden symbols), built once."""
    import fcntl
    import os
    import harness
    major, minor = harness.ghc_version()
    if (major, minor) < (9, 4):
        raise Skip("GHC %d.%d: the library links statically only (its heap control reaches "
                   "the RTS's hidden symbols)" % (major, minor))
    root = harness.ROOT
    exe = os.path.abspath(os.path.join(harness.BUILD, "probe-dyn"))
    lib = os.path.abspath(os.path.join(harness.BUILD, "libeventlog-socket.a"))
    with open(exe + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(exe) and os.path.getmtime(exe) > os.path.getmtime(lib):
            return exe
        uv = subprocess.run(["pkg-config", "--libs", "libuv"], capture_output=True, text=True)
        argv = ([harness.HC, "-dynamic", "-O", "-threaded", "-no-hs-main", "-Iinclude",
                 "-itests/programs/common", "-outputdir",
                 os.path.join(harness.BUILD, "hs", "probe-dyn"), "-o", exe + ".new",
                 "tests/programs/probe/Main.hs", "examples/fibber-c-main/cbits/fibber-c-main.c",
                 lib] + uv.stdout.split())
        res = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=root)
        if res.returncode != 0:
            out = res.stdout + res.stderr
            if "dyn_hi" in out or "dynamic" in out and "not found" in out:
                raise Skip("GHC %d.%d has no dynamic libraries here" % (major, minor))
            raise harness.TestFailure("ghc -dynamic failed:\n" + out[-2000:])
        os.rename(exe + ".new", exe)
    return exe


@test(timeout=400)
def event_classes_refused_in_a_dynamic_program(s):
    """A program linked with -dynamic, whose RTS exports none of its
    switches but user events': it says no class can be switched and why,
    the C call refuses with a log line naming the classes, `control ADDR
    events` prints them as not switchable, and `events off scheduler` is
    refused before anything is sent (exit 1); a span of C code is refused
    too (the RTS's clock is hidden as well); the program runs on."""
    build_dynamic_probe()
    sock = s.path("dyn.sock")
    p = Program(s, "probe-dyn", unix=sock, rts=["-l"])
    p.wait_socket(sock)
    r, on, can = classes(p)
    expect(r < 0 and can == 0 and on == DEFAULTS, "classes in a -dynamic program: %s"
           % ((r, on, can),))
    answer = p.query("classes-switch 0 %d" % SCHED)
    expect(answer.startswith("ok -") and answer != "ok 0", "the switch: %s" % answer)
    p.wait_stderr(r"event classes not switched \(asked by the program\): scheduler cannot be "
                  r"switched here: the RTS keeps its switches to itself in a program linked with "
                  r"-dynamic")
    rc, out, err = Cmd(s, ["control", "unix:" + sock, "events"]).wait(30)
    expect(rc == 0 and "cannot be switched here: scheduler, gc, nonmoving-gc, sparks-sampled, "
           "sparks-full, user (the RTS keeps its switches to itself" in out,
           "control events: %d %r %r" % (rc, out, err))
    rc, out, err = Cmd(s, ["control", "unix:" + sock, "events", "off", "scheduler"]).wait(30)
    expect(rc == 1 and "scheduler cannot be switched in this program" in err,
           "control events off scheduler: %d %r" % (rc, err))
    expect(classes(p)[1] == DEFAULTS, "the classes changed: %s" % (classes(p),))
    # Nor can it stamp a span of C code with the RTS's clock: refused.
    answer = p.query("c-span-check dyn")
    expect(answer == "ok -%d" % errno.ENOTSUP, "a span of C code: %s" % answer)
    p.finish()
