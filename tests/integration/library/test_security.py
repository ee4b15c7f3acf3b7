# SPDX-License-Identifier: BSD-3-Clause
"""Who can do what to the program (docs/security.md): lossless delivery
only for the program's owner unless a setting says otherwise, and never
for ever; Ctrl-C ends a program that a lossless client holds up; the owner
is served over a dual-stack TCP bind whichever way they connect; a flood of
connections that are refused takes no client slot, so the owner is never
refused for it; a flood of custom commands runs their handler about once a
second; a signal while the program waits for its first client leaves no
socket file behind. Other users are played by uid 65534 (setpriv), other
machines by this machine's own non-loopback address."""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

from harness import (END_MARKER, GCTL, LOSSLESS, Client, Program, Skip, TestFailure, check_stream,
                     expect, flood_nonblocking, note, test, upstream)
import connflood
import harness


def as_nobody(argv):
    """argv run as uid/gid 65534 (nobody) with setpriv; needs root."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        raise Skip("needs root and setpriv to run a client as another user")
    return ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"] + argv


# A client that connects (TCP), sends bytes given in hex, says so, then
# reads nothing until told (a line on stdin), then reads everything and
# writes it to stdout.
STALLER = r"""
import socket, sys
host, port, frame = sys.argv[1], int(sys.argv[2]), bytes.fromhex(sys.argv[3])
fam = socket.AF_INET6 if ":" in host else socket.AF_INET
c = socket.socket(fam, socket.SOCK_STREAM)
c.connect((host, port))
c.sendall(frame)
print("connected", flush=True)
sys.stdin.readline()
out = bytearray()
c.settimeout(60)
first = True
while True:
    b = c.recv(1 << 20)
    if first:
        print("reading", flush=True)
        first = False
    if not b:
        break
    out += b
sys.stdout.buffer.write(bytes(out))
"""


def staller(s, argv_prefix, host, port, frame=GCTL + LOSSLESS):
    k = s.spawn(argv_prefix + [sys.executable, "-c", STALLER, host, str(port), frame.hex()],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = k.stdout.readline()
    expect(line.strip() == b"connected", "the client did not connect: %r %r"
           % (line, k.stderr.read() if k.poll() is not None else b""))
    return k


def staller_go(k):
    """Let the stalled client read from now on, and wait until it does (a
    busy machine may start it late; a program that exits meanwhile would
    rightly cut a client that is not reading)."""
    k.stdin.write(b"go\n")
    k.stdin.flush()
    line = k.stdout.readline()  # its first read ends within its 60 s timeout
    expect(line.strip() == b"reading", "the client did not begin to read: %r" % line)


def staller_stream(k):
    """What the client read, to the end."""
    out, _ = k.communicate(timeout=120)
    return out


def flood_finishes(p, n=2_000_000, timeout=60):
    """Make the probe post `n` messages; whether it finished in `timeout` s
    (a stalled lossless client would hold it up for good)."""
    p.proc.stdin.write(b"flood %d z\n" % n)
    p.proc.stdin.flush()
    try:
        return p.readline(timeout=timeout) == "ok"
    except TestFailure as e:
        if "no answer" in str(e):
            return False
        raise


def lossless_notices(data):
    return re.findall(rb"eventlog-socket: lossless delivery [^\x00-\x1f]*?from here on [a-z ,]*",
                      data)


def tcp_probe(s, env=None, host=None, rts=()):
    env = dict(env or {})
    if host:
        env["GHC_EVENTLOG_INET_HOST"] = host
    env.setdefault("GHC_EVENTLOG_CLIENT_BUFFER", "1M")
    p = Program(s, "probe", tcp_port=0, env=env, rts=rts)
    port = int(p.wait_stderr(r"listening on \S+:(\d+)").group(1))
    return p, port


def stream_begun(s, port):
    """Wait until the program's stream has begun: a client of the
    program's own user, left reading, has its header. A request read
    before the header has reached the library's loop thread is refused
    with the log line only (a notice needs the header's event types), and
    on a loaded machine the RTS may write its header after the library
    says it listens."""
    Client(s, tcp_port=port).wait_header()


@test
def lossless_refused_for_another_user(s):
    """Row 1: with GHC_EVENTLOG_ALLOW_OTHER_USERS=1 another user may read
    the stream, but not ask for lossless delivery: a client of uid 65534
    that asks and then reads nothing does not hold the program up (the
    flood finishes), the refusal is logged, and the client finds a notice
    saying so in its stream."""
    p, port = tcp_probe(s, {"GHC_EVENTLOG_ALLOW_OTHER_USERS": "1"})
    stream_begun(s, port)
    k = staller(s, as_nobody([]), "127.0.0.1", port)
    p.wait_stderr(r"asked for lossless delivery; refused: only the program's own user may "
                  r"have it, and it belongs to uid 65534")
    expect(flood_finishes(p), "the program was held up by another user's lossless request")
    st = p.stats()
    expect(st["clients_lossless"] == 0 and st["chunks_dropped"] > 0,
           "the client is lossless, or nothing was skipped for it: %r" % st)
    staller_go(k)
    p.cmd("quit")
    p.finish()
    data = staller_stream(k)
    found = lossless_notices(data)
    expect(found and b"refused" in found[0], "no refusal notice in its stream")
    note(found[0].decode())
    check_stream(s, data, "nobody-refused")


@test
def lossless_refused_record_says_so(s):
    """Row 1, as a user meets it: uid 65534 runs `eventlog-socket record
    127.0.0.1:PORT --lossless` against a program that lets other users
    read (GHC_EVENTLOG_ALLOW_OTHER_USERS=1). The library refuses the
    request with a log line; the command prints the library's notice on
    stderr and records the whole run under the drop policy: the recording
    parses and ends with the program's end marker (exit status 0)."""
    p, port = tcp_probe(s, {"GHC_EVENTLOG_ALLOW_OTHER_USERS": "1"})
    stream_begun(s, port)
    rec = s.spawn(as_nobody([os.path.join(os.path.abspath(harness.BUILD), "eventlog-socket"),
                             "record", "127.0.0.1:%d" % port, "-o", "-", "--lossless"]),
                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd="/")
    p.wait_stderr(r"asked for lossless delivery; refused: only the program's own user may "
                  r"have it, and it belongs to uid 65534", timeout=30)
    p.cmd("flood 1000 theirs")
    p.cmd("quit")
    p.finish()
    data, err = rec.communicate(timeout=60)
    err = err.decode(errors="replace")
    expect(rec.returncode == 0, "record exited %s: %s" % (rec.returncode, err))
    expect("eventlog-socket: lossless delivery refused: only the program's own user may have it"
           in err, "record did not print the refusal notice:\n%s" % err)
    note([line for line in err.splitlines() if "lossless" in line][0])
    summ = check_stream(s, data, "nobody-record")
    expect(summ.tagged("theirs") == list(range(1, 1001)), "the recording misses messages")


@test
def lossless_refused_for_another_machine(s):
    """Row 1: on a bind to every interface (0.0.0.0), a client from
    another address than loopback (this machine's own, which the library
    cannot tell from another machine's) may not ask for lossless
    delivery; the program's user over loopback may."""
    addrs = [a for a in subprocess.run(["hostname", "-I"], capture_output=True,
                                       text=True).stdout.split() if "." in a]
    if not addrs:
        raise Skip("this machine has no IPv4 address but loopback")
    p, port = tcp_probe(s, host="0.0.0.0")
    k = staller(s, [], addrs[0], port)
    p.wait_stderr(r"refused: only the program's own user may have it, and it connects from %s"
                  % re.escape(addrs[0]))
    expect(flood_finishes(p), "the program was held up by a remote lossless request")
    mine = Client(s, tcp_port=port, read=False)
    mine.send(GCTL + LOSSLESS)
    p.wait_lossless(1)
    mine.start_reading()
    staller_go(k)
    p.cmd("quit")
    p.finish()
    found = lossless_notices(staller_stream(k))
    expect(found and b"refused" in found[0], "no refusal notice for the remote client")
    expect(not lossless_notices(mine.wait_eof()), "the owner's client got a notice")


@test
def lossless_off_and_record_says_so(s):
    """Row 1: GHC_EVENTLOG_LOSSLESS_CLIENTS=none refuses even the owner:
    `eventlog-socket record --lossless` prints the library's notice on
    stderr, and its recording is complete (drop policy)."""
    sock = s.path("off.sock")
    p = Program(s, "probe", unix=sock, wait=True, env={"GHC_EVENTLOG_LOSSLESS_CLIENTS": "none"})
    p.wait_socket(sock)
    out = s.path("off.eventlog")
    rec = s.spawn([os.path.join(harness.BUILD, "eventlog-socket"), "record", sock, "-o", out,
                   "--lossless"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.wait_stderr(r"refused: lossless delivery is off \(GHC_EVENTLOG_LOSSLESS_CLIENTS=none\)")
    p.cmd("flood 1000 off")
    p.cmd("quit")
    p.finish()
    _, err = rec.communicate(timeout=60)
    expect(rec.returncode == 0, "record exited %s: %s" % (rec.returncode, err))
    expect("eventlog-socket: lossless delivery refused: lossless delivery is off" in err,
           "record did not print the notice:\n%s" % err)
    with open(out, "rb") as f:
        summ = check_stream(s, f.read(), "off")
    expect(summ.tagged("off") == list(range(1, 1001)), "the recording misses messages")


@test
def lossless_client_that_stalls_is_demoted(s):
    """Row 1: the owner's lossless client that reads nothing while the
    program waits for it loses lossless delivery after
    GHC_EVENTLOG_LOSSLESS_STALL_MS (1 s here; 10 s by default): the
    program goes on, the library logs it, and the client finds a notice and
    then a drop notice in its stream, which still parses."""
    sock = s.path("stall.sock")
    p = Program(s, "probe", unix=sock, wait=True,
                env={"GHC_EVENTLOG_CLIENT_BUFFER": "1M", "GHC_EVENTLOG_LOSSLESS_STALL_MS": "1000"})
    p.wait_socket(sock)
    c = Client(s, unix=sock, read=False)
    c.send(GCTL + LOSSLESS)
    p.wait_lossless(1)
    start = time.monotonic()
    expect(flood_finishes(p), "the program stayed held up by a client that reads nothing")
    note("the flood finished %.1f s after it began" % (time.monotonic() - start))
    p.wait_stderr(r"lossless delivery ends: it read nothing for \d+\.\d s while the program "
                  r"waited for it")
    st = p.stats()
    expect(st["clients_lossless"] == 0 and st["lossless_waits"] >= 1, "stats %r" % st)
    # The program goes on while the client still reads nothing: another
    # flood, paced, whose messages all reach a second client.
    other = Client(s, unix=sock)
    answer = p.query("flood-for 1 after 100").split()
    expect(len(answer) == 2 and answer[0] == "ok", "the second flood answered %r" % answer)
    posted = int(answer[1])
    p.cmd("marker done")
    c.start_reading()
    # Read before the exit: a client that has read nothing for its stall
    # time when the program exits is cut there as one that stopped (mid
    # event: what its socket held), which a loaded machine that left the
    # reader unscheduled made of this one twice (9.6, 9.10).
    c.wait_bytes(64 * 1024)
    p.cmd("quit")
    p.finish()
    data = c.wait_eof()
    found = lossless_notices(data)
    summ = check_stream(s, data, "stall")
    told = [m for _, m in summ.messages if m.startswith("eventlog-socket: ")]
    expect(found and b"ended" in found[0],
           "no notice in the client's stream (%d bytes); its notices: %r"
           % (len(data), [m[:120] for m in told[:8]]))
    drops = [m for _, m in summ.messages if m.startswith("eventlog-socket: dropped")]
    expect(drops, "no drop notice after the demotion")
    later = check_stream(s, other.wait_eof(), "stall-other")
    after = later.tagged("after")
    expect(posted > 0 and after == list(range(1, posted + 1)) and
           "done" in [m for _, m in later.markers],
           "the program's progress after the demotion did not reach the other client: "
           "%d of %d messages" % (len(after), posted))
    note("after the demotion the program posted %d more messages, all delivered" % posted)


def sigint_run(s, name, rts=(), sig=signal.SIGINT, env=None):
    """The probe held up by a lossless client that reads nothing, with a
    client that drains; then `sig`. Returns the exit status, how long the
    exit took, the draining client's stream and the socket path."""
    sock = s.path(name + ".sock")
    p = Program(s, "probe", unix=sock, wait=True, rts=rts,
                env=dict(env or {}, GHC_EVENTLOG_CLIENT_BUFFER="1M"))
    p.wait_socket(sock)
    drain = Client(s, unix=sock)
    harness.stall_with_lossless_client(s, p, sock)
    start = time.monotonic()
    os.kill(p.proc.pid, sig)
    status, _ = p.wait_rusage(timeout=30)
    took = time.monotonic() - start
    note("exited (%s) %.2f s after the signal" % (status, took))
    return status, drain.wait_eof(), sock, p


def check_sigint(s, name, **kw):
    status, tail, sock, p = sigint_run(s, name, **kw)
    expect(status == -signal.SIGINT, "exit status %s (expected death by SIGINT, as after Ctrl-C)"
           % status)
    expect(tail.endswith(END_MARKER), "the draining client got no end marker")
    check_stream(s, tail, name)  # ghc-events parses it to its end
    expect(not os.path.exists(sock), "the socket file was left behind")
    expect("the program was interrupted, and this connection had stopped reading" in p.stderr(),
           "no log line for the lossless client:\n%s" % p.stderr())


@test
def sigint_ends_a_lossless_stall(s):
    """Row 2: Ctrl-C (SIGINT) while a lossless client that reads nothing
    holds the program up ends the program as without it: the draining
    client gets the end marker, the socket file is removed."""
    check_sigint(s, "int1")


@test
def sigint_ends_a_lossless_stall_two_capabilities(s):
    """Row 2, with two capabilities (+RTS -N2)."""
    check_sigint(s, "int2", rts=("-N2",))


@test
def graceful_sigterm_ends_a_lossless_stall(s):
    """Row 2: SIGTERM under GHC_EVENTLOG_GRACEFUL_SIGTERM=1 likewise."""
    check_sigint(s, "term", sig=signal.SIGTERM, env={"GHC_EVENTLOG_GRACEFUL_SIGTERM": "1"})


def connect_from(host, port):
    """A connected socket to host:port (the family by the host's form)."""
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    c = socket.socket(fam, socket.SOCK_STREAM)
    c.settimeout(30)
    c.connect((host, port))
    return c


def read_header(c):
    data = b""
    while b"datb" not in data:
        b = c.recv(65536)
        if not b:
            return data
        data += b
    return data


@test
def dual_stack_serves_the_owner(s):
    """Row 7: GHC_EVENTLOG_INET_HOST=:: (IPv6 and IPv4 on one socket): the
    owner is served over IPv4 (127.0.0.1, a v4-mapped peer to the
    library), IPv6 (::1) and an IPv6 socket to ::ffff:127.0.0.1; another
    user over IPv4 is still refused."""
    p = Program(s, "probe", tcp_port=0, env={"GHC_EVENTLOG_INET_HOST": "::"})
    port = int(p.wait_stderr(r"listening on \[::\]:(\d+)").group(1))
    for host in ("127.0.0.1", "::1", "::ffff:127.0.0.1"):
        c = connect_from(host, port)
        expect(b"datb" in read_header(c), "the owner over %s got no stream; stderr:\n%s"
               % (host, p.stderr()))
        c.close()
    nobody = s.spawn(as_nobody(["nc", "-d", "127.0.0.1", str(port)]), stdout=subprocess.PIPE,
                     stderr=subprocess.DEVNULL)
    p.wait_clients(refused=1)
    st = p.stats()
    p.cmd("quit")
    p.finish()
    theirs, _ = nobody.communicate(timeout=30)
    expect(theirs == b"", "the other user got %d bytes" % len(theirs))
    expect(st["clients_accepted"] == 3 and st["clients_refused"] == 1, "stats %r" % st)
    expect("it belongs to uid 65534" in p.stderr(), "no log line for the other user")


@test(serial=True, timeout=180)
def connection_flood_never_refuses_the_owner(s):
    """Row 8: two processes of another user connect and close (or reset)
    as fast as they can for 8 s, with GHC_EVENTLOG_MAX_CLIENTS=24;
    meanwhile the owner connects 20 times, one after another, and every
    time gets the stream. The refused connections take no client slot."""
    p, port = tcp_probe(s, {"GHC_EVENTLOG_MAX_CLIENTS": "24"})
    floods = [s.spawn(as_nobody([sys.executable, "-c", connflood.source(), str(port), "8"]),
                      stdout=subprocess.PIPE, text=True) for _ in range(2)]
    time.sleep(0.5)
    served = 0
    mine = []
    for i in range(20):
        c = connect_from("127.0.0.1", port)
        if b"datb" in read_header(c):
            served += 1
        mine.append(c)
        time.sleep(0.2)
    p.cmd("marker flood-over")
    counts = [int(f.communicate(timeout=60)[0] or 0) for f in floods]
    st = p.stats()
    err = p.stderr()
    p.cmd("quit")
    p.finish()
    for c in mine:
        c.close()
    note("the flood made %d connections, %d refused; the owner was served %d of 20 times"
         % (sum(counts), st["clients_refused"], served))
    expect(served == 20, "the owner was refused %d of 20 times:\n%s"
           % (20 - served,
              "\n".join(line for line in err.splitlines() if "refusing" in line)[:2000]))
    expect(st["clients_accepted"] == 20, "%d clients were taken in for the owner's 20"
           % st["clients_accepted"])
    expect(st["clients_refused"] > 0, "nothing was refused: %r" % st)
    expect("clients are connected, the most allowed" not in err,
           "a client was refused at the limit:\n%s" % err[-2000:])


def custom_frames(n):
    return upstream(1, b"my-package") * n


@test
def custom_command_flood_is_rate_limited(s):
    """Row 9: a client floods the docs' example command (a major GC, then a
    marker) for 3 s: the handler runs about once a second (the rest are
    folded into the one waiting), not once per request, and the program
    keeps answering."""
    sock = s.path("custom.sock")
    p = Program(s, "probe", ["--custom"], unix=sock, wait=True)
    p.wait_socket(sock)
    c = Client(s, unix=sock)
    p.cmd("marker A")
    deadline = time.monotonic() + 3
    sent = 0
    while time.monotonic() < deadline:
        c.send(custom_frames(500))
        sent += 500
        time.sleep(0.01)
    c.wait_consumed()
    p.cmd("marker B")
    time.sleep(1.5)  # a run that was waiting at B may still come
    p.cmd("quit")
    p.finish()
    summ = check_stream(s, c.wait_eof(), "custom-flood")
    a, b = summ.marker_time("A"), summ.marker_time("B")
    runs = [t for t, m in summ.markers if m == "gc done"]
    secs = (b - a) / 1e9
    note("%d requests in %.1f s: %d runs of the handler" % (sent, secs, len(runs)))
    expect(runs, "the handler never ran")
    expect(len(runs) <= secs + 3, "%d runs of a costly handler in %.1f s" % (len(runs), secs))


@test
def custom_command_flood_is_read_a_buffer_a_second(s):
    """A client floods the docs' example command as fast as its socket
    takes it for 3 s: once a request is folded into the one waiting, the
    program reads that client no more for a second, so the flood is held
    back by its own socket (well under 2 MiB taken in 3 s, where reading 4
    MiB a second took over 12) and costs the program next to nothing to
    parse; the handler runs about once a second, and the stream goes on."""
    sock = s.path("custom-slow.sock")
    p = Program(s, "probe", ["--custom"], unix=sock, wait=True)
    p.wait_socket(sock)
    c = Client(s, unix=sock)
    c.wait_header()
    p.cmd("marker A")
    sent = flood_nonblocking(c.sock, custom_frames(500), 3)
    p.cmd("marker B")
    p.cmd("quit")
    p.finish()
    summ = check_stream(s, c.wait_eof(), "custom-slow")
    runs = [t for t, m in summ.markers if m == "gc done"]
    secs = (summ.marker_time("B") - summ.marker_time("A")) / 1e9
    note("the flood got %.2f MiB into the socket in %.1f s; %d runs of the handler"
         % (sent / (1 << 20), secs, len(runs)))
    expect(sent < 2 << 20, "%.1f MiB of requests taken in 3 s: the flood is read as fast as it "
           "comes" % (sent / (1 << 20)))
    expect(runs and len(runs) <= secs + 3, "%d runs of the handler in %.1f s" % (len(runs), secs))


def removed_after(s, name, sig):
    sock = s.path(name + ".sock")
    p = Program(s, "fibber-c-main", ["20"], unix=sock, wait=True, stdin=False)
    p.wait_socket(sock)
    p.wait_stderr("waiting for a client to connect")
    os.kill(p.proc.pid, sig)
    status, _ = p.wait_rusage(timeout=30)
    expect(status == -sig, "exit status %s" % status)
    expect(not os.path.exists(sock), "the socket file was left behind")


@test
def sigint_while_waiting_removes_the_socket(s):
    """Row 10: Ctrl-C while GHC_EVENTLOG_WAIT=1 waits for the first
    client: the program ends by the signal, as it would have, and its
    socket file is removed."""
    removed_after(s, "wait-int", signal.SIGINT)


@test
def sigterm_while_waiting_removes_the_socket(s):
    """Row 10: the same with SIGTERM."""
    removed_after(s, "wait-term", signal.SIGTERM)


@test
def sigint_while_waiting_after_a_haskell_start(s):
    """Row 10, started from Haskell (eventlog_socket_start_unix with wait,
    as startWith does with esoWait): Ctrl-C ends the wait, the program
    exits through hs_exit, and the socket file is removed."""
    sock = s.path("late.sock")
    p = Program(s, "probe-late")
    p.proc.stdin.write(("start-unix-wait %s\n" % sock).encode())
    p.proc.stdin.flush()
    p.wait_stderr("listening on unix:")
    p.wait_socket(sock)
    time.sleep(0.3)  # in the wait
    os.kill(p.proc.pid, signal.SIGINT)
    status, _ = p.wait_rusage(timeout=30)
    expect(status != 0, "exit status %s" % status)
    expect(not os.path.exists(sock), "the socket file was left behind")
