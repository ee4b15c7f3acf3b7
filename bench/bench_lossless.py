# SPDX-License-Identifier: BSD-3-Clause
"""The lossless choice: the tracer-style workload (a flood of user
messages) with one client that parses every event as it reads, under the
default drop policy and under GHC_EVENTLOG_SLOW_CLIENT=wait, against the
RTS's file writer, interleaved in one run. Twice: with the client reading
as fast as it can, and with the client limited to SLOW_MBPS (slower than
the program writes). Under `wait` the program may take longer than with
the file writer only by what the client's own slowness explains: the
eventlog's size divided by the client's rate. The drop-policy run with
the same client shows what it skips instead (its drop notices)."""

import os
import statistics

import benchlib
from benchlib import fmt, median_min_max, paired_ratios, run_workload

NAME = "lossless"
SLOW_MBPS = 15
# The slow client may fall this far behind (GHC_EVENTLOG_CLIENT_BUFFER),
# well under the eventlog's size, so that under `drop` it is skipped and
# under `wait` the program waits.
SLOW_LIMIT = "4M"


def run(b):
    args = ["trace", "4", "400000"]
    configs = [("file", "file", 0), ("parse", "parse", 0), ("lossless", "lossless", 0),
               ("parse-slow", "parse", SLOW_MBPS), ("lossless-slow", "lossless", SLOW_MBPS)]
    times = {c: [] for c, _, _ in configs}
    cpu = {c: [] for c, _, _ in configs}
    notices = {c: [] for c, _, _ in configs}
    stats = {c: [] for c, _, _ in configs}
    run_workload(b, args, "file", b.path("w.sock"))  # warm caches
    size = os.path.getsize(b.path("file.eventlog"))
    for _ in range(max(benchlib.REPS, 5)):
        for name, config, mbps in configs:
            b.last_drop_notices = None
            times[name].append(run_workload(b, args, config, b.path("w.sock"), stats[name],
                                            cpu=cpu[name], client_mbps=mbps,
                                            env_extra={"GHC_EVENTLOG_CLIENT_BUFFER": SLOW_LIMIT}
                                            if mbps else None))
            if b.last_drop_notices is not None:
                notices[name].append(b.last_drop_notices)
    ref = statistics.median(times["file"])
    out = {"eventlog_bytes": size}
    for name, _, mbps in configs:
        m = dict(median_min_max(times[name]), ratio_to_file=statistics.median(times[name]) / ref,
                 round_ratios=paired_ratios(times[name], times["file"]),
                 cpu_s=median_min_max(cpu[name]))
        if mbps:
            # What the client's slowness alone explains: it cannot have
            # read the eventlog sooner than size / rate.
            m["explained_s"] = max(ref, size / (mbps * 1e6))
            m["ratio_to_explained"] = statistics.median(times[name]) / m["explained_s"]
        if notices[name]:
            m["drop_notices"] = median_min_max(notices[name])
        waits = [s.get("lossless_wait_ns", 0) / 1e9 for s in stats[name] if s]
        if waits:
            m["wait_s"] = median_min_max(waits)
        out[name] = m
    b.results["lossless"] = out


def report(r, add):
    if "lossless" not in r:
        return
    res = r["lossless"]
    add("")
    add("10. Lossless: the trace workload (%.0f MB of eventlog) with one event-parsing client, "
        "as fast as it reads and limited to %d MB/s with a 4 MiB client limit (wall time, s; "
        "ratio of medians to the RTS "
        "file writer; median (min..max) of each round's ratio; 'explained': the eventlog's size "
        "over the client's rate)" % (res.get("eventlog_bytes", 0) / 1e6, SLOW_MBPS))
    for c, m in res.items():
        if not isinstance(m, dict):
            continue
        extra = ""
        if "explained_s" in m:
            extra += "  x%.3f of explained %.2f s" % (m["ratio_to_explained"], m["explained_s"])
        if "drop_notices" in m:
            extra += "  drop notices %s" % fmt(m["drop_notices"], "", 0)
        if "wait_s" in m:
            extra += "  waited %s s" % fmt(m["wait_s"], "", 2)
        add("   %-13s %s  x%.3f  rounds x%s  CPU %s s%s" % (
            c, fmt(m, "", 3), m["ratio_to_file"], fmt(m["round_ratios"], "", 3),
            fmt(m["cpu_s"], "", 2), extra))
