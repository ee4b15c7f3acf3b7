# SPDX-License-Identifier: BSD-3-Clause
"""The flight recorder on the way out: GHC_EVENTLOG_DUMP_ON_FAILURE writes
the window to a file when the program exits with a failure (an uncaught
exception, exitWith (ExitFailure n)) with nobody connected, and writes
nothing for a clean exit; the RTS's error message is in the stream as a
notice."""

import glob
import os
import stat

from harness import Program, check_stream, expect, note, test


def run_to_exit(s, name, last, env_extra=None):
    """The probe with a dump setting and nobody connected: a few markers
    and some messages, then `last`; returns the program and the dump
    pattern's directory."""
    d = s.path(name)
    os.mkdir(d)
    env = {"GHC_EVENTLOG_DUMP_ON_FAILURE": os.path.join(d, "crash-%p.eventlog")}
    env.update(env_extra or {})
    sock = s.path(name + ".sock")
    p = Program(s, "probe", unix=sock, env=env)
    p.wait_socket(sock)
    for i in range(3):
        p.cmd("marker before-%d" % i)
        p.cmd("flood 100000 m%d" % i)
    p.proc.stdin.write((last + "\n").encode())
    p.proc.stdin.flush()
    rc, _ = p.wait_rusage(60)
    return p, d, rc


@test(timeout=120)
def dump_on_failure_uncaught_exception(s):
    """An uncaught exception with nobody connected: the program exits 1 and
    leaves its window in the file the setting names (%p: its pid), mode
    0600: it parses, ends with the RTS's own end marker, holds the markers
    and the error notice with the exception's text; stderr says where."""
    p, d, rc = run_to_exit(s, "throw", "throw boom at the end")
    expect(rc == 1, "the program exited %s" % rc)
    path = os.path.join(d, "crash-%d.eventlog" % p.proc.pid)
    expect(os.path.exists(path), "no dump: %s; stderr:\n%s" % (os.listdir(d), p.stderr()))
    mode = stat.S_IMODE(os.stat(path).st_mode)
    expect(mode == 0o600, "the dump's mode is %o" % mode)
    with open(path, "rb") as f:
        data = f.read()
    summ = check_stream(s, data, "dump-throw")  # whole, with its end marker
    markers = [m for _, m in summ.markers]
    expect(markers == ["before-0", "before-1", "before-2"], "markers %s" % markers)
    errors = [m for _, m in summ.messages if m.startswith("eventlog-socket: the RTS reported")]
    expect(errors and "boom at the end" in errors[0], "error notices %s" % errors)
    expect("status 1" in p.stderr() and path in p.stderr(), "stderr:\n%s" % p.stderr())
    note("%d bytes; %s" % (len(data), p.stderr().strip().splitlines()[-1]))


@test(timeout=120)
def dump_on_failure_exit_status(s):
    """exitWith (ExitFailure 3) leaves the dump; a clean exit leaves
    nothing; a small window holds only the end of the run."""
    p, d, rc = run_to_exit(s, "fail", "fail 3", {"GHC_EVENTLOG_RETAIN": "1M"})
    expect(rc == 3, "the program exited %s" % rc)
    path = os.path.join(d, "crash-%d.eventlog" % p.proc.pid)
    with open(path, "rb") as f:
        data = f.read()
    summ = check_stream(s, data, "dump-fail")
    tagged = summ.tagged("m2")
    expect(len(data) < 4 << 20 and "before-0" not in [m for _, m in summ.markers],
           "a 1 MiB window dumped %d bytes with %s" % (len(data), summ.markers))
    expect(tagged and tagged[-1] == 100000, "the last messages are missing")
    q, d2, rc2 = run_to_exit(s, "clean", "quit")
    expect(rc2 == 0 and glob.glob(os.path.join(d2, "*")) == [],
           "a clean exit left %s" % os.listdir(d2))
