# SPDX-License-Identifier: BSD-3-Clause
"""`eventlog-socket top` (in a detached tmux session of its own) and the
bench's plain reading client (bench/drain), both connected to the same run
of the trace workload from its start: the stream's rate, top's CPU time
(as a share of one core over the run, and per GiB against drain's), how
long after drain top had the whole stream ("program exited" on its
screen, redrawn every 250 ms), and the drop notices top saw. The goal:
top on a program writing >= 100 MB/s stays below one core and never
falls behind (no drop notices a plain reader would not get)."""

import os
import re
import shutil
import subprocess
import time

import benchlib
from benchlib import fmt, median_min_max
from tmuxpane import TmuxPane

NAME = "top"


def cpu_seconds(pid):
    """utime + stime of a live process, from /proc."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_run(b, args):
    sock = b.path("t.sock")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GHC_EVENTLOG_")}
    env.update(GHC_EVENTLOG_UNIX_PATH=sock, GHC_EVENTLOG_WAIT="1")
    t = TmuxPane("env LANG=C.UTF-8 TERM=xterm-256color %s top --retry %s; sleep 600"
                 % (b.exe("eventlog-socket"), sock), name="es-bench-top")
    try:
        top = t.pid()
        cpu0 = cpu_seconds(top)
        start = time.monotonic()
        drain = b.spawn([b.exe("bench/drain"), sock], stdout=subprocess.PIPE)
        p = b.spawn([b.exe("bench/workload")] + args + ["+RTS", "-l", "-N2", "-RTS"], env=env,
                    stderr=subprocess.DEVNULL)
        rc = b.wait(p, benchlib.TIMEOUT)
        if rc != 0:
            raise RuntimeError("workload %s exited with %d" % (args, rc))
        drained = int(drain.stdout.read().split()[0])
        b.wait(drain, benchlib.TIMEOUT)
        drain_done = time.monotonic() - start
        deadline = time.monotonic() + benchlib.TIMEOUT
        while True:
            screen = t.screen()
            if re.search(r"program exited.*\d+\s+drop\s+notices", " ".join(screen.split())):
                break
            if time.monotonic() > deadline:
                raise RuntimeError("top never showed the program's exit:\n" + screen)
            time.sleep(0.02)
        top_done = time.monotonic() - start
        cpu = cpu_seconds(top) - cpu0
        t.keys("q")
    finally:
        t.close()
    m = re.search(r"(\d+)\s+drop\s+notices", screen.replace("\n", " "))
    gib = 1 << 30
    return {"stream_mb_per_s": drained / 1e6 / drain_done,
            "stream_mib": drained / (1 << 20),
            "top_core_share": cpu / top_done,
            "top_cpu_s_per_gib": cpu / (drained / gib),
            "top_lag_s": top_done - drain_done,
            "top_drop_notices": int(m.group(1)) if m else -1}


def run(b):
    if shutil.which("tmux") is None:
        b.results["top"] = {"skipped": "tmux is not installed"}
        return
    # The record section's workload: four threads posting user messages as
    # fast as they can on two capabilities.
    args = ["trace", "4", "1000000"]
    runs = [one_run(b, args) for _ in range(max(1, benchlib.REPS // 5))]
    out = {"workload": " ".join(args), "runs": len(runs)}
    for k in runs[0]:
        out[k] = median_min_max([r[k] for r in runs])
    b.results["top"] = out


def report(r, add):
    if "top" not in r:
        return
    m = r["top"]
    add("")
    if "skipped" in m:
        add("8. eventlog-socket top: skipped (%s)" % m["skipped"])
        return
    add("8. eventlog-socket top (tmux, 120x40) and bench/drain, both reading one run of "
        "workload %s from its start (%d run(s))" % (m["workload"], m["runs"]))
    add("   stream %s MB/s (%s MiB)   top: %s of a core (goal < 1), %s CPU s per GiB" % (
        fmt(m["stream_mb_per_s"], "", 0), fmt(m["stream_mib"], "", 0),
        fmt(m["top_core_share"], "", 2), fmt(m["top_cpu_s_per_gib"], "", 3)))
    add("   top had the whole stream %s s after drain (screen redrawn every 0.25 s); "
        "top's drop notices %s (goal 0)" % (fmt(m["top_lag_s"], "", 2),
                                            fmt(m["top_drop_notices"], "", 0)))
