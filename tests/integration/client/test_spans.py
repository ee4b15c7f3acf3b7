# SPDX-License-Identifier: BSD-3-Clause
"""Spans: the program's own intervals, from its "START label" / "STOP
label" messages (ghc-events-analyse's convention), matched within their
Haskell thread. `table spans` is judged against ghc-events' reading of the
same recording (the running thread of each capability, the messages and
their timestamps), paired here independently of the client's code, and
against the sleeps the program made (threadDelay: a lower bound)."""

import csv
import json
import math
import os
import re
import subprocess
import time

import harness
from cdp import Browser
from harness import check_stream, expect, ghc_version, note, serve, test
from test_metrics import prom_query, start_metrics, start_prometheus, value, wait_for
from test_profile import live_needs_flush
from test_table import record, run_client
from test_web import need_chromium


def ghc_events_spans(path, failed=None, unmatched=None):
    """The spans ghc-events' reading gives: [(label, thread, cap, start ns,
    end ns, parent)], each START paired with the next STOP of its label in
    the thread running on the message's capability. With a set `failed`,
    the (thread, start ns) of each span a FAIL of its thread marked goes
    into it; with a list `unmatched`, each STOP no START of its thread
    opened."""
    out = subprocess.run(["ghc-events", "show", path], capture_output=True, text=True,
                         timeout=120).stdout
    running, open_spans, spans = {}, {}, []
    for line in out.splitlines():
        m = re.match(r"\s*(\d+): cap (\d+): (.*)$", line)
        if not m:
            continue
        t, cap, what = int(m.group(1)), int(m.group(2)), m.group(3)
        r = re.match(r"running thread (\d+)$", what)
        if r:
            running[cap] = int(r.group(1))
            continue
        r = re.match(r"stopping thread (\d+) ", what)
        if r and running.get(cap) == int(r.group(1)):
            running[cap] = None
            continue
        r = re.match(r"(?:marker: )?(START|STOP|FAIL) (.+)$", what)
        if not r:
            continue
        thread = running.get(cap)
        stack = open_spans.setdefault(thread, [])
        if r.group(1) == "START":
            stack.append((r.group(2), t, cap))
            continue
        if r.group(1) == "FAIL":
            mine = [x for x in stack if x[0] == r.group(2)]
            if mine and failed is not None:
                failed.add((thread, mine[-1][1]))
            continue
        for i in range(len(stack) - 1, -1, -1):
            if stack[i][0] == r.group(2):
                label, start, scap = stack.pop(i)
                parent = stack[i - 1][0] if i > 0 else ""
                spans.append((label, thread, scap, start, t, parent))
                break
        else:
            if unmatched is not None:
                unmatched.append((r.group(2), thread, t))
    return spans


def table_spans(s, log, name):
    """`table spans` of a recording: its rows, and each as ghc_events_spans
    gives a span (label, thread, capability, start ns, end ns, parent)."""
    out = s.path(name + ".csv")
    res = run_client("table", "spans", log, "--csv", out)
    expect(res.returncode == 0, "table spans exited %d: %s" % (res.returncode, res.stderr))
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    return rows, sorted((r["label"], int(r["thread"]), int(r["capability"]),
                         round(float(r["start_s"]) * 1e9),
                         round((float(r["start_s"]) + float(r["duration_s"])) * 1e9), r["parent"])
                        for r in rows)


@test
def table_spans_are_the_programs_intervals(s):
    """Four threads at once each mark a span "req" of 40 ms with
    "req.inner", its second half, inside: `table spans` gives eight rows,
    each the span ghc-events' reading pairs (label, thread, capability,
    start and duration to the nanosecond, parent), four threads apart, each
    "req" at least 40 ms and each inner span at least 20 ms."""
    log, _ = record(s, "spans", ["spans 4 40 req"], rts=(), busy=False)
    rows, got = table_spans(s, log, "spans")
    want = ghc_events_spans(log)
    note("%d rows; ghc-events pairs %d; %s" % (len(rows), len(want), ", ".join(
        "%s %.1f ms" % (r["label"], 1000 * float(r["duration_s"])) for r in rows[:4])))
    expect(len(rows) == 8 and all(r["failed"] == "false" for r in rows),
           "eight spans, none failed: %r" % rows[:3])
    expect(got == sorted(want), "the rows are not ghc-events' spans: %r / %r"
           % (got[:2], sorted(want)[:2]))
    reqs = [r for r in rows if r["label"] == "req"]
    inner = [r for r in rows if r["label"] == "req.inner"]
    expect(len({r["thread"] for r in reqs}) == 4, "four threads: %r" % [r["thread"] for r in reqs])
    expect(all(float(r["duration_s"]) >= 0.040 for r in reqs)
           and all(float(r["duration_s"]) >= 0.020 and r["parent"] == "req" for r in inner),
           "durations under the sleeps: %r" % [(r["label"], r["duration_s"]) for r in rows])


def ghc_events_c_spans(path):
    """The spans of C code ghc-events' reading gives: [(label, OS thread,
    start ns, end ns, parent, failed)], the library's notices "span in OS
    thread T: START label" paired with the next STOP of the label in T."""
    out = subprocess.run(["ghc-events", "show", path], capture_output=True, text=True,
                         timeout=120).stdout
    open_spans, spans = {}, []
    for line in out.splitlines():
        m = re.match(r"\s*(\d+): (?:cap \d+: )?eventlog-socket: span in OS thread (\d+): "
                     r"(START|STOP|FAIL) (.+)$", line)
        if not m:
            continue
        t, tid, word, label = int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)
        stack = open_spans.setdefault(tid, [])
        if word == "START":
            stack.append([label, t, False])
            continue
        k = max((i for i, x in enumerate(stack) if x[0] == label), default=None)
        expect(k is not None, "a %s of %s with no START in OS thread %d" % (word, label, tid))
        if word == "FAIL":
            stack[k][2] = True
            continue
        label, start, failed = stack.pop(k)
        spans.append((label, tid, start, t, stack[k - 1][0] if k > 0 else "", failed))
    return spans


@test(timeout=180)
def c_spans_are_paired_in_their_os_thread(s):
    """Four OS threads each mark a span of C code "creq" of 40 ms with
    "creq.inner" in its second half (eventlog_socket_span_begin/_end), the
    second and fourth failed: `table spans` gives the eight spans
    ghc-events' reading of the library's notices pairs (to the nanosecond,
    parent, failed, OS thread), four OS threads apart, as long as their
    sleeps; the report counts them per label; a label that is empty, too
    long or two lines is refused with EINVAL, one of 200 bytes is not."""
    p, connect = serve(s, "cspans", [])
    c = connect()
    answer = p.query("c-spans 4 40 creq 2")
    expect(answer == "ok", "c-spans: %s" % answer)
    checks = {"-": -22, "x" * 201: -22, "a\\nb": -22, "y" * 200: 0}
    for word, want in checks.items():
        got = p.query("c-span-check " + word)
        expect(got == "ok %d" % want, "label %r...: %s, want %d" % (word[:8], got, want))
    p.cmd("quit")
    p.finish()
    log = s.path("cspans.eventlog")
    with open(log, "wb") as f:
        f.write(c.wait_eof())
    want = sorted(x for x in ghc_events_c_spans(log) if x[0].startswith("creq"))
    out = s.path("cspans.csv")
    res = run_client("table", "spans", log, "--csv", out)
    expect(res.returncode == 0, "table spans exited %d: %s" % (res.returncode, res.stderr))
    with open(out, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["label"].startswith("creq")]
    got = sorted((r["label"], int(r["os_thread"]), round(float(r["start_s"]) * 1e9),
                  round((float(r["start_s"]) + float(r["duration_s"])) * 1e9), r["parent"],
                  r["failed"] == "true") for r in rows)
    note("%d rows of C spans; ghc-events pairs %d; %s" % (len(rows), len(want), ", ".join(
        "%s %.1f ms" % (r["label"], 1000 * float(r["duration_s"])) for r in rows[:4])))
    expect(len(got) == 8 and got == want, "the rows are not ghc-events' pairs: %r / %r"
           % (got[:2], want[:2]))
    reqs = [r for r in rows if r["label"] == "creq"]
    expect(len({r["os_thread"] for r in reqs}) == 4 and all(r["thread"] == "" for r in rows),
           "four OS threads, no Haskell thread: %r" % [(r["thread"], r["os_thread"]) for r in rows])
    expect(sum(r["failed"] == "true" for r in reqs) == 2
           and all(r["failed"] == "false" for r in rows if r["label"] != "creq"),
           "two failed: %r" % [(r["label"], r["failed"]) for r in rows])
    expect(all(float(r["duration_s"]) >= 0.040 for r in reqs)
           and all(float(r["duration_s"]) >= 0.020 and r["parent"] == "creq"
                   for r in rows if r["label"] == "creq.inner"),
           "durations under the sleeps: %r" % [(r["label"], r["duration_s"]) for r in rows])
    html = s.path("cspans.html")
    res = run_client("report", log, "-o", html)
    expect(res.returncode == 0, "report failed: %s" % res.stderr)
    with open(html) as f:
        m = re.search(r'<script[^>]*id="es-data"[^>]*>(.*?)</script>', f.read(), re.S)
    # [label, count, total_s, mean_s, p50_s, p90_s, p99_s, max_s, failed, ...]
    labels = {x[0]: x for x in json.loads(m.group(1))["spans"]["labels"]}
    expect(labels.get("creq", [0] * 9)[1] == 4 and labels["creq"][8] == 2
           and labels.get("creq.inner", [0] * 9)[1] == 4,
           "the report's spans: %r" % sorted(labels.items())[:2])


@test(timeout=240)
def metrics_span_histograms_reach_prometheus(s):
    """`metrics` exports a histogram of each label's span durations whose
    buckets, sum and count are what ghc-events' reading of a recording of
    the same stream gives; a real Prometheus scrapes it and answers
    histogram_quantile(0.99, ...) within the bucket of the true p99."""
    live_needs_flush()
    p, connect = serve(s, "sp", [])
    rec = connect()  # the recording (it releases the program)
    sock = s.path("sp.sock")
    _, port = start_metrics(s, "unix:" + sock)
    wait_for(port, "the connection", lambda sm: value(sm, "eventlog_socket_connected") == 1)
    prom = start_prometheus(s, port)
    expect(prom is not None, "prometheus is not installed")
    for _ in range(3):
        p.cmd("spans 4 40 req")
    p.cmd("quit")
    p.finish()
    check_stream(s, rec.wait_eof(), "sp")
    spans = ghc_events_spans(s.path("sp.eventlog"))
    durations = {}
    for label, _, _, start, end, _ in spans:
        durations.setdefault(label, []).append((end - start) / 1e9)
    expect(sorted(durations) == ["req", "req.inner"] and len(durations["req"]) == 12,
           "ghc-events pairs %r" % {k: len(v) for k, v in durations.items()})
    _, sm = wait_for(port, "12 spans of req",
                     lambda sm: value(sm, "ghc_span_duration_seconds_count", label="req") == 12,
                     timeout=30)
    for label, ds in durations.items():
        buckets = {dict(lab)["le"]: v for (n, lab), v in sm.items()
                   if n == "ghc_span_duration_seconds_bucket" and dict(lab)["label"] == label}
        for le, got in buckets.items():
            want = len(ds) if le == "+Inf" else sum(1 for d in ds if d <= float(le))
            expect(got == want, "%s le=%s: %s exported, ghc-events' spans give %d"
                   % (label, le, got, want))
        total = value(sm, "ghc_span_duration_seconds_sum", label=label)
        expect(abs(total - sum(ds)) < 1e-6, "%s: sum %s, ghc-events %f" % (label, total, sum(ds)))
        note("%s: %d spans, %d buckets, sum %.4f s" % (label, len(ds), len(buckets), total))
    bounds = sorted(float(dict(lab)["le"]) for (n, lab), _ in sm.items()
                    if n == "ghc_span_duration_seconds_bucket" and dict(lab)["label"] == "req"
                    and dict(lab)["le"] != "+Inf")
    ds = sorted(durations["req"])
    p99 = ds[min(len(ds) - 1, int(0.99 * len(ds)))]
    upper = next(b for b in bounds if p99 <= b)
    lower = max([b for b in bounds if b < upper] or [0])
    query = 'histogram_quantile(0.99, sum by (le) (ghc_span_duration_seconds_bucket{label="req"}))'
    deadline = time.monotonic() + 60
    while True:
        got = prom_query(prom, query)
        if got and got[0]["value"][1] not in ("NaN",):
            break
        expect(time.monotonic() < deadline, "Prometheus never answered %s: %r" % (query, got))
        time.sleep(0.5)
    q = float(got[0]["value"][1])
    note("p99 of req: %.4f s; Prometheus says %.4f (bucket %g..%g)" % (p99, q, lower, upper))
    expect(lower <= q <= upper, "Prometheus's p99 %.4f is not in the bucket (%g, %g] of %.4f"
           % (q, lower, upper, p99))


@test(timeout=180)
def with_span_marks_failures(s):
    """A program started from Haskell runs GHC.Eventlog.Socket.withSpan in
    six threads at once, each around a 40 ms sleep, every third action
    throwing: `table spans` gives the six spans ghc-events' reading pairs,
    each at least 40 ms, exactly those two marked failed whose thread
    posted FAIL (withSpan's exception path); the report's Spans row and
    `metrics`' ghc_span_failures_total count two failures of six."""
    sock = s.path("ws.sock")
    p = harness.Program(s, "hsstart", ["env"], unix=sock, env={"GHC_EVENTLOG_WAIT": "1"})
    p.wait_socket(sock)
    c = harness.Client(s, unix=sock)  # releases the start
    expect(p.readline(timeout=30) == "started", "hsstart did not start: %s" % p.stderr())
    _, port = start_metrics(s, "unix:" + sock)
    wait_for(port, "the exporter's connection",
             lambda sm: value(sm, "eventlog_socket_connected") == 1)
    answer = p.query("withspan 6 40 req 3")
    expect(answer == "ok", "withspan answered %r" % answer)
    p.finish()  # its stdin closed: main returns
    log = s.path("ws.eventlog")
    with open(log, "wb") as f:
        f.write(c.wait_eof())
    failed = set()
    want = ghc_events_spans(log, failed)
    rows, got = table_spans(s, log, "ws")
    note("%d spans, failed: %s" % (len(rows), ", ".join(
        "thread %s %.1f ms" % (r["thread"], 1000 * float(r["duration_s"]))
        for r in rows if r["failed"] == "true")))
    expect(len(rows) == 6 and got == sorted(want), "the rows are not ghc-events' spans: %r / %r"
           % (got[:2], sorted(want)[:2]))
    expect(all(float(r["duration_s"]) >= 0.040 for r in rows),
           "a span shorter than its sleep: %r" % [r["duration_s"] for r in rows])
    marked = {(int(r["thread"]), round(float(r["start_s"]) * 1e9)) for r in rows
              if r["failed"] == "true"}
    expect(len(failed) == 2 and marked == failed,
           "failed rows %r; ghc-events' FAILs mark %r" % (sorted(marked), sorted(failed)))
    html = s.path("ws.html")
    res = run_client("report", log, "-o", html)
    expect(res.returncode == 0, "report failed: %s" % res.stderr)
    with open(html) as f:
        m = re.search(r'<script[^>]*id="es-data"[^>]*>(.*?)</script>', f.read(), re.S)
    labels = json.loads(m.group(1))["spans"]["labels"]
    expect(len(labels) == 1 and labels[0][0] == "req" and labels[0][1] == 6 and labels[0][8] == 2,
           "the report's spans: %r" % labels)
    _, sm = wait_for(port, "two failures of req",
                     lambda sm: value(sm, "ghc_span_failures_total", label="req") == 2
                     and value(sm, "ghc_span_duration_seconds_count", label="req") == 6,
                     timeout=30)


@test(timeout=180)
def compare_spans_per_label(s):
    """`compare A B --spans --csv`: each label's count, p50, p99 and max in
    both runs as ghc-events' reading of each recording gives them (counts
    and maxima exact, percentiles within 1/128), a label of one run with
    its note; the text table without flags has the same section; a run
    without spans is refused with --spans, saying how to mark them."""
    a, _ = record(s, "a", ["spans 4 20 req", "spans 4 20 req"], rts=(), busy=False)
    b, _ = record(s, "b", ["spans 4 60 req", "spans 4 60 req", "spans 2 10 extra"], rts=(),
                  busy=False)
    truth = []
    for log in (a, b):
        d = {}
        for label, _, _, start, end, _ in ghc_events_spans(log):
            d.setdefault(label, []).append((end - start) / 1e9)
        truth.append(d)
    out = s.path("cmp.csv")
    res = run_client("compare", a, b, "--spans", "--csv", out)
    expect(res.returncode == 0, "compare --spans: %d %s" % (res.returncode, res.stderr))
    with open(out, newline="") as f:
        rows = {r["label"]: r for r in csv.DictReader(f)}
    expect(sorted(rows) == sorted(set(truth[0]) | set(truth[1])),
           "labels %r, ghc-events %r" % (sorted(rows), [sorted(t) for t in truth]))
    for label, r in rows.items():
        for k, run in ((0, "a"), (1, "b")):
            ds = truth[k].get(label, [])
            expect(int(r["count_" + run]) == len(ds), "%s: count_%s %s, ghc-events %d"
                   % (label, run, r["count_" + run], len(ds)))
            if not ds:
                other = "B" if run == "a" else "A"
                expect(r["p99_%s_s" % run] == "" and r["note"] == "only in " + other,
                       "%s: not in %s, yet %r" % (label, run, r))
                continue
            expect(abs(float(r["max_%s_s" % run]) - max(ds)) < 1e-9, "%s: max" % label)
            for q in (50, 99):
                want = nearest_rank(ds, q / 100)
                got = float(r["p%d_%s_s" % (q, run)])
                expect(abs(got - want) <= want / 128 + 1e-9, "%s: p%d_%s %f, true %f"
                       % (label, q, run, got, want))
    note("req p99 %s s -> %s s; extra: %s"
         % (rows["req"]["p99_a_s"], rows["req"]["p99_b_s"], rows["extra"]["note"]))
    res = run_client("compare", a, b)
    expect(res.returncode == 0 and "Spans: 16 in A, 20 in B" in res.stdout
           and re.search(r"^req\s+8\s+8\s", res.stdout, re.M),
           "compare's text: %d %s %s" % (res.returncode, res.stdout, res.stderr))
    plain, _ = record(s, "plain", ["marker nothing"], rts=(), busy=False)
    res = run_client("compare", a, plain, "--spans")
    expect(res.returncode == 1 and "no spans in the stream" in res.stderr
           and "withSpan" in res.stderr,
           "a run without spans: %d %s" % (res.returncode, res.stderr))


@test(timeout=180)
def joined_mid_span(s):
    """A client that joins while three threads' spans "req" (3 s) are
    open: its table gives exactly the spans ghc-events pairs in its own
    stream, each one of the program's spans as a client there from the
    start saw it (never a STOP paired with another thread's START), and
    its report counts the STOPs whose START it never saw. On GHC 9.2+
    (streamed as they happen) the "req" STARTs came before it joined."""
    p, connect = serve(s, "mid", [])
    sock = s.path("mid.sock")
    full = connect()
    p.proc.stdin.write(b"spans 3 3000 req\n")
    p.proc.stdin.flush()
    # A second for the STARTs to be streamed (flushed every 100 ms on 9.2+,
    # later on a loaded machine); the inner spans begin at 1.5 s.
    time.sleep(1.0)
    late = harness.Client(s, unix=sock)
    expect(p.readline(timeout=60) == "ok", "the probe's spans")
    p.cmd("quit")
    p.finish()
    paths = []
    for name, c in (("full", full), ("late", late)):
        paths.append(s.path(name + ".eventlog"))
        with open(paths[-1], "wb") as f:
            f.write(c.wait_eof())
    everything = {(x[0], x[1], x[3], x[4]) for x in ghc_events_spans(paths[0])}
    lost = []
    want = ghc_events_spans(paths[1], unmatched=lost)
    rows, got = table_spans(s, paths[1], "late")
    note("the late client: %d spans, %d STOPs without their START; the first client: %d spans"
         % (len(rows), len(lost), len(everything)))
    expect(got == sorted(want), "the late client's rows are not ghc-events' pairs: %r / %r"
           % (got, sorted(want)))
    expect(all((x[0], x[1], x[3], x[4]) in everything for x in got),
           "a span the program never had: %r" % got)
    html = s.path("late.html")
    res = run_client("report", paths[1], "-o", html)
    expect(res.returncode == 0, "report failed: %s" % res.stderr)
    with open(html) as f:
        m = re.search(r'<script[^>]*id="es-data"[^>]*>(.*?)</script>', f.read(), re.S)
    said = json.loads(m.group(1)).get("spans", {}).get("unmatched", 0)
    expect(said == len(lost), "the report counts %d STOPs without a START; ghc-events %d"
           % (said, len(lost)))
    if ghc_version() >= (9, 2):
        expect(any(x[0] == "req" for x in lost), "the late client saw every START: %r" % lost)


@test(timeout=180)
def report_two_runs_spans(s):
    """`report A B` of two runs with spans: its Spans table has
    compare --spans --csv's labels, counts and p99s, p99's ratio B/A
    in red where B is slower, and the page has no console
    error (screenshot in the build directory)."""
    need_chromium()
    a, _ = record(s, "a", ["spans 4 20 req"], rts=(), busy=False)
    b, _ = record(s, "b", ["spans 4 300 req"], rts=(), busy=False)
    out = s.path("cmp.csv")
    res = run_client("compare", a, b, "--spans", "--csv", out)
    expect(res.returncode == 0, "compare --spans: %s" % res.stderr)
    with open(out, newline="") as f:
        want = {r["label"]: r for r in csv.DictReader(f)}
    html = s.path("two.html")
    res = run_client("report", a, b, "-o", html)
    expect(res.returncode == 0, "report A B: %d %s" % (res.returncode, res.stderr))
    br = Browser(s, width=1280, height=900)
    br.goto("file://" + html)
    br.wait_js("!document.getElementById('spans').hidden", what="the spans section")
    rows = br.js("Array.from(document.querySelectorAll('#spans-table tbody tr')).map(function "
                 "(tr) { return [tr.cells[0].textContent, +tr.cells[1].dataset.value, "
                 "+tr.cells[2].dataset.value, +tr.cells[5].dataset.value, "
                 "+tr.cells[6].dataset.value, +tr.cells[7].dataset.value, "
                 "getComputedStyle(tr.cells[7]).color]; })")
    note("page: %r" % rows)
    expect(sorted(r[0] for r in rows) == sorted(want), "labels %r / %r" % (rows, sorted(want)))
    for label, ca, cb, p99a, p99b, ratio, cls in rows:
        w = want[label]
        expect(ca == int(w["count_a"]) and cb == int(w["count_b"])
               and abs(p99a - float(w["p99_a_s"])) < 1e-9
               and abs(p99b - float(w["p99_b_s"])) < 1e-9,
               "%s: the page %r, compare %r" % (label, (ca, cb, p99a, p99b), w))
        # B's sleeps are fifteen times A's. p99 of four spans is their
        # longest, and a loaded machine has stretched one of A's 20 ms to
        # 65: B's 300 ms stay slower whatever the load adds to A.
        expect(abs(ratio - float(w["p99_b_s"]) / float(w["p99_a_s"])) < 1e-6 and ratio > 1.05
               and cls == "rgb(170, 51, 51)",
               "%s: p99 B/A %.2f, not red (%s)" % (label, ratio, cls))
    br.js("document.getElementById('spans').scrollIntoView()")
    br.screenshot(os.path.join(harness.BUILD, "web-spans-two-runs.png"))
    expect(not br.errors(), "console errors: %r" % br.errors()[:5])


def ghc_events_otel(s, path):
    """opentelemetry-haskell's binary spans as ghc-events' reading gives
    them (through the checker: `ghc-events show` cannot print a payload
    that is not UTF-8): {serial: (label, start ns, end ns, failed)}, from
    the payloads "OT" 3 TYPE with their serial (little-endian), paired by
    serial."""
    with open(path, "rb") as f:
        summ = check_stream(s, f.read(), os.path.basename(path) + "-check")
    spans = {}
    for t, payload in summ.binary:
        if payload[:3] != b"OT\x03":
            continue
        kind, serial = payload[3], int.from_bytes(payload[4:12], "little")
        label, start, end, failed = spans.get(serial, ("", 0, 0, False))
        if kind == 1:
            spans[serial] = (payload[12:].decode(), t, end, failed)
        elif kind == 2:
            spans[serial] = (label, start, t, failed)
        elif kind == 3 and payload[20:] == b"errortrue":
            spans[serial] = (label, start, end, True)
    return spans


@test
def opentelemetry_spans_are_read(s):
    """A program posting spans as opentelemetry-haskell does (its binary
    messages: begin and end by serial, the even ones ended from another
    thread, an "error" tag "true" on every third): `table spans` gives
    each span ghc-events' reading of the payloads pairs, its duration to
    the nanosecond, the failed ones marked, and none unmatched."""
    log, _ = record(s, "ot", ["otel-spans 6 30 handler 3"], rts=(), busy=False)
    want = ghc_events_otel(s, log)
    out = s.path("ot.csv")
    res = run_client("table", "spans", log, "--csv", out)
    expect(res.returncode == 0, "table spans exited %d: %s" % (res.returncode, res.stderr))
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    got = sorted((r["label"], round(float(r["start_s"]) * 1e9),
                  round((float(r["start_s"]) + float(r["duration_s"])) * 1e9),
                  r["failed"] == "true") for r in rows)
    note("%d spans; failed: %d; ghc-events pairs %d" % (
        len(rows), sum(1 for r in rows if r["failed"] == "true"), len(want)))
    expect(len(want) == 6 and got == sorted(want.values()),
           "the rows are not the program's spans: %r / %r" % (got[:2], sorted(want.values())[:2]))
    expect(all(float(r["duration_s"]) >= 0.030 for r in rows), "a span under its sleep")


def nearest_rank(values, q):
    v = sorted(values)
    return v[max(0, min(len(v) - 1, -(-int(q * len(v) * 1000000) // 1000000) - 1))]


@test
def report_shows_each_labels_spans(s):
    """`report` of a run that marked spans: the page's Spans table gives
    each label's count, total, mean and max as ghc-events' reading of the
    recording pairs them, and p50, p90 and p99 within 1/128 of the true
    (nearest-rank) quantiles; its histogram of durations draws every span,
    each in the bin its duration by ghc-events falls in; the
    capabilities' time axis has a lane per label with every span painted
    where it ran."""
    need_chromium()
    log, _ = record(s, "spans", ["spans 4 40 req", "spans 4 10 req", "spans 4 80 req"],
                    rts=(), busy=False)
    durations = {}
    for label, _, _, start, end, _ in ghc_events_spans(log):
        durations.setdefault(label, []).append((end - start) / 1e9)
    out = s.path("spans.html")
    res = run_client("report", log, "-o", out)
    expect(res.returncode == 0, "report failed: %s" % res.stderr)
    b = Browser(s, width=1280, height=1400)
    b.goto("file://" + out)
    b.wait_js("!document.getElementById('spans-table').hidden", what="the spans table")
    rows = b.js("Array.from(document.querySelectorAll('#spans-table tbody tr')).map(function "
                "(tr) { return [tr.cells[0].textContent].concat([1, 2, 3, 4, 5, 6, 7].map("
                "function (k) { return +tr.cells[k].dataset.value; })); })")
    note("page: %r" % rows)
    expect(sorted(r[0] for r in rows) == sorted(durations), "labels %r, ghc-events %r"
           % ([r[0] for r in rows], sorted(durations)))
    for label, count, total, mean, p50, p90, p99, mx in rows:
        ds = durations[label]
        expect(count == len(ds) and abs(total - sum(ds)) < 1e-6 and abs(mean - sum(ds) / len(ds))
               < 1e-6 and abs(mx - max(ds)) < 1e-9,
               "%s: count %d total %f mean %f max %f; ghc-events %d %f %f %f"
               % (label, count, total, mean, mx, len(ds), sum(ds), sum(ds) / len(ds), max(ds)))
        for q, got in ((0.5, p50), (0.9, p90), (0.99, p99)):
            want = nearest_rank(ds, q)
            expect(abs(got - want) <= want / 128 + 1e-9, "%s: p%d %f, the true one %f"
                   % (label, round(100 * q), got, want))
    # Each label's durations drawn: its bins hold every span, the shortest
    # in the first and the longest in the last, as tall as their counts,
    # and each of ghc-events' durations in the bin the page's own edges
    # (log scale from the page's shortest to its longest) put it in. The
    # model bins a duration by its value within 1/128: one that close to
    # an edge between two bins is not judged. How many bins the runs of
    # 10, 40 and 80 ms (5, 20, 40 ms inner) fill is the machine's: at load
    # 20 a 5 ms sleep has taken 21 ms, and fallen in the 20 ms runs' bin.
    hists = b.js("JSON.parse(document.getElementById('es-data').textContent).spans.labels"
                 ".map(function (l) { return [l[0], l[9]]; })")
    hists = dict((label, h) for label, h in hists)
    for row, bars in zip(rows, b.js(
            "Array.from(document.querySelectorAll('#spans-table tbody tr')).map(function "
            "(tr) { return Array.from(tr.querySelectorAll('.bin')).map(function (x) { "
            "return [+x.dataset.count, x.getBoundingClientRect().height]; }); })")):
        most = max(c for c, _ in bars)
        expect(sum(c for c, _ in bars) == row[1] and bars[0][0] >= 1 and bars[-1][0] >= 1
               and all(abs(h - 22 * c / most) <= 1 for c, h in bars if c),
               "%s: the durations' bars %r" % (row[0], bars))
        lo, hi, counts = hists[row[0]]
        n = len(counts)
        expect(n == len(bars) and list(counts) == [c for c, _ in bars],
               "%s: the bars %r are not the page's data %r" % (row[0], bars, counts))
        ds = sorted(durations[row[0]])
        judged, wrong = 0, []
        for d in ds:
            # Where d falls on the bins' scale; within 1/100 of an edge
            # between two bins (the model's 1/128, with room): either is right.
            x = math.log(d / lo) / math.log(hi / lo) * n if hi > lo else 0
            edge = min(n - 1, max(1, round(x)))  # the nearest between two bins
            if hi > lo and abs(x - edge) < n / 100 / math.log(hi / lo):
                continue
            k = min(n - 1, max(0, int(math.floor(x))))
            judged += 1
            if counts[k] < 1:
                wrong.append((d, k))
            else:
                counts[k] -= 1
        note("%s: %d of %d durations judged against the page's bins" % (row[0], judged, len(ds)))
        expect(not wrong and judged >= 2,
               "%s: ghc-events' durations fall in bins the page left empty: %r; "
               "bins %r from %.6f to %.6f" % (row[0], wrong, [c for c, _ in bars], lo, hi))
    # The spans on the capabilities' time axis: a lane per label, each of
    # the 24 spans painted where its start and end fall on the strip.
    strip = b.js("(function () { var cv = document.getElementById('span-strip'); "
                 "var st = JSON.parse(document.getElementById('es-data').textContent); "
                 "var lanes = JSON.parse(cv.dataset.lanes), w = st.info.width, "
                 "nb = Math.max(st.tl.length, 1), ctx = cv.getContext('2d'); "
                 "return {lanes: lanes, painted: +cv.dataset.painted, row: "
                 "document.getElementById('span-row').hidden, hits: st.spans.recent.map("
                 "function (x) { var mid = (x[2] + x[3]) / 2 * 1e9 / w * cv.width / nb; "
                 "var px = ctx.getImageData(Math.floor(mid), lanes.indexOf(x[0]) * 14 + 7, 1, 1)"
                 ".data; return px[0] + px[1] + px[2] < 3 * 0xf4; }) }; })()")
    note("the strip: lanes %r, %d painted" % (strip["lanes"], strip["painted"]))
    expect(not strip["row"] and sorted(strip["lanes"]) == sorted(durations)
           and strip["painted"] == 24 and all(strip["hits"]) and len(strip["hits"]) == 24,
           "the spans' strip: %r" % strip)
    b.js("document.getElementById('caps').scrollIntoView()")
    b.screenshot(os.path.join(harness.BUILD, "web-spans-strip.png"))
    b.js("document.getElementById('spans').scrollIntoView()")
    b.screenshot(os.path.join(harness.BUILD, "web-spans-report.png"))
    expect(not b.errors(), "console errors: %r" % b.errors()[:5])
