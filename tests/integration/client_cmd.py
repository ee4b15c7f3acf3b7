# SPDX-License-Identifier: BSD-3-Clause
"""Running build/eventlog-socket from the integration tests: a process with
its stdout and stderr kept, killed by the test's Scope if still running."""

import os
import pty
import re
import signal
import subprocess
import time

import harness
from harness import TestFailure


class Cmd:
    """`eventlog-socket ARGS...` started now (cwd: the test's directory)."""

    def __init__(self, scope, args, cwd=None, stderr=None, env=None):
        """env: variables added to the test's environment."""
        exe = os.path.abspath(os.path.join(harness.BUILD, "eventlog-socket"))
        self.args = list(args)
        self.out_path = scope.path("cmd-%d.out" % len(scope.procs))
        self.err_path = scope.path("cmd-%d.err" % len(scope.procs))
        self.out_file = open(self.out_path, "wb")
        self.err_file = open(self.err_path, "wb") if stderr is None else None
        self.proc = subprocess.Popen([exe, *self.args], stdin=subprocess.DEVNULL,
                                     stdout=self.out_file,
                                     stderr=self.err_file if stderr is None else stderr,
                                     cwd=cwd or scope.dir, start_new_session=True,
                                     env=dict(os.environ, **env) if env else None)
        scope.procs.append(self)

    def signal(self, sig):
        self.proc.send_signal(sig)

    def wait(self, timeout=30.0):
        """Wait for the exit; return (status, stdout, stderr). Fails the test
        (and kills the command) when it does not exit in time: no hangs."""
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise TestFailure("eventlog-socket %s did not exit within %.0f s"
                              % (" ".join(self.args), timeout))
        return rc, self.stdout(), self.stderr()

    def wait_rusage(self, timeout=30.0):
        """Wait for the exit; return (status, peak RSS in KiB, stderr).
        Fails the test (and kills the command) when it does not exit in
        time, saying how much memory it held then."""
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
            if pid:
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                return self.proc.returncode, usage.ru_maxrss, self.stderr()
            if time.monotonic() > deadline:
                held = rss_kib(self.proc.pid)
                self.kill()
                raise TestFailure("eventlog-socket %s did not exit within %.0f s (holding "
                                  "%d KiB): %s" % (" ".join(self.args), timeout, held,
                                                   self.stderr()[-300:]))
            time.sleep(0.05)

    def stdout(self):
        with open(self.out_path, "rb") as f:
            return f.read().decode(errors="replace")

    def stderr(self):
        if self.err_file is None:
            return ""
        with open(self.err_path, "rb") as f:
            return f.read().decode(errors="replace")

    def kill(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
        self.out_file.close()
        if self.err_file is not None:
            self.err_file.close()


def rss_kib(pid):
    """A running process's resident memory, in KiB (0 once it is gone)."""
    try:
        with open("/proc/%d/status" % pid) as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))
    except (OSError, AttributeError):
        return 0


def run(scope, args, timeout=20.0):
    """Run to the end; return (status, stdout, stderr)."""
    return Cmd(scope, args).wait(timeout)


def last_line(text):
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def pty_stderr_of(s, args, action):
    """Run `eventlog-socket ARGS` with stderr on a terminal while
    `action()` runs; return (status, what the terminal got)."""
    master, slave = pty.openpty()
    try:
        cmd = Cmd(s, args, stderr=slave)
        os.close(slave)
        slave = None
        action()
        rc, _, _ = cmd.wait()
        seen = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(master)
        if slave is not None:
            os.close(slave)
    return rc, seen.decode(errors="replace")
