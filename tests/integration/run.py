#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Integration tests: the real programs, built with the real GHC and this
library, streaming to real clients over Unix and TCP sockets. Every stream
is judged by the ghc-events-based checker.

    python3 tests/integration/run.py [--build DIR] [-j N] [--list] [TEST...]

The tests live in tests/integration/library/test_*.py (the library in
real programs) and tests/integration/client/test_*.py (the command), one
module per concern; the helpers they share beside this file (harness.py).
Each test runs in its own process with a timeout; -j N runs N of them at
a time (tests marked @test(serial=True) run alone, before the others);
--skip-ghc-free skips those that start no program built with GHC
(@test(ghc_free=True)): the chroots' runs, whose GHC they do not use. The
output is TAP in registration order whatever -j is, ending with
"integration: N passed, N failed, N skipped"."""

import argparse
import glob
import importlib
import os
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# The tests of each part, in a folder of their own; their module names are
# unique across the folders (one test module may import another's helpers).
PARTS = ("library", "client")
sys.path[0:0] = [HERE] + [os.path.join(HERE, part) for part in PARTS]
import harness  # noqa: E402

TIMEOUT = 120  # seconds per test


def load_tests():
    """Import every test module, part by part, in file name order; return
    the registry."""
    names = [os.path.basename(path)[:-3]
             for part in PARTS for path in sorted(glob.glob(os.path.join(HERE, part, "test_*.py")))]
    if len(set(names)) != len(names):
        sys.exit("two test modules share a name across %s: rename one" % ", ".join(PARTS))
    for name in names:
        importlib.import_module(name)
    return harness.TESTS


class Terminated(Exception):
    pass


def on_sigterm(signum, frame):
    raise Terminated()


def run_one(fn):
    """In the child: run one test in a fresh Scope. Exit status 0 passed,
    77 skipped, 1 failed."""
    # The runner sends SIGTERM on timeout: unwind, so the scope kills the
    # programs this test started and removes its sockets.
    signal.signal(signal.SIGTERM, on_sigterm)
    scope = harness.Scope(ghc_free=fn.ghc_free)
    try:
        fn(scope)
    except harness.TestFailure as e:
        print("# " + str(e).replace("\n", "\n# "))
        return 1
    except Terminated:
        print("# terminated (timeout)")
        return 1
    except harness.Skip as e:
        print("SKIP " + str(e))
        return 77
    finally:
        scope.close()
    return 0


def run_child(name, timeout=TIMEOUT):
    """In the runner: one test in its own process, with its timeout.
    Returns (ok, output, seconds)."""
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, __file__, "--build", harness.BUILD, "--one", name],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        ok = proc.returncode in (0, 77)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)
        try:
            out, _ = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
        ok, out = False, "# timed out after %d s\n%s" % (timeout, out or "")
    return ok, out, time.monotonic() - start


GHC_FREE_SKIP = "starts no program built with GHC: the host's run covers it"


def run_all(tests, jobs, skip_ghc_free=False):
    """Run the tests, `jobs` at a time (a serial test alone), printing each
    result in the given order as soon as it and those before it are done;
    with `skip_ghc_free`, tests marked ghc_free are reported skipped."""
    results = [None] * len(tests)
    for i, fn in enumerate(tests):
        if skip_ghc_free and fn.ghc_free:
            results[i] = (True, "SKIP " + GHC_FREE_SKIP, 0.0)
    running = set()
    cond = threading.Condition()

    def work(i):
        res = run_child(tests[i].__name__, tests[i].timeout)
        with cond:
            results[i] = res
            running.discard(i)
            cond.notify_all()

    counts = {"passed": 0, "failed": 0, "skipped": 0}
    shown = 0

    def show_ready():
        nonlocal shown
        while shown < len(tests) and results[shown] is not None:
            report(shown + 1, tests[shown].__name__, *results[shown], counts)
            shown += 1

    print("1..%d" % len(tests), flush=True)
    # The tests that run alone go first, one after another: a serial test
    # in the middle would leave slots idle while the longest test before it
    # ended. The output keeps the given order.
    order = [i for i, fn in enumerate(tests) if fn.serial]
    order += [i for i, fn in enumerate(tests) if not fn.serial]
    for i in order:
        fn = tests[i]
        if results[i] is not None:
            continue  # skipped without running
        with cond:
            # A serial test waits for every other to finish, and blocks the
            # next ones until it has.
            limit = 0 if fn.serial else jobs - 1
            while len(running) > limit:
                cond.wait()
                show_ready()
            running.add(i)
            threading.Thread(target=work, args=(i,), daemon=True).start()
            if fn.serial:
                while running:
                    cond.wait()
            show_ready()
    with cond:
        while running:
            cond.wait()
        show_ready()
    print("integration: %(passed)d passed, %(failed)d failed, %(skipped)d skipped" % counts)
    return counts["failed"] == 0


def report(i, name, ok, detail, took, counts):
    skip = [line[5:] for line in detail.splitlines() if line.startswith("SKIP ")]
    if ok and skip:
        print("ok %d - %s # SKIP %s" % (i, name, skip[0]))
        counts["skipped"] += 1
    else:
        print("%sok %d - %s (%.1f s)" % ("" if ok else "not ", i, name, took))
        # Failures show everything; passes show their diagnostic notes.
        shown = detail if not ok else "\n".join(
            line for line in detail.splitlines() if line.startswith("# "))
        if shown.strip():
            print(shown.rstrip())
        counts["passed" if ok else "failed"] += 1
    sys.stdout.flush()


def main(argv):
    ap = argparse.ArgumentParser(description="Run the integration tests (TAP output).")
    ap.add_argument("--build", default="build", help="the build directory (default: build)")
    ap.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                    help="run N tests at a time, each in its own process (default: 1)")
    ap.add_argument("--list", action="store_true", help="print the test names and exit")
    ap.add_argument("--skip-ghc-free", action="store_true",
                    help="skip the tests that start no program built with GHC")
    ap.add_argument("--one", metavar="TEST", help=argparse.SUPPRESS)  # the child's side
    ap.add_argument("tests", nargs="*", metavar="TEST", help="run only these tests")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error("-j needs a number of at least 1")
    os.environ["ES_BUILD"] = args.build
    harness.BUILD = args.build
    tests = load_tests()
    by_name = {t.__name__: t for t in tests}
    if args.one:
        return run_one(by_name[args.one])
    if args.list:
        for t in tests:
            print("%s\t%s%s%s" % (t.__name__, t.__module__, " (serial)" if t.serial else "",
                                  " (ghc_free)" if t.ghc_free else ""))
        return 0
    unknown = [n for n in args.tests if n not in by_name]
    if unknown:
        ap.error("no such test: %s (--list shows them)" % ", ".join(unknown))
    chosen = [by_name[n] for n in args.tests] if args.tests else tests
    return 0 if run_all(chosen, args.jobs, args.skip_ghc_free) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
