# SPDX-License-Identifier: BSD-3-Clause
"""A detached tmux session on a private server (-L) running one command in
a terminal of a given size: read its screen (capture-pane), press keys
(send-keys), find the command's pid, and kill the server and its socket
file. Used by the `top` tests (tests/integration/client/test_top.py) and
its benchmark (bench/bench_top.py)."""

import os
import re
import subprocess
import time


class TmuxPane:
    def __init__(self, cmd, name="es", width=120, height=40):
        self.server = "%s-%d-%d" % (name, os.getpid(), int(time.monotonic() * 1000))
        self.run("new-session", "-d", "-s", "top", "-x", str(width), "-y", str(height), cmd)

    def run(self, *args):
        return subprocess.run(["tmux", "-L", self.server, "-f", "/dev/null", *args],
                              capture_output=True, text=True, timeout=10)

    def screen(self):
        return self.run("capture-pane", "-p", "-t", "top").stdout

    def keys(self, *keys):
        self.run("send-keys", "-t", "top", *keys)

    def wait(self, pattern, timeout=15.0):
        """The match of `pattern` once the screen shows it, or None (and the
        screen) after `timeout` seconds: (match, screen)."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen()
            m = re.search(pattern, text, re.M)
            if m or time.monotonic() > deadline:
                return m, text
            time.sleep(0.1)

    def pid(self):
        """The pid of the command: the pane's shell's child."""
        shell = int(self.run("list-panes", "-t", "top", "-F", "#{pane_pid}").stdout.split()[0])
        for _ in range(200):
            out = subprocess.run(["pgrep", "-P", str(shell)], capture_output=True,
                                 text=True).stdout.split()
            if out:
                return int(out[0])
            time.sleep(0.01)
        raise RuntimeError("the command did not start in tmux")

    def close(self):
        subprocess.run(["tmux", "-L", self.server, "kill-server"], capture_output=True,
                       timeout=10)
        # tmux leaves its socket file behind.
        sock = os.path.join(os.environ.get("TMUX_TMPDIR", "/tmp"), "tmux-%d" % os.getuid(),
                            self.server)
        if os.path.exists(sock):
            os.unlink(sock)
