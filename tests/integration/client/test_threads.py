# SPDX-License-Identifier: BSD-3-Clause
"""The threads views: `report`, `serve`'s page and `top`
show each Haskell thread's label, state and running time, and the live
threads over the run, as ThreadScope users expect. The program is
build/threads (tests/programs/threads/Main.hs): it labels itself "main" and four
threads that do known things (light: 1 unit of work, then finishes;
medium: 3 units, then blocked on STM; heavy: 9 units, then blocked on an
MVar; waiter: blocked on an MVar at once).

The oracle is ghc-events (eventlog-check --threads) on the recording of
the same run: the labels, the threads created and every thread's running
time (its RUN_THREAD..STOP_THREAD intervals, paired per capability) that
it finds must be what the views show.

GHC 9.0 cannot flush while the program runs: there the live tests make the
program fork 20000 short threads (spawn), which fills the RTS's 2 MiB
buffer so the states arrive, and run it on one capability (-N1), so no
capability's buffer holds back events older than another's."""

import json
import os
import re
import socket
import threading
import time

import harness
from cdp import Browser
from client_cmd import Cmd
from harness import Program, TestFailure, expect, ghc_version, note, test
from test_top import Tmux, top_command
from test_web import need_chromium, start_serve

LABELLED = ("main", "waiter", "light", "medium", "heavy")
# The workers by their work (9, 3 and 1 units): most running time first on
# a machine that lets them run.
WORKERS = ("heavy", "medium", "light")
# top's threads line: label, id, running seconds, state, for each of three.
THREE = re.compile(r"(\S+) #(\d+) ([\d.]+) s \d+% ([a-zA-Z ()]+?)(?:\s+\||\s*$)")
# What each labelled worker is doing once the program said "ready".
LIVE_STATES = {"light": "finished", "medium": "blocked on STM", "heavy": "blocked on MVar",
               "waiter": "blocked on MVar"}
# ghc-events' names of STOP_THREAD statuses, as the views say them.
STATUS = {"ThreadFinished": "finished", "BlockedOnMVar": "blocked on MVar",
          "BlockedOnMVarRead": "blocked on MVar (read)", "BlockedOnSTM": "blocked on STM",
          "BlockedOnBlackHole": "blocked on black hole", "ForeignCall": "in foreign call",
          "HeapOverflow": "runnable", "StackOverflow": "runnable",
          "ThreadYielding": "runnable"}


def rts():
    return ["-N1"] if ghc_version() < (9, 2) else ["-N2"]


def spawn_for_live(p):
    """On 9.0, enough events that the RTS hands its buffer over."""
    if ghc_version() < (9, 2):
        p.cmd("spawn 20000", timeout=300)


class Oracle:
    """What ghc-events finds in a recording: labels by thread id, threads
    created, running seconds and the state at the end per thread."""

    def __init__(self, path):
        out = _checker(path)
        self.labels, evs = {}, []
        for line in out.splitlines():
            w = line.split(" ")
            if w[0] != "thread":
                continue
            if w[1] == "label":
                self.labels[int(w[3])] = " ".join(w[4:])
            else:
                evs.append((int(w[2]), int(w[3]), w[1], int(w[4]), w[5] if len(w) > 5 else ""))
        evs.sort(key=lambda e: e[0])  # stable: a capability's events keep their order
        self.created = sum(1 for e in evs if e[2] == "create")
        self.run_ns, self.state, running = {}, {}, {}
        for t, cap, kind, tid, arg in evs:
            if kind == "run":
                running[cap] = (tid, t)
                self.state[tid] = "running"
            elif kind == "stop":
                if cap in running and running[cap][0] == tid:
                    self.run_ns[tid] = self.run_ns.get(tid, 0) + t - running.pop(cap)[1]
                self.state[tid] = STATUS.get(arg, "?" + arg)
            elif self.state.get(tid) != "finished":
                self.state[tid] = "runnable"
        self.open = {tid for tid, _ in running.values()}
        first = min((e[3] for e in evs if e[2] == "create"), default=None)
        before = {e[3] for e in evs if first is None or e[3] < first}
        self.live = self.created + len(before) - sum(
            1 for e in evs if e[2] == "stop" and e[4] == "ThreadFinished")
        self.by_label = {v: k for k, v in self.labels.items()}

    def seconds(self, tid):
        return self.run_ns.get(tid, 0) / 1e9

    def order(self, labels=WORKERS):
        """`labels`, most running time first."""
        return sorted(labels, key=lambda x: -self.run_ns.get(self.by_label.get(x), 0))

    def same_order(self, shown, slack=0.005):
        """Whether `shown` (labels) is most running time first by ghc-events,
        two whose times are within `slack` seconds in either order: a loaded
        machine can stretch a thread's run (its capability's OS thread
        waits for a core), so the order is the recording's, not the work's."""
        secs = [self.seconds(self.by_label.get(x)) for x in shown]
        return all(a >= b - slack for a, b in zip(secs, secs[1:]))


def most_first(where, shown):
    """shown: (label, seconds) of a view's top rows. They are most running
    time first; heavy, medium, light are the three (whatever their order:
    see Oracle.same_order). A note when the order is not the work's."""
    labels = [x[0] for x in shown]
    expect(sorted(labels) == sorted(WORKERS), "%s's three that ran most: %r" % (where, shown))
    expect(all(a[1] >= b[1] for a, b in zip(shown, shown[1:])),
           "%s: not most running time first: %r" % (where, shown))
    if labels != list(WORKERS):
        note("%s: %r (the machine's load stretched a run)" % (where, shown))


def _checker(path):
    import subprocess
    argv = [os.path.abspath(os.path.join(harness.BUILD, "eventlog-check")), "--threads", path]
    res = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    expect(res.returncode == 0, "eventlog-check %s: %s %s" % (path, res.stdout[:200], res.stderr))
    return res.stdout


def run_recorded(s, name, live=None):
    """build/threads with `record` as its client; `live(p)` runs once it
    said "ready". Returns the recording's path."""
    sock = s.path(name + ".sock")
    p = Program(s, "threads", rts=rts(), unix=sock, wait=True)
    p.wait_socket(sock)
    rec = s.path(name + ".eventlog")
    r = Cmd(s, ["record", "unix:" + sock, "-o", rec])
    expect(p.readline(timeout=240) == "ready", "the program said ready")
    if live:
        live(p)
    p.cmd("quit")
    p.finish()
    rc, _, err = r.wait(120)
    expect(rc == 0, "record: %d %s" % (rc, err))
    return rec


def report_json(html):
    m = re.search(r'<script id="es-data" type="application/json">(.*?)</script>', html, re.S)
    expect(m is not None, "the report inlines its data")
    return json.loads(m.group(1))


def check_rows(rows, o, where, tolerance):
    """Every labelled thread of the oracle is a row with its label and
    running time; every row's running time is the oracle's."""
    by_id = {r[0]: r for r in rows}
    for label in LABELLED:
        expect(label in o.by_label,
               "ghc-events found no thread labelled %r: %r" % (label, o.labels))
        tid = o.by_label[label]
        expect(tid in by_id, "%s lists no thread %d (%s): %r" % (where, tid, label, rows[:12]))
    for r in rows:
        tid = r[0]
        expect(r[1] == o.labels.get(tid, ""), "%s: thread %d is labelled %r, ghc-events says %r"
               % (where, tid, r[1], o.labels.get(tid, "")))
        if tid in o.open:
            continue
        expect(abs(r[4] - o.seconds(tid)) <= tolerance,
               "%s: thread %d (%s) ran %.6f s, ghc-events says %.6f s"
               % (where, tid, r[1], r[4], o.seconds(tid)))


@test(timeout=600)
def threads_report_matches_ghc_events(s):
    """report of a recording of build/threads: its data and its rendered
    tables name the labelled threads, the threads created and each thread's
    running time and state as ghc-events finds them in the same file, the
    three that ran most (heavy, medium, light) most running time first; the
    live-threads chart has points; top, fed the same recording, shows the
    same figures."""
    rec = run_recorded(s, "rep")
    o = Oracle(rec)
    out = s.path("threads.html")
    rc, _, err = Cmd(s, ["report", rec, "-o", out]).wait(240)
    expect(rc == 0, "report: %d %s" % (rc, err))
    with open(out) as f:
        d = report_json(f.read())
    T = d["threads"]
    expect(T["created"] == o.created, "report: %d threads created, ghc-events counts %d"
           % (T["created"], o.created))
    check_rows(T["rows"], o, "report", 2e-6)
    for r in T["rows"]:
        if r[0] in o.state and r[0] not in o.open:
            expect(r[2] == o.state[r[0]], "report: thread %d (%s) is %r, ghc-events: %r"
                   % (r[0], r[1], r[2], o.state[r[0]]))
    most_first("report", [(r[1], r[4]) for r in T["rows"][:3]])
    expect(any(v for v in T["live_tl"] if v), "live threads over time: %r" % T["live_tl"][:20])
    note("report: %d created, %s" % (T["created"], ", ".join(
        "%s %.3f s" % (r[1] or r[0], r[4]) for r in T["rows"][:5])))

    # The page the report renders: the tables' cells.
    need_chromium()
    b = Browser(s)
    b.goto("file://" + out)
    b.wait_js("document.querySelectorAll('#threads-top tbody tr').length > 0", what="threads table")
    cells = b.js("Array.from(document.querySelectorAll('#threads-all tbody tr')).map(function (r) {"
                 " return [+r.dataset.id, r.dataset.label, r.dataset.state,"
                 " +r.cells[4].textContent]; })")
    check_rows([[c[0], c[1], c[2], 0, c[3]] for c in cells], o, "report's table", 2e-6)
    shown = b.js("Array.from(document.querySelectorAll('#threads-top tbody tr')).map(function (r) {"
                 " return r.textContent; }).join('\\n')")
    for label in ("heavy", "medium", "light"):
        expect(label in shown, "the top table shows %s: %s" % (label, shown))
    b.js("document.getElementById('threads-all-box').open = true; "
         "document.getElementById('threads').scrollIntoView(); 1")
    shot = os.path.join(harness.BUILD, "threads-report.png")
    b.screenshot(shot)
    note("screenshot %s" % shot)

    # top, fed the same bytes (a socket that sends the recording and closes).
    sock = s.path("replay.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(sock)
    srv.listen(1)
    s.clients.append(srv)
    with open(rec, "rb") as f:
        data = f.read()

    def replay():
        try:
            c, _ = srv.accept()
            c.sendall(data)
            c.close()
        except OSError:
            pass
    threading.Thread(target=replay, daemon=True).start()
    t = Tmux(s, top_command(sock), width=200, height=45)
    t.wait(r"program exited", timeout=120, what="the end of the recording")
    screen = t.wait(r"^Thrd .*\n.*light.*$", what="the threads lines").group(0)
    # After the exit no thread is "live" (as on the page): created first.
    m = re.search(r"^Thrd\s+created (\d+)", screen, re.M)
    expect(m and int(m.group(1)) == o.created, "top: %s; ghc-events counts %d created"
           % (screen.splitlines()[0], o.created))
    shown = THREE.findall(screen.splitlines()[1])
    most_first("top", [(x[0], float(x[2])) for x in shown])
    for label, tid, secs, state in shown:
        tid = int(tid)
        expect(o.labels.get(tid) == label, "top: #%d is %s, ghc-events: %r"
               % (tid, label, o.labels.get(tid)))
        expect(abs(float(secs) - o.seconds(tid)) <= 0.0006,
               "top: %s ran %s s, ghc-events says %.6f s" % (label, secs, o.seconds(tid)))
        expect(state.strip() == o.state[tid], "top: %s is %r, ghc-events: %r"
               % (label, state, o.state[tid]))


def wait_states(b, states, timeout=240):
    cond = " && ".join(
        "(function () { var r = document.querySelector('#threads-all tr[data-label=\"%s\"]');"
        " return r !== null && r.dataset.state === '%s'; })()" % (k, v) for k, v in states.items())
    b.wait_js(cond, timeout=timeout, what="the threads' states %r" % states)


def live_chart_drawn(p, b, timeout=180):
    """Wait for the page's live-threads chart, which is drawn only while
    the count has not been one value over 90 % of the run. This program's
    threads all change in its first moments, which a loaded machine's page
    may see only long after: so the program adds a thread that stays (or,
    on 9.0, spawns threads and fills a buffer) every half second until the
    chart is drawn."""
    shown = "+(+document.getElementById('threads-chart').dataset.rows > 0)"
    deadline = time.monotonic() + timeout
    steps = 0
    while not b.js(shown):
        if time.monotonic() > deadline:
            raise TestFailure("the page never showed the live threads chart (%d more threads)"
                              % steps)
        p.cmd("spawn 20000" if ghc_version() < (9, 2) else "hold 1", timeout=300)
        steps += 1
        time.sleep(0.5)
    note("the live threads chart after %d more threads" % steps)


@test(timeout=600)
def threads_live_page(s):
    """serve's page while build/threads runs: the threads table shows the
    labels and what each thread is doing now (light finished, medium blocked
    on STM, heavy and waiter blocked on an MVar), the live-threads chart has
    points; after the exit the threads created and live and every thread's
    running time are what ghc-events finds in the recording serve kept."""
    need_chromium()
    sock = s.path("live.sock")
    p = Program(s, "threads", rts=rts(), unix=sock, wait=True)
    p.wait_socket(sock)
    rec = s.path("live.eventlog")
    srv, url = start_serve(s, sock, ["--record", rec])
    b = Browser(s)
    b.goto(url)
    expect(p.readline(timeout=240) == "ready", "the program said ready")
    spawn_for_live(p)
    wait_states(b, LIVE_STATES)
    live_chart_drawn(p, b)
    # The states can show before every capability's block with the runs is
    # in (a loaded machine; on 9.0 an idle capability's block comes late):
    # the order settles once they are.
    top3 = ("Array.from(document.querySelectorAll('#threads-top tbody tr')).slice(0, 3)"
            ".map(function (r) { return r.dataset.label; })")
    try:
        b.wait_js(top3 + ".join() === 'heavy,medium,light'", timeout=60,
                  what="heavy, medium, light: most running time first")
    except TestFailure:
        pass  # judged against ghc-events after the exit
    order = b.js(top3)
    b.js("document.getElementById('threads-all-box').open = true; "
         "document.getElementById('threads').scrollIntoView(); 1")
    shot = os.path.join(harness.BUILD, "threads-live.png")
    b.screenshot(shot)
    p.cmd("quit")
    p.finish()
    b.wait_js("document.getElementById('state').textContent === 'program exited'",
              timeout=120, what="the exit")
    time.sleep(1.0)  # the exit's state is the last message; the page redraws within 200 ms
    cells = b.js("Array.from(document.querySelectorAll('#threads-all tbody tr')).map(function (r) {"
                 " return [+r.dataset.id, r.dataset.label, r.dataset.state, 0,"
                 " +r.dataset.running]; })")
    created = int(b.js("document.getElementById('threads').dataset.created"))
    live = int(b.js("document.getElementById('threads').dataset.live"))
    srv.signal(2)
    srv.wait(30)
    o = Oracle(rec)
    expect(created == o.created, "page: %d created, ghc-events: %d" % (created, o.created))
    # Threads in a foreign call at the exit (the I/O manager's) never finish.
    expect(live == o.live, "page: %d live after the exit, ghc-events: %d" % (live, o.live))
    check_rows(cells, o, "the page", 2e-6)
    # The order while the program ran: the three ran no more after "ready"
    # but for their wake-up at the exit (microseconds).
    expect(sorted(order) == sorted(WORKERS) and o.same_order(order),
           "most running time first while it ran: %r; ghc-events: %s" % (order, ", ".join(
               "%s %.3f s" % (x, o.seconds(o.by_label.get(x))) for x in o.order())))
    if order != list(WORKERS):
        note("live order %r, as ghc-events finds it (the machine's load stretched a run)"
             % order)
    note("page: %s; screenshot %s" % (", ".join("%s %.3f s" % (c[1] or c[0], c[4])
                                                for c in cells[:5]), shot))


@test(timeout=600)
def threads_live_top(s):
    """top while build/threads runs: a threads line with the live count,
    and the three that ran most with their labels and states now (heavy
    blocked on an MVar, medium blocked on STM, light finished)."""
    sock = s.path("top.sock")
    p = Program(s, "threads", rts=rts(), unix=sock, wait=True)
    p.wait_socket(sock)
    t = Tmux(s, top_command(sock), width=200, height=45)
    expect(p.readline(timeout=240) == "ready", "the program said ready")
    spawn_for_live(p)
    m = t.wait(r"^(?=.*\bheavy #\d+ [\d.]+ s \d+% blocked on MVar\b)"
               r"(?=.*\bmedium #\d+ [\d.]+ s \d+% blocked on STM\b)"
               r"(?=.*\blight #\d+ [\d.]+ s \d+% finished\b)\s+\S+ #.*$", timeout=240,
               what="heavy, medium and light with their states")
    most_first("top", [(x[0], float(x[2])) for x in THREE.findall(m.group(0))])
    live = t.wait(r"^Thrd\s+live (\d+)", what="the live count")
    expect(int(live.group(1)) >= 5, "at least main and four workers live: %s" % live.group(0))
    note("top: %s / %s" % (live.group(0), m.group(0).strip()))
    p.cmd("quit")
    p.finish()
    t.wait(r"program exited", timeout=120, what="the exit")
