# SPDX-License-Identifier: BSD-3-Clause
"""What the page's charts and legend draw from the data: the heap
legend's trends (each band over every census, scaled to its peak), the
GC pause chart in time order whatever order the capabilities' blocks came
in (GHC 9.0 writes an idle capability's block at exit), the heap chart of
a run without a heap profile, and the allocation chart of a run that has
reported no allocation yet."""

import os

import harness
from cdp import Browser
from harness import Program, expect, note, test
from test_web import SyntheticProgram, need_chromium, open_report, start_serve


@test(ghc_free=True)
def web_pause_chart_in_time_order(s):
    """Capability 0's block holds GCs from 0.1 s to 2 s; capability 1's,
    sent after it, holds three from 0.05 s to 0.09 s (its block was written
    late, as an idle capability's is). The pause chart shows every pause
    over 0.05-2 s, the heap and allocation charts' time axis, not the few
    milliseconds between the first pause received and the last."""
    need_chromium()
    sock = s.path("pauses.sock")
    P = SyntheticProgram(s, sock)
    srv, url = start_serve(s, sock)
    late = [e for ms in (50, 70, 90) for e in P.gc(ms, 1)]
    first = [e for ms in range(100, 2001, 100) for e in P.gc(ms, 2, gen=1 if ms == 1000 else 0)]
    P.send(P.block(0, first) + P.block(1, late) +
           P.block(None, [(P.MARKER, 2100, b"the end")]))
    b = Browser(s, height=1200)
    b.goto(url)
    b.wait_js("+document.getElementById('pause-chart').dataset.rows === 23",
              what="23 pauses on the chart")
    span = b.js("document.getElementById('pause-chart').dataset.range")
    x0, x1 = map(float, span.split(","))
    note("23 pauses, the chart shows %.3f-%.3f s" % (x0, x1))
    expect(x0 <= 0.05 and x1 >= 2.0 and x1 - x0 < 3,
           "the pause chart shows %s s, not the pauses' 0.050-2.002 s" % span)
    b.js("document.getElementById('pause-chart').scrollIntoView()")
    b.screenshot(os.path.join(harness.BUILD, "web-pauses-in-order.png"))


@test
def web_heap_legend_trends(s):
    """Each band of the heap legend has a small trend of its own, over every
    census, scaled to its peak: as many points as censuses (60 at most), the
    highest at the top, the last as high as the latest figure is of the
    peak; size and live bytes have theirs too."""
    need_chromium()
    from test_heap import record_with_rts_files
    _, log = record_with_rts_files(s, seconds=1.5)
    b = Browser(s, height=1200)
    open_report(s, b, log, "trend")
    rows = b.js("""Array.from(document.querySelectorAll('#heap-legend tbody tr'))
    .map(function (tr) {
      var pl = tr.querySelector('td.trend polyline'), x = tr.querySelectorAll('td.x');
      return {name: tr.dataset.series, points: pl ? pl.getAttribute('points') : null,
              title: pl ? tr.querySelector('td.trend title').textContent : null,
              peak: x.length ? +x[0].dataset.value : null,
              latest: +tr.querySelector('td.v').dataset.value};
    })""")
    censuses = int(b.js("document.getElementById('census-count').textContent"))
    expect(censuses >= 2 and len(rows) >= 4, "%d censuses, %d legend rows" % (censuses, len(rows)))
    for r in rows:
        expect(r["points"], "%s has no trend" % r["name"])
        pts = [tuple(map(float, p.split(","))) for p in r["points"].split()]
        ys = [y for _, y in pts]
        if r["name"] in ("heap size", "live bytes"):
            expect(len(pts) >= 2, "%s: a trend of %d points" % (r["name"], len(pts)))
            continue
        expect(len(pts) == min(censuses, 60),
               "%s: %d points for %d censuses" % (r["name"], len(pts), censuses))
        expect(("over %d censuses" % censuses) in r["title"], "%s: %r" % (r["name"], r["title"]))
        if r["peak"]:
            expect(abs(min(ys) - 1) < 0.05, "%s: its peak is not at the top (%r)" % (r["name"], ys))
            want = 13 - r["latest"] / r["peak"] * 12 if censuses <= 60 else None
            expect(want is None or abs(ys[-1] - want) < 0.6,
                   "%s: the last point at y=%.1f, latest/peak puts it at %.1f"
                   % (r["name"], ys[-1], want))
    b.js("document.getElementById('heap-legend').scrollIntoView()")
    b.screenshot(os.path.join(harness.BUILD, "web-heap-trends.png"))
    note("%d legend rows with trends over %d censuses; build/web-heap-trends.png"
         % (len(rows), censuses))


@test
def web_heap_chart_without_profile(s):
    """A run without a heap profiling mode (no -h): the heap chart draws
    heap size and live bytes on its right axis, and its left axis, with no
    census bands to measure, draws no labels and no title (it drew the
    run's length in seconds as bytes: 0, 256p-10, 512p-10, ... 1.75)."""
    need_chromium()
    p = Program(s, "probe-late", ["--busy"])
    p.cmd("sleep 1.5")
    p.cmd("quit")
    p.finish()
    b = Browser(s, height=1200)
    open_report(s, b, s.path("probe-late.eventlog"), "noprofile")
    axis = b.js("""(function (q) {
      return {left: q('dygraph-axis-label-y:not(.dygraph-axis-label-y2)'),
              right: q('dygraph-axis-label-y2'),
              title: (document.querySelector('#heap-chart .dygraph-ylabel')
                      || {}).textContent || '',
              census: document.getElementById('census-count').textContent};
    })(function (c) {
      return Array.from(document.querySelectorAll('#heap-chart .' + c)).map(function (e) {
        return e.textContent; });
    })""")
    note("left axis %r, right axis %r, left title %r, censuses %s"
         % (axis["left"], axis["right"], axis["title"], axis["census"]))
    expect(axis["census"] == "0", "the run has no census: %r" % axis["census"])
    expect(axis["left"] == [] and axis["title"] == "",
           "the left axis has no bands to measure, yet it says %r, %r"
           % (axis["left"], axis["title"]))
    expect(any(t.endswith(("Ki", "Mi", "Gi")) for t in axis["right"]),
           "the right axis is in bytes: %r" % axis["right"])
    b.js("document.getElementById('heap-chart').scrollIntoView(); 1")
    b.screenshot(os.path.join(harness.BUILD, "web-heap-without-profile.png"))


@test(ghc_free=True)
def web_alloc_chart_without_allocation(s):
    """A run whose stream reports no allocation yet (the first figure of
    each capability counts in the total, not the rate; here none comes):
    the allocation chart's axis reads 0 bytes/s on a scale of bytes, not
    fractions of a byte in binary prefixes (256p-10, 512p-10, ...)."""
    need_chromium()
    sock = s.path("noalloc.sock")
    P = SyntheticProgram(s, sock)
    srv, url = start_serve(s, sock)
    gcs = [e for ms in range(100, 2001, 100) for e in P.gc(ms, 0)]
    P.send(P.block(0, gcs) + P.block(None, [(P.MARKER, 2100, b"the end")]))
    b = Browser(s, height=1200)
    b.goto(url)
    b.wait_js("+document.getElementById('alloc-chart').dataset.rows > 0",
              what="the allocation chart")
    labels = b.js("Array.from(document.querySelectorAll('#alloc-chart .dygraph-axis-label-y'))"
                  ".map(function (e) { return e.textContent; })")
    note("allocation chart's axis: %r" % labels)
    expect(len(labels) >= 3 and labels[0] == "0" and all(t.isdigit() for t in labels) and
           int(labels[-1]) >= 256,
           "the allocation axis reads whole bytes/s up to 1 KiB (0, 256, 512 ...), not %r"
           % labels)
    b.js("document.getElementById('alloc-chart').scrollIntoView(); 1")
    b.screenshot(os.path.join(harness.BUILD, "web-alloc-without-allocation.png"))


@test
def web_one_pause(s):
    """A run with one collection of 0.167 ms, its stream 2.1 s long: the
    pause chart's time axis is the allocation chart's, with the pause on
    it, and its pause axis reads whole decades in labels that differ
    (left to itself, one pause's axis of no width read 0.17, 0.17, 0.18,
    0.18 and drew no point). A program that marked no span gets no
    spans' lane under the capabilities (an empty one was shown)."""
    need_chromium()
    sock = s.path("onepause.sock")
    P = SyntheticProgram(s, sock)
    srv, url = start_serve(s, sock)
    P.send(P.block(0, P.gc(1000, 0.167)) + P.block(None, [(P.MARKER, 2100, b"the end")]))
    b = Browser(s, height=1200)
    b.goto(url)
    b.wait_js("+document.getElementById('pause-chart').dataset.rows === 1 && "
              "+document.getElementById('alloc-chart').dataset.rows > 0 && "
              "!!document.getElementById('pause-chart').querySelector('.dygraph-axis-label-y')",
              what="the pause chart")
    got = b.js("""(function () {
      var ax = function (id) {
        return Array.from(document.querySelectorAll('#' + id + ' .dygraph-axis-label-y'))
          .map(function (e) { return e.textContent; })
          .filter(function (t) { return t !== ''; });
      };
      return {labels: ax('pause-chart'),
              pause: document.getElementById('pause-chart').dataset.range,
              alloc: document.getElementById('alloc-chart').dataset.range,
              lane: document.getElementById('span-row').getBoundingClientRect().height,
              caps: document.getElementById('cap-strip').getBoundingClientRect().height};
    })()""")
    note("pause axis %r; time axes: pauses %s, allocation %s" % (got["labels"], got["pause"],
                                                                 got["alloc"]))
    p0, p1 = map(float, got["pause"].split(","))
    a0, a1 = map(float, got["alloc"].split(","))
    expect(abs(p0 - a0) < 0.01 and abs(p1 - a1) < 0.01 and p0 < 1.0 < p1 and p1 - p0 > 1,
           "the pause chart shows %s s, the allocation chart %s s" % (got["pause"], got["alloc"]))
    values = [float(t) for t in got["labels"]]
    expect(len(values) >= 2 and len(set(got["labels"])) == len(got["labels"])
           and min(values) <= 0.167 <= 1.0 and min(values) == 0.1,
           "the pause axis reads %r, not decades around 0.167 ms" % got["labels"])
    expect(got["lane"] == 0 and got["caps"] > 0,
           "the spans' lane takes %s px without a span (the capabilities' strip %s)"
           % (got["lane"], got["caps"]))
    b.js("document.getElementById('pause-chart').scrollIntoView(); 1")
    b.screenshot(os.path.join(harness.BUILD, "web-one-pause.png"))
