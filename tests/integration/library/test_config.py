# SPDX-License-Identifier: BSD-3-Clause
"""Configuration from the environment: clear errors, sockets in the way,
the TCP address and who may connect."""

import os
import shutil
import socket
import subprocess

from client_cmd import run
from harness import Client, Program, Skip, check_stream, expect, test


def config_error(s, env, args=("20",), expect_text=None):
    p = Program(s, "fibber-c-main", list(args), env=env, stdin=False)
    p.finish()
    err = p.stderr()
    expect(p.proc.returncode == 1, "exit status %s, stderr: %s" % (p.proc.returncode, err))
    if expect_text:
        expect(expect_text in err, "stderr lacks %r: %s" % (expect_text, err))
    return err


@test
def bad_configuration(s):
    """Every bad configuration is refused with a clear message, and a file in
    the way stays intact."""
    config_error(s, {}, expect_text="no socket configured")
    config_error(s, {"GHC_EVENTLOG_UNIX_PATH": "/tmp/" + "x" * 200}, expect_text="too long")
    precious = s.path("precious.txt")
    with open(precious, "w") as f:
        f.write("keep me")
    config_error(s, {"GHC_EVENTLOG_UNIX_PATH": precious}, expect_text="not a socket")
    with open(precious) as f:
        expect(f.read() == "keep me", "the file in the way was changed")
    # A path that cannot work: the message names the variable and the path,
    # says what is wrong and what to do, and nothing is created.
    missing_dir = s.path("no-such-dir")
    missing = os.path.join(missing_dir, "a.sock")
    err = config_error(s, {"GHC_EVENTLOG_UNIX_PATH": missing},
                       expect_text='GHC_EVENTLOG_UNIX_PATH="%s": the directory "%s" does not exist'
                       % (missing, missing_dir))
    expect("mkdir -p" in err, "no remedy for a missing directory: %s" % err)
    expect(not os.path.exists(missing_dir), "the missing directory was created")
    config_error(s, {"GHC_EVENTLOG_UNIX_PATH": s.path("a.sock") + "/"},
                 expect_text='GHC_EVENTLOG_UNIX_PATH="%s/" ends with \'/\'' % s.path("a.sock"))
    a_dir = s.path("a-directory")
    os.mkdir(a_dir)
    config_error(s, {"GHC_EVENTLOG_UNIX_PATH": a_dir},
                 expect_text='GHC_EVENTLOG_UNIX_PATH="%s" is a directory' % a_dir)
    config_error(s, {"GHC_EVENTLOG_UNIX_PATH": os.path.join(precious, "a.sock")},
                 expect_text='"%s" is a regular file, not a directory' % precious)
    expect(os.listdir(a_dir) == [], "something was created in the directory in the way")
    config_error(s, {"GHC_EVENTLOG_UNIX_PATH": s.path("a.sock"), "GHC_EVENTLOG_INET_PORT": "1"},
                 expect_text="set only one")
    config_error(s, {"GHC_EVENTLOG_UNIX_PATH": s.path("a.sock"), "GHC_EVENTLOG_WAIT": "maybe"},
                 expect_text="GHC_EVENTLOG_WAIT")
    config_error(s, {"GHC_EVENTLOG_INET_PORT": "99999"}, expect_text="invalid TCP port")
    config_error(s, {"GHC_EVENTLOG_INET_HOST": "127.0.0.1"}, expect_text="GHC_EVENTLOG_INET_PORT")
    sock = {"GHC_EVENTLOG_UNIX_PATH": s.path("b.sock")}
    config_error(s, dict(sock, GHC_EVENTLOG_MAX_BUFFER="lots"),
                 expect_text="GHC_EVENTLOG_MAX_BUFFER")
    config_error(s, dict(sock, GHC_EVENTLOG_CLIENT_BUFFER="1K"),
                 expect_text="GHC_EVENTLOG_CLIENT_BUFFER")
    config_error(s, dict(sock, GHC_EVENTLOG_SLOW_CLIENT="maybe"),
                 expect_text="GHC_EVENTLOG_SLOW_CLIENT")


@test
def sizes_mean_the_same_to_program_and_command(s):
    """One grammar of sizes (docs/configuration.md, Sizes): the program
    takes 1T, 64KiB and 2GB in its variables and serves; the command takes
    live>1T; both refuse 1.5M with a line that names the units."""
    sock = s.path("sizes.sock")
    p = Program(s, "fibber-c-main", ["20"], unix=sock, stdin=False,
                env={"GHC_EVENTLOG_MAX_BUFFER": "1T", "GHC_EVENTLOG_CLIENT_BUFFER": "64KiB",
                     "GHC_EVENTLOG_RETAIN": "2GB"})
    p.finish()
    err = p.stderr()
    expect(p.proc.returncode == 0 and "not a size" not in err,
           "the program refused 1T, 64KiB or 2GB (status %s): %s" % (p.proc.returncode, err))
    err = config_error(s, {"GHC_EVENTLOG_UNIX_PATH": sock, "GHC_EVENTLOG_RETAIN": "1.5M"},
                       expect_text='GHC_EVENTLOG_RETAIN="1.5M" is not a size')
    expect("K, M, G or T" in err, "the program's refusal does not name the units: %s" % err)
    for cond in ("heap-size>1.5M", "live>1.5M"):
        status, _, err = run(s, ["watch", sock, "--trigger", cond])
        expect(status == 2 and "%s: not a size" % cond in err and "K, M, G or T" in err,
               "watch --trigger %s: status %s, %s" % (cond, status, err))
    # Taken: what stops it is the missing program, not the size.
    status, _, err = run(s, ["watch", s.path("none.sock"), "--trigger", "live>1T",
                             "--memory", "1TiB"])
    expect(status == 2 and err.strip() != "" and "not a size" not in err,
           "watch --trigger live>1T --memory 1TiB: status %s, %s" % (status, err))


@test
def times_mean_the_same_to_program_and_command(s):
    """One grammar of times (docs/configuration.md, Times): the program
    takes GHC_EVENTLOG_RETAIN_SECONDS=5m and 2h as the command takes
    --duration 5m, and refuses what is not whole seconds (1.5, 500ms) or
    no time at all (5d) with a line that says which."""
    sock = s.path("times.sock")
    for age in ("5m", "2h", "300s"):
        p = Program(s, "fibber-c-main", ["20"], unix=sock, stdin=False,
                    env={"GHC_EVENTLOG_RETAIN_SECONDS": age})
        p.finish()
        err = p.stderr()
        expect(p.proc.returncode == 0 and "RETAIN_SECONDS" not in err,
               "the program refused GHC_EVENTLOG_RETAIN_SECONDS=%s (status %s): %s"
               % (age, p.proc.returncode, err))
    for age, words in (("1.5", "is not whole seconds"), ("500ms", "is not whole seconds"),
                       ("5d", "is not a duration (seconds, or a number with ms, s, m or h")):
        config_error(s, {"GHC_EVENTLOG_UNIX_PATH": sock, "GHC_EVENTLOG_RETAIN_SECONDS": age},
                     expect_text='GHC_EVENTLOG_RETAIN_SECONDS="%s" %s' % (age, words))
    # The command takes the same text: what stops it is the missing program.
    status, _, err = run(s, ["record", s.path("none.sock"), "--duration", "5m", "-o",
                             s.path("x.eventlog")])
    expect(status == 2 and "none.sock" in err and "duration" not in err,
           "record --duration 5m: status %s, %s" % (status, err))


@test
def socket_in_use_and_stale(s):
    """A live socket is refused without disturbing its owner; a stale one is
    replaced."""
    sock = s.path("shared.sock")
    owner = Program(s, "probe", unix=sock, wait=True)
    owner.wait_socket(sock)
    config_error(s, {"GHC_EVENTLOG_UNIX_PATH": sock}, expect_text="already in use")
    c = Client(s, unix=sock)
    owner.cmd("marker owner-fine")
    owner.cmd("quit")
    owner.finish()
    check_stream(s, c.wait_eof(), "owner").marker_time("owner-fine")

    stale = s.path("stale.sock")
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(stale)
    dead.close()  # the file stays, nobody listens
    p = Program(s, "fibber-c-main", ["20"], unix=stale, wait=True, stdin=False)
    p.wait_stderr("replaced stale socket file")
    c = Client(s, unix=stale)
    p.finish()
    expect(p.proc.returncode == 0, "fibber exited with %s" % p.proc.returncode)
    check_stream(s, c.wait_eof(), "stale")


@test
def tcp_loopback_default(s):
    """No host means 127.0.0.1, never all interfaces."""
    p = Program(s, "fibber-c-main", ["20"], tcp_port=0, wait=True, stdin=False)
    m = p.wait_stderr(r"listening on (\S+)")
    expect(m.group(1).startswith("127.0.0.1:"), "listening on %s" % m.group(1))
    c = Client(s, tcp_port=p.tcp_port())
    p.finish()
    check_stream(s, c.wait_eof(), "loopback")


def as_nobody(argv):
    """argv run as uid/gid 65534 (nobody) with setpriv; needs root."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        raise Skip("needs root and setpriv to run a client as another user")
    return ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"] + argv


def tcp_other_user_run(s, name, env=None, host=None):
    """The probe on TCP; one client as nobody (nc), one as us. Returns what
    each received, the stats and the program's stderr."""
    env = dict(env or {})
    if host:
        env["GHC_EVENTLOG_INET_HOST"] = host
    p = Program(s, "probe", tcp_port=0, env=env)
    port = int(p.wait_stderr(r"listening on \S+:(\d+)").group(1))
    nobody = s.spawn(as_nobody(["nc", "-d", "127.0.0.1", str(port)]),
                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    # Each client taken in or refused before the next, and before the data.
    p.wait_clients(total=1)
    me = Client(s, tcp_port=port)
    p.wait_clients(total=2)
    p.cmd("flood 1000 users")
    st = p.stats()
    p.cmd("quit")
    p.finish()
    theirs, _ = nobody.communicate(timeout=30)
    return theirs, me.wait_eof(), st, p.stderr()


@test
def tcp_refuses_other_users(s):
    """Over loopback TCP, a client run by another user (nobody, through
    setpriv) is refused with a log line, as the Unix socket's mode 0600
    refuses it; the program's own user is served."""
    theirs, mine, st, err = tcp_other_user_run(s, "uid")
    expect(theirs == b"", "the other user's client got %d bytes" % len(theirs))
    expect(st["clients_refused"] == 1, "stats %r" % st)
    expect("it belongs to uid 65534 and the program runs as uid 0" in err,
           "no log line naming the user; stderr:\n%s" % err)
    summ = check_stream(s, mine, "uid-mine")
    expect(summ.tagged("users") == list(range(1, 1001)), "the owner's client misses data")


@test
def tcp_allow_other_users(s):
    """GHC_EVENTLOG_ALLOW_OTHER_USERS=1 serves another user's client too."""
    theirs, mine, st, err = tcp_other_user_run(s, "uid-allow",
                                               env={"GHC_EVENTLOG_ALLOW_OTHER_USERS": "1"})
    expect(st["clients_refused"] == 0, "stats %r" % st)
    summ = check_stream(s, theirs, "uid-theirs")
    expect(summ.tagged("users") == list(range(1, 1001)), "the other user's client misses data")


@test
def tcp_non_loopback_warns(s):
    """Binding every interface (0.0.0.0) is logged as open to anyone who
    can reach the port."""
    p = Program(s, "probe", tcp_port=0, env={"GHC_EVENTLOG_INET_HOST": "0.0.0.0"})
    p.wait_stderr(r"0\.0\.0\.0:\d+ is not a loopback address: anyone who can reach this port "
                  r"can read the program's eventlog")
    p.cmd("quit")
    p.finish()


@test
def dump_path_checked_at_start(s):
    """A dump setting that could not work at the failing exit that needs it
    is refused at the start, naming the variable, its value and what is
    wrong: a missing directory, %t in the directory, a directory's name, a
    directory the program's user cannot write into (as uid 65534); a good
    one starts."""
    sock = s.path("d.sock")
    missing = s.path("no-such-dir")
    for value, why in ((os.path.join(missing, "app-%p.eventlog"),
                        "the directory %s: No such file or directory" % missing),
                       (s.path("run-%t/app.eventlog"), "%t in the directory"),
                       (s.dir + "/", "it names a directory")):
        config_error(s, {"GHC_EVENTLOG_UNIX_PATH": sock, "GHC_EVENTLOG_DUMP_ON_FAILURE": value},
                     expect_text='GHC_EVENTLOG_DUMP_ON_FAILURE="%s" cannot be used: %s'
                     % (value, why))
        expect(not os.path.exists(sock), "it listened with %s" % value)
    expect(not os.path.exists(missing), "the missing directory was created")
    if os.geteuid() == 0 and shutil.which("setpriv"):
        os.chmod(s.dir, 0o711)
        locked = s.path("locked")
        os.mkdir(locked, 0o755)
        home = s.path("nobody")
        os.mkdir(home, 0o700)
        os.chown(home, 65534, 65534)
        value = os.path.join(locked, "app-%p.eventlog")
        p = Program(s, "fibber-c-main", ["20"], uid=65534, stdin=False,
                    env={"GHC_EVENTLOG_UNIX_PATH": os.path.join(home, "d.sock"),
                         "GHC_EVENTLOG_DUMP_ON_FAILURE": value})
        p.finish()
        err = p.stderr()
        expect(p.proc.returncode == 1 and
               "this program (uid 65534) cannot create files in %s" % locked in err,
               "exit status %s; stderr:\n%s" % (p.proc.returncode, err))
    p = Program(s, "fibber-c-main", ["20"], unix=sock, stdin=False,
                env={"GHC_EVENTLOG_DUMP_ON_FAILURE": s.path("app-%p-%t.eventlog")})
    p.finish()
    expect(p.proc.returncode == 0 and "cannot be used" not in p.stderr(), p.stderr())
