# SPDX-License-Identifier: BSD-3-Clause
"""`eventlog-socket serve` with a stalled browser tab, beside `eventlog-socket
record`, both reading the same run of a program from its start. The goal:
the web page never slows the client down: at >= 100 MB/s a tab
that stops reading its event stream must not cost serve any of the
program's stream, so serve's own recording (the page's download) gets no
drop notice that record does not. The program is the workload's big-for
mode (SIZE-byte messages encoded once, paced to a rate), at 100 MB/s and at
a rate past what a client keeps up with here, where both fall behind and
the counts are compared, there also without the tab, to tell what the tab
costs from what serve's own work per byte (model, recording) costs. Also
serve's CPU time per GiB and its peak memory (the stalled tab's messages
are bounded)."""

import os
import re
import signal
import socket
import subprocess
import time

import benchlib
from benchlib import fmt, median_min_max

NAME = "serve"
SECONDS = 4
SIZE = 4000
CASES = ((100, True), (400, True), (400, False))  # (MB/s of message text, a stalled tab)
PAUSE = 1.0  # big-for's pause before the flood


def peak_rss_kib(pid):
    """The process's peak RSS since its exec (VmHWM)."""
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1))


def drop_notices(b, path):
    """(notices, chunks) of the library's drop notices in a recording. The
    checker prints every message (GBs here): read as it goes, keep none."""
    notice = re.compile(rb"^message \d+ eventlog-socket: dropped (\d+) chunks")
    chk = b.spawn([b.exe("eventlog-check"), path], stdout=subprocess.PIPE)
    chunks = [int(m.group(1)) for m in map(notice.match, chk.stdout) if m]
    b.wait(chk, benchlib.TIMEOUT)
    return len(chunks), sum(chunks)


def one_run(b, rate, stalled_tab=True):
    sock = b.path("s.sock")
    rec_out, serve_out = b.path("rec.eventlog"), b.path("serve.eventlog")
    serve_err = b.path("serve.err")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GHC_EVENTLOG_")}
    env.update(GHC_EVENTLOG_UNIX_PATH=sock, GHC_EVENTLOG_WAIT="1")
    with open(serve_err, "w") as err:
        srv = b.spawn([b.exe("eventlog-socket"), "serve", sock, "--retry", "--http",
                       "127.0.0.1:0", "--record", serve_out], stdout=subprocess.PIPE, stderr=err)
    port = int(re.search(rb":(\d+)/", srv.stdout.readline()).group(1))
    rec = b.spawn([b.exe("eventlog-socket"), "record", sock, "--retry", "-o", rec_out],
                  stderr=subprocess.PIPE)
    # The stalled tab: asks for the event stream, then never reads.
    tab = None
    if stalled_tab:
        tab = socket.create_connection(("127.0.0.1", port))
        tab.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        tab.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % port)
    args = ["big-for", str(SECONDS), str(rate), str(SIZE)]
    start = time.monotonic()
    p = b.spawn([b.exe("bench/workload")] + args + ["+RTS", "-l", "-N2", "-RTS"], env=env,
                stderr=subprocess.DEVNULL)
    rc = b.wait(p, benchlib.TIMEOUT)
    took = time.monotonic() - start - PAUSE
    b.wait(rec, benchlib.TIMEOUT)
    # serve keeps serving after the program's exit (--retry: waiting for
    # the next run); its recording is whole once it says the run ended.
    deadline = time.monotonic() + benchlib.TIMEOUT
    while time.monotonic() < deadline:
        with open(serve_err) as f:
            if re.search(r"the program exited|the connection was lost", f.read()):
                break
        time.sleep(0.05)
    rss = peak_rss_kib(srv.pid)
    srv.send_signal(signal.SIGTERM)
    src, cpu = benchlib.wait_rusage(b, srv, benchlib.TIMEOUT)
    if tab is not None:
        tab.close()
    if rc != 0 or src != 0:
        raise RuntimeError("workload %s exited %d, serve %d" % (args, rc, src))
    size, rsize = os.path.getsize(serve_out), os.path.getsize(rec_out)
    sd, sc = drop_notices(b, serve_out)
    rd, rcn = drop_notices(b, rec_out)
    out = {"mb_per_s": rsize / 1e6 / took, "serve_bytes": size, "record_bytes": rsize,
           "serve_drops": sd, "record_drops": rd, "serve_dropped_chunks": sc,
           "record_dropped_chunks": rcn,
           "serve_cpu_s_per_gib": cpu / (size / (1 << 30)), "serve_peak_rss_mib": rss / 1024}
    os.unlink(rec_out)
    os.unlink(serve_out)
    return out


def run(b):
    res = {"seconds": SECONDS, "size": SIZE, "cases": []}
    for rate, tab in CASES:
        runs = [one_run(b, rate, tab) for _ in range(max(1, benchlib.REPS // 5))]
        out = {"rate": rate, "tab": tab, "runs": len(runs)}
        for k in runs[0]:
            out[k] = median_min_max([r[k] for r in runs])
        res["cases"].append(out)
    b.results["serve"] = res


def report(r, add):
    if "serve" not in r or "cases" not in r["serve"]:
        return
    m = r["serve"]
    add("")
    add("9. eventlog-socket serve with a stalled tab, beside record, one run of workload "
        "big-for %d s (%d-byte messages) from its start, per target rate"
        % (m["seconds"], m["size"]))
    for x in m["cases"]:
        add("   %s MB/s target, %s (%d run(s)): stream %s MB/s   serve %s MiB, record %s MiB"
            % (x["rate"], "a stalled tab" if x["tab"] else "no tab", x["runs"],
               fmt(x["mb_per_s"], "", 0),
               fmt({k: v / (1 << 20) for k, v in x["serve_bytes"].items()}, "", 0),
               fmt({k: v / (1 << 20) for k, v in x["record_bytes"].items()}, "", 0)))
        add("      drop notices (chunks): serve %s (%s), record %s (%s)   serve CPU s per GiB %s"
            "   peak RSS %s MiB"
            % (fmt(x["serve_drops"], "", 0), fmt(x["serve_dropped_chunks"], "", 0),
               fmt(x["record_drops"], "", 0), fmt(x["record_dropped_chunks"], "", 0),
               fmt(x["serve_cpu_s_per_gib"], "", 3), fmt(x["serve_peak_rss_mib"], "", 1)))
