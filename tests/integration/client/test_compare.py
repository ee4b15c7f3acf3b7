# SPDX-License-Identifier: BSD-3-Clause
"""`eventlog-socket compare RUN_A RUN_B`, judged against the RTS's own .hp
of each run (peak and mean per label, computed here), live and recorded;
bad input to `table` and `compare`; and the docs' two-run pandas example,
run as written. The `table` kinds are in test_table.py."""

import csv
import os
import re

import harness
from harness import expect, note, serve, test
from client_cmd import Cmd
from test_table import censuses_of, pandas_run, read_csv, record, run_client


def hp_profile(hp):
    """{label: (peak, mean)} over a run's censuses, from its .hp file (a
    census without the label counts 0 bytes)."""
    censuses = [x for _, x in censuses_of(hp)]
    labels = set().union(*censuses) if censuses else set()
    figures = {lab: (max(c.get(lab, 0) for c in censuses),
                     sum(c.get(lab, 0) for c in censuses) / len(censuses)) for lab in labels}
    return figures, len(censuses)


COMPARE_HEADER = ("label,peak_a_bytes,peak_b_bytes,peak_diff_bytes,mean_a_bytes,mean_b_bytes,"
                  "mean_diff_bytes,note")


def check_compare(rows, a, b):
    """The comparison's rows against the two runs' .hp profiles."""
    expect({r["label"] for r in rows} == set(a) | set(b),
           "labels: %d in the comparison, %d in the .hp files (A %d, B %d): %s"
           % (len(rows), len(set(a) | set(b)), len(a), len(b),
              sorted({r["label"] for r in rows} ^ (set(a) | set(b)))[:5]))
    for r in rows:
        label = r["label"]
        pa, ma = a.get(label, (0, 0.0))
        pb, mb = b.get(label, (0, 0.0))
        want_note = "" if label in a and label in b else "only in A" if label in a else "only in B"
        got = (int(r["peak_a_bytes"]), int(r["peak_b_bytes"]), int(r["peak_diff_bytes"]))
        expect(got == (pa, pb, pb - pa) and r["note"] == want_note,
               "%s: peaks %r note %r, the .hp files say %r %r" % (label, got, r["note"],
                                                                  (pa, pb, pb - pa), want_note))
        for col, want in (("mean_a_bytes", ma), ("mean_b_bytes", mb), ("mean_diff_bytes", mb - ma)):
            expect(abs(float(r[col]) - want) <= 0.051 + 1e-9 * abs(want),
                   "%s: %s %s, the .hp file's %.3f" % (label, col, r[col], want))
    diffs = [abs(int(r["peak_diff_bytes"])) for r in rows]
    expect(diffs == sorted(diffs, reverse=True), "rows not sorted by the peak's difference")


@test
def compare_runs_equals_hp(s):
    """`compare A B`: for every label of either run, its peak and mean
    residency in each and the difference, as computed from the RTS's own .hp
    files of the two runs (idle, and with a large working set), labels of only
    one run included with a note; sorted by the difference, the largest
    first, as CSV and as a table for people."""
    # 1.5 s each at -i0.1: more than 3 censuses also when a busy machine
    # gives the program a fraction of a core (0.6 s gave 2 at load 8).
    log_a, hp_a = record(s, "small", ["sleep 1.5"])
    log_b, hp_b = record(s, "large", ["work 1.5 24", "marker extra"])
    a, na = hp_profile(hp_a)
    b, nb = hp_profile(hp_b)
    out = s.path("compare.csv")
    res = run_client("compare", log_a, log_b, "--csv", out)
    expect(res.returncode == 0, "compare exited %d: %s" % (res.returncode, res.stderr))
    rows = read_csv(out, COMPARE_HEADER)
    note("%d labels compared (A: %d censuses, B: %d), %d in one run only; first: %s %s"
         % (len(rows), na, nb, sum(1 for r in rows if r["note"]), rows[0]["label"],
            rows[0]["peak_diff_bytes"]))
    expect(na >= 3 and nb >= 3, "too few censuses: %d and %d" % (na, nb))
    check_compare(rows, a, b)
    expect(any(r["note"] == "only in B" for r in rows), "no label of B only (the work's I#)")
    expect(int(rows[0]["peak_diff_bytes"]) > 8 << 20,
           "the largest difference is only %s bytes" % rows[0]["peak_diff_bytes"])
    # The same, the other way round, as text.
    res = run_client("compare", log_b, log_a)
    expect(res.returncode == 0, "compare (text) exited %d: %s" % (res.returncode, res.stderr))
    lines = res.stdout.splitlines()
    expect(lines[0].startswith("A: ") and "large.eventlog" in lines[0] and
           lines[1].startswith("B: ") and "small.eventlog" in lines[1],
           "the text does not name the runs: %r" % lines[:2])
    first = next(i for i, l in enumerate(lines) if l.startswith("label"))
    expect(lines[first + 1].startswith(rows[0]["label"] + " ") and " -" in lines[first + 1],
           "the text's first row %r is not %s shrinking" % (lines[first + 1], rows[0]["label"]))
    expect(len(lines) == first + 1 + len(rows), "the text has %d rows, the CSV %d"
           % (len(lines) - first - 1, len(rows)))


@test
def compare_live_run(s):
    """`compare FILE ADDR`: B a live program (read to its exit), A a
    recording; the figures are still each run's .hp file's."""
    log_a, hp_a = record(s, "rec", ["work 0.5 2"])
    a, _ = hp_profile(hp_a)
    p, _ = serve(s, "cmplive", ["--busy"], rts=["-hT", "-i0.1"])
    out = s.path("live.csv")
    cmd = Cmd(s, ["compare", log_a, "unix:" + s.path("cmplive.sock"), "--csv", out])
    p.wait_clients(1)
    answer = p.query("work 1.5 16")  # at least 3 censuses on a busy machine too
    expect(answer.startswith("ok"), "probe answered %r" % answer)
    p.cmd("quit")
    p.finish()
    rc, _, err = cmd.wait(60)
    expect(rc == 0, "compare exited %d: %s" % (rc, err))
    b, nb = hp_profile(s.path("probe.hp"))
    rows = read_csv(out, COMPARE_HEADER)
    note("%d labels; the live run: %d censuses" % (len(rows), nb))
    expect(nb >= 3, "the live run gave %d censuses" % nb)
    check_compare(rows, a, b)


@test
def table_compare_bad_input(s):
    """Bad input gets one clear line and exit status 2: an unknown kind, a
    missing file, a file that is no eventlog, a stream with an undeclared
    event type, an unwritable output; a recording cut in the middle gives
    its rows so far and exit 1 (cut, as `heap` and `record`); a run without
    a heap profile cannot be compared (exit 1)."""
    log, _ = record(s, "bad", ["work 0.4 2", "marker utf8 check here"])
    res = run_client("table", "markers", log, "--csv", s.path("ok.csv"))
    expect(res.returncode == 0, "a good table exited %d: %s" % (res.returncode, res.stderr))
    # A marker that is not UTF-8 (a byte changed in place): the CSV stays
    # UTF-8, the byte becomes U+FFFD.
    with open(log, "rb") as f:
        data = f.read()
    expect(data.count(b"utf8 check here") == 1, "the marker is not in the recording once")
    bad_utf8 = s.path("utf8.eventlog")
    with open(bad_utf8, "wb") as f:
        f.write(data.replace(b"utf8 check here", b"utf8\xffcheck here"))
    res = run_client("table", "markers", bad_utf8, "--csv", s.path("utf8.csv"))
    expect(res.returncode == 0, "table of a non-UTF-8 marker exited %d: %s"
           % (res.returncode, res.stderr))
    rows = read_csv(s.path("utf8.csv"), "time_s,capability,marker")
    expect([r["marker"] for r in rows] == ["utf8\ufffdcheck here"],
           "the non-UTF-8 marker reads %r" % [r["marker"] for r in rows])

    def refused(args, words, status=2):
        res = run_client(*args)
        expect(res.returncode == status and words in res.stderr,
               "%s: exit %d, %r (wanted %d and %r)" % (" ".join(args[:2]), res.returncode,
                                                       res.stderr, status, words))
        return res

    refused(["table", "bogus", log, "--csv", "-"], "no kind bogus")
    refused(["table", "gc", log], "usage: eventlog-socket table")
    refused(["table", "gc", s.path("missing.eventlog"), "--csv", "-", "--connect-timeout", "1"],
            "missing.eventlog")
    refused(["table", "gc", log, "--csv", s.path("no/such/dir.csv")], "cannot write")
    junk = s.path("junk.eventlog")
    with open(junk, "wb") as f:
        f.write(b"GET / HTTP/1.1\r\n\r\n" * 100)
    refused(["table", "gc", junk, "--csv", "-"], "junk.eventlog")
    hostile = s.path("hostile.eventlog")
    at = data.index(b"datb") + 4
    with open(hostile, "wb") as f:
        f.write(data[:at] + b"\x01\x23" + b"\x00" * 64)
    res = refused(["table", "threads", hostile, "--csv", s.path("hostile.csv")], "hostile")
    expect(res.stderr.count("\n") == 1, "more than one line for a hostile file: %r" % res.stderr)
    cut = s.path("cut.eventlog")
    with open(cut, "wb") as f:
        f.write(data[:len(data) // 2 + 7])
    res = refused(["table", "gc", cut, "--csv", s.path("cut.csv")], "cut", status=1)
    rows = read_csv(s.path("cut.csv"), "time_s,capability,event,generation,duration_s,"
                    "copied_bytes,slop_bytes,fragmentation_bytes,par_threads,"
                    "par_max_copied_bytes,par_copied_bytes,par_balanced_copied_bytes")
    expect(len(rows) > 10, "only %d rows before the cut" % len(rows))
    refused(["compare", log, s.path("missing.eventlog"), "--connect-timeout", "1"],
            "missing.eventlog")
    plain, _ = record(s, "plain", ["marker p"], rts=())
    refused(["compare", log, plain], "no heap profile", status=1)
    refused(["compare", log], "usage: eventlog-socket compare")


@test
def readme_pandas_two_runs(s):
    """The docs' two-run analysis in pandas (docs/command.md), run as
    written on the CSV of `table census` and `table gc` of a fast and a
    leaky run: its peaks, means and growth per label are `compare`'s, and
    its pauses are read."""
    with open(os.path.join(harness.ROOT, "docs", "command.md")) as f:
        text = f.read()
    m = re.search(r"The same comparison in pandas.*?```python\n(.*?)```", text, re.S)
    expect(m is not None, "docs/command.md has no pandas example")
    fast, _ = record(s, "fast", ["sleep 0.6"])
    leaky, _ = record(s, "leaky", ["work 0.6 24"])
    for run, kind, name in ((fast, "census", "fast"), (leaky, "census", "leaky"),
                            (leaky, "gc", "leaky-gc")):
        res = run_client("table", kind, run, "--csv", s.path(name + ".csv"))
        expect(res.returncode == 0, "table %s: %s" % (kind, res.stderr))
    out = pandas_run(m.group(1) + "\nboth.to_csv('both.csv')\n", cwd=s.dir)
    if out is None:
        raise harness.Skip("Debian's python3-pandas is not installed (scripts/ensure-deps.sh)")
    res = run_client("compare", fast, leaky, "--csv", s.path("compare.csv"))
    expect(res.returncode == 0, "compare: %s" % res.stderr)
    want = {r["label"]: r for r in read_csv(s.path("compare.csv"), COMPARE_HEADER)}
    with open(s.path("both.csv"), newline="") as f:
        got = {r["label"]: r for r in csv.DictReader(f)}
    expect(set(got) == set(want), "pandas' labels differ from compare's: %s"
           % sorted(set(got) ^ set(want))[:5])
    for label, r in got.items():
        w = want[label]
        for mine, theirs in (("peak_fast", "peak_a_bytes"), ("peak_leaky", "peak_b_bytes"),
                             ("grew", "peak_diff_bytes"), ("mean_fast", "mean_a_bytes"),
                             ("mean_leaky", "mean_b_bytes")):
            expect(abs(float(r[mine]) - float(w[theirs])) <= 0.051,
                   "%s: pandas' %s %s, compare's %s %s" % (label, mine, r[mine], theirs,
                                                           w[theirs]))
    expect("count" in out and "mean" in out, "the pauses by generation were not printed: %r"
           % out[-300:])
    note("the docs' example: %d labels, as compare's; its output ends %r" % (len(got),
                                                                             out.splitlines()[-1]))


@test
def compare_run_without_a_census(s):
    """A run whose heap profiling started but ended before its first census
    (+RTS -hT -i10, quit at once: the RTS's own .hp has no sample either)
    is compared as an empty profile, saying so: every label of the other
    run is "only in B"; it is not told to run with +RTS -hT, which it
    did."""
    log_a, hp_a = record(s, "short", [], rts=("-hT", "-i10"), busy=False)
    na = hp_profile(hp_a)[1] if os.path.exists(hp_a) else 0
    log_b, hp_b = record(s, "long", ["sleep 1"])
    b, nb = hp_profile(hp_b)
    out = s.path("short.csv")
    res = run_client("compare", log_a, log_b, "--csv", out)
    expect(res.returncode == 0, "compare exited %d: %s" % (res.returncode, res.stderr))
    expect(re.search(r"short\.eventlog: heap profiling started \(by closure type \(-hT\), a "
                     r"census every 10 s\) but no census reached the stream", res.stderr) and
           "+RTS -hT" not in res.stderr.replace("(-hT)", ""),
           "compare's words for the short run: %s" % res.stderr)
    rows = read_csv(out, COMPARE_HEADER)
    expect(na == 0 and nb >= 3, "the runs have %d and %d censuses" % (na, nb))
    check_compare(rows, {}, b)
    expect(rows and all(r["note"] == "only in B" for r in rows), "rows %r" % rows[:3])
    note(res.stderr.strip().splitlines()[-1])
