# SPDX-License-Identifier: BSD-3-Clause
"""A client flooding census requests against one that only drains, on the
heap-heavy workload with heap profiling on."""

import statistics

import benchlib
from benchlib import fmt, median_min_max, paired_ratios, run_workload

NAME = "control"


def run(b):
    """The heap-heavy workload with heap profiling on (-hT, no timed
    samples) and one draining client, against the same with a client
    that sends census requests as fast as it can: with the rate limit
    (one census a second) the flood should cost the program next to
    nothing."""
    # Long enough (about 5 s) that the first census, which acts at once
    # and before the library knows what one costs, is not most of it.
    args = ["gc", "8", "100"]
    rts = ["-hT", "-i100"]
    times = {"socket1": [], "socket-census-flood": []}
    cpu = {c: [] for c in times}
    for i in range(max(benchlib.REPS, 5)):
        for c in (("socket1", "socket-census-flood") if i % 2 == 0 else
                  ("socket-census-flood", "socket1")):
            times[c].append(run_workload(b, args, c, b.path("w.sock"), cpu=cpu[c],
                                         rts_extra=rts))
    b.results["control"] = {
        "workload": " ".join(args + ["+RTS"] + rts + ["-RTS"]),
        "socket1": median_min_max(times["socket1"]),
        "census_flood": median_min_max(times["socket-census-flood"]),
        "ratio": statistics.median(times["socket-census-flood"]) /
        statistics.median(times["socket1"]),
        "round_ratios": paired_ratios(times["socket-census-flood"], times["socket1"]),
        "cpu_ratio": statistics.median(cpu["socket-census-flood"]) /
        statistics.median(cpu["socket1"])}


def report(r, add):
    if "control" not in r:
        return
    m = r["control"]
    add("")
    add("1b. A client flooding census requests (%s; wall s, alternating rounds)" %
        m["workload"])
    add("   draining only %s  flooding %s  x%.3f  rounds x%s  CPU x%.3f" % (
        fmt(m["socket1"], "", 3), fmt(m["census_flood"], "", 3), m["ratio"],
        fmt(m["round_ratios"], "", 3), m["cpu_ratio"]))
