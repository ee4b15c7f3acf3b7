# SPDX-License-Identifier: BSD-3-Clause
"""Labels no honest RTS writes, and one an honest program does (a long
label cut in the middle of a character), through everything the
`eventlog-socket` command writes: the Prometheus exposition (judged by
promtool), the .hp file (hp2ps) and the CSV of `heap` and `table census`
(pandas). One rule for text that is not UTF-8 everywhere: a byte that
starts no character is U+FFFD, and a cut falls between characters."""

import json
import os
import shutil
import subprocess
import time
import urllib.request

import fakeprog as fp
from client_cmd import Cmd
from harness import Skip, expect, note, test
from test_client_metrics import samples, start_metrics, value
from test_client_table import DEBIAN_PYTHON, pandas_run

LONG = b"a" * 510 + "\u00e9".encode()  # cut at 511 bytes by the model: a lone 0xC3 before
LABELS = [b"ok", LONG, b"bad\xc3(", b"\xff\xfe", b'quote"back\\slash\nline']


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
    deadline = time.monotonic() + 30
    while b"ghc_heap_profile_bytes" not in (text := scrape_bytes(port)):
        expect(time.monotonic() < deadline, "no census exported: %r" % text[-500:])
        time.sleep(0.2)
    rc, out = promtool(s, text)
    expect(rc == 0, "promtool check metrics: %s" % out)
    sm = samples(text.decode("utf-8"))
    got = {dict(k[1])["label"] for k in sm if k[0] == "ghc_heap_profile_bytes"}
    want = {"ok", "a" * 510, "bad\ufffd(", "\ufffd\ufffd", 'quote\\"back\\\\slash\\nline'}
    expect(want <= got, "labels %r, want %r" % (sorted(got), sorted(want)))
    expect(value(sm, "ghc_gc_collections_total", program="prog\ufffd", pid="4242",
                 generation="0",
                 source="unix:" + os.fsdecode(d) + "/prog\ufffd.sock"), "no series of prog")
    note("promtool passes; labels %s" % sorted(lab[:12] for lab in got))


HP_LABELS = [b"a b", b"c\rd", b"", b"MARK", b'"q', b"x\xffy", LONG, b"tab\there"]


@test(ghc_free=True)
def heap_writes_labels_its_readers_read(s):
    """`heap --hp` of census labels with spaces, a carriage return, a tab,
    an empty one, one that is a word of the .hp format, one opening with a
    quote and bytes that are not UTF-8: hp2ps reads the file (white space
    and a leading quote become '_', the format word gets a '_', the empty
    label is '_'); `heap --csv` and `table census --csv` are read by
    pandas in one call and give the same labels (U+FFFD for bad bytes)."""
    if shutil.which("hp2ps") is None:
        raise Skip("hp2ps (GHC's) is not installed")
    log = s.path("labels.eventlog")
    with open(log, "wb") as f:
        f.write(fp.eventlog(fp.block(
            fp.program([b"labels"], 7) + fp.heap_profile() +
            fp.census(500, [(l, 100 * (i + 1)) for i, l in enumerate(HP_LABELS)]) +
            fp.census(900, [(l, 200 * (i + 1)) for i, l in enumerate(HP_LABELS)]))))
    hp, csv, census = s.path("l.hp"), s.path("l.csv"), s.path("census.csv")
    for args in (["heap", log, "--hp", hp], ["heap", log, "--csv", csv],
                 ["table", "census", log, "--csv", census]):
        rc, _, err = Cmd(s, args).wait(30)
        expect(rc == 0, "%s: exit %d, %s" % (" ".join(args[:2]), rc, err))
    res = subprocess.run(["hp2ps", os.path.basename(hp)], cwd=s.dir, capture_output=True,
                         text=True, timeout=60)
    expect(res.returncode == 0, "hp2ps rejects heap --hp's file: %s" % res.stderr.strip())
    body = open(hp, "rb").read().decode("utf-8")
    for label in ("a_b", "c_d", "_", "MARK_", "_q", "x\ufffdy", "a" * 510, "tab_here"):
        expect("\n%s\t" % label in body, "no .hp line for %r" % label)
    if not os.path.exists(DEBIAN_PYTHON):
        raise Skip("Debian's python3-pandas is not installed (scripts/ensure-deps.sh)")
    out = pandas_run("import json\nimport pandas as pd\n"
                     "a = pd.read_csv(%r, keep_default_na=False)\n"
                     "b = pd.read_csv(%r, keep_default_na=False)\n"
                     "print(json.dumps([sorted(a.label), sorted(b.label)]))\n" % (csv, census))
    if out is None:
        raise Skip("Debian's python3-pandas is not installed (scripts/ensure-deps.sh)")
    heap_labels, table_labels = json.loads(out)
    expect(heap_labels == table_labels, "heap --csv %r, table census %r"
           % (heap_labels, table_labels))
    want = sorted(2 * ["a b", "c\rd", "", "MARK", '"q', "x\ufffdy", "a" * 510, "tab\there"])
    expect(heap_labels == want, "pandas read %r, want %r" % (heap_labels, want))
    note("hp2ps reads heap --hp; pandas reads heap --csv and table census alike")
