#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A long live time profile: whether the command's memory stays bounded
while a -N4 program streams cost-centre samples for minutes.

The probe built with -prof (tests/programs/probe, as the tests build it:
BUILD/probe-prof), run with +RTS -N4 -l and --busy (one busy thread, three
idle capabilities: 4 000 samples a second at the 1 ms tick). Against it, at
once:

  - `profile ADDR -o OUT.folded --duration SECONDS`: it starts cost-centre
    profiling, collects and stops it (the whole run's stacks, kept once);
  - `serve ADDR`: the page's model and its flame graph's trees (the whole
    run's, and the last 10 s's samples one by one).

Every 10 s the resident memory (VmRSS) of both is read from /proc; printed
at the end: the first minute's, the last, the largest, the samples the
profile holds, and each command's CPU seconds. Needs a GHC that flushes
while the program runs (9.2 or later: scripts/ghc-chroot.sh 9.10
bench-profile-live).

    python3 bench/bench_profile_live.py [--build build] [--seconds 600]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_metrics import cpu_times, rss_kib, stop_all  # noqa: E402


def probe_prof(build):
    """BUILD/probe-prof, built as the tests build it."""
    import harness
    harness.BUILD = build
    import test_control
    exe = os.path.abspath(os.path.join(build, "probe-prof"))
    return test_control.build_profiled_probe(ROOT, exe)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--seconds", type=int, default=600)
    args = ap.parse_args()
    exe = probe_prof(args.build)
    client = os.path.abspath(os.path.join(args.build, "eventlog-socket"))
    d = tempfile.mkdtemp(prefix="es-bench-live-")
    sock, out = os.path.join(d, "p.sock"), os.path.join(d, "live.folded")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GHC_EVENTLOG_")}
    env["GHC_EVENTLOG_UNIX_PATH"] = sock
    procs = []
    try:
        prog = subprocess.Popen([exe, "--busy", "+RTS", "-N4", "-l", "-RTS"], env=env,
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
        procs.append(prog)
        for _ in range(200):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        srv = subprocess.Popen([client, "serve", sock, "--http", "127.0.0.1:0"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(srv)
        prof = subprocess.Popen([client, "profile", sock, "-o", out, "--duration",
                                 "%ds" % args.seconds], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        procs.append(prof)
        points = []
        start = time.monotonic()
        while prof.poll() is None:
            time.sleep(10)
            if prof.poll() is None:
                points.append((time.monotonic() - start, rss_kib(srv.pid), rss_kib(prof.pid)))
        serve_cpu = sum(cpu_times(srv.pid))
        err = prof.stderr.read()
        with open(out) as f:
            samples = sum(int(line.rsplit(" ", 1)[1]) for line in f)
    finally:
        stop_all(procs)
    first = [p for p in points if p[0] <= 65] or points[:1]
    print("live profile of a -N4 program, %d s, %s: %d samples (%.0f a second)"
          % (args.seconds, os.environ.get("HC", "ghc"), samples, samples / args.seconds))
    for name, k in (("serve", 1), ("profile", 2)):
        print("%-8s RSS first minute %.1f MiB, at the end %.1f MiB, largest %.1f MiB"
              % (name, max(p[k] for p in first) / 1024, points[-1][k] / 1024,
                 max(p[k] for p in points) / 1024))
    print("serve CPU %.1f s; profile said: %s" % (serve_cpu, err.strip().splitlines()[-1]))


if __name__ == "__main__":
    main()
