"""`eventlog-socket control`: the frames it sends act as protocol.md says,
and --wait sees their effect in the stream, or says why it cannot
(issue 14)."""

import re
import time

from client_cmd import Cmd, last_line, run
from harness import Client, Program, Skip, check_stream, expect, ghc_version, note, test


def busy(s, name, rts):
    sock = s.path(name + ".sock")
    p = Program(s, "probe", ["--busy"], unix=sock, rts=rts)
    p.wait_socket(sock)
    return p, sock


def need_live_samples():
    if ghc_version() < (9, 2):
        raise Skip("GHC 9.0 hands heap samples to clients only when the RTS's global buffer "
                   "fills or at exit (README, \"GHC 9.0 cannot flush\"), so no effect can be "
                   "seen live")


@test
def control_sends_each_command(s):
    """Without --wait each command is sent and the command exits 0; a
    plain client of the same program sees the census it asked for between
    two markers."""
    p, sock = busy(s, "send", ["-hT", "-i100"])
    c = Client(s, unix=sock)
    time.sleep(0.3)
    p.cmd("marker A")
    for word in ("census", "stop", "start"):
        rc, out, err = run(s, ["control", sock, word])
        expect(rc == 0 and ("%s: sent" % word) in out, "%s: exit %d, %r %r" % (word, rc, out, err))
        if word == "census":
            time.sleep(0.5)
            p.cmd("marker B")
    p.cmd("quit")
    p.finish()
    summ = check_stream(s, c.wait_eof(), "send")
    n = summ.samples_between(summ.marker_time("A"), summ.marker_time("B"))
    expect(n >= 1, "no heap sample between the markers around the census request")


@test
def control_census_wait(s):
    """census --wait on a busy program sees its census: the sample the
    request caused, taken within a second of the request."""
    need_live_samples()
    p, sock = busy(s, "census", ["-hT", "-i100"])
    time.sleep(0.5)
    rc, out, err = run(s, ["control", sock, "census", "--wait", "--timeout", "10"])
    expect(rc == 0, "exit %d: %r %r" % (rc, out, err))
    m = re.search(r"heap sample at program time ([\d.]+) s, ([\d.]+) s after the request "
                  r"\(seen after ([\d.]+) s\)", out)
    expect(m, "output %r" % out)
    note(out.strip())
    expect(float(m.group(2)) < 1.0, "the census came %s s after the request" % m.group(2))


@test
def control_stop_start_wait(s):
    """stop --wait sees timed heap samples stop, start --wait sees them
    resume."""
    need_live_samples()
    p, sock = busy(s, "stopstart", ["-hT", "-i0.1"])
    time.sleep(0.5)
    rc, out, err = run(s, ["control", sock, "stop", "--wait", "--timeout", "15"], timeout=30)
    expect(rc == 0 and "stopped" in out, "stop: exit %d, %r %r" % (rc, out, err))
    note(out.strip())
    rc, out, err = run(s, ["control", sock, "start", "--wait", "--timeout", "15"], timeout=30)
    expect(rc == 0 and "heap sample" in out, "start: exit %d, %r %r" % (rc, out, err))
    note(out.strip())


@test
def control_wait_timeout_hint(s):
    """--wait that sees nothing exits 1 after --timeout with a hint: on
    GHC 9.0 that samples cannot be seen live, on 9.2+ that the program runs
    without a heap profiling mode."""
    old = ghc_version() < (9, 2)
    p, sock = busy(s, "hint", ["-hT"] if old else [])
    time.sleep(0.3)
    start = time.monotonic()
    rc, out, err = run(s, ["control", sock, "census", "--wait", "--timeout", "3"])
    took = time.monotonic() - start
    expect(rc == 1, "exit %d: %r %r" % (rc, out, err))
    expect("no heap sample arrived within 3 s" in err, "stderr %r" % err)
    hint = last_line(err)
    expect(hint.startswith("hint:") and (("9.2" in hint) if old else ("+RTS -hT" in hint)),
           "hint %r" % hint)
    note("%s (after %.1f s)" % (hint, took))
