# SPDX-License-Identifier: BSD-3-Clause
"""`eventlog-socket table`: the eventlog as CSV tables a dataframe reads in
one call (`compare` and bad input: test_compare.py). Judged against
what nobody here wrote: ghc-events
(`ghc-events show`, and the checker's counts) on the same recording, the
RTS's own .hp file of the same run, and Python's csv module (and pandas,
when Debian's python3-pandas is installed) reading the CSV."""

import csv
import os
import re
import subprocess

import harness
from harness import Program, check_stream, expect, note, serve, test
from client_cmd import Cmd


def client_path():
    return os.path.abspath(os.path.join(harness.BUILD, "eventlog-socket"))


def run_client(*args, timeout=120):
    return subprocess.run([client_path(), *args], capture_output=True, text=True,
                          timeout=timeout)


# Debian's python3 (python3-pandas, scripts/ensure-deps.sh); the first
# python3 on PATH may lack it.
DEBIAN_PYTHON = "/usr/bin/python3"
HAVE_PANDAS = []  # [whether it has pandas], once asked


def pandas_run(code, cwd=None):
    """Run `code` with Debian's python3 and pandas; its stdout, or None when
    pandas is not installed."""
    if HAVE_PANDAS == []:
        HAVE_PANDAS.append(os.path.exists(DEBIAN_PYTHON) and subprocess.run(
            [DEBIAN_PYTHON, "-c", "import pandas"], capture_output=True).returncode == 0)
    if not HAVE_PANDAS[0]:
        return None
    res = subprocess.run([DEBIAN_PYTHON, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=cwd)
    expect(res.returncode == 0, "pandas: %s" % res.stderr[-800:])
    return res.stdout


def read_csv(path, header):
    """The rows of a CSV file as dicts, read in one call by the csv module,
    after checking its header row; and by pandas.read_csv in one call, when
    Debian's python3-pandas is installed, to the same shape."""
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
    expect(reader.fieldnames == header.split(","),
           "%s: header row %r, expected %r" % (path, reader.fieldnames, header))
    out = pandas_run("import pandas, sys; df = pandas.read_csv(sys.argv[1]); "
                     "print(len(df)); print(','.join(df.columns))".replace("sys.argv[1]",
                                                                           repr(path)))
    if out is None:
        note("pandas is not installed (python3-pandas): the csv module only")
    else:
        n, cols = out.splitlines()
        expect(int(n) == len(rows) and cols == header,
               "pandas reads %s rows, columns %r from %s" % (n, cols, path))
    return rows


def table(s, kind, source, name=None):
    """`table KIND SOURCE --csv FILE`; returns the rows (dicts)."""
    out = s.path("%s.csv" % (name or kind))
    res = run_client("table", kind, source, "--csv", out)
    expect(res.returncode == 0, "table %s exited %d: %s" % (kind, res.returncode, res.stderr))
    return res, out


def ns(cell):
    """time_s (nine decimals) back to nanoseconds, exactly."""
    whole, frac = cell.split(".")
    expect(len(frac) == 9, "time_s %r does not have nine decimals" % cell)
    return int(whole) * 1000000000 + int(frac)


def cap(cell):
    return None if cell == "" else int(cell)


def ghc_events(path):
    """Every event as `ghc-events show` prints it: [(time, cap or None, text)]."""
    res = subprocess.run(["ghc-events", "show", path], capture_output=True, text=True,
                         timeout=120)
    expect(res.returncode == 0, "ghc-events show failed: %s" % res.stderr[-500:])
    events, started = [], False
    for line in res.stdout.splitlines():
        if not started:
            started = line.startswith("Events:")
            continue
        m = re.match(r"\s*(\d+): (?:cap (\d+): )?(.*)$", line)
        if m:
            events.append((int(m.group(1)), None if m.group(2) is None else int(m.group(2)),
                           m.group(3)))
    return events


def record(s, name, cmds, rts=("-hT", "-i0.1"), busy=True):
    """Run probe-late with the RTS's own file writer (and its .hp file),
    sending it `cmds`; return the paths of NAME.eventlog and NAME.hp."""
    p = Program(s, "probe-late", ["--busy"] if busy else [], rts=list(rts))
    for c in cmds:
        answer = p.query(c)
        expect(answer.split()[:1] == ["ok"], "probe answered %r to %r" % (answer, c))
    p.cmd("quit")
    p.finish()
    paths = []
    for ext in ("eventlog", "hp"):
        src = s.path("probe-late." + ext)
        if os.path.exists(src):
            os.rename(src, s.path(name + "." + ext))
        paths.append(s.path(name + "." + ext))
    expect(os.path.exists(paths[0]), "the RTS wrote no eventlog")
    return paths


def counts(s, log):
    """The checker's (ghc-events') count of each event constructor."""
    with open(log, "rb") as f:
        return check_stream(s, f.read(), os.path.basename(log) + "-check").counts


GC_TEXT = [(r"starting GC$", "start"), (r"finished GC$", "end"),
           (r"requesting parallel GC$", "request_par"),
           (r"requesting sequential GC$", "request_seq"), (r"GC working$", "work"),
           (r"GC idle$", "idle"), (r"GC done$", "done"), (r"all caps stopped for GC$", "sync"),
           (r"GC stats for heap capset \d+: ", "stats")]
GC_COUNTS = {"start": "StartGC", "end": "EndGC", "request_par": "RequestParGC",
             "request_seq": "RequestSeqGC", "work": "GCWork", "idle": "GCIdle", "done": "GCDone",
             "sync": "GlobalSyncGC", "stats": "GCStatsGHC"}


@test
def table_gc_matches_ghc_events(s):
    """`table gc`: a row for every GC event ghc-events finds in the same
    recording, with its time, capability and kind; the stats rows carry the
    generation and bytes ghc-events reads, and the pause of the collection
    (its capability's start to end); csv/pandas read it in one call."""
    log, _ = record(s, "gc", ["work 0.4 8", "gc", "work 0.3 4", "gc"], rts=())
    res, out = table(s, "gc", log)
    rows = read_csv(out, "time_s,capability,event,generation,duration_s,copied_bytes,slop_bytes,"
                    "fragmentation_bytes,par_threads,par_max_copied_bytes,par_copied_bytes,"
                    "par_balanced_copied_bytes")
    theirs, stats, intervals = [], [], {}
    open_gc, last = {}, {}
    for t, c, text in ghc_events(log):
        for pat, ev in GC_TEXT:
            if re.match(pat, text):
                theirs.append((t, c, ev))
                if ev == "start":
                    open_gc[c] = t
                elif ev == "end" and c in open_gc:
                    intervals[(t, c)] = t - open_gc.pop(c)
                    last[c] = intervals[(t, c)]
                elif ev == "stats":
                    nums = [int(x) for x in re.findall(r"(\d+) (?:bytes|par threads)", text)]
                    gen = int(re.search(r"generation (\d+)", text).group(1))
                    stats.append((t, c, gen, nums[:7], last.pop(c, None)))
    ours = [(ns(r["time_s"]), cap(r["capability"]), r["event"]) for r in rows]
    note("%d GC rows, %d collections; ghc-events: %d, %d"
         % (len(ours), sum(1 for r in rows if r["event"] == "stats"), len(theirs), len(stats)))
    expect(len(stats) >= 4, "only %d collections in the run" % len(stats))
    expect(sorted(ours) == sorted(theirs),
           "the rows' (time, capability, event) differ from ghc-events': %s"
           % sorted(set(ours) ^ set(theirs))[:5])
    c = counts(s, log)
    for ev, name in GC_COUNTS.items():
        expect(sum(1 for r in rows if r["event"] == ev) == c.get(name, 0),
               "%s rows: not the checker's %d %s" % (ev, c.get(name, 0), name))
    mine = [(ns(r["time_s"]), cap(r["capability"]), int(r["generation"]),
             [int(r[k]) for k in ("copied_bytes", "slop_bytes", "fragmentation_bytes",
                                  "par_threads", "par_max_copied_bytes", "par_copied_bytes")],
             None if r["duration_s"] == "" else ns(r["duration_s"]))
            for r in rows if r["event"] == "stats"]
    # ghc-events prints copied, slop, fragmentation, par threads, max par
    # copied, total par copied (then balanced, on newer RTSs).
    expect([m[:4] for m in mine] == [(t, c, g, n[:6]) for t, c, g, n, _ in stats],
           "stats rows differ from ghc-events': %s" % [(a, b) for a, b in zip(mine, stats)
                                                       if a[:3] != b[:3]][:3])
    expect([m[4] for m in mine] == [d for *_, d in stats],
           "the stats rows' pauses are not the leading capability's GC intervals: %s"
           % [(a[0], a[4], b[4]) for a, b in zip(mine, stats) if a[4] != b[4]][:4])
    expect(all(d is not None for *_, d in stats), "a collection without its interval")
    for r in rows:
        if r["event"] == "end":
            want = intervals.get((ns(r["time_s"]), cap(r["capability"])))
            expect(r["duration_s"] != "" and ns(r["duration_s"]) == want,
                   "end row %r: duration %r, ghc-events' interval %r" % (r["time_s"],
                                                                         r["duration_s"], want))
    expect(any(m[2] > 0 for m in mine), "no major collection among the stats rows")
    expect("rows of gc" in res.stderr, "no summary line: %r" % res.stderr)


HEAP_TEXT = [(r"size of heap capset \d+: (\d+) bytes$", "heap_size_bytes"),
             (r"live data in heap capset \d+: (\d+) bytes$", "live_bytes"),
             (r"blocks size.*?: (\d+) bytes$", "blocks_size_bytes"),
             (r"allocated on heap capset \d+: (\d+) total bytes till now$", "allocated_bytes")]
HEAP_COUNTS = {"heap_size_bytes": "HeapSize", "live_bytes": "HeapLive",
               "blocks_size_bytes": "BlocksSize", "allocated_bytes": "HeapAllocated"}


@test
def table_heap_matches_ghc_events(s):
    """`table heap`: a row per heap figure event, the one figure it carries
    filled, each equal to what ghc-events reads (time, capability, bytes)."""
    log, _ = record(s, "heap", ["work 0.5 16", "gc"], rts=())
    _, out = table(s, "heap", log)
    cols = ["heap_size_bytes", "live_bytes", "blocks_size_bytes", "allocated_bytes"]
    rows = read_csv(out, "time_s,capability," + ",".join(cols))
    ours = []
    for r in rows:
        filled = [k for k in cols if r[k] != ""]
        expect(len(filled) == 1, "row %r fills %d figures" % (r, len(filled)))
        ours.append((ns(r["time_s"]), cap(r["capability"]), filled[0], int(r[filled[0]])))
    theirs = []
    for t, c, text in ghc_events(log):
        for pat, col in HEAP_TEXT:
            m = re.match(pat, text)
            if m:
                theirs.append((t, c, col, int(m.group(1))))
    note("%d heap rows (%s); ghc-events: %d"
         % (len(ours), ", ".join("%s %d" % (k, sum(1 for o in ours if o[2] == k)) for k in cols),
            len(theirs)))
    expect(sum(1 for o in ours if o[2] == "live_bytes") >= 1, "no live bytes row")
    c = counts(s, log)
    for col, name in HEAP_COUNTS.items():
        expect(sum(1 for o in ours if o[2] == col) == c.get(name, 0),
               "%s rows: not the checker's %d %s" % (col, c.get(name, 0), name))
    expect(sorted(ours) == sorted(theirs),
           "the heap rows differ from ghc-events': %s" % sorted(set(ours) ^ set(theirs))[:5])


def parse_hp(path):
    """The samples of the RTS's .hp file: [(time, {label: bytes})]."""
    samples, cur = [], None
    with open(path) as f:
        for line in f.read().splitlines():
            if line.startswith("BEGIN_SAMPLE "):
                cur = (float(line.split()[1]), {})
            elif line.startswith("END_SAMPLE "):
                samples.append(cur)
                cur = None
            elif cur is not None:
                label, value = line.rsplit("\t", 1)
                cur[1][label] = int(value)
    return samples


def censuses_of(hp):
    """The censuses of a run from its .hp file: the RTS frames them with an
    empty sample at the start and one at the end, which the eventlog does
    not carry."""
    samples = parse_hp(hp)
    expect(len(samples) >= 2 and not samples[0][1] and not samples[-1][1],
           "%s does not start and end with an empty sample" % hp)
    return samples[1:-1]


@test
def table_census_equals_hp(s):
    """`table census`: a row per label of each census, the labels (commas
    and all, RFC 4180 quoted) and bytes of the RTS's own .hp file of the
    same run, census by census."""
    # 2.5 s of work at -i0.1: a dozen censuses on a quiet machine, and
    # still more than four when the machine is busy and the program gets
    # a fraction of a core.
    log, hp = record(s, "census", ["work 2.5 8"])
    _, out = table(s, "census", log)
    rows = read_csv(out, "time_s,label,bytes")
    by_time = {}
    for r in rows:
        by_time.setdefault(ns(r["time_s"]), {})[r["label"]] = int(r["bytes"])
    theirs = [x for _, x in censuses_of(hp)]
    note("%d rows in %d censuses; the .hp file: %d censuses" % (len(rows), len(by_time),
                                                                len(theirs)))
    expect(len(theirs) >= 4, "the run gave only %d censuses" % len(theirs))
    expect(list(by_time.values()) == theirs,
           "the census rows are not the .hp file's samples: %s"
           % [sorted(set(a.items()) ^ set(b.items()))[:4]
              for a, b in zip(by_time.values(), theirs) if a != b][:2])
    expect(any("," in r["label"] for r in rows), "no label with a comma (e.g. (,)) was read back")


@test
def table_markers_recorded_and_live(s):
    """`table markers`: each marker's time and text as ghc-events reads them
    (commas and quotes kept, RFC 4180 quoted), from a recording and from a
    live program."""
    texts = ['plain', 'with, a comma', 'with "quotes", and more', 'semi;colon']
    log, _ = record(s, "markers", ["marker " + t for t in texts], rts=())
    _, out = table(s, "markers", log)
    rows = read_csv(out, "time_s,capability,marker")
    ours = [(ns(r["time_s"]), r["marker"]) for r in rows]
    c = counts(s, log)
    with open(log, "rb") as f:
        summary = check_stream(s, f.read(), "markers-rec")
    expect(ours == summary.markers, "marker rows %r, ghc-events %r" % (ours, summary.markers))
    expect([m for _, m in ours] == texts, "marker texts %r" % [m for _, m in ours])
    expect(len(rows) == c.get("UserMarker", 0), "rows vs the checker's UserMarker count")
    expect(all(r["capability"] != "" for r in rows), "a marker without its capability")

    # Live: the same from the program's socket, next to a plain client.
    p, connect = serve(s, "tlive")
    live_out = s.path("live-markers.csv")
    cmd = Cmd(s, ["table", "markers", "unix:" + s.path("tlive.sock"), "--csv", live_out])
    p.wait_clients(1)
    plain = connect()
    p.wait_clients(2)
    for t in texts:
        p.cmd("marker live " + t)
    p.cmd("quit")
    p.finish()
    rc, _, err = cmd.wait(60)
    expect(rc == 0, "live table markers exited %d: %s" % (rc, err))
    summary = check_stream(s, plain.wait_eof(), "tlive")
    live = [(ns(r["time_s"]), r["marker"])
            for r in read_csv(live_out, "time_s,capability,marker")]
    want = [m for m in summary.markers if m[1].startswith("live ")]
    expect(len(want) == len(texts) and [m for m in live if m[1].startswith("live ")] == want,
           "live marker rows %r, the plain client's %r" % (live, want))


SPARK_COUNTERS = re.compile(r"spark stats: (\d+) created, (\d+) converted, (\d+) remaining "
                            r"\((\d+) overflowed, (\d+) dud, (\d+) GC'd, (\d+) fizzled\)")


@test
def table_sparks_matches_ghc_events(s):
    """`table sparks`: a counters row per SPARK_COUNTERS event with the
    figures ghc-events reads (created, dud, overflowed, converted, fizzled,
    GC'd, remaining), and a row per spark event (+RTS -lf) as many as the
    checker counts, from a program that sparks when there is one
    (build/sparker, -N2), else from the probe (whose counters stay 0)."""
    sparker = os.path.join(harness.BUILD, "sparker")
    if os.path.exists(sparker):
        rec = s.path("sparks.eventlog")
        p, connect = serve(s, "sparker", ["2"], rts=["-N2", "-lf"], exe="sparker")
        c = connect()
        p.finish()
        with open(rec, "wb") as f:
            f.write(c.wait_eof())
        log = rec
    else:
        note("no build/sparker: the probe's counters (all 0) are compared")
        log, _ = record(s, "sparks", ["work 0.3 4"], rts=())
    _, out = table(s, "sparks", log)
    rows = read_csv(out, "time_s,capability,event,created,dud,overflowed,converted,fizzled,gcd,"
                    "remaining,victim_capability")
    ours = [(ns(r["time_s"]), cap(r["capability"]),
             tuple(int(r[k]) for k in ("created", "converted", "remaining", "overflowed", "dud",
                                       "gcd", "fizzled")))
            for r in rows if r["event"] == "counters"]
    theirs = []
    for t, cp, text in ghc_events(log):
        m = SPARK_COUNTERS.search(text)
        if m:
            theirs.append((t, cp, tuple(int(x) for x in m.groups())))
    note("%d counters rows, %d created in all; ghc-events: %d"
         % (len(ours), sum(max((o[2][0] for o in ours if o[1] == k), default=0)
                           for k in {o[1] for o in ours}), len(theirs)))
    expect(len(ours) >= 2, "only %d counters rows" % len(ours))
    expect(sorted(ours) == sorted(theirs),
           "the counters rows differ from ghc-events': %s" % sorted(set(ours) ^ set(theirs))[:4])
    c = counts(s, log)
    expect(len(ours) == c.get("SparkCounters", 0),
           "counters rows vs the checker's SparkCounters count")
    # Each spark's own events (+RTS -lf), counted by the checker.
    single = {"create": "SparkCreate", "dud": "SparkDud", "overflow": "SparkOverflow",
              "run": "SparkRun", "steal": "SparkSteal", "fizzle": "SparkFizzle", "gc": "SparkGC"}
    for ev, name in single.items():
        expect(sum(1 for r in rows if r["event"] == ev) == c.get(name, 0),
               "%s rows: not the checker's %d %s" % (ev, c.get(name, 0), name))
    expect(all(r["victim_capability"] != "" for r in rows if r["event"] == "steal"),
           "a steal row without its victim")
    note("single sparks: %s" % ", ".join("%s %d" % (ev, sum(1 for r in rows if r["event"] == ev))
                                         for ev in single))


THREAD_TEXT = [(r"creating thread (\d+)$", "create"), (r"running thread (\d+)$", "run"),
               (r"stopping thread (\d+) \((.*)\)$", "stop"),
               (r"thread (\d+) is runnable$", "runnable"),
               (r"migrating thread (\d+) to cap (\d+)$", "migrate"),
               (r"waking up thread (\d+) on cap (\d+)$", "wakeup"),
               (r"thread (\d+) has label \"(.*)\"$", "label"),
               (r"creating spark thread (\d+)$", "create_spark_thread")]
THREAD_COUNTS = {"create": "CreateThread", "run": "RunThread", "stop": "StopThread",
                 "runnable": "ThreadRunnable", "migrate": "MigrateThread",
                 "wakeup": "WakeupThread", "label": "ThreadLabel",
                 "create_spark_thread": "CreateSparkThread"}
# ghc-events' words for a stop's status, for those it spells plainly.
STOP_WORDS = {"heap overflow": "heap_overflow", "stack overflow": "stack_overflow",
              "thread yielding": "yielding", "thread finished": "finished",
              "making a foreign call": "foreign_call", "blocked on an MVar": "blocked_on_mvar"}


@test
def table_threads_matches_ghc_events(s):
    """`table threads`: a row per thread event (create, run, stop, label...)
    with the thread, capability and time ghc-events reads, each stop's
    status in words, and labelThread's labels (the RTS's own "IOManager on
    cap 0")."""
    log, _ = record(s, "threads", ["work 0.3 4", "sleep 0.1", "marker x"], rts=())
    _, out = table(s, "threads", log)
    rows = read_csv(out, "time_s,capability,thread,event,status,blocked_on,other_capability,"
                    "label")
    ours = [(ns(r["time_s"]), cap(r["capability"]), int(r["thread"]), r["event"]) for r in rows]
    theirs, stops, labels = [], {}, set()
    for t, cp, text in ghc_events(log):
        for pat, ev in THREAD_TEXT:
            m = re.match(pat, text)
            if m:
                theirs.append((t, cp, int(m.group(1)), ev))
                if ev == "stop":
                    stops[(t, cp, int(m.group(1)))] = m.group(2)
                if ev == "label":
                    labels.add((int(m.group(1)), m.group(2)))
                break
    note("%d thread rows; ghc-events: %d" % (len(ours), len(theirs)))
    c = counts(s, log)
    for ev, name in THREAD_COUNTS.items():
        expect(sum(1 for o in ours if o[3] == ev) == c.get(name, 0),
               "%s rows: not the checker's %d %s" % (ev, c.get(name, 0), name))
    expect(sorted(ours) == sorted(theirs),
           "thread rows differ from ghc-events': %s" % sorted(set(ours) ^ set(theirs))[:5])
    checked = 0
    for r in rows:
        if r["event"] == "stop":
            words = stops[(ns(r["time_s"]), cap(r["capability"]), int(r["thread"]))]
            if words in STOP_WORDS:
                checked += 1
                expect(r["status"] == STOP_WORDS[words],
                       "stop status %r where ghc-events says %r" % (r["status"], words))
            expect(r["status"] != "", "a stop row without a status")
    expect(checked >= 10, "only %d stop statuses compared" % checked)
    ours_labels = {(int(r["thread"]), r["label"]) for r in rows if r["event"] == "label"}
    expect(ours_labels == labels and any("IOManager" in x for _, x in labels),
           "labels %r, ghc-events %r" % (ours_labels, labels))
