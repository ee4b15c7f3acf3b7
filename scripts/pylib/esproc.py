# SPDX-License-Identifier: BSD-3-Clause
"""The processes a test or a benchmark starts, in one place: each in a
session (and so a process group) of its own, as a program or client started
from another terminal would be, with a timeout on every wait, and all of
them killed with their whole group, and the scratch directory removed,
when the test or benchmark ends, whatever happened.

Used by tests/integration/harness.py (a Scope is a Group) and bench/ (a
benchmark run is one Group). Import it after putting this directory on
sys.path:

    sys.path.insert(0, os.path.join(ROOT, "scripts", "pylib"))
    import esproc
"""

import os
import shutil
import signal
import subprocess
import tempfile
import threading


def kill(proc, group=True):
    """SIGKILL a process that may still run, with its process group when it
    leads one, and reap it."""
    if proc.poll() is not None:
        return
    try:
        if group:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except ProcessLookupError:
        pass
    proc.wait()


def wait(proc, timeout, group=True):
    """Block until the process exits and return its status; after `timeout`
    seconds kill it (and its group) first. Popen.wait(timeout=...) polls
    with sleeps of up to 50 ms, which would quantise measured times: a timer
    enforces the timeout instead."""
    killer = threading.Timer(timeout, kill, (proc, group))
    killer.start()
    try:
        return proc.wait()
    finally:
        killer.cancel()


class Group:
    """Processes started together and a scratch directory, owned by one test
    or one benchmark run. own_session=False starts the processes in the
    caller's session instead (bench/run.py --same-session)."""

    def __init__(self, prefix, own_session=True, tmp_parent=None):
        self.dir = tempfile.mkdtemp(prefix=prefix, dir=tmp_parent)
        self.own_session = own_session
        self.started = []

    def path(self, name):
        return os.path.join(self.dir, name)

    def spawn(self, argv, **popen_kw):
        """subprocess.Popen, in a session of its own, killed by close()."""
        p = subprocess.Popen(argv, start_new_session=self.own_session, **popen_kw)
        self.started.append(p)
        return p

    def kill(self, proc):
        kill(proc, group=self.own_session)

    def wait(self, proc, timeout):
        return wait(proc, timeout, group=self.own_session)

    def close(self):
        """Kill what still runs (whole groups), remove the directory."""
        for p in self.started:
            self.kill(p)
        shutil.rmtree(self.dir, ignore_errors=True)
