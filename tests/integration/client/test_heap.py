# SPDX-License-Identifier: BSD-3-Clause
"""`eventlog-socket heap`: the heap profile out of an eventlog, recorded or
live, in GHC's .hp format (judged against the .hp file the RTS itself
writes, and by hp2ps) and as CSV."""

import csv
import os
import shutil
import subprocess
import time

import harness
from harness import GCTL, START, Program, check_stream, expect, ghc_version, note, serve, test


def client_path():
    return os.path.abspath(os.path.join(harness.BUILD, "eventlog-socket"))


def run_heap(*args, timeout=60):
    return subprocess.run([client_path(), "heap", *args], capture_output=True, text=True,
                          timeout=timeout)


def parse_hp(path, ordered=True):
    """The samples of a .hp file: a list of {label: bytes}, empty ones
    included, after checking the header lines hp2ps needs and, if
    `ordered` (a file this project writes), that sample times never go
    back. The RTS stamps its own samples with mutator CPU time (process
    CPU less GC CPU), which on a loaded machine once stepped back: its
    files are read with ordered=False."""
    with open(path) as f:
        lines = f.read().splitlines()
    for i, key in enumerate(["JOB", "DATE", "SAMPLE_UNIT", "VALUE_UNIT"]):
        expect(len(lines) > i and lines[i].startswith(key + ' "'),
               "%s: line %d should be %s, is %r" % (path, i + 1, key, lines[i:i + 1]))
    samples, cur, times = [], None, []
    for line in lines[4:]:
        if line.startswith("BEGIN_SAMPLE "):
            expect(cur is None, "%s: BEGIN_SAMPLE inside a sample" % path)
            cur = {}
            times.append(float(line.split()[1]))
        elif line.startswith("END_SAMPLE "):
            expect(cur is not None, "%s: END_SAMPLE outside a sample" % path)
            samples.append(cur)
            cur = None
        elif line.startswith("MARK "):
            continue
        else:
            expect(cur is not None, "%s: %r outside a sample" % (path, line))
            label, value = line.rsplit("\t", 1)
            cur[label] = int(value)
    expect(cur is None, "%s ends inside a sample" % path)
    expect(not ordered or times == sorted(times), "%s: sample times go backwards: %s"
           % (path, [t for t, u in zip(times, times[1:]) if u < t][:3]))
    return samples


def hp2ps(s, path):
    """Run hp2ps on `path` if this GHC has it; return whether it ran."""
    exe = shutil.which("hp2ps")
    if exe is None:
        libdir = subprocess.run([harness.HC, "--print-libdir"], capture_output=True,
                                text=True).stdout.strip()
        cand = os.path.join(libdir, "bin", "hp2ps")
        exe = cand if os.path.exists(cand) else None
    if exe is None:
        note("hp2ps not found: the .hp file is checked by its structure only")
        return False
    res = subprocess.run([exe, os.path.basename(path)], cwd=os.path.dirname(path),
                         capture_output=True, text=True, timeout=60)
    ps = path[:-3] + ".ps"
    expect(res.returncode == 0 and os.path.getsize(ps) > 0,
           "hp2ps failed on %s (%d): %s" % (path, res.returncode, res.stderr))
    return True


def record_with_rts_files(s, seconds=1.2):
    """Run the probe with the RTS's own file writer and -hT -i0.1, so the
    RTS writes both probe-late.hp and probe-late.eventlog; return their
    paths."""
    p = Program(s, "probe-late", ["--busy"], rts=["-hT", "-i0.1"])
    p.cmd("sleep %g" % seconds)
    p.cmd("quit")
    p.finish()
    hp, log = s.path("probe-late.hp"), s.path("probe-late.eventlog")
    expect(os.path.exists(hp) and os.path.exists(log), "the RTS wrote no .hp or no eventlog")
    return hp, log


@test
def heap_hp_equals_ghc(s):
    """`heap FILE --hp` of a recorded run gives what the RTS's own .hp file
    of that run says: the same samples, labels and bytes; hp2ps reads it."""
    ghc_hp, log = record_with_rts_files(s)
    ours = s.path("ours.hp")
    res = run_heap(log, "--hp", ours)
    expect(res.returncode == 0, "heap exited %d: %s" % (res.returncode, res.stderr))
    theirs, mine = parse_hp(ghc_hp, ordered=False), parse_hp(ours)
    real = [x for x in theirs if x]
    note("GHC's .hp: %d samples (%d with data); ours: %d" % (len(theirs), len(real), len(mine)))
    expect(len(real) >= 5, "the run gave only %d censuses" % len(real))
    expect(len(mine) == len(theirs),
           "%d samples in ours, %d in GHC's .hp" % (len(mine), len(theirs)))
    for i, (a, b) in enumerate(zip(mine, theirs)):
        if a != b:
            diff = sorted(set(a.items()) ^ set(b.items()))[:6]
            expect(False, "sample %d differs from GHC's (label, bytes): %s" % (i, diff))
    hp2ps(s, ours)


@test
def heap_csv_rows(s):
    """`heap FILE --csv`: a header row, then one row per (time, label,
    bytes), the same figures as the .hp output, times in order."""
    _, log = record_with_rts_files(s, seconds=0.6)
    hp, out = s.path("ours.hp"), s.path("ours.csv")
    res = run_heap(log, "--csv", out, "--hp", hp)
    expect(res.returncode == 0, "heap exited %d: %s" % (res.returncode, res.stderr))
    with open(out, newline="") as f:
        rows = list(csv.reader(f))
    expect(rows[0] == ["time_s", "label", "bytes"], "CSV header row is %r" % rows[0])
    samples = [x for x in parse_hp(hp) if x]
    by_time = {}
    for t, label, b in rows[1:]:
        by_time.setdefault(float(t), {})[label] = int(b)
    expect(list(by_time.values()) == samples,
           "the CSV rows (%d times) are not the .hp file's samples (%d)"
           % (len(by_time), len(samples)))
    times = [float(r[0]) for r in rows[1:]]
    expect(times == sorted(times) and times[0] > 0, "CSV times out of order or not positive")


@test
def heap_live_hp(s):
    """`heap ADDR --hp` against a running program (-hT -i0.1) writes every
    census the stream carries (as many as the checker counts in a plain
    client's copy), ends the file when the program exits, and hp2ps reads it."""
    # On GHC 9.2+ censuses reach clients as they are taken; they start only
    # once both clients are in (a second joining 0.1 s late on a busy
    # machine would miss the first ones). GHC 9.0 sends them all at exit.
    live = ghc_version() >= (9, 2)
    p, connect = serve(s, "heaplive", ["--busy"],
                       rts=["-hT", "-i0.1"] + (["--no-automatic-heap-samples"] if live else []))
    sock = s.path("heaplive.sock")
    out = s.path("live.hp")
    heap = subprocess.Popen([client_path(), "heap", "unix:" + sock, "--hp", out],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # The program waits for its first client; the second joins after.
        plain = connect()
        deadline = time.monotonic() + 10
        while p.stats()["clients_connected"] < 2:
            expect(time.monotonic() < deadline and heap.poll() is None,
                   "heap never connected: %s" % (heap.stderr.read() if heap.poll() is not None
                                                 else "timeout"))
            time.sleep(0.01)
        if live:
            plain.send(GCTL + START)
            # -i0.1 asks for a census every 0.1 s of the program's time, but
            # each waits for a collection: on a loaded machine 1.5 s held 2.
            # The program runs until the stream holds five; it is parsed as
            # it grows once its header is in (a loaded machine may not have
            # written a byte of it yet).
            plain.wait_header()
            deadline = time.monotonic() + 60
            while len(check_stream(s, plain.received(), "heaplive-so-far",
                                   partial=True).samples) < 5:
                expect(time.monotonic() < deadline, "fewer than 5 censuses in 60 s")
                p.cmd("sleep 0.5")
        else:
            p.cmd("sleep 1.5")
        p.cmd("quit")
        p.finish()
        _, err = heap.communicate(timeout=60)
    finally:
        if heap.poll() is None:
            heap.kill()
            heap.wait()
    expect(heap.returncode == 0, "heap exited %d: %s" % (heap.returncode, err))
    summary = check_stream(s, plain.wait_eof(), "heaplive")
    samples = parse_hp(out)
    real = [x for x in samples if x]
    note("live: %d censuses in ours, %d HEAP_PROF_SAMPLE_BEGIN in the stream; %s"
         % (len(real), len(summary.samples), err.strip()))
    expect(len(summary.samples) >= 5, "only %d samples in the stream" % len(summary.samples))
    expect(len(real) == len(summary.samples),
           "%d censuses written, %d in the stream" % (len(real), len(summary.samples)))
    expect(len(samples) == len(real) + 2, "the .hp file should start and end with an empty sample")
    expect(all("ARR_WORDS" in x or "THUNK" in x for x in real),
           "a -hT census without ARR_WORDS or THUNK")
    hp2ps(s, out)


@test
def heap_cut_file(s):
    """A recording cut in the middle: `heap` says so (exit 1), and the .hp
    file still ends properly with the censuses before the cut. On GHC 9.0,
    whose censuses come at exit, there are none before the cut: heap says
    so, naming GHC 9.0, and writes no file."""
    _, log = record_with_rts_files(s, seconds=0.8)
    with open(log, "rb") as f:
        data = f.read()
    cut = s.path("cut.eventlog")
    with open(cut, "wb") as f:
        f.write(data[:len(data) * 2 // 3])
    out = s.path("cut.hp")
    res = run_heap(cut, "--hp", out)
    expect(res.returncode == 1 and "cut" in res.stderr,
           "heap of a cut file exited %d: %s" % (res.returncode, res.stderr))
    if "no heap profile" in res.stderr:
        expect(ghc_version() < (9, 2) and "GHC 9.0" in res.stderr and not os.path.exists(out),
               "no censuses before the cut: %r" % res.stderr)
    else:
        samples = parse_hp(out)
        expect(samples and not samples[-1], "the cut .hp file does not end with an empty sample")
        hp2ps(s, out)
    # And the usage errors a user makes first.
    res = run_heap(log)
    expect(res.returncode == 2 and "usage" in res.stderr,
           "heap without --hp/--csv: %r" % res.stderr)
    res = run_heap(s.path("nonexistent.sock"), "--hp", out, "--connect-timeout", "1")
    expect(res.returncode == 2 and res.stderr.count("\n") == 1,
           "heap of a missing socket: exit %d, %r" % (res.returncode, res.stderr))
