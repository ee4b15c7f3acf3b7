"""What a new user meets in the first hour (issue 28): errors that say what
to do. A TCP port in use names the address, the port and the variable; a
program started from Haskell with esoWait says it waits, as the C main
does; a recording's name that is not there is a missing file, not a
program that is not running."""

from client_cmd import run
from harness import Client, Program, expect, test
from test_config import config_error


@test
def tcp_port_in_use_names_it(s):
    """A second program on a port another one listens on: exit 1, and the
    message names the host, the port and GHC_EVENTLOG_INET_PORT."""
    owner = Program(s, "probe", tcp_port=0)
    port = owner.tcp_port()
    err = config_error(s, {"GHC_EVENTLOG_INET_PORT": str(port)})
    expect("127.0.0.1 port %d" % port in err and "GHC_EVENTLOG_INET_PORT" in err
           and "another process is listening" in err, "stderr: %s" % err)
    owner.cmd("quit")
    owner.finish()


@test
def haskell_start_with_wait_says_it_waits(s):
    """eventlog_socket_start_unix with wait (what startWith does with
    esoWait = True) prints "waiting for a client to connect", then goes on
    once one has."""
    sock = s.path("hs.sock")
    p = Program(s, "probe-late")
    p.proc.stdin.write(("start-unix-wait %s\n" % sock).encode())
    p.proc.stdin.flush()
    p.wait_stderr("waiting for a client to connect")
    c = Client(s, unix=sock)
    expect(p.readline(timeout=30) == "ok", "the start did not return once a client came")
    p.cmd("quit")
    p.finish()
    c.wait_eof()


@test
def missing_recording_is_a_missing_file(s):
    """`heap missing.eventlog` (a typo): "no such file", exit 2; not the
    advice for a socket whose program is not running."""
    for args in (["heap", "missing.eventlog", "--hp", s.path("x.hp")],
                 ["report", "missing.eventlog", "-o", s.path("x.html")]):
        rc, _, err = run(s, args, 15)
        expect(rc == 2 and "no such file" in err and "running" not in err,
               "%s: exit %d, stderr %r" % (args, rc, err))
