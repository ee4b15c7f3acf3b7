# SPDX-License-Identifier: BSD-3-Clause
"""A recording with drop notices (protocol.md 1.3) read by every
subcommand that judges a stream's end: each one's last line says "with
gaps: N chunks (X MiB) missing in K drop notices, ..." in the words
`record` ends with, the figures those of the notices ghc-events reads in
the file, and the exit status stays that of a complete stream (0)."""

import re
import signal

from client_cmd import Cmd, last_line, run
from harness import FLOOD, Program, check_stream, expect, note, test

GAPS = re.compile(r"with gaps: (\d+) chunks? \(([\d.]+) MiB\) missing in (\d+) drop notices?, "
                  r"(?:at ([\d.]+) s|the first at ([\d.]+) s, the last at ([\d.]+) s)")
DROP = re.compile(r"eventlog-socket: dropped (\d+) chunks? \(([\d.]+) MiB\)")


def work(p, secs):
    """The probe allocates for `secs` seconds: heap censuses (-hT -i0.05)."""
    p.proc.stdin.write(("work %d 20\n" % secs).encode())
    p.proc.stdin.flush()
    answer = p.readline(120)
    expect(answer.startswith("ok "), "probe answered %r to work" % answer)


def recording_with_drops(s):
    """A program with a heap profile, recorded by a `record` that stops
    reading (SIGSTOP) while the program floods: the server skips chunks for
    it and says so in the stream. Returns (file, record's stderr)."""
    sock = s.path("gaps.sock")
    p = Program(s, "probe", unix=sock, wait=True, rts=["-hT", "-i0.05"],
                env={"GHC_EVENTLOG_CLIENT_BUFFER": "1M"})
    p.wait_socket(sock)
    out = s.path("gaps.eventlog")
    rec = Cmd(s, ["record", sock, "-o", out])
    p.cmd("flood 1000 before")
    work(p, 1)
    rec.signal(signal.SIGSTOP)
    p.cmd("flood %d during" % (FLOOD * 3))
    rec.signal(signal.SIGCONT)
    p.cmd("flood 1000 after")
    work(p, 1)
    p.cmd("quit")
    p.finish()
    rc, _, err = rec.wait(timeout=60)
    expect(rc == 0, "record: exit %d: %s" % (rc, err))
    return out, err


def oracle(s, path):
    """The drop notices ghc-events reads in the file: (count, chunks, MiB,
    first time, last time), times in seconds."""
    with open(path, "rb") as f:
        summ = check_stream(s, f.read(), "gaps-oracle")
    drops = [(t, DROP.match(m)) for t, m in summ.messages if DROP.match(m)]
    expect(drops, "the recording has no drop notices: the recorder never fell behind")
    return (len(drops), sum(int(m.group(1)) for _, m in drops),
            sum(float(m.group(2)) for _, m in drops), drops[0][0] / 1e9, drops[-1][0] / 1e9)


def says_the_gaps(who, line, want):
    """`line` says the gaps `want` (oracle) in record's words."""
    m = GAPS.search(line)
    expect(m, "%s: the last line does not say \"with gaps: ...\": %r" % (who, line))
    n, chunks, mib, first, last = want
    got_first = float(m.group(4) or m.group(5))
    got_last = float(m.group(4) or m.group(6))
    expect(int(m.group(3)) == n and int(m.group(1)) == chunks,
           "%s: says %s drop notices, %s chunks; ghc-events reads %d notices, %d chunks: %r"
           % (who, m.group(3), m.group(1), n, chunks, line))
    # The notices give MiB to one decimal or more; their sum, rounded once.
    expect(abs(float(m.group(2)) - mib) <= 0.05 * n + 0.05,
           "%s: says %s MiB, the notices add up to %.2f MiB: %r" % (who, m.group(2), mib, line))
    expect(abs(got_first - first) < 0.0015 and abs(got_last - last) < 0.0015,
           "%s: says the first at %.3f s and the last at %.3f s; ghc-events: %.3f s, %.3f s"
           % (who, got_first, got_last, first, last))


@test(timeout=240)
def every_subcommand_says_the_gaps(s):
    """record, heap, table, report, report A B and compare (with and
    without --csv) on one recording with drop notices: each last line says
    the gaps in the same words, with the figures of the notices in the
    file (ghc-events), and each exits 0, as for a complete stream."""
    path, rec_err = recording_with_drops(s)
    want = oracle(s, path)
    note("ghc-events: %d drop notices, %d chunks, %.2f MiB, %.3f s to %.3f s" % want)
    says_the_gaps("record", last_line(rec_err), want)
    words = GAPS.search(last_line(rec_err)).group(0)
    runs = [
        ("heap", ["heap", path, "--csv", s.path("heap.csv")]),
        ("table", ["table", "gc", path, "--csv", s.path("gc.csv")]),
        ("report", ["report", path, "-o", s.path("r.html")]),
        ("report A B", ["report", path, path, "-o", s.path("r2.html")]),
        ("compare", ["compare", path, path]),
        ("compare --csv", ["compare", path, path, "--csv", s.path("cmp.csv")]),
    ]
    for who, args in runs:
        rc, _, err = run(s, args, timeout=120)
        line = last_line(err)
        note("%s: %s" % (who, line))
        expect(rc == 0, "%s: exit %d (a stream with gaps is complete): %s" % (who, rc, err))
        says_the_gaps(who, line, want)
        expect(words in line, "%s: not record's words (%r): %r" % (who, words, line))
