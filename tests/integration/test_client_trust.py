"""Who may use what the `eventlog-socket` command makes (issue 25's client
rows): `serve` is the invoking user's alone (another uid on loopback gets
403, another --http address needs the printed token), its Host check takes
its own --http address, and `record` never follows a planted symlink."""

import http.client
import os
import re
import shutil
import subprocess
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
    deadline = time.monotonic() + 20
    while True:  # the recording's first blocks
        st, _, body = request(url + "recording.eventlog")
        if st == 200 and len(body) > 0:
            break
        expect(time.monotonic() < deadline, "the owner never got the recording: %d" % st)
        time.sleep(0.1)
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
    ?token=; without it (or with a wrong one) 403, with it a cookie and a
    redirect to the page, then the cookie alone is enough."""
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
    st, h, _ = request(base + "?token=" + token)
    cookie = h.get("Set-Cookie", "")
    expect(st == 303 and h.get("Location") == "/" and cookie.startswith("es_token=" + token),
           "with the token: %d %r (want 303 to / with the cookie)" % (st, h))
    expect("HttpOnly" in cookie and "SameSite=Strict" in cookie, "cookie %r" % cookie)
    st, _, page = request(base, headers={"Cookie": "es_token=" + token})
    expect(st == 200 and b"<html" in page.lower(), "with the cookie: %d" % st)
    st, _, _ = request(base, headers={"Cookie": "es_token=" + token[:-1] + "x"})
    expect(st == 403, "a wrong cookie: %d (want 403)" % st)
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
    expect(open(victim, "rb").read() == b"precious\n", "the symlink was followed: the victim was written")
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

