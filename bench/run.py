#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""make bench: what does streaming cost a program? Every figure is the
median (with min and max) of repeated runs, and every comparison is a ratio
against a reference measured in the same run of this script, interleaved
with it so that drift on a shared machine hits both alike.

    python3 bench/run.py [--build DIR] [--reps N] [--quick] [--only SECTIONS]
                         [--same-session]

SECTIONS is a comma-separated list of overhead, instructions, control,
throughput, memory, latency, walk, record, top, serve, lossless, trust, flight
and classes
(default: all), each measured by bench/bench_<section>.py (what they share is in
bench/benchlib.py). Prints a table and writes DIR/bench/results.json, or
results-SECTIONS.json when --only picks some.
Every process it starts has a timeout and is killed on the way out;
sockets and recordings live in a temporary directory that is removed at
the end (scripts/pylib/esproc.py).

Programs and clients start in sessions of their own (as a client started in
another terminal would be), which on Linux with autogrouping also gives each
its own share of the CPU; --same-session keeps them in this script's, to
compare."""

import argparse
import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
import bench_classes  # noqa: E402
import bench_control  # noqa: E402
import bench_flight  # noqa: E402
import bench_instructions  # noqa: E402
import bench_latency  # noqa: E402
import bench_lossless  # noqa: E402
import bench_memory  # noqa: E402
import bench_overhead  # noqa: E402
import bench_record  # noqa: E402
import bench_serve  # noqa: E402
import bench_throughput  # noqa: E402
import bench_top  # noqa: E402
import bench_trust  # noqa: E402
import bench_walk  # noqa: E402

# In the order they run and are reported.
SECTIONS = [bench_overhead, bench_instructions, bench_control, bench_throughput, bench_memory,
            bench_latency, bench_walk, bench_record, bench_top, bench_serve, bench_lossless,
            bench_trust, bench_flight, bench_classes]
NAMES = [s.NAME for s in SECTIONS]


def report(r):
    lines = []
    lines.append("eventlog-socket benchmarks: median (min..max) of %d runs; ratios of medians"
                 % benchlib.REPS)
    for section in SECTIONS:
        section.report(r, lines.append)
    return "\n".join(lines)


def main(argv):
    ap = argparse.ArgumentParser(description="The benchmarks (BENCHMARKS.md).")
    ap.add_argument("--build", default="build", help="the build directory (default: build)")
    ap.add_argument("--reps", type=int, metavar="N",
                    help="every figure the median of N runs (default: %d, more for some)"
                    % benchlib.REPS)
    ap.add_argument("--quick", action="store_true", help="a shorter memory section (3 s)")
    ap.add_argument("--only", metavar="SECTIONS",
                    help="comma-separated sections: %s (default: all)" % ", ".join(NAMES))
    ap.add_argument("--same-session", action="store_true",
                    help="start programs and clients in this script's session")
    args = ap.parse_args(argv)
    only = NAMES
    if args.only:
        only = args.only.split(",")
        unknown = [x for x in only if x not in NAMES]
        if unknown:
            ap.error("unknown section %s (known: %s)" % (", ".join(unknown), ", ".join(NAMES)))
    benchlib.BUILD = args.build
    benchlib.QUICK = args.quick
    benchlib.SAME_SESSION = args.same_session
    if args.reps is not None:
        benchlib.REPS = benchlib.THROUGHPUT_REPS = args.reps
        benchlib.OVERHEAD_REPS = benchlib.FOCUS_REPS = args.reps
    b = benchlib.Bench()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.monotonic()
    try:
        b.results["machine"] = {"ghc": benchlib.ghc_version(), "cores": os.cpu_count(),
                                "kernel": os.uname().release,
                                "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                                "same_session": benchlib.SAME_SESSION}
        b.results["runs"] = {"default": benchlib.REPS,
                             "throughput": max(benchlib.REPS, benchlib.THROUGHPUT_REPS),
                             "overhead": max(benchlib.REPS, benchlib.OVERHEAD_REPS),
                             "overhead_one_client": max(benchlib.REPS, benchlib.FOCUS_REPS)}
        for section in SECTIONS:
            if section.NAME in only:
                section.run(b)
    finally:
        b.close()
    b.results["seconds"] = time.monotonic() - started
    out = os.path.join(args.build, "bench", "results.json" if only == NAMES else
                       "results-%s.json" % "-".join(only))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(b.results, f, indent=2)
    print(report(b.results))
    print("\n(%.0f s; results in %s)" % (b.results["seconds"], out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
