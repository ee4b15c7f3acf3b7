# SPDX-License-Identifier: BSD-3-Clause
"""The page's charts stay readable under a marker flood and with a small
heap profile under a large heap: fibber-c-main posts a marker
every few milliseconds with +RTS -hT -i0.5 -N2 -A4m (a profile of tens of
KiB under a heap of many MiB). Screenshots of `serve`'s page and of
`report`'s file are judged by their pixels: marker ink (the difference
between the chart with markers and without) covers at most a fifth of
each chart, the census bands cover a good part of the heap chart in
several colours, the page's height is bounded, at most a few marker
labels are drawn per chart. The page's marker count is the recording's
(ghc-events), its list holds the latest few with a filter, and a zoom on
one chart is followed by the others.

Pixels are read with PIL when it is installed (the host's python3-pil);
otherwise (the GHC chroots) with the small PNG reader below (zlib only)."""

import base64
import os
import re
import struct
import zlib

import harness
from cdp import Browser
from client_cmd import Cmd
from harness import Program, check_stream, expect, ghc_version, note, test
from test_web import NON_LABELS, http_get, need_chromium, open_report, start_serve

MAX_INK = 0.20        # the share of a chart's plot that marker ink may cover
MIN_BANDS = 0.15      # the share of the heap chart's plot the bands must cover
# CSS pixels: the page without a growing list. The chart of live threads
# (about 200 px) is drawn only when threads begin or end mid-run: a loaded
# machine's slower run showed it (2805 px; 2652 without), so it is counted.
MAX_HEIGHT = 3000
MAX_LIST = 50         # list items shown at once
CHARTS = ("heap-chart", "pause-chart", "alloc-chart")


# ---- Pixels.

def png_rgb(path):
    """(width, height, rows): rows[y] is a bytes object of R, G, B triples."""
    try:
        from PIL import Image
    except ImportError:
        return _png_rgb_zlib(path)
    im = Image.open(path).convert("RGB")
    w, h = im.size
    raw = im.tobytes()
    return w, h, [raw[y * w * 3:(y + 1) * w * 3] for y in range(h)]


def _png_rgb_zlib(path):
    data = open(path, "rb").read()
    expect(data[:8] == b"\x89PNG\r\n\x1a\n", "%s is not a PNG" % path)
    pos, idat, ihdr = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack("!I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack("!IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    expect(depth == 8 and ctype in (2, 6) and not interlace,
           "%s: a PNG kind this reader does not know (depth %d, colour type %d, interlace %d)"
           % (path, depth, ctype, interlace))
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        f = raw[y * (stride + 1)]
        cur = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                cur[i] = (cur[i] + cur[i - bpp]) & 255
        elif f == 2:
            cur = bytearray((a + b) & 255 for a, b in zip(cur, prev))
        elif f == 3:
            for i in range(stride):
                cur[i] = (cur[i] + ((cur[i - bpp] if i >= bpp else 0) + prev[i]) // 2) & 255
        elif f == 4:
            for i in range(stride):
                a = cur[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                cur[i] = (cur[i] + pr) & 255
        rows.append(bytes(cur))
        prev = cur
    if bpp == 4:
        rows = [bytes(b for i, b in enumerate(r) if i % 4 != 3) for r in rows]
    return w, h, rows


def pixels(img):
    w, h, rows = img
    for y in range(h):
        r = rows[y]
        for x in range(w):
            yield r[3 * x], r[3 * x + 1], r[3 * x + 2]


def ink_share(on, off):
    """The share of pixels that differ between two same-size images."""
    n = diff = 0
    for a, b in zip(pixels(on), pixels(off)):
        n += 1
        if max(abs(a[0] - b[0]), abs(a[1] - b[1]), abs(a[2] - b[2])) > 16:
            diff += 1
    return diff / max(n, 1)


def colour_shares(img, colours, tol=8):
    """{colour: share of pixels within `tol` of it}."""
    counts = dict.fromkeys(colours, 0)
    n = 0
    for p in pixels(img):
        n += 1
        for c in colours:
            if abs(p[0] - c[0]) <= tol and abs(p[1] - c[1]) <= tol and abs(p[2] - c[2]) <= tol:
                counts[c] += 1
                break
    return {c: k / max(n, 1) for c, k in counts.items()}


def rgb(css):
    """'rgb(1, 2, 3)' or '#010203' as a tuple."""
    css = css.strip()
    if css.startswith("#"):
        return tuple(int(css[i:i + 2], 16) for i in (1, 3, 5))
    return tuple(int(v) for v in css[css.index("(") + 1:css.index(")")].split(",")[:3])


# ---- The page.

def plot_clip(b, chart):
    """The chart's plot area in page coordinates (the whole chart if the
    page does not say where its plot is)."""
    # The chart is scrolled into the viewport first: the capture (shot) is
    # taken within the viewport, and the page stays where it is until the
    # next chart's clip is measured.
    r = b.js("""(function () {
      var el = document.getElementById('%s');
      el.scrollIntoView({block: 'center'});
      var r = el.getBoundingClientRect();
      var a = (el.dataset.area || '').split(',').map(Number);
      if (a.length !== 4) a = [0, 0, r.width, r.height];
      return [r.left + window.scrollX + a[0], r.top + window.scrollY + a[1], a[2], a[3]];
    })()""" % chart)
    return {"x": r[0], "y": r[1], "width": r[2], "height": r[3], "scale": 1}


def shot(b, path, clip):
    # Within the viewport (plot_clip scrolled the chart into it): capturing
    # beyond it lets Chrome lay the page out anew for the capture (a wider
    # page without its scroll bar), which once moved a chart away from the
    # clip measured before (0 % marker ink on the alloc chart, 9.6 in CI).
    data = b.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": False,
                                             "clip": clip}, session=b.session)["data"]
    with open(path, "wb") as f:
        f.write(base64.b64decode(data))
    return png_rgb(path)


def set_markers(b, on):
    """Tick or untick the page's "markers on the charts" box; False if the
    page has none."""
    # The charts redraw at once; two animation frames later the screen
    # shows it (a screenshot taken sooner may still show the old frame).
    return b.js("""(function () {
      var c = document.getElementById('show-marks');
      if (!c) return false;
      if (c.checked !== %s) c.click();
      return new Promise(function (done) {
        requestAnimationFrame(function () { requestAnimationFrame(function () { done(true); }); });
      });
    })()""" % ("true" if on else "false"))


def judge_page(s, b, what, failures, want_marks):
    """The checks shared by serve's page and report's file: `failures`
    collects what is wrong, so one run shows every defect."""
    def check(cond, msg):
        if not cond:
            failures.append("%s: %s" % (what, msg))
        return cond

    height = b.js("document.documentElement.scrollHeight")
    check(height <= MAX_HEIGHT, "the page is %d px tall (at most %d)" % (height, MAX_HEIGHT))
    items = b.js("document.querySelectorAll('#marks li').length")
    check(items <= MAX_LIST,
          "the marker list shows %d items at once (at most %d)" % (items, MAX_LIST))
    total = b.js("+(document.getElementById('marks-count') || {dataset: {}}).dataset.total")
    check(total == want_marks,
          "the page counts %s markers, the recording has %d" % (total, want_marks))
    note("%s: page %d px tall, %d list items, %s markers counted" % (what, height, items, total))

    # Every chart spans the run (a chart whose time axis came out of
    # order once showed a few milliseconds of it).
    ranges = b.js("[%s].map(id => document.getElementById(id).dataset.range || '')"
                  % ",".join("'%s'" % c for c in CHARTS))
    try:
        spans = [tuple(map(float, r.split(","))) for r in ranges]
        a, z = spans[0]
        for chart, (x0, x1) in zip(CHARTS[1:], spans[1:]):
            check(x0 <= a + 0.1 * (z - a) and x1 >= z - 0.1 * (z - a),
                  "%s shows %.3f-%.3f s of a run the heap chart shows as %.3f-%.3f s"
                  % (chart, x0, x1, a, z))
    except ValueError:
        check(False, "the charts' time ranges are %r" % ranges)

    # Each chart with and without markers.
    base = os.path.join(harness.BUILD, "web-charts-%s" % what)
    b.screenshot(base + ".png")
    toggles = set_markers(b, True)
    check(toggles, "no 'markers on the charts' box to compare the charts without markers")
    for chart in CHARTS:
        clip = plot_clip(b, chart)
        labels = b.js("+document.getElementById('%s').dataset.markLabels" % chart)
        style = b.js("document.getElementById('%s').dataset.markStyle" % chart)
        room = max(1, int(clip["width"] // 100))
        check(labels is not None and labels == labels and labels <= room,
              "%s: %s marker labels drawn (at most %d across %d px)" % (chart, labels, room,
                                                                        clip["width"]))
        on = shot(b, "%s-%s-marks.png" % (base, chart), clip)
        if not toggles:
            if chart == "heap-chart":
                judge_bands(b, on, check)
            continue
        set_markers(b, False)
        off = shot(b, "%s-%s.png" % (base, chart), clip)
        set_markers(b, True)
        ink = ink_share(on, off)
        note("%s %s: markers drawn as %s, %s labels, ink %.1f %% of the plot"
             % (what, chart, style, labels, 100 * ink))
        check(ink <= MAX_INK, "%s: marker ink covers %.0f %% of the plot (at most %.0f %%)"
              % (chart, 100 * ink, 100 * MAX_INK))
        check(ink >= 0.002, "%s: markers leave no ink at all (%.2f %%)" % (chart, 100 * ink))
        if chart == "heap-chart":
            judge_bands(b, off, check)


def judge_bands(b, img, check):
    """The census bands cover a good share of the heap chart's plot, in
    several of their legend colours."""
    rows = b.js("""Array.from(document.querySelectorAll('#heap-legend tbody tr')).map(function (r) {
      var sw = r.querySelector('.swatch');
      return [r.dataset.series, sw ? getComputedStyle(sw).backgroundColor : ''];
    })""")
    bands = [rgb(c) for name, c in rows if name not in NON_LABELS or name == "other"]
    bands = [c for c in bands if c]
    shares = colour_shares(img, bands)
    covered = sum(shares.values())
    seen = sum(1 for v in shares.values() if v >= 0.005)
    note("heap chart: %d bands, %.1f %% of the plot in band colours, %d colours visible"
         % (len(bands), 100 * covered, seen))
    check(covered >= MIN_BANDS,
          "the census bands cover %.1f %% of the heap chart (at least %.0f %%)"
          % (100 * covered, 100 * MIN_BANDS))
    check(seen >= min(3, len(bands)), "only %d of %d band colours visible" % (seen, len(bands)))


def drag(b, chart, f0, f1):
    """Drag across the chart's plot from fraction f0 to f1 of its width."""
    b.js("document.getElementById('%s').scrollIntoView()" % chart)
    r = b.js("""(function () {
      var el = document.getElementById('%s'), r = el.getBoundingClientRect();
      var a = (el.dataset.area || '').split(',').map(Number);
      if (a.length !== 4) a = [0, 0, r.width, r.height];
      return [r.left + a[0], r.top + a[1], a[2], a[3]];
    })()""" % chart)
    y = r[1] + r[3] / 2
    x0, x1 = r[0] + r[2] * f0, r[0] + r[2] * f1

    def mouse(kind, x, **kw):
        b.call("Input.dispatchMouseEvent", dict(type=kind, x=x, y=y, button="left", **kw),
               session=b.session)

    mouse("mouseMoved", x0, buttons=0)
    mouse("mousePressed", x0, buttons=1, clickCount=1)
    for k in range(1, 11):
        mouse("mouseMoved", x0 + (x1 - x0) * k / 10, buttons=1)
    mouse("mouseReleased", x1, buttons=0, clickCount=1)


def views(b):
    return b.js("[%s].map(id => document.getElementById(id).dataset.view)"
                % ",".join("'%s'" % c for c in CHARTS))


def judge_zoom(b, failures):
    """A drag across 30-60 % of the heap chart shows that time range on
    every chart; a double-click shows the whole run again."""
    full = b.js("document.getElementById('heap-chart').dataset.range") or ""
    drag(b, "heap-chart", 0.3, 0.6)
    v = views(b)
    note("the heap chart showed %s; after a drag over 30-60 %% the charts show %s" % (full, v))
    try:
        a, z = map(float, full.split(","))
        want = (a + 0.3 * (z - a), a + 0.6 * (z - a))
        got = tuple(map(float, v[0].split(",")))
        ok = (all(x == v[0] for x in v)
              and all(abs(g - w) < 0.02 * (z - a) for g, w in zip(got, want)))
    except ValueError:
        ok, want = False, None
    if not ok:
        failures.append("zoom: a drag over 30-60 %% of the heap chart (%s) gave the charts %s, "
                        "not %s" % (full, v, want))
        return
    # The capability strip shows the buckets of that range.
    strip = b.js("document.getElementById('cap-strip').dataset.viewBuckets") or ""
    width = b.js("+document.getElementById('cap-strip').dataset.bucketNs") / 1e9
    try:
        f0, f1 = (int(x) * width for x in strip.split(","))
        ok = abs(f0 - got[0]) <= 1.5 * width and abs(f1 - got[1]) <= 1.5 * width
    except ValueError:
        ok = False
    if not ok:
        failures.append("zoom: the capability strip shows the buckets %r of %.3f s for %s"
                        % (strip, width, v[0]))
    b.js("""(function () {
      var c = document.querySelector('#pause-chart canvas:last-of-type');
      var r = c.getBoundingClientRect();
      c.dispatchEvent(new MouseEvent('dblclick', {bubbles: true, clientX: r.left + r.width / 2,
                                                  clientY: r.top + r.height / 2}));
    })()""")
    v = views(b)
    if any(v):
        failures.append("zoom: a double-click on the GC chart left the charts at %s" % v)
    b.js("window.scrollTo(0, 0)")


@test(timeout=420)
def web_charts_marker_flood(s):
    """A marker every few milliseconds and a small heap profile under a
    large heap: serve's page and report's file stay readable (pixels, page
    height, list, labels), count every marker of the recording, and zoom
    all charts together."""
    need_chromium()
    sock = s.path("flood.sock")
    # fib 30 (slow, ~10 ms) then fib 31 (at once): a marker each; the
    # program ends by itself (its stdout, 26 KB, fits in the pipe).
    p = Program(s, "fibber-c-main", ["30", "31"] * 800, unix=sock, wait=True, stdin=False,
                rts=["-hT", "-i0.5", "-N2", "-A4m"])
    p.wait_socket(sock)
    srv, url = start_serve(s, sock)
    b = Browser(s, height=1600)
    b.goto(url)
    failures = []
    if ghc_version() >= (9, 2):
        b.wait_js("+document.getElementById('census-count').textContent >= 6", timeout=120,
                  what="six censuses, live")
        b.screenshot(os.path.join(harness.BUILD, "web-charts-live.png"))
        height = b.js("document.documentElement.scrollHeight")
        if height > MAX_HEIGHT:
            failures.append("live: the page is %d px tall (at most %d)" % (height, MAX_HEIGHT))
    b.wait_js("document.getElementById('state').textContent === 'program exited'", timeout=300,
              what="the program's exit")
    p.proc.wait(60)
    status, data = http_get(url + "recording.eventlog")
    summary = check_stream(s, data, "flood")
    markers = len(summary.markers)
    censuses = len(summary.samples)
    heap = b.js("+document.querySelector('#heap-legend tr[data-series=\"heap size\"] td.v')"
                ".dataset.value")
    profile = b.js("+document.getElementById('census-total').dataset.bytes")
    note("recording: %d markers, %d heap samples; heap size %d B, latest census %d B"
         % (markers, censuses, heap, profile))
    # What the scenario needs, not what the page does.
    expect(markers >= 1000, "only %d markers in the recording" % markers)
    expect(profile > 0 and heap >= 20 * profile,
           "not a small profile under a large heap: census %d B, heap %d B" % (profile, heap))
    b.wait_js("document.body.dataset.drawn >= 1", what="the page drawn")

    judge_page(s, b, "serve", failures, markers)
    # The filter: only matching markers, the latest first.
    shown = b.js("""(function () {
      var f = document.getElementById('marks-filter');
      if (!f) return null;
      f.value = 'fib 31'; f.dispatchEvent(new Event('input'));
      return Array.from(document.querySelectorAll('#marks li')).map(li => li.textContent);
    })()""")
    if shown is None:
        failures.append("serve: no filter for the marker list")
    elif not shown or not all("fib 31" in t for t in shown) or len(shown) > MAX_LIST:
        failures.append("serve: the filter 'fib 31' shows %d items: %s" % (len(shown or []),
                                                                           (shown or [])[:3]))
    judge_zoom(b, failures)
    errors = b.errors()
    if errors:
        failures.append("serve: console errors %s" % errors[:5])

    open_report(s, b, s.path("flood.eventlog"), "flood")
    judge_page(s, b, "report", failures, markers)
    errors = b.errors()
    if errors:
        failures.append("report: console errors %s" % errors[:5])
    note("screenshots: %s/web-charts-*.png" % harness.BUILD)
    expect(not failures, "; ".join(failures))


@test
def web_charts_few_markers(s):
    """21 markers within a second: in report's file each
    chart draws them as thin lines whose labels never overlap, at most a
    few per chart, and their ink stays under a fifth of the plot."""
    need_chromium()
    p, _ = harness.serve(s, "few", ["--busy"], rts=["-hT", "-i0.1"])
    rec = s.path("few.eventlog")
    r = Cmd(s, ["record", "unix:" + s.path("few.sock"), "-o", rec])
    for i in range(21):
        p.cmd("marker step %d of the work" % i)
        p.cmd("sleep 0.05")
    p.cmd("sleep 0.5")
    p.cmd("quit")
    p.finish()
    rc, _, err = r.wait(60)
    expect(rc == 0, "record: %d %s" % (rc, err))
    markers = len(check_stream(s, open(rec, "rb").read(), "few-check").markers)
    expect(markers == 21, "the recording has %d markers, not 21" % markers)
    b = Browser(s, height=1600)
    open_report(s, b, rec, "few")
    failures = []
    for chart in CHARTS:
        d = b.js("Object.assign({}, document.getElementById('%s').dataset)" % chart)
        clip = plot_clip(b, chart)
        boxes = [tuple(map(int, x.rsplit("-", 1)))
                 for x in (d.get("markBoxes") or "").split(",") if x]
        overlap = any(a[1] + 2 > b_[0] for a, b_ in zip(boxes, boxes[1:]))
        note("%s: markers drawn as %s, %s ticks, labels at %s" % (chart, d.get("markStyle"),
                                                                  d.get("markTicks"), boxes))
        if d.get("markStyle") != "lines" or not boxes or overlap or \
                len(boxes) > max(1, int(clip["width"] // 100)):
            failures.append("%s: markers drawn as %s with the labels %s"
                            % (chart, d.get("markStyle"), boxes))
        base = os.path.join(harness.BUILD, "web-charts-few-%s" % chart)
        on = shot(b, base + "-marks.png", clip)
        if not set_markers(b, False):
            failures.append("no 'markers on the charts' box")
            continue
        ink = ink_share(on, shot(b, base + ".png", clip))
        set_markers(b, True)
        note("%s: ink %.1f %% of the plot" % (chart, 100 * ink))
        if not 0.001 <= ink <= MAX_INK:
            failures.append("%s: marker ink covers %.1f %% of the plot" % (chart, 100 * ink))
    # The text of the marker under the pointer, as the chart's tooltip.
    b.js("document.getElementById('alloc-chart').scrollIntoView()")
    pos = b.js("""(function () {
      var el = document.getElementById('alloc-chart'), r = el.getBoundingClientRect();
      var box = (el.dataset.markBoxes || '').split(',')[0], a = (el.dataset.area || '').split(',');
      return box ? [r.left + (+box.split('-')[0]) - 2, r.top + (+a[1]) + (+a[3]) / 2] : null;
    })()""")
    tip = ""
    if pos:
        b.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": pos[0], "y": pos[1]},
               session=b.session)
        tip = b.js("document.getElementById('alloc-chart').title")
    note("the tooltip at the first marker of the allocation chart: %r" % tip)
    # The marker nearest the pointer: step 0, or on a busy machine a step
    # posted within the same pixels.
    if not re.search(r"\d+\.\d+ s: step [0-2] of the work", tip):
        failures.append("no tooltip naming the first marker: %r" % tip)
    b.js("window.scrollTo(0, 0)")
    b.screenshot(os.path.join(harness.BUILD, "web-charts-few.png"))
    errors = b.errors()
    expect(not errors, "console errors: %s" % errors[:5])
    expect(not failures, "; ".join(failures))
