# SPDX-License-Identifier: BSD-3-Clause
"""Latency: how long a marker from an idle program takes to reach a client
(GHC >= 9.2, which the library flushes every 100 ms)."""

import os
import socket
import subprocess
import time

import benchlib

NAME = "latency"


def run(b, markers=30):
    ver = benchlib.ghc_version()
    major, minor = map(int, ver.split(".")[:2])
    if (major, minor) < (9, 2):
        b.results["latency"] = {"skipped": "GHC %s cannot flush its eventlog buffers: "
                                           "events arrive when a 2 MiB buffer fills "
                                           "and at exit" % ver}
        return
    sock = b.path("l.sock")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GHC_EVENTLOG_")}
    env.update(GHC_EVENTLOG_UNIX_PATH=sock, GHC_EVENTLOG_WAIT="1")
    p = b.spawn([b.exe("probe")], env=env, stdin=subprocess.PIPE,
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
    p.wait(timeout=benchlib.TIMEOUT)
    c.close()
    lat.sort()
    interval = 100.0
    b.results["latency"] = {
        "markers": markers, "flush_interval_ms": interval,
        "ms": {"p50": lat[len(lat) // 2], "p90": lat[len(lat) * 9 // 10], "max": lat[-1],
               "min": lat[0]},
        "p50_over_interval": lat[len(lat) // 2] / interval}


def report(r, add):
    if "latency" not in r:
        return
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
