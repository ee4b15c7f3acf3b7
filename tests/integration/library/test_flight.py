# SPDX-License-Identifier: BSD-3-Clause
"""The flight recorder: a window of the program's last events kept with
nobody connected (GHC_EVENTLOG_RETAIN), sent to a client that asks
(`record --window`, `--since`, `--snapshot`, and `serve`/`top`, which start
from it), refused clearly by a program that keeps none; its memory bounded."""

import os
import re
import socket
import time

from client_cmd import Cmd, last_line, run
from harness import (Client, Program, Skip, check_stream, expect, ghc_version, note, test)
from test_top import Tmux, top_command
from test_web import http_get, start_serve

WINDOW_RE = re.compile(r"eventlog-socket: window of (\d+) blocks \((\d+) bytes\) from ([\d.]+) s "
                       r"to ([\d.]+) s")


def window_notice(summary):
    """(blocks, bytes, from_s, to_s) of the recording's window notice."""
    for _, m in summary.messages:
        w = WINDOW_RE.match(m)
        if w:
            return int(w.group(1)), int(w.group(2)), float(w.group(3)), float(w.group(4))
    return None


def kept_program(s, name, env, rts=(), args=()):
    """The probe with a window (`env`), after a first client came and went:
    from then on only the window keeps its past (nothing is held for a
    first client any more)."""
    sock = s.path(name + ".sock")
    p = Program(s, "probe", list(args), unix=sock, env=env, rts=list(rts))
    p.wait_socket(sock)
    c = Client(s, unix=sock)
    p.wait_clients(1)
    c.close()
    # The library notices a client has gone when it next writes to it:
    # enough events to fill a buffer (GHC 9.0 hands over only full ones).
    p.cmd("flood 120000 fill")
    deadline = time.monotonic() + 20
    while p.stats()["clients_connected"] > 0:
        expect(time.monotonic() < deadline, "the first client never left")
        time.sleep(0.02)
    return p, sock


def flood_run(s, name, env):
    """A window-sized run: a marker, 1.5 million user messages (35 MB) with
    nobody connected, a last marker; returns the program, its socket and
    its peak RSS (KiB) then."""
    p, sock = kept_program(s, name, env, rts=["-hT", "-i0.2"])
    p.cmd("marker phase-0")
    p.cmd("flood 1500000 win")  # about 35 MB
    p.cmd("marker just-before")
    p.cmd("sleep 0.5")  # GHC 9.2+: flushed into the window meanwhile
    return p, sock, int(p.query("hwm").split()[1])


@test(serial=True, timeout=300)
def window_on_request_16m(s):
    """A program with a 16 MiB window runs with nobody connected, then
    `record --window` asks for it: the recording parses with ghc-events,
    holds the marker posted just before the connection and none of the
    start (older than 16 MiB allows), the messages in between without a
    gap, and heap samples that `heap` decodes; the window is 16 MiB and
    less than a chunk (2 MiB) more, and peak RSS grew by at most the window
    plus the buffer bound over the same run without a window."""
    env = {"GHC_EVENTLOG_RETAIN": "16M", "GHC_EVENTLOG_MAX_BUFFER": "16M"}
    p, sock, hwm = flood_run(s, "win", env)
    st = p.stats()
    expect((16 << 20) <= st["window_bytes"] < (18 << 20), "window_bytes %d" % st["window_bytes"])
    out = s.path("win.eventlog")
    rec = Cmd(s, ["record", sock, "-o", out, "--window"])
    p.wait_clients(2)
    deadline = time.monotonic() + 30
    while p.stats()["windows_sent"] < 1:
        expect(time.monotonic() < deadline and rec.proc.poll() is None,
               "the window was never sent: %s" % rec.stderr())
        time.sleep(0.05)
    p.cmd("marker after-connect")
    p.cmd("quit")
    p.finish()
    rc, _, err = rec.wait(60)
    expect(rc == 0 and "complete" in last_line(err), "record: %d %s" % (rc, err))
    with open(out, "rb") as f:
        data = f.read()
    summ = check_stream(s, data, "win-recorded")
    notice = window_notice(summ)
    expect(notice is not None, "no window notice in the recording")
    blocks, wbytes, t0, t1 = notice
    note("window: %d blocks, %.1f MiB, %.2f s to %.2f s; recording %.1f MiB; peak RSS %d KiB"
         % (blocks, wbytes / 2**20, t0, t1, len(data) / 2**20, hwm))
    expect(wbytes < 18 << 20, "the window sent was %d bytes" % wbytes)
    markers = [m for _, m in summ.markers]
    expect("just-before" in markers and "after-connect" in markers,
           "markers %s" % markers)
    expect("phase-0" not in markers, "the window reached back to the start: %s" % markers)
    wins = summ.tagged("win")
    expect(wins and wins[0] > 1 and wins == list(range(wins[0], wins[-1] + 1)),
           "the flood's messages: %d from %s, with gaps?" % (len(wins), wins[:1]))
    before = summ.marker_time("just-before")
    expect(t0 * 1e9 <= before + 1e9, "the window starts at %.2f s, after the marker" % t0)
    csv = s.path("win.csv")
    rc, _, err = run(s, ["heap", out, "--csv", csv], timeout=120)
    with open(csv) as f:
        rows = f.read().splitlines()
    expect(rc == 0 and len(rows) > 1, "heap --csv: %d, %d rows: %s" % (rc, len(rows), err))

    # The same run without a window: what the window costs in memory.
    q, _, hwm_plain = flood_run(s, "plain", {"GHC_EVENTLOG_MAX_BUFFER": "16M"})
    q.cmd("quit")
    q.finish()
    note("peak RSS with the window %d KiB, without %d KiB" % (hwm, hwm_plain))
    expect(hwm - hwm_plain <= (16 + 16) * 1024,
           "peak RSS grew by %d KiB with a 16 MiB window" % (hwm - hwm_plain))


SPAN_RE = re.compile(r"([\d.]+) s to ([\d.]+) s")


def snapshot_says_what_it_holds(summ, err):
    """A snapshot's last line gives the events and the span of the file it
    wrote (its first to its last event, as ghc-events reads them), and
    neither the file nor the line promises a live stream (it has none)."""
    line = last_line(err)
    n = re.search(r"\(.*, (\d+) events\)", line)
    expect(n is not None and int(n.group(1)) == summ.values["events"],
           "the line says %s; the file has %d events" % (line, summ.values["events"]))
    m = SPAN_RE.search(line)
    expect(m is not None and summ.span is not None, "no span in %r" % line)
    first, last = (float(m.group(1)), float(m.group(2)))
    note("snapshot: the line says %.3f s to %.3f s, the file spans %.3f s to %.3f s"
         % (first, last, summ.span[0] / 1e9, summ.span[1] / 1e9))
    expect(abs(first - summ.span[0] / 1e9) < 0.0015 and abs(last - summ.span[1] / 1e9) < 0.0015,
           "the line says %s; the file spans %d to %d ns" % (line, summ.span[0], summ.span[1]))
    promises = [t for _, t in summ.messages if "live stream" in t] + \
        ([line] if "live stream" in line else [])
    expect(not promises, "a snapshot promises a live stream: %s" % promises)


@test(timeout=180)
def window_snapshot_and_since(s):
    """`record --snapshot` writes the window and exits at once (status 0)
    while the program goes on: the file parses and ends with a cut notice
    saying it is a snapshot. `--since 1s` leaves out the window's blocks
    that ended more than a second before its end (GHC 9.2+: on 9.0 a block
    is a 2 MiB buffer that spans seconds). Each last line gives the span
    and the events of the file written, neither promising a live stream."""
    p, sock = kept_program(s, "snap", {"GHC_EVENTLOG_RETAIN": "64M"})
    for i in range(8):
        p.cmd("marker m%d" % i)
        p.cmd("flood 20000 f%d" % i)
        p.cmd("sleep 0.4")
    snap = s.path("snap.eventlog")
    rc, _, err = run(s, ["record", sock, "-o", snap, "--snapshot"], timeout=60)
    expect(rc == 0 and "the program's window" in last_line(err) and p.proc.poll() is None,
           "snapshot: %d %s" % (rc, err))
    with open(snap, "rb") as f:
        summ = check_stream(s, f.read(), "snapshot")
    expect(any("snapshot of the program's window" in m for _, m in summ.messages),
           "no cut notice saying it is a snapshot")
    snapshot_says_what_it_holds(summ, err)
    markers = [m for _, m in summ.markers]
    if ghc_version() < (9, 2):
        note("GHC 9.0: the snapshot holds what filled a buffer: %d of 8 markers" % len(markers))
        # --since cuts whole 2 MiB blocks here: the line still gives the
        # span of the file (from its window notice on), not the cut.
        since = s.path("since.eventlog")
        rc, _, err = run(s, ["record", sock, "-o", since, "--snapshot", "--since", "1s"],
                         timeout=60)
        expect(rc == 0, "--since: %d %s" % (rc, err))
        with open(since, "rb") as f:
            snapshot_says_what_it_holds(check_stream(s, f.read(), "since"), err)
        p.cmd("quit")
        p.finish()
        return
    expect(markers == ["m%d" % i for i in range(8)], "snapshot markers %s" % markers)
    # The window goes on growing (flushes every 100 ms): markers 0.4 s
    # apart, then at once the last second of it.
    for i in range(5):
        p.cmd("marker n%d" % i)
        p.cmd("sleep 0.4")
    since = s.path("since.eventlog")
    rc, _, err = run(s, ["record", sock, "-o", since, "--snapshot", "--since", "1s"], timeout=60)
    expect(rc == 0, "--since: %d %s" % (rc, err))
    with open(since, "rb") as f:
        summ2 = check_stream(s, f.read(), "since")
    snapshot_says_what_it_holds(summ2, err)
    _, _, _, t1 = window_notice(summ2)
    kept = [(t, m) for t, m in summ2.markers]
    names = [m for _, m in kept]
    note("--since 1s kept %s of a window ending at %.2f s" % (names, t1))
    expect(kept and all(t >= (t1 - 1.5) * 1e9 for t, _ in kept),
           "markers older than the cut: %s" % kept)
    expect("n4" in names and "n0" not in names and "m7" not in names, "kept %s" % names)
    p.cmd("quit")
    p.finish()


@test(timeout=180)
def window_empty_before_first_buffer(s):
    """GHC 9.0 hands the program's events over only in 2 MiB buffers and at
    exit: before the first buffer, the window is empty though the program
    has posted markers. `record --snapshot` then exits 2 without a file,
    saying that and what to do; `record --window` says so and records the
    live stream instead, which at the exit holds the markers. On GHC 9.2+
    the window holds them by then (flushed), and the snapshot has them."""
    sock = s.path("early.sock")
    p = Program(s, "probe", unix=sock, env={"GHC_EVENTLOG_RETAIN": "64M"})
    p.wait_socket(sock)
    p.cmd("marker early")
    p.cmd("sleep 0.5")  # GHC 9.2+: flushed into the window meanwhile
    snap = s.path("early-snap.eventlog")
    rc, _, err = run(s, ["record", sock, "-o", snap, "--snapshot", "--connect-timeout", "30"],
                     timeout=60)
    if ghc_version() >= (9, 2):
        expect(rc == 0, "snapshot: %d %s" % (rc, err))
        with open(snap, "rb") as f:
            summ = check_stream(s, f.read(), "early-snap")
        expect("early" in [m for _, m in summ.markers], "markers %s" % summ.markers)
        p.cmd("quit")
        p.finish()
        return
    expect(p.stats()["window_bytes"] == 0, "a buffer came: %s" % p.stats())
    note("--snapshot: %s" % last_line(err))
    expect(rc == 2 and "GHC 9.0" in err and "2 MiB" in err and "at exit" in err
           and "GHC 9.2" in err and "live stream" in err and "written nothing" not in err,
           "record --snapshot: %d %s" % (rc, err))
    expect(not os.path.exists(snap), "a file was written")
    out = s.path("early-win.eventlog")
    rec = Cmd(s, ["record", sock, "-o", out, "--window", "--connect-timeout", "30"])
    p.wait_clients(1)
    deadline = time.monotonic() + 30
    while "live stream" not in rec.stderr():
        expect(time.monotonic() < deadline and rec.proc.poll() is None,
               "record --window said nothing of the live stream: %s" % rec.stderr())
        time.sleep(0.05)
    p.cmd("marker later")
    p.cmd("quit")
    p.finish()
    rc, _, err = rec.wait(60)
    note("--window: %s" % err.splitlines()[0])
    expect(rc == 0 and "complete" in last_line(err) and "GHC 9.0" in err,
           "record --window: %d %s" % (rc, err))
    with open(out, "rb") as f:
        summ = check_stream(s, f.read(), "early-win")
    markers = [m for _, m in summ.markers]
    expect(markers == ["early", "later"], "markers %s" % markers)


@test(timeout=120)
def window_age_limit(s):
    """GHC_EVENTLOG_RETAIN_SECONDS=2: the window holds about the last two
    seconds of program time, not more (GHC 9.2+, whose flushes make short
    blocks)."""
    if ghc_version() < (9, 2):
        raise Skip("GHC 9.0's blocks are 2 MiB buffers that span seconds")
    p, sock = kept_program(s, "age", {"GHC_EVENTLOG_RETAIN_SECONDS": "2"})
    for i in range(12):
        p.cmd("marker a%d" % i)
        p.cmd("sleep 0.5")
    out = s.path("age.eventlog")
    rc, _, err = run(s, ["record", sock, "-o", out, "--snapshot"], timeout=60)
    expect(rc == 0, "snapshot: %d %s" % (rc, err))
    with open(out, "rb") as f:
        summ = check_stream(s, f.read(), "age")
    _, _, t0, t1 = window_notice(summ)
    markers = [m for _, m in summ.markers]
    note("window %.2f s to %.2f s: %s" % (t0, t1, markers))
    expect(t1 - t0 <= 2.5, "the window spans %.2f s" % (t1 - t0))
    expect("a11" in markers and "a0" not in markers and len(markers) <= 6,
           "markers %s" % markers)
    p.cmd("quit")
    p.finish()


@test
def window_refused_without_retain(s):
    """A program started without GHC_EVENTLOG_RETAIN refuses the window:
    `record --window` exits 2 without a file, saying the program keeps none
    and what to set; a raw client that asks gets the refusal in its stream
    and the stream as before."""
    sock = s.path("none.sock")
    p = Program(s, "probe", unix=sock)
    p.wait_socket(sock)
    p.cmd("marker before")
    out = s.path("none.eventlog")
    # The refusal comes at once; a loaded machine may take longer than
    # the 5 s record waits for an answer by default.
    rc, _, err = run(s, ["record", sock, "-o", out, "--window", "--connect-timeout", "30"],
                     timeout=60)
    expect(rc == 2 and "keeps no window" in err and "GHC_EVENTLOG_RETAIN" in err,
           "record --window: %d %s; the program's log: %s" % (rc, err, p.stderr()[-2000:]))
    expect(not os.path.exists(out), "a file was written")
    c = Client(s, unix=sock)
    c.send(b"GCTL\x08")
    p.cmd("marker later")
    p.cmd("quit")
    p.finish()
    summ = check_stream(s, c.wait_eof(), "refused")
    expect(any(m.startswith("eventlog-socket: window refused: this program keeps no window")
               for _, m in summ.messages), "no refusal in %s" % summ.messages)
    expect("later" in [m for _, m in summ.markers], "the stream went on")


def page_state_has(url, text, timeout=30):
    """Whether serve's /events (the page's state, then its changes) says
    `text` within `timeout` seconds."""
    host, port = re.match(r"http://([\d.]+):(\d+)/", url).groups()
    c = socket.create_connection((host, int(port)), timeout=timeout)
    c.sendall(b"GET /events HTTP/1.1\r\nHost: %s:%s\r\n\r\n" % (host.encode(), port.encode()))
    data = b""
    deadline = time.monotonic() + timeout
    while text.encode() not in data and time.monotonic() < deadline:
        chunk = c.recv(1 << 20)
        if not chunk:
            break
        data += chunk
    c.close()
    return text.encode() in data


@test(timeout=180)
def window_serve_and_top_start_from_it(s):
    """serve and top started after an incident show it: a marker posted
    with nobody connected is in serve's page state and its recording, and
    on top's screen (GHC 9.0 hands over buffers only when full: there a
    flood that fills one follows the marker, and top's count of messages
    says it got the history)."""
    p, sock = kept_program(s, "views", {"GHC_EVENTLOG_RETAIN": "64M"})
    p.cmd("marker the-incident")
    live = ghc_version() >= (9, 2)
    if not live:
        p.cmd("flood 120000 pad")
    p.cmd("sleep 0.5")
    srv, url = start_serve(s, sock)
    expect(page_state_has(url, "the-incident"), "the page's state lacks the marker")
    status, data = http_get(url + "recording.eventlog")
    summ = check_stream(s, data, "serve-recording", partial=True)
    expect("the-incident" in [m for _, m in summ.markers], "the download lacks the marker")
    srv.kill()
    t = Tmux(s, top_command(sock), height=60)  # room for the list of markers
    if live:
        t.wait(r"marker\s+the-incident", timeout=30, what="the marker from before top started")
    else:
        # The flood's messages bury the marker in the list; their count
        # says the history came: 120000 "fill" messages and more were
        # posted before top started.
        m = t.wait(r"(\d+) in all", timeout=30, what="the count of markers and messages")
        expect(int(m.group(1)) > 120000, "top counts %s markers and messages" % m.group(1))
    p.cmd("quit")
    p.finish()
