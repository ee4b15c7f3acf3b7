# SPDX-License-Identifier: BSD-3-Clause
"""Sparks in every view, against the RTS's own count: tests/programs/sparker makes
sparks with par/pseq (+RTS -N2 -s) that are converted, fizzle, are
collected, are duds and overflow the pool, and at exit the RTS prints

    SPARKS: N (C converted, O overflowed, D dud, G GC'd, F fizzled)

N counts every spark (those put in the pool, the duds and the overflowed
ones). `top`, serve's page and /metrics, report's file and the `metrics`
exporter must show those same six figures for the run, in all and summed
over the capabilities; with +RTS -lf the spark events must count the same.
A program without sparks says so ("no sparks") instead of empty charts."""

import json
import os
import re

import harness
from cdp import Browser
from client_cmd import Cmd
from harness import Program, expect, ghc_version, note, test
from test_metrics import samples, scrape, start_metrics, value, wait_for
from test_top import Tmux, top_command
from test_web import need_chromium, open_report, start_serve
from test_web_charts import colour_shares, plot_clip, rgb, shot

# The order of the SPARKS line's figures, and the names the views use.
OUTCOMES = ("created", "converted", "overflowed", "dud", "gcd", "fizzled")


def rts_sparks(stderr):
    """{outcome: count} from +RTS -s's SPARKS line."""
    m = re.search(r"SPARKS: (\d+) \((\d+) converted, (\d+) overflowed, (\d+) dud, "
                  r"(\d+) GC'd, (\d+) fizzled\)", stderr)
    expect(m is not None, "no SPARKS line in +RTS -s's output:\n" + stderr[-2000:])
    return dict(zip(OUTCOMES, map(int, m.groups())))


def sparker(s, sock, rounds=20, rts=()):
    """The sparking program on `sock`, listening, held until a client
    connects (so the client sees the whole run, which +RTS -s sums)."""
    p = Program(s, "sparker", [str(rounds)], unix=sock, rts=("-N2", "-s", *rts), wait=True,
                stdin=rounds == 0)
    # A client started before the program listens is refused (on a busy
    # machine, sparks_events' record was).
    p.wait_socket(sock)
    return p


def finished(p):
    """Wait for the program's exit; its SPARKS line, with a mix checked:
    a test of the views is only as good as the outcomes it sees."""
    if p.proc.stdin is not None:
        p.proc.stdin.close()
    rc, _ = p.wait_rusage(120)
    expect(rc == 0, "sparker exited %d: %s" % (rc, p.stderr()[-2000:]))
    want = rts_sparks(p.stderr())
    note("+RTS -s: %s" % want)
    # Which sparks another capability converts depends on the machine's
    # load (on a busy 2-core machine the second capability may run none in
    # a short run); the dud and overflowed ones are the program's own doing.
    expect(want["created"] > 1000 and want["dud"] > 0 and
           want["converted"] + want["gcd"] + want["fizzled"] > 0,
           "too few outcomes to check against: %s" % want)
    return want


def check_equal(what, got, want):
    expect(got == want, "%s: %s, but +RTS -s says %s" % (what, got, want))


# ---- top

TOP_ROW = re.compile(r"^\s+(all|cap \d+)\s+" + r"\s+".join([r"(\d+)"] * 7) + r"\s+(\d+)\s*$",
                     re.M)


def top_rows(screen):
    """{'all' or 'cap N': {outcome: count, 'pool': n}} of top's sparks block
    (columns: created converted fizzled GC'd dud overflowed pool rate/s)."""
    out = {}
    for m in TOP_ROW.finditer(screen):
        v = list(map(int, m.groups()[1:]))
        out[m.group(1)] = {"created": v[0], "converted": v[1], "fizzled": v[2], "gcd": v[3],
                           "dud": v[4], "overflowed": v[5], "pool": v[6]}
    return out


@test(timeout=180)
def sparks_top(s):
    """top's sparks block, when the program exited: the totals are +RTS
    -s's SPARKS line, the capabilities' rows sum to them, and on GHC 9.2+
    the block fills while the program runs."""
    sock = s.path("top.sock")
    p = sparker(s, sock, rounds=0)
    t = Tmux(s, top_command(sock), width=120, height=40)
    if ghc_version() >= (9, 2):
        t.wait(r"^Sparks\s+created\s+converted", timeout=60,
               what="the sparks block while the program runs")
    else:
        # GHC 9.0 cannot flush: the counters come at exit.
        t.wait(r"^Sparks\s+no spark counters yet", timeout=30,
               what="the sparks block saying it has none yet")
    want = finished(p)
    t.wait(r"program exited", timeout=60, what='"program exited"')
    final = t.wait(r"^\s+all\s+%d\s" % want["created"], timeout=30,
                   what="the totals row with %d sparks" % want["created"]).string
    rows = top_rows(final)
    note("top: %s" % rows)
    expect("all" in rows, "no totals row:\n" + final)
    check_equal("top's totals", {k: rows["all"][k] for k in OUTCOMES}, want)
    caps = [r for name, r in rows.items() if name != "all"]
    expect(len(caps) == 2, "%d capability rows for -N2:\n%s" % (len(caps), final))
    check_equal("top's capability rows summed", {k: sum(r[k] for r in caps) for k in OUTCOMES},
                want)


# ---- serve's page and /metrics, report

def page_sparks(b):
    """The page's sparks table: {'all' or 'capability N': {outcome: count}}."""
    rows = b.js("""Array.from(document.querySelectorAll('#spark-table tbody tr')).map(function (r) {
      return [r.dataset.series, Array.from(r.querySelectorAll('td.v')).map(function (d) {
        return +d.dataset.value; })];
    })""") or []
    # Columns: created converted fizzled GC'd dud overflowed pool rate.
    names = ("created", "converted", "fizzled", "gcd", "dud", "overflowed", "pool")
    return {name: dict(zip(names, v)) for name, v in rows}


def judge_page_sparks(b, what, want, shots):
    got = page_sparks(b)
    note("%s: %s" % (what, got))
    expect("all" in got, "%s: no totals row in the sparks table" % what)
    check_equal("%s's totals" % what, {k: got["all"][k] for k in OUTCOMES}, want)
    caps = [r for name, r in got.items() if name != "all"]
    expect(len(caps) == 2, "%s: %d capability rows for -N2" % (what, len(caps)))
    check_equal("%s's capability rows summed" % what,
                {k: sum(r[k] for r in caps) for k in OUTCOMES}, want)
    # The charts show the line of the capability that made the sparks (the
    # other's pool stays at 0, under it): its legend colour in the plot.
    busy = max((name for name in got if name != "all"), key=lambda n: got[n]["created"])
    colour = rgb(b.js("getComputedStyle(document.querySelector("
                      "'#spark-table tr[data-series=\"%s\"] .swatch')).backgroundColor" % busy))
    b.js("document.getElementById('sparks').scrollIntoView()")
    b.screenshot(shots + ".png")
    for chart in ("spark-rate-chart", "spark-pool-chart"):
        rows = int(b.js("+document.getElementById('%s').dataset.rows" % chart) or 0)
        expect(rows > 2, "%s: %s has %d points" % (what, chart, rows))
        img = shot(b, "%s-%s.png" % (shots, chart), plot_clip(b, chart))
        share = colour_shares(img, [colour], tol=24)[colour]
        note("%s %s: %d points, %.2f %% of the plot in the colour of %s (%s)"
             % (what, chart, rows, 100 * share, busy, colour))
        if chart == "spark-pool-chart":
            # A busy machine may run every spark before a counters event
            # sees one in the pool: then the line lies on the axis.
            most = json.loads(b.js("document.getElementById('spark-pool-chart')"
                                   ".dataset.poolMax") or "[]")
            cap = int(busy.split()[-1])
            note("%s: the most in each capability's pool: %s" % (what, most))
            if cap < len(most) and most[cap] == 0:
                continue
        expect(share >= 0.001, "%s: %s shows no line of %s, which made the sparks (%.3f %% of "
               "its pixels in %s)" % (what, chart, busy, 100 * share, colour))


@test(timeout=240)
def sparks_page_and_report(s):
    """serve's page shows the sparks (live on GHC 9.2+), and when the
    program exited its table, serve's /metrics and report's file of the
    recording give +RTS -s's SPARKS figures; screenshots show each
    capability's rate and pool. A program without sparks gets "no sparks",
    no charts."""
    need_chromium()
    sock = s.path("page.sock")
    p = sparker(s, sock, rounds=0)
    srv, url = start_serve(s, sock, extra=["--record", s.path("page.eventlog")])
    b = Browser(s, width=1280, height=1600)
    b.goto(url)
    if ghc_version() >= (9, 2):
        b.wait_js("document.getElementById('sparks-note').dataset.state === 'sparks' && "
                  "document.getElementById('state').textContent === 'connected'", timeout=60,
                  what="sparks on the page while the program runs")
    want = finished(p)
    b.wait_js("document.getElementById('state').textContent === 'program exited'", timeout=60,
              what="the exit")
    b.wait_js("(function () {"
              " var r = document.querySelector('#spark-table tr[data-series=all] td.v');"
              " return r && +r.dataset.value === %d; })()" % want["created"], timeout=30,
              what="the totals row with %d sparks" % want["created"])
    shots = os.path.join(harness.BUILD, "sparks-page")
    judge_page_sparks(b, "serve's page", want, shots)
    expect(not b.errors(), "console errors: %s" % b.errors()[:5])

    # serve's /metrics: the same program's counters.
    port = int(re.search(r":(\d+)/", url).group(1))
    sm = samples(scrape(port))
    check_equal("serve's /metrics", {k: value(sm, "ghc_sparks_total", outcome=k) for k in OUTCOMES},
                {k: float(v) for k, v in want.items()})

    # report of serve's recording of the same run.
    srv.signal(2)
    srv.wait(30)
    open_report(s, b, s.path("page.eventlog"), "report")
    judge_page_sparks(b, "report", want, os.path.join(harness.BUILD, "sparks-report"))

    # A program without sparks (-N1, no par): a note, no charts.
    plain = s.path("plain.sock")
    q = Program(s, "fibber-c-main", ["20"], unix=plain, stdin=False, wait=True)
    q.wait_socket(plain)  # a busy machine may start the program late
    rec = s.path("plain.eventlog")
    rc, _, err = Cmd(s, ["record", "unix:" + plain, "-o", rec]).wait(120)
    expect(rc == 0, "record: %d %s" % (rc, err))
    q.wait_rusage()
    open_report(s, b, rec, "plain")
    state = b.js("document.getElementById('sparks-note').dataset.state")
    note_text = b.js("document.getElementById('sparks-note').textContent")
    hidden = b.js("document.getElementById('sparks-body').hidden")
    note("no sparks: %s, %r, charts hidden %s" % (state, note_text, hidden))
    expect(state == "no-sparks" and "no sparks" in note_text and hidden,
           "a program without sparks: state %r, note %r, charts hidden %r"
           % (state, note_text, hidden))


# ---- metrics, and the spark events

@test(timeout=180)
def sparks_metrics(s):
    """The metrics exporter's ghc_sparks_total{outcome} are +RTS -s's
    SPARKS figures for the run."""
    sock = s.path("m.sock")
    exporter, port = start_metrics(s, "unix:" + sock)
    p = sparker(s, sock)
    want = finished(p)
    src = "unix:" + sock
    _, sm = wait_for(port, "the final spark counters",
                     lambda sm: value(sm, "eventlog_socket_connected", source=src) == 0 and
                     value(sm, "ghc_sparks_total", source=src, outcome="created") is not None)
    got = {k: value(sm, "ghc_sparks_total", source=src, pid=p.proc.pid, outcome=k)
           for k in OUTCOMES}
    check_equal("metrics' ghc_sparks_total", got, {k: float(v) for k, v in want.items()})


@test(timeout=180)
def sparks_events(s):
    """With +RTS -lf (an event per spark) the report's state counts the
    spark events per kind, and they agree with the counters and +RTS -s:
    create + dud + overflow = created, run + steal = converted, and fizzle,
    gc, dud, overflow each their outcome."""
    sock = s.path("e.sock")
    p = sparker(s, sock, rounds=10, rts=("-lf",))
    rec = s.path("e.eventlog")
    rc, _, err = Cmd(s, ["record", "unix:" + sock, "-o", rec]).wait(120)
    expect(rc == 0, "record: %d %s" % (rc, err))
    want = finished(p)
    out = s.path("e.html")
    rc, _, err = Cmd(s, ["report", rec, "-o", out]).wait(120)
    expect(rc == 0, "report: %d %s" % (rc, err))
    with open(out) as f:
        m = re.search(r'<script[^>]*id="es-data"[^>]*>(.*?)</script>', f.read(), re.S)
    expect(m is not None, "no state in the report")
    sp = json.loads(m.group(1)).get("sparks")
    expect(sp is not None and sp["events"], "no spark events in the report's state: %r" % sp)
    # v: created, dud, overflowed, converted, gcd, fizzled; ev: create,
    # dud, overflow, run, steal, fizzle, gc.
    v, ev = sp["v"], sp["ev"]
    note("counters %s, events %s" % (v, ev))
    check_equal("the counters", dict(zip(("created", "dud", "overflowed", "converted", "gcd",
                                          "fizzled"), v)), want)
    check_equal("the spark events", {"created": ev[0] + ev[1] + ev[2], "dud": ev[1],
                                     "overflowed": ev[2], "converted": ev[3] + ev[4],
                                     "fizzled": ev[5], "gcd": ev[6]}, want)


@test(timeout=180)
def sparks_top_fits_80_columns(s):
    """At 80x24, top's sparks line is whole: the "no spark counters yet"
    sentence ends with its closing parenthesis while the program runs (on
    GHC 9.0, whose counters come at exit), and the table's heading reaches
    its last column, rate/s (before, both were cut mid-word)."""
    sock = s.path("narrow.sock")
    p = sparker(s, sock, rounds=0)
    t = Tmux(s, top_command(sock), width=80, height=24)
    if ghc_version() < (9, 2):
        m = t.wait(r"^Sparks\s+no spark counters yet.*$", timeout=30, what="the sparks line")
        note("running: %r" % m.group(0).rstrip())
        expect(m.group(0).rstrip().endswith(")"), "the sparks line is cut: %r" % m.group(0))
    else:
        t.wait(r"^Sparks\s+created\s", timeout=60, what="the sparks heading while running")
    finished(p)
    t.wait(r"program exited", timeout=60, what='"program exited"')
    m = t.wait(r"^Sparks\s+created\s.*$", timeout=30, what="the sparks heading")
    note("exited: %r" % m.group(0).rstrip())
    expect(m.group(0).rstrip().endswith("rate/s"), "the sparks heading is cut: %r" % m.group(0))
    lines = t.screen().splitlines()
    expect(all(len(line) <= 80 for line in lines), "a line wider than 80")
