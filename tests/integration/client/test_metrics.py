# SPDX-License-Identifier: BSD-3-Clause
"""`eventlog-socket metrics`, the Prometheus exporter, against real programs
(fibber-c-main with +RTS -hT -s) and, where installed, the real Prometheus
server and promtool: a static address and a glob of Unix socket paths, a
program found by the glob after the exporter started, one killed. What it
exports is compared with the RTS's own `+RTS -s` summary of each run, and
read back through Prometheus's HTTP API after Prometheus scraped it.

Prometheus and promtool come from Debian's prometheus package, installed
by scripts/ensure-deps.sh on the host and scripts/ghc-chroot.sh in the GHC
chroots; where they are missing the test checks the exporter's own output
only (and says so)."""

import json
import os
import re
import shutil
import signal
import socket
import time
import urllib.error
import urllib.parse
import urllib.request

import harness
from client_cmd import Cmd
from harness import Program, expect, ghc_version, note, test


def start_metrics(s, *sources, extra=()):
    c = Cmd(s, ["metrics", "--http", "127.0.0.1:0", "--linger", "300", *extra, *sources])
    deadline = time.monotonic() + 20
    while True:
        m = re.search(r"http://127\.0\.0\.1:(\d+)/metrics", c.stdout())
        if m:
            return c, int(m.group(1))
        if c.proc.poll() is not None or time.monotonic() > deadline:
            raise harness.TestFailure("metrics did not start: %s %s" % (c.stdout(), c.stderr()))
        time.sleep(0.05)


def scrape(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        return r.read().decode()


def samples(text):
    """{(name, frozenset(labels)): value} of an exposition."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} (\S+)$', line)
        expect(m is not None, "not a sample line: %r" % line)
        labels = frozenset(re.findall(r'([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"', m.group(2)))
        out[(m.group(1), labels)] = float(m.group(3))
    return out


def value(sm, name, **want):
    """The one sample of `name` whose labels include `want`, or None."""
    found = [v for (n, labels), v in sm.items()
             if n == name and all((k, str(w)) in labels for k, w in want.items())]
    expect(len(found) <= 1, "%d samples of %s %r" % (len(found), name, want))
    return found[0] if found else None


def rts_summary(text):
    """Gen 0/1 collections and bytes allocated from `+RTS -s`."""
    gens = {int(g): int(n) for g, n in re.findall(r"Gen\s+(\d+)\s+(\d+) colls", text)}
    alloc = int(re.search(r"([\d,]+) bytes allocated in the heap", text).group(1)
                .replace(",", ""))
    return gens, alloc


def wait_for(port, what, cond, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        text = scrape(port)
        sm = samples(text)
        if cond(sm):
            return text, sm
        if time.monotonic() > deadline:
            raise harness.TestFailure("no %s within %d s; /metrics:\n%s" % (what, timeout, text))
        time.sleep(0.2)


def free_port():
    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        return so.getsockname()[1]


def start_prometheus(s, target_port):
    exe = shutil.which("prometheus")
    if exe is None:
        return None
    cfg = s.path("prometheus.yml")
    with open(cfg, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                "scrape_configs:\n  - job_name: eventlog\n    static_configs:\n"
                "      - targets: ['127.0.0.1:%d']\n" % target_port)
    port = free_port()
    log = open(s.path("prometheus.log"), "wb")
    s.spawn([exe, "--config.file=" + cfg, "--storage.tsdb.path=" + s.path("tsdb"),
             "--web.listen-address=127.0.0.1:%d" % port], stdout=log, stderr=log)
    return port


def prom_query(port, q):
    url = "http://127.0.0.1:%d/api/v1/query?query=%s" % (port, urllib.parse.quote(q))
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return json.loads(r.read())["data"]["result"]
    except (OSError, ValueError, KeyError):
        return None


def run_fibber(s, sock, args):
    # GHC_EVENTLOG_WAIT: the run starts once the exporter connected, so it
    # sees the whole run (the +RTS -s figures are of the whole run).
    p = Program(s, "fibber-c-main", args, unix=sock, rts=("-hT", "-i0.02", "-s"), stdin=False,
                wait=True)
    return p


@test(timeout=240)
def metrics_prometheus(s):
    '''The exporter's metrics match each run's +RTS -s, pass promtool, and reach Prometheus.'''
    os.mkdir(s.path("g"))
    a_sock = s.path("a.sock")
    exporter, port = start_metrics(s, "unix:" + a_sock, s.path("g") + "/*.sock")
    prom = start_prometheus(s, port)
    if prom is None:
        note("prometheus is not installed here: checking the exporter's output only")
    live = ghc_version() >= (9, 2)

    # A program on the static address, and one the glob finds later.
    a = run_fibber(s, a_sock, ["25", "27", "27"])
    time.sleep(3)  # more than one glob scan after the exporter started
    b = run_fibber(s, s.path("g/b.sock"), ["26", "27"])
    # One that runs until it is killed.
    c_sock = s.path("g/c.sock")
    c = run_fibber(s, c_sock, ["--forever", "22"])
    c.wait_socket(c_sock)
    c_src = "unix:" + c_sock
    wait_for(port, "connection to the killed program",
             lambda sm: value(sm, "eventlog_socket_connected", source=c_src) == 1)
    if live:
        wait_for(port, "live GCs of the running program",
                 lambda sm: (value(sm, "ghc_gc_collections_total", source=c_src,
                                   generation=0) or 0) > 0)
    runs = {}
    for name, p, sock in (("a", a, a_sock), ("b", b, s.path("g/b.sock"))):
        rc, _ = p.wait_rusage()
        expect(rc == 0, "%s exited %d: %s" % (name, rc, p.stderr()))
        runs[name] = (p.proc.pid, "unix:" + sock, *rts_summary(p.stderr()))
    c.kill()

    for name, (pid, src, gens, alloc) in runs.items():
        text, sm = wait_for(port, "the final figures of %s" % name,
                            lambda sm: value(sm, "eventlog_socket_connected", source=src,
                                             pid=pid) == 0 and
                            value(sm, "ghc_allocated_bytes_total", source=src) is not None)
        for g, n in gens.items():
            got = value(sm, "ghc_gc_collections_total", source=src, pid=pid, generation=g)
            expect(got == n, "%s: gen %d: %r collections exported, +RTS -s says %d"
                   % (name, g, got, n))
        got = value(sm, "ghc_allocated_bytes_total", source=src, pid=pid)
        expect(got == alloc, "%s: %r bytes allocated exported, +RTS -s says %d"
               % (name, got, alloc))
        pauses = value(sm, "ghc_gc_pause_seconds_count", source=src, pid=pid)
        expect(pauses == sum(gens.values()), "%s: %r pauses, GCs %r" % (name, pauses, gens))
        expect(value(sm, "ghc_program_info", source=src, pid=pid) == 1, "%s: no info" % name)
        expect(value(sm, "ghc_eventlog_lacking_info", source=src, lacks="heap_profile") is None,
               "%s ran with -hT but lacks a heap profile" % name)
        expect((value(sm, "ghc_eventlog_lacking_info", source=src, lacks="live") == 1) ==
               (not live), "%s: lacking live wrong for GHC %r" % (name, ghc_version()))
    text, sm = wait_for(port, "the killed program's disconnection",
                        lambda sm: value(sm, "eventlog_socket_connected", source=c_src) == 0)
    note("%d samples exported" % len(sm))

    promtool = shutil.which("promtool")
    if promtool is not None:
        path = s.path("metrics.txt")
        with open(path, "w") as f:
            f.write(text)
        res = __import__("subprocess").run([promtool, "check", "metrics"], stdin=open(path),
                                           capture_output=True, text=True, timeout=60)
        expect(res.returncode == 0, "promtool check metrics: %s %s" % (res.stdout, res.stderr))

    if prom is None:
        return
    for name, (pid, src, gens, alloc) in runs.items():
        q = 'ghc_gc_collections_total{source="%s",pid="%d",generation="0"}' % (src, pid)
        deadline = time.monotonic() + 60
        while True:
            r = prom_query(prom, q)
            if r:
                break
            expect(time.monotonic() < deadline, "Prometheus has no %s" % q)
            time.sleep(0.5)
        expect(len(r) == 1 and float(r[0]["value"][1]) == gens[0],
               "Prometheus: %s = %r, +RTS -s says %d" % (q, r, gens[0]))
        q = 'ghc_allocated_bytes_total{source="%s",pid="%d"}' % (src, pid)
        r = prom_query(prom, q)
        expect(r and float(r[0]["value"][1]) == alloc,
               "Prometheus: %s = %r, +RTS -s says %d" % (q, r, alloc))
    r = prom_query(prom, 'up{job="eventlog"}')
    expect(r and r[0]["value"][1] == "1", "Prometheus: the exporter is not up: %r" % r)
    exporter.signal(signal.SIGTERM)
    rc, _, err = exporter.wait(20)
    expect(rc == 0, "metrics exited %d: %s" % (rc, err))


@test(timeout=120)
def serve_metrics(s):
    '''serve's /metrics has its program's final GC counts and allocation, as +RTS -s says.'''
    sock = s.path("a.sock")
    p = run_fibber(s, sock, ["25", "27"])
    p.wait_socket(sock)
    c = Cmd(s, ["serve", "unix:" + sock, "--http", "127.0.0.1:0"])
    deadline = time.monotonic() + 20
    while not re.search(r"http://127\.0\.0\.1:(\d+)/", c.stdout()):
        expect(c.proc.poll() is None and time.monotonic() < deadline,
               "serve did not start: %s %s" % (c.stdout(), c.stderr()))
        time.sleep(0.05)
    port = int(re.search(r"http://127\.0\.0\.1:(\d+)/", c.stdout()).group(1))
    rc, _ = p.wait_rusage()
    expect(rc == 0, "fibber exited %d" % rc)
    gens, alloc = rts_summary(p.stderr())
    src = "unix:" + sock
    text, sm = wait_for(port, "the final figures",
                        lambda sm: value(sm, "eventlog_socket_connected", source=src) == 0 and
                        value(sm, "ghc_allocated_bytes_total", source=src) is not None)
    for g, n in gens.items():
        got = value(sm, "ghc_gc_collections_total", source=src, pid=p.proc.pid, generation=g)
        expect(got == n, "gen %d: %r collections on /metrics, +RTS -s says %d" % (g, got, n))
    got = value(sm, "ghc_allocated_bytes_total", source=src, pid=p.proc.pid)
    expect(got == alloc, "%r bytes allocated on /metrics, +RTS -s says %d" % (got, alloc))
    promtool = shutil.which("promtool")
    if promtool is not None:
        res = __import__("subprocess").run([promtool, "check", "metrics"], input=text,
                                           capture_output=True, text=True, timeout=60)
        expect(res.returncode == 0, "promtool check metrics: %s %s" % (res.stdout, res.stderr))


@test(ghc_free=True)
def metrics_is_its_users_alone(s):
    """The exporter follows serve's rules (docs/security.md): on loopback
    another user (uid 65534) gets 403 and a log line, the owner 200; on
    another address the printed URL carries ?token=, without which a
    scrape gets 403."""
    from test_trust import curl_as_nobody, need_other_user
    need_other_user()
    c, port = start_metrics(s, s.path("none-*.sock"))
    url = "http://127.0.0.1:%d/metrics" % port
    expect(scrape(port) is not None, "the owner got no metrics")
    code = curl_as_nobody(url)
    expect(code == "403", "uid 65534 got %s (want 403)" % code)
    expect(re.search(r"refused an HTTP request of uid 65534", c.stderr()),
           "no refusal on the exporter's stderr: %r" % c.stderr())
    far = Cmd(s, ["metrics", "--http", "0.0.0.0:0", s.path("none-*.sock")])
    deadline = time.monotonic() + 20
    while not re.search(r"\?token=", far.stdout()):
        expect(far.proc.poll() is None and time.monotonic() < deadline,
               "no token in the URL: %r %r" % (far.stdout(), far.stderr()))
        time.sleep(0.05)
    m = re.search(r"http://0\.0\.0\.0:(\d+)/metrics\?token=([0-9a-f]{64})", far.stdout())
    expect(m, "the URL: %r" % far.stdout())
    base = "http://127.0.0.1:%s/metrics" % m.group(1)
    try:
        urllib.request.urlopen(base, timeout=10)
        expect(False, "a scrape without the token was answered")
    except urllib.error.HTTPError as e:
        expect(e.code == 403, "without the token: %d (want 403)" % e.code)
    with urllib.request.urlopen(base + "?token=" + m.group(2), timeout=10) as r:
        expect(r.status == 200, "with the token: %d" % r.status)
