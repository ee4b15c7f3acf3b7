# SPDX-License-Identifier: BSD-3-Clause
"""Who can keep the owner off `metrics`'s and `serve`'s HTTP servers, and
where `serve`'s token may go: another user's slow connections to a
loopback `metrics` (the owner's scrapes are still answered), slow
connections without the token to `serve --http 0.0.0.0` from three
addresses (the owner's requests are still answered, and serve does not
run a thread for each of them), and the owner's browser visiting another
server on another port of the same host (it never gets the token)."""

import http.server
import re
import subprocess
import sys
import threading
import time
import urllib.request

import fakeprog as fp
from cdp import Browser
from harness import expect, note, test
from test_client_metrics import start_metrics
from test_client_trust import NOBODY, need_other_user, start

# Hold PER slow connections from each of ADDRS (bound as the source
# address) to 127.0.0.1:PORT for SECS, sending a request one byte a second
# and opening new ones as the server cuts them; print "started", then at
# the end how many of them the server kept open.
SLOW = r"""
import socket, sys, time
port, addrs = int(sys.argv[1]), sys.argv[2].split(",")
per, secs = int(sys.argv[3]), float(sys.argv[4])
req = sys.argv[5].encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
def opened(a):
    try:
        c = socket.socket()
        c.bind((a, 0))
        c.settimeout(2)
        c.connect(("127.0.0.1", port))
        c.setblocking(False)
        c.send(req[:1])
        return [c, 1]
    except OSError:
        return None
def alive(c):
    try:
        if c[0].recv(1, socket.MSG_PEEK) == b"":
            return False
    except BlockingIOError:
        pass
    except OSError:
        return False
    try:
        c[0].send(req[c[1]:c[1] + 1] if c[1] < len(req) else b"x")
        c[1] += 1
        return True
    except OSError:
        return False
conns = {a: [] for a in addrs}
end = time.monotonic() + secs
print("started", flush=True)
while time.monotonic() < end:
    for a in addrs:
        live = [c for c in conns[a] if alive(c) or c[0].close()]
        while len(live) < per:
            c = opened(a)
            if c is None:
                break
            live.append(c)
        conns[a] = live
    time.sleep(1)
time.sleep(1)  # what the server cut meanwhile is closed by now
print(sum(1 for v in conns.values() for c in v if alive(c)), flush=True)
"""

ATTACKERS = "127.0.0.2,127.0.0.3,127.0.0.4"


def slow(s, port, per, secs, path, as_other=False):
    argv = [sys.executable if not as_other else "/usr/bin/python3", "-c", SLOW, str(port),
            ATTACKERS, str(per), str(secs), "GET " + path]
    p = s.spawn((NOBODY if as_other else []) + argv, stdout=subprocess.PIPE, text=True)
    expect(p.stdout.readline().strip() == "started", "the slow connections did not start")
    return p


def owner_gets(url, n, pause=0.5):
    """How many of `n` GETs of `url` (from 127.0.0.1, 10 s each) got 200."""
    ok = 0
    for _ in range(n):
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                ok += r.status == 200
        except OSError:
            pass
        time.sleep(pause)
    return ok


def threads_of(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"Threads:\s+(\d+)", f.read()).group(1))


@test(timeout=150, ghc_free=True)
def metrics_owner_never_locked_out(s):
    """Another user (uid 65534) keeps 32 slow connections from each of
    127.0.0.2, .3 and .4 to the owner's loopback `metrics`, reopening them
    as they are cut: every one of the owner's scrapes is answered (4 of 4
    timed out in the audit), and the other user holds at most 8 per
    address."""
    need_other_user()
    exporter, port = start_metrics(s, s.path("none-*.sock"))
    hog = slow(s, port, 32, 25, "/metrics", as_other=True)
    time.sleep(3)  # the slow connections are in place; not an assertion
    ok = owner_gets("http://127.0.0.1:%d/metrics" % port, 8)
    held = int(hog.stdout.readline() or "-1")
    note("the owner got 8 scrapes: %d answered; uid 65534 held %d connections at the end"
         % (ok, held))
    expect(ok == 8, "the owner's scrapes answered: %d of 8" % ok)
    expect(0 <= held <= 3 * 8, "uid 65534 held %d connections (want at most 24)" % held)


@test(timeout=150, ghc_free=True)
def serve_token_mode_owner_never_locked_out(s):
    """serve --http 0.0.0.0 (token mode): 86 slow connections without the
    token from each of three addresses, reopened as they are cut: the
    owner's 25 requests with the token are all answered (6 of 25 in the
    audit), and serve runs a bounded number of threads (it ran 258, one per
    connection)."""
    sock = s.path("t.sock")
    fp.start(s, sock, fp.eventlog(fp.block(fp.program([b"tok"], 31) + fp.gc(2)), end=False))
    srv, url = start(s, sock, "0.0.0.0:0")
    m = re.match(r"http://0\.0\.0\.0:(\d+)/\?token=([0-9a-f]{64})$", url)
    expect(m, "no token in %s" % url)
    port, token = int(m.group(1)), m.group(2)
    hog = slow(s, port, 86, 30, "/")
    time.sleep(3)  # not an assertion
    most = threads_of(srv.proc.pid)
    ok = 0
    for _ in range(25):
        ok += owner_gets("http://127.0.0.1:%d/?token=%s" % (port, token), 1, pause=0.2)
        most = max(most, threads_of(srv.proc.pid))
    held = int(hog.stdout.readline() or "-1")
    note("owner: %d of 25 answered; serve ran %d threads at most; %d slow connections held"
         % (ok, most, held))
    expect(ok == 25, "the owner's requests answered: %d of 25" % ok)
    expect(most <= 100, "serve ran %d threads (one per connection would be 258)" % most)


class Recorder(http.server.BaseHTTPRequestHandler):
    """Another user's server on another port: it keeps what it is sent."""
    seen = []

    def do_GET(self):
        Recorder.seen.append("%s\n%s" % (self.requestline, self.headers))
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<html><body>elsewhere</body></html>")

    def log_message(self, *args):
        pass


@test(timeout=150, ghc_free=True)
def serve_token_never_leaves_its_port(s):
    """The owner opens serve's ?token= URL in Chromium (serve --http
    0.0.0.0): the page works (the state arrives, a command is sent), then
    the page goes to another server on another port of the same host,
    which receives no token, as a cookie or a Referer (the es_token cookie
    was the host's, so it went to every port)."""
    sock = s.path("c.sock")
    fp.start(s, sock, fp.eventlog(fp.block(fp.program([b"cookie"], 32) + fp.gc(2)), end=False))
    srv, url = start(s, sock, "0.0.0.0:0")
    m = re.match(r"http://0\.0\.0\.0:(\d+)/\?token=([0-9a-f]{64})$", url)
    expect(m, "no token in %s" % url)
    port, token = int(m.group(1)), m.group(2)
    other = http.server.HTTPServer(("127.0.0.1", 0), Recorder)
    s.clients.append(other.socket)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    b = Browser(s)
    b.goto("http://127.0.0.1:%d/?token=%s" % (port, token))
    b.wait_js("document.getElementById('program').textContent === 'cookie'",
              what="the program's name (the event stream carries the token)")
    b.js("document.getElementById('btn-census').click()")
    b.wait_js("document.getElementById('control-result').textContent === 'census: sent'",
              what="the census sent (the command carries the token)")
    b.js("location.href = 'http://127.0.0.1:%d/elsewhere'" % other.server_address[1])
    b.wait_js("document.body && document.body.textContent === 'elsewhere'",
              what="the other server's page")
    b.goto("http://127.0.0.1:%d/typed" % other.server_address[1])
    other.shutdown()
    leaked = [line for r in Recorder.seen for line in r.splitlines() if token in line]
    expect(len(Recorder.seen) >= 2, "the other server got %d requests" % len(Recorder.seen))
    expect(not leaked, "the token reached another port: %s" % leaked[:2])
    note("the other port got %d requests, none with the token" % len(Recorder.seen))
