# SPDX-License-Identifier: BSD-3-Clause
"""Every heap profile mode the eventlog carries, judged against the RTS's
own .hp file of the same run: tests/programs/heapmodes (built by the Makefile with
-prof -fprof-auto, and -finfo-table-map on GHC >= 9.2) runs with
+RTS -hX -l -i0.05, so the RTS writes both heapmodes.hp and
heapmodes.eventlog; `heap heapmodes.eventlog --hp` must give the .hp's
samples, labels and bytes. For -hi the page's names for info tables come
from the IPE events as ghc-events reads them (tests/programs/checker); for -hr and
-hb, whose samples the eventlog lacks, the commands say so."""

import json
import os
import re
import subprocess

import harness
from harness import Skip, expect, ghc_version, note, test
from test_heap import hp2ps


def client_path():
    return os.path.abspath(os.path.join(harness.BUILD, "eventlog-socket"))


def run_mode(s, mode, seconds_limit=120, extra=()):
    """Run the profiled program with +RTS -h<mode> -l -i0.05 (and `extra`)
    in its own directory; return the paths of the .hp and the eventlog the
    RTS wrote. -hb runs with -i0.1: GHC 9.0.2's biographical census crashes
    the program (SIGSEGV in freeHashTable, under heapCensus) every time at
    -i0.05 on a busy machine, with or without -l, never at -i0.1."""
    exe = os.path.abspath(os.path.join(harness.BUILD, "heapmodes"))
    expect(os.path.exists(exe), "%s is missing (make integration-test builds it)" % exe)
    cwd = s.path("h" + mode)
    os.makedirs(cwd, exist_ok=True)
    interval = "-i0.1" if mode == "b" else "-i0.05"
    res = subprocess.run([exe, "+RTS", "-h" + mode, "-l", interval, *extra, "-RTS"], cwd=cwd,
                         capture_output=True, text=True, timeout=seconds_limit)
    expect(res.returncode == 0, "heapmodes -h%s exited %d: %s" % (mode, res.returncode, res.stderr))
    hp, log = os.path.join(cwd, "heapmodes.hp"), os.path.join(cwd, "heapmodes.eventlog")
    expect(os.path.exists(hp) and os.path.exists(log), "the RTS wrote no .hp or no eventlog")
    return hp, log


def run_client(*args, timeout=120):
    return subprocess.run([client_path(), *args], capture_output=True, text=True,
                          timeout=timeout)


def samples(path, ccs_numbers=False):
    """The samples of a .hp file, each a sorted list of (label, bytes) (a
    list, not a dict: two cost-centre stacks may share a cut label). With
    ccs_numbers the RTS's "(N)" stack numbers are taken off the labels."""
    out, cur = [], None
    with open(path) as f:
        for line in f.read().splitlines():
            if line.startswith("BEGIN_SAMPLE "):
                cur = []
            elif line.startswith("END_SAMPLE "):
                expect(cur is not None, "%s: END_SAMPLE outside a sample" % path)
                out.append(sorted(cur))
                cur = None
            elif cur is not None:
                label, value = line.rsplit("\t", 1)
                if ccs_numbers:
                    label = re.sub(r"^\(\d+\)", "", label)
                cur.append((label, int(value)))
    expect(cur is None, "%s ends inside a sample" % path)
    return out


def hp_equals_ghc(s, mode, extra=()):
    """`heap --hp` of a -h<mode> run against the RTS's .hp of it, sample for
    sample; returns the RTS's samples."""
    ghc_hp, log = run_mode(s, mode, extra=extra)
    ours = s.path("ours-h%s.hp" % mode)
    res = run_client("heap", log, "--hp", ours)
    expect(res.returncode == 0, "heap -h%s exited %d: %s" % (mode, res.returncode, res.stderr))
    theirs, mine = samples(ghc_hp, ccs_numbers=(mode == "c")), samples(ours)
    real = [x for x in theirs if x]
    note("-h%s: the RTS's .hp has %d samples (%d with data, %d labels); ours %d"
         % (mode, len(theirs), len(real), len({lab for x in real for lab, _ in x}), len(mine)))
    expect(len(real) >= 3, "-h%s: the run gave only %d censuses" % (mode, len(real)))
    expect(len(mine) == len(theirs),
           "-h%s: %d samples in ours, %d in the RTS's .hp" % (mode, len(mine), len(theirs)))
    for i, (a, b) in enumerate(zip(mine, theirs)):
        if a != b:
            only_ours = sorted(set(a) - set(b))[:4]
            only_ghc = sorted(set(b) - set(a))[:4]
            expect(False, "-h%s sample %d differs: only ours %s; only the RTS's %s"
                   % (mode, i, only_ours, only_ghc))
    hp2ps(s, ours)
    return theirs


@test
def heapmodes_hc_equals_ghc(s):
    """-hc: cost-centre stacks named as the RTS's .hp names them (innermost
    first, '/' between, a CAF as MODULE.CAF, cut to -L 25 with "..."), but
    for the RTS's "(N)" stack number, which the eventlog does not carry."""
    theirs = hp_equals_ghc(s, "c")
    labels = {lab for x in theirs for lab, _ in x}
    expect(any(lab.endswith("...") for lab in labels),
           "no stack was cut to -L: %s" % sorted(labels))


@test
def heapmodes_hc_length_option(s):
    """-hc with +RTS -L40: stacks are cut to the program's own -L, read from
    the RTS options the eventlog gives; a CAF's stack is MODULE.CAF."""
    exe = os.path.abspath(os.path.join(harness.BUILD, "heapmodes"))
    cwd = s.path("hcL")
    os.makedirs(cwd, exist_ok=True)
    res = subprocess.run([exe, "+RTS", "-hc", "-L40", "-l", "-i0.05", "-RTS"], cwd=cwd,
                         capture_output=True, text=True, timeout=180)
    expect(res.returncode == 0, "heapmodes -hc -L40 exited %d: %s" % (res.returncode, res.stderr))
    ours = s.path("ours-L40.hp")
    res = run_client("heap", os.path.join(cwd, "heapmodes.eventlog"), "--hp", ours)
    expect(res.returncode == 0, "heap exited %d: %s" % (res.returncode, res.stderr))
    theirs = samples(os.path.join(cwd, "heapmodes.hp"), ccs_numbers=True)
    expect(samples(ours) == theirs, "-hc -L40: ours differs from the RTS's .hp")
    labels = {lab for x in theirs for lab, _ in x}
    expect(any(len(lab) > 24 for lab in labels), "-L40 made no label longer than 24")
    expect(any(lab.endswith(".CAF") for lab in labels), "no whole CAF stack: %s" % sorted(labels))


@test(timeout=400)
def heapmodes_hm_hd_hy_equal_ghc(s):
    """-hm (module), -hd (closure description), -hy (type description):
    the eventlog's string samples give the RTS's .hp exactly."""
    for mode in "mdy":
        hp_equals_ghc(s, mode)


@test
def heapmodes_hi_equals_ghc(s):
    """-hi (GHC >= 9.2): labels are info table addresses in the RTS's .hp,
    and in `heap --hp` too."""
    if ghc_version() < (9, 2):
        raise Skip("GHC %d.%d has no -hi (9.2 and later)" % ghc_version()[:2])
    theirs = hp_equals_ghc(s, "i")
    expect(all(lab.startswith("0x") for x in theirs for lab, _ in x),
           "the RTS's -hi labels are not all addresses")


def checker_ipes(log):
    exe = os.path.abspath(os.path.join(harness.BUILD, "eventlog-check"))
    res = subprocess.run([exe, log], capture_output=True, text=True, timeout=300)
    expect(res.returncode == 0, "eventlog-check: %s %s" % (res.stdout[-300:], res.stderr))
    ipes = {}
    for line in res.stdout.splitlines():
        if line.startswith("ipe "):
            addr, table, label, loc = line[4:].split("\t")
            ipes[int(addr, 16)] = (table, label, loc)
    return ipes


def report_json(s, log, name):
    out = s.path(name + ".html")
    res = run_client("report", log, "-o", out)
    expect(res.returncode == 0, "report exited %d: %s" % (res.returncode, res.stderr))
    html = open(out, encoding="utf-8").read()
    m = re.search(r'<script id="es-data" type="application/json">(.*?)</script>', html, re.S)
    expect(m is not None, "the report has no es-data")
    return json.loads(m.group(1))


@test(timeout=400)
def heapmodes_hi_names_by_ipe(s):
    """-hi (GHC >= 9.2): the report (the page's data) names each info table
    by its IPE event as ghc-events reads it: the label (or the table's name
    without _info), then the source location in parentheses, e.g.
    "main (tests/programs/heapmodes/Main.hs:(21,7)-(27,26))"; the addresses stay beside
    the names (label_ids), the same as `heap --hp` writes."""
    if ghc_version() < (9, 2):
        raise Skip("GHC %d.%d has no -hi or IPE events (9.2 and later)" % ghc_version()[:2])
    ghc_hp, log = run_mode(s, "i")
    ipes = checker_ipes(log)
    expect(len(ipes) >= 10, "ghc-events read only %d IPE events" % len(ipes))
    d = report_json(s, log, "hi")
    names, ids = d["labels"], d["label_ids"]
    expect(len(names) == len(ids) and names, "labels %d, label_ids %d" % (len(names), len(ids)))
    hp_labels = {lab for x in samples(ghc_hp) for lab, _ in x}
    expect(set(ids) - {"(other labels)"} <= hp_labels,
           "label_ids not in the RTS's .hp: %s" % sorted(set(ids) - hp_labels)[:5])
    named = 0
    for name, addr in zip(names, ids):
        ipe = ipes.get(int(addr, 16)) if addr.startswith("0x") else None
        if ipe is None:
            expect(name == addr, "%s has no IPE event but is named %r" % (addr, name))
            continue
        table, label, loc = ipe
        what = label or (table[:-5] if table.endswith("_info") else table)
        want = "%s (%s)" % (what, loc) if loc and loc != ":" else what
        expect(name == want, "%s is named %r; its IPE event says %r" % (addr, name, want))
        named += 1
    note("%d of %d labels named by their IPE, e.g. %s"
         % (named, len(names), [n for n in names if not n.startswith("0x")][:3]))
    # A constructor's IPE in the census (its _con_info table) has no label
    # and no source location on 9.6 and 9.10: "Circle_con", from the
    # table's name; other tables of Shapes carry both.
    shapes = [n for n in names if re.match(
        r"(Circle|Rect|Tri)(_con)?( \(tests/programs/heapmodes/Shapes.hs:|$)", n)]
    expect(shapes, "no constructor of Shapes named by its IPE: %s" % names[:10])


@test(timeout=400)
def heapmodes_hr_hb_equal_ghc(s):
    """-hr (retainer sets) and -hb (biography: VOID, LAG, USE, INHERENT_USE,
    DRAG): the eventlog carries them as string samples (GHC 9.0 and later;
    -hb's all at exit), and `heap --hp` gives the RTS's .hp."""
    for mode in "rb":
        hp_equals_ghc(s, mode)


@test(timeout=300)
def heapmodes_he_equals_ghc(s):
    """-he (GHC >= 9.10): eras, with --automatic-era-increment so that each
    major GC starts a new one: the eventlog's string samples give the RTS's
    .hp, several eras in all, and the page names the mode."""
    if ghc_version() < (9, 10):
        raise Skip("-he (era profiling) needs GHC 9.10 or later; this is %d.%d"
                   % ghc_version()[:2])
    theirs = hp_equals_ghc(s, "e", extra=("--automatic-era-increment",))
    eras = {lab for x in theirs for lab, _ in x}
    expect(len(eras) >= 3 and all(lab.isdigit() for lab in eras),
           "-he: the RTS's .hp has eras %s (want several numbers)" % sorted(eras)[:8])
    _, log = run_mode(s, "e", extra=("--automatic-era-increment",))
    d = report_json(s, log, "he")
    expect(d["info"]["breakdown_name"] == "era (-he)",
           "the page's mode: %r" % d["info"].get("breakdown_name"))


@test
def heapmodes_hb_before_exit_said(s):
    """-hb sends its censuses only at exit: `heap` and the report of a
    recording cut before them say why there is nothing, and where the
    samples are (the RTS's own .hp)."""
    _, log = run_mode(s, "b")
    data = open(log, "rb").read()
    first = data.find(b"VOID\0")
    expect(first > 100, "no VOID sample in the -hb eventlog")
    cut = s.path("cut.eventlog")
    with open(cut, "wb") as f:
        f.write(data[:first - 40])
    res = run_client("heap", cut, "--hp", s.path("cut.hp"))
    expect(res.returncode == 1, "heap on the cut recording exited %d" % res.returncode)
    expect("biographical profile (+RTS -hb)" in res.stderr and "exits" in res.stderr,
           "heap does not say why the -hb profile is empty: %s" % res.stderr)
    d = report_json(s, cut, "cut")
    expect("biographical" in d["info"]["mode_note"] and d["info"]["breakdown_name"] ==
           "biography (-hb)", "the page's mode: %r, %r"
           % (d["info"].get("breakdown_name"), d["info"].get("mode_note")))
