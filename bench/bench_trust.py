# SPDX-License-Identifier: BSD-3-Clause
"""Attacks the program should shrug off (another user's lossless client,
a flood of connections, a flooded custom command), with the default
settings: the program's speed under each attack as a ratio to
its speed without it, in rounds that alternate which goes first. The
program is the probe (tests/programs/probe) on TCP loopback with one draining
client of its owner (many-clients, parsing every event); its speed is
counted in windows of WINDOW_S seconds, twice: as rounds of allocating
arithmetic with 20 MB of live data (`work`: what a major GC costs shows
here) and as user messages posted as fast as it can (`flood-fast`: what
a stall of the stream shows here). One program per attack, REPS pairs of
windows with and without the attack (which goes first alternates), so
that the load of a shared machine hits both sides of a pair alike; the
figure is the median of the pairs' ratios. Also per CPU second of the
program (its progress over the CPU time all its threads took: the
library's own cost, without what the attacking processes take of a
2-core machine's cores), and the library's loop thread's share of a core
(eventlog_socket_stats' cpu_ns_loop). The attacks:

  lossless   another user (uid 65534, setpriv) asks for lossless delivery
             and never reads, the program letting other users read
             (GHC_EVENTLOG_ALLOW_OTHER_USERS=1, in both runs of the pair)
  connect    two processes of another user connect and close (half of
             them with a reset) as fast as they can
  connect-elsewhere  the same flood aimed at another process that accepts
             and closes: what the flood costs the program on this machine
             without the library's part (the reference for `connect`)
  custom     one client of the owner sends the docs' example custom command
             (a major GC, then a marker) as fast as the library reads

The goal: >= 0.90 under each. Needs root (setpriv) for the first
two; skipped otherwise. BENCH_TRUST_ATTACKS=custom,... picks some.

Where an attack's cost goes: besides the loop thread's share, the RTS's
own account of its collections (the probe runs with +RTS -T and answers
`gcstats`): their pause time (GC elapsed) and the major collections, per
second, with and without the attack."""

import os
import re
import select
import shutil
import subprocess
import sys
import time

import benchlib
import connflood
from benchlib import fmt, median_min_max

NAME = "trust"
WINDOW_S = 2
LIVE_MB = 20
ATTACKS = ["lossless", "connect", "connect-elsewhere", "custom"]

# Another user's lossless request: connect, ask, never read.
LOSSLESS_ATTACKER = r"""
import socket, sys, time
c = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
c.sendall(b"GCTL\x06")
time.sleep(600)
"""

# The reference for `connect`: another process listening on loopback that
# accepts and closes, so that the same flood can be aimed away from the
# program. Prints its port.
SINK = r"""
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(4096)
print(s.getsockname()[1], flush=True)
while True:
    s.accept()[0].close()
"""

# The docs' example custom command (namespace "my-package", id 1) as upstream frames,
# sent as fast as the program takes them, the stream read and thrown away.
CUSTOM_ATTACKER = r"""
import signal, socket, sys, threading
c = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
def drain():
    while c.recv(1 << 20):
        pass
threading.Thread(target=drain, daemon=True).start()
frame = b"\xf0\x9e\x97\x8c\x00\x0amy-package\x01"
n = 0
signal.signal(signal.SIGTERM, lambda *_: (print(n, flush=True), sys.exit(0)))
while True:
    c.sendall(frame * 500)
    n += 500
"""


def as_nobody(argv):
    return ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"] + argv


class Probe:
    """The probe on TCP loopback (a free port), stderr to a file."""

    def __init__(self, b, env_extra, tag):
        env = {k: v for k, v in os.environ.items() if not k.startswith("GHC_EVENTLOG_")}
        env.update(GHC_EVENTLOG_INET_PORT="0", **env_extra)
        self.err_path = b.path("probe-%s.stderr" % tag)
        self.err = open(self.err_path, "wb")
        self.p = b.spawn([b.exe("probe"), "--custom", "+RTS", "-N2", "-T", "-RTS"], env=env,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err)
        self.port = int(self.wait_stderr(r"listening on 127\.0\.0\.1:(\d+)").group(1))

    def stderr(self):
        with open(self.err_path, "rb") as f:
            return f.read().decode(errors="replace")

    def wait_stderr(self, pattern, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = re.search(pattern, self.stderr())
            if m:
                return m
            if self.p.poll() is not None:
                break
            time.sleep(0.02)
        raise RuntimeError("probe: no %r on stderr:\n%s" % (pattern, self.stderr()[-2000:]))

    def query(self, line, timeout=60):
        self.p.stdin.write((line + "\n").encode())
        self.p.stdin.flush()
        r, _, _ = select.select([self.p.stdout], [], [], timeout)
        if not r:
            raise RuntimeError("probe: no answer to %r in %d s" % (line, timeout))
        return self.p.stdout.readline().decode().strip()

    def count(self, line, timeout=60):
        """The N of the probe's "ok N"; None when it did not answer in
        `timeout` s (the program is held up)."""
        try:
            words = self.query(line, timeout).split()
        except RuntimeError:
            return None
        if len(words) != 2 or words[0] != "ok":
            raise RuntimeError("probe: %r answered %r" % (line, words))
        return int(words[1])

    def stats(self):
        return [int(w) for w in self.query("stats").split()[1:]]

    def gcstats(self):
        """GCS MAJOR GC_CPU_NS GC_ELAPSED_NS MUTATOR_CPU_NS MUTATOR_ELAPSED_NS
        (tests/programs/probe's `gcstats`), or None when the probe cannot tell."""
        words = self.query("gcstats").split()[1:]
        return [int(w) for w in words] if len(words) == 6 else None

    def quit(self, b):
        self.p.stdin.close()
        rc = b.wait(self.p, benchlib.TIMEOUT)
        self.err.close()
        if rc != 0:
            raise RuntimeError("probe exited with %d:\n%s" % (rc, self.stderr()[-2000:]))


# eventlog_socket_stats() in declaration order (the probe's "stats").
REFUSED, LOOP_NS, LOSSLESS_CLIENTS = 11, 14, 15


def start_attack(b, attack, pr):
    """The attacking processes, under way."""
    if attack == "lossless":
        seen = pr.stderr().count("asked for lossless delivery")
        procs = [b.spawn(as_nobody([sys.executable, "-c", LOSSLESS_ATTACKER, str(pr.port)]))]
        deadline = time.monotonic() + 30
        while pr.stderr().count("asked for lossless delivery") == seen:
            if time.monotonic() > deadline:
                raise RuntimeError("the lossless request never arrived:\n" + pr.stderr()[-2000:])
            time.sleep(0.02)
    elif attack in ("connect", "connect-elsewhere"):
        port = pr.port if attack == "connect" else pr.sink_port
        procs = [b.spawn(as_nobody([sys.executable, "-c", connflood.source(), str(port)]),
                         stdout=subprocess.PIPE, text=True) for _ in range(2)]
    else:
        procs = [b.spawn([sys.executable, "-c", CUSTOM_ATTACKER, str(pr.port)],
                         stdout=subprocess.PIPE, text=True)]
    time.sleep(0.5)  # under way before the program is timed
    return procs


def stop_attack(procs):
    """Stop the attackers; the requests they made."""
    sent = 0
    for a in procs:
        if a.poll() is None:
            a.terminate()
        out = a.communicate(timeout=benchlib.TIMEOUT)[0] if a.stdout else ""
        sent += int(out or 0)
    return sent


def cpu_seconds(pid):
    """utime + stime of a live process, from /proc."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def window(pr):
    """The probe's speed for WINDOW_S seconds, twice: work rounds, then
    messages; and the CPU seconds the program (all its threads) and the
    library's loop thread took for them. A program held up (by a lossless
    client the library should have refused) counts as
    0."""
    st0 = pr.stats()
    gc0 = pr.gcstats()
    t0 = time.monotonic()
    cpu0 = cpu_seconds(pr.p.pid)
    work = pr.count("work %d %d" % (WINDOW_S, LIVE_MB), WINDOW_S + 30)
    cpu1 = cpu_seconds(pr.p.pid)
    msgs = pr.count("flood-fast %d z" % WINDOW_S, WINDOW_S + 30) if work is not None else None
    if msgs is None:
        return {"work": work or 0, "msgs": 0, "work_cpu": 1, "msgs_cpu": 1, "loop": 0,
                "gc_ms_per_s": 0, "majors_per_s": 0}, False
    cpu2 = cpu_seconds(pr.p.pid)
    st = pr.stats()
    gc1 = pr.gcstats()
    secs = max(time.monotonic() - t0, 0.01)
    loop = (st[LOOP_NS] - st0[LOOP_NS]) / 1e9 if len(st) > LOOP_NS else 0
    gc = [b - a for a, b in zip(gc0, gc1)] if gc0 and gc1 else [0] * 6
    return {"work": work, "msgs": msgs, "work_cpu": max(cpu1 - cpu0, 0.01),
            "msgs_cpu": max(cpu2 - cpu1, 0.01), "loop": loop,
            "gc_ms_per_s": gc[3] / 1e6 / secs, "majors_per_s": gc[1] / secs}, True


def one_attack(b, attack):
    """One program, one owner's reader; REPS pairs of windows, with and
    without the attack, alternating which goes first."""
    env = {"GHC_EVENTLOG_ALLOW_OTHER_USERS": "1"} if attack == "lossless" else {}
    pr = Probe(b, env, attack)
    if attack == "connect-elsewhere":
        sink = b.spawn([sys.executable, "-c", SINK], stdout=subprocess.PIPE, text=True)
        pr.sink_port = int(sink.stdout.readline())
    reader = b.spawn([b.exe("many-clients"), "--tcp", str(pr.port), "--readers", "1",
                      "--timeout", str(benchlib.TIMEOUT * 4)],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    pairs, sent, alive = [], [], True
    for i in range(max(benchlib.REPS, 5)):
        got = {}
        for attacked in ((False, True) if i % 2 == 0 else (True, False)):
            procs = start_attack(b, attack, pr) if attacked else []
            w, answered = window(pr)
            if attacked:
                sent.append(stop_attack(procs))
            if not answered:
                # The late answer comes once the attacker is gone.
                pr.p.stdout.readline()
            got[attacked] = w
            alive = alive and answered
        pairs.append(got)
    st = pr.stats()
    pr.quit(b)
    b.wait(reader, benchlib.TIMEOUT)

    def ratios(f):
        return median_min_max([f(g[True]) / f(g[False]) for g in pairs])

    return {"work_ratio": ratios(lambda w: w["work"]), "msgs_ratio": ratios(lambda w: w["msgs"]),
            # progress per CPU second of the program: the library's own
            # cost, without what the attacking processes take of the cores
            "work_per_cpu_ratio": ratios(lambda w: w["work"] / w["work_cpu"]),
            "msgs_per_cpu_ratio": ratios(lambda w: w["msgs"] / w["msgs_cpu"]),
            "loop_share": median_min_max([g[True]["loop"] / (2 * WINDOW_S) for g in pairs]),
            "loop_share_unattacked": median_min_max([g[False]["loop"] / (2 * WINDOW_S)
                                                     for g in pairs]),
            # the RTS's collections: pause time and major collections a
            # second, under attack and without
            "gc_ms_per_s": median_min_max([g[True]["gc_ms_per_s"] for g in pairs]),
            "gc_ms_per_s_unattacked": median_min_max([g[False]["gc_ms_per_s"] for g in pairs]),
            "majors_per_s": median_min_max([g[True]["majors_per_s"] for g in pairs]),
            "majors_per_s_unattacked": median_min_max([g[False]["majors_per_s"] for g in pairs]),
            "work_per_s": median_min_max([g[False]["work"] / WINDOW_S for g in pairs]),
            "msgs_per_s": median_min_max([g[False]["msgs"] / WINDOW_S for g in pairs]),
            "refused": st[REFUSED] if len(st) > REFUSED else -1,
            "lossless_clients": st[LOSSLESS_CLIENTS] if len(st) > LOSSLESS_CLIENTS else -1,
            "attack_requests": median_min_max(sent), "never_held_up": alive}


def run(b):
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        b.results["trust"] = {"skipped": "needs root and setpriv to attack as another user"}
        return
    out = {"window_s": WINDOW_S, "live_mb": LIVE_MB}
    chosen = os.environ.get("BENCH_TRUST_ATTACKS")
    for attack in ATTACKS:
        if chosen is None or attack in chosen.split(","):
            out[attack] = one_attack(b, attack)
    b.results["trust"] = out


def report(r, add):
    if "trust" not in r:
        return
    t = r["trust"]
    add("")
    add("Attacks, default settings: the program's speed under attack / without "
        "(paired rounds; goal >= 0.90)")
    if "skipped" in t:
        add("  skipped: " + t["skipped"])
        return
    what = {"lossless": "another user asks for lossless delivery and never reads",
            "connect": "two processes of another user connect/reset in a loop",
            "connect-elsewhere": "the same flood aimed at another process's port (reference)",
            "custom": "the docs' example custom command (major GC + marker) flooded"}
    for attack in ATTACKS:
        if attack not in t:
            continue
        a = t[attack]
        add("  %-9s %s" % (attack, what[attack]))
        add("            work rounds x%s, messages x%s" % (fmt(a["work_ratio"]),
                                                           fmt(a["msgs_ratio"])))
        add("            per CPU second of the program: work rounds x%s, messages x%s"
            % (fmt(a["work_per_cpu_ratio"]), fmt(a["msgs_per_cpu_ratio"])))
        add("            the library's loop thread: %s of a core (unattacked %s)"
            % (fmt(a["loop_share"], digits=3), fmt(a["loop_share_unattacked"], digits=3)))
        if "gc_ms_per_s" in a:
            add("            the RTS's collections: %s ms of pause a second, %s major "
                "(unattacked %s ms, %s major)"
                % (fmt(a["gc_ms_per_s"], digits=0), fmt(a["majors_per_s"], digits=2),
                   fmt(a["gc_ms_per_s_unattacked"], digits=0),
                   fmt(a["majors_per_s_unattacked"], digits=2)))
        extra = "unattacked: %s work rounds/s, %s messages/s; refused connections %d" % (
            fmt(a["work_per_s"], digits=0), fmt(a["msgs_per_s"], digits=0), a["refused"])
        if attack != "lossless":
            extra += ", attack requests per window %s" % fmt(a["attack_requests"], digits=0)
        else:
            extra += ", lossless clients at the end %d" % a["lossless_clients"]
        if not a["never_held_up"]:
            extra += "; the program was HELD UP (counted as 0)"
        add("            " + extra)
