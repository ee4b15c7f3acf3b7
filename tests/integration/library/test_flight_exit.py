# SPDX-License-Identifier: BSD-3-Clause
"""The flight recorder on the way out: GHC_EVENTLOG_DUMP_ON_FAILURE writes
the window to a file when the program exits with a failure (an uncaught
exception, exitWith (ExitFailure n)) with nobody connected, and writes
nothing for a clean exit; the RTS's error message is in the stream as a
notice."""

import glob
import os
import re
import stat
import shutil
import subprocess

from harness import Program, Skip, check_stream, expect, note, test


def run_to_exit(s, name, last, env_extra=None, fsize=None):
    """The probe with a dump setting and nobody connected: a few markers
    and some messages, then `last`; returns the program and the dump
    pattern's directory. fsize: the program's RLIMIT_FSIZE."""
    d = s.path(name)
    os.mkdir(d)
    env = {"GHC_EVENTLOG_DUMP_ON_FAILURE": os.path.join(d, "crash-%p.eventlog")}
    env.update(env_extra or {})
    sock = s.path(name + ".sock")
    p = Program(s, "probe", unix=sock, env=env, fsize=fsize)
    p.wait_socket(sock)
    for i in range(3):
        p.cmd("marker before-%d" % i)
        p.cmd("flood 100000 m%d" % i)
    p.proc.stdin.write((last + "\n").encode())
    p.proc.stdin.flush()
    rc, _ = p.wait_rusage(60)
    return p, d, rc


def read_dump(s, p, d, status):
    """The dump of `p` (pid in its name): mode 0600, parsed whole by the
    checker and by ghc-events, named on stderr with the status. Returns
    its summary, its markers as ghc-events reads them, its size."""
    path = os.path.join(d, "crash-%d.eventlog" % p.proc.pid)
    expect(os.path.exists(path), "no dump: %s; stderr:\n%s" % (os.listdir(d), p.stderr()))
    mode = stat.S_IMODE(os.stat(path).st_mode)
    expect(mode == 0o600, "the dump's mode is %o" % mode)
    with open(path, "rb") as f:
        data = f.read()
    summ = check_stream(s, data, "dump-%d" % p.proc.pid)  # whole, with its end marker
    markers = ghc_events_markers(path)
    expect("status %d" % status in p.stderr() and path in p.stderr(), "stderr:\n%s" % p.stderr())
    return summ, markers, len(data)


@test(timeout=120)
def dump_on_failure_uncaught_exception(s):
    """An uncaught exception with nobody connected: the program exits 1 and
    leaves its window in the file the setting names (%p: its pid), mode
    0600: it parses, ends with the RTS's own end marker, holds the markers
    and the error notice with the exception's text; stderr says where."""
    p, d, rc = run_to_exit(s, "throw", "throw boom at the end")
    expect(rc == 1, "the program exited %s" % rc)
    summ, markers, size = read_dump(s, p, d, 1)
    expect(markers == ["before-0", "before-1", "before-2"], "markers %s" % markers)
    errors = [m for _, m in summ.messages if m.startswith("eventlog-socket: the RTS reported")]
    expect(errors and "boom at the end" in errors[0], "error notices %s" % errors)
    note("%d bytes; %s" % (size, p.stderr().strip().splitlines()[-1]))


@test(timeout=120)
def dump_on_failure_exit_status(s):
    """exitWith (ExitFailure 3) leaves the dump; a clean exit leaves
    nothing; a small window holds only the end of the run."""
    p, d, rc = run_to_exit(s, "fail", "fail 3", {"GHC_EVENTLOG_RETAIN": "1M"})
    expect(rc == 3, "the program exited %s" % rc)
    summ, markers, size = read_dump(s, p, d, 3)
    tagged = summ.tagged("m2")
    expect(size < 4 << 20 and "before-0" not in markers,
           "a 1 MiB window dumped %d bytes with %s" % (size, markers))
    expect(tagged and tagged[-1] == 100000, "the last messages are missing")
    q, d2, rc2 = run_to_exit(s, "clean", "quit")
    expect(rc2 == 0 and glob.glob(os.path.join(d2, "*")) == [],
           "a clean exit left %s" % os.listdir(d2))


@test(timeout=120)
def dump_past_a_file_size_limit(s):
    """A program under a file-size limit (RLIMIT_FSIZE, `ulimit -f`) smaller
    than its window, which fails: the dump is given up with a line that
    says why, the partial file is removed, and the program exits with its
    own status (3), not killed by SIGXFSZ in the middle of its exit."""
    p, d, rc = run_to_exit(s, "fsize", "fail 3", {"GHC_EVENTLOG_RETAIN": "1M"}, fsize=64 << 10)
    err = p.stderr()
    expect(rc == 3, "the program exited %s (SIGXFSZ is 25; a shell says 153); stderr:\n%s"
           % (rc, err))
    expect("the program exits with status 3: cannot write its last events to" in err
           and "File too large" in err, "stderr does not say why:\n%s" % err)
    note([line for line in err.splitlines() if "cannot write" in line][0])
    expect(os.listdir(d) == [], "the dump's directory holds %s" % os.listdir(d))


# The same, for a program that starts the library from Haskell
# (tests/programs/hsstart: GHC's own main, GHC.Eventlog.Socket's startWith or
# startFromEnv), as most programs do.

def ghc_events_markers(path):
    """The markers of the file as `ghc-events show` reads it from byte 0
    (an oracle of its own, beside the checker)."""
    res = subprocess.run(["ghc-events", "show", path], capture_output=True, text=True,
                         timeout=120)
    expect(res.returncode == 0, "ghc-events show %s failed: %s" % (path, res.stderr[-500:]))
    return re.findall(r"^\s*\d+: cap \d+: marker: (.*)$", res.stdout, re.M)


def hs_run_to_exit(s, name, how, last, retain=0):
    """tests/programs/hsstart with nobody connected, the library started from
    Haskell by `how` ("env": startFromEnv, the dump and the window from
    GHC_EVENTLOG_DUMP_ON_FAILURE and _RETAIN; "with": startWith, from
    esoDumpOnFailure and esoRetainBytes): the marker "before-0", 100000
    messages "early i", then a second of messages "late i", the marker
    "last words" and `last`. Returns the program, the dump's directory, the
    exit status and the number of late messages."""
    d = s.path(name)
    os.mkdir(d)
    pattern = os.path.join(d, "crash-%p.eventlog")
    sock = s.path(name + ".sock")
    if how == "env":
        env = {"GHC_EVENTLOG_DUMP_ON_FAILURE": pattern}
        if retain:
            env["GHC_EVENTLOG_RETAIN"] = str(retain)
        p = Program(s, "hsstart", ["env"], unix=sock, env=env)
    else:
        p = Program(s, "hsstart", ["with", sock, str(retain), "0", pattern])
    expect(p.readline() == "started", "hsstart did not start; stderr:\n%s" % p.stderr())
    p.wait_socket(sock)
    p.cmd("marker before-0")
    p.cmd("flood 100000 early")
    late = p.query("flood-for 1 late").split()
    expect(late[0] == "ok", "hsstart answered %r" % late)
    p.cmd("marker last words")
    if last is not None:
        p.proc.stdin.write((last + "\n").encode())
        p.proc.stdin.flush()
    p.proc.stdin.close()
    rc, _ = p.wait_rusage(60)
    return p, d, rc, int(late[1])


@test(timeout=180)
def dump_on_failure_hs_start_exit_status(s):
    """Started by startWith with esoRetainBytes 1 MiB and esoDumpOnFailure:
    exitWith (ExitFailure 3) with nobody connected exits 3 and leaves the
    window: it parses from byte 0 (checker, ghc-events show), ends with the
    second of messages and the marker posted right before the exit, and
    holds no more than the 1 MiB window allows (not the first marker)."""
    p, d, rc, late = hs_run_to_exit(s, "hs-fail", "with", "fail 3", retain=1 << 20)
    expect(rc == 3, "the program exited %s; stderr:\n%s" % (rc, p.stderr()))
    summ, markers, size = read_dump(s, p, d, 3)
    expect(markers and markers[-1] == "last words", "ghc-events read the markers %s" % markers)
    expect([m for _, m in summ.markers][-1:] == ["last words"], "markers %s" % summ.markers)
    tagged = summ.tagged("late")
    expect(tagged and tagged[-1] == late, "the last late message is %s of %d"
           % (tagged[-1:] or None, late))
    expect("before-0" not in markers and size < 4 << 20,
           "a 1 MiB window dumped %d bytes with %s" % (size, markers[:3]))
    note("%d bytes, %d late messages of %d; %s" % (size, len(tagged), late,
                                                   p.stderr().strip().splitlines()[-1]))


@test(timeout=180)
def dump_on_failure_hs_start_uncaught_exception(s):
    """Started by startFromEnv with GHC_EVENTLOG_DUMP_ON_FAILURE alone (a
    64 MiB window): an uncaught exception (error "boom") exits 1 and leaves
    everything since the start, whole: the first marker, every message, the
    marker posted right before the exception, and the RTS's error notice
    with the exception's text."""
    p, d, rc, late = hs_run_to_exit(s, "hs-throw", "env", "throw boom")
    expect(rc == 1, "the program exited %s; stderr:\n%s" % (rc, p.stderr()))
    summ, markers, size = read_dump(s, p, d, 1)
    expect(markers == ["before-0", "last words"], "ghc-events read the markers %s" % markers)
    expect(summ.tagged("early") == list(range(1, 100001)), "early messages are missing")
    expect(summ.tagged("late") == list(range(1, late + 1)), "late messages are missing")
    errors = [m for _, m in summ.messages if m.startswith("eventlog-socket: the RTS reported")]
    expect(errors and "boom" in errors[0], "error notices %s" % errors)
    note("%d bytes; %s" % (size, p.stderr().strip().splitlines()[-1]))


@test(timeout=180)
def dump_on_failure_hs_start_success(s):
    """Started from Haskell with a dump set, a program that ends well
    leaves no file: exitSuccess (startFromEnv), main returning
    (startWith)."""
    for how, last in (("env", "quit"), ("with", None)):
        p, d, rc, _ = hs_run_to_exit(s, "hs-ok-" + how, how, last, retain=1 << 20)
        expect(rc == 0 and glob.glob(os.path.join(d, "*")) == [],
               "%s: exit status %s, left %s; stderr:\n%s" % (how, rc, os.listdir(d), p.stderr()))
        expect("exits with status" not in p.stderr(), "stderr:\n%s" % p.stderr())


@test(timeout=60)
def dump_on_failure_hs_start_needs_window(s):
    """startWith with esoDumpOnFailure and no window (esoRetainBytes 0, its
    default) is refused before anything listens, with an error that names
    the field to set; the program has the exception to handle."""
    d = s.path("hs-nowindow")
    os.mkdir(d)
    sock = s.path("hs-nowindow.sock")
    p = Program(s, "hsstart", ["with", sock, "0", "0", os.path.join(d, "crash-%p.eventlog")])
    rc, _ = p.wait_rusage(30)
    err = p.stderr()
    expect(rc == 1 and "esoDumpOnFailure" in err and "set esoRetainBytes" in err,
           "exit status %s; stderr:\n%s" % (rc, err))
    expect("listening" not in err and not os.path.exists(sock), "it listened: %s" % err)


# The dump's name in a directory that others share (the docs' own
# /var/tmp/app-%p.eventlog), while another user, who can see the pid,
# plants something at it. The program's user and the other one are uids
# 65533 and 65534 (setpriv; needs root).
OWNER, OTHER = 65533, 65534


def need_two_users():
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        raise Skip("needs root and setpriv to play the program's user and another one")


def plant(kind, target, theirs):
    """What the other user puts at the dump's name: a FIFO, a file anyone
    may read, a link to a file of theirs, a directory; "own" is the
    program's user's own earlier file."""
    if kind == "fifo":
        os.mkfifo(target)
    elif kind in ("file", "own"):
        with open(target, "w") as f:
            f.write("planted")
    elif kind == "link":
        os.symlink(theirs, target)
    else:
        os.mkdir(target)
    if kind != "link":
        os.chmod(target, 0o644 if kind == "own" else 0o666)
    uid = OWNER if kind == "own" else OTHER
    os.lchown(target, uid, uid)


def dump_named(err):
    """Where stderr says the window went."""
    m = re.search(r"its last \S+ \S+ of eventlog are in (\S+?)(?:,|$)", err, re.M)
    expect(m, "stderr names no dump:\n%s" % err)
    return m.group(1)


@test(timeout=300)
def dump_path_planted_by_another_user(s):
    """A failing program whose dump goes to a shared sticky directory, where
    another user planted a FIFO, a file anyone may read, a link to a file
    of theirs or a directory at its name: it exits at once with its own
    status 3 (a FIFO never holds it), the other user gets nothing (the FIFO
    read, their file and the link's target unchanged), and the window is
    in a new file of the program's user, mode 0600, beside their entry,
    named on stderr; it parses whole. Over the program's user's own earlier
    file, the dump replaces it (a new file, 0600)."""
    need_two_users()
    os.chmod(s.dir, 0o711)
    shared = s.path("shared")
    os.mkdir(shared)
    os.chmod(shared, 0o1777)
    theirs = os.path.join(shared, "theirs.txt")
    with open(theirs, "w") as f:
        f.write("theirs")
    os.chmod(theirs, 0o666)
    os.chown(theirs, OTHER, OTHER)
    for kind in ("fifo", "file", "link", "dir", "own"):
        home = s.path("owner-" + kind)
        os.mkdir(home, 0o700)
        os.chown(home, OWNER, OWNER)
        sock = os.path.join(home, "p.sock")
        p = Program(s, "probe", unix=sock, uid=OWNER,
                    env={"GHC_EVENTLOG_DUMP_ON_FAILURE": os.path.join(shared, "app-%p.eventlog")})
        p.wait_socket(sock)
        target = os.path.join(shared, "app-%d.eventlog" % p.proc.pid)
        plant(kind, target, theirs)
        reader = os.open(target, os.O_RDONLY | os.O_NONBLOCK) if kind == "fifo" else None
        p.cmd("marker before-%s" % kind)
        p.cmd("flood 20000 m")
        p.proc.stdin.write(b"fail 3\n")
        p.proc.stdin.flush()
        rc, _ = p.wait_rusage(60)
        err = p.stderr()
        expect(rc == 3, "%s: the program exited %s; stderr:\n%s" % (kind, rc, err))
        where = dump_named(err)
        st = os.lstat(where)
        expect(stat.S_ISREG(st.st_mode) and st.st_uid == OWNER and
               stat.S_IMODE(st.st_mode) == 0o600,
               "%s: %s is mode %o, uid %d" % (kind, where, st.st_mode, st.st_uid))
        with open(where, "rb") as f:
            summ = check_stream(s, f.read(), "dump-" + kind)
        expect([m for _, m in summ.markers] == ["before-" + kind], "%s: markers %s"
               % (kind, summ.markers))
        if kind == "own":
            expect(where == target, "the program's own file was not replaced: %s" % err)
            continue
        expect(os.path.dirname(where) == shared and where != target,
               "%s: the dump went to %s" % (kind, where))
        if reader is not None:
            expect(os.read(reader, 1 << 16) == b"" and stat.S_ISFIFO(os.lstat(target).st_mode),
                   "the FIFO's reader got the dump")
            os.close(reader)
        with open(theirs) as f:
            expect(f.read() == "theirs", "the link's target was written")
        if kind == "file":
            with open(target) as f:
                expect(f.read() == "planted", "the planted file was written")
        expect(os.lstat(target).st_uid == OTHER, "%s: their entry changed hands" % kind)
        note("%s: %s" % (kind, err.strip().splitlines()[-1]))


@test(timeout=300)
def failing_exit_status_with_heap_profile(s):
    """`fail 3` exits 3, never a crash, in every combination of the dump
    setting, a heap profile (+RTS -hT) and a working directory the
    program's user can or cannot write (where the RTS cannot open its
    .hp file, its shutdown leaves the exiting thread in a locale it has
    freed: formatting the dump's size there crashed); with the setting,
    the dump is written and named."""
    need_two_users()
    os.chmod(s.dir, 0o711)
    for writable in (False, True):
        os.chown(s.dir, OWNER if writable else 0, OWNER if writable else 0)
        for dump in (True, False):
            for rts in ((), ("-hT", "-i0.05")):
                name = "%s-%s-%s" % ("w" if writable else "ro", "dump" if dump else "nodump",
                                     "hT" if rts else "plain")
                home = s.path(name)
                os.mkdir(home, 0o700)
                os.chown(home, OWNER, OWNER)
                sock = os.path.join(home, "p.sock")
                env = {"GHC_EVENTLOG_DUMP_ON_FAILURE": os.path.join(home, "d-%p.eventlog")}
                p = Program(s, "probe", unix=sock, uid=OWNER, rts=rts, env=env if dump else {})
                p.wait_socket(sock)
                p.cmd("marker " + name)
                p.proc.stdin.write(b"fail 3\n")
                p.proc.stdin.flush()
                rc, _ = p.wait_rusage(60)
                err = p.stderr()
                expect(rc == 3, "%s: exit status %s; stderr:\n%s" % (name, rc, err))
                if dump:
                    where = dump_named(err)
                    with open(where, "rb") as f:
                        summ = check_stream(s, f.read(), name)
                    expect([m for _, m in summ.markers] == [name], "%s: markers %s"
                           % (name, summ.markers))
    os.chown(s.dir, 0, 0)
