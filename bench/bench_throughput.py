# SPDX-License-Identifier: BSD-3-Clause
"""Throughput (MiB/s per client, 2 MiB chunks from 2 writer threads, against
a raw socket) and the RTS-side cost of writeEventLog against a memcpy, with
bench/throughput."""

import json
import statistics
import subprocess

import benchlib
from benchlib import fmt, median_min_max, paired_ratios

NAME = "throughput"


def throughput_run(b, argv):
    res = subprocess.run([b.exe("bench/throughput")] + argv, capture_output=True,
                         text=True, timeout=benchlib.TIMEOUT)
    if res.returncode != 0:
        raise RuntimeError("throughput %s failed: %s" % (argv, res.stderr))
    return json.loads(res.stdout.strip().splitlines()[-1])


def run(b):
    out = {}
    # RTS-side cost, per configuration: lists of per-run figures.
    costs = {"draining_client": {}, "stalled_client_400_mb_s": {},
             "stalled_client_flood": {}}

    def collect(name, r):
        d = costs[name]
        for kind in ("write", "write_cpu", "copy", "copy_cpu"):
            for q in ("p50", "p99", "max"):
                d.setdefault("%s_%s" % (kind, q), []).append(r[kind][q + "_us"])
        for k in ("write_max_after_first_us", "write_cpu_max_after_first_us",
                  "write_calls_faulting", "write_calls_faulting_once_dropping",
                  "write_max_without_faults_us"):
            d.setdefault(k, []).append(r[k])
        d.setdefault("chunks_dropped", []).append(r["chunks_dropped"])

    # Writers keep at most `window` MiB undelivered in the library: 4 is
    # two blocks in flight and no backlog (a program whose clients keep
    # up), 32 a backlog (a client that fell behind and catches up).
    for clients, mib, windows in ((1, 4096, (4, 32)), (8, 1024, (4,)), (64, 128, (4,))):
        ours, raw = {w: [] for w in windows}, []
        lib_cpu = {w: [] for w in windows}
        # CPU seconds of the whole process per GiB delivered to each
        # client: what the throughput ratio tends to when the cores are
        # busy with other work, and no parallelism is left to exploit.
        ours_cpu, raw_cpu = {w: [] for w in windows}, []
        for _ in range(max(benchlib.REPS, benchlib.THROUGHPUT_REPS)):
            for w in windows:
                r = throughput_run(b, ["socket", str(clients), str(mib), "2", str(w)])
                ours[w].append(r["mib_per_s"])
                ours_cpu[w].append(r["cpu_s_per_gib"])
                lib_cpu[w].append(r["library_cpu_s_per_gib"])
            r = throughput_run(b, ["raw", str(clients), str(mib)])
            raw.append(r["mib_per_s"])
            raw_cpu.append(r["cpu_s_per_gib"])
            if clients == 1:
                # 1024 calls: the p99 of a program that runs for a
                # while, not of its start, when each writer's first
                # call faults in a buffer (counted apart, see below).
                collect("draining_client", throughput_run(b, ["cost", "2048", "2"]))
        for w in windows:
            out["%d_clients_window_%d_mib" % (clients, w)] = {
                "clients": clients, "window_mib": w,
                "eventlog_socket_mib_per_s": median_min_max(ours[w]),
                "raw_socket_mib_per_s": median_min_max(raw),
                "ratio": statistics.median(ours[w]) / statistics.median(raw),
                # Each run against the raw run right after it.
                "pair_ratios": paired_ratios(ours[w], raw),
                "eventlog_socket_cpu_s_per_gib": median_min_max(ours_cpu[w]),
                "raw_socket_cpu_s_per_gib": median_min_max(raw_cpu),
                # The library's own counters (eventlog_socket_stats).
                "library_cpu_s_per_gib": median_min_max(lib_cpu[w]),
                # raw / ours: above 1 would mean ours takes less CPU.
                "cpu_ratio": statistics.median(raw_cpu) / statistics.median(ours_cpu[w])}
    b.results["throughput"] = out
    # A stalled client, with writers paced to 400 MB/s (four times what
    # the trace workload produces) and with writers as fast as they go.
    for _ in range(benchlib.REPS):
        collect("stalled_client_400_mb_s",
                throughput_run(b, ["stalled", "1024", "2", "400"]))
        collect("stalled_client_flood", throughput_run(b, ["stalled", "256", "2"]))

    def summary(d):
        s = {k: median_min_max(v) for k, v in d.items()}
        for kind in ("", "_cpu"):
            for q in ("p50", "p99"):
                s["%s%s_ratio" % (q, kind)] = (s["write%s_%s" % (kind, q)]["median"] /
                                               s["copy%s_%s" % (kind, q)]["median"])
        return s
    b.results["rts_cost_us"] = {k: summary(v) for k, v in costs.items()}


def report(r, add):
    if "throughput" not in r:
        return
    add("")
    add("2. Throughput, 2 MiB chunks from 2 writer threads over a Unix socket (MiB/s per "
        "client; %d runs)" % max(benchlib.REPS, benchlib.THROUGHPUT_REPS))
    for k, m in r["throughput"].items():
        add("   %d client(s), window %2d MiB: eventlog-socket %s   raw socket %s   ratio %.2f" % (
            m["clients"], m["window_mib"], fmt(m["eventlog_socket_mib_per_s"], "", 0),
            fmt(m["raw_socket_mib_per_s"], "", 0), m["ratio"]))
        add("   %26s pairs of runs: ratio %s" % ("", fmt(m["pair_ratios"])))
        add("   %26s CPU s per GiB: eventlog-socket %s   raw socket %s   raw/ours %.2f" % (
            "", fmt(m["eventlog_socket_cpu_s_per_gib"], "", 3),
            fmt(m["raw_socket_cpu_s_per_gib"], "", 3), m["cpu_ratio"]))
        if "library_cpu_s_per_gib" in m:
            add("   %26s the library's own CPU s per GiB written (its counters): %s" % (
                "", fmt(m["library_cpu_s_per_gib"], "", 3)))
    if "rts_cost_us" in r:
        add("")
        add("3. RTS-side cost: time in writeEventLog per 2 MiB call vs memcpy of it, "
            "same threads, same run (us)")
        for k, m in r["rts_cost_us"].items():
            add("   %s: calls that took page faults %s (%s once chunks were dropped), "
                "slowest call without %s" % (
                    k, fmt(m["write_calls_faulting"], "", 0),
                    fmt(m["write_calls_faulting_once_dropping"], "", 0),
                    fmt(m["write_max_without_faults_us"], "", 0)))
            for kind, label in (("", "wall"), ("_cpu", "thread CPU")):
                add("     %-10s write p50 %s p99 %s max %s (after each writer's first call %s)"
                    % (label, fmt(m["write%s_p50" % kind], "", 0),
                       fmt(m["write%s_p99" % kind], "", 0), fmt(m["write%s_max" % kind], "", 0),
                       fmt(m["write%s_max_after_first_us" % kind], "", 0)))
                add("     %-10s copy  p50 %s p99 %s max %s   p50 x%.2f  p99 x%.2f" % (
                    "", fmt(m["copy%s_p50" % kind], "", 0), fmt(m["copy%s_p99" % kind], "", 0),
                    fmt(m["copy%s_max" % kind], "", 0), m["p50%s_ratio" % kind],
                    m["p99%s_ratio" % kind]))
