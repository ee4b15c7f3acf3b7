# SPDX-License-Identifier: BSD-3-Clause
"""The time profile on the web page: `report`'s and `serve`'s flame graph
(d3-flame-graph, vendored from npm in client/web/vendor/), judged in
headless Chromium as a person uses it: each frame's samples and width
against the folded file of the same recording (itself judged against the
RTS's .prof and ghc-events), hover, click to zoom, search, the last
seconds; live, the page's own buttons start and stop profiling."""

import csv
import io
import os
import re
import shutil
import subprocess
import time

import harness
from cdp import Browser
from harness import Skip, check_stream, expect, note, serve, test
from test_profile import (check_against_prof, client_path, ghc_events_innermost,
                          ghc_events_samples, live_needs_flush, profiled_program,
                          read_folded, unnamed_frames)
from test_web import need_chromium, start_serve
from test_web_charts import shot
from test_control import profiled_probe

# The vendored library and where it came from (client/web/vendor/README.md).
VENDOR = ("d3-flame-graph", "4.1.3",
          "5b9fd58798daad7515db6e1a2224c1d939c11584f79da108706dbde3942363c4")

# Every frame drawn: [path of names from MAIN, samples, rect width, fill].
FRAMES_JS = """Array.from(document.querySelectorAll('#flame svg g')).filter(function (g) {
  return g.__data__ && g.querySelector('rect'); }).map(function (g) {
  var names = [];
  for (var n = g.__data__; n; n = n.parent) names.unshift(n.data.name);
  var r = g.querySelector('rect');
  return [names.join(';'), g.__data__.value, +r.getAttribute('width'),
          getComputedStyle(r).fill];
})"""


# Every frame of the graph's tree, drawn or not: d3-flame-graph leaves out
# of the picture a frame narrower than its minFrameSize (1 px).
TREE_JS = """document.getElementById('flame').__data__.descendants().map(function (d) {
  var names = [];
  for (var n = d; n; n = n.parent) names.unshift(n.data.name);
  return [names.join(';'), d.value];
})"""


def frames(b):
    return {path: (value, width, fill) for path, value, width, fill in b.js(FRAMES_JS)}


def tree_values(b):
    return {path: value for path, value in b.js(TREE_JS)}


def tree_of_folded(stacks):
    """{path from MAIN: samples} of every prefix of the folded stacks (the
    empty stack, "MAIN" alone, is MAIN's own time)."""
    want = {}
    for key, n in stacks.items():
        path = ("MAIN",) if key == ("MAIN",) else ("MAIN",) + key
        for i in range(1, len(path) + 1):
            want[";".join(path[:i])] = want.get(";".join(path[:i]), 0) + n
    return want


def svg_width(b):
    return b.js("+document.querySelector('#flame svg').getAttribute('width')")


def frame_event(b, path, kind):
    """Dispatch a mouse event of `kind` on the frame at `path`."""
    b.js("""(function () {
      var g = Array.from(document.querySelectorAll('#flame svg g')).filter(function (g) {
        var names = [];
        for (var n = g.__data__; n; n = n.parent) names.unshift(n.data.name);
        return g.__data__ && names.join(';') === %r; })[0];
      g.dispatchEvent(new MouseEvent(%r, {bubbles: true}));
      return true; })()""" % (path, kind))


def open_report(s, log):
    """`report LOG -o OUT.html`, opened in headless Chromium."""
    out = s.path(os.path.basename(log) + ".html")
    res = subprocess.run([client_path(), "report", log, "-o", out], capture_output=True,
                         text=True, timeout=120)
    expect(res.returncode == 0, "report failed: %s" % res.stderr)
    b = Browser(s, width=1280, height=1400)
    b.goto("file://" + out)
    return b


def section_shot(b, name):
    """A screenshot of the page's Time profile section (420 px at most)
    into BUILD/name, for the docs."""
    r = b.js("(function () { var r = document.getElementById('time').getBoundingClientRect();"
             " return [r.left + scrollX, r.top + scrollY, r.width, Math.min(r.height, 420)];"
             " })()")
    shot(b, os.path.join(harness.BUILD, name),
         {"x": r[0], "y": r[1], "width": r[2], "height": r[3], "scale": 1})


def settle(b):
    b.js("new Promise(function (done) { setTimeout(done, 400); })")


@test(timeout=300)
def report_flame_graph_is_the_profile(s):
    """`report` of a profiled run: the page's flame graph holds every
    sample ghc-events counts; each frame's samples are the folded file's
    (whose shares are the RTS's .prof's) and its width its share of the
    graph's; hovering a frame tells its share and samples; a click zooms
    to it; a search colours the frames it finds and counts their samples;
    the screenshots are kept."""
    need_chromium()
    log, stacks = check_against_prof(s, ["-p", "-l"])
    b = open_report(s, log)
    b.wait_js("+document.getElementById('flame').dataset.drawn >= 1", what="the flame graph")
    b.js("document.getElementById('time').scrollIntoView()")
    settle(b)
    got, tree, want = frames(b), tree_values(b), tree_of_folded(stacks)
    total = ghc_events_samples(log)
    note("%d frames in the tree, %d drawn; MAIN %s; ghc-events counts %d samples"
         % (len(tree), len(got), got.get("MAIN"), total))
    expect(tree.get("MAIN") == total, "the graph's root holds %s samples, ghc-events "
           "counts %d" % (tree.get("MAIN"), total))
    diff = {k: (tree.get(k), want.get(k)) for k in set(tree) | set(want)
            if tree.get(k) != want.get(k)}
    expect(not diff, "frames whose samples differ from the folded file's (page, file): %r"
           % sorted(diff.items())[:5])
    full = svg_width(b)
    hidden = [k for k, v in want.items() if full * v / total >= 1.5 and k not in got]
    expect(not hidden, "frames of 1.5 px or more not drawn: %r" % hidden[:5])
    for path, (value, width, _) in got.items():
        expect(abs(width - full * value / total) <= 1.5,
               "%s: %.1f px wide for %d of %d samples in %d px" % (path, width, value, total,
                                                                   full))
    heavy = "MAIN;Main.main;Main.heavy"
    frame_event(b, heavy, "mouseover")
    details = b.js("document.getElementById('flame-details').textContent")
    share = 100.0 * want[heavy] / total
    note("hover: %r" % details)
    expect(details.startswith("Main.heavy: %.1f %% of the samples (%d of %d"
                              % (share, want[heavy], total)), "hover says %r" % details)
    b.screenshot(os.path.join(harness.BUILD, "web-flame-report.png"))
    # Zoom to Main.heavy: it fills the width, its callers stay drawn.
    frame_event(b, heavy, "click")
    settle(b)
    full = svg_width(b)
    zoomed = frames(b)
    note("zoomed to Main.heavy: %.0f px of %d" % (zoomed[heavy][1], full))
    expect(zoomed[heavy][1] >= full - 2, "after a click Main.heavy is %.0f px of %d"
           % (zoomed[heavy][1], full))
    b.js("document.getElementById('flame-reset').click()")
    settle(b)
    full = svg_width(b)
    back = frames(b)[heavy][1]
    expect(abs(back - full * want[heavy] / total) <= 1.5,
           "after Whole graph Main.heavy is %.0f px of %d, not %.0f"
           % (back, full, full * want[heavy] / total))
    # Search: the frames found are coloured alike, and the count is told.
    b.js("var q = document.getElementById('flame-search'); q.value = 'light';"
         "q.dispatchEvent(new Event('input'))")
    settle(b)
    found = {k: v[2] for k, v in frames(b).items() if "light" in k.split(";")[-1]}
    others = {v[2] for k, v in frames(b).items() if "light" not in k.split(";")[-1]}
    details = b.js("document.getElementById('flame-details').textContent")
    note("search 'light': %r; %r" % (found, details))
    expect(found and len(set(found.values())) == 1 and not set(found.values()) & others,
           "the frames found are not picked out: %r, others %r" % (found, others))
    b.screenshot(os.path.join(harness.BUILD, "web-flame-search.png"))
    # The section alone, for docs/profiling.md (last: a capture may resize
    # the page, which draws the graph anew at its new width).
    section_shot(b, "web-flame-section.png")
    expect(not b.errors(), "console errors: %r" % b.errors()[:5])


@test(ghc_free=True)
def report_without_samples_says_how(s):
    """A recording without cost-centre samples: the page has no flame
    graph and says what streams them."""
    need_chromium()
    import fakeprog
    path = s.path("plain.eventlog")
    with open(path, "wb") as f:
        f.write(fakeprog.eventlog(fakeprog.block(fakeprog.census(100, [(b"ARR_WORDS", 10)]))))
    b = open_report(s, path)
    b.wait_js("+document.body.dataset.drawn >= 1", what="the page drawn")
    hidden, note_text = b.js("[document.getElementById('time-body').hidden, "
                             "document.getElementById('time-note').textContent]")
    note(note_text)
    expect(hidden and "-prof" in note_text and "+RTS -p" in note_text,
           "no samples: body hidden %r, note %r" % (hidden, note_text))
    expect(not b.errors(), "console errors: %r" % b.errors()[:5])


@test(timeout=240)
def serve_flame_graph_live(s):
    """serve on a profiled program run without -p, computing in Main.heavy
    and Main.light (the probe's --heavy-light, three to one): the page's
    Start time profiling button starts it, the flame graph appears and
    grows while the program runs, the last 10 s of samples are at most the
    whole run's; Stop time profiling stops it (no new samples after). Its
    frames are the cost centres' names, Main.heavy the widest under MAIN,
    with its share of a recording's samples as ghc-events counts them
    (within 2 points)."""
    need_chromium()
    live_needs_flush()
    exe = profiled_probe(s)
    p, connect = serve(s, "flame", ["--heavy-light"], exe=exe)
    rec = connect()  # the recording (it releases the program)
    srv, url = start_serve(s, s.path("flame.sock"))
    b = Browser(s, width=1280, height=1400)
    b.goto(url)
    b.wait_js("document.getElementById('state').textContent === 'connected'", what="connected")
    expect(b.js("document.getElementById('time-body').hidden"), "a flame graph before profiling")
    b.js("document.getElementById('btn-profile-start').click()")
    b.wait_js("+document.getElementById('flame').dataset.drawn >= 1", timeout=30,
              what="the flame graph after Start time profiling")
    count = "+(document.getElementById('flame-count').textContent.match(/^(\\d+)/) || [0, 0])[1]"
    first = b.js(count)
    grown = b.wait_js("%s > %d ? %s : 0" % (count, first, count), timeout=30,
                      what="more samples while it runs")
    note("samples: %d, then %d" % (first, grown))
    b.js("document.querySelector('input[name=flame-range][value=recent]').click()")
    settle(b)
    recent = b.js(count)
    b.screenshot(os.path.join(harness.BUILD, "web-flame-live.png"))
    b.js("document.getElementById('btn-profile-stop').click()")
    b.js("document.querySelector('input[name=flame-range][value=all]').click()")
    time.sleep(3)  # the stop, then the next refresh of the trees
    stopped = b.js(count)
    time.sleep(4)
    after = b.js(count)
    note("recent %d; after Stop %d, 4 s later %d" % (recent, stopped, after))
    expect(after == stopped, "samples still coming after Stop: %d, then %d" % (stopped, after))
    expect(0 < recent <= after, "the last 10 s hold %d samples, the run %d" % (recent, after))
    expect(not b.errors(), "console errors: %r" % b.errors()[:5])
    tree = tree_values(b)
    p.cmd("quit")
    p.finish()
    check_stream(s, rec.wait_eof(), "flame")
    total, truth = ghc_events_innermost(s.path("flame.eventlog"))
    under = {path.split(";")[1]: n for path, n in tree.items() if path.count(";") == 1}
    note("under MAIN: %r of %d; ghc-events: %r of %d" % (under, tree["MAIN"], truth, total))
    unnamed = unnamed_frames([tuple(path.split(";")) for path in tree])
    expect(not unnamed, "frames without a name: %r" % unnamed)
    expect(max(under, key=under.get) == "Main.heavy" and under.get("Main.light", 0) > 0,
           "Main.heavy is not the widest under MAIN, or no Main.light: %r" % under)
    share, want = (100.0 * under["Main.heavy"] / tree["MAIN"],
                   100.0 * truth.get("Main.heavy", 0) / total)
    expect(abs(share - want) <= 2, "Main.heavy has %.1f %% of the graph's samples, %.1f %% of "
           "ghc-events'" % (share, want))
    srv.signal(15)
    srv.wait(30)


@test(ghc_free=True)
def web_vendored_flame_graph_is_npm_s(s):
    """The vendored d3-flame-graph is the npm registry's, byte for byte:
    the files in client/web/vendor/ equal those of the tarball whose
    SHA-256 is pinned (scripts/npm-fetch.sh checks it)."""
    if shutil.which("npm") is None:
        raise Skip("npm is not installed")
    res = subprocess.run([os.path.join(harness.ROOT, "scripts/npm-fetch.sh"), *VENDOR],
                         capture_output=True, text=True, timeout=300)
    if res.returncode != 0:
        raise Skip("npm could not fetch %s@%s: %s" % (VENDOR[0], VENDOR[1], res.stderr.strip()))
    pkg = res.stdout.strip()
    vendor = os.path.join(harness.ROOT, "client/web/vendor")
    for ours, theirs in (("d3-flamegraph.min.js", "dist/d3-flamegraph.min.js"),
                         ("d3-flamegraph.css", "dist/d3-flamegraph.css"),
                         ("LICENSE.d3-flame-graph", "LICENSE")):
        with open(os.path.join(vendor, ours), "rb") as a, open(os.path.join(pkg, theirs),
                                                               "rb") as b:
            expect(a.read() == b.read(), "client/web/vendor/%s is not %s@%s's %s"
                   % (ours, VENDOR[0], VENDOR[1], theirs))
    note("%s@%s: 3 files equal" % VENDOR[:2])
    expect(re.search(r"d3-flame-graph.*4\.1\.3", open(os.path.join(vendor, "README.md")).read()),
           "client/web/vendor/README.md does not name the version")


def profiled_run(s, name, args):
    """The profiled program run with +RTS -p -l and `args`; its eventlog,
    renamed NAME.eventlog, and its folded stacks (`profile -o`)."""
    exe = profiled_program()
    p = s.spawn([exe, *args, "+RTS", "-p", "-l", "-RTS"], cwd=s.dir, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE)
    _, err = p.communicate(timeout=120)
    expect(p.returncode == 0, "the profiled program failed: %r" % err)
    log = s.path(name + ".eventlog")
    os.rename(s.path(os.path.basename(exe) + ".eventlog"), log)
    folded = s.path(name + ".folded")
    res = subprocess.run([client_path(), "profile", log, "-o", folded], capture_output=True,
                         text=True, timeout=120)
    expect(res.returncode == 0, "profile failed: %s" % res.stderr)
    return log, read_folded(folded)


def cost_shares(stacks):
    """{cost centre: (self samples, total samples)} of folded stacks, a
    frame counted once per stack however often it recurs; MAIN under all."""
    out = {"MAIN": [0, sum(stacks.values())]}
    for key, n in stacks.items():
        frames = () if key == ("MAIN",) else key
        out.setdefault(frames[-1] if frames else "MAIN", [0, 0])[0] += n
        for f in set(frames):
            out.setdefault(f, [0, 0])[1] += n
    return out


@test(timeout=300)
def compare_and_report_two_time_profiles(s):
    """Two runs of a profiled program whose time goes the other way in
    the second (heavy and light swapped): `compare --time --csv` gives each
    cost centre's self samples and shares as the folded files count them;
    `compare` (no heap profiles) prints the time table, the largest change
    first; `report A B` shows that table and a differential flame graph of
    B whose frames hold B's samples, Main.light red (a larger share) and
    Main.heavy blue, with both runs' shares on hover."""
    need_chromium()
    a, fa = profiled_run(s, "a", ["20", "3000000", "1000000"])
    b, fb = profiled_run(s, "b", ["20", "1000000", "3000000"])
    ca, cb = cost_shares(fa), cost_shares(fb)
    ta, tb = sum(fa.values()), sum(fb.values())
    res = subprocess.run([client_path(), "compare", "--time", "--csv", "-", a, b],
                         capture_output=True, text=True, timeout=120)
    expect(res.returncode == 0, "compare --time failed: %s" % res.stderr)
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    note("compare --time: %s" % ", ".join("%s %s->%s" % (r["cost_centre"], r["self_a_pct"],
                                                         r["self_b_pct"]) for r in rows))
    for r in rows:
        name = r["cost_centre"]
        sa, sb = ca.get(name, (0, 0)), cb.get(name, (0, 0))
        expect((int(r["self_a_samples"]), int(r["self_b_samples"])) == (sa[0], sb[0]),
               "%s: self samples %s, %s; the folded files %d, %d"
               % (name, r["self_a_samples"], r["self_b_samples"], sa[0], sb[0]))
        for col, want in (("self_a_pct", 100.0 * sa[0] / ta), ("self_b_pct", 100.0 * sb[0] / tb),
                          ("total_a_pct", 100.0 * sa[1] / ta),
                          ("total_b_pct", 100.0 * sb[1] / tb)):
            expect(abs(float(r[col]) - want) < 0.001, "%s: %s %s, want %.3f"
                   % (name, col, r[col], want))
    expect({r["cost_centre"] for r in rows} == set(ca) | set(cb),
           "cost centres %s, the folded files' %s" % (sorted(r["cost_centre"] for r in rows),
                                                      sorted(set(ca) | set(cb))))
    expect(rows[0]["cost_centre"] in ("Main.heavy", "Main.light")
           and abs(float(rows[0]["self_diff_pct"])) > 30,
           "the largest change first: %r" % rows[0])
    text = subprocess.run([client_path(), "compare", a, b], capture_output=True, text=True,
                          timeout=120)
    expect(text.returncode == 0 and "Time profile: %d samples in A, %d in B" % (ta, tb)
           in text.stdout and "peak A" not in text.stdout,
           "compare without heap profiles: %d %r %r" % (text.returncode, text.stdout[:600],
                                                        text.stderr))
    out = s.path("two.html")
    res = subprocess.run([client_path(), "report", a, b, "-o", out], capture_output=True,
                         text=True, timeout=120)
    expect(res.returncode == 0, "report A B failed: %s" % res.stderr)
    br = Browser(s, width=1280, height=1400)
    br.goto("file://" + out)
    br.wait_js("+document.getElementById('flame').dataset.drawn >= 1", what="the flame graph")
    settle(br)
    hidden = br.js("['time', 'heap', 'labels', 'table'].map(function (id) { "
                   "return document.getElementById(id).hidden; })")
    expect(hidden == [False, True, True, True], "sections hidden (time, heap, labels, table): %r"
           % hidden)
    cells = br.js("Array.from(document.querySelectorAll('#time-table tbody tr')).map(function "
                  "(tr) { return [tr.cells[0].textContent].concat([1, 2, 3, 4, 5, 6].map("
                  "function (k) { return +tr.cells[k].dataset.value; })); })")
    want = [[r["cost_centre"]] + [float(r[k]) for k in ("self_a_pct", "self_b_pct",
                                                        "self_diff_pct", "total_a_pct",
                                                        "total_b_pct", "total_diff_pct")]
            for r in rows]
    expect(cells == want, "the page's table is not compare --time's: %r / %r"
           % (cells[:2], want[:2]))
    got, tree = frames(br), tree_values(br)
    want_tree = tree_of_folded(fb)
    diff = {k: (tree.get(k), v) for k, v in want_tree.items() if tree.get(k) != v}
    # Frames the page has and the folded file has not (seen once on 9.10:
    # two 1-sample frames missing under MAIN; where did they go?).
    extra = {k: v for k, v in tree.items() if k not in want_tree}
    expect(not diff and not extra, "B's frames differ from its folded file: %r; the page's own: %r"
           % (sorted(diff.items())[:4], sorted(extra.items())[:4]))
    heavy, light = "MAIN;Main.main;Main.heavy", "MAIN;Main.main;Main.light"
    rgb = {k: tuple(int(x) for x in re.findall(r"\d+", got[k][2])[:3]) for k in (heavy, light)}
    note("fills: heavy %s, light %s" % (rgb[heavy], rgb[light]))
    expect(rgb[light][0] > rgb[light][2] + 60 and rgb[heavy][2] > rgb[heavy][0] + 60,
           "Main.light should be red (grew), Main.heavy blue (shrank): %r" % rgb)
    frame_event(br, light, "mouseover")
    details = br.js("document.getElementById('flame-details').textContent")
    note("hover: %r" % details)
    expect(re.match(r"Main\.light: [\d.]+ % of B's samples, [\d.]+ % of A's \(\+[\d.]+ points\)",
                    details), "hover says %r" % details)
    br.screenshot(os.path.join(harness.BUILD, "report-two-time.png"))
    section_shot(br, "report-two-time-section.png")
    expect(not br.errors(), "console errors: %r" % br.errors()[:5])
