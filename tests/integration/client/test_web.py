# SPDX-License-Identifier: BSD-3-Clause
"""`eventlog-socket serve` and `report` in a real browser: headless Chromium,
driven over the DevTools protocol (cdp.py), against serve on a running
probe with +RTS -hT, and on report's files opened from file://. What the
page shows is compared with what ghc-events finds in the same eventlog.
serve's other duties (a program that restarts, bad HTTP input, lossless
waits, its cost, hostile labels) are in test_web_serve.py."""

import glob
import os
import re
import signal
import socket
import struct
import subprocess
import time
import urllib.request

import harness
from cdp import Browser, chromium_path
from client_cmd import Cmd
from harness import FLOOD, Program, Skip, check_stream, expect, ghc_version, note, serve, test

FIXTURES = os.path.join(harness.ROOT, "tests", "fixtures")
NON_LABELS = ("heap size", "live bytes", "other")


def open_report(s, b, recording, name, timeout=120):
    """`report RECORDING -o NAME.html` (it must succeed), opened in the
    browser `b` and drawn; returns the file's path."""
    out = s.path(name + ".html")
    rc, _, err = Cmd(s, ["report", recording, "-o", out]).wait(timeout)
    expect(rc == 0, "report %s: %d %s" % (recording, rc, err))
    b.goto("file://" + out)
    b.wait_js("+document.body.dataset.drawn >= 1", what="the report drawn")
    return out


def need_chromium():
    if chromium_path() is None:
        raise Skip("Chromium is not installed (scripts/ensure-deps.sh installs it)")


def start_serve(s, sock, extra=()):
    """serve on a free port; return (command, base URL)."""
    c = Cmd(s, ["serve", "unix:" + sock, "--http", "127.0.0.1:0", *extra])
    deadline = time.monotonic() + 20
    while True:
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", c.stdout())
        if m:
            return c, "http://127.0.0.1:%s/" % m.group(1)
        if c.proc.poll() is not None or time.monotonic() > deadline:
            raise harness.TestFailure("serve did not start: %s %s" % (c.stdout(), c.stderr()))
        time.sleep(0.05)


def ghc_censuses(path):
    """[(time, total, {label: bytes})] of every heap sample, by ghc-events."""
    out = subprocess.run(["ghc-events", "show", path], capture_output=True, text=True,
                         timeout=120).stdout
    censuses = []
    for line in out.splitlines():
        m = re.match(r"\s*(\d+): start heap prof sample", line)
        if m:
            censuses.append([int(m.group(1)), 0, {}])
            continue
        m = re.match(r"\s*\d+: heap prof sample \d+, residency (\d+), label (.*)$", line)
        if m and censuses:
            censuses[-1][1] += int(m.group(1))
            censuses[-1][2][m.group(2)] = int(m.group(1))
    return censuses


def page_series(b):
    return b.js("Array.from(document.querySelectorAll('#heap-legend tbody tr'))"
                ".map(r => r.dataset.series)")


def page_census_totals(b):
    return b.js("Array.from(document.querySelectorAll('#census-table tbody td.total'))"
                ".map(td => Number(td.textContent))")


def check_page_against(b, path, what):
    """The page's heap series are labels of the eventlog's censuses (the
    largest of the last one among them), and its census totals are the
    samples' sums."""
    censuses = ghc_censuses(path)
    totals = page_census_totals(b)
    want = [c[1] for c in censuses]
    expect(totals == want, "%s: census totals on the page %s, in the eventlog %s"
           % (what, totals[:10], want[:10]))
    series = page_series(b)
    expect("heap size" in series and "live bytes" in series,
           "%s: no heap size / live bytes series: %s" % (what, series))
    labels = set()
    for c in censuses:
        labels.update(c[2])
    named = [x for x in series if x not in NON_LABELS]
    expect(all(x in labels for x in named),
           "%s: series not among the eventlog's census labels: %s"
           % (what, [x for x in named if x not in labels]))
    if censuses:
        last = censuses[-1][2]
        biggest = max(last, key=last.get) if last else None
        expect(named and (biggest is None or biggest in named),
               "%s: the largest label of the last census (%s) is not a series: %s"
               % (what, biggest, series))
    return named, censuses


def http_get(url, timeout=30):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read()


@test(timeout=300)
def web_serve_live(s):
    """serve on a running probe (-hT): the page loads without console
    errors, names the program, its charts grow while it runs, the census
    button adds exactly one sample to the stream, the page shows the exit,
    and its heap series are closure types ghc-events finds in the same
    run's censuses (the recording the page offers for download)."""
    need_chromium()
    # -i100: no timed census during the test, so the one between the two
    # markers is the button's.
    p, _ = serve(s, "web", ["--busy"], rts=["-hT", "-i100"])
    srv, url = start_serve(s, s.path("web.sock"))
    b = Browser(s)
    b.goto(url)
    b.wait_js("document.getElementById('program').textContent === 'probe'",
              what="the program's name")
    b.wait_js("document.getElementById('state').textContent === 'connected'", what="connected")
    rows1 = int(b.wait_js("+document.getElementById('heap-chart').dataset.rows",
                          what="heap chart rows"))
    if ghc_version() < (9, 2):
        # GHC 9.0 hands events over in 2 MiB steps: the GCs since the
        # last step reach the page with the next, which a busy machine can
        # hold off past a minute (67 s in a CI run). 120 000 short
        # messages (about 2.4 MiB) make one sooner; the wait allows 150 s.
        p.cmd("flood 120000 w")
    waited = time.monotonic()
    rows2 = int(b.wait_js("+document.getElementById('heap-chart').dataset.rows > %d && "
                          "+document.getElementById('heap-chart').dataset.rows" % rows1,
                          timeout=60 if ghc_version() >= (9, 2) else 150,
                          what="the heap chart growing"))
    note("heap chart rows %d, then %d after %.1f s" % (rows1, rows2, time.monotonic() - waited))

    p.cmd("marker before-census")
    gcs = int(b.js("+document.querySelector('#gc-legend tr[data-series=\"minor GCs\"] td.v')"
                   ".dataset.value"))
    b.js("document.getElementById('btn-census').click()")
    b.wait_js("document.getElementById('control-result').textContent === 'census: sent'",
              what="the census request sent")
    if ghc_version() >= (9, 2):
        b.wait_js("+document.getElementById('census-count').textContent >= 1", timeout=60,
                  what="the census on the page")
    else:
        # GHC 9.0 sends heap samples at exit; the census happens at the
        # next GC once the request arrives: wait for many more GCs, which
        # the next 2 MiB step brings.
        p.cmd("flood 120000 w")
        waited = time.monotonic()
        b.wait_js("+document.querySelector('#gc-legend tr[data-series=\"minor GCs\"] td.v')"
                  ".dataset.value > %d" % (gcs + 50), timeout=60, what="50 more GCs")
        note("50 more GCs after %.1f s" % (time.monotonic() - waited))
    p.cmd("marker after-census")
    b.screenshot(os.path.join(harness.BUILD, "web-serve-live.png"))
    p.cmd("quit")
    p.finish()
    b.wait_js("document.getElementById('state').textContent === 'program exited' && "
              "!document.getElementById('exited').hidden", timeout=60, what="program exited")

    status, data = http_get(url + "recording.eventlog")
    summary = check_stream(s, data, "web-recording")
    between = summary.samples_between(summary.marker_time("before-census"),
                                      summary.marker_time("after-census"))
    expect(between == 1, "%d heap samples between the markers around the button, not 1"
           % between)
    rec = s.path("web-recording.eventlog")
    b.wait_js("+document.getElementById('census-count').textContent === %d"
              % len(summary.samples), what="every census on the page")
    named, censuses = check_page_against(b, rec, "serve")
    expect(any(x in named for x in ("ARR_WORDS", "THUNK", "STACK", "TSO")),
           "no closure type among the series: %s" % named)
    errors = b.errors()
    expect(not errors, "console errors: %s" % errors[:5])
    b.screenshot(os.path.join(harness.BUILD, "web-serve-exited.png"))
    note("series %s; %d censuses; screenshots build/web-serve-*.png" % (named, len(censuses)))
    srv.signal(signal.SIGTERM)
    rc, _, err = srv.wait(30)
    expect(rc == 0, "serve exited %d after SIGTERM: %s" % (rc, err))


@test
def web_report_files(s):
    """report of each GHC fixture and of a recording with censuses: one HTML
    file that opens from file:// in Chromium without errors and without the
    network, showing the program, the eventlog's census totals and series
    among its labels."""
    need_chromium()
    p, _ = serve(s, "rep", ["--busy"], rts=["-hT", "-i0.05"])
    rec = s.path("recorded.eventlog")
    r = Cmd(s, ["record", "unix:" + s.path("rep.sock"), "-o", rec])
    p.cmd("marker recorded")
    time.sleep(1.0)  # a second of the program's run, not an assertion
    p.cmd("quit")
    p.finish()
    rc, _, err = r.wait(60)
    expect(rc == 0, "record: %d %s" % (rc, err))
    files = sorted(glob.glob(os.path.join(FIXTURES, "*.eventlog"))) + [rec]
    b = Browser(s)
    for path in files:
        out = s.path(os.path.basename(path) + ".html")
        rc, _, err = Cmd(s, ["report", path, "-o", out]).wait(60)
        expect(rc == 0 and os.path.exists(out), "report %s: %d %s" % (path, rc, err))
        html = open(out, encoding="utf-8").read()
        expect(not re.search(r"""(src|href)=["']?(https?:)?//""", html),
               "%s: the report refers to the network" % out)
        b.goto("file://" + out)
        b.wait_js("+document.body.dataset.drawn >= 1", what="the report drawn")
        prog = b.js("document.getElementById('program').textContent")
        expect(prog in ("fibber-file", "probe"), "%s: program %r" % (path, prog))
        named, censuses = check_page_against(b, path, os.path.basename(path))
        note("%s: %d censuses, series %s" % (os.path.basename(path), len(censuses), named[:5]))
        if path == rec:
            expect(len(censuses) >= 2 and named, "the recording has %d censuses" % len(censuses))
            b.screenshot(os.path.join(harness.BUILD, "web-report.png"))
    errors = b.errors()
    expect(not errors, "console errors: %s" % errors[:5])


@test
def web_drop_notices(s):
    """serve falls behind (SIGSTOP) while the program floods with a 1 MiB
    limit per client: the library skips chunks and says so with drop
    notices in serve's stream. The page lists each notice, with its time,
    chunks and MiB as in the stream (serve's own recording, read by the
    checker), counts them in the header, and marks the gap in the charts
    (NaN rows, red bands)."""
    need_chromium()
    sock = s.path("drop.sock")
    p = Program(s, "probe", [], unix=sock, wait=True, rts=["-hT", "-i0.2"],
                env={"GHC_EVENTLOG_CLIENT_BUFFER": "1M"})
    p.wait_socket(sock)
    srv, url = start_serve(s, sock)
    b = Browser(s)
    b.goto(url)
    b.wait_js("document.getElementById('state').textContent === 'connected'", what="connected")
    p.cmd("flood 1000 before")
    srv.signal(signal.SIGSTOP)
    try:
        p.cmd("flood %d during" % (FLOOD * 3))
    finally:
        srv.signal(signal.SIGCONT)
    p.cmd("flood 1000 after")
    b.wait_js("+document.getElementById('dropped').dataset.notices > 0", timeout=60,
              what="drop notices on the page")
    p.cmd("quit")
    p.finish()
    b.wait_js("document.getElementById('state').textContent === 'program exited'", timeout=60,
              what="program exited")
    status, data = http_get(url + "recording.eventlog")
    summary = check_stream(s, data, "web-drops")
    notices = []
    for t, m in summary.messages:
        g = re.match(r"eventlog-socket: dropped (\d+) chunks \(([\d.]+) MiB\)$", m)
        if g:
            notices.append((t, int(g.group(1)), g.group(2)))
    expect(notices, "no drop notice in serve's stream: the test did not make it fall behind")
    # The list is newest first.
    items = b.js("Array.from(document.querySelectorAll('#marks li.drop'))"
                 ".map(li => li.textContent)")[::-1]
    want = ["%.3f s: drop notice: %d chunks (%s MiB) of the stream lost here (a gap in every chart)"
            % (t / 1e9, n, mib) for t, n, mib in notices]
    expect(items == want, "the page lists %s, the stream has %s" % (items, want))
    header = b.js("document.getElementById('dropped').textContent")
    chunks = sum(n for _, n, _ in notices)
    expect(header.startswith("%d chunks (" % chunks) and
           header.endswith(" in %d drop notice%s" %
                           (len(notices), "" if len(notices) == 1 else "s")),
           "header says %r; the stream has %d notices of %d chunks"
           % (header, len(notices), chunks))
    for chart in ("heap-chart", "alloc-chart"):
        gaps = int(b.js("+document.getElementById(%r).dataset.gaps" % chart))
        bands = int(b.js("+(document.getElementById(%r).dataset.dropBands || 0)" % chart))
        expect(gaps == len(notices) and bands == len(notices),
               "%s: %d gap rows and %d red bands for %d drop notices"
               % (chart, gaps, bands, len(notices)))
    errors = b.errors()
    expect(not errors, "console errors: %s" % errors[:5])
    b.js("document.getElementById('notes').scrollIntoView()")
    b.screenshot(os.path.join(harness.BUILD, "web-drop-notices.png"))
    note("%d drop notices, %d chunks: %s; screenshot build/web-drop-notices.png"
         % (len(notices), chunks, header))
    srv.signal(signal.SIGTERM)
    rc, _, err = srv.wait(30)
    expect(rc == 0, "serve exited %d after SIGTERM: %s" % (rc, err))
    # Its line at the program's exit says the gaps in record's words.
    exited = [line for line in err.splitlines() if "the program exited" in line]
    words = "the program exited; with gaps: %d chunk%s (" % (chunks, "" if chunks == 1 else "s")
    count = " missing in %d drop notice%s, " % (len(notices), "" if len(notices) == 1 else "s")
    expect(exited and words in exited[0] and count in exited[0]
           and ("%.3f s" % (notices[0][0] / 1e9)) in exited[0],
           "serve's line at the exit does not say the %d notices' gaps: %r"
           % (len(notices), exited))


class SyntheticProgram:
    """A Unix socket that serves an eventlog written here, part by part,
    the way a program does (header, then whole blocks, then the end
    marker), so that the test decides which runs are in progress when.
    Real programs close their runs within milliseconds (every context
    switch, GC and, on GHC 9.2+, every flush), too soon for a test to
    catch one open."""

    RUN, STOP, GC_START, GC_END, BLOCK, GC_STATS, MARKER = 1, 2, 9, 10, 18, 53, 58
    SIZES = {RUN: 4, STOP: 10, GC_START: 0, GC_END: 0, BLOCK: 14, GC_STATS: 50, MARKER: -1}

    def __init__(self, s, path):
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(path)
        self.srv.listen(1)
        s.clients.append(self.srv)
        self.conn = None
        self.s = s

    def header(self):
        out = b"hdrb" + b"hetb"
        for k, size in self.SIZES.items():
            desc = b"type %d" % k
            out += (b"etb\0" + struct.pack(">Hh", k, size) + struct.pack(">I", len(desc)) + desc
                    + struct.pack(">I", 0) + b"ete\0")
        return out + b"hete" + b"hdre" + b"datb"

    def event(self, kind, ms, payload=b""):
        head = struct.pack(">HQ", kind, round(ms * 1000000))
        if self.SIZES[kind] < 0:
            head += struct.pack(">H", len(payload))
        return head + payload

    def block(self, cap, events):
        """events: [(kind, ms, payload)] of one capability (None: global);
        ms may have a fraction (to the nanosecond)."""
        body = b"".join(self.event(*e) for e in events)
        marker = struct.pack(">HQIQH", self.BLOCK, round(events[0][1] * 1000000),
                             24 + len(body), round(events[-1][1] * 1000000),
                             0xFFFF if cap is None else cap)
        return marker + body

    def send(self, data):
        if self.conn is None:
            self.srv.settimeout(30)
            self.conn, _ = self.srv.accept()
            self.s.clients.append(self.conn)
            self.conn.sendall(self.header())
        self.conn.sendall(data)

    def run(self, tid):
        return struct.pack(">I", tid)

    def stop(self, tid):
        return struct.pack(">IHI", tid, 1, 0)  # status 1: heap overflow (it yields)

    def gc_stats(self, gen):
        """GC_STATS_GHC of a collection of generation `gen` (1 KiB copied)."""
        return struct.pack(">IHQQQIQQ", 0, gen, 1024, 0, 0, 1, 0, 0)

    def gc(self, ms, dur_ms, gen=0):
        """One collection led by the block's capability: start, stats, end."""
        return [(self.GC_START, ms), (self.GC_STATS, ms + dur_ms, self.gc_stats(gen)),
                (self.GC_END, ms + dur_ms)]


def strip_pixel(b, cap, ms, gc):
    """[r, g, b] of the capability strip at time `ms`, in capability `cap`'s
    row: its upper half (GC) or lower half (running Haskell code)."""
    return b.js("""(() => {
        const cv = document.getElementById('cap-strip');
        const nb = +cv.dataset.buckets, w = +cv.dataset.bucketNs;
        const x = Math.floor((%d * 1e6 / w) * cv.width / nb);
        const h = +cv.dataset.rowHeight;
        const y = %d * h + (%s ? h / 4 : 3 * h / 4);
        return Array.from(cv.getContext('2d').getImageData(x, y, 1, 1).data.slice(0, 3));
    })()""" % (ms, cap, "true" if gc else "false"))


def painted(px):
    """What a strip pixel shows: the green of a run, the orange of a GC, or
    the grey of idle time."""
    r, g, b = px
    if g > r + 30 and g > b + 30:
        return "running"
    if r > b + 60:
        return "gc"
    if abs(r - g) < 12 and abs(g - b) < 12:
        return "idle"
    return "?%s" % (px,)


@test(ghc_free=True)
def web_live_cap_strip(s):
    """The capability strip shows runs and GCs in progress up to the latest
    event, live, not only once they end: capability 0 running since 0.5 s
    and capability 1 in a GC since 2.5 s, the latest event at 3 s: the page
    says so as text and paints both up to 3 s; once they end (3.2 s, 3.1 s)
    and time goes on to 4 s, both are idle at the end and the run stays
    painted where it was."""
    need_chromium()
    sock = s.path("synthetic.sock")
    prog = SyntheticProgram(s, sock)
    srv, url = start_serve(s, sock)
    P = prog
    prog.send(P.block(0, [(P.RUN, 100, P.run(1)), (P.STOP, 300, P.stop(1)),
                          (P.RUN, 500, P.run(2))]) +
              P.block(1, [(P.RUN, 150, P.run(3)), (P.STOP, 250, P.stop(3)),
                          (P.GC_START, 2500)]) +
              P.block(None, [(P.MARKER, 1000, b"one"), (P.MARKER, 3000, b"three")]))
    b = Browser(s)
    b.goto(url)
    b.wait_js("Array.from(document.querySelectorAll('#marks li')).length === 2 && "
              "document.querySelectorAll('#cap-legend tbody tr').length === 2",
              what="the first part on the page")
    now = b.wait_js("Array.from(document.querySelectorAll('#cap-legend td.now'))"
                    ".map(td => td.textContent)", what="what the capabilities do now")
    expect(now == ["running since 0.500 s", "in GC since 2.500 s"],
           "the page says the capabilities are: %s" % now)
    seen = {(cap, ms, gc): painted(strip_pixel(b, cap, ms, gc))
            for cap, ms, gc in ((0, 2000, False), (0, 2950, False), (1, 2950, True),
                                (1, 2950, False), (0, 400, False), (1, 1500, True))}
    want = {(0, 2000, False): "running", (0, 2950, False): "running", (1, 2950, True): "gc",
            (1, 2950, False): "idle", (0, 400, False): "idle", (1, 1500, True): "idle"}
    expect(seen == want, "the strip while capability 0 runs and 1 collects: %s, not %s"
           % (seen, want))
    b.screenshot(os.path.join(harness.BUILD, "web-live-caps.png"))

    prog.send(P.block(1, [(P.GC_END, 3100)]) + P.block(0, [(P.STOP, 3200, P.stop(2))]) +
              P.block(None, [(P.MARKER, 4000, b"four")]))
    b.wait_js("Array.from(document.querySelectorAll('#cap-legend td.now'))"
              ".every(td => td.textContent === 'idle') && "
              "document.querySelectorAll('#marks li').length === 3",
              what="both capabilities idle after the second part")
    seen = {(cap, ms, gc): painted(strip_pixel(b, cap, ms, gc))
            for cap, ms, gc in ((0, 2000, False), (0, 3900, False), (1, 3900, True),
                                (1, 3000, True))}
    want = {(0, 2000, False): "running", (0, 3900, False): "idle", (1, 3900, True): "idle",
            (1, 3000, True): "gc"}
    expect(seen == want, "the strip after both ended: %s, not %s" % (seen, want))
    prog.send(b"\xff\xff")
    prog.conn.close()
    b.wait_js("document.getElementById('state').textContent === 'program exited'",
              what="program exited")
    errors = b.errors()
    expect(not errors, "console errors: %s" % errors[:5])
    srv.signal(signal.SIGTERM)
    rc, _, err = srv.wait(30)
    expect(rc == 0, "serve exited %d after SIGTERM: %s" % (rc, err))
