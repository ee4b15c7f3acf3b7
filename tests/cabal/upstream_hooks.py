#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""When the POST_START and PRE_END hooks fire, judged by ghc-events, for the
programs of tests/cabal/upstream-compat (written against upstream
eventlog-socket 0.1.3's API, built by cabal against this package): run by
tests/cabal-package.sh.

    upstream_hooks.py --build BUILD --runs N NAME=EXE[:ENTRY]...

NAME is a label, EXE a built program: upstream-hs (ENTRY "with": startWith
on a path, "env": startFromEnv), upstream-c-main (ENTRY "wrap":
eventlog_socket_wrap_hs_main, "manual": eventlog_socket_init,
EventLogSocketWriter, eventlog_socket_signal_ghc_rts_ready and the RTS API)
or ours-c-main (eventlog_socket_hs_main). Each run: the program waits for a
first client A; once its main has begun, a second client B connects; the
program ends once its POST_START hook has run twice. Then, in A's stream,
the hook's marker "post-start 1" is the first user marker (before anything
main posts), and comes once; "post-start 2" (B's run) comes once, and no
third; "pre-end" is the last marker. In B's stream "post-start 2" comes
once, before "main ends", and "pre-end" last. upstream-hs also registers a
POST_START hook that throws, first: it must be reported on stderr, and the
hooks after it run. Then fewer runs of a reconnect: A leaves once main has
begun and B comes; the PRE_END hook must run once, at exit, and its marker
be the last of B's stream (upstream runs it at each reconnect). Last,
upstream-c-main's eventlog_socket_wrap_hs_main
whose server cannot start (its port taken) must say so and run the
program. Prints one TAP line ("ok - "
or "not ok - ") per program, for every run."""

import argparse
import os
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))


def judge(summary, client):
    """What is wrong with a stream's user markers, in time order (a list)."""
    markers = [m for _, m in sorted(summary.markers)]
    count = {m: markers.count(m) for m in set(markers)}
    wrong = []
    if client == "A":
        if not markers or markers[0] != "post-start 1":
            wrong.append("A's first marker is %r, not post-start 1"
                         % (markers[0] if markers else None))
        if count.get("post-start 1", 0) != 1:
            wrong.append("A got post-start 1 %d times" % count.get("post-start 1", 0))
    if count.get("post-start 2", 0) != 1:
        wrong.append("%s got post-start 2 %d times" % (client, count.get("post-start 2", 0)))
    if "post-start 3" in count:
        wrong.append("%s got a third POST_START" % client)
    if "main ends" not in count or ("post-start 2" in count and
                                    markers.index("post-start 2") > markers.index("main ends")):
        wrong.append("%s: no post-start 2 before main ends" % client)
    if not markers or markers[-1] != "pre-end" or count["pre-end"] != 1:
        wrong.append("%s: pre-end is not the last marker, once (%s)" % (client, markers[-3:]))
    return wrong


def one_run(harness, exe, entry, run):
    """One run in a fresh scope; returns a list of what went wrong."""
    s = harness.Scope()
    try:
        sock = s.path("u.sock")
        args, env, rts = [], {}, []
        if os.path.basename(exe) == "upstream-hs":
            rts = ["-l"]
            args = ["with", sock] if entry == "with" else ["env"]
        if entry in ("wrap", "manual"):
            env["COMPAT_ENTRY"] = entry
        p = harness.Program(s, exe, args, env=env, rts=rts, unix=sock, wait=True,
                            stdin=False)
        p.wait_socket(sock)
        a = harness.Client(s, unix=sock)
        # Until A is there the program waits; then main begins.
        while True:
            line = p.readline(60)
            if line == "main begins":
                break
        b = harness.Client(s, unix=sock)
        rc = p.proc.wait(timeout=60)
        wrong = [] if rc == 0 else ["exit status %d; stderr: %s" % (rc, p.stderr()[-300:])]
        if (os.path.basename(exe) == "upstream-hs" and
                "hook POST_START failed: user error (hook boom)" not in p.stderr()):
            wrong.append("the hook that throws was not reported on stderr: %r"
                         % p.stderr()[-400:])
        for client, name in ((a, "A"), (b, "B")):
            summary = harness.check_stream(s, client.wait_eof(60), "run%d-%s" % (run, name))
            wrong += judge(summary, name)
        return wrong
    except Exception as e:  # a timeout, a stream that does not parse
        return ["%s: %s" % (type(e).__name__, e)]
    finally:
        s.close()


def reconnect_run(harness, exe, entry, run):
    """A reconnect: the first client A leaves once main has begun, then a
    client B comes. Upstream ends and restarts event logging there, running
    PRE_END; here nothing ends between clients (docs/upstream.md): the
    PRE_END hook runs once, at exit ("pre-end hook ran" on stderr once),
    and its marker is the last of B's stream, after "main
    ends". Returns a list of what went wrong."""
    s = harness.Scope()
    try:
        sock = s.path("u.sock")
        args, env, rts = [], {}, []
        if os.path.basename(exe) == "upstream-hs":
            rts = ["-l"]
            args = ["with", sock] if entry == "with" else ["env"]
        if entry in ("wrap", "manual"):
            env["COMPAT_ENTRY"] = entry
        p = harness.Program(s, exe, args, env=env, rts=rts, unix=sock, wait=True,
                            stdin=False)
        p.wait_socket(sock)
        a = harness.Client(s, unix=sock)
        while p.readline(60) != "main begins":
            pass
        a.wait_header()
        a.sock.shutdown(socket.SHUT_RDWR)  # A leaves: its reader sees EOF
        a.wait_eof(60)
        a.close()
        b = harness.Client(s, unix=sock)
        rc = p.proc.wait(timeout=60)
        wrong = [] if rc == 0 else ["exit status %d; stderr: %s" % (rc, p.stderr()[-300:])]
        ran = p.stderr().count("pre-end hook ran")
        if ran != 1:
            wrong.append("the PRE_END hook ran %d times, not once (at exit)" % ran)
        summary = harness.check_stream(s, b.wait_eof(60), "reconnect%d-B" % run)
        markers = [m for _, m in sorted(summary.markers)]
        if markers.count("pre-end") != 1 or markers[-1] != "pre-end":
            wrong.append("B: pre-end is not the last marker, once (%s)" % markers[-3:])
        if "main ends" not in markers or markers.index("main ends") > markers.index("pre-end"):
            wrong.append("B: pre-end before main ends (%s)" % markers[-3:])
        if markers.count("post-start 2") != 1:
            wrong.append("B got post-start 2 %d times" % markers.count("post-start 2"))
        return wrong
    except Exception as e:  # a timeout, a stream that does not parse
        return ["%s: %s" % (type(e).__name__, e)]
    finally:
        s.close()


def wrap_without_server(harness, exe):
    """eventlog_socket_wrap_hs_main whose server cannot start (its TCP port
    is taken): it says why and runs the program, which exits normally.
    Returns a list of what went wrong."""
    s = harness.Scope()
    taken = socket.socket()
    try:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        p = harness.Program(s, exe, ["once"], env={"COMPAT_ENTRY": "wrap"}, tcp_port=port,
                            stdin=False)
        rc = p.proc.wait(timeout=60)
        err = p.stderr()
        wrong = []
        if rc != 0:
            wrong.append("exit status %d" % rc)
        if "cannot stream the eventlog" not in err or "runs without streaming" not in err:
            wrong.append("stderr does not say why: %r" % err[-300:])
        return wrong
    except Exception as e:
        return ["%s: %s" % (type(e).__name__, e)]
    finally:
        taken.close()
        s.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True, help="the directory holding eventlog-check")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("programs", nargs="+", help="NAME=EXE[:ENTRY]")
    opts = ap.parse_args()
    os.environ["ES_BUILD"] = opts.build
    import harness  # noqa: E402 (reads ES_BUILD)
    all_ok = True
    for spec in opts.programs:
        name, target = spec.split("=", 1)
        exe, _, entry = target.partition(":")
        started = time.monotonic()
        failures = []
        for run in range(opts.runs):
            wrong = one_run(harness, exe, entry, run)
            if wrong:
                failures.append((run, wrong))
        took = time.monotonic() - started
        what = ("%s: POST_START's marker first and once for the first client, once more for "
                "a second client, PRE_END's last" % name)
        if failures:
            all_ok = False
            print("not ok - %s: %d of %d runs failed (%.0f s)" % (what, len(failures), opts.runs,
                                                                  took))
            for run, wrong in failures[:5]:
                print("#   run %d: %s" % (run, "; ".join(wrong)))
        else:
            print("ok - %s, in %d of %d runs (%.0f s)" % (what, opts.runs, opts.runs, took))
        sys.stdout.flush()
    # A client that leaves and another that comes: fewer runs, the same
    # paths as above.
    reconnect_runs = max(1, opts.runs // 4)
    for spec in opts.programs:
        name, target = spec.split("=", 1)
        exe, _, entry = target.partition(":")
        started = time.monotonic()
        failures = []
        for run in range(reconnect_runs):
            wrong = reconnect_run(harness, exe, entry, run)
            if wrong:
                failures.append((run, wrong))
        took = time.monotonic() - started
        what = ("%s: a client leaves, another comes: no PRE_END between them; it runs once, at "
                "exit, its marker last in the new client's stream" % name)
        if failures:
            all_ok = False
            counts = (what, len(failures), reconnect_runs, took)
            print("not ok - %s: %d of %d runs failed (%.0f s)" % counts)
            for run, wrong in failures[:5]:
                print("#   run %d: %s" % (run, "; ".join(wrong)))
        else:
            counts = (what, reconnect_runs, reconnect_runs, took)
            print("ok - %s, in %d of %d runs (%.0f s)" % counts)
        sys.stdout.flush()
    upstream_c = [t.split("=", 1)[1].partition(":")[0] for t in opts.programs
                  if os.path.basename(t.split("=", 1)[1].partition(":")[0]) == "upstream-c-main"]
    if upstream_c:
        wrong = wrap_without_server(harness, upstream_c[0])
        what = ("upstream-c-main: eventlog_socket_wrap_hs_main whose server cannot start (its "
                "port is taken) says why on stderr and runs the program")
        print(("not ok - %s: %s" % (what, "; ".join(wrong))) if wrong else "ok - " + what)
        all_ok = all_ok and not wrong
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
