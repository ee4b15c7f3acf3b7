# SPDX-License-Identifier: BSD-3-Clause
"""Labels no honest RTS writes, and one an honest program does (a long
label cut in the middle of a character), through everything the
`eventlog-socket` command writes: the Prometheus exposition (judged by
promtool and by a real Prometheus), the .hp file (hp2ps) and the CSV of
`heap` and `table census` (pandas). One rule for census labels everywhere
(docs/command.md, "Census labels"): a plain label is written as sent; any
other (bytes that are not UTF-8, a control character, longer than 511
bytes, the command's own "(other labels)") has each bad byte and control
character as U+FFFD, is cut between characters, and gets a suffix from a
hash of its bytes, so that every label sent is a series and a row of its
own; an output that must show a label otherwise (the exposition's rest
line "other", hp2ps's rules) renames it the same way."""

import json
import os
import re
import shutil
import subprocess
import time
import urllib.request

import fakeprog as fp
from client_cmd import Cmd
from harness import Skip, expect, note, test
from test_metrics import prom_query, samples, start_metrics, start_prometheus, value
from test_table import DEBIAN_PYTHON, pandas_run

LONG = b"a" * 510 + "\u00e9".encode()  # 512 bytes, longer than a label may be
LABELS = [b"ok", LONG, b"bad\xc3(", b"\xff\xfe", b'quote"back\\slash\nline']


def fnv(raw):
    """The suffix of a label sent as `raw`: '~' and FNV-1a's 64-bit hash of
    its bytes in hex, the same in every run."""
    h = 0xCBF29CE484222325
    for b in raw:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return "~%016x" % h


# Labels that were one text, or one series, before the rule: two that
# differ in bytes that are not UTF-8, two longer than 511 bytes that share
# their first 600, the command's own names, control characters, and one
# label twice in a census. With what the command keeps of each.
LONG_A, LONG_B = b"a" * 600 + b"x", b"a" * 600 + b"y"
HOSTILE = [(b"other", "other"),  # renamed where "other" is the rest: the exposition
           (b"(other labels)", "(other labels)" + fnv(b"(other labels)")),
           (b"bad\xc3(", "bad\ufffd(" + fnv(b"bad\xc3(")),
           (b"bad\xff(", "bad\ufffd(" + fnv(b"bad\xff(")),
           (LONG_A, "a" * 494 + fnv(LONG_A)), (LONG_B, "a" * 494 + fnv(LONG_B)),
           (b"esc\x1b[31m", "esc\ufffd[31m" + fnv(b"esc\x1b[31m")),
           (b"bel\x07", "bel\ufffd" + fnv(b"bel\x07")),
           (b"cr\rx", "cr\ufffdx" + fnv(b"cr\rx")),
           (b"del\x7f", "del\ufffd" + fnv(b"del\x7f")),
           (b"c1\xc2\x9b", "c1\ufffd" + fnv(b"c1\xc2\x9b"))]


def scrape_bytes(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        return r.read()


def promtool(s, text):
    tool = shutil.which("promtool")
    if tool is None:
        raise Skip("promtool (Debian's prometheus package) is not installed")
    res = subprocess.run([tool, "check", "metrics"], input=text, capture_output=True,
                         timeout=60)
    return res.returncode, (res.stdout + res.stderr).decode(errors="replace")


def census_scrape(s, port):
    """The exporter's first scrape that has a census, checked by promtool."""
    deadline = time.monotonic() + 30
    while b"ghc_heap_profile_bytes" not in (text := scrape_bytes(port)):
        expect(time.monotonic() < deadline, "no census exported: %r" % text[-500:])
        time.sleep(0.2)
    rc, out = promtool(s, text)
    expect(rc == 0, "promtool check metrics: %s" % out)
    return text


@test(ghc_free=True)
def metrics_labels_any_bytes(s):
    """A program whose census labels, name and socket path are not all
    UTF-8 (a lone 0xC3 left by a cut, 0xFF, a path planted with 0xFF):
    the exposition passes `promtool check metrics`, and every label reads
    as the rule says (U+FFFD for each bad byte, a cut between characters)."""
    d = os.fsencode(s.path("g"))
    os.mkdir(d)
    path = os.fsdecode(d + b"/prog\xff.sock")
    data = fp.eventlog(fp.block(fp.program([b"/bin/prog\xfe", b"x"], 4242) + fp.heap_profile()
                                + fp.census(500, [(l, 1000 * (i + 1)) for i, l in
                                                  enumerate(LABELS)]) + fp.gc(600)), end=False)
    fp.start(s, path, data)
    exporter, port = start_metrics(s, os.fsdecode(d) + "/*.sock", extra=["--top-labels", "10"])
    text = census_scrape(s, port)
    sm = samples(text.decode("utf-8"))
    got = {dict(k[1])["label"] for k in sm if k[0] == "ghc_heap_profile_bytes"}
    want = {"ok", "a" * 494 + fnv(LONG), "bad\ufffd(" + fnv(b"bad\xc3("),
            "\ufffd\ufffd" + fnv(b"\xff\xfe"),
            'quote\\"back\\\\slash\ufffdline' + fnv(b'quote"back\\slash\nline')}
    expect(want <= got, "labels %r, want %r" % (sorted(got), sorted(want)))
    expect(value(sm, "ghc_gc_collections_total", program="prog\ufffd", pid="4242",
                 generation="0",
                 source="unix:" + os.fsdecode(d) + "/prog\ufffd.sock"), "no series of prog")
    note("promtool passes; labels %s" % sorted(lab[:12] for lab in got))


# Labels hp2ps cannot read as they are, beside the labels they would
# become, and the .hp line each is: white space and a leading quote become
# '_', an empty label '_', and a label so changed, or a word of the format,
# is renamed by the rule (the suffix of the label the command keeps).
HP_LABELS = [(b"a b", "a b", "a_b" + fnv(b"a b")), (b"a_b", "a_b", "a_b"),
             (b"", "", "_" + fnv(b"")), (b"_", "_", "_"),
             (b"MARK", "MARK", "MARK" + fnv(b"MARK")), (b"MARK_", "MARK_", "MARK_"),
             (b'"q', '"q', "_q" + fnv(b'"q')), (b"_q", "_q", "_q"),
             (b"tab\there", "tab\ufffdhere" + fnv(b"tab\there"),
              "tab\ufffdhere" + fnv(b"tab\there")),
             (b"ok", "ok", "ok")]
HP_LABELS += [(raw, kept, kept.replace(" ", "_") + fnv(kept.encode()) if " " in kept else kept)
              for raw, kept in HOSTILE]


def hp_lines(path):
    """The samples of a .hp file as lists of (label, bytes), every line
    kept (a label twice in a sample is two)."""
    out, cur = [], None
    with open(path, encoding="utf-8") as f:
        for line in f.read().splitlines():
            if line.startswith("BEGIN_SAMPLE "):
                cur = []
            elif line.startswith("END_SAMPLE "):
                out.append(cur)
                cur = None
            elif cur is not None:
                label, n = line.rsplit("\t", 1)
                cur.append((label, int(n)))
    return [x for x in out if x]


@test(ghc_free=True)
def heap_writes_labels_its_readers_read(s):
    """`heap --hp`, `heap --csv` and `table census --csv` of census labels
    that were one line before (bytes that are not UTF-8, long labels
    sharing their start, the command's own "(other labels)", control
    characters, white space, an empty label, a word of the .hp format, each
    beside the label it used to become, and one label sent twice in a
    census): hp2ps reads the .hp file, and each sample has one line per
    label, with its bytes; pandas reads both CSV files alike, one row per
    label and census, and the labels are the rule's."""
    if shutil.which("hp2ps") is None:
        raise Skip("hp2ps (GHC's) is not installed")
    log = s.path("labels.eventlog")
    sent = [raw for raw, _, _ in HP_LABELS] + [b"ok"]
    with open(log, "wb") as f:
        f.write(fp.eventlog(fp.block(
            fp.program([b"labels"], 7) + fp.heap_profile() +
            fp.census(500, [(raw, 100 * (i + 1)) for i, raw in enumerate(sent)]) +
            fp.census(900, [(raw, 200 * (i + 1)) for i, raw in enumerate(sent)]))))
    hp, csv, census = s.path("l.hp"), s.path("l.csv"), s.path("census.csv")
    for args in (["heap", log, "--hp", hp], ["heap", log, "--csv", csv],
                 ["table", "census", log, "--csv", census]):
        rc, _, err = Cmd(s, args).wait(30)
        expect(rc == 0, "%s: exit %d, %s" % (" ".join(args[:2]), rc, err))
    res = subprocess.run(["hp2ps", os.path.basename(hp)], cwd=s.dir, capture_output=True,
                         text=True, timeout=60)
    expect(res.returncode == 0, "hp2ps rejects heap --hp's file: %s" % res.stderr.strip())
    n = len(HP_LABELS)
    ok_bytes = 100 * (HP_LABELS.index((b"ok", "ok", "ok")) + 1) + 100 * len(sent)

    def want(scale, col):
        return sorted((lab[col], scale * (ok_bytes if lab[0] == b"ok" else 100 * (i + 1)))
                      for i, lab in enumerate(HP_LABELS))
    samples_ = hp_lines(hp)
    expect(len(samples_) == 2, "%d samples in the .hp" % len(samples_))
    for k, lines in enumerate(samples_):
        labels = [lab for lab, _ in lines]
        expect(len(set(labels)) == len(labels) == n, ".hp sample %d: %d lines, %d labels, %d sent"
               % (k, len(labels), len(set(labels)), n))
        expect(sorted(lines) == want(k + 1, 2), ".hp sample %d: %r, want %r"
               % (k, sorted(lines)[:6], want(k + 1, 2)[:6]))
    if not os.path.exists(DEBIAN_PYTHON):
        raise Skip("Debian's python3-pandas is not installed (scripts/ensure-deps.sh)")
    out = pandas_run("import json\nimport pandas as pd\n"
                     "a = pd.read_csv(%r, keep_default_na=False, dtype={'label': str})\n"
                     "b = pd.read_csv(%r, keep_default_na=False, dtype={'label': str})\n"
                     "print(json.dumps([[list(r) for r in x[['time_s', 'label', 'bytes']]"
                     ".itertuples(index=False)] for x in (a, b)] +\n"
                     "    [int(x.duplicated(['time_s', 'label']).sum()) for x in (a, b)]))\n"
                     % (csv, census))
    if out is None:
        raise Skip("Debian's python3-pandas is not installed (scripts/ensure-deps.sh)")
    heap_rows, table_rows, heap_dups, table_dups = json.loads(out)
    expect(heap_dups == 0 and table_dups == 0, "rows of one label and census twice: heap --csv "
           "%d, table census %d" % (heap_dups, table_dups))
    expect(heap_rows == table_rows, "heap --csv %r, table census %r" % (heap_rows[:6],
                                                                        table_rows[:6]))
    for k, t in enumerate((0.5, 0.9)):
        got, wanted = sorted((lab, b) for ts, lab, b in heap_rows if abs(ts - t) < 1e-9), \
            want(k + 1, 1)
        expect(got == wanted, "CSV census %d: only there %r, only wanted %r"
               % (k, sorted(set(got) - set(wanted)), sorted(set(wanted) - set(got))))
    note("%d labels sent, %d lines a sample in the .hp and rows a census in both CSV files; "
         "hp2ps reads the .hp" % (len(sent), n))


@test(ghc_free=True, timeout=180)
def metrics_hostile_labels_each_a_series(s):
    """A program whose census labels were one series before (bytes that are
    not UTF-8, long labels sharing their start, "other", the command's own
    "(other labels)", one label twice) and hold control characters, with
    more labels than --top-labels: a real Prometheus scraping the exporter
    has one series per label, each with its own bytes, and the rest line
    "other" apart from the program's own "other"; no control character is
    in the exposition, and the labels are the same in every scrape."""
    d = s.path("h")
    os.mkdir(d)
    lines = [(raw, 10000 - 100 * i) for i, (raw, _) in enumerate(HOSTILE)]
    lines += [(b"ok", 100), (b"ok", 50), (b"small1", 10), (b"small2", 20)]
    want = {kept + fnv(b"other") if kept == "other" else kept: float(10000 - 100 * i)
            for i, (_, kept) in enumerate(HOSTILE)}
    want.update({"ok": 150.0, "other": 30.0})  # the rest: small1 and small2
    data = fp.eventlog(fp.block(fp.program([b"/bin/hostile"], 4343) + fp.heap_profile()
                                + fp.census(500, lines) + fp.gc(600)), end=False)
    fp.start(s, d + "/p.sock", data)
    exporter, port = start_metrics(s, "unix:" + d + "/p.sock",
                                   extra=["--top-labels", str(len(HOSTILE) + 1)])
    text = census_scrape(s, port)

    def census_lines(t):
        return {x for x in t.split(b"\n") if x.startswith(b"ghc_heap_profile_bytes{")}
    first, again = census_lines(text), census_lines(scrape_bytes(port))
    expect(first == again, "two scrapes differ: %r" % (first ^ again))
    prom = start_prometheus(s, port)
    if prom is None:
        raise Skip("prometheus (Debian's package) is not installed")
    q = 'ghc_heap_profile_bytes{pid="4343"}'
    got, deadline = {}, time.monotonic() + 90
    while True:
        r = prom_query(prom, q) or []
        got = {x["metric"].get("label"): float(x["value"][1]) for x in r}
        if len(r) >= len(want) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    expect(len(r) == len(got) == len(want), "Prometheus has %d series of %s (%d labels), want %d"
           % (len(r), q, len(got), len(want)))
    expect(got == want, "Prometheus: only there %r; only wanted %r"
           % (sorted(set(got.items()) - set(want.items()))[:4],
              sorted(set(want.items()) - set(got.items()))[:4]))
    bad = re.findall(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", text)
    expect(not bad, "control characters in the exposition: %r" % bad[:5])
    note("Prometheus has all %d series of %d labels sent, each with its bytes"
         % (len(got), len(lines)))
