# SPDX-License-Identifier: BSD-3-Clause
"""What the benchmark sections (bench/bench_<section>.py) share: the
settings bench/run.py sets from its options, the statistics, the run's
processes and scratch directory (an esproc.Group), and one run of the
workload program under a configuration (sections overhead and control).

A section module has NAME (its --only name), run(b) that measures and
stores its figures in b.results, and report(r, add) that adds its lines of
the table for the results r, when they hold its figures."""

import json
import os
import re
import resource
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "pylib"))
import esproc  # noqa: E402

# Set by bench/run.py from its options.
BUILD = "build"
SAME_SESSION = False
QUICK = False
REPS = 5
# Throughput swings most on shared machines (one configuration moved by 2x
# between runs minutes apart): it gets more runs than the rest.
THROUGHPUT_REPS = 9
# The overhead target (one client within 2% of the file writer) is smaller
# than the spread of single runs here (5-10%): more rounds, and each round's
# own ratio to the file writer.
OVERHEAD_REPS = 9
# Then the target's own comparison alone: the file writer and one draining
# client, alternating which goes first, so that neither inherits the
# leftovers (exiting clients, a killed stalled client) of a heavier run.
FOCUS_REPS = 15
TIMEOUT = 120
# The Haskell compiler, as the Makefile's HC.
HC = os.environ.get("HC", "ghc")


def ghc_version():
    """The version of HC, as a string ("9.0.2")."""
    return subprocess.run([HC, "--numeric-version"], capture_output=True,
                          text=True).stdout.strip()


def wait_rusage(b, p, timeout):
    """Wait for `p`; return (status, CPU seconds), killing it after `timeout`
    s. Not its peak RSS: a child's ru_maxrss starts from this process's
    size when it forked."""
    killer = threading.Timer(timeout, b.kill, (p,))
    killer.start()
    try:
        _, status, usage = os.wait4(p.pid, 0)
    finally:
        killer.cancel()
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, usage.ru_utime + usage.ru_stime


def median_min_max(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "runs": len(values)}


def paired_ratios(values, refs):
    """Each run against the reference run taken next to it."""
    return median_min_max([v / r for v, r in zip(values, refs)])


def fmt(m, unit="", digits=2):
    return "%.*f%s (%.*f..%.*f)" % (digits, m["median"], unit, digits, m["min"], digits,
                                    m["max"])


class Bench(esproc.Group):
    """One benchmark run: its processes, its scratch directory (on tmpfs
    where there is one) and the results so far."""

    def __init__(self):
        super().__init__("es-bench-", own_session=not SAME_SESSION,
                         tmp_parent="/dev/shm" if os.path.isdir("/dev/shm") else None)
        self.results = {}

    def exe(self, name):
        return os.path.abspath(os.path.join(BUILD, name))


def run_workload(b, args, config, sock, flushes=None, caps=2, cpu=None, rts_extra=(),
                 prog_cpu=None, wrap=(), timeout=None, program="bench/workload",
                 client_mbps=0, env_extra=None):
    """Run the workload once under `config` on `caps` capabilities;
    return its wall time. With eventlog-socket, append the library's
    counters at exit (its RTS flushes and the time in them) to
    `flushes`. Append to `cpu` the CPU time of the program and its
    clients together, to `prog_cpu` the program's alone. `wrap` is a
    command that runs the program (valgrind ...), `timeout` replaces
    TIMEOUT for it. `program` is another build of the same C main
    (bench/fibber). `client_mbps` makes the parse/lossless client read at
    most that many MB/s; `env_extra` adds variables to the program's
    environment. Configurations: none, file, parse, lossless, socket1,
    socket8, stalled, socket-census-flood, and socket0 (our writer, no
    client connected)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GHC_EVENTLOG_")}
    env.update(env_extra or {})
    stats = b.path("stats.json")
    if os.path.exists(stats):
        os.unlink(stats)
    rts = ["+RTS", "-N%d" % caps] + list(rts_extra)
    clients = []
    if config == "file":
        rts += ["-l", "-ol" + b.path("file.eventlog")]
    elif config in ("parse", "lossless"):
        # One client that parses every event as it reads (many-clients,
        # on the library's own reader), under the default drop policy or
        # asking for every byte.
        rts += ["-l"]
        env["GHC_EVENTLOG_UNIX_PATH"] = sock
        env["GHC_EVENTLOG_WAIT"] = "1"
        env["BENCH_STATS"] = stats
        if config == "lossless":
            env["GHC_EVENTLOG_SLOW_CLIENT"] = "wait"
    elif config.startswith("socket") or config == "stalled":
        rts += ["-l"]
        env["GHC_EVENTLOG_UNIX_PATH"] = sock
        if config != "socket0":
            env["GHC_EVENTLOG_WAIT"] = "1"
        env["BENCH_STATS"] = stats
        n = {"socket8": 8, "socket0": 0}.get(config, 1)
        extra = {"stalled": ["--stall"], "socket-census-flood": ["--census-flood"]}.get(
            config, [])
        for _ in range(n):
            clients.append(b.spawn([b.exe("bench/drain"), sock] + extra,
                                   stdout=subprocess.DEVNULL))
    start = time.monotonic()
    p = b.spawn(list(wrap) + [b.exe(program)] + args + rts + ["-RTS"], env=env,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if config in ("parse", "lossless"):
        # many-clients connects once and does not retry, so it starts when
        # the program's socket is there (the program waits for it:
        # GHC_EVENTLOG_WAIT=1).
        waited = 0.0
        while not os.path.exists(sock) and p.poll() is None and waited < TIMEOUT:
            time.sleep(0.005)
            waited += 0.005
        rate = ["--read-mbps", str(client_mbps)] if client_mbps else []
        clients.append(b.spawn([b.exe("many-clients"), "--unix", sock, "--timeout", "300"] + rate,
                               stdout=subprocess.PIPE, text=True))
    rc = b.wait(p, timeout or TIMEOUT)
    took = time.monotonic() - start
    # Only the program has been reaped yet: its clients are waited for below.
    mid = resource.getrusage(resource.RUSAGE_CHILDREN)
    if prog_cpu is not None:
        prog_cpu.append(mid.ru_utime + mid.ru_stime - before.ru_utime - before.ru_stime)
    if rc != 0:
        raise RuntimeError("workload %s under %s exited with %d" % (args, config, rc))
    for c in clients:
        if config == "stalled":
            c.kill()
        if config in ("parse", "lossless"):
            out, _ = c.communicate(timeout=TIMEOUT)
            if flushes is not None:
                m = re.search(r"(\d+) drop notices", out)
                b.last_drop_notices = int(m.group(1)) if m else -1
        c.wait(timeout=TIMEOUT)
    if cpu is not None:
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    if os.path.exists(sock):
        os.unlink(sock)
    if flushes is not None and os.path.exists(stats):
        with open(stats) as f:
            flushes.append(json.load(f))
    return took
