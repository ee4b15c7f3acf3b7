# SPDX-License-Identifier: BSD-3-Clause
"""Who may use what the `eventlog-socket` command makes: `serve` is the
invoking user's alone (another uid on loopback gets 403, another --http
address needs the printed token), its Host check takes its own --http
address, and `record` never follows a planted symlink."""

import http.client
import os
import re
import shutil
import socket
import struct
import subprocess
import threading
import time
import urllib.parse

import harness
from client_cmd import Cmd
from harness import Program, Skip, expect, note, serve, test

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def need_other_user():
    if os.geteuid() != 0 or shutil.which("setpriv") is None or shutil.which("curl") is None:
        raise Skip("acting as another user needs root, setpriv and curl")


def start(s, sock, http, extra=()):
    """serve on `http`; return (command, the URL it printed)."""
    c = Cmd(s, ["serve", "unix:" + sock, "--http", http, *extra])
    deadline = time.monotonic() + 20
    while True:
        m = re.search(r"(http://\S+)", c.stdout())
        if m:
            return c, m.group(1)
        expect(c.proc.poll() is None and time.monotonic() < deadline,
               "serve did not start: %s %s" % (c.stdout(), c.stderr()))
        time.sleep(0.05)


def request(url, method="GET", headers=None, host=None):
    """(status, headers, body) of one request, as this user."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    try:
        h = dict(headers or {})
        if host is not None:
            h["Host"] = host
        path = u.path or "/"
        if u.query:
            path += "?" + u.query
        conn.request(method, path, headers=h)
        r = conn.getresponse()
        try:
            body = r.read()
        except http.client.IncompleteRead as e:
            body = e.partial  # a live download may end early; its status is what counts here
        return r.status, dict(r.getheaders()), body
    finally:
        conn.close()


def wait_connected(base, query=""):
    """Until serve has the program's first blocks: it prints its URL before
    it has connected, and a command sent before then is answered 409."""
    deadline = time.monotonic() + 20
    while True:
        st, _, body = request(base + "recording.eventlog" + query)
        if st == 200 and len(body) > 0:
            return
        expect(time.monotonic() < deadline, "the owner never got the recording: %d" % st)
        time.sleep(0.1)


def curl_as_nobody(url, *extra):
    """The HTTP status another user (uid 65534) gets."""
    out = subprocess.run(NOBODY + ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                                   "--max-time", "20", *extra, url],
                         capture_output=True, text=True, timeout=30)
    return out.stdout.strip()


@test
def serve_is_its_users_alone(s):
    """Another user (uid 65534) on loopback gets 403 from every URL of the
    owner's serve (page, event stream, download, the census button), with a
    line on serve's stderr; the owner gets the page and the download."""
    need_other_user()
    p, _ = serve(s, "own", ["--busy"])
    srv, url = start(s, s.path("own.sock"), "127.0.0.1:0")
    wait_connected(url)
    st, _, page = request(url)
    expect(st == 200 and b"<html" in page.lower(), "the owner got %d for the page" % st)
    for path, extra in [("", ()), ("recording.eventlog", ()), ("events", ("--max-time", "2")),
                        ("api/census", ("-X", "POST", "-H", "X-Eventlog-Socket: 1"))]:
        code = curl_as_nobody(url + path, *extra)
        expect(code == "403", "uid 65534 got %s for /%s (want 403)" % (code, path))
    expect(re.search(r"refused an HTTP request of uid 65534", srv.stderr()),
           "no refusal on serve's stderr: %r" % srv.stderr())
    note("uid 65534: 403 for /, /recording.eventlog, /events, POST /api/census")


@test
def serve_elsewhere_needs_the_token(s):
    """--http on a non-loopback address (0.0.0.0): the printed URL carries
    ?token=; without it (or with a wrong one, or in a cookie) 403, with it
    the page, whose files are linked with the token, and no cookie: every
    request carries the token itself (a cookie would go to every port of
    the host)."""
    p, _ = serve(s, "tok", ["--busy"])
    srv, url = start(s, s.path("tok.sock"), "0.0.0.0:0")
    m = re.match(r"http://0\.0\.0\.0:(\d+)/\?token=([0-9a-f]{64})$", url)
    expect(m, "the URL has no token: %s" % url)
    port, token = m.group(1), m.group(2)
    base = "http://127.0.0.1:%s/" % port
    st, _, _ = request(base)
    expect(st == 403, "no token: %d (want 403)" % st)
    st, _, _ = request(base + "?token=" + "0" * 64)
    expect(st == 403, "a wrong token: %d (want 403)" % st)
    st, _, _ = request(base + "api/census", "POST", {"X-Eventlog-Socket": "1"})
    expect(st == 403, "a command without the token: %d (want 403)" % st)
    st, h, page = request(base + "?token=" + token)
    expect(st == 200 and b"<html" in page.lower() and "Set-Cookie" not in h,
           "with the token: %d %r (want the page, no cookie)" % (st, h))
    expect(("app.js?token=" + token).encode() in page, "the page's script is not linked with "
           "the token")
    expect(h.get("Referrer-Policy") == "no-referrer",
           "Referrer-Policy %r" % h.get("Referrer-Policy"))
    st, _, _ = request(base + "app.js?token=" + token)
    expect(st == 200, "the script with the token: %d" % st)
    wait_connected(base, "?token=" + token)
    st, _, _ = request(base + "api/census?token=" + token, "POST", {"X-Eventlog-Socket": "1"})
    expect(st == 202, "a command with the token: %d (want 202)" % st)
    st, _, _ = request(base, headers={"Cookie": "es_token=" + token})
    expect(st == 403, "the token as a cookie: %d (want 403: cookies are not read)" % st)
    expect("without the token" in srv.stderr(), "no refusal logged: %r" % srv.stderr())


@test
def serve_host_check_takes_its_own_address(s):
    """serve --http 127.0.0.2:PORT answers its own printed URL (Host
    127.0.0.2:PORT), and still refuses another Host (DNS rebinding)."""
    p, _ = serve(s, "host", ["--busy"])
    srv, url = start(s, s.path("host.sock"), "127.0.0.2:0")
    expect(url.startswith("http://127.0.0.2:"), "printed %s" % url)
    st, _, _ = request(url)
    expect(st == 200, "its own URL %s answered %d (want 200)" % (url, st))
    port = urllib.parse.urlsplit(url).port
    st, _, _ = request(url, host="rebound.example:%d" % port)
    expect(st == 421, "Host rebound.example answered %d (want 421)" % st)


@test
def record_default_name_never_follows_a_link(s):
    """In a world-writable sticky directory (as /tmp), another user (uid
    65534) plants PROGRAM-PID.eventlog as a symlink to a file of ours, and
    PROGRAM-PID.1.eventlog as a file of its own: `record` without -o
    overwrites neither, and records into PROGRAM-PID.2.eventlog, which it
    names."""
    need_other_user()
    os.chmod(s.dir, 0o711)  # the test's own directory: others may pass through
    d = s.path("shared")
    os.mkdir(d)
    os.chmod(d, 0o1777)
    victim = s.path("victim")
    with open(victim, "w") as f:
        f.write("precious\n")
    p = Program(s, "probe", tcp_port=0, wait=True)
    port = p.tcp_port()
    name = "probe-%d" % p.proc.pid
    plant = ("ln -s %s %s/%s.eventlog && echo theirs > %s/%s.1.eventlog"
             % (victim, d, name, d, name))
    subprocess.run(NOBODY + ["sh", "-c", plant], check=True, timeout=30)
    rec = Cmd(s, ["record", ":%d" % port], cwd=d)
    p.cmd("flood 1000 named")
    p.cmd("quit")
    p.finish()
    rc, _, err = rec.wait()
    expect(open(victim, "rb").read() == b"precious\n",
           "the symlink was followed: the victim was written")
    expect(open(os.path.join(d, name + ".1.eventlog"), "rb").read() == b"theirs\n",
           "another user's file was overwritten")
    expect(rc == 0, "record exited %d: %s" % (rc, err))
    got = os.path.join(d, name + ".2.eventlog")
    expect(name + ".2.eventlog" in err, "the last line does not name the file: %r" % err)
    with open(got, "rb") as f:
        summ = harness.check_stream(s, f.read(), "planted")
    expect(summ.tagged("named") == list(range(1, 1001)), "messages missing")


class SmallDisk:
    """A 5 MiB tmpfs (GHC 9.0 writes 2 MiB blocks) (root only), unmounted however the test ends."""

    def __init__(self, s):
        if os.geteuid() != 0:
            raise Skip("mounting a small tmpfs needs root")
        self.dir = s.path("small-disk")
        os.mkdir(self.dir)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=5m", "tmpfs", self.dir],
                           capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            raise Skip("cannot mount a tmpfs: %s" % r.stderr.strip())

    def __enter__(self):
        return self.dir

    def __exit__(self, *exc):
        subprocess.run(["umount", "-l", self.dir], capture_output=True, timeout=30)


def check_cut_back(s, path, err, name):
    """The file parses whole (ghc-events, not --partial) and ends with an
    end marker; the message says it was cut back."""
    with open(path, "rb") as f:
        data = f.read()
    expect(len(data) > 1 << 20 and data.endswith(harness.END_MARKER),
           "%d bytes, ending %r" % (len(data), data[-4:]))
    harness.check_stream(s, data, name)
    expect("cut back to its last whole block" in err and "No space left" in err,
           "the message does not say the file was cut back: %r" % err)
    note("%s: %d bytes kept on a full 5 MiB disk" % (name, len(data)))


@test
def record_full_disk_keeps_a_valid_file(s):
    """record onto a 5 MiB tmpfs of a stream that does not fit: exit 2, a
    message that says so, and the file cut back to its last whole block
    with an end marker (it parses)."""
    with SmallDisk(s) as d:
        sock = s.path("full.sock")
        p = Program(s, "probe", unix=sock, wait=True)
        p.wait_socket(sock)
        out = os.path.join(d, "full.eventlog")
        rec = Cmd(s, ["record", "unix:" + sock, "-o", out])
        p.cmd("flood 400000 z")
        p.cmd("quit")
        p.finish()
        rc, _, err = rec.wait(60)
        check_cut_back(s, out, err, "record-full")
        expect(rc == 2, "record exited %d (want 2): %s" % (rc, err))


@test
def serve_record_full_disk_keeps_a_valid_file(s):
    """serve --record onto a 5 MiB tmpfs: the recording stops with a
    message, cut back to its last whole block with an end marker; serve
    goes on and exits 2 at Ctrl-C."""
    with SmallDisk(s) as d:
        sock = s.path("sfull.sock")
        p = Program(s, "probe", unix=sock, wait=True)
        p.wait_socket(sock)
        out = os.path.join(d, "serve.eventlog")
        srv, url = start(s, sock, "127.0.0.1:0", ["--record", out])
        p.cmd("flood 400000 z")
        p.cmd("quit")
        p.finish()
        deadline = time.monotonic() + 30
        while "cannot write the recording" not in srv.stderr():
            expect(time.monotonic() < deadline, "serve said nothing: %r" % srv.stderr())
            time.sleep(0.1)
        st, _, _ = request(url)
        expect(st == 200, "the page after the failure: %d" % st)
        srv.signal(2)
        rc, _, err = srv.wait(30)
        check_cut_back(s, out, err, "serve-full")
        expect(rc == 2, "serve exited %d (want 2): %s" % (rc, err))


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


class ManyLabels:
    """A Unix socket that serves an eventlog of one census with `n` labels
    (40 bytes each), then stays open: a program that is still running."""

    BLOCK, BEGIN, STRING, END = 18, 162, 164, 165
    SIZES = {BLOCK: 14, BEGIN: 8, STRING: -1, END: 8}

    def __init__(self, s, path, n):
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(path)
        self.srv.listen(1)
        s.clients.append(self.srv)
        self.s, self.n = s, n
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        conn, _ = self.srv.accept()
        self.s.clients.append(conn)
        out = b"hdrb" + b"hetb"
        for k, size in self.SIZES.items():
            desc = b"type %d" % k
            out += (b"etb\0" + struct.pack(">Hh", k, size) + struct.pack(">I", len(desc)) + desc
                    + struct.pack(">I", 0) + b"ete\0")
        out += b"hete" + b"hdre" + b"datb"
        t = 1000000
        parts = [struct.pack(">HQ", self.BEGIN, t) + struct.pack(">Q", 1)]
        for i in range(self.n):  # joined once: += on bytes is quadratic (minutes on a busy machine)
            p = struct.pack(">BQ", 0, 1000 + i) + (b"label-%06d-" % i).ljust(39, b"x") + b"\0"
            parts.append(struct.pack(">HQH", self.STRING, t, len(p)) + p)
        parts.append(struct.pack(">HQ", self.END, t) + struct.pack(">Q", 1))
        body = b"".join(parts)
        marker = struct.pack(">HQIQH", self.BLOCK, t, 24 + len(body), t, 0xFFFF)
        conn.sendall(out + marker + body)


def messages_until(port, wanted, seconds=2.0):
    """What a new tab gets from the event stream, de-chunked: the latest
    whole state, then the deltas after it, until one of `wanted` appears or
    `seconds` pass (a whole state is made again only once the deltas after
    it outgrow it, so the labels may come in a delta)."""
    c = socket.create_connection(("127.0.0.1", port), timeout=30)
    f = c.makefile("rb")
    deadline = time.monotonic() + seconds
    try:
        c.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        while f.readline() not in (b"\r\n", b""):
            pass  # the response's headers
        body = b""
        while not any(w in body for w in wanted) and time.monotonic() < deadline:
            c.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                size = int(f.readline().split(b";")[0], 16)
            except (OSError, ValueError):
                break
            if size == 0:
                break
            body += f.read(size)
            f.readline()
        return body
    finally:
        f.close()
        c.close()


@test(ghc_free=True)
def serve_memory_bounded_by_event_streams(s):
    """A stream with 20 000 census labels, and 100 event-stream connections
    that read nothing: serve holds one copy of the state, not one per
    connection (its memory grows by less than 16 MiB, where a copy each is
    100 x the state), and the page gets at most 4096 labels ("other" for
    the rest)."""
    sock = s.path("many.sock")
    ManyLabels(s, sock, 20000)
    srv, url = start(s, sock, "127.0.0.1:0")
    port = urllib.parse.urlsplit(url).port
    deadline = time.monotonic() + 30
    while True:
        msg = messages_until(port, (b"label-019999", b"(other labels)"))
        if b"label-019999" in msg or b"(other labels)" in msg:
            break
        expect(time.monotonic() < deadline, "the census never reached the page")
        time.sleep(0.2)
    labels = sum(m.count(b'","') + 1 for m in re.findall(rb'"labels":\[(.*?)\]', msg) if m)
    rss0 = rss_kib(srv.proc.pid)
    conns = []
    for _ in range(100):
        c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        c.connect(("127.0.0.1", port))
        c.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        s.clients.append(c)
        conns.append(c)
    time.sleep(3)  # the server's threads fill what they can; not an assertion
    rss1 = rss_kib(srv.proc.pid)
    note("state %d bytes, %d labels; serve %d KiB, with 100 stalled streams %d KiB"
         % (len(msg), labels, rss0, rss1))
    expect(rss1 - rss0 < 16 * 1024, "serve grew by %d KiB for 100 event streams" % (rss1 - rss0))
    expect(labels <= 4096, "the page got %d labels (want at most 4096)" % labels)
    expect(b"(other labels)" in msg, "no \"other\" label for the rest")


HOLD_SLOTS = r"""
import socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
held = []
for _ in range(n):
    try:
        c = socket.create_connection(("127.0.0.1", port), timeout=5)
        c.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        held.append(c)
    except OSError:
        pass
for c in held:
    c.setblocking(False)
def count():
    alive = 0
    for c in held:
        try:
            alive += c.recv(1) != b""
        except BlockingIOError:
            alive += 1
        except OSError:
            pass
    return alive
deadline = time.monotonic() + 15  # until serve has closed what it closes
while count() > 8 and time.monotonic() < deadline:
    time.sleep(0.1)
print(count(), flush=True)
time.sleep(float(sys.argv[3]))
"""


@test
def serve_owner_never_locked_out(s):
    """Another user (uid 65534) opens 250 connections to the owner's serve
    and trickles requests: at most a few stay open, and the owner's own
    requests are served meanwhile."""
    need_other_user()
    p, _ = serve(s, "lock", ["--busy"])
    srv, url = start(s, s.path("lock.sock"), "127.0.0.1:0")
    port = urllib.parse.urlsplit(url).port
    hog = s.spawn(NOBODY + ["/usr/bin/python3", "-c", HOLD_SLOTS, str(port), "250", "20"],
                  stdout=subprocess.PIPE, text=True)
    alive = int(hog.stdout.readline() or "-1")
    ok = 0
    for _ in range(20):
        try:
            st, _, _ = request(url)
            ok += st == 200
        except OSError:
            pass
    note("uid 65534 kept %d of 250 connections open; the owner got 200 for %d of 20" % (alive, ok))
    expect(ok == 20, "the owner got the page %d times of 20" % ok)
    expect(0 <= alive <= 8, "uid 65534 kept %d connections open (want at most 8)" % alive)


@test
def killed_program_recording_says_cut_everywhere(s):
    """A program SIGKILLed mid-stream: record ends the file with its own end
    marker after a cut notice, so that heap and table (exit 1, "cut") and report
    ("the eventlog was cut", and the page says so) tell it from a program
    that exited."""
    sock = s.path("kill.sock")
    p = Program(s, "probe", unix=sock, wait=True)
    p.wait_socket(sock)
    out = s.path("killed.eventlog")
    rec = Cmd(s, ["record", "unix:" + sock, "-o", out])
    p.cmd("flood %d k" % harness.FLOOD)
    deadline = time.monotonic() + 30
    while not os.path.exists(out) or os.path.getsize(out) < 4096:
        expect(rec.proc.poll() is None and time.monotonic() < deadline, "record did not begin")
        time.sleep(0.01)
    p.kill()
    rc, _, err = rec.wait()
    expect(rc == 1, "record exited %d: %s" % (rc, err))
    with open(out, "rb") as f:
        data = f.read()
    expect(data.endswith(harness.END_MARKER), "no end marker")
    harness.check_stream(s, data, "killed-check")
    rc, _, herr = Cmd(s, ["heap", out, "--csv", s.path("killed.csv")]).wait(60)
    expect(rc == 1 and "cut" in herr and "end marker arrived" not in herr,
           "heap of the killed recording: exit %d, %r" % (rc, herr))
    for kind in ("markers", "census"):
        rc, _, terr = Cmd(s, ["table", kind, out, "--csv", s.path(kind + ".csv")]).wait(60)
        expect(rc == 1 and "cut" in terr and "end marker arrived" not in terr,
               "table %s of the killed recording: exit %d, %r" % (kind, rc, terr))
    html = s.path("killed.html")
    rc, _, err = Cmd(s, ["report", out, "-o", html]).wait(60)
    expect(rc == 0 and "(the eventlog was cut)" in err, "report: exit %d, %r" % (rc, err))
    page = open(html, encoding="utf-8").read()
    i = page.find('"state":')
    expect("the recording was cut" in page and '"state":"file"' in page,
           "the report's state does not say the recording was cut: %r" % page[i:i + 300])
    note("heap: %s" % herr.strip())
