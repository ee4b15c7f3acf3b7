# SPDX-License-Identifier: BSD-3-Clause
"""`eventlog-socket record` against the bench's plain reading client
(bench/drain), both connected to the same run of the trace workload from
its start: each one's throughput (bytes received over its own lifetime),
its CPU time per GiB, and record's drop notices. The goal: record
to tmpfs keeps up with the library: at least 0.9 of what the plain client
achieves. The recording is written to the bench's scratch directory (tmpfs
where there is one)."""

import os
import re
import subprocess
import threading
import time

import benchlib
from benchlib import fmt, median_min_max

NAME = "record"


def one_run(b, args):
    sock = b.path("r.sock")
    out = b.path("r.eventlog")
    err_path = b.path("record.err")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GHC_EVENTLOG_")}
    env.update(GHC_EVENTLOG_UNIX_PATH=sock, GHC_EVENTLOG_WAIT="1")
    with open(err_path, "wb") as err:
        start = time.monotonic()
        drain = b.spawn([b.exe("bench/drain"), sock], stdout=subprocess.PIPE)
        rec = b.spawn([b.exe("eventlog-socket"), "record", sock, "--retry", "-o", out],
                      stderr=err)
        p = b.spawn([b.exe("bench/workload")] + args + ["+RTS", "-l", "-N2", "-RTS"], env=env,
                    stderr=subprocess.DEVNULL)
        # Both clients read until the program's end: each one's time is
        # its own, from the common start to its exit.
        results = {}

        def waiter(name, proc):
            rc, cpu = benchlib.wait_rusage(b, proc, benchlib.TIMEOUT)
            results[name] = (rc, cpu, time.monotonic() - start)

        threads = [threading.Thread(target=waiter, args=a) for a in
                   (("drain", drain), ("record", rec))]
        for t in threads:
            t.start()
        rc = b.wait(p, benchlib.TIMEOUT)
        drained = int(drain.stdout.read().split()[0])
        for t in threads:
            t.join()
    if rc != 0:
        raise RuntimeError("workload %s exited with %d" % (args, rc))
    with open(err_path) as f:
        last = f.read().strip().splitlines()[-1]
    if results["record"][0] != 0:
        raise RuntimeError("record exited %d: %s" % (results["record"][0], last))
    recorded = os.path.getsize(out)
    os.unlink(out)
    m = re.search(r"(\d+) drop notice", last)
    gib = 1 << 30
    return {"drain_bytes": drained, "record_bytes": recorded,
            "drain_mib_per_s": drained / (1 << 20) / results["drain"][2],
            "record_mib_per_s": recorded / (1 << 20) / results["record"][2],
            "drain_cpu_s_per_gib": results["drain"][1] / (drained / gib),
            "record_cpu_s_per_gib": results["record"][1] / (recorded / gib),
            "record_drop_notices": int(m.group(1)) if m else 0}


def run(b):
    # Four threads posting user messages as fast as they can on two
    # capabilities: a few hundred MB of eventlog in a few seconds.
    args = ["trace", "4", "1000000"]
    runs = [one_run(b, args) for _ in range(max(1, benchlib.REPS // 5))]
    out = {"workload": " ".join(args), "runs": len(runs)}
    for k in runs[0]:
        out[k] = median_min_max([r[k] for r in runs])
    out["ratio"] = out["record_mib_per_s"]["median"] / out["drain_mib_per_s"]["median"]
    out["cpu_ratio"] = (out["record_cpu_s_per_gib"]["median"] /
                        out["drain_cpu_s_per_gib"]["median"])
    b.results["record"] = out


def report(r, add):
    if "record" not in r:
        return
    m = r["record"]
    add("")
    add("7. eventlog-socket record to tmpfs and bench/drain, both reading one run of "
        "workload %s from its start (%d run(s))" % (m["workload"], m["runs"]))
    add("   drain %s MiB/s (%s MiB)   record %s MiB/s (%s MiB)   ratio %.2f (goal >= 0.9)" % (
        fmt(m["drain_mib_per_s"], "", 0), fmt({k: v / (1 << 20) for k, v in
                                              m["drain_bytes"].items()}, "", 0),
        fmt(m["record_mib_per_s"], "", 0), fmt({k: v / (1 << 20) for k, v in
                                               m["record_bytes"].items()}, "", 0),
        m["ratio"]))
    add("   CPU s per GiB: drain %s   record %s   record/drain %.2f   record's drop notices %s"
        % (fmt(m["drain_cpu_s_per_gib"], "", 3), fmt(m["record_cpu_s_per_gib"], "", 3),
           m["cpu_ratio"], fmt(m["record_drop_notices"], "", 0)))
