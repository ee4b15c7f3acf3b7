#!/usr/bin/env python3
"""make bench: what does streaming cost a program? Every figure is the
median (with min and max) of repeated runs, and every comparison is a ratio
against a reference measured in the same run of this script, interleaved
with it so that drift on a shared machine hits both alike.

    python3 bench/run.py [--build DIR] [--reps N] [--quick] [--only SECTIONS]
                         [--same-session]

SECTIONS is a comma-separated list of overhead, control, throughput, memory, latency
and walk (default: all). Prints a table and writes DIR/bench/results.json,
or results-SECTIONS.json when --only picks some. Every process it starts
has a timeout and is killed on the way out; sockets and recordings live in a
temporary directory that is removed at the end.

Programs and clients start in sessions of their own (as a client started in
another terminal would be), which on Linux with autogrouping also gives each
its own share of the CPU; --same-session keeps them in this script's, to
compare."""

import json
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

BUILD = "build"
SAME_SESSION = False
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


def median_min_max(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "runs": len(values)}


def paired_ratios(values, refs):
    """Each run against the reference run taken next to it."""
    return median_min_max([v / r for v, r in zip(values, refs)])


class Bench:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="es-bench-", dir="/dev/shm" if os.path.isdir(
            "/dev/shm") else None)
        self.procs = []
        self.results = {}

    def exe(self, name):
        return os.path.abspath(os.path.join(BUILD, name))

    def path(self, name):
        return os.path.join(self.dir, name)

    def spawn(self, argv, env=None, **kw):
        p = subprocess.Popen(argv, env=env, start_new_session=not SAME_SESSION, **kw)
        self.procs.append(p)
        return p

    def cleanup(self):
        for p in self.procs:
            if p.poll() is None:
                try:
                    if SAME_SESSION:
                        p.kill()
                    else:
                        os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    # ---- 1. overhead on a real program -----------------------------------

    def run_workload(self, args, config, sock, flushes=None, caps=2, cpu=None, rts_extra=()):
        """Run the workload once under `config` on `caps` capabilities;
        return its wall time. With eventlog-socket, append the library's
        counters at exit (its RTS flushes and the time in them) to
        `flushes`. Append to `cpu` the CPU time of the program and its
        clients together."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        env = {k: v for k, v in os.environ.items() if not k.startswith("GHC_EVENTLOG_")}
        stats = self.path("stats.json")
        if os.path.exists(stats):
            os.unlink(stats)
        rts = ["+RTS", "-N%d" % caps] + list(rts_extra)
        clients = []
        if config == "file":
            rts += ["-l", "-ol" + self.path("file.eventlog")]
        elif config.startswith("socket") or config == "stalled":
            rts += ["-l"]
            env["GHC_EVENTLOG_UNIX_PATH"] = sock
            env["GHC_EVENTLOG_WAIT"] = "1"
            env["BENCH_STATS"] = stats
            n = 8 if config == "socket8" else 1
            extra = {"stalled": ["--stall"], "socket-census-flood": ["--census-flood"]}.get(
                config, [])
            for _ in range(n):
                clients.append(self.spawn([self.exe("bench/drain"), sock] + extra,
                                          stdout=subprocess.DEVNULL))
        start = time.monotonic()
        p = self.spawn([self.exe("bench/workload")] + args + rts + ["-RTS"], env=env,
                       stderr=subprocess.DEVNULL)
        # A blocking wait: Popen.wait(timeout=...) polls with sleeps of up
        # to 50 ms, which would quantise the times. The timer enforces the
        # timeout instead.
        killer = threading.Timer(TIMEOUT, p.kill)
        killer.start()
        rc = p.wait()
        took = time.monotonic() - start
        killer.cancel()
        if rc != 0:
            raise RuntimeError("workload %s under %s exited with %d" % (args, config, rc))
        for c in clients:
            if config == "stalled":
                c.kill()
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

    def overhead(self):
        workloads = {
            "gc": ["gc", "8", "30"],
            "trace": ["trace", "4", "400000"],
        }
        configs = ["none", "file", "socket1", "socket8", "stalled"]
        out = {}
        for wname, args in workloads.items():
            times = {c: [] for c in configs}
            flushes = {c: [] for c in configs}
            self.run_workload(args, "file", self.path("w.sock"))  # warm caches
            for _ in range(max(REPS, OVERHEAD_REPS)):
                for c in configs:  # interleaved
                    times[c].append(self.run_workload(args, c, self.path("w.sock"),
                                                      flushes[c]))
            ref = statistics.median(times["file"])
            out[wname] = {c: dict(median_min_max(times[c]),
                                  ratio_to_file=statistics.median(times[c]) / ref,
                                  # Each run against the file run of its round.
                                  round_ratios=paired_ratios(times[c], times["file"]))
                          for c in configs}
            for c in configs:
                if flushes[c]:
                    out[wname][c]["flushes"] = median_min_max([f["flushes"] for f in flushes[c]])
                    out[wname][c]["flush_ms"] = median_min_max(
                        [f["flush_us"] / 1000 for f in flushes[c]])
        # The trace program on one capability too: on two, part of what it
        # costs may be its capabilities contending for the RTS's event buffer
        # descriptors, not the library's work (BENCHMARKS.md, section 1).
        focus_runs = {"gc": (workloads["gc"], 2), "trace": (workloads["trace"], 2),
                      "trace-N1": (workloads["trace"], 1)}
        focus = {}
        for wname, (args, caps) in focus_runs.items():
            times = {"file": [], "socket1": []}
            cpu = {"file": [], "socket1": []}
            for i in range(max(REPS, FOCUS_REPS)):
                for c in (("file", "socket1") if i % 2 == 0 else ("socket1", "file")):
                    times[c].append(self.run_workload(args, c, self.path("w.sock"), caps=caps,
                                                      cpu=cpu[c]))
            focus[wname] = {
                "caps": caps,
                "file": median_min_max(times["file"]),
                "socket1": median_min_max(times["socket1"]),
                "ratio": statistics.median(times["socket1"]) / statistics.median(times["file"]),
                "round_ratios": paired_ratios(times["socket1"], times["file"]),
                "cpu_s": {c: median_min_max(cpu[c]) for c in cpu},
                "cpu_ratio": statistics.median(cpu["socket1"]) / statistics.median(cpu["file"])}
        self.results["overhead"] = out
        self.results["overhead_one_client"] = focus

    # ---- 1b. a client flooding census requests -------------------------

    def control(self):
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
        for i in range(max(REPS, 5)):
            for c in (("socket1", "socket-census-flood") if i % 2 == 0 else
                      ("socket-census-flood", "socket1")):
                times[c].append(self.run_workload(args, c, self.path("w.sock"), cpu=cpu[c],
                                                  rts_extra=rts))
        self.results["control"] = {
            "workload": " ".join(args + ["+RTS"] + rts + ["-RTS"]),
            "socket1": median_min_max(times["socket1"]),
            "census_flood": median_min_max(times["socket-census-flood"]),
            "ratio": statistics.median(times["socket-census-flood"]) /
            statistics.median(times["socket1"]),
            "round_ratios": paired_ratios(times["socket-census-flood"], times["socket1"]),
            "cpu_ratio": statistics.median(cpu["socket-census-flood"]) /
            statistics.median(cpu["socket1"])}

    # ---- 2 and 3. throughput and RTS-side cost ---------------------------

    def throughput_run(self, argv):
        res = subprocess.run([self.exe("bench/throughput")] + argv, capture_output=True,
                             text=True, timeout=TIMEOUT)
        if res.returncode != 0:
            raise RuntimeError("throughput %s failed: %s" % (argv, res.stderr))
        return json.loads(res.stdout.strip().splitlines()[-1])

    def throughput(self):
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
            for _ in range(max(REPS, THROUGHPUT_REPS)):
                for w in windows:
                    r = self.throughput_run(["socket", str(clients), str(mib), "2", str(w)])
                    ours[w].append(r["mib_per_s"])
                    ours_cpu[w].append(r["cpu_s_per_gib"])
                    lib_cpu[w].append(r["library_cpu_s_per_gib"])
                r = self.throughput_run(["raw", str(clients), str(mib)])
                raw.append(r["mib_per_s"])
                raw_cpu.append(r["cpu_s_per_gib"])
                if clients == 1:
                    # 1024 calls: the p99 of a program that runs for a
                    # while, not of its start, when each writer's first
                    # call faults in a buffer (counted apart, see below).
                    collect("draining_client", self.throughput_run(["cost", "2048", "2"]))
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
        self.results["throughput"] = out
        # A stalled client, with writers paced to 400 MB/s (four times what
        # the trace workload produces) and with writers as fast as they go.
        for _ in range(REPS):
            collect("stalled_client_400_mb_s",
                    self.throughput_run(["stalled", "1024", "2", "400"]))
            collect("stalled_client_flood", self.throughput_run(["stalled", "256", "2"]))

        def summary(d):
            s = {k: median_min_max(v) for k, v in d.items()}
            for kind in ("", "_cpu"):
                for q in ("p50", "p99"):
                    s["%s%s_ratio" % (q, kind)] = (s["write%s_%s" % (kind, q)]["median"] /
                                                   s["copy%s_%s" % (kind, q)]["median"])
            return s
        self.results["rts_cost_us"] = {k: summary(v) for k, v in costs.items()}

    # ---- 4. memory with a stalled client ---------------------------------

    def peak_rss(self, stalled, seconds, bound):
        sock = self.path("m.sock")
        env = {k: v for k, v in os.environ.items() if not k.startswith("GHC_EVENTLOG_")}
        env.update(GHC_EVENTLOG_UNIX_PATH=sock, GHC_EVENTLOG_WAIT="1",
                   GHC_EVENTLOG_MAX_BUFFER=bound)
        client = self.spawn([self.exe("bench/drain"), sock] + (["--stall"] if stalled else []),
                            stdout=subprocess.DEVNULL)
        p = self.spawn([self.exe("bench/workload"), "trace-for", str(seconds), "+RTS", "-l",
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
        p.wait(timeout=TIMEOUT)
        client.kill()
        client.wait()
        return hwm

    def memory(self, seconds=10, bound_mib=16):
        draining = self.peak_rss(False, seconds, "%dM" % bound_mib)
        stalled = self.peak_rss(True, seconds, "%dM" % bound_mib)
        self.results["memory"] = {
            "seconds": seconds, "bound_mib": bound_mib,
            "peak_rss_kib_draining": draining, "peak_rss_kib_stalled": stalled,
            "growth_mib": (stalled - draining) / 1024.0,
            "growth_over_bound": (stalled - draining) / 1024.0 / bound_mib}

    # ---- 5. latency -------------------------------------------------------

    def latency(self, markers=30):
        ver = subprocess.run(["ghc", "--numeric-version"], capture_output=True,
                             text=True).stdout.strip()
        major, minor = map(int, ver.split(".")[:2])
        if (major, minor) < (9, 2):
            self.results["latency"] = {"skipped": "GHC %s cannot flush its eventlog buffers: "
                                                  "events arrive when a 2 MiB buffer fills "
                                                  "and at exit" % ver}
            return
        sock = self.path("l.sock")
        env = {k: v for k, v in os.environ.items() if not k.startswith("GHC_EVENTLOG_")}
        env.update(GHC_EVENTLOG_UNIX_PATH=sock, GHC_EVENTLOG_WAIT="1")
        p = self.spawn([self.exe("probe")], env=env, stdin=subprocess.PIPE,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        while not os.path.exists(sock):
            time.sleep(0.005)
        c = socket.socket(socket.AF_UNIX)
        c.connect(sock)
        c.setblocking(False)
        data = bytearray()

        def pump():
            try:
                while True:
                    chunk = c.recv(1 << 20)
                    if not chunk:
                        return
                    data.extend(chunk)
            except BlockingIOError:
                pass
        time.sleep(0.5)
        lat = []
        for i in range(markers):
            tag = ("bench-lat-%d." % i).encode()
            start = time.monotonic()
            p.stdin.write(b"marker " + tag + b"\n")
            p.stdin.flush()
            p.stdout.readline()
            while tag not in data and time.monotonic() - start < 5:
                pump()
                time.sleep(0.001)
            lat.append((time.monotonic() - start) * 1000)
            time.sleep(0.137)  # an idle program, out of step with the flush timer
        p.stdin.write(b"quit\n")
        p.stdin.flush()
        p.wait(timeout=TIMEOUT)
        c.close()
        lat.sort()
        interval = 100.0
        self.results["latency"] = {
            "markers": markers, "flush_interval_ms": interval,
            "ms": {"p50": lat[len(lat) // 2], "p90": lat[len(lat) * 9 // 10], "max": lat[-1],
                   "min": lat[0]},
            "p50_over_interval": lat[len(lat) // 2] / interval}

    # ---- 6. event walk ------------------------------------------------------

    def walk(self):
        rec = self.path("walk.eventlog")
        start = time.monotonic()
        subprocess.run([self.exe("bench/workload"), "trace", "4", "400000", "+RTS", "-N2", "-l",
                        "-ol" + rec, "-RTS"], check=True, timeout=TIMEOUT,
                       stderr=subprocess.DEVNULL)
        took = time.monotonic() - start
        size = os.path.getsize(rec)
        production = size / 1e6 / took
        runs = []
        for _ in range(REPS):
            res = subprocess.run([self.exe("bench/walk"), rec, "5"], capture_output=True,
                                 text=True, timeout=TIMEOUT, check=True)
            runs.append(json.loads(res.stdout))
        walk = [r["walk_mb_per_s"] for r in runs]
        self.results["event_walk"] = {
            "recording_mb": size / 1e6, "events": runs[0]["events"],
            "walk_mb_per_s": median_min_max(walk),
            "memchr_mb_per_s": median_min_max([r["memchr_mb_per_s"] for r in runs]),
            "production_mb_per_s": production,
            "walk_over_production": statistics.median(walk) / production}


def fmt(m, unit="", digits=2):
    return "%.*f%s (%.*f..%.*f)" % (digits, m["median"], unit, digits, m["min"], digits,
                                     m["max"])


def report(r):
    lines = []
    add = lines.append
    add("eventlog-socket benchmarks: median (min..max) of %d runs; ratios of medians" % REPS)
    if "overhead" in r:
        add("")
        add("1. Overhead on a real program (wall time, s, %d runs; ratio of medians to the RTS "
            "file writer on tmpfs; median (min..max) of each round's ratio)"
            % max(REPS, OVERHEAD_REPS))
        for w, cs in r["overhead"].items():
            for c, m in cs.items():
                add("   %-6s %-8s %s  x%.3f  rounds x%s%s" % (
                    w, c, fmt(m, "", 3), m["ratio_to_file"], fmt(m["round_ratios"], "", 3),
                    "  flushes %s taking %s ms" % (fmt(m["flushes"], "", 0),
                                                    fmt(m["flush_ms"], "", 1))
                    if "flushes" in m else ""))
    if "control" in r:
        m = r["control"]
        add("")
        add("1b. A client flooding census requests (%s; wall s, alternating rounds)" %
            m["workload"])
        add("   draining only %s  flooding %s  x%.3f  rounds x%s  CPU x%.3f" % (
            fmt(m["socket1"], "", 3), fmt(m["census_flood"], "", 3), m["ratio"],
            fmt(m["round_ratios"], "", 3), m["cpu_ratio"]))
    if "overhead_one_client" in r:
        add("   one draining client against the file writer alone, alternating (%d rounds):" %
            r["runs"].get("overhead_one_client", 0))
        for w, m in r["overhead_one_client"].items():
            add("   %-8s file %s  socket1 %s  x%.3f  rounds x%s" % (
                w, fmt(m["file"], "", 3), fmt(m["socket1"], "", 3), m["ratio"],
                fmt(m["round_ratios"], "", 3)))
            if "cpu_s" in m:
                add("   %-8s CPU s, program and clients: file %s  socket1 %s  x%.3f" % (
                    "", fmt(m["cpu_s"]["file"], "", 3), fmt(m["cpu_s"]["socket1"], "", 3),
                    m["cpu_ratio"]))
    if "throughput" in r:
        add("")
        add("2. Throughput, 2 MiB chunks from 2 writer threads over a Unix socket (MiB/s per "
            "client; %d runs)" % max(REPS, THROUGHPUT_REPS))
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
    if "memory" in r:
        m = r["memory"]
        add("")
        add("4. Memory: peak RSS over %d s of a tracing program, GHC_EVENTLOG_MAX_BUFFER=%dM" % (
            m["seconds"], m["bound_mib"]))
        add("   draining client %d KiB, stalled client %d KiB: +%.1f MiB = %.2f x the bound" % (
            m["peak_rss_kib_draining"], m["peak_rss_kib_stalled"], m["growth_mib"],
            m["growth_over_bound"]))
    if "latency" in r:
        m = r["latency"]
        add("")
        if "skipped" in m:
            add("5. Latency: skipped: " + m["skipped"])
        else:
            add("5. Latency, marker in an idle program to client (ms, %d markers, flush every "
                "%.0f ms)" % (m["markers"], m["flush_interval_ms"]))
            add("   p50 %.1f  p90 %.1f  max %.1f  min %.1f   p50 / interval %.2f" % (
                m["ms"]["p50"], m["ms"]["p90"], m["ms"]["max"], m["ms"]["min"],
                m["p50_over_interval"]))
    if "event_walk" in r:
        m = r["event_walk"]
        add("")
        add("6. Event walk over a %.0f MB recording (%d events)" % (m["recording_mb"], m["events"]))
        add("   walk %s MB/s, memchr %s MB/s; the program produced %.0f MB/s: walk is x%.0f" % (
            fmt(m["walk_mb_per_s"], "", 0), fmt(m["memchr_mb_per_s"], "", 0),
            m["production_mb_per_s"], m["walk_over_production"]))
    return "\n".join(lines)


def main(argv):
    global BUILD, REPS, THROUGHPUT_REPS, OVERHEAD_REPS, FOCUS_REPS, SAME_SESSION
    args = list(argv)
    if "--build" in args:
        i = args.index("--build")
        BUILD = args[i + 1]
        del args[i:i + 2]
    if "--reps" in args:
        i = args.index("--reps")
        REPS = int(args[i + 1])
        THROUGHPUT_REPS = OVERHEAD_REPS = FOCUS_REPS = REPS
        del args[i:i + 2]
    quick = "--quick" in args
    SAME_SESSION = "--same-session" in args
    sections = ["overhead", "control", "throughput", "memory", "latency", "walk"]
    only = sections
    if "--only" in args:
        i = args.index("--only")
        only = args[i + 1].split(",")
        del args[i:i + 2]
        unknown = [x for x in only if x not in sections]
        if unknown:
            print("run.py: unknown section %s (known: %s)" % (", ".join(unknown),
                                                            ", ".join(sections)),
                  file=sys.stderr)
            return 2
    b = Bench()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.monotonic()
    try:
        ver = subprocess.run(["ghc", "--numeric-version"], capture_output=True,
                             text=True).stdout.strip()
        b.results["machine"] = {"ghc": ver, "cores": os.cpu_count(),
                                "kernel": os.uname().release,
                                "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                                "same_session": SAME_SESSION}
        b.results["runs"] = {"default": REPS, "throughput": max(REPS, THROUGHPUT_REPS),
                             "overhead": max(REPS, OVERHEAD_REPS),
                             "overhead_one_client": max(REPS, FOCUS_REPS)}
        for name in sections:
            if name not in only:
                continue
            if name == "memory":
                b.memory(seconds=3 if quick else 10)
            else:
                getattr(b, name)()
    finally:
        b.cleanup()
    b.results["seconds"] = time.monotonic() - started
    out = os.path.join(BUILD, "bench", "results.json" if only == sections else
                       "results-%s.json" % "-".join(only))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(b.results, f, indent=2)
    print(report(b.results))
    print("\n(%.0f s; results in %s)" % (b.results["seconds"], out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
