# SPDX-License-Identifier: BSD-3-Clause
"""The soak (make soak SOAK_MINUTES=30; not part of make check or make
bench): the probe streams for that long, about 1 MB/s of user messages,
with three clients at once:

- a lossless one (build/many-clients --lossless), which must get every
  message and the end marker;
- a slow one (many-clients --read-mbps 0.5, half the program's rate), which
  gets drop notices and, at exit, the end marker or a cut notice before it;
- one that reconnects every second: it reads for a second, closes, and
  connects again; every stream it got must begin with a whole header, and
  every tenth is judged by ghc-events (build/eventlog-check --partial).

Every 10 s the program's RSS, open file descriptors, the library's memory
held (eventlog_socket_stats' bytes_held) and its threads' CPU time (RTS
threads inside writeEventLog, walker, loop) are sampled; at the end they are
judged flat: the last third of the run against the first third after the
first minute. Prints a line per sample, a table by five minutes, the
verdicts and `soak: N passed, N failed`; exit status 0 when all passed."""

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "pylib"))
import esproc  # noqa: E402

STATS = ["clients_connected", "clients_accepted", "clients_lagged", "bytes_received",
         "bytes_sent", "chunks_dropped", "bytes_dropped", "bytes_held", "bytes_held_peak",
         "flushes", "flush_us", "clients_refused", "cpu_ns_writer", "cpu_ns_walker",
         "cpu_ns_loop", "clients_lossless", "lossless_waits", "lossless_wait_ns",
         "lossless_wait_max_ns"]
TAG = "soak "


class Probe:
    """The probe on a Unix socket, driven over its stdin and stdout."""

    def __init__(self, g, build, sock):
        env = {k: v for k, v in os.environ.items() if not k.startswith("GHC_EVENTLOG_")}
        env.update({"GHC_EVENTLOG_UNIX_PATH": sock, "GHC_EVENTLOG_WAIT": "1"})
        self.err = open(g.path("probe.stderr"), "wb")
        self.proc = g.spawn([os.path.join(build, "probe")], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=self.err)

    def ask(self, line):
        self.proc.stdin.write((line + "\n").encode())
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().decode().strip()
        if not answer:
            raise RuntimeError("the probe stopped answering (%r)" % line)
        return answer

    def stats(self):
        words = self.ask("stats").split()
        return dict(zip(STATS, map(int, words[1:])))


def sample(probe, t0):
    st = probe.stats()
    pid = probe.proc.pid
    with open("/proc/%d/status" % pid) as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    fds = len(os.listdir("/proc/%d/fd" % pid))
    return {"t": time.monotonic() - t0, "rss_kib": rss, "fds": fds, "held": st["bytes_held"],
            "cpu_ns": st["cpu_ns_writer"] + st["cpu_ns_walker"] + st["cpu_ns_loop"],
            "sent": st["bytes_sent"], "dropped": st["chunks_dropped"]}


class Reconnector(threading.Thread):
    """Connects, reads for a second, closes; again until told to stop."""

    def __init__(self, g, sock, checker):
        super().__init__(daemon=True)
        self.g, self.sock, self.checker = g, sock, checker
        self.stop = threading.Event()
        self.streams = self.headerless = self.judged = 0
        self.failures = []

    def one(self):
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            c.connect(self.sock)
        except OSError:
            c.close()
            return  # the program is exiting
        data = bytearray()
        end = time.monotonic() + 1.0
        c.settimeout(0.1)
        while time.monotonic() < end:
            try:
                got = c.recv(1 << 16)
            except socket.timeout:
                continue
            if not got:
                break
            data += got
        c.close()
        self.streams += 1
        if not data.startswith(b"hdrb") or b"datb" not in data:
            self.headerless += 1
            return
        if self.streams % 10 == 0:
            path = self.g.path("reconnect.eventlog")
            with open(path, "wb") as f:
                f.write(data)
            r = subprocess.run([self.checker, "--partial", path], capture_output=True,
                               timeout=120)
            self.judged += 1
            if r.returncode != 0:
                self.failures.append(r.stdout.decode(errors="replace")[:200])

    def run(self):
        while not self.stop.is_set():
            start = time.monotonic()
            self.one()
            time.sleep(max(0.0, 1.0 - (time.monotonic() - start)))


def reader(g, build, sock, extra):
    argv = [os.path.join(build, "many-clients"), "--unix", sock, "--readers", "1",
            "--timeout", "100000", "--tag", TAG, *extra]
    return g.spawn(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def thirds(samples, key, rate=False):
    """The key's values (or its rate per second) in the first third after
    the first minute and in the last third."""
    vals = []
    for a, b in zip(samples, samples[1:]):
        v = (b[key] - a[key]) / (b["t"] - a["t"]) if rate else b[key]
        vals.append((b["t"], v))
    warm = [v for t, v in vals if t >= 60]
    n = len(warm) // 3
    return warm[:n], warm[-n:]


def judge(samples, verdicts):
    def flat(name, key, slack, rate=False, scale=1.0, unit=""):
        first, last = thirds(samples, key, rate)
        if not first:
            verdicts.append((False, "%s: too few samples" % name))
            return
        a, b = max(first) * scale, max(last) * scale
        ok = b <= a * 1.25 + slack
        verdicts.append((ok, "%s flat: max %.1f%s in the first third, %.1f%s in the last "
                         "(allowed %.1f%s)" % (name, a, unit, b, unit, a * 1.25 + slack, unit)))

    flat("RSS", "rss_kib", 4096 / 1024, scale=1 / 1024, unit=" MiB")
    flat("file descriptors", "fds", 2)
    flat("bytes held", "held", 4, scale=1 / (1 << 20), unit=" MiB")
    # CPU per byte sent, so that the machine's other work moves it less.
    for s in samples:
        s["cpu_per_mib"] = s["cpu_ns"] / 1e6 / max(1.0, s["sent"] / (1 << 20))
    first, last = thirds(samples, "cpu_per_mib")
    if first:
        a, b = statistics.median(first), statistics.median(last)
        verdicts.append((b <= a * 1.5, "library CPU per MiB sent flat: median %.2f ms/MiB in the "
                         "first third, %.2f in the last" % (a, b)))


def table(samples):
    print("| minute | RSS (MiB) | fds | held (MiB) | library CPU (ms/s) | sent (MiB/s) |")
    print("|---|---|---|---|---|---|")
    prev = samples[0]
    for s in samples[1:]:
        if int(s["t"]) // 300 == int(prev["t"]) // 300 and s is not samples[-1]:
            continue
        dt = s["t"] - prev["t"]
        print("| %.0f | %.1f | %d | %.1f | %.1f | %.2f |"
              % (s["t"] / 60, s["rss_kib"] / 1024, s["fds"], s["held"] / (1 << 20),
                 (s["cpu_ns"] - prev["cpu_ns"]) / 1e6 / dt,
                 (s["sent"] - prev["sent"]) / (1 << 20) / dt))
        prev = s


def finish_reader(proc, name, verdicts, want_all=None):
    out, _ = proc.communicate(timeout=120)
    lines = [line for line in out.splitlines() if line.strip()]
    print("# %s: %s" % (name, " / ".join(lines[-3:])))
    ok = proc.returncode == 0
    if want_all is not None:
        ok = ok and (", %d tagged" % want_all) in out
    verdicts.append((ok, "%s: stream complete, parsed as it came%s"
                     % (name, ", all %d messages" % want_all if want_all is not None else "")))


def soak(g, build, minutes):
    sock = g.path("soak.sock")
    probe = Probe(g, build, sock)
    while not os.path.exists(sock):
        time.sleep(0.05)
    time.sleep(0.2)
    lossless = reader(g, build, sock, ["--lossless"])
    slow = reader(g, build, sock, ["--read-mbps", "0.5"])
    probe.ask("gc")  # waits for the first client (GHC_EVENTLOG_WAIT)
    while probe.stats()["clients_accepted"] < 2:
        time.sleep(0.05)
    recon = Reconnector(g, sock, os.path.join(build, "eventlog-check"))
    recon.start()
    t0 = time.monotonic()
    samples = [sample(probe, t0)]
    posted = 0
    while time.monotonic() - t0 < minutes * 60:
        answer = probe.ask("flood-for 10 %s 500" % TAG.strip())
        posted += int(answer.split()[1])  # each round numbers its messages from 1
        samples.append(sample(probe, t0))
        s = samples[-1]
        print("%6.0f s  rss %6.1f MiB  fds %3d  held %5.1f MiB  cpu %7.0f ms  sent %8.1f MiB  "
              "reconnects %d" % (s["t"], s["rss_kib"] / 1024, s["fds"], s["held"] / (1 << 20),
                                 s["cpu_ns"] / 1e6, s["sent"] / (1 << 20), recon.streams),
              flush=True)
    recon.stop.set()
    recon.join(timeout=10)
    probe.proc.stdin.close()
    probe.proc.wait(timeout=60)
    return samples, recon, lossless, slow, posted


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--minutes", type=float, default=30)
    a = ap.parse_args()
    # SIGTERM (a timeout, make killed) ends the run through the cleanup
    # below: the program, the clients and the scratch directory go too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    g = esproc.Group("es-soak-")
    verdicts = []
    try:
        samples, recon, lossless, slow, posted = soak(g, a.build, a.minutes)
        rounds = len(samples) - 1
        table(samples)
        judge(samples, verdicts)
        finish_reader(lossless, "lossless client", verdicts, want_all=posted)
        finish_reader(slow, "slow client", verdicts)
        verdicts.append((recon.streams >= a.minutes * 60 * 0.5 and recon.headerless == 0
                         and not recon.failures,
                         "reconnecting client: %d streams, %d without a whole header, %d judged "
                         "by ghc-events, %d failed%s" % (recon.streams, recon.headerless,
                                                         recon.judged, len(recon.failures),
                                                         (": " + recon.failures[0])
                                                         if recon.failures else "")))
        print("# %d samples of 10 s" % rounds)
    finally:
        g.close()
    for ok, text in verdicts:
        print("%s - %s" % ("ok" if ok else "not ok", text))
    passed = sum(1 for ok, _ in verdicts if ok)
    print("soak: %d passed, %d failed" % (passed, len(verdicts) - passed))
    return 0 if passed == len(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
