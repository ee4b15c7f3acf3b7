# SPDX-License-Identifier: BSD-3-Clause
"""docs/prometheus.md's recipe, with the real Prometheus and promtool:
the example scrape configs and alerting rules under examples/prometheus
(checked and evaluated by promtool, then loaded into a running
Prometheus that scrapes real programs through them), the exporter's
--token-file (another user, Prometheus's `authorization`), a program
that exits and is started again (a new pid, a new series set), and the
heap figures compared with what the same run's own files say: the last
HEAP_LIVE/HEAP_SIZE of a recording of it (read by ghc-events) and the
last sample of the RTS's own .hp.

Prometheus and promtool come from Debian's `prometheus` package, which
scripts/ensure-deps.sh installs on the host and scripts/ghc-chroot.sh in
the GHC chroots."""

import os
import re
import shutil
import subprocess
import time

import harness
from client_cmd import Cmd
from harness import Program, Skip, check_stream, expect, ghc_version, note, test
from test_heap import parse_hp
from test_metrics import (free_port, prom_query, run_fibber, samples, scrape,
                          start_metrics, value, wait_for)

EXAMPLES = os.path.join(harness.ROOT, "examples",
                        "prometheus")


def need(exe):
    path = shutil.which(exe)
    if path is None:
        raise Skip("%s is not installed (Debian's prometheus package)" % exe)
    return path


def promtool(*args, cwd=None):
    res = subprocess.run([need("promtool"), *args], capture_output=True, text=True,
                         timeout=60, cwd=cwd)
    return res.returncode, res.stdout + res.stderr


def token_file(s, name="token", text="s3cr3t-" + "ab" * 16, mode=0o600):
    path = s.path(name)
    with open(path, "w") as f:
        f.write(text + "\n")
    os.chmod(path, mode)
    return path


def example_config(s, static_target, fleet_target, token):
    """examples/prometheus/prometheus.yml made to run here: its targets and
    files swapped for this test's, everything else as docs/prometheus.md shows it."""
    with open(os.path.join(EXAMPLES, "prometheus.yml")) as f:
        text = f.read()
    os.mkdir(s.path("targets"))
    with open(s.path("targets/here.json"), "w") as f:
        f.write('[{"targets": ["%s"], "labels": {"service": "test"}}]\n' % fleet_target)
    shutil.copy(os.path.join(EXAMPLES, "eventlog-socket-rules.yml"), s.path("."))
    for old, new in (("/etc/prometheus/eventlog-socket-targets", s.path("targets")),
                     ("/etc/prometheus/eventlog-socket.token", token),
                     ("127.0.0.1:9464", static_target),
                     ("scrape_interval: 15s", "scrape_interval: 1s\n  scrape_timeout: 1s"),
                     ("evaluation_interval: 15s", "evaluation_interval: 1s")):
        expect(old in text, "examples/prometheus/prometheus.yml has no %r any more" % old)
        text = text.replace(old, new)
    path = s.path("prometheus.yml")
    with open(path, "w") as f:
        f.write(text)
    return path


def start_prometheus(s, config):
    port = free_port()
    log = open(s.path("prometheus.log"), "wb")
    s.spawn([need("prometheus"), "--config.file=" + config,
             "--storage.tsdb.path=" + s.path("tsdb"),
             "--web.listen-address=127.0.0.1:%d" % port], stdout=log, stderr=log)
    return port


def prom_wait(s, port, q, cond, what, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        r = prom_query(port, q)
        if r is not None and cond(r):
            return r
        if time.monotonic() > deadline:
            with open(s.path("prometheus.log"), errors="replace") as f:
                log = f.read()[-2000:]
            raise harness.TestFailure("Prometheus: %s: %s = %r; its log ends:\n%s"
                                      % (what, q, r, log))
        time.sleep(0.5)


@test(ghc_free=True)
def prometheus_examples_pass_promtool(s):
    """The Prometheus files of docs/prometheus.md (examples/prometheus): the scrape configs
    pass `promtool check config`, the alerting rules `promtool check rules`,
    and their unit test `promtool test rules` (a leak and a GC-bound program
    fire; a steady one, a small one and a short spell do not)."""
    rc, out = promtool("check", "rules", "eventlog-socket-rules.yml", cwd=EXAMPLES)
    expect(rc == 0 and "2 rules found" in out, "promtool check rules: %s" % out)
    rc, out = promtool("test", "rules", "eventlog-socket-rules.test.yml", cwd=EXAMPLES)
    expect(rc == 0 and "SUCCESS" in out, "promtool test rules: %s" % out)
    cfg = example_config(s, "127.0.0.1:9464", "127.0.0.1:9465", token_file(s))
    rc, out = promtool("check", "config", cfg)
    expect(rc == 0, "promtool check config (prometheus.yml): %s" % out)
    rc, out = promtool("check", "config", os.path.join(EXAMPLES, "federate.yml"))
    expect(rc == 0, "promtool check config (federate.yml): %s" % out)
    with open(os.path.join(EXAMPLES, "targets", "web.json")) as f:
        expect(f.read().count(":9464") == 2, "targets/web.json lists no exporters")


@test(ghc_free=True)
def metrics_token_file_is_checked(s):
    """--token-file refuses, with what to do, a file others may read, a
    token too short, a symbolic link and a missing file; and exits 2."""
    cases = [(token_file(s, "open", mode=0o644), "chmod 600"),
             (token_file(s, "short", text="abc"), "16 to 256"),
             (token_file(s, "spaced", text="a b c d e f g h i j k"), "space"),
             (s.path("missing"), "No such file")]
    os.symlink(token_file(s, "real"), s.path("link"))
    cases.append((s.path("link"), "symbolic links"))
    for path, want in cases:
        res = subprocess.run([os.path.join(harness.BUILD, "eventlog-socket"), "metrics",
                              "--http", "127.0.0.1:0", "--token-file", path, "x.sock"],
                             capture_output=True, text=True, timeout=20)
        expect(res.returncode == 2 and want in res.stderr and "--token-file" in res.stderr,
               "%s: exit %d, stderr %r (want 2 and %r)" % (path, res.returncode, res.stderr,
                                                           want))


@test(timeout=240)
def metrics_readme_config_with_prometheus(s):
    """docs/prometheus.md's prometheus.yml and rules, run by a real Prometheus as
    written (targets and paths swapped): a loopback exporter and one on
    0.0.0.0, both with --token-file, scraped through `authorization:
    credentials_file`. Both are up, a program's GC count arrives, the two
    rules evaluate without error. Another user gets 403 from the loopback
    exporter without the token and 200 with it as Authorization: Bearer;
    the 0.0.0.0 one prints no token and refuses a scrape without it."""
    need("prometheus")
    tok = token_file(s)
    secret = open(tok).read().strip()
    socks = {"eventlog": s.path("a.sock"), "eventlog-fleet": s.path("b.sock")}
    lo, lo_port = start_metrics(s, "unix:" + socks["eventlog"], extra=("--token-file", tok))
    any_, any_port = start_metrics_any(s, socks["eventlog-fleet"], tok)
    expect(secret not in lo.stdout() + any_.stdout(), "the token was printed")
    code = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                           "http://127.0.0.1:%d/metrics" % any_port],
                          capture_output=True, text=True, timeout=30).stdout
    expect(code == "403", "0.0.0.0 exporter without the token: %s (want 403)" % code)
    if os.geteuid() == 0 and shutil.which("setpriv") and shutil.which("curl"):
        from test_trust import curl_as_nobody
        url = "http://127.0.0.1:%d/metrics" % lo_port
        expect(curl_as_nobody(url) == "403", "another user without the token was let in")
        got = curl_as_nobody(url, "-H", "Authorization: Bearer " + secret)
        expect(got == "200", "another user with the token: %s (want 200)" % got)
        got = curl_as_nobody(url, "-H", "Authorization: Bearer " + secret[:-1] + "x")
        expect(got == "403", "another user with a wrong token: %s (want 403)" % got)
    else:
        note("not root: the other-user half is left out")
    # One program per exporter: each waits for its exporter, which so sees
    # the whole run (the +RTS -s figures are of the whole run).
    progs = {job: run_fibber(s, sock, ["25", "26"]) for job, sock in socks.items()}
    gen0 = {}
    for job, p in progs.items():
        rc, _ = p.wait_rusage()
        expect(rc == 0, "fibber exited %d" % rc)
        gen0[job] = int(re.search(r"Gen\s+0\s+(\d+) colls", p.stderr()).group(1))

    cfg = example_config(s, "127.0.0.1:%d" % lo_port, "127.0.0.1:%d" % any_port, tok)
    prom = start_prometheus(s, cfg)
    for job, p in progs.items():
        prom_wait(s, prom, 'up{job="%s"}' % job, lambda r: r and r[0]["value"][1] == "1",
                  "job %s is not up" % job)
        q = 'ghc_gc_collections_total{job="%s",generation="0",pid="%d"}' % (job, p.proc.pid)
        r = prom_wait(s, prom, q, lambda r: len(r) == 1, "no GC count through job " + job)
        expect(float(r[0]["value"][1]) == gen0[job],
               "%s = %r, +RTS -s says %d" % (q, r, gen0[job]))
        expect((r[0]["metric"].get("service") == "test") == (job == "eventlog-fleet"),
               "file_sd's labels: %r" % r)
    deadline = time.monotonic() + 30
    while True:
        rules = prom_api(prom, "rules")
        got = {r["name"]: r for g in rules["groups"] for r in g["rules"]}
        done = [r for r in got.values() if r.get("lastEvaluation", "").startswith("20")]
        if len(done) == 2:
            break
        expect(time.monotonic() < deadline, "the rules were not evaluated: %r" % rules)
        time.sleep(0.5)
    expect(set(got) == {"HaskellHeapGrowing", "HaskellGcTimeShare"}, "rules: %r" % set(got))
    for name, r in got.items():
        expect(r["health"] == "ok" and not r.get("lastError"), "%s: %r" % (name, r))


def start_metrics_any(s, sock, tok):
    c = Cmd(s, ["metrics", "--http", "0.0.0.0:0", "--token-file", tok, "unix:" + sock])
    deadline = time.monotonic() + 20
    while True:
        m = re.search(r"http://0\.0\.0\.0:(\d+)/metrics(\S*)", c.stdout())
        if m and "scrapes carry the token in" in c.stdout():
            expect(m.group(2) == "", "a URL with the token printed: %s" % m.group(0))
            return c, int(m.group(1))
        expect(c.proc.poll() is None and time.monotonic() < deadline,
               "metrics did not start: %s %s" % (c.stdout(), c.stderr()))
        time.sleep(0.05)


def prom_api(port, path):
    import json
    import urllib.request
    with urllib.request.urlopen("http://127.0.0.1:%d/api/v1/%s" % (port, path), timeout=5) as r:
        return json.loads(r.read())["data"]


def census_of(sm, pid):
    """The exported census of `pid`: ({label: bytes}, bytes of "other")."""
    census = {dict(k[1])["label"]: v for k, v in sm.items()
              if k[0] == "ghc_heap_profile_bytes" and ("pid", str(pid)) in k[1]}
    return census, census.pop("other", 0)


def same_census(census, other, sample):
    """Whether an exported census is the .hp sample `sample`: every label
    exported with its bytes, those left out summed in `other`."""
    return (set(census) <= set(sample) and
            all(b == sample[label] for label, b in census.items()) and
            other == sum(b for label, b in sample.items() if label not in census))


@test(timeout=240)
def metrics_restart_and_heap(s):
    """A program that exits and is started again on the same socket: the
    exporter connects to the new run, which is a new pid and a new series
    set beside the lingering old one. Each run's heap figures equal what
    the run's own files say: ghc_heap_live_bytes and ghc_heap_size_bytes
    the last HEAP_LIVE/HEAP_SIZE of a recording of it (ghc-events), and
    ghc_heap_profile_bytes the last sample (with data) of the RTS's own .hp; on GHC
    9.2+, a census scraped while it runs is one of the .hp's samples."""
    sock = s.path("r.sock")
    src = "unix:" + sock
    exporter, port = start_metrics(s, src, extra=("--top-labels", "10"))
    pids = []
    for run in (1, 2):
        # The probe, busy allocating for a while; it runs once the exporter
        # connects, and the recorder joins soon after (the figures compared
        # are the last ones).
        p = Program(s, "probe", ["--busy"], unix=sock, rts=("-hT", "-i0.05"), wait=True)
        p.wait_socket(sock)
        rec = s.path("run%d.eventlog" % run)
        recorder = Cmd(s, ["record", src, "-o", rec])
        # 7 s: time for the exporter to find the new run (it retries with
        # a backoff) and scrape a census of it, at load 17 too (3.5 s were
        # not enough there).
        p.proc.stdin.write(b"sleep 7\n")
        p.proc.stdin.flush()
        seen, last_text = None, ""
        deadline = time.monotonic() + 6.5
        while ghc_version() >= (9, 2) and seen is None and time.monotonic() < deadline:
            last_text = scrape(port)
            census, other = census_of(samples(last_text), p.proc.pid)
            seen = (census, other) if census else None
            time.sleep(0.1)
        expect(p.readline() == "ok", "the probe did not sleep")
        p.cmd("quit")
        p.finish()
        expect(p.proc.returncode == 0, "run %d exited %d: %s" % (run, p.proc.returncode,
                                                                 p.stderr()))
        rc, out, err = recorder.wait(60)
        expect(rc == 0, "record of run %d: %d %s" % (run, rc, err))
        with open(rec, "rb") as f:
            summary = check_stream(s, f.read(), "run%d" % run)
        expect(summary.heap_live and summary.heap_size, "run %d: no HEAP_LIVE/SIZE" % run)
        hp = parse_hp(s.path("probe.hp"), ordered=False)  # the RTS's own
        expect(sum(1 for x in hp if x) >= 5, "run %d: %d censuses with data in the .hp"
               % (run, sum(1 for x in hp if x)))
        text, sm = wait_for(port, "the end of run %d" % run,
                            lambda sm: value(sm, "eventlog_socket_connected", source=src,
                                             pid=p.proc.pid) == 0)
        live = value(sm, "ghc_heap_live_bytes", pid=p.proc.pid)
        size = value(sm, "ghc_heap_size_bytes", pid=p.proc.pid)
        expect(live == summary.heap_live[-1][1], "run %d: heap live %r exported, the recording's "
               "last HEAP_LIVE is %d" % (run, live, summary.heap_live[-1][1]))
        expect(size == summary.heap_size[-1][1], "run %d: heap size %r exported, the recording's "
               "last HEAP_SIZE is %d" % (run, size, summary.heap_size[-1][1]))
        # The .hp ends with an empty sample written at exit, which the
        # eventlog has no census for: the last census is the last one with data.
        census, other = census_of(sm, p.proc.pid)
        last = [x for x in hp if x][-1]
        expect(same_census(census, other, last),
               "run %d: the exported census (%d labels, other %r) is not the .hp's last "
               "sample with data (%d labels)" % (run, len(census), other, len(last)))
        if ghc_version() >= (9, 2):
            expect(seen is not None, "run %d: no census exported while it ran:\n%s"
                   % (run, last_text))
            expect(any(same_census(*seen, x) for x in hp),
                   "run %d: a census scraped while it ran (%d labels) is none of the .hp's"
                   % (run, len(seen[0])))
        note("run %d: %d labels at the end, %s while it ran; heap live %d, size %d"
             % (run, len(census), len(seen[0]) if seen else "none", live, size))
        pids.append(p.proc.pid)
    expect(pids[0] != pids[1], "the same pid twice")
    sm = samples(scrape(port))
    for pid in pids:
        expect(value(sm, "ghc_program_info", source=src, pid=pid) == 1,
               "pid %d has no series after the restart" % pid)
