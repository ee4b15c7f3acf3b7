# SPDX-License-Identifier: BSD-3-Clause
"""The integration tests' harness: the test registry, the wire constants,
and helpers that start the real programs (fibber-c-main, probe), connect
real clients, and judge what they received with the ghc-events-based
checker.

A test module (tests/integration/library/ or client/test_*.py, imported by run.py) is written

    from harness import test, Program, Client, Scope, expect, note, Skip, check_stream

    @test
    def name(s):
        '''What a user would notice, in a sentence.'''
        ...

where `s` is the test's Scope. @test(serial=True) marks a test that must
not run alongside others under run.py -j (one that measures time or memory);
@test(ghc_free=True) one that starts no program built with GHC (it drives
the command against files, fake programs or nothing), so that one GHC's run
covers it: the chroots' runs skip it (run.py --skip-ghc-free), and it fails
if it starts one (Scope.spawn). Test names are unique across modules.

Everything started here is registered with a Scope, which kills leftover
processes, closes sockets and removes its temporary directory when the test
ends, passed or failed."""

import fcntl
import os
import re
import resource
import select
import socket
import struct
import subprocess
import sys
import termios
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "pylib"))
import esproc  # noqa: E402

BUILD = os.environ.get("ES_BUILD", "build")
# The Haskell compiler, as the Makefile's HC (tests/run-all.sh passes it on).
HC = os.environ.get("HC", "ghc")

END_MARKER = b"\xff\xff"
GCTL = b"GCTL"
START, STOP, CENSUS = b"\x01", b"\x02", b"\x03"
CC_START, CC_STOP = b"\x04", b"\x05"
LOSSLESS = b"\x06"
COST_NOTICES = b"\x07"
# Upstream eventlog-socket's framing: magic, version 0, namespace length,
# namespace, command id; its built-in ids for our commands.
UMAGIC = b"\xf0\x9e\x97\x8c"
UPSTREAM_ID = {START: 3, STOP: 4, CENSUS: 5, CC_START: 1, CC_STOP: 2, LOSSLESS: 6,
               COST_NOTICES: 7}


def upstream(cmd, namespace=b"eventlog-socket"):
    """The upstream frame for one of our command bytes (or an id, as int)."""
    cid = cmd if isinstance(cmd, int) else UPSTREAM_ID[cmd]
    return UMAGIC + b"\x00" + bytes([len(namespace)]) + namespace + bytes([cid])


# Enough user messages to fill GHC 9.0's 2 MiB capability buffer more than
# once, so chunks reach the library while the program runs.
FLOOD = 120000

# The programs built with (or running) the GHC under test: a test that
# starts one is not ghc_free.
GHC_PROGRAMS = {"probe", "probe-late", "probe-prof", "probe-dyn", "fibber-c-main", "hsstart",
                "sparker", "threads", "heapmodes", "profiled", "ghc", "cabal", "runghc"}

TESTS = []  # every test, in registration (and report) order


def test(fn=None, *, serial=False, timeout=120, ghc_free=False):
    """Register a test: @test, or @test(serial=True) for one that runs alone
    under run.py -j; `timeout`: seconds it may take (run.py kills it then);
    `ghc_free`: it starts no program built with GHC."""
    def register(f):
        if any(t.__name__ == f.__name__ for t in TESTS):
            raise ValueError("two tests are named %s" % f.__name__)
        f.serial = serial
        f.timeout = timeout
        f.ghc_free = ghc_free
        TESTS.append(f)
        return f
    return register(fn) if fn is not None else register


class TestFailure(Exception):
    pass


class Skip(Exception):
    """The test cannot apply here (for instance to this GHC version)."""


def note(message):
    """A diagnostic line shown with the test's result."""
    print("# " + message, flush=True)


def expect(cond, message):
    if not cond:
        raise TestFailure(message)


class Scope(esproc.Group):
    """Owns a temporary directory and everything a test starts: programs
    (each in a session of its own, killed with its process group), other
    processes (spawn), and clients."""

    def __init__(self, ghc_free=False):
        super().__init__("es-it-")
        self.procs = []  # the Programs
        self.clients = []
        self.ghc_free = ghc_free  # the test is marked so: it starts no GHC program

    def spawn(self, argv, **popen_kw):
        name = os.path.basename(str(argv[0]))
        if self.ghc_free and name in GHC_PROGRAMS:
            raise TestFailure("marked ghc_free, but starts %s, a program built with GHC: "
                              "the chroots' runs would skip it" % name)
        return super().spawn(argv, **popen_kw)

    def close(self):
        for c in self.clients:
            c.close()
        for p in self.procs:
            p.kill()
        super().close()


def raise_nofile():
    """In the child: as many descriptors as the hard limit allows, for the
    tests that serve a thousand clients (the soft limit is often 1024)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def unix_listening(path):
    """Whether a socket listens at `path`: /proc/net/unix lists every Unix
    socket with its flags (0x10000, __SO_ACCEPTCON: listening) and path."""
    # Another process's socket path may be any bytes (not UTF-8).
    with open("/proc/net/unix", errors="surrogateescape") as f:
        next(f)
        for line in f:
            fields = line.split(None, 7)
            if len(fields) == 8 and fields[7].rstrip("\n") == path and int(fields[3], 16) & 0x10000:
                return True
    return False


def set_limits(nofile, fsize, closed=()):
    """In a child before exec: RLIMIT_NOFILE `nofile` (None: raised to the
    hard limit), RLIMIT_FSIZE `fsize` (None: unchanged), the descriptors
    `closed` closed."""
    if nofile is None:
        raise_nofile()
    else:
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
    if fsize is not None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    for fd in closed:
        os.close(fd)


class Program:
    """A program built with the library, talking over stdin/stdout."""

    def __init__(self, scope, exe, args=(), env=None, rts=(), unix=None, tcp_port=None,
                 wait=False, stdin=True, stderr_pipe=False, nofile=None, uid=None, fsize=None,
                 closed=()):
        """stderr_pipe: stderr is a pipe that nobody reads until the program
        has exited (stderr_pipe_output then reads it). nofile: the program's
        RLIMIT_NOFILE (default: raised to the hard limit). fsize: its
        RLIMIT_FSIZE in bytes (`ulimit -f`; default: as the tests'). closed:
        descriptors it starts with closed (1, 2: `>&- 2>&-`). uid: run it as
        that user (and group), with setpriv (needs root; the scope's
        directory must let that user in, and it starts in it)."""
        self.scope = scope
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("GHC_EVENTLOG_")}
        if unix is not None:
            full_env["GHC_EVENTLOG_UNIX_PATH"] = unix
        if tcp_port is not None:
            full_env["GHC_EVENTLOG_INET_PORT"] = str(tcp_port)
        if wait:
            full_env["GHC_EVENTLOG_WAIT"] = "1"
        full_env.update(env or {})
        argv = [os.path.abspath(os.path.join(BUILD, exe)), *args]
        if rts:
            argv += ["+RTS", *rts, "-RTS"]
        if uid is not None:
            argv = ["setpriv", "--reuid", str(uid), "--regid", str(uid), "--clear-groups", *argv]
        self.stderr_path = scope.path("%s-%d.stderr" % (exe, len(scope.procs)))
        self.stderr_file = open(self.stderr_path, "wb")
        self.proc = scope.spawn(argv, env=full_env, stdin=subprocess.PIPE if stdin else
                                subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE if stderr_pipe else self.stderr_file,
                                preexec_fn=lambda: set_limits(nofile, fsize, closed),
                                cwd=scope.dir)  # -h writes PROGRAM.hp in the cwd
        self.out_buf = b""
        scope.procs.append(self)

    def stderr(self):
        with open(self.stderr_path, "rb") as f:
            return f.read().decode(errors="replace")

    def wait_stderr(self, pattern, timeout=10.0):
        """Wait until stderr matches `pattern`; return the match."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = re.search(pattern, self.stderr())
            if m:
                return m
            if self.proc.poll() is not None:
                m = re.search(pattern, self.stderr())
                if m:
                    return m
                raise TestFailure("program exited (%s) before printing %r; stderr:\n%s"
                                  % (self.proc.returncode, pattern, self.stderr()))
            time.sleep(0.02)
        raise TestFailure("no %r on stderr within %.0f s; stderr:\n%s"
                          % (pattern, timeout, self.stderr()))

    def tcp_port(self):
        return int(self.wait_stderr(r"listening on 127\.0\.0\.1:(\d+)").group(1))

    def wait_socket(self, path, timeout=30.0):
        """Wait until the program listens on the Unix socket `path`. Not
        just until the file exists: bind() creates it a moment before
        listen() lets clients in, and a client connecting in between (nc,
        the eventlog-socket command, many-clients) is refused."""
        deadline = time.monotonic() + timeout
        while not unix_listening(path):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise TestFailure("nothing listens on %s; stderr:\n%s" % (path, self.stderr()))
            time.sleep(0.01)

    def readline(self, timeout=30.0):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.out_buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TestFailure("no answer from the program within %.0f s" % timeout)
            r, _, _ = select.select([self.proc.stdout], [], [], left)
            if r:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                if not chunk:
                    raise TestFailure("program closed stdout; stderr:\n%s" % self.stderr())
                self.out_buf += chunk
        line, self.out_buf = self.out_buf.split(b"\n", 1)
        return line.decode()

    def query(self, line, timeout=60.0):
        """Send a probe command that answers with a value; return the answer."""
        self.proc.stdin.write((line + "\n").encode())
        self.proc.stdin.flush()
        return self.readline(timeout)

    def stats(self):
        """eventlog_socket_stats() of the running probe, as a dict."""
        names = ["clients_connected", "clients_accepted", "clients_lagged", "bytes_received",
                 "bytes_sent", "chunks_dropped", "bytes_dropped", "bytes_held",
                 "bytes_held_peak", "flushes", "flush_us", "clients_refused", "cpu_ns_writer",
                 "cpu_ns_walker", "cpu_ns_loop", "clients_lossless", "lossless_waits",
                 "lossless_wait_ns", "lossless_wait_max_ns", "chunks_lost", "bytes_lost",
                 "window_bytes", "windows_sent"]
        words = self.query("stats").split()
        expect(words[0] == "stats" and len(words) == 1 + len(names), "stats answer %r" % words)
        return dict(zip(names, map(int, words[1:])))

    def wait_clients(self, n=0, refused=0, total=0, timeout=60.0):
        """Wait until the library has taken in `n` clients, refused
        `refused`, and decided on `total` (taken in or refused): a client's
        connect() returns once the kernel has queued the connection, but it
        gets the stream only from the chunk after the library's loop thread
        accepted it, which on a busy machine can be much later. Returns the
        stats."""
        deadline = time.monotonic() + timeout
        while True:
            st = self.stats()
            if (st["clients_accepted"] >= n and st["clients_refused"] >= refused and
                    st["clients_accepted"] + st["clients_refused"] >= total):
                return st
            if time.monotonic() > deadline:
                raise TestFailure("within %.0f s the program took in %d clients (waiting for "
                                  "%d) and refused %d (waiting for %d; for %d in all)"
                                  % (timeout, st["clients_accepted"], n, st["clients_refused"],
                                     refused, total))
            time.sleep(0.02)

    def wait_lossless(self, n=1, timeout=60.0):
        """Wait until `n` clients are lossless: the loop thread reads a
        client's request some time after it was sent, and until then the
        client is served under the drop policy."""
        deadline = time.monotonic() + timeout
        while self.stats()["clients_lossless"] < n:
            if time.monotonic() > deadline:
                raise TestFailure("%d lossless clients within %.0f s: %r"
                                  % (n, timeout, self.stats()))
            time.sleep(0.02)

    def cmd(self, line, timeout=60.0):
        """Send one probe command and wait for its "ok"."""
        self.proc.stdin.write((line + "\n").encode())
        self.proc.stdin.flush()
        answer = self.readline(timeout)
        expect(answer == "ok", "probe answered %r to %r" % (answer, line))

    def finish(self, timeout=60.0):
        """Close the program's stdin, wait for a normal exit; return stdout."""
        try:
            rest, _ = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise TestFailure("program did not exit within %.0f s" % timeout)
        return (self.out_buf + rest).decode(errors="replace")

    def wait_rusage(self, timeout=60.0):
        """Wait for the program to exit without touching its pipes; return
        (exit status, peak RSS in KiB). Fails the test on a timeout."""
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
            if pid:
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                return self.proc.returncode, usage.ru_maxrss
            if time.monotonic() > deadline:
                self.kill()
                raise TestFailure("program did not exit within %.0f s" % timeout)
            time.sleep(0.05)

    def stderr_pipe_output(self):
        return self.proc.stderr.read().decode(errors="replace")

    def kill(self):
        self.scope.kill(self.proc)
        self.stderr_file.close()


class Client:
    """A client that reads the stream to EOF in a thread, and can send."""

    def __init__(self, scope, unix=None, tcp_port=None, connect_timeout=10.0, read=True,
                 keep=True, pace=None, nap=None):
        """keep=False: keep only the last 64 KiB of what arrives (received()
        then returns that tail), for a stream of hundreds of MB. pace: read
        at most this many bytes a second (64 KiB at a time, with no
        credit for time spent idle); nap: sleep this
        many seconds after every read (a reader that is busy elsewhere)."""
        self.keep = keep
        self.pace = pace
        self.nap = nap
        self.data = bytearray()
        self.eof = threading.Event()
        self.error = None
        deadline = time.monotonic() + connect_timeout
        while True:
            try:
                if unix is not None:
                    self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    self.sock.connect(unix)
                else:
                    self.sock = socket.create_connection(("127.0.0.1", tcp_port))
                break
            except (FileNotFoundError, ConnectionRefusedError):
                self.sock.close()
                if time.monotonic() > deadline:
                    raise TestFailure("cannot connect to %s" % (unix or tcp_port))
                time.sleep(0.02)
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, daemon=True)
        if read:
            self.thread.start()
        scope.clients.append(self)

    def start_reading(self):
        """For a client created with read=False: start reading now."""
        self.thread.start()

    def _read(self):
        start, total = time.monotonic(), 0
        try:
            while True:
                chunk = self.sock.recv(1 << 16 if self.pace or self.nap else 1 << 20)
                if not chunk:
                    break
                with self.lock:
                    self.data += chunk
                    if not self.keep and len(self.data) > 1 << 16:
                        del self.data[:-(1 << 16)]
                total += len(chunk)
                if self.pace:
                    # No credit for time spent waiting for data: never
                    # faster than the pace, whatever came before.
                    ahead = start + total / self.pace - time.monotonic()
                    if ahead > 0:
                        time.sleep(ahead)
                    else:
                        start -= ahead
                if self.nap:
                    time.sleep(self.nap)
        except OSError as e:
            self.error = e
        self.eof.set()

    def received(self):
        with self.lock:
            return bytes(self.data)

    def wait_bytes(self, n, timeout=30.0):
        deadline = time.monotonic() + timeout
        while len(self.received()) < n:
            if time.monotonic() > deadline or self.eof.is_set():
                raise TestFailure("client got %d bytes, expected at least %d"
                                  % (len(self.received()), n))
            time.sleep(0.01)

    def wait_header(self, timeout=30.0):
        """Wait until the whole eventlog header has arrived (it ends with
        the data section's start, "datb")."""
        deadline = time.monotonic() + timeout
        while b"datb" not in self.received():
            if time.monotonic() > deadline or self.eof.is_set():
                raise TestFailure("no whole header within %.0f s: got %d bytes"
                                  % (timeout, len(self.received())))
            time.sleep(0.01)

    def send(self, data, pieces=1):
        step = max(1, (len(data) + pieces - 1) // pieces)
        for i in range(0, len(data), step):
            self.sock.sendall(data[i:i + step])

    def wait_consumed(self, timeout=60.0):
        """Wait until the program has read everything this client sent. On
        a Unix socket what the peer has not read yet stays charged to the
        sender, and SIOCOUTQ tells how much; the library reads each client
        at most 4 MiB a second, so a megabyte of junk before a command takes
        a quarter of a second to get through, more on a busy machine. (Over
        TCP SIOCOUTQ only says what the peer's kernel has not taken yet.)"""
        deadline = time.monotonic() + timeout
        while True:
            left = struct.unpack("i", fcntl.ioctl(self.sock.fileno(), termios.TIOCOUTQ,
                                                  b"\0\0\0\0"))[0]
            if left == 0:
                return
            if time.monotonic() > deadline:
                raise TestFailure("the program left %d bytes unread for %.0f s" % (left, timeout))
            time.sleep(0.01)

    def wait_eof(self, timeout=60.0):
        if not self.eof.wait(timeout):
            raise TestFailure("stream did not end within %.0f s" % timeout)
        return self.received()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def flood_nonblocking(sock, frames, seconds):
    """Send `frames` again and again for `seconds`, as much as the socket
    takes each time without waiting (a frame may be cut: the server skips
    what is not a frame); the bytes it took. The program reads a client that
    floods one command a buffer a second once its request is folded into
    the one waiting, so blocking sends would take far longer."""
    sent = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            sent += sock.send(frames, socket.MSG_DONTWAIT)
        except BlockingIOError:
            time.sleep(0.01)
    return sent


def ghc_version():
    out = subprocess.run([HC, "--numeric-version"], capture_output=True, text=True).stdout
    major, minor = out.strip().split(".")[:2]
    return int(major), int(minor)


def fib_markers(summary):
    return [m for _, m in summary.markers if m.startswith("fib ")]


def serve(s, name, args=(), rts=(), tcp=False, exe="probe", env=None):
    """Start the probe waiting for a client on a Unix socket or TCP; return
    the program and a function that connects a client (its keyword
    arguments go to Client)."""
    if tcp:
        p = Program(s, exe, list(args), tcp_port=0, wait=True, rts=rts, env=env)
        port = p.tcp_port()
        return p, lambda **kw: Client(s, tcp_port=port, **kw)
    sock = s.path(name + ".sock")
    p = Program(s, exe, list(args), unix=sock, wait=True, rts=rts, env=env)
    p.wait_socket(sock)
    return p, lambda **kw: Client(s, unix=sock, **kw)


def stall_with_lossless_client(s, p, sock, framing=GCTL + LOSSLESS, flood=2000000):
    """Connect a client that asks for lossless delivery (`framing`) and
    reads nothing, then make the probe `p` flood `flood` messages: the
    flood must not finish while that client is there. Returns the client,
    the program held up."""
    c = Client(s, unix=sock, read=False)
    c.send(framing)
    p.wait_lossless(1)  # its request read before the data
    p.proc.stdin.write(b"flood %d z\n" % flood)
    p.proc.stdin.flush()
    try:
        answer = p.readline(timeout=3)
        raise TestFailure("the flood finished (%r) although the lossless client read nothing"
                          % answer)
    except TestFailure as e:
        if "no answer" not in str(e):
            raise
    return c


def many_clients_run(s, sock=None, port=None, readers=1, stalled=0, save=None, extra=(),
                     timeout=90):
    """Start build/many-clients (C clients, each stream parsed as it
    arrives), killed at the end of the test; return the process. `extra`:
    more options (--lossless, --read-mbps R, --tag TAG)."""
    argv = [os.path.join(BUILD, "many-clients"), "--readers", str(readers),
            "--stalled", str(stalled), "--timeout", str(timeout), *extra]
    argv += ["--unix", sock] if sock else ["--tcp", str(port)]
    if save:
        argv += ["--save", save]
    return s.spawn(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def many_clients_result(proc, timeout=120):
    out, _ = proc.communicate(timeout=timeout)
    summary = [line for line in out.splitlines() if line.startswith("many-clients:")]
    expect(summary, "many-clients printed no summary:\n%s" % out)
    return proc.returncode, summary[0], out


def enough_descriptors(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < n:
        raise Skip("RLIMIT_NOFILE hard limit %d is below the %d descriptors needed" % (hard, n))


# What the checker found in a stream (tests/integration/streamcheck.py), kept
# importable from here as the tests always did.
from streamcheck import Summary, check_stream  # noqa: E402,F401
