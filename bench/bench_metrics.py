#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The cost of `eventlog-socket metrics`: memory per program
followed, and CPU seconds per GiB of eventlog parsed.

A real eventlog is recorded once (fibber-c-main +RTS -hT, through
`eventlog-socket record`); then N stand-in programs, each a Unix socket
served by this script, send its header and then its events over and over (--mib each)
(an endless program's stream, compressed in time) and stay connected. The
exporter follows them all through one glob. Figures, from /proc of the
exporter: (RSS with N programs - RSS with none) / N, and (user + system
CPU) / bytes received, once every stream is in.

    python3 bench/bench_metrics.py [--build build] [--programs 100] [--mib 16] [--file REC]

--file replays a recording made before (the same bytes for two builds);
otherwise one is made, and its mix of events varies from run to run (how
many censuses fall in it): compare builds on one file.
"""
import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def cpu_times(pid):
    """(user, system) CPU seconds of the process so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tck = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tck, int(fields[12]) / tck


def stop_all(procs, timeout=30):
    """SIGTERM each process still running, then wait up to `timeout` s for
    each; one that is still there is killed (SIGKILL) and reaped."""
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def record(build, d):
    sock, out = os.path.join(d, "rec.sock"), os.path.join(d, "rec.eventlog")
    env = dict(os.environ, GHC_EVENTLOG_UNIX_PATH=sock, GHC_EVENTLOG_WAIT="1")
    p = subprocess.Popen([os.path.join(build, "fibber-c-main"), "27", "27", "27", "27",
                          "+RTS", "-hT", "-i0.01", "-RTS"], env=env, stdout=subprocess.DEVNULL)
    while not os.path.exists(sock):
        time.sleep(0.01)
    subprocess.run([os.path.join(build, "eventlog-socket"), "record", "unix:" + sock, "-o", out,
                    "--retry"], check=True, timeout=300, stderr=subprocess.DEVNULL)
    p.wait(timeout=60)
    return open(out, "rb").read()


def header_len(data):
    """The header ends after the event types' end tag (HETE) and the data
    begin tag (HETE ... "datb")."""
    return data.index(b"datb") + 4


def serve_one(path, payload, done):
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(1)
    conn, _ = srv.accept()
    conn.sendall(payload)
    done.release()
    try:
        conn.recv(1)  # stays connected until the exporter goes
    except OSError:
        pass
    conn.close()
    srv.close()


def floor(a, data, system):
    """The least any parse of this stream costs: the reader's walk with no
    event wanted one by one (bench/programs/skim_floor.c, from memory) plus the
    system time of receiving it, as this run measured."""
    exe = os.path.join(a.build, "bench", "skim-floor")
    if not os.path.exists(exe):
        print("floor: %s not built (make bench-programs)" % exe)
        return
    with tempfile.NamedTemporaryFile(suffix=".eventlog") as f:
        f.write(data)
        f.flush()
        walks = []
        for _ in range(3):
            out = subprocess.run([exe, f.name, str(a.mib)], capture_output=True, text=True,
                                 timeout=300, check=True).stdout
            walks.append(float(re.search(r'"cpu_s_per_gib": ([0-9.]+)', out).group(1)))
    walk = sorted(walks)[1]
    print("floor: %.2f s/GiB (the reader's walk with no event wanted, median of 3: user %.2f "
          "s/GiB; receiving: system %.2f s/GiB)" % (walk + system, walk, system))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--programs", type=int, default=100)
    ap.add_argument("--mib", type=float, default=16,
                    help="MiB each stand-in program sends (its events repeated)")
    ap.add_argument("--file", help="a recorded eventlog to replay (default: record one)")
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="es-bench-metrics-")
    exporter = None
    try:
        data = open(a.file, "rb").read() if a.file else record(a.build, d)
        h = header_len(data)
        body = data[h:-2] if data.endswith(b"\xff\xff") else data[h:]
        a.repeat = max(1, int(a.mib * 2**20 / len(body)))
        payload = data[:h] + body * a.repeat
        os.mkdir(os.path.join(d, "p"))
        exporter = subprocess.Popen(
            [os.path.join(a.build, "eventlog-socket"), "metrics", "--http", "127.0.0.1:0",
             os.path.join(d, "p", "*.sock")], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        line = exporter.stdout.readline().decode()
        url = re.search(r"(http://\S+)", line).group(1)
        time.sleep(1)
        base_rss, base_ut = rss_kib(exporter.pid), cpu_times(exporter.pid)
        done = threading.Semaphore(0)
        for i in range(a.programs):
            threading.Thread(target=serve_one, daemon=True,
                             args=(os.path.join(d, "p", "%d.sock" % i), payload, done)).start()
        for _ in range(a.programs):
            done.acquire()
        want = a.programs * len(payload)
        deadline = time.monotonic() + 600
        while True:
            text = urllib.request.urlopen(url, timeout=30).read().decode()
            got = sum(float(v) for v in re.findall(
                r"^eventlog_socket_received_bytes_total\{.*\} (\S+)$", text, re.M))
            if got >= want or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        rss, ut = rss_kib(exporter.pid), cpu_times(exporter.pid)
        user, system = ut[0] - base_ut[0], ut[1] - base_ut[1]
        gib = got / 2**30
        print("recorded eventlog: %d bytes, sent %d times over by each of %d programs"
              % (len(data), a.repeat, a.programs))
        print("received: %.3f GiB of %.3f" % (gib, want / 2**30))
        print("memory per program: %.2f MiB (RSS %d KiB with none, %d KiB with %d)"
              % ((rss - base_rss) / 1024 / a.programs, base_rss, rss, a.programs))
        print("CPU per GiB parsed: %.2f s (%.2f s CPU for %.3f GiB: user %.2f s/GiB, "
              "system %.2f s/GiB)" % ((user + system) / gib, user + system, gib, user / gib,
                                      system / gib))
        print("exposition: %d bytes, %d lines" % (len(text), text.count("\n")))
        floor(a, data, system / gib)
    finally:
        if exporter is not None:
            exporter.kill()
            exporter.wait()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
