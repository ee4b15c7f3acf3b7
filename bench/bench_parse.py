#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The parse alone: what the command's stream reader and model cost per
byte of a real eventlog (`metrics`, `top`, `serve`, `report` all parse
this way), without sockets, HTTP or other programs.

A real eventlog (fibber-c-main +RTS -hT, through `eventlog-socket
record`, as bench/bench_metrics.py makes it; or --file) has its events
repeated into a file of --mib MiB. Then, for each build given:

  - instructions (callgrind's Ir, which repeat to a few in 10^5 between
    runs, unlike times on a shared machine) of
    `eventlog-socket report FILE -o /dev/null` on a --cg-mib MiB copy and
    on one twice as long: the difference, per MiB, is the parse alone
    (start-up and the page, whose size the model bounds, cancel out);
  - CPU seconds (user + system) per GiB of the same command on the
    --mib MiB file, the median of --reps runs, builds interleaved.

With --base OLD_BUILD both builds run on the same file in the same run:
the ratio is the comparison (BENCHMARKS.md).

    python3 bench/bench_parse.py [--build build] [--base OLD] [--file REC] \\
        [--mib 256] [--cg-mib 16] [--reps 5]
"""
import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_metrics  # noqa: E402  (its recording)


def replicate(data, mib, path):
    """The header, the events repeated to about `mib` MiB, the end marker."""
    h = bench_metrics.header_len(data)
    body = data[h:-2] if data.endswith(b"\xff\xff") else data[h:]
    n = max(1, int(mib * 2**20 / len(body)))
    with open(path, "wb") as f:
        f.write(data[:h])
        for _ in range(n):
            f.write(body)
        f.write(b"\xff\xff")
    return os.path.getsize(path)


def command(build, path):
    return [os.path.join(build, "eventlog-socket"), "report", path, "-o", os.devnull]


def instructions(build, path, d):
    out = os.path.join(d, "cg.out")
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out]
                       + command(build, path), stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, timeout=1200)
    m = re.search(r"Collected : (\d+)", r.stderr)
    if m is None:
        sys.exit("callgrind gave no count:\n" + r.stderr[-2000:])
    return int(m.group(1))


def cpu_seconds(build, path):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command(build, path), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False, timeout=600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--base", help="another build to compare with, in the same run")
    ap.add_argument("--file", help="a recorded eventlog (default: record one)")
    ap.add_argument("--mib", type=float, default=256, help="MiB of the timed file")
    ap.add_argument("--cg-mib", type=float, default=16, help="MiB of the file under callgrind")
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    builds = [("build", a.build)] + ([("base", a.base)] if a.base else [])
    d = tempfile.mkdtemp(prefix="es-bench-parse-")
    try:
        data = open(a.file, "rb").read() if a.file else bench_metrics.record(a.build, d)
        big, small, double = (os.path.join(d, n) for n in ("big", "small", "double"))
        big_len = replicate(data, a.mib, big)
        small_len = replicate(data, a.cg_mib, small)
        double_len = replicate(data, 2 * a.cg_mib, double)
        print("recording: %d bytes; callgrind on %.1f and %.1f MiB, CPU time on %.1f MiB"
              % (len(data), small_len / 2**20, double_len / 2**20, big_len / 2**20))
        ir = {}
        for name, b in builds:
            one = instructions(b, small, d)
            two = instructions(b, double, d)
            ir[name] = (two - one) / ((double_len - small_len) / 2**20)
            print("%s (%s): %d and %d Ir; %.0f Ir per MiB parsed (%.2f per byte)"
                  % (name, b, one, two, ir[name], ir[name] / 2**20))
        cpu = {name: [] for name, _ in builds}
        for _ in range(a.reps):
            for name, b in builds:
                cpu[name].append(cpu_seconds(b, big) / (big_len / 2**30))
        for name, b in builds:
            print("%s: CPU per GiB parsed: median %.3f s (%s)"
                  % (name, statistics.median(cpu[name]),
                     " ".join("%.3f" % v for v in cpu[name])))
        if a.base:
            print("build / base: instructions x%.3f, CPU x%.3f"
                  % (ir["build"] / ir["base"],
                     statistics.median(cpu["build"]) / statistics.median(cpu["base"])))
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
