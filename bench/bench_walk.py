# SPDX-License-Identifier: BSD-3-Clause
"""The event walk (bench/walk) over a recording of the trace workload,
against memchr and against how fast the program produced it."""

import json
import os
import statistics
import subprocess
import time

import benchlib
from benchlib import fmt, median_min_max

NAME = "walk"


def run(b):
    rec = b.path("walk.eventlog")
    start = time.monotonic()
    subprocess.run([b.exe("bench/workload"), "trace", "4", "400000", "+RTS", "-N2", "-l",
                    "-ol" + rec, "-RTS"], check=True, timeout=benchlib.TIMEOUT,
                   stderr=subprocess.DEVNULL)
    took = time.monotonic() - start
    size = os.path.getsize(rec)
    production = size / 1e6 / took
    runs = []
    for _ in range(benchlib.REPS):
        res = subprocess.run([b.exe("bench/walk"), rec, "5"], capture_output=True,
                             text=True, timeout=benchlib.TIMEOUT, check=True)
        runs.append(json.loads(res.stdout))
    walk = [r["walk_mb_per_s"] for r in runs]
    b.results["event_walk"] = {
        "recording_mb": size / 1e6, "events": runs[0]["events"],
        "walk_mb_per_s": median_min_max(walk),
        "memchr_mb_per_s": median_min_max([r["memchr_mb_per_s"] for r in runs]),
        "production_mb_per_s": production,
        "walk_over_production": statistics.median(walk) / production}


def report(r, add):
    if "event_walk" not in r:
        return
    m = r["event_walk"]
    add("")
    add("6. Event walk over a %.0f MB recording (%d events)" % (m["recording_mb"], m["events"]))
    add("   walk %s MB/s, memchr %s MB/s; the program produced %.0f MB/s: walk is x%.0f" % (
        fmt(m["walk_mb_per_s"], "", 0), fmt(m["memchr_mb_per_s"], "", 0),
        m["production_mb_per_s"], m["walk_over_production"]))
