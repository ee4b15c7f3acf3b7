"""Attacks the program should shrug off (issue 25, rows 1, 8 and 9), with
the default settings: the program's speed under each attack as a ratio to
its speed without it, in rounds that alternate which goes first. The
program is the probe (tests/probe) on TCP loopback with one draining
client of its owner (many-clients, parsing every event); its speed is
counted twice per run, as rounds of allocating arithmetic with 20 MB of
live data (`work`: what a major GC costs shows here) and as user
messages posted as fast as it can (`flood-fast`: what a stall of the
stream shows here), each for WORK_S seconds. The attacks:

  lossless   another user (uid 65534, setpriv) asks for lossless delivery
             and never reads, the program letting other users read
             (GHC_EVENTLOG_ALLOW_OTHER_USERS=1, in both runs of the pair)
  connect    two processes of another user connect and close (half of
             them with a reset) as fast as they can
  custom     one client of the owner sends README's example custom command
             (a major GC, then a marker) as fast as the library reads

Issue 25 asks for >= 0.90 under each. Needs root (setpriv) for the first
two; skipped otherwise."""

import os
import re
import select
import shutil
import subprocess
import sys
import time

import benchlib
from benchlib import fmt, median_min_max

NAME = "trust"
WORK_S = 3
LIVE_MB = 20
ATTACKS = ["lossless", "connect", "custom"]

# Another user's lossless request: connect, ask, never read.
LOSSLESS_ATTACKER = r"""
import socket, sys, time
c = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
c.sendall(b"GCTL\x06")
time.sleep(600)
"""

# Connect and close, every other one with a reset, until killed; the count
# on SIGTERM.
CONNECT_ATTACKER = r"""
import signal, socket, struct, sys
port, n = int(sys.argv[1]), 0
rst = struct.pack("ii", 1, 0)
signal.signal(signal.SIGTERM, lambda *_: (print(n, flush=True), sys.exit(0)))
while True:
    c = socket.socket()
    c.settimeout(2)
    try:
        c.connect(("127.0.0.1", port))
        if n % 2:
            c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, rst)
    except OSError:
        pass
    c.close()
    n += 1
"""

# README's custom command (namespace "my-package", id 1) as upstream frames,
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
        self.p = b.spawn([b.exe("probe"), "--custom", "+RTS", "-N2", "-RTS"], env=env,
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

    def quit(self, b):
        self.p.stdin.close()
        rc = b.wait(self.p, benchlib.TIMEOUT)
        self.err.close()
        if rc != 0:
            raise RuntimeError("probe exited with %d:\n%s" % (rc, self.stderr()[-2000:]))


# eventlog_socket_stats() in declaration order (the probe's "stats").
REFUSED, LOSSLESS_CLIENTS = 11, 15


def one_run(b, attack, attacked):
    """The probe's speed (work rounds, messages) with `attack` running or
    not; and what the attack did."""
    env = {"GHC_EVENTLOG_ALLOW_OTHER_USERS": "1"} if attack == "lossless" else {}
    pr = Probe(b, env, "%s-%d" % (attack, attacked))
    reader = b.spawn([b.exe("many-clients"), "--tcp", str(pr.port), "--readers", "1",
                      "--timeout", str(benchlib.TIMEOUT)],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    attackers = []
    if attacked:
        if attack == "lossless":
            attackers.append(b.spawn(as_nobody([sys.executable, "-c", LOSSLESS_ATTACKER,
                                                str(pr.port)])))
            pr.wait_stderr(r"asked for lossless delivery")
        elif attack == "connect":
            attackers += [b.spawn(as_nobody([sys.executable, "-c", CONNECT_ATTACKER,
                                             str(pr.port)]), stdout=subprocess.PIPE,
                                  text=True) for _ in range(2)]
        else:
            attackers.append(b.spawn([sys.executable, "-c", CUSTOM_ATTACKER, str(pr.port)],
                                     stdout=subprocess.PIPE, text=True))
        time.sleep(0.5)  # under way before the program is timed
    else:
        time.sleep(0.5)
    # A program that is held up (a lossless client the library should
    # have refused, as before issue 25) counts as 0.
    work = pr.count("work %d %d" % (WORK_S, LIVE_MB), WORK_S + 30) or 0
    msgs = pr.count("flood-fast %d z" % WORK_S, WORK_S + 30) if work else None
    st = pr.stats() if msgs is not None else []
    sent = 0
    for a in attackers:
        if a.poll() is None:
            a.terminate()
        out = a.communicate(timeout=benchlib.TIMEOUT)[0] if a.stdout else ""
        sent += int(out or 0)
    pr.quit(b)
    b.wait(reader, benchlib.TIMEOUT)
    return {"work": work, "msgs": msgs or 0,
            "refused": st[REFUSED] if len(st) > REFUSED else -1,
            "lossless": st[LOSSLESS_CLIENTS] if len(st) > LOSSLESS_CLIENTS else -1,
            "attack_requests": sent}


def run(b):
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        b.results["trust"] = {"skipped": "needs root and setpriv to attack as another user"}
        return
    out = {"work_s": WORK_S, "live_mb": LIVE_MB}
    for attack in ATTACKS:
        base, hit = [], []
        for i in range(benchlib.REPS):
            order = (False, True) if i % 2 == 0 else (True, False)
            for attacked in order:
                (hit if attacked else base).append(one_run(b, attack, attacked))
        out[attack] = {
            "work_ratio": median_min_max([h["work"] / r["work"] for h, r in zip(hit, base)]),
            "msgs_ratio": median_min_max([h["msgs"] / r["msgs"] for h, r in zip(hit, base)]),
            "work_per_s": median_min_max([r["work"] / WORK_S for r in base]),
            "msgs_per_s": median_min_max([r["msgs"] / WORK_S for r in base]),
            "refused": median_min_max([h["refused"] for h in hit]),
            "lossless_clients": max(h["lossless"] for h in hit),
            "attack_requests": median_min_max([h["attack_requests"] for h in hit]),
        }
    b.results["trust"] = out


def report(r, add):
    if "trust" not in r:
        return
    t = r["trust"]
    add("")
    add("Attacks (issue 25), default settings: the program's speed under attack / without "
        "(paired rounds; goal >= 0.90)")
    if "skipped" in t:
        add("  skipped: " + t["skipped"])
        return
    what = {"lossless": "another user asks for lossless delivery and never reads",
            "connect": "two processes of another user connect/reset in a loop",
            "custom": "README's custom command (major GC + marker) flooded"}
    for attack in ATTACKS:
        a = t[attack]
        add("  %-9s %s" % (attack, what[attack]))
        add("            work rounds x%s, messages x%s" % (fmt(a["work_ratio"]),
                                                          fmt(a["msgs_ratio"])))
        extra = "refused connections %s" % fmt(a["refused"], digits=0)
        if attack != "lossless":
            extra += ", attack requests %s" % fmt(a["attack_requests"], digits=0)
        else:
            extra += ", lossless clients %d" % a["lossless_clients"]
        add("            " + extra)
