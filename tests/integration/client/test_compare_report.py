# SPDX-License-Identifier: BSD-3-Clause
"""`eventlog-socket report RUN_A RUN_B -o OUT.html`: two runs (a fast and a
leaky one) in one file that opens from disk, judged in headless Chromium:
its table is `compare --csv -`'s, row for row; its two charts draw both
runs on the same x and y ranges; both runs' lines are seen on the
screenshots; and a run that cannot be read, or has no heap profile, gives
`compare`'s exit status and message."""

import csv
import io
import os

import harness
from cdp import Browser
from harness import expect, note, test
from test_compare import COMPARE_HEADER
from test_table import record, run_client
from test_web import need_chromium
from test_web_charts import colour_shares, ink_share, plot_clip, rgb, shot

# The heap chart's colours (client/web/compare.js): A's pair, then B's.
HEAP_SERIES = ("A heap size", "A live bytes", "B heap size", "B live bytes")
TOP = 5  # labels the second chart draws (the table's first)


def page_table(b):
    """The page's table: [label, peak A, peak B, peak B-A, mean A, mean B,
    mean B-A, note] per row, the numbers from the cells' data-value."""
    return b.js("""Array.from(document.querySelectorAll('#compare-table tbody tr'))
    .map(function (tr) {
      var td = tr.cells;
      return [td[0].textContent].concat([1, 2, 3, 4, 5, 6].map(function (k) {
        return td[k].dataset.value; }), [td[7].textContent]);
    })""")


def chart_facts(b, chart):
    d = b.js("Object.assign({}, document.getElementById('%s').dataset)" % chart)
    return {"series": (d.get("series") or "").split("|"),
            "range": [float(x) for x in (d.get("range") or "nan,nan").split(",")],
            "yrange": [float(x) for x in (d.get("yrange") or "nan,nan").split(",")]}


def hide(b, chart, run, hidden):
    """Hide (or show again) one run's series on a chart; wait until drawn."""
    return b.js("""(function () {
      var g = window.esCompare['%s'];
      g.getLabels().slice(1).forEach(function (name, k) {
        if (name.charAt(0) === '%s') g.setVisibility(k, !%s);
      });
      return new Promise(function (done) {
        requestAnimationFrame(function () { requestAnimationFrame(function () { done(true); }); });
      });
    })()""" % (chart, run, "true" if hidden else "false"))


def judge_charts(b, rows, failures):
    """Both charts: both runs' series, the same x range (0 to the longer
    run) and each run's figures within the one y range."""
    data = b.js("JSON.parse(document.getElementById('es-data').textContent)")
    end = max(r["end"] for r in data["runs"])
    heap, labels = chart_facts(b, "heap-chart"), chart_facts(b, "label-chart")
    note("x ranges %s and %s (the longer run ends at %.3f s), y ranges %s and %s"
         % (heap["range"], labels["range"], end, heap["yrange"], labels["yrange"]))
    if heap["series"] != list(HEAP_SERIES):
        failures.append("heap chart series %s" % heap["series"])
    want = ["%s: %s" % (run, r["label"]) for run in "AB" for r in rows[:TOP]]
    if labels["series"] != want:
        failures.append("label chart series %s, not %s" % (labels["series"], want))
    for name, f in (("heap", heap), ("labels", labels)):
        if abs(f["range"][0]) > 1e-3 or abs(f["range"][1] - end) > 2e-3:
            failures.append("%s chart: x range %s, not 0 to %.3f" % (name, f["range"], end))
    peak = max(max(v or 0 for v in pt[1:]) for r in data["runs"] for pt in r["heap"])
    if not peak <= heap["yrange"][1] <= 1.2 * peak or heap["yrange"][0] != 0:
        failures.append("heap chart: y range %s for a largest figure %d" % (heap["yrange"], peak))
    top_peak = max(max(int(r["peak_a_bytes"]), int(r["peak_b_bytes"])) for r in rows[:TOP])
    if not top_peak <= labels["yrange"][1] <= 1.2 * top_peak:
        failures.append("label chart: y range %s for a largest peak %d"
                        % (labels["yrange"], top_peak))
    for r in data["runs"]:
        last = max((pt[0] for pt in r["heap"]), default=0)
        if not 0.5 * r["end"] <= last <= end:
            failures.append("run %s: heap figures end at %.3f s of %.3f" % (r["letter"], last,
                                                                            r["end"]))


def judge_pixels(b, failures):
    """Each of the heap chart's four colours is on its screenshot; on the
    label chart, hiding either run takes ink away (both runs are drawn)."""
    base = os.path.join(harness.BUILD, "report-two-runs")
    colours = [rgb(c) for c in b.js("window.esCompare.heap.getColors()")]
    clip = plot_clip(b, "heap-chart")
    shares = colour_shares(shot(b, base + "-heap.png", clip), colours, tol=24)
    note("heap chart: %s" % ", ".join("%s %.2f %%" % (n, 100 * shares[c])
                                      for n, c in zip(HEAP_SERIES, colours)))
    # A run's line spans its part of the shared x range: a short run beside
    # one a loaded machine stretched is a short line. A third of a
    # one-pixel line over that part is the least a drawn line covers.
    data = b.js("JSON.parse(document.getElementById('es-data').textContent)")
    end = max(r["end"] for r in data["runs"]) or 1
    part = {r["letter"]: r["end"] / end for r in data["runs"]}
    for n, c in zip(HEAP_SERIES, colours):
        least = min(0.0005, part[n[0]] / (3 * clip["height"]))
        if shares[c] < least:
            failures.append("heap chart: %s (%s) covers %.3f %% of the plot" %
                            (n, c, 100 * shares[c]))
    # The censuses each run's labels have: a run whose recording has one
    # census with them (a loaded machine once gave the fast run only its
    # exit census) is a dot, not a line.
    points = b.js("(function () { var D = JSON.parse(document.getElementById('es-data')"
                  ".textContent); return ['a', 'b'].map(function (r) { return Math.max.apply("
                  "null, D.top.map(function (l) { return l[r].length; })); }); })()")
    clip = plot_clip(b, "label-chart")
    both = shot(b, base + "-labels.png", clip)
    for run, n in zip("AB", points):
        hide(b, "labels", run, True)
        ink = ink_share(both, shot(b, "%s-labels-no-%s.png" % (base, run), clip))
        hide(b, "labels", run, False)
        note("label chart: run %s's lines are %.3f %% of the plot (%d censuses)"
             % (run, 100 * ink, n))
        if ink < (0.001 if n >= 2 else 0.00001):
            failures.append("label chart: run %s's lines (%d censuses) are %.3f %% of the plot"
                            % (run, n, 100 * ink))


@test
def report_two_runs(s):
    """`report FAST LEAKY -o OUT.html`: the title names both runs, the
    table is `compare --csv -`'s (labels, order, numbers), the heap and
    label charts draw both runs on shared axes, both runs' lines are seen;
    with the second run missing, exit 2 and compare's message; without a
    heap profile, exit 1; no -o or three runs, usage errors."""
    need_chromium()
    fast, _ = record(s, "fast", ["sleep 0.6"])
    leaky, _ = record(s, "leaky", ["work 0.6 24"])
    res = run_client("compare", fast, leaky, "--csv", "-")
    expect(res.returncode == 0, "compare exited %d: %s" % (res.returncode, res.stderr))
    expect(res.stdout.startswith(COMPARE_HEADER + "\n"), "compare's header: %r" % res.stdout[:100])
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    out = s.path("two.html")
    res = run_client("report", fast, leaky, "-o", out)
    expect(res.returncode == 0, "report exited %d: %s" % (res.returncode, res.stderr))
    with open(out) as f:
        html = f.read()
    expect("src=\"http" not in html and "href=\"http" not in html, "the file links to the network")
    b = Browser(s, height=1800)
    b.goto("file://" + out)
    try:
        b.wait_js("+document.body.dataset.drawn >= 2", what="both charts drawn")
    except harness.TestFailure as e:
        raise harness.TestFailure("%s; the page's errors: %s" % (e, b.errors()[:5]))
    title = b.js("document.getElementById('title').textContent")
    note("title: %r; %d labels, the first %s %s" % (title, len(rows), rows[0]["label"],
                                                    rows[0]["peak_diff_bytes"]))
    expect("fast.eventlog" in title and "leaky.eventlog" in title and "probe-late" in title,
           "the title does not name both runs: %r" % title)
    got = page_table(b)
    want = [[r["label"], r["peak_a_bytes"], r["peak_b_bytes"], r["peak_diff_bytes"],
             r["mean_a_bytes"], r["mean_b_bytes"], r["mean_diff_bytes"], r["note"]] for r in rows]

    def norm(t):
        return [t[0]] + [float(x) for x in t[1:7]] + [t[7]]

    expect([norm(r) for r in got] == [norm(r) for r in want],
           "the page's table differs from compare's: %r" % (next(
               ((g, w) for g, w in zip(got, want) if norm(g) != norm(w)), (len(got), len(want))),))
    expect(any(r["note"] == "only in B" for r in rows), "no label of B only")
    failures = []
    judge_charts(b, rows, failures)
    judge_pixels(b, failures)
    shot_path = os.path.join(harness.BUILD, "report-two-runs.png")
    b.screenshot(shot_path)
    note("screenshots: %s and %s-*.png" % (shot_path, shot_path[:-4]))
    errors = b.errors()
    expect(not errors, "console errors: %s" % errors[:5])
    expect(not failures, "; ".join(failures))
    # A second run that is not there: compare's exit status and message,
    # and no file; no -o, or three runs: usage errors.
    bad, missing = s.path("bad.html"), s.path("missing.eventlog")
    res = run_client("report", fast, missing, "-o", bad, "--connect-timeout", "1")
    cmp = run_client("compare", fast, missing, "--connect-timeout", "1")
    note("a missing second run: exit %d, %r" % (res.returncode, res.stderr))
    expect(res.returncode == 2 and "missing.eventlog" in res.stderr and not os.path.exists(bad),
           "report with a missing run: exit %d, %r" % (res.returncode, res.stderr))
    expect((cmp.returncode, cmp.stderr) == (res.returncode, res.stderr),
           "compare says %d %r, report %d %r" % (cmp.returncode, cmp.stderr, res.returncode,
                                                 res.stderr))
    plain, _ = record(s, "plain", ["marker p"], rts=())
    res = run_client("report", fast, plain, "-o", bad)
    expect(res.returncode == 1 and "no heap profile" in res.stderr and not os.path.exists(bad),
           "report with a run without a heap profile: exit %d, %r" % (res.returncode, res.stderr))
    for args, words in (([fast, leaky], "usage: eventlog-socket report"),
                        ([fast, leaky, fast, "-o", bad], "two runs at most")):
        res = run_client("report", *args)
        expect(res.returncode == 2 and words in res.stderr and not os.path.exists(bad),
               "report with %d words: exit %d, %r" % (len(args), res.returncode, res.stderr))


@test(ghc_free=True)
def report_two_unnamed_runs(s):
    """Two recordings that never name their program (a start from Haskell
    on GHC 9.0 streams no arguments): the title names each by its file,
    "A: a.eventlog vs B: b.eventlog", with no empty "()"; a difference
    that rounds to nothing reads "0 B", never "-0 B"."""
    need_chromium()
    import fakeprog

    def run_file(name, extra):
        # Four censuses of one label: 100 bytes, and in A a fourth of 101
        # (its mean is a quarter of a byte above B's).
        blocks = [fakeprog.block(fakeprog.heap_profile(ms=1))]
        for i, n in enumerate((100, 100, 100, 100 + extra)):
            blocks.append(fakeprog.block(fakeprog.census(100 * (i + 1), [(b"ARR_WORDS", n)])))
        path = s.path(name)
        with open(path, "wb") as f:
            f.write(fakeprog.eventlog(*blocks))
        return path

    a, b_run = run_file("a.eventlog", 1), run_file("b.eventlog", 0)
    res = run_client("compare", a, b_run, "--csv", "-")
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    expect(res.returncode == 0 and rows and -1 < float(rows[0]["mean_diff_bytes"]) < 0,
           "compare: %d %r %r" % (res.returncode, res.stdout, res.stderr))
    out = s.path("unnamed.html")
    res = run_client("report", a, b_run, "-o", out)
    expect(res.returncode == 0, "report exited %d: %s" % (res.returncode, res.stderr))
    b = Browser(s, height=1200)
    b.goto("file://" + out)
    # The label chart (the heap chart has no heap figures to draw here).
    b.wait_js("+document.body.dataset.drawn >= 1 && "
              "document.querySelectorAll('#compare-table tbody tr').length > 0",
              what="the page drawn")
    title = b.js("document.getElementById('title').textContent")
    cells = b.js("Array.from(document.querySelectorAll('#compare-table tbody td'))"
                 ".map(function (td) { return td.textContent; })")
    note("title %r; cells %r" % (title, cells))
    expect(title == "A: a.eventlog vs B: b.eventlog", "the title: %r" % title)
    expect("()" not in b.js("document.title"), "the tab's title: %r" % b.js("document.title"))
    expect(not any(c.startswith("-0 ") or c.startswith("+0 ") for c in cells),
           "a difference of nothing with a sign: %r" % cells)
    expect("0 B" in cells, "no difference of 0 B: %r" % cells)
