#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Time profiles: what `eventlog-socket profile` costs per GiB of a
sample-heavy eventlog, and whether its memory stays bounded as the profile
grows longer.

A real recording of tests/programs/profiled (built with -prof -fprof-auto,
run with +RTS -p -l -N4: one busy capability, three idle ones; or --file
REC) has its events repeated into files of --mib and 4 x --mib MiB
(bench_parse's way). Then, for each file, the median of --reps runs of:

  - `table markers FILE --csv /dev/null`: the command's stream reader over
    every event, writing nothing (the reference, in the same run);
  - `profile FILE -o OUT` for .folded, .pb.gz and .speedscope.json;

each with its CPU seconds (user + system) per GiB and its peak RSS. The
profile's own work is its CPU less the reference's; its memory is bounded
when the 4x file's peak RSS is about the 1x file's (the stacks are kept
once; only the speedscope file, a time-ordered view, keeps runs of
samples, at most 4 Mi of them).

    python3 bench/bench_profile.py [--build build] [--file REC] [--mib 64] [--reps 3]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_parse  # noqa: E402  (replicate)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def record(build, d):
    """The profiled test program's own eventlog: built here, run in `d`."""
    hc = os.environ.get("HC", "ghc")
    ver = subprocess.run([hc, "--numeric-version"], capture_output=True, text=True).stdout
    major, minor = (int(x) for x in ver.strip().split(".")[:2])
    exe = os.path.join(d, "profiled")
    subprocess.run([hc, "-prof", "-fprof-auto", "-O", "-threaded", "-rtsopts"]
                   + (["-eventlog"] if (major, minor) < (9, 4) else [])
                   + ["-outputdir", os.path.join(d, "hs"), "-o", exe,
                      os.path.join(ROOT, "tests/programs/profiled/Main.hs")],
                   check=True, capture_output=True, timeout=600)
    subprocess.run([exe, "40", "+RTS", "-p", "-l", "-N4", "-RTS"], cwd=d, check=True,
                   stdout=subprocess.DEVNULL, timeout=600)
    with open(os.path.join(d, "profiled.eventlog"), "rb") as f:
        return f.read()


def measure(argv):
    """CPU seconds and peak RSS (KiB) of one run of `argv`."""
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit("%s exited %d" % (" ".join(argv), p.returncode))
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def cases(build, path, d):
    exe = os.path.join(build, "eventlog-socket")
    yield "table markers (reference)", [exe, "table", "markers", path, "--csv", os.devnull]
    for ext in (".folded", ".pb.gz", ".speedscope.json"):
        yield "profile -o " + ext, [exe, "profile", path, "-o", os.path.join(d, "out" + ext)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--file", help="a recorded eventlog with cost-centre samples")
    ap.add_argument("--mib", type=float, default=64, help="MiB of the shorter file")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="es-bench-profile-")
    try:
        data = open(a.file, "rb").read() if a.file else record(a.build, d)
        files = []
        for k in (1, 4):
            path = os.path.join(d, "x%d.eventlog" % k)
            files.append((k, path, bench_parse.replicate(data, a.mib * k, path)))
        print("recording: %d bytes, repeated to %s" % (
            len(data), " and ".join("%.0f MiB" % (n / 2**20) for _, _, n in files)))
        ref = {}
        for k, path, size in files:
            for name, argv in cases(a.build, path, d):
                runs = [measure(argv) for _ in range(a.reps)]
                cpu = statistics.median(r[0] for r in runs) / (size / 2**30)
                rss = max(r[1] for r in runs)
                if name.startswith("table"):
                    ref[k] = cpu
                print("%4.0f MiB  %-26s CPU %.3f s/GiB (x%.2f of the reference)  peak RSS "
                      "%.1f MiB" % (size / 2**20, name, cpu, cpu / ref[k], rss / 1024))
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
