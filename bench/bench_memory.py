# SPDX-License-Identifier: BSD-3-Clause
"""Memory: the peak RSS of a tracing program with a stalled client against
one with a draining client, under GHC_EVENTLOG_MAX_BUFFER."""

import os
import subprocess
import time

import benchlib

NAME = "memory"


def peak_rss(b, stalled, seconds, bound):
    sock = b.path("m.sock")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GHC_EVENTLOG_")}
    env.update(GHC_EVENTLOG_UNIX_PATH=sock, GHC_EVENTLOG_WAIT="1",
               GHC_EVENTLOG_MAX_BUFFER=bound)
    client = b.spawn([b.exe("bench/drain"), sock] + (["--stall"] if stalled else []),
                     stdout=subprocess.DEVNULL)
    p = b.spawn([b.exe("bench/workload"), "trace-for", str(seconds), "+RTS", "-l",
                 "-RTS"], env=env, stderr=subprocess.DEVNULL)
    hwm = 0
    deadline = time.monotonic() + seconds + 60
    while p.poll() is None and time.monotonic() < deadline:
        try:
            with open("/proc/%d/status" % p.pid) as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        hwm = max(hwm, int(line.split()[1]))
        except (FileNotFoundError, ProcessLookupError, ValueError):
            pass
        time.sleep(0.05)
    p.wait(timeout=benchlib.TIMEOUT)
    client.kill()
    client.wait()
    return hwm


def run(b, seconds=None, bound_mib=16):
    if seconds is None:
        seconds = 3 if benchlib.QUICK else 10
    draining = peak_rss(b, False, seconds, "%dM" % bound_mib)
    stalled = peak_rss(b, True, seconds, "%dM" % bound_mib)
    b.results["memory"] = {
        "seconds": seconds, "bound_mib": bound_mib,
        "peak_rss_kib_draining": draining, "peak_rss_kib_stalled": stalled,
        "growth_mib": (stalled - draining) / 1024.0,
        "growth_over_bound": (stalled - draining) / 1024.0 / bound_mib}


def report(r, add):
    if "memory" not in r:
        return
    m = r["memory"]
    add("")
    add("4. Memory: peak RSS over %d s of a tracing program, GHC_EVENTLOG_MAX_BUFFER=%dM" % (
        m["seconds"], m["bound_mib"]))
    add("   draining client %d KiB, stalled client %d KiB: +%.1f MiB = %.2f x the bound" % (
        m["peak_rss_kib_draining"], m["peak_rss_kib_stalled"], m["growth_mib"],
        m["growth_over_bound"]))
