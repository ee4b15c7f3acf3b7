"""`eventlog-socket serve` with a stalled browser tab, beside `eventlog-socket
record`, both reading the same run of the trace workload from its start.
Issue 15 asks that the web page never slow the client down: a tab that
stops reading its event stream must not cost serve any of the program's
stream, so serve's own recording (the page's download) gets no drop
notice that record does not. Also serve's CPU time per GiB and its peak
memory (the stalled tab's messages are bounded)."""

import os
import re
import signal
import socket
import subprocess
import threading
import time

import benchlib
from benchlib import fmt, median_min_max

NAME = "serve"


def wait_rusage(b, p, timeout):
    """Wait for `p`; return (status, CPU seconds, peak RSS KiB)."""
    killer = threading.Timer(timeout, b.kill, (p,))
    killer.start()
    try:
        _, status, usage = os.wait4(p.pid, 0)
    finally:
        killer.cancel()
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def drop_notices(b, path):
    out = subprocess.run([b.exe("eventlog-check"), path], capture_output=True, text=True,
                         timeout=benchlib.TIMEOUT).stdout
    return len(re.findall(r"^message \d+ eventlog-socket: dropped", out, re.M))


def one_run(b, args):
    sock = b.path("s.sock")
    rec_out, serve_out = b.path("rec.eventlog"), b.path("serve.eventlog")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GHC_EVENTLOG_")}
    env.update(GHC_EVENTLOG_UNIX_PATH=sock, GHC_EVENTLOG_WAIT="1")
    srv = b.spawn([b.exe("eventlog-socket"), "serve", sock, "--retry", "--http", "127.0.0.1:0",
                   "--record", serve_out], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    port = int(re.search(rb":(\d+)/", srv.stdout.readline()).group(1))
    rec = b.spawn([b.exe("eventlog-socket"), "record", sock, "--retry", "-o", rec_out],
                  stderr=subprocess.PIPE)
    # The stalled tab: asks for the event stream, then never reads.
    tab = socket.create_connection(("127.0.0.1", port))
    tab.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    tab.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % port)
    start = time.monotonic()
    p = b.spawn([b.exe("bench/workload")] + args + ["+RTS", "-l", "-N2", "-RTS"], env=env,
                stderr=subprocess.DEVNULL)
    rc = b.wait(p, benchlib.TIMEOUT)
    b.wait(rec, benchlib.TIMEOUT)
    elapsed = time.monotonic() - start
    # serve keeps serving after the program's exit: it has the whole
    # stream once its recording is as long as record's.
    deadline = time.monotonic() + benchlib.TIMEOUT
    while (os.path.getsize(serve_out) < os.path.getsize(rec_out)
           and time.monotonic() < deadline):
        time.sleep(0.05)
    srv.send_signal(signal.SIGTERM)
    src, cpu, rss = wait_rusage(b, srv, benchlib.TIMEOUT)
    tab.close()
    if rc != 0 or src != 0:
        raise RuntimeError("workload %s exited %d, serve %d" % (args, rc, src))
    size = os.path.getsize(serve_out)
    out = {"mib_per_s": os.path.getsize(rec_out) / (1 << 20) / elapsed,
           "serve_bytes": size, "record_bytes": os.path.getsize(rec_out),
           "serve_drops": drop_notices(b, serve_out), "record_drops": drop_notices(b, rec_out),
           "serve_cpu_s_per_gib": cpu / (size / (1 << 30)), "serve_peak_rss_mib": rss / 1024}
    os.unlink(rec_out)
    os.unlink(serve_out)
    return out


def run(b):
    args = ["trace", "4", "1000000"]
    runs = [one_run(b, args) for _ in range(max(1, benchlib.REPS // 5))]
    out = {"workload": " ".join(args), "runs": len(runs)}
    for k in runs[0]:
        out[k] = median_min_max([r[k] for r in runs])
    b.results["serve"] = out


def report(r, add):
    if "serve" not in r:
        return
    m = r["serve"]
    add("")
    add("9. eventlog-socket serve with a stalled tab, beside record, one run of workload %s "
        "from its start (%d run(s))" % (m["workload"], m["runs"]))
    add("   stream %s MiB/s   serve %s MiB, record %s MiB   drop notices: serve %s, record %s"
        % (fmt(m["mib_per_s"], "", 0), fmt({k: v / (1 << 20) for k, v in
                                             m["serve_bytes"].items()}, "", 0),
           fmt({k: v / (1 << 20) for k, v in m["record_bytes"].items()}, "", 0),
           fmt(m["serve_drops"], "", 0), fmt(m["record_drops"], "", 0)))
    add("   serve CPU s per GiB %s   peak RSS %s MiB" % (fmt(m["serve_cpu_s_per_gib"], "", 3),
                                                       fmt(m["serve_peak_rss_mib"], "", 1)))
