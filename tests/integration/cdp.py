# SPDX-License-Identifier: BSD-3-Clause
"""Headless Chromium driven over the DevTools protocol, for the web view's
tests: open a page, evaluate JavaScript in it, click, take a screenshot,
and collect the page's console errors and uncaught exceptions. Python's
standard library has no WebSocket client, so a small one (RFC 6455, text
frames, client masking) is here. The browser is started in the test's
Scope (killed with it), with a profile in the test's directory."""

import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import time
import urllib.parse

from harness import Skip, TestFailure


def chromium_path():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class WebSocket:
    def __init__(self, url, timeout=30.0):
        u = urllib.parse.urlparse(url)
        self.sock = socket.create_connection((u.hostname, u.port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        req = ("GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n"
               % (u.path or "/", u.hostname, u.port, key))
        self.sock.sendall(req.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise TestFailure("the DevTools WebSocket closed during the handshake")
            head += chunk
        head, self.buf = head.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise TestFailure("DevTools WebSocket handshake refused: %r" % head[:200])

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise TestFailure("the DevTools WebSocket closed")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def send(self, text):
        payload = text.encode()
        mask = os.urandom(4)
        n = len(payload)
        if n < 126:
            head = struct.pack("!BB", 0x81, 0x80 | n)
        elif n < 65536:
            head = struct.pack("!BBH", 0x81, 0x80 | 126, n)
        else:
            head = struct.pack("!BBQ", 0x81, 0x80 | 127, n)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(head + mask + masked)

    def recv(self):
        parts = []
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._read(8))[0]
            mask = self._read(4) if b1 & 0x80 else None
            data = self._read(n)
            if mask:
                data = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
            op = b0 & 0x0F
            if op == 8:
                raise TestFailure("the DevTools WebSocket was closed by the browser")
            if op in (9, 10):
                continue
            parts.append(data)
            if b0 & 0x80:
                return b"".join(parts).decode()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class DevToolsError(TestFailure):
    """An error DevTools answered a call with."""

    def __init__(self, method, error):
        TestFailure.__init__(self, "DevTools %s: %s" % (method, error))
        self.error = error


# What Runtime.evaluate answers while the page it asked is being replaced
# by another (a navigation under way): not a failure of the page, only a
# question asked between two documents. wait_js asks again.
BETWEEN_PAGES = ("Inspected target navigated or closed", "Execution context was destroyed",
                 "Cannot find context with specified id")


class Browser:
    """One headless Chromium with one page (tab) attached; more tabs with
    new_tab()."""

    def __init__(self, scope, width=1280, height=2200):
        exe = chromium_path()
        if exe is None:
            raise Skip("Chromium is not installed (scripts/ensure-deps.sh installs it)")
        self.scope = scope
        profile = scope.path("chromium-profile-%d" % len(scope.clients))
        self.err_path = scope.path("chromium-%d.err" % len(scope.clients))
        self.err = open(self.err_path, "wb")
        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", "--disable-background-networking", "--mute-audio",
             "--disable-dev-shm-usage", "--remote-debugging-port=0",
             "--remote-debugging-address=127.0.0.1", "--user-data-dir=" + profile,
             "--window-size=%d,%d" % (width, height), "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.err,
            start_new_session=True)
        scope.clients.append(self)
        deadline = time.monotonic() + 60
        url = None
        while url is None:
            with open(self.err_path, "rb") as f:
                m = re.search(rb"DevTools listening on (ws://\S+)", f.read())
            if m:
                url = m.group(1).decode()
            elif self.proc.poll() is not None or time.monotonic() > deadline:
                with open(self.err_path, "rb") as f:
                    raise TestFailure("Chromium did not start: %s" % f.read()[-2000:])
            else:
                time.sleep(0.1)
        self.ws = WebSocket(url)
        self.next_id = 0
        self.events = []
        self.sessions = []
        self.session = self.new_tab()

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, 9)
            except ProcessLookupError:
                pass
            self.proc.wait()
        self.err.close()

    def call(self, method, params=None, session=None, timeout=60.0):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self.ws.send(json.dumps(msg))
        self.ws.sock.settimeout(timeout)
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise DevToolsError(method, reply["error"])
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def new_tab(self):
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget",
                            {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime.enable", "Log.enable", "Page.enable"):
            self.call(domain, session=session)
        self.sessions.append(session)
        return session

    def goto(self, url, session=None):
        self.call("Page.navigate", {"url": url}, session=session or self.session)
        self.wait_js("document.readyState === 'complete'", session=session, what="page load")

    def js(self, expr, session=None):
        res = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                             "awaitPromise": True},
                        session=session or self.session)
        if "exceptionDetails" in res:
            raise TestFailure("JavaScript %r threw: %s" % (expr, res["exceptionDetails"]))
        return res.get("result", {}).get("value")

    def wait_js(self, expr, timeout=30.0, session=None, what=None):
        """Wait until `expr` is truthy in the page; return its value. Asked
        while the page navigates, the question is asked again."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                v = self.js(expr, session=session)
            except DevToolsError as e:
                if not any(w in str(e.error) for w in BETWEEN_PAGES):
                    raise
                v = None
            if v:
                return v
            if time.monotonic() > deadline:
                raise TestFailure("the page never showed %s (%s)" % (what or expr, expr))
            time.sleep(0.2)

    def screenshot(self, path, session=None):
        data = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True},
                         session=session or self.session)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def errors(self):
        """Console errors and uncaught exceptions of every tab so far."""
        self.call("Runtime.evaluate", {"expression": "1"}, session=self.session)
        out = []
        for ev in self.events:
            m, p = ev["method"], ev.get("params", {})
            if m == "Runtime.exceptionThrown":
                out.append("exception: %s" % p.get("exceptionDetails", {}).get("exception", {})
                           .get("description", p))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console.%s: %s" % (p["type"], [a.get("value", a.get("description"))
                                                           for a in p.get("args", [])]))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append("log: %s %s" % (p["entry"].get("text"), p["entry"].get("url", "")))
        return out
