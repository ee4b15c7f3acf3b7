# SPDX-License-Identifier: BSD-3-Clause
"""The flight recorder's cost (README, "Flight recorder"):

1. Instructions under callgrind, the window on (GHC_EVENTLOG_RETAIN=64M)
   against off, nobody connected: fibber on one capability, and a
   census-heavy program (the workload's maps, +RTS -hT -V0: a census at
   every major GC). The same counted runs as section 1c: -N1 -V0, so that
   two runs of one configuration agree to about 1 in 10^6.
2. Peak RSS of a program writing 100 MB/s of eventlog with nobody
   connected against the window's size (0, 16M, 64M, 256M).
3. What a trigger-watching client costs against `metrics`, per GiB of a
   real program's eventlog (fibber-c-main +RTS -hT, recorded once, sent
   over and over by a stand-in program, bench_metrics.py's way): user +
   system CPU seconds of each client, and the watcher's peak RSS (its
   ring holds the time before, at most --memory).

BENCH_FLIGHT=instructions,rss,watch picks parts (default all)."""

import os
import re
import shutil
import socket
import subprocess
import threading
import time
import urllib.request

import benchlib
from bench_instructions import library_cost
from benchlib import run_workload

NAME = "flight"

COUNTED = {
    "fibber": (["30"] * 10, ["-V0", "-A256k"], "bench/fibber"),
    "census": (["gc", "8", "5"], ["-V0", "-hT"], "bench/workload"),
}
WINDOW = {"GHC_EVENTLOG_RETAIN": "64M"}
RSS_SIZES = ["0", "16M", "64M", "256M"]


def instructions(b):
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return {"skipped": "valgrind is not installed"}
    keep = os.path.join(benchlib.BUILD, "bench", "callgrind")
    os.makedirs(keep, exist_ok=True)
    out = {}
    for name, (args, rts, program) in COUNTED.items():
        res = {"workload": " ".join(args[:3] + ["+RTS", "-N1"] + rts + ["-RTS"])}
        for label, env in (("off", None), ("on", WINDOW)):
            cg = os.path.join(keep, "flight-%s-%s.out" % (name, label))
            wrap = [valgrind, "--tool=callgrind", "--trace-children=no",
                    "--callgrind-out-file=" + cg]
            stats = []
            run_workload(b, args, "socket0", b.path("f.sock"), caps=1, rts_extra=rts, wrap=wrap,
                         timeout=1200, program=program, env_extra=env, flushes=stats)
            total, by, rts_asked, _ = library_cost(cg, b.exe(program))
            res[label] = {"instructions": total, "library": sum(by.values()),
                          "rts_called_by_library": sum(rts_asked.values()),
                          "flushes": stats[0].get("flushes") if stats else None}
        res["ratio"] = res["on"]["instructions"] / res["off"]["instructions"]
        out[name] = res
    return out


def peak_rss(b, retain, seconds):
    sock = b.path("r.sock")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GHC_EVENTLOG_")}
    env.update(GHC_EVENTLOG_UNIX_PATH=sock, GHC_EVENTLOG_MAX_BUFFER="16M")
    if retain != "0":
        env["GHC_EVENTLOG_RETAIN"] = retain
    # A first client that comes and goes: then nothing is kept for one,
    # and only the window holds the past.
    # 100 MB/s of 1000-byte messages, after a 1 s pause.
    p = b.spawn([b.exe("bench/workload"), "big-for", str(seconds), "100", "1000", "+RTS", "-l",
                 "-RTS"], env=env, stderr=subprocess.DEVNULL)
    while not os.path.exists(sock) and p.poll() is None:
        time.sleep(0.01)
    c = socket.socket(socket.AF_UNIX)
    c.connect(sock)
    c.close()
    hwm = 0
    deadline = time.monotonic() + seconds + 60
    while p.poll() is None and time.monotonic() < deadline:
        try:
            with open("/proc/%d/status" % p.pid) as f:
                hwm = max(hwm, int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1)))
        except (FileNotFoundError, ProcessLookupError, AttributeError):
            pass
        time.sleep(0.05)
    p.wait(timeout=benchlib.TIMEOUT)
    return hwm


def cpu_of(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def recording(b):
    sock, out = b.path("rec.sock"), b.path("rec.eventlog")
    env = dict(os.environ, GHC_EVENTLOG_UNIX_PATH=sock, GHC_EVENTLOG_WAIT="1")
    p = b.spawn([b.exe("fibber-c-main"), "27", "27", "27", "27", "+RTS", "-hT", "-i0.01",
                 "-RTS"], env=env, stdout=subprocess.DEVNULL)
    subprocess.run([b.exe("eventlog-socket"), "record", "unix:" + sock, "-o", out, "--retry"],
                   check=True, timeout=300, stderr=subprocess.DEVNULL)
    p.wait(timeout=60)
    data = bytearray(open(out, "rb").read())
    h = data.index(b"datb") + 4
    # The events to repeat, without the end marker: after the last block
    # on GHC 9.0, inside it (its size counts it) on 9.2+.
    last, i = None, h
    while i + 14 <= len(data) and data[i:i + 2] == b"\x00\x12":
        last, i = i, i + int.from_bytes(data[i + 10:i + 14], "big")
    if last is not None and i == len(data) and data.endswith(b"\xff\xff"):
        size = int.from_bytes(data[last + 10:last + 14], "big") - 2
        data[last + 10:last + 14] = size.to_bytes(4, "big")
    body = data[h:-2] if data.endswith(b"\xff\xff") else data[h:]
    return bytes(data[:h]), bytes(body)


def stand_in(path, payload, close):
    """A program's socket that sends `payload`, then closes (`close`) or
    stays open until the client goes."""
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(1)
    conn, _ = srv.accept()
    conn.sendall(payload)
    if not close:
        try:
            conn.recv(1)
        except OSError:
            pass
    conn.close()
    srv.close()


def watch_vs_metrics(b, mib):
    header, body = recording(b)
    payload = header + body * max(1, int(mib * 2**20 / len(body)))
    gib = len(payload) / 2**30
    res = {"gib": gib}
    # The watcher: a condition that never holds, the time before kept.
    path = b.path("w.sock")
    threading.Thread(target=stand_in, args=(path, payload, True), daemon=True).start()
    d = b.path("shots")
    os.makedirs(d, exist_ok=True)
    w = subprocess.Popen([b.exe("eventlog-socket"), "record", "unix:" + path, "--trigger",
                          "gc-pause>100s", "--before", "60s", "-o", d],
                         stderr=subprocess.DEVNULL)
    # Its peak RSS from /proc while it runs (a child's ru_maxrss counts
    # this process's pages, the payload's, from the fork).
    hwm = 0
    while True:
        pid, _, ru = os.wait4(w.pid, os.WNOHANG)
        if pid:
            break
        try:
            with open("/proc/%d/status" % w.pid) as f:
                hwm = max(hwm, int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1)))
        except (FileNotFoundError, ProcessLookupError, AttributeError):
            pass
        time.sleep(0.02)
    w.returncode = 0
    res["watch_cpu_s_per_gib"] = (ru.ru_utime + ru.ru_stime) / gib
    res["watch_peak_rss_kib"] = hwm
    # metrics: one program, its received bytes read from the exposition.
    os.makedirs(b.path("m"), exist_ok=True)
    path = b.path("m/p.sock")
    threading.Thread(target=stand_in, args=(path, payload, False), daemon=True).start()
    m = subprocess.Popen([b.exe("eventlog-socket"), "metrics", "--http", "127.0.0.1:0",
                          b.path("m/*.sock")], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    url = re.search(r"(http://\S+)", m.stdout.readline().decode()).group(1)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        text = urllib.request.urlopen(url, timeout=30).read().decode()
        got = sum(float(v) for v in re.findall(
            r"^eventlog_socket_received_bytes_total\{.*\} (\S+)$", text, re.M))
        if got >= len(payload):
            break
        time.sleep(0.2)
    res["metrics_cpu_s_per_gib"] = cpu_of(m.pid) / gib
    m.kill()
    m.wait()
    return res


def run(b):
    """BENCH_FLIGHT=instructions,rss,watch (the default: all three) picks
    the parts."""
    parts = os.environ.get("BENCH_FLIGHT", "instructions,rss,watch").split(",")
    seconds = 3 if benchlib.QUICK else 8
    res = {"rss_seconds": seconds}
    if "instructions" in parts:
        res["instructions"] = instructions(b)
    if "rss" in parts:
        res["peak_rss_kib"] = {size: peak_rss(b, size, seconds) for size in RSS_SIZES}
    if "watch" in parts:
        res["watch"] = watch_vs_metrics(b, 64 if benchlib.QUICK else 512)
    b.results["flight"] = res


def report(r, add):
    if "flight" not in r:
        return
    f = r["flight"]
    add("")
    add("13. The flight recorder: the window (GHC_EVENTLOG_RETAIN=64M) on against off, nobody "
        "connected")
    ins = f.get("instructions", {})
    if "skipped" in ins:
        add("   instructions skipped: " + ins["skipped"])
    for name, m in ins.items() if "skipped" not in ins else ():
        add("   %-7s %s: %d -> %d instructions = x%.5f (library %d -> %d; RTS work it asked "
            "for %d -> %d; flushes %s -> %s)" % (
                name, m["workload"], m["off"]["instructions"], m["on"]["instructions"],
                m["ratio"], m["off"]["library"], m["on"]["library"],
                m["off"]["rts_called_by_library"], m["on"]["rts_called_by_library"],
                m["off"]["flushes"], m["on"]["flushes"]))
    if "peak_rss_kib" in f:
        base = f["peak_rss_kib"]["0"]
        add("   peak RSS of %d s at 100 MB/s, nobody connected: %s" % (f["rss_seconds"], "; ".join(
            "window %s %d KiB (+%.1f MiB)" % (k, v, (v - base) / 1024.0)
            for k, v in f["peak_rss_kib"].items())))
    if "watch" not in f:
        return
    w = f["watch"]
    add("   per GiB of fibber's eventlog (%.2f GiB): record --trigger %.2f CPU s (peak RSS %d "
        "KiB), metrics %.2f CPU s" % (w["gib"], w["watch_cpu_s_per_gib"],
                                      w["watch_peak_rss_kib"], w["metrics_cpu_s_per_gib"]))
