# SPDX-License-Identifier: BSD-3-Clause
"""`eventlog-socket serve`'s duties beyond drawing the page (which
test_web.py checks against ghc-events): following a program that
restarts (--retry), bad HTTP input (slow, huge, garbage, many connections,
a reader that vanishes) while a tab keeps updating, a lossless client's
wait shown on the page, the streaming cost, and labels that are any
string. In a real browser: headless Chromium over DevTools (cdp.py)."""

import os
import re
import select
import signal
import socket
import threading
import time
import urllib.error

import harness
from cdp import Browser
from client_cmd import Cmd
from harness import Program, check_stream, expect, ghc_version, note, serve, test
from test_web import check_page_against, http_get, need_chromium, open_report, start_serve


def marks(b):
    return b.js("Array.from(document.querySelectorAll('#marks li')).map(li => li.textContent)")


@test
def web_serve_retry(s):
    """serve --retry started before the program: the page says it waits,
    shows the program, its exit (waiting for the next run), then the
    restarted program as a new run: its pid, "run 2", its own markers and
    not the first run's; the download serves the new run, and --record
    FILE kept the first run in FILE and the second in FILE.2."""
    need_chromium()
    sock = s.path("retry.sock")
    rec = s.path("retry.eventlog")
    srv, url = start_serve(s, sock, ["--retry", "--record", rec])
    b = Browser(s)
    b.goto(url)
    b.wait_js("document.getElementById('state').textContent === "
              "'waiting for the program (--retry)'", what="waiting for the program")
    for round in (1, 2):
        p = Program(s, "probe", ["--busy"], unix=sock, rts=["-hT", "-i100"])
        b.wait_js("document.getElementById('state').textContent === 'connected' && "
                  "document.getElementById('pid').textContent === '%d'" % p.proc.pid,
                  timeout=60, what="program %d connected" % round)
        b.wait_js("document.getElementById('run').textContent === '%d' && "
                  "document.getElementById('run-fact').hidden === %s"
                  % (round, "true" if round == 1 else "false"), what="run %d" % round)
        p.cmd("marker round %d" % round)
        p.cmd("quit")
        p.finish()
        b.wait_js("document.getElementById('state').textContent === 'program exited' && "
                  "document.getElementById('exited').textContent.includes('next run')",
                  timeout=60, what="program %d exited, waiting for the next run" % round)
        b.wait_js("Array.from(document.querySelectorAll('#marks li'))"
                  ".some(li => li.textContent.endsWith('marker: round %d'))" % round,
                  what="the marker of round %d" % round)
        # Reconnecting may reach the exiting program once more: the page
        # must keep its final state (a pause to let that happen, not an
        # assertion on time).
        time.sleep(1.5)
        m = marks(b)
        state = b.js("document.getElementById('state').textContent")
        expect(state == "program exited" and any(x.endswith("marker: round %d" % round) for x in m),
               "after program %d exited the page shows %r, %s" % (round, state, m))
        if round == 2:
            expect(not any(x.endswith("marker: round 1") for x in m),
                   "the second run's page lists the first run's marker: %s" % m)
            b.screenshot(os.path.join(harness.BUILD, "web-serve-retry.png"))
        deadline = time.monotonic() + 10
        while os.path.exists(sock) and time.monotonic() < deadline:
            time.sleep(0.05)
    status, data = http_get(url + "recording.eventlog")
    summary = check_stream(s, data, "web-retry-download")
    got = [m for _, m in summary.markers if m.startswith("round")]
    expect(got == ["round 2"], "the download (run 2) has the markers %s" % got)
    for path, want in ((rec, ["round 1"]), (rec + ".2", ["round 2"])):
        with open(path, "rb") as f:
            summary = check_stream(s, f.read(), os.path.basename(path))
        got = [m for _, m in summary.markers if m.startswith("round")]
        expect(got == want, "%s has the markers %s, not %s" % (path, got, want))
    errors = b.errors()
    expect(not errors, "console errors: %s" % errors[:5])
    srv.signal(signal.SIGTERM)
    rc, _, err = srv.wait(30)
    expect(rc == 0, "serve exited %d after SIGTERM: %s" % (rc, err))


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


@test
def web_bad_http(s):
    """Malformed, huge and slow requests, 100 event streams at once, and a
    reader that vanishes mid-stream: serve stays up, its memory bounded, and
    a tab opened before keeps updating. Requests that trickle in a byte a
    second (headers, a POST's body, a second request on a kept-alive
    connection) are cut once 10 s late, before they are whole."""
    need_chromium()
    p, _ = serve(s, "bad", ["--busy"], rts=["-hT", "-i100"])
    srv, url = start_serve(s, s.path("bad.sock"))
    port = int(url.rsplit(":", 1)[1].strip("/"))
    b = Browser(s)
    b.goto(url)
    b.wait_js("document.getElementById('state').textContent === 'connected'", what="connected")
    rss0 = rss_kib(srv.proc.pid)

    def connect():
        c = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.clients.append(c)
        return c

    # Slow: clients that trickle a request a byte a second, in the
    # background for the whole test. Each byte keeps libmicrohttpd's
    # inactivity timeout from firing; serve cuts each one once its request
    # is HTTP_REQUEST_S (10 s) late, long before it could finish (60 s).
    # One sends whole headers and trickles a POST's body.
    stop = threading.Event()
    trickles = [(b"", b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 60),
                (b"", b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"b" * 60),
                (b"", b"GET /recording.eventlog HTTP/1.1\r\nHost: 127.0.0.1\r\nX: " + b"c" * 60),
                (b"POST /api/census HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Eventlog-Socket: 1\r\n"
                 b"Content-Length: 60\r\n\r\n", b"d" * 60)]
    cuts = [None] * len(trickles)

    def slowloris(i, headers, slow):
        c = connect()
        k, start = 0, time.monotonic()
        try:
            c.sendall(headers)
            start = time.monotonic()
            for k, ch in enumerate(slow):
                r, _, _ = select.select([c], [], [], 0)
                if r and not c.recv(4096):
                    cuts[i] = (k, time.monotonic() - start)
                    return
                if stop.wait(1.0):
                    cuts[i] = "test ended first"
                    return
                c.sendall(bytes([ch]))
            cuts[i] = "never cut: sent all %d bytes" % len(slow)
        except OSError as e:
            cuts[i] = (k, time.monotonic() - start, str(e))
    slow_threads = [threading.Thread(target=slowloris, args=(i, w, sl), daemon=True)
                    for i, (w, sl) in enumerate(trickles)]
    for t in slow_threads:
        t.start()

    # Huge: a 10 MB header is refused (431), not buffered. The sender runs
    # aside: the server stops reading once it has refused.
    c = connect()

    def send_big():
        try:
            c.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
            c.sendall(b"x" * (10 << 20))
        except OSError:
            pass
    threading.Thread(target=send_big, daemon=True).start()
    try:
        reply = c.recv(200)
    except OSError:
        reply = b""
    expect(re.match(rb"HTTP/1\.[01] 431", reply), "a 10 MB header got %r" % reply[:80])

    # Garbage, all at once: a 4xx answer, or the connection closed (at the
    # latest by the server's 10 s inactivity timeout).
    junks = (b"\x00\xff\xfe garbage\r\n\r\n", b"GET\r\n\r\n",
             b"POST /api/census HTTP/1.1\r\nHost: 127.0.0.1\r\n"
             b"Content-Length: 99999999999999999999\r\n\r\n")
    conns = []
    for junk in junks:
        conns.append(connect())
        conns[-1].sendall(junk)
    for junk, c in zip(junks, conns):
        try:
            reply = c.recv(200)
        except OSError:
            reply = b""
        expect(not reply or re.match(rb"HTTP/1\.[01] 4\d\d", reply),
               "garbage %r got %r" % (junk[:20], reply[:80]))
        c.close()

    # 100 event streams at once, each gets the state; half vanish mid-stream.
    streams = []
    for i in range(100):
        c = connect()
        c.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % port)
        streams.append(c)
    got = 0
    for c in streams:
        data = b""
        while b"event: state" not in data:
            chunk = c.recv(65536)
            if not chunk:
                break
            data += chunk
        got += b"event: state" in data
    expect(got == 100, "%d of 100 event streams got the state" % got)
    for c in streams[:50]:
        c.close()
    # The other 50 stop reading (stalled tabs) while the program runs on.
    drawn = int(b.js("+document.body.dataset.drawn"))
    uptime = b.js("document.getElementById('uptime').textContent")
    b.wait_js("+document.body.dataset.drawn > %d + 4 && "
              "document.getElementById('uptime').textContent !== %r" % (drawn, uptime),
              timeout=60, what="the first tab updating")
    # A second tab opened now gets the history so far.
    tab = b.new_tab()
    b.goto(url, session=tab)
    b.wait_js("+document.getElementById('heap-chart').dataset.rows > 0", session=tab,
              what="history in a late tab")
    status, _ = http_get(url)
    expect(status == 200, "page status %d" % status)
    rss1 = rss_kib(srv.proc.pid)
    note("serve RSS %d KiB before, %d KiB after" % (rss0, rss1))
    expect(rss1 < rss0 + 64 * 1024, "serve grew from %d to %d KiB" % (rss0, rss1))
    for t in slow_threads:
        t.join(90)
    stop.set()
    note("trickling requests cut after (bytes, seconds): %s" % (cuts,))
    expect(all(isinstance(c, tuple) and c[0] < 60 for c in cuts),
           "trickling requests not cut before they were whole: %s" % (cuts,))
    # The first tab still updates after the cuts.
    drawn = int(b.js("+document.body.dataset.drawn"))
    b.wait_js("+document.body.dataset.drawn > %d" % drawn, timeout=60,
              what="the first tab updating after the cuts")
    for c in streams[50:]:
        c.close()
    errors = b.errors()
    expect(not errors, "console errors: %s" % errors[:5])
    p.cmd("quit")
    p.finish()
    srv.signal(signal.SIGINT)
    rc, _, err = srv.wait(30)
    expect(rc == 0, "serve exited %d after SIGINT: %s" % (rc, err))


@test
def web_lossless_waits(s):
    """A lossless client that stops reading holds the program up; the page
    of `serve`, watching beside it, says how long the program waited (the
    library's wait notices), and says nothing of it before."""
    need_chromium()
    sock = s.path("waits.sock")
    p = Program(s, "probe", [], unix=sock, wait=True, env={"GHC_EVENTLOG_CLIENT_BUFFER": "4M"})
    p.wait_socket(sock)
    srv, url = start_serve(s, sock)
    b = Browser(s)
    b.goto(url)
    b.wait_js("document.getElementById('state').textContent === 'connected'", what="connected")
    expect(b.js("document.getElementById('waited-fact').hidden"),
           "a wait figure before any lossless client")
    # A flood of 40 MiB, ten times what the lossless client may fall
    # behind (4 MiB), and more than serve, beside it, may on a busy
    # machine: a wait notice among chunks skipped for serve is kept for it
    # (protocol.md, 1.2 item 6).
    c = harness.stall_with_lossless_client(s, p, sock)
    c.close()
    expect(p.readline(timeout=60) == "ok", "the flood did not finish after the client left")
    b.wait_js("!document.getElementById('waited-fact').hidden", timeout=90,
              what="the wait figure on the page")
    text = b.js("document.getElementById('waited-fact').textContent")
    ms = float(b.js("document.getElementById('waited').dataset.ms"))
    note(text)
    # What the page shows is what the library measured and told in its wait
    # notices: more than nothing, and no more than its own total (how long
    # the wait lasted depends on how busy the machine was).
    waited_ms = p.stats()["lossless_wait_ns"] / 1e6
    expect(0 < ms <= waited_ms + 0.1 and
           re.search(r"waited for lossless clients: [\d.]+ ms \(\d+ waits?\)", text),
           "a wait of %.1f ms shown as %r (%.1f ms)" % (waited_ms, text, ms))
    errors = b.errors()
    expect(not errors, "console errors: %s" % errors[:5])
    p.cmd("quit")
    p.finish()
    srv.signal(signal.SIGTERM)
    srv.wait(30)


@test
def web_streaming_cost(s):
    """serve asks the library for cost notices, and the page's facts line
    says what streaming costs the program while it runs: CPU milliseconds
    per second, CPU seconds per GiB, and each thread role's part. The
    recording it offers is still the program's own stream: every message,
    no cost notice."""
    need_chromium()
    p, _ = serve(s, "cost")
    sock = s.path("cost.sock")
    srv, url = start_serve(s, sock)
    b = Browser(s)
    b.goto(url)
    b.wait_js("document.getElementById('state').textContent === 'connected'", what="connected")
    n = int(p.query("flood-for 3.5 cost 2000").split()[1])
    b.wait_js("!document.getElementById('cost-fact').hidden && "
              "/per GiB/.test(document.getElementById('cost').textContent)", timeout=30,
              what="the cost figure on the page")
    # The text and its data attribute are read in one evaluation: the page
    # updates both with each cost notice, and one may land between two reads.
    text, exact = b.js("[document.getElementById('cost-fact').textContent, "
                       "document.getElementById('cost').dataset.msPerS]")
    exact = float(exact)
    note(text)
    m = re.search(r"streaming costs the program ([\d.]+) ms CPU/s \(([\d.]+) s per GiB\): "
                  r"RTS ([\d.]+), walker ([\d.]+), loop ([\d.]+)", text)
    expect(m and float(m.group(2)) > 0, "the cost shown as %r" % text)
    expect(abs(exact - float(m.group(1))) <= 0.051,
           "the figure and its data attribute differ: %r" % text)
    errors = b.errors()
    expect(not errors, "console errors: %s" % errors[:5])
    p.cmd("quit")
    p.finish()
    b.wait_js("document.getElementById('state').textContent === 'program exited'",
              what="program exited")
    _, data = http_get(url + "recording.eventlog")
    summary = check_stream(s, data, "web-cost-download")
    expect(summary.tagged("cost") == list(range(1, n + 1)),
           "the download has %d of %d messages" % (len(summary.tagged("cost")), n))
    expect(not any(m.startswith("eventlog-socket: streaming cost") for _, m in summary.messages),
           "a cost notice in the download")
    srv.signal(signal.SIGTERM)
    srv.wait(30)


@test
def web_labels_any_string(s):
    """Census labels that are names of every JavaScript object's own
    properties (`__proto__`, `isPrototypeOf`) are labels like any other: a
    recording whose labels were renamed so (same length, so it still
    parses) gives a report that draws without errors and names them."""
    need_chromium()
    p, _ = serve(s, "proto", ["--busy"], rts=["-hT", "-i0.05"])
    rec = s.path("plain.eventlog")
    r = Cmd(s, ["record", "unix:" + s.path("proto.sock"), "-o", rec])
    time.sleep(1.0)  # a second of the program's run, not an assertion
    p.cmd("quit")
    p.finish()
    rc, _, err = r.wait(60)
    expect(rc == 0, "record: %d %s" % (rc, err))
    data = open(rec, "rb").read()
    renames = {b"ARR_WORDS\0": b"__proto__\0", b"MUT_VAR_CLEAN\0": b"isPrototypeOf\0"}
    for old, new in renames.items():
        expect(old in data, "no %s label in the recording" % old[:-1].decode())
        data = data.replace(old, new)
    check_stream(s, data, "proto")  # writes proto.eventlog
    path = s.path("proto.eventlog")
    b = Browser(s)
    open_report(s, b, path, "proto")
    named, censuses = check_page_against(b, path, "renamed labels")
    expect("__proto__" in named, "__proto__ is not a series: %s" % named)
    rows = b.js("+document.getElementById('heap-chart').dataset.rows")
    expect(rows >= len(censuses), "the heap chart has %s rows for %d censuses"
           % (rows, len(censuses)))
    errors = b.errors()
    expect(not errors, "console errors: %s" % errors[:5])
    note("series %s" % named)


@test
def web_download_while_running(s):
    """The page's download (recording.eventlog) taken while the program
    runs is a whole eventlog every time: ghc-events parses each one to the
    end marker, and each continues the one before. On GHC 9.2+ (live
    events) a marker the program posts turns up in a later download while
    it still runs (the download is what serve has written, at most one
    tick, 0.5 s, behind)."""
    p, _ = serve(s, "dl", ["--busy"], rts=["-hT", "-i0.1"])
    srv, url = start_serve(s, s.path("dl.sock"))
    downloads = []

    def download():
        try:
            status, data = http_get(url + "recording.eventlog")
        except urllib.error.HTTPError as e:  # nothing recorded yet
            status, data = e.code, b""
        if status == 200 and data:
            downloads.append(data)
            return check_stream(s, data, "download-%d" % len(downloads))
        return None

    for i in range(4):
        p.cmd("marker before-download-%d" % i)
        deadline = time.monotonic() + 30
        while ghc_version() >= (9, 2):
            summary = download()
            if summary and "before-download-%d" % i in {m for _, m in summary.markers}:
                break
            expect(time.monotonic() < deadline, "marker %d not in a download within 30 s" % i)
            time.sleep(0.1)
        if ghc_version() < (9, 2):
            p.cmd("sleep 0.3")
            download()
    p.cmd("quit")
    p.finish()
    expect(downloads or ghc_version() < (9, 2), "no download while it ran")
    prev = b""
    for i, data in enumerate(downloads):
        summary = check_stream(s, data, "judged-%d" % i)
        expect(not summary.partial, "download %d (%d bytes) is cut" % (i, len(data)))
        body = data[:-2]  # without its end marker
        expect(body.startswith(prev), "download %d does not continue download %d" % (i, i - 1))
        prev = body
    note("%d downloads while it ran, the last %d bytes"
         % (len(downloads), len(downloads[-1]) if downloads else 0))
    srv.signal(signal.SIGTERM)
    srv.wait(30)
