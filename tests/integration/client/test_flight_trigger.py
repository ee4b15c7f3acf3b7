# SPDX-License-Identifier: BSD-3-Clause
"""`eventlog-socket record --trigger`: a watcher that writes a file for each
moment a condition holds, with the time before and after it: GC pauses
over a threshold (judged against ghc-events' own reading of the file),
markers with a hold-off against storms, and a failing exit."""

import glob
import os
import re
import signal
import subprocess

import fakeprog as fp
from client_cmd import Cmd, last_line
from harness import Program, check_stream, expect, ghc_version, note, test

GC_RE = re.compile(r"^(\d+): cap (\d+): (starting|finished) GC$")


def gc_pauses(path):
    """Every capability's GC intervals (ns) in `path`, as ghc-events reads
    them (the oracle: not our parser)."""
    out = subprocess.run(["ghc-events", "show", path], capture_output=True, text=True,
                         timeout=120).stdout
    start, pauses = {}, []
    for line in out.splitlines():
        m = GC_RE.match(line)
        if not m:
            continue
        t, cap = int(m.group(1)), m.group(2)
        if m.group(3) == "starting":
            start[cap] = t
        elif cap in start:
            pauses.append(t - start.pop(cap))
    return pauses


def watcher(s, name, args, env=None, rts=()):
    """A probe, and `record --trigger ...` watching it into a directory of
    its own; returns (program, watcher, directory)."""
    sock = s.path(name + ".sock")
    d = s.path(name + "-shots")
    os.mkdir(d)
    p = Program(s, "probe", unix=sock, env=env, rts=list(rts))
    p.wait_socket(sock)
    w = Cmd(s, ["record", sock, "-o", d, *args])
    p.wait_clients(1)
    return p, w, d


def shots(d):
    """The watcher's files in the order it made them: NAME.eventlog, then
    NAME.1.eventlog, ... for the same second."""
    def order(path):
        parts = os.path.basename(path)[:-len(".eventlog")].rsplit(".", 1)
        return (parts[0], int(parts[1]) if len(parts) == 2 and parts[1].isdigit() else 0)
    return sorted(glob.glob(os.path.join(d, "*.eventlog")), key=order)


@test(timeout=240)
def trigger_gc_pause(s):
    """gc-pause>100ms: a program whose major GCs copy a few hundred MB
    makes a file, whose pauses as ghc-events reads them include one over
    100 ms, the one the watcher named; the same program with 1 MB of live
    data makes none (unless the load made one of its pauses that long, as
    ghc-events reads a recording of the whole run: then a file for that
    one)."""
    args = ["--trigger", "gc-pause>100ms", "--before", "5s", "--after", "1s"]
    p, w, d = watcher(s, "loud", args)
    p.query("work 3 300", timeout=120)
    p.cmd("quit")
    p.finish()
    rc, _, err = w.wait(60)
    files = shots(d)
    expect(rc == 0 and files, "record --trigger: %d, files %s: %s" % (rc, files, err))
    fired = re.search(r"a GC pause of ([\d.]+) ms", err)
    expect(fired and float(fired.group(1)) > 100, "the firing line: %s" % err)
    check_stream(s, open(files[0], "rb").read(), "loud-shot")
    pauses = gc_pauses(files[0])
    if not pauses:
        summ = check_stream(s, open(files[0], "rb").read(), "loud-shot-again")
        note("no GC in %s (%d bytes): %s; watcher: %s" % (files[0], os.path.getsize(files[0]),
                                                          summ.counts, err))
    longest = max(pauses) / 1e6 if pauses else 0
    note("%d file(s); the watcher saw %s ms; ghc-events reads %d GCs, the longest %.1f ms"
         % (len(files), fired.group(1), len(pauses), longest))
    expect(any(abs(x / 1e6 - float(fired.group(1))) < 0.1 for x in pauses),
           "ghc-events reads no pause of %s ms in the file" % fired.group(1))

    # The quiet program, recorded whole beside the watcher: on a loaded
    # machine even 1 MB of live data can pause over 100 ms (a GC waiting
    # for its core), and then the watcher is right to fire.
    q, w2, d2 = watcher(s, "quiet", args)
    whole = s.path("quiet-whole.eventlog")
    rec = Cmd(s, ["record", s.path("quiet.sock"), "-o", whole])
    q.wait_clients(2)
    q.query("work 3 1", timeout=120)
    q.cmd("quit")
    q.finish()
    rc2, _, err2 = w2.wait(60)
    rec.wait(60)
    slow = [x / 1e6 for x in gc_pauses(whole) if x > 100e6]
    if not slow:
        expect(rc2 == 0 and shots(d2) == [] and "0 recordings written" in last_line(err2),
               "the quiet program made files: %s %s" % (shots(d2), err2))
        return
    said = [float(x) for x in re.findall(r"a GC pause of ([\d.]+) ms", err2)]
    note("the quiet program paused over 100 ms (%s ms, the load): the watcher fired for %s"
         % (slow, said))
    expect(rc2 == 0 and shots(d2) and said and
           all(any(abs(x - y) < 0.1 for y in slow) for x in said),
           "the watcher's firings %s are not the pauses ghc-events reads over 100 ms %s: %s"
           % (said, slow, err2))


@test(timeout=180)
def trigger_marker_holdoff_before_after(s):
    """marker~deploy with --holdoff 2s: a storm of 50 matching markers
    makes one file, and a match after the hold-off another. The first
    file holds the time before (a marker 0.3 s earlier) and after (one
    0.5 s later) but, on GHC 9.2+ whose flushes make short blocks, not a
    marker 3 s before nor one 3 s after. (GHC 9.0 hands the run over at
    exit: two files, the markers in them.)"""
    args = ["--trigger", "marker~^deploy", "--before", "1s", "--after", "1s", "--holdoff", "2s"]
    p, w, d = watcher(s, "storm", args)
    p.cmd("marker long-before")
    p.cmd("sleep 3")
    p.cmd("marker just-before")
    p.cmd("sleep 0.3")
    for i in range(50):
        p.cmd("marker deploy %d" % i)
    p.cmd("sleep 0.5")
    p.cmd("marker just-after")
    p.cmd("sleep 3")
    p.cmd("marker long-after")
    p.cmd("marker deploy late")
    p.cmd("sleep 1.5")
    p.cmd("quit")
    p.finish()
    rc, _, err = w.wait(60)
    files = shots(d)
    expect(rc == 0 and len(files) == 2, "files %s: %s" % (files, err))
    expect("49 firings held off" in last_line(err) or "50 firings held off" in last_line(err),
           "the storm was not held off: %s" % last_line(err))
    first = check_stream(s, open(files[0], "rb").read(), "storm-1")
    second = check_stream(s, open(files[1], "rb").read(), "storm-2")
    m1 = [m for _, m in first.markers]
    m2 = [m for _, m in second.markers]
    note("first file: %s ... %s; second: %s" % (m1[:3], m1[-3:], m2[-3:]))
    if ghc_version() < (9, 2):
        # GHC 9.0 hands the whole run over at exit, in one block: both
        # firings come then, and the block goes to the second file.
        expect("deploy 0" in m1 + m2 and "deploy late" in m1 + m2, "%s %s" % (m1, m2))
        return
    expect("just-before" in m1 and "deploy 0" in m1 and "just-after" in m1, "first: %s" % m1)
    expect("deploy late" in m2, "second: %s" % m2)
    expect("long-before" not in m1 and "long-after" not in m1,
           "the first file reaches further than a second: %s" % m1)
    expect(any("the time after the trigger is over" in m for _, m in first.messages),
           "the first file does not say why it ends")


@test(timeout=180)
def trigger_exit_failure(s):
    """exit-failure: an uncaught exception makes a file that ends with the
    program's end marker and holds the error notice and a marker from
    before the watcher connected (the program's window); a killed program
    makes one ending with a cut notice; a clean exit makes none."""
    args = ["--trigger", "exit-failure", "--before", "30s", "--after", "5s"]
    env = {"GHC_EVENTLOG_RETAIN": "16M"}
    sock = s.path("fail.sock")
    p = Program(s, "probe", unix=sock, env=env)
    p.wait_socket(sock)
    p.cmd("marker before-the-watcher")
    p.cmd("flood 120000 fill")  # GHC 9.0: a full buffer, handed over into the window
    d = s.path("fail-shots")
    os.mkdir(d)
    w = Cmd(s, ["record", sock, "-o", d, *args])
    p.wait_clients(1)
    p.cmd("marker watched")
    p.proc.stdin.write(b"throw boom\n")
    p.proc.stdin.flush()
    rc_p, _ = p.wait_rusage(60)
    rc, _, err = w.wait(60)
    files = shots(d)
    expect(rc_p == 1 and rc == 0 and len(files) == 1, "%d %d %s: %s" % (rc_p, rc, files, err))
    summ = check_stream(s, open(files[0], "rb").read(), "fail-shot")
    markers = [m for _, m in summ.markers]
    expect("before-the-watcher" in markers and "watched" in markers, "markers %s" % markers)
    expect(any("the RTS reported an error" in m and "boom" in m for _, m in summ.messages),
           "no error notice in the file")

    k, wk, dk = watcher(s, "killed", args)
    k.cmd("marker doomed")
    k.cmd("flood 120000 fill")
    os.kill(k.proc.pid, signal.SIGKILL)
    rck, _, errk = wk.wait(60)
    files = shots(dk)
    expect(rck == 1 and len(files) == 1, "killed: %d %s: %s" % (rck, files, errk))
    summ = check_stream(s, open(files[0], "rb").read(), "killed-shot")
    expect(any("recording cut" in m for _, m in summ.messages), "no cut notice")

    c, wc, dc = watcher(s, "clean", args)
    c.cmd("marker fine")
    c.cmd("quit")
    c.finish()
    rcc, _, errc = wc.wait(60)
    expect(rcc == 0 and shots(dc) == [], "a clean exit made %s: %s" % (shots(dc), errc))


@test(ghc_free=True)
def trigger_in_the_headers_read(s):
    """A condition that holds in the very read that brings the stream's
    header (a program whose header, first block and end marker arrive
    together): the file written parses, holds the marker that fired and
    ends with the program's end marker (it was empty: the firing came
    before the header's bytes were kept)."""
    sock = s.path("first.sock")
    fp.start(s, sock, fp.eventlog(fp.block(fp.program([b"first"], 42) + [(fp.MARKER, 3, b"now")])),
             close=True)
    d = s.path("first-shots")
    os.mkdir(d)
    rc, _, err = Cmd(s, ["watch", "unix:" + sock, "--trigger", "marker~^now$", "-o", d]).wait(30)
    files = shots(d)
    expect(rc == 0 and len(files) == 1, "watch exited %d with %s: %s" % (rc, files, err))
    data = open(files[0], "rb").read()
    summ = check_stream(s, data, "first-shot")
    expect((3000000, "now") in summ.markers, "the marker is not in the file: %s" % summ.markers)
    expect(not any("recording cut" in m for _, m in summ.messages),
           "a complete stream's file ends with a cut notice: %s" % summ.messages)
    note("%d bytes: %s" % (len(data), last_line(err)[:120]))


@test(timeout=180)
def trigger_slow_span(s):
    """span:req>400ms: of two threads' fast spans "req" (20 ms) and a slow
    one (1 s), with "req.inner" spans inside them (half as long), only
    the slow "req" makes a file. The watcher names its duration; the file
    parses, and ghc-events' reading of it pairs the slow span whole, its
    start included (before --before's 100 ms)."""
    from test_spans import ghc_events_spans
    args = ["--trigger", "span:req>400ms", "--before", "100ms", "--after", "200ms",
            "--holdoff", "100ms"]
    p, w, d = watcher(s, "span", args)
    for cmd in ("spans 2 20 req", "spans 1 1000 req", "spans 2 20 req"):
        expect(p.query(cmd, timeout=60) == "ok", "probe: %s" % cmd)
    p.cmd("quit")
    p.finish()
    rc, _, err = w.wait(60)
    files = shots(d)
    fired = re.findall(r'span:req>400ms held at [\d.]+ s \(a span "req" of ([\d.]+) ms', err)
    note("fired: %s ms; files: %d" % (", ".join(fired), len(files)))
    expect(rc == 0 and len(files) == 1 and len(fired) == 1 and float(fired[0]) >= 1000,
           "one file for the one slow span: %d, %s:\n%s" % (rc, files, err))
    check_stream(s, open(files[0], "rb").read(), "span-shot")
    slow = [x for x in ghc_events_spans(files[0]) if x[0] == "req" and x[4] - x[3] >= 1000e6]
    expect(len(slow) == 1 and abs((slow[0][4] - slow[0][3]) / 1e6 - float(fired[0])) < 0.1,
           "the file does not hold the slow span whole: %r" % slow)
