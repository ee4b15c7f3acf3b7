# SPDX-License-Identifier: BSD-3-Clause
"""Who can keep the owner off `metrics`'s and `serve`'s HTTP servers, and
where `serve`'s token may go: another user's slow connections to a
loopback `metrics` (the owner's scrapes are still answered), slow
connections without the token to `serve --http 0.0.0.0` from three
addresses (the owner's requests are still answered, and serve does not
run a thread for each of them), floods of slow connections reopened as
fast as they are cut against the token's mode, from 78 addresses of
another user and from another host's IPv6 /64 and IPv4 addresses (the
owner's requests, even slow to come whole, are still answered; each
source holds 8 at most), and the owner's browser visiting another server
on another port of the same host (it never gets the token)."""

import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import fakeprog as fp
from cdp import Browser
from client_cmd import Cmd
from harness import Skip, expect, note, test
from test_metrics import start_metrics
from test_trust import NOBODY, need_other_user, start

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
    """serve --http 0.0.0.0 (token mode): another user (uid 65534) keeps 86
    slow connections without the token from each of three addresses,
    reopened as they are cut: the owner's 25 requests with the token are
    all answered (6 of 25 in the audit), and serve runs a bounded number of
    threads (it ran 258, one per connection). The flood is another user's:
    a peer on this host is one source by its user (client/http/guard.h), so
    the owner's own flood would share the owner's source, and each of its
    new connections may cut the owner's before its request has come whole."""
    need_other_user()
    sock = s.path("t.sock")
    fp.start(s, sock, fp.eventlog(fp.block(fp.program([b"tok"], 31) + fp.gc(2)), end=False))
    srv, url = start(s, sock, "0.0.0.0:0")
    m = re.match(r"http://0\.0\.0\.0:(\d+)/\?token=([0-9a-f]{64})$", url)
    expect(m, "no token in %s" % url)
    port, token = int(m.group(1)), m.group(2)
    hog = slow(s, port, 86, 30, "/", as_other=True)
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
    # The page leaves after the evaluation has answered, not during it.
    b.js("setTimeout(() => { location.href = 'http://127.0.0.1:%d/elsewhere'; }, 0), 1"
         % other.server_address[1])
    b.wait_js("document.body && document.body.textContent === 'elsewhere'",
              what="the other server's page")
    b.goto("http://127.0.0.1:%d/typed" % other.server_address[1])
    other.shutdown()
    leaked = [line for r in Recorder.seen for line in r.splitlines() if token in line]
    expect(len(Recorder.seen) >= 2, "the other server got %d requests" % len(Recorder.seen))
    expect(not leaked, "the token reached another port: %s" % leaked[:2])
    note("the other port got %d requests, none with the token" % len(Recorder.seen))


# Keep PER connections from each of the source addresses SRCS (comma
# separated; IPv4 ones connect to DST4, IPv6 ones to DST6, on PORT) for
# SECS, each sent the start of a request that trickles on a byte a second,
# and reopen each the moment the server cuts it (as fast as it can); print
# "started", then "stopped" once it stops reopening, and when a line comes
# on stdin, {source address: connections still open} and how many were
# reopened.
FLOOD = r"""
import json, select, socket, sys, time
dst4, dst6, port, srcs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split(",")
per, secs = int(sys.argv[5]), float(sys.argv[6])
req = b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"x" * 64
ep, held, reopened = select.epoll(), {}, 0
def open_from(a):
    v6 = ":" in a
    c = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET)
    c.setblocking(False)
    try:
        c.bind((a, 0))
        c.connect_ex((dst6 if v6 else dst4, port))
    except OSError:
        c.close()
        return
    held[c.fileno()] = [c, a, 0]
    ep.register(c.fileno(), select.EPOLLIN | select.EPOLLRDHUP)
for a in srcs:
    for _ in range(per):
        open_from(a)
print("started", flush=True)
end, trickled = time.monotonic() + secs, 0
while time.monotonic() < end:
    for fd, _ in ep.poll(0.05):
        c, a, _ = held.pop(fd)
        ep.unregister(fd)
        c.close()
        open_from(a)
        reopened += 1
    if time.monotonic() - trickled >= 1:
        trickled = time.monotonic()
        for k in list(held.values()):
            try:
                k[0].send(req[k[2]:k[2] + 1])
                k[2] = min(k[2] + 1, len(req) - 1)
            except OSError:
                pass
print("stopped", flush=True)
sys.stdin.readline()
alive = {}
for c, a, _ in held.values():
    try:
        gone = c.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        gone = False
    except OSError:
        gone = True
    alive[a] = alive.get(a, 0) + (not gone)
print(json.dumps({"alive": alive, "reopened": reopened}), flush=True)
"""


def flood(s, prefix, dst4, dst6, port, srcs, per=8, secs=45):
    p = s.spawn(prefix + ["/usr/bin/python3", "-c", FLOOD, dst4, dst6, str(port), ",".join(srcs),
                          str(per), str(secs)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                text=True)
    expect(p.stdout.readline().strip() == "started", "the flood did not start")
    return p


def held_by(pid, port):
    """The peer addresses of the connections process `pid` holds open on
    `port`, as ss(8) lists them, with no IPv4-mapped prefix."""
    out = subprocess.run(["ss", "-Htnp", "state", "established", "( sport = :%d )" % port],
                         capture_output=True, text=True, timeout=30).stdout
    return [re.sub(r"^\[(::ffff:)?|\]$", "", line.split()[3].rsplit(":", 1)[0])
            for line in out.splitlines() if "pid=%d," % pid in line]


def flood_result(p, pid, port, settled):
    """When the flood has stopped reopening: (what process `pid` holds open
    on `port` (held_by), once `settled(held)` says so, or after 15 s: a
    loaded machine's server may still be closing what it cut; what the
    flood printed)."""
    expect(p.stdout.readline().strip() == "stopped", "the flood did not stop")
    deadline = time.monotonic() + 15
    held = held_by(pid, port)
    while not settled(held) and time.monotonic() < deadline:
        time.sleep(0.2)
        held = held_by(pid, port)
    p.stdin.write("\n")
    p.stdin.flush()
    line = p.stdout.readline()
    expect(line.startswith("{"), "the flood printed no result: %r" % line)
    return held, json.loads(line)


def owner_slowly(hosts, port, path, token, n):
    """How many of `n` GETs of `path` with the token got 200: each from the
    next of `hosts` (the owner, this user), its request arriving whole half
    a second after the connection opened (a slow link)."""
    ok = 0
    for i in range(n):
        try:
            with socket.create_connection((hosts[i % len(hosts)], port), timeout=10) as c:
                c.sendall(b"GET %s?token=%s HTTP/1.1\r\n" % (path.encode(), token.encode()))
                time.sleep(0.5)
                c.sendall(b"Host: x\r\nConnection: close\r\n\r\n")
                ok += c.makefile("rb").readline().startswith(b"HTTP/1.1 200")
        except OSError:
            pass
        time.sleep(0.2)
    return ok


class Commands:
    """`ip` commands run now, and their undoing when the test ends (as a
    client of the scope: closed however the test ends)."""

    def __init__(self, s):
        self.undo = []
        s.clients.append(self)

    def run(self, args, undo=None):
        r = subprocess.run(["ip"] + args, capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            raise Skip("`ip %s` is not permitted here: %s" % (" ".join(args), r.stderr.strip()))
        if undo is not None:
            self.undo.append(undo)

    def close(self):
        for args in reversed(self.undo):
            subprocess.run(["ip"] + args, capture_output=True, timeout=30)
        self.undo = []


def token_url(c, pattern):
    deadline = time.monotonic() + 20
    while True:
        m = re.search(pattern, c.stdout())
        if m:
            return int(m.group(1)), m.group(2)
        expect(c.proc.poll() is None and time.monotonic() < deadline,
               "did not start: %s %s" % (c.stdout(), c.stderr()))
        time.sleep(0.05)


@test(serial=True, timeout=180, ghc_free=True)
def token_mode_owner_served_under_local_flood(s):
    """serve --http [::]:0 (token mode): another user (uid 65534) keeps 8
    slow connections from each of 127.0.0.2 to 127.0.0.40 and from 39
    IPv6 addresses of 39 /64s (added to lo), reopening each the moment it
    is cut: the owner's 40 requests with the token, from 127.0.0.1 and
    ::1, each whole only half a second after its connection opened, are
    all answered (0 of 40 before: each new slow connection cut the oldest
    unproven one, the owner's among them), and the other user, one source
    however many addresses it takes, holds 8 connections at most."""
    need_other_user()
    if shutil.which("ip") is None:
        raise Skip("no `ip` command to add IPv6 addresses to lo")
    net = "fd7e:5c:%x" % (os.getpid() & 0xffff)
    ip = Commands(s)
    v6 = ["%s:%x::1" % (net, i) for i in range(1, 40)]
    for a in ["%s::1" % net] + v6:
        ip.run(["-6", "addr", "add", a + "/128", "dev", "lo", "nodad"],
               undo=["-6", "addr", "del", a + "/128", "dev", "lo"])
    sock = s.path("t.sock")
    fp.start(s, sock, fp.eventlog(fp.block(fp.program([b"flood"], 41) + fp.gc(2)), end=False))
    srv = Cmd(s, ["serve", "unix:" + sock, "--http", "[::]:0"])
    port, token = token_url(srv, r"http://\[::\]:(\d+)/\?token=([0-9a-f]{64})")
    v4 = ["127.0.0.%d" % i for i in range(2, 41)]
    hog = flood(s, NOBODY, "127.0.0.1", "%s::1" % net, port, v4 + v6)
    time.sleep(3)  # the flood is in place; not an assertion
    ok = owner_slowly(["127.0.0.1", "::1"], port, "/", token, 40)
    held, res = flood_result(hog, srv.proc.pid, port,
                             lambda held: len([a for a in held if a in v4 + v6]) <= 8)
    theirs = [a for a in held if a in v4 + v6]
    note("owner: %d of 40 answered; uid 65534 reopened %d connections from 78 addresses; at the "
         "end serve held %d of them (%d by uid 65534's count)"
         % (ok, res["reopened"], len(theirs), sum(res["alive"].values())))
    expect(ok == 40, "the owner's requests answered: %d of 40" % ok)
    expect(len(theirs) <= 8, "serve held %d of uid 65534's connections (want at most 8): %s"
           % (len(theirs), theirs))


@test(serial=True, timeout=180, ghc_free=True)
def token_mode_owner_served_under_remote_flood(s):
    """metrics --http [::]:0 (token mode) and a flood from another
    network namespace (another host to it: no user of this one): 8 slow
    connections from each of 39 addresses of one IPv6 /64 and of 6 IPv4
    addresses, reopened the moment they are cut: the owner's 40 scrapes
    with the token, from 127.0.0.1 and ::1, each whole only half a second
    after its connection opened, are all answered (0 of 40 before), and
    the flood holds 8 at most from the /64 and from each IPv4 address, 32
    in all."""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        raise Skip("a network namespace needs root and the `ip` command")
    tag = os.getpid() & 0xffff
    ns, host_if, ns_if = "es-tok-%x" % tag, "estk%xh" % tag, "estk%xn" % tag
    net6, net4 = "fd7e:5d:%x:1" % tag, "198.18.%d" % (tag % 250)
    ip = Commands(s)
    ip.run(["netns", "add", ns], undo=["netns", "del", ns])
    ip.run(["link", "add", host_if, "type", "veth", "peer", "name", ns_if, "netns", ns],
           undo=["link", "del", host_if])
    ip.run(["addr", "add", net4 + ".1/24", "dev", host_if])
    ip.run(["-6", "addr", "add", net6 + "::1/64", "dev", host_if, "nodad"])
    ip.run(["link", "set", host_if, "up"])
    v6 = ["%s::%x" % (net6, i) for i in range(2, 41)]
    v4 = ["%s.%d" % (net4, i) for i in range(2, 8)]
    for a in v6:
        ip.run(["-n", ns, "-6", "addr", "add", a + "/64", "dev", ns_if, "nodad"])
    for a in v4:
        ip.run(["-n", ns, "addr", "add", a + "/24", "dev", ns_if])
    ip.run(["-n", ns, "link", "set", ns_if, "up"])
    ip.run(["-n", ns, "link", "set", "lo", "up"])
    exporter = Cmd(s, ["metrics", "--http", "[::]:0", "--linger", "300",
                       "unix:" + s.path("none.sock")])
    port, token = token_url(exporter, r"http://\[::\]:(\d+)/metrics\?token=([0-9a-f]{64})")
    hog = flood(s, ["ip", "netns", "exec", ns], net4 + ".1", net6 + "::1", port, v6 + v4)
    time.sleep(3)  # the flood is in place; not an assertion
    ok = owner_slowly(["127.0.0.1", "::1"], port, "/metrics", token, 40)
    held, res = flood_result(
        hog, exporter.proc.pid, port,
        lambda held: (len([a for a in held if a in v6]) <= 8
                      and max([held.count(a) for a in v4] + [0]) <= 8
                      and len([a for a in held if a in v4 + v6]) <= 32))
    from_v6 = [a for a in held if a in v6]
    most_v4 = max(held.count(a) for a in v4)
    theirs = [a for a in held if a in v4 + v6]
    note("owner: %d of 40 answered; the flood reopened %d connections; at the end metrics held %d "
         "(%d from the /64, at most %d from an IPv4 address; %d by the flood's count)"
         % (ok, res["reopened"], len(theirs), len(from_v6), most_v4,
            sum(res["alive"].values())))
    expect(ok == 40, "the owner's scrapes answered: %d of 40" % ok)
    expect(len(from_v6) <= 8, "the /64 held %d connections (want at most 8)" % len(from_v6))
    expect(most_v4 <= 8, "an IPv4 address held %d connections (want at most 8)" % most_v4)
    expect(len(theirs) <= 32, "the flood held %d in all (want at most 32)" % len(theirs))
