#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Spans at scale: whether the command keeps up with 10 000 spans a second
from a -N4 program, its CPU per GiB of eventlog, and whether its memory
stays bounded.

The probe (BUILD/probe), run with +RTS -N4 -l, posts spans from 4 Haskell
threads (the shared command `span-flood SECONDS RATE THREADS LABEL`:
"START flood", then at once "STOP flood", RATE a second in all). Against
it, connected before the first span:

  - `record ADDR -o FILE`: the stream as it came (its size is the bytes
    every client received; its summary says whether drop notices came);
  - `table spans ADDR --csv OUT`: a row per span;
  - `metrics --http 127.0.0.1:0 ADDR`: ghc_span_duration_seconds, scraped
    at the end;
  - `serve ADDR --http 127.0.0.1:0`, with one page reading its /events
    (the page's model; its /metrics gives the span count).

Every second the resident memory (VmRSS) of each is read from /proc; each
one's CPU (user + system) comes from wait4 when it ends, its peak RSS from
GNU time (see Client) (the program quits after the flood; metrics and
serve are stopped once they have the last span). Printed: CPU seconds,
CPU seconds per GiB of the stream and spans per CPU second (each command's
whole life: its start and its idle wake-ups too), RSS early and late (the
largest in the first and last quarter of the samples since the first
events arrived) and at peak, spans seen, MiB dropped; then the program's
own CPU and the library's counters (drops, clients cut for lagging), and
serve's summary of STOPs it could not match. Also `table spans FILE` on
the recording afterwards, the parse alone: a client kept up when it saw
the spans its recording holds (a span the matcher cannot pair is missing
from all of them alike). Memory is judged flat as bench/soak.py judges it:
late within x1.25 (plus 4 MiB) of early. On GHC < 9.2 events arrive as
each capability fills a 2 MiB buffer (the first after 10-20 s at 10 000
spans a second, the rest at exit): fine for throughput; the memory samples
see bursts.

    python3 bench/bench_spans.py [--build build] [--seconds 60] [--rate 10000]
                                 [--threads 4]
"""
import argparse
import csv
import http.client
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_metrics import cpu_times, rss_kib, stop_all  # noqa: E402

LABEL = "flood"
LIVE_BYTES = 256 * 1024
TIME = shutil.which("time", path="/usr/bin:/bin")
STATS = ["clients_connected", "clients_accepted", "clients_lagged", "bytes_received",
         "bytes_sent", "chunks_dropped", "bytes_dropped", "bytes_held", "bytes_held_peak",
         "flushes", "flush_us", "clients_refused", "cpu_ns_writer", "cpu_ns_walker",
         "cpu_ns_loop", "clients_lossless", "lossless_waits", "lossless_wait_ns",
         "lossless_wait_max_ns", "chunks_lost", "bytes_lost", "window_bytes", "windows_sent"]


class Probe:
    """The program, driven through its stdin (tests/programs/common/Commands.hs)."""

    def __init__(self, exe, env, err):
        self.proc = subprocess.Popen([exe, "+RTS", "-N4", "-l", "-RTS"], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
        self.buf = b""

    def send(self, line):
        self.proc.stdin.write((line + "\n").encode())
        self.proc.stdin.flush()

    def line(self, timeout, every=None):
        """The next line of answer; every(): called about once a second meanwhile."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError("no answer from the program within %.0f s" % timeout)
            r, _, _ = select.select([self.proc.stdout], [], [], min(left, 1.0))
            if r:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                if not chunk:
                    raise RuntimeError("the program closed its stdout")
                self.buf += chunk
            elif every:
                every()
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def stats(self):
        self.send("stats")
        words = self.line(60).split()
        return dict(zip(STATS, map(int, words[1:])))


class Client:
    """A command run under GNU time when there is one: its peak RSS (%M) is
    the command's own, where a child's ru_maxrss would start from this
    script's size when it forked (bench/benchlib.py); wait4 on time gives
    the command's CPU, to the microsecond. Without time, the peak is the
    largest VmHWM sampled (once a second, and before metrics and serve are
    stopped: record's and table's last burst, at the program's exit, is
    not seen then)."""

    def __init__(self, name, argv, d, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL):
        self.name, self.pid, self.hwm, self.peak, self.cpu = name, None, 0, None, None
        self.hwm_file = os.path.join(d, name.replace(" ", "-") + ".time")
        if TIME:
            argv = [TIME, "-f", "%M", "-o", self.hwm_file] + argv
        self.proc = subprocess.Popen(argv, stdout=stdout, stderr=stderr)

    def command_pid(self):
        """The command's pid (time's child, once it has forked)."""
        if self.pid is None and not TIME:
            self.pid = self.proc.pid
        elif self.pid is None:
            try:
                with open("/proc/%d/task/%d/children" % ((self.proc.pid,) * 2)) as f:
                    kids = f.read().split()
                self.pid = int(kids[0]) if kids else None
            except OSError:
                pass
        return self.pid

    def rss(self):
        """VmRSS in KiB now (None once gone); VmHWM kept too."""
        pid = self.command_pid()
        if pid is None:
            return None
        try:
            with open("/proc/%d/status" % pid) as f:
                text = f.read()
            self.hwm = max(self.hwm, int(re.search(r"VmHWM:\s+(\d+)", text).group(1)))
            return int(re.search(r"VmRSS:\s+(\d+)", text).group(1))
        except (OSError, AttributeError):
            return None

    def stop(self):
        self.rss()
        os.kill(self.command_pid(), signal.SIGTERM)

    def reap(self, timeout):
        ru = reap(self.proc, timeout)
        if ru is None:
            return
        self.cpu = ru.ru_utime + ru.ru_stime
        self.peak = self.hwm or None
        if TIME:  # the kernel's RSS counters are approximate: the larger of the two
            with open(self.hwm_file) as f:
                self.peak = max(self.hwm, int(f.read().split()[-1]))


def reap(p, timeout):
    """Wait for p to end; its rusage (None if it did not end in time)."""
    deadline = time.monotonic() + timeout
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            p.returncode = os.waitstatus_to_exitcode(status)
            return ru
        if time.monotonic() > deadline:
            return None
        time.sleep(0.05)


def scrape(url):
    text = urllib.request.urlopen(url, timeout=30).read().decode()

    def figure(name, label=None):
        pat = r"^%s\{[^}]*%s[^}]*\} (\S+)$" % (name, 'label="%s"' % label if label else "")
        vals = re.findall(pat, text, re.M)
        return sum(float(v) for v in vals) if vals else None
    return {"spans": figure("ghc_span_duration_seconds_count", LABEL),
            "received": figure("eventlog_socket_received_bytes_total"),
            "dropped": figure("eventlog_socket_dropped_bytes_total")}


def url_of(p):
    line = p.stdout.readline().decode()
    m = re.search(r"(http://\S+)", line)
    if not m:
        raise RuntimeError("no URL from the command: %r" % line)
    return m.group(1)


def read_page(url, got):
    """A page open on serve: its /events read; got["bytes"] counts them,
    got["spans"] is the last spans summary (client/web/json.c): ended,
    unmatched (STOPs with no START open in their thread), dropped."""
    summary = re.compile(rb'"spans":\{"ended":(\d+),"unmatched":(\d+),"dropped":(\d+)')
    tail = b""
    try:
        with urllib.request.urlopen(url, timeout=600) as r:
            while True:
                chunk = r.read(65536)
                if not chunk:
                    break
                got["bytes"] += len(chunk)
                found = summary.findall(tail + chunk)
                if found:
                    got["spans"] = tuple(int(x) for x in found[-1])
                tail = chunk[-200:]
    except (OSError, http.client.HTTPException):
        pass  # serve stopped


def dropped_mib(stderr):
    """MiB missing, from a client's closing words (client/source/conn.c)."""
    m = re.search(r"\(([0-9.]+) MiB\) missing", stderr)
    return float(m.group(1)) if m else 0.0


def csv_spans(path):
    with open(path, newline="") as f:
        return sum(1 for row in csv.DictReader(f) if row["label"] == LABEL)


def quarter(points, k, last):
    """The largest RSS of client k in the first (or last) quarter of the
    samples since the first events arrived."""
    live = [p for p in points if p["live"]] or points
    n = max(1, len(live) // 4)
    part = live[-n:] if last else live[:n]
    vals = [p[k] for p in part if p.get(k)]
    return max(vals) if vals else None


def mib(kib):
    return "—" if kib is None else "%.1f" % (kib / 1024)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--rate", type=int, default=10000, help="spans a second, all threads together")
    ap.add_argument("--threads", type=int, default=4)
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    exe = os.path.join(build, "eventlog-socket")
    d = tempfile.mkdtemp(prefix="es-bench-spans-")
    sock = os.path.join(d, "p.sock")
    addr = "unix:" + sock
    rec, out = os.path.join(d, "spans.eventlog"), os.path.join(d, "spans.csv")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GHC_EVENTLOG_")}
    env["GHC_EVENTLOG_UNIX_PATH"] = sock
    cl = {}
    prog = None
    try:
        prog = Probe(os.path.join(build, "probe"), env, open(os.path.join(d, "probe.err"), "w"))
        for _ in range(200):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        pipe = subprocess.PIPE
        cl["record"] = Client("record", [exe, "record", addr, "-o", rec], d, stderr=pipe)
        cl["table spans"] = Client("table spans", [exe, "table", "spans", addr, "--csv", out], d,
                                   stderr=pipe)
        cl["metrics"] = Client("metrics", [exe, "metrics", "--http", "127.0.0.1:0", "--linger",
                                           "600", addr], d, stdout=pipe)
        cl["serve"] = Client("serve", [exe, "serve", addr, "--http", "127.0.0.1:0"], d,
                             stdout=pipe)
        clients = list(cl)
        metrics_url = url_of(cl["metrics"].proc)
        serve_url = url_of(cl["serve"].proc)
        page = {"bytes": 0, "spans": None}
        threading.Thread(target=read_page, args=(serve_url + "events", page), daemon=True).start()
        deadline = time.monotonic() + 60
        while prog.stats()["clients_connected"] < len(clients):
            if time.monotonic() > deadline:
                raise RuntimeError("the clients did not all connect within 60 s")
            time.sleep(0.2)
        points = []

        def sample():
            row = {name: c.rss() for name, c in cl.items()}
            row["program"] = rss_kib(prog.proc.pid)
            # Events have come once record's file is past the header (on
            # GHC < 9.2, once a capability filled a buffer).
            row["live"] = os.path.exists(rec) and os.path.getsize(rec) > LIVE_BYTES
            points.append(row)

        cpu0 = cpu_times(prog.proc.pid)
        t0 = time.monotonic()
        prog.send("span-flood %d %d %d %s" % (args.seconds, args.rate, args.threads, LABEL))
        posted = int(prog.line(args.seconds + 120, sample).split()[1])
        wall = time.monotonic() - t0
        cpu1 = cpu_times(prog.proc.pid)
        sample()
        lib = prog.stats()
        prog.send("hwm")
        prog_hwm = int(prog.line(60).split()[1])
        prog.send("quit")
        prog.line(60)
        prog.proc.stdin.close()
        prog_ru = reap(prog.proc, 60)
        errs = {}
        for name in ("record", "table spans"):
            cl[name].reap(120)
            errs[name] = cl[name].proc.stderr.read().decode()
        size = os.path.getsize(rec)
        seen = {"record": None, "table spans": csv_spans(out)}
        got = {}
        for name, url in (("metrics", metrics_url), ("serve", serve_url + "metrics")):
            # Until every span is in, or the count holds for 3 s (a span
            # the matcher missed never comes).
            deadline, last, since = time.monotonic() + 120, None, time.monotonic()
            while True:
                got[name] = scrape(url)
                now = time.monotonic()
                if got[name]["spans"] != last:
                    last, since = got[name]["spans"], now
                if (last or 0) >= posted or now - since > 3 or now > deadline:
                    break
                time.sleep(0.5)
            seen[name] = None if got[name]["spans"] is None else int(got[name]["spans"])
        for name in ("metrics", "serve"):
            cl[name].stop()
            cl[name].reap(30)
        # The parse alone, for reference: the same stream from the file.
        off = Client("table spans FILE", [exe, "table", "spans", rec, "--csv", out], d,
                     stderr=pipe)
        cl["table spans FILE"] = off
        off.reap(300)
        errs["table spans FILE"] = off.proc.stderr.read().decode()
        seen["table spans FILE"] = csv_spans(out)
    finally:
        stop_all([c.proc for c in cl.values()] + ([prog.proc] if prog else []))
    gib = size / 2**30
    print("spans from a -N4 program: %d posted in %.1f s by %d threads (%.0f a second, asked %d), "
          "%s; the stream %.1f MiB (%.2f MB/s); peak RSS %s"
          % (posted, wall, args.threads, posted / wall, args.rate, os.environ.get("HC", "ghc"),
             size / 2**20, size / wall / 1e6,
             "from GNU time" if TIME else "the largest VmHWM sampled"))
    print()
    live = [i for i, p in enumerate(points) if p["live"]]
    print("RSS early and late: the largest in the first and last quarter of the samples "
          "from %s s of the flood on (record's file past %d KiB); the page read %.1f MiB of "
          "serve's events" % (live[0] if live else 0, LIVE_BYTES // 1024, page["bytes"] / 2**20))
    print()
    print("| client | CPU s | CPU s per GiB | spans per CPU s | RSS early MiB "
          "| RSS late MiB | peak RSS MiB | spans seen | dropped MiB | memory |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    dropped = {name: dropped_mib(errs[name])
               for name in ("record", "table spans", "table spans FILE")}
    for name in ("metrics", "serve"):
        dropped[name] = (got[name]["dropped"] or 0) / 2**20
    verdicts = {}
    for name, c in cl.items():
        first, last = quarter(points, name, False), quarter(points, name, True)
        flat = None
        if first and last:
            flat = last <= first * 1.25 + 4096
        verdicts[name] = flat
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %.1f | %s |"
              % (name if name != "serve" else "serve (+ a page)",
                 "—" if c.cpu is None else "%.2f" % c.cpu,
                 "—" if c.cpu is None else "%.2f" % (c.cpu / gib),
                 "—" if not c.cpu else "%.0f" % (posted / c.cpu),
                 mib(first), mib(last), mib(c.peak),
                 "—" if seen[name] is None else "%d" % seen[name], dropped[name],
                 "—" if flat is None else ("flat" if flat else "grew")))
    prog_cpu = sum(cpu1) - sum(cpu0)
    print()
    print("program: %.2f CPU s in the flood (%.3f of a core), %.2f in all; RSS %s MiB at the "
          "flood's end, peak %s MiB"
          % (prog_cpu, prog_cpu / wall,
             prog_ru.ru_utime + prog_ru.ru_stime if prog_ru else float("nan"),
             mib(points[-1].get("program")), mib(prog_hwm)))
    print("library: %d chunks dropped, %d lost, %d clients cut for lagging, %.1f MiB sent to %d "
          "clients by the flood's end, %.1f MiB held at most"
          % (lib["chunks_dropped"], lib["chunks_lost"], lib["clients_lagged"],
             lib["bytes_sent"] / 2**20, lib["clients_connected"], lib["bytes_held_peak"] / 2**20))
    print("record: %s" % errs["record"].strip().splitlines()[-1])
    held = seen["table spans FILE"]
    if page["spans"]:
        print("serve's page: %d spans ended, %d STOPs with no START open in their thread, %d "
              "STARTs never closed" % page["spans"])
    kept_up = all(seen[n] == held for n in ("table spans", "metrics", "serve"))
    no_drops = (all(v == 0 for v in dropped.values()) and lib["chunks_dropped"] == 0
                and lib["chunks_lost"] == 0 and lib["clients_lagged"] == 0)
    flat = all(verdicts[n] is not False for n in clients)
    cpus = [cl[n].cpu for n in clients if cl[n].cpu is not None]
    peaks = [cl[n].peak for n in clients if cl[n].peak]
    print()
    print("spans: %d a second for %d s: %s%s; %s; each client at most %.2f CPU s per GiB "
          "(%.4f of a core); peak RSS at most %s MiB; memory %s"
          % (args.rate, args.seconds,
             "every client saw the recording's %d spans" % held if kept_up
             else "CLIENTS DISAGREE with the recording's %d spans" % held,
             "" if held == posted else " (%d posted: %d not matched)" % (posted, posted - held),
             "no drops" if no_drops else "DROPS", max(cpus) / gib, max(cpus) / wall,
             mib(max(peaks) if peaks else None), "flat" if flat else "GREW"))
    shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
