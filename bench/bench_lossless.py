"""The lossless choice: the tracer-style workload (a flood of user
messages) with one client that parses every event as it reads, under the
default drop policy and under GHC_EVENTLOG_SLOW_CLIENT=wait, against the
RTS's file writer, interleaved in one run. Under `wait` the program may
take longer than with the file writer only by what the client's own
slowness explains: the drop-policy run with the same client shows how much
that client skips instead (its drop notices)."""

import statistics

import benchlib
from benchlib import fmt, median_min_max, paired_ratios, run_workload

NAME = "lossless"


def run(b):
    args = ["trace", "4", "400000"]
    configs = ["file", "parse", "lossless"]
    times = {c: [] for c in configs}
    cpu = {c: [] for c in configs}
    notices = {c: [] for c in configs}
    stats = {c: [] for c in configs}
    run_workload(b, args, "file", b.path("w.sock"))  # warm caches
    for _ in range(max(benchlib.REPS, 5)):
        for c in configs:
            b.last_drop_notices = None
            times[c].append(run_workload(b, args, c, b.path("w.sock"), stats[c], cpu=cpu[c]))
            if b.last_drop_notices is not None:
                notices[c].append(b.last_drop_notices)
    ref = statistics.median(times["file"])
    out = {}
    for c in configs:
        out[c] = dict(median_min_max(times[c]), ratio_to_file=statistics.median(times[c]) / ref,
                      round_ratios=paired_ratios(times[c], times["file"]),
                      cpu_s=median_min_max(cpu[c]))
        if notices[c]:
            out[c]["drop_notices"] = median_min_max(notices[c])
        waits = [s.get("lossless_wait_ns", 0) / 1e9 for s in stats[c] if s]
        if waits:
            out[c]["wait_s"] = median_min_max(waits)
    b.results["lossless"] = out


def report(r, add):
    if "lossless" not in r:
        return
    add("")
    add("10. Lossless: the trace workload with one event-parsing client (wall time, s; ratio of "
        "medians to the RTS file writer; median (min..max) of each round's ratio)")
    for c, m in r["lossless"].items():
        extra = ""
        if "drop_notices" in m:
            extra += "  drop notices %s" % fmt(m["drop_notices"], "", 0)
        if "wait_s" in m:
            extra += "  waited %s s" % fmt(m["wait_s"], "", 2)
        add("   %-9s %s  x%.3f  rounds x%s  CPU %s s%s" % (
            c, fmt(m, "", 3), m["ratio_to_file"], fmt(m["round_ratios"], "", 3),
            fmt(m["cpu_s"], "", 2), extra))
