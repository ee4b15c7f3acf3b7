# SPDX-License-Identifier: BSD-3-Clause
"""Overhead on a real program: the workload's wall time with no eventlog,
the RTS's file writer, one and eight draining clients and a stalled one,
interleaved; then one draining client against the file writer alone."""

import statistics

import benchlib
from benchlib import fmt, median_min_max, paired_ratios, run_workload

NAME = "overhead"


def run(b):
    workloads = {
        "gc": ["gc", "8", "30"],
        "trace": ["trace", "4", "400000"],
    }
    configs = ["none", "file", "socket1", "socket8", "stalled"]
    out = {}
    for wname, args in workloads.items():
        times = {c: [] for c in configs}
        flushes = {c: [] for c in configs}
        run_workload(b, args, "file", b.path("w.sock"))  # warm caches
        for _ in range(max(benchlib.REPS, benchlib.OVERHEAD_REPS)):
            for c in configs:  # interleaved
                times[c].append(run_workload(b, args, c, b.path("w.sock"),
                                             flushes[c]))
        ref = statistics.median(times["file"])
        out[wname] = {c: dict(median_min_max(times[c]),
                              ratio_to_file=statistics.median(times[c]) / ref,
                              # Each run against the file run of its round.
                              round_ratios=paired_ratios(times[c], times["file"]))
                      for c in configs}
        for c in configs:
            if flushes[c]:
                out[wname][c]["flushes"] = median_min_max([f["flushes"] for f in flushes[c]])
                out[wname][c]["flush_ms"] = median_min_max(
                    [f["flush_us"] / 1000 for f in flushes[c]])
    # The trace program on one capability too: on two, part of what it
    # costs may be its capabilities contending for the RTS's event buffer
    # descriptors, not the library's work (BENCHMARKS.md, section 1).
    focus_runs = {"gc": (workloads["gc"], 2), "trace": (workloads["trace"], 2),
                  "trace-N1": (workloads["trace"], 1)}
    focus = {}
    for wname, (args, caps) in focus_runs.items():
        times = {"file": [], "socket1": []}
        cpu = {"file": [], "socket1": []}
        for i in range(max(benchlib.REPS, benchlib.FOCUS_REPS)):
            for c in (("file", "socket1") if i % 2 == 0 else ("socket1", "file")):
                times[c].append(run_workload(b, args, c, b.path("w.sock"), caps=caps,
                                             cpu=cpu[c]))
        focus[wname] = {
            "caps": caps,
            "file": median_min_max(times["file"]),
            "socket1": median_min_max(times["socket1"]),
            "ratio": statistics.median(times["socket1"]) / statistics.median(times["file"]),
            "round_ratios": paired_ratios(times["socket1"], times["file"]),
            "cpu_s": {c: median_min_max(cpu[c]) for c in cpu},
            "cpu_ratio": statistics.median(cpu["socket1"]) / statistics.median(cpu["file"])}
    b.results["overhead"] = out
    b.results["overhead_one_client"] = focus


def report(r, add):
    if "overhead" not in r:
        return
    add("")
    add("1. Overhead on a real program (wall time, s, %d runs; ratio of medians to the RTS "
        "file writer on tmpfs; median (min..max) of each round's ratio)"
        % max(benchlib.REPS, benchlib.OVERHEAD_REPS))
    for w, cs in r["overhead"].items():
        for c, m in cs.items():
            add("   %-6s %-8s %s  x%.3f  rounds x%s%s" % (
                w, c, fmt(m, "", 3), m["ratio_to_file"], fmt(m["round_ratios"], "", 3),
                "  flushes %s taking %s ms" % (fmt(m["flushes"], "", 0),
                                               fmt(m["flush_ms"], "", 1))
                if "flushes" in m else ""))
    if "overhead_one_client" in r:
        add("   one draining client against the file writer alone, alternating (%d rounds):" %
            r["runs"].get("overhead_one_client", 0))
        for w, m in r["overhead_one_client"].items():
            add("   %-8s file %s  socket1 %s  x%.3f  rounds x%s" % (
                w, fmt(m["file"], "", 3), fmt(m["socket1"], "", 3), m["ratio"],
                fmt(m["round_ratios"], "", 3)))
            if "cpu_s" in m:
                add("   %-8s CPU s, program and clients: file %s  socket1 %s  x%.3f" % (
                    "", fmt(m["cpu_s"]["file"], "", 3), fmt(m["cpu_s"]["socket1"], "", 3),
                    m["cpu_ratio"]))
