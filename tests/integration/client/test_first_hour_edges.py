# SPDX-License-Identifier: BSD-3-Clause
"""The first hour's edges: a program started from Haskell and GHC 9.0 told
the same way by every view (metrics, the report, the page, the .hp file,
compare), never claiming something is missing that is drawn right below;
every subcommand that writes a file checks it before connecting, every
source checked before serve's HTTP server starts; top's title at 80x24;
heap's advice on files; control on 9.0; a start from Haskell without -l
never says "listening"; the rows of heap --csv and table census agree;
charts with nothing to show say why.

With ES_EDGE_SHOTS=DIR (an absolute path) the report, the live page and
top's screen of these runs are kept there as PNG files."""

import base64
import os
import signal
import socket
import subprocess
import time

import harness
from cdp import Browser, chromium_path
from client_cmd import Cmd, run
from harness import Program, Skip, expect, ghc_version, note, test
from test_metrics import samples, scrape, start_metrics, value, wait_for
from test_top import Tmux, top_command
from test_web import start_serve


def shot(b, name, height=None):
    """Keep a screenshot of the browser's page under ES_EDGE_SHOTS."""
    dest = os.environ.get("ES_EDGE_SHOTS")
    if not dest:
        return
    params = {"format": "png", "captureBeyondViewport": True}
    if height:
        params["clip"] = {"x": 0, "y": 0, "width": 1280, "height": height, "scale": 1}
    data = b.call("Page.captureScreenshot", params, session=b.session)["data"]
    os.makedirs(dest, exist_ok=True)
    with open(os.path.join(dest, name), "wb") as f:
        f.write(base64.b64decode(data))
    note("screenshot %s" % os.path.join(dest, name))


def haskell_started(s, sock, rts=("-hT", "-i0.05"), wait=False):
    """probe-late (an RTS started with its own file writer, -l) switched to
    eventlog-socket on `sock` from Haskell (eventlog_socket_start_unix, what
    startWith does); returns the program."""
    p = Program(s, "probe-late", rts=list(rts))
    p.proc.stdin.write(("%s %s\n" % ("start-unix-wait" if wait else "start-unix", sock)).encode())
    p.proc.stdin.flush()
    if not wait:
        expect(p.readline(timeout=30) == "ok", "the start from Haskell failed: %s" % p.stderr())
    return p


def busy_rounds(p, n=6):
    for i in range(n):
        expect(p.query("work 0.3 8").startswith("ok "), "work")
        p.cmd("marker round %d" % i)


def record_haskell_run(s, p, sock, viewer):
    """A program from haskell_started(wait=True), whose start a viewer
    (`viewer` names it) has just let return: recorded beside it through
    busy rounds to its exit. Returns the recording's path."""
    expect(p.readline(timeout=30) == "ok", "the start did not return once %s connected" % viewer)
    rec = s.path("hs.eventlog")
    recorder = Cmd(s, ["record", sock, "-o", rec])
    busy_rounds(p)
    p.cmd("quit")
    p.finish()
    rc, _, err = recorder.wait(60)
    expect(rc == 0, "record: %d %r" % (rc, err))
    return rec


@test(timeout=240)
def metrics_tell_ghc90_and_haskell_starts_honestly(s):
    """metrics on GHC 9.0 says lacks="live" from the header, as top and
    control do, and never lacks="heap_profile" for a program run with -hT
    (the exporter cannot know before exit on 9.0; the server's process
    says it has -hT), nor beside heap profile series (a start from Haskell
    streams censuses without HEAP_PROF_BEGIN). ghc_program_info is there
    for a run that never streams RTS_IDENTIFIER. A direct path and a glob
    give one form of the source label (unix:PATH). On 9.2+ no lacks at all
    for these programs."""
    old = ghc_version() < (9, 2)
    os.mkdir(s.path("g"))
    c_sock, h_sock = s.path("c.sock"), s.path("g/h.sock")
    exporter, port = start_metrics(s, c_sock, s.path("g") + "/*.sock")
    c = Program(s, "probe", unix=c_sock, rts=["-hT", "-i0.05"])
    c.wait_socket(c_sock)
    c_src, h_src = "unix:" + c_sock, "unix:" + h_sock
    text, sm = wait_for(port, "the C-main program's series",
                        lambda sm: value(sm, "eventlog_socket_connected", source=c_src) == 1)
    busy_rounds(c, 3)
    # More than a 2 MiB buffer, so that GHC 9.0 hands some events over.
    c.cmd("flood 150000 f")
    wait_for(port, "events of the running program",
             lambda sm: (value(sm, "eventlog_socket_received_bytes_total", source=c_src) or 0)
             > 1 << 20)
    time.sleep(2.5)  # more than two expositions with the program running
    sm = samples(scrape(port))
    note("C main, running: %s" % sorted(k[1] for k in sm if k[0] == "ghc_eventlog_lacking_info"))
    expect(value(sm, "ghc_eventlog_lacking_info", source=c_src, lacks="heap_profile") is None,
           "lacks heap_profile for a program run with -hT")
    live = value(sm, "ghc_eventlog_lacking_info", source=c_src, lacks="live")
    expect((live == 1) == old, "lacks live on GHC %r: %r" % (ghc_version(), live))
    c.cmd("quit")
    c.finish()

    h = haskell_started(s, h_sock, wait=True)
    expect(h.readline(timeout=30) == "ok", "the exporter did not connect to the Haskell start")
    busy_rounds(h)
    h.cmd("quit")
    h.finish()
    text, sm = wait_for(port, "the Haskell-started run's last census",
                        lambda sm: value(sm, "eventlog_socket_connected", source=h_src) == 0 and
                        any(n == "ghc_heap_profile_bytes" and ("source", h_src) in ls
                            for n, ls in sm))
    lacking = sorted(dict(ls)["lacks"] for n, ls in sm
                     if n == "ghc_eventlog_lacking_info" and ("source", h_src) in ls)
    note("Haskell start, after exit: lacks %s" % lacking)
    expect("heap_profile" not in lacking, "lacks heap_profile beside heap profile series")
    expect(("live" in lacking) == old, "lacks live: %s on GHC %r" % (lacking, ghc_version()))
    info = [ls for n, ls in sm if n == "ghc_program_info" and ("source", h_src) in ls]
    expect(len(info) == 1 and dict(info[0])["ghc_version"].startswith("9."),
           "ghc_program_info of the Haskell-started run: %s" % info)
    sources = {dict(ls)["source"] for n, ls in sm if n == "eventlog_socket_connected"}
    expect(sources == {c_src, h_src}, "source labels: %s" % sorted(sources))
    exporter.signal(signal.SIGTERM)
    exporter.wait()


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


@test(timeout=300)
def haskell_started_run_is_told_the_same_everywhere(s):
    """A run started from Haskell (with -hT, on GHC 9.0 its name, pid and
    heap profile set-up are never streamed): the report and the live page
    say it was started from Haskell and that the start-up events were not
    streamed; the program is "not named in the stream" (never "yet" after
    its end), the pid "not in the stream", the tab's title is not
    "eventlog-socket - eventlog-socket"; the heap chart never says "no heap
    profile" above drawn censuses; after the exit no thread is "live now"
    and streaming's cost never says "nothing sent yet"; the threads chart
    spans the run (its threads began before the stream). The .hp file's
    JOB does not call it "program", compare says why it has no name."""
    if chromium_path() is None:
        raise Skip("Chromium is not installed")
    old = ghc_version() < (9, 2)
    sock = s.path("hs.sock")
    p = haskell_started(s, sock, wait=True)
    p.wait_socket(sock)
    srv, url = start_serve(s, sock)
    rec = record_haskell_run(s, p, sock, "serve")

    b = Browser(s, width=1280, height=900)
    # The live page, after the program's exit.
    b.goto(url)
    b.wait_js("document.getElementById('state').textContent === 'program exited' && "
              "+document.getElementById('census-count').textContent > 0",
              timeout=60, what="the exit and the censuses")
    time.sleep(1.5)
    shot(b, "page-haskell-started.png", 2200)
    pages = [("page", b.js("document.body.innerText"), b.js("document.title"))]
    # The report of the recording.
    out = s.path("hs.html")
    rc, _, err = run(s, ["report", rec, "-o", out], 60)
    expect(rc == 0, "report: %d %r" % (rc, err))
    b.goto("file://" + out)
    b.wait_js("+document.body.dataset.drawn >= 1", what="the report drawn")
    shot(b, "report-haskell-started.png", 2400)
    pages.append(("report", b.js("document.body.innerText"), b.js("document.title")))
    for what, body, title in pages:
        expect("Started from Haskell" in body and "were not streamed" in body,
               "%s: no word of the start from Haskell" % what)
        expect("not named yet" not in body, "%s: 'not named yet' after the end" % what)
        expect(title != "eventlog-socket - eventlog-socket", "%s: title %r" % (what, title))
        expect("no heap profile" not in body, "%s: 'no heap profile' above censuses" % what)
        expect("live now" not in body, "%s: a thread 'live now' after the exit" % what)
        expect("nothing sent yet" not in body, "%s: 'nothing sent yet'" % what)
        # serve names the program from its process; a recording cannot.
        if old and what == "report":
            expect("(program not named in the stream)" in body and "pid: not in the stream" in body,
                   "%s: the name and pid on 9.0: %r" % (what, body[:300]))
    # The threads chart spans the run, not only its last instant.
    span = b.js("(function(){var g=document.getElementById('threads-chart');"
                "if (g.hidden) return null; var ax=g.querySelectorAll('.dygraph-axis-label-x');"
                "var xs=[].map.call(ax,function(e){return +e.textContent;});"
                "return [Math.min.apply(null,xs), Math.max.apply(null,xs)];})()")
    note("threads chart x labels %s" % (span,))
    expect(span is None or span[1] - span[0] >= 1.0,
           "the threads chart covers %s s only" % (span,))

    hp = s.path("hs.hp")
    rc, _, err = run(s, ["heap", rec, "--hp", hp], 60)
    expect(rc == 0, "heap: %d %r" % (rc, err))
    job = read(hp).splitlines()[0]
    expect(job != 'JOB "program"', "the .hp's JOB line: %r" % job)
    rc, out_txt, err = run(s, ["compare", rec, rec], 60)
    first = out_txt.splitlines()[0]
    expect(rc == 0 and (not old or "not named in the eventlog" in first),
           "compare: %d %r %r" % (rc, first, err))
    srv.signal(signal.SIGTERM)
    srv.wait()


def held(p, what):
    """The program (GHC_EVENTLOG_WAIT=1) is still held before main: a
    command on its stdin gets no answer for a while."""
    p.proc.stdin.write(b"marker held\n")
    p.proc.stdin.flush()
    try:
        line = p.readline(timeout=2)
    except harness.TestFailure:
        return
    raise harness.TestFailure("%s released the waiting program (it answered %r)" % (what, line))


@test(timeout=180)
def outputs_checked_before_connecting(s):
    """record, report, compare, table, heap and serve --record with an
    output that cannot be written (a missing directory, a directory) say
    so naming the file, exit 2, and never connect: a program held by
    GHC_EVENTLOG_WAIT=1 stays held (its start is not handed to a client
    that cannot keep it) and a later record gets the whole run."""
    sock = s.path("w.sock")
    p = Program(s, "probe", unix=sock, wait=True)
    p.wait_socket(sock)
    os.mkdir(s.path("adir"))
    bad = s.path("missing/out")
    cases = [["record", sock, "-o", bad + ".eventlog"],
             ["record", sock, "-o", s.path("adir")],
             ["report", sock, "-o", bad + ".html"],
             ["compare", sock, sock, "--csv", bad + ".csv"],
             ["table", "gc", sock, "--csv", bad + ".csv"],
             ["heap", sock, "--hp", bad + ".hp"],
             ["serve", "unix:" + sock, "--http", "127.0.0.1:0", "--record", bad + ".eventlog"]]
    for args in cases:
        rc, out, err = run(s, args, 30)
        named = args[args.index("-o") + 1] if "-o" in args else args[-1]
        expect(rc == 2 and named in err and "cannot write" in err and "http://" not in out,
               "%s: exit %d, %r %r" % (args[0], rc, out, err))
        held(p, " ".join(args[:1]))
    rec = s.path("w.eventlog")
    recorder = Cmd(s, ["record", sock, "-o", rec])
    expect(p.readline(timeout=30) == "ok", "the program did not go on once record connected")
    p.cmd("quit")
    p.finish()
    rc, _, err = recorder.wait(60)
    expect(rc == 0, "the good record: %d %r" % (rc, err))
    expect(not os.path.exists(s.path("missing")), "a directory was created")


@test(timeout=120, ghc_free=True)
def serve_checks_its_source_before_http(s):
    """serve FILE and serve MISSING-SOCKET say what is wrong with the
    source, naming it, before any URL is printed (a file: use report); a
    taken --http port says so and what to do; nothing is left behind."""
    rec = s.path("x.eventlog")
    with open(rec, "wb") as f:
        f.write(b"not an eventlog")
    for src, words in ((rec, ["x.eventlog", "report"]),
                       (s.path("none.sock"), ["none.sock", "no such socket", "--retry"])):
        rc, out, err = run(s, ["serve", src, "--http", "127.0.0.1:0"], 30)
        expect(rc == 2 and "http://" not in out and all(w in err for w in words),
               "serve %s: exit %d, %r %r" % (src, rc, out, err))
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        for cmd in (["serve", s.path("later.sock"), "--retry"], ["metrics", s.path("later.sock")]):
            rc, out, err = run(s, [*cmd, "--http", "127.0.0.1:%d" % port], 30)
            expect(rc == 2 and "Address already in use" in err and "--http" in err
                   and "port 0" in err,
                   "%s on a taken port: exit %d, %r" % (cmd[0], rc, err))
    finally:
        taken.close()
    left = sorted(f for f in os.listdir(s.dir) if f.endswith((".sock", ".html")))
    expect(left == [], "left behind: %s" % left)


@test(timeout=120)
def top_title_fits_80_columns_after_exit(s):
    """`top --retry` at 80x24: after the program exits, the title line
    still starts with the program's name and says it exited; nothing is
    written over its beginning."""
    sock = s.path("t.sock")
    p = Program(s, "probe", unix=sock, wait=True)
    p.wait_socket(sock)
    t = Tmux(s, top_command(sock, "--retry"), width=80, height=24)
    t.wait(r"GHC 9", what="the title")
    busy_rounds(p, 2)
    p.cmd("quit")
    p.finish()
    t.wait(r"exited", what="the exit", timeout=30)
    time.sleep(0.6)
    screen = t.screen()
    title = screen.splitlines()[0]
    note("title: %r" % title)
    expect(title.startswith(" probe (pid %d)" % p.proc.pid) and "exited" in title
           and len(title.rstrip()) <= 80, "the title line: %r" % title)
    expect("nothing sent yet" not in screen, "'nothing sent yet' after the exit:\n%s" % screen)
    dest = os.environ.get("ES_EDGE_SHOTS")
    if dest and chromium_path() is not None:
        from test_first_hour import terminal_html
        ansi = t.run("capture-pane", "-e", "-p", "-t", "top").stdout
        page = s.path("top.html")
        with open(page, "w") as f:
            f.write(terminal_html(ansi, 80, 24))
        b = Browser(s, width=900, height=700)
        b.goto("file://" + page)
        box = b.js("(function(){var r=document.querySelector('pre').getBoundingClientRect();"
                   "return [r.width, r.height];})()")
        data = b.call("Page.captureScreenshot", {
            "format": "png", "clip": {"x": 0, "y": 0, "width": box[0], "height": box[1],
                                      "scale": 1}}, session=b.session)["data"]
        os.makedirs(dest, exist_ok=True)
        with open(os.path.join(dest, "top-80x24-after-exit.png"), "wb") as f:
            f.write(base64.b64decode(data))
        with open(os.path.join(dest, "top-80x24-after-exit.txt"), "w") as f:
            f.write(screen)


@test(timeout=180)
def heap_advice_fits_a_file(s):
    """heap on a file that is not an eventlog: "not an eventlog", no advice
    about +RTS -hT, exit 2, no output file. On a recording of a -hT run
    cut before the program's exit: on GHC 9.0 (which sends its samples at
    exit) the advice names GHC 9.0, not -hT; exit 1 and no output file."""
    junk = s.path("junk.eventlog")
    with open(junk, "wb") as f:
        f.write(os.urandom(4096))
    hp = s.path("junk.hp")
    rc, _, err = run(s, ["heap", junk, "--hp", hp], 30)
    expect(rc == 2 and "not an eventlog" in err and "-hT" not in err and "server" not in err
           and not os.path.exists(hp), "heap on junk: %d %r" % (rc, err))
    if ghc_version() >= (9, 2):
        note("GHC %d.%d streams censuses live: a cut recording has them" % ghc_version())
        return
    sock = s.path("cut.sock")
    p = Program(s, "probe", unix=sock, rts=["-hT", "-i0.05"], wait=True)
    p.wait_socket(sock)
    rec = s.path("cut.eventlog")
    recorder = Cmd(s, ["record", sock, "-o", rec])
    busy_rounds(p, 3)
    p.cmd("quit")
    p.finish()
    expect(recorder.wait(60)[0] == 0, "record")
    with open(rec, "rb") as f:
        data = f.read()
    cut = s.path("cut-half.eventlog")
    with open(cut, "wb") as f:
        f.write(data[:len(data) // 2])
    hp = s.path("cut.hp")
    rc, _, err = run(s, ["heap", cut, "--hp", hp, "--csv", s.path("cut.csv")], 30)
    expect(rc == 1 and "GHC 9.0" in err and "+RTS -hT" not in err and "nothing written" in err
           and not os.path.exists(hp) and not os.path.exists(s.path("cut.csv")),
           "heap on a cut 9.0 recording: %d %r" % (rc, err))


@test(timeout=180)
def control_on_ghc90_and_over_tcp(s):
    """control census --wait on GHC 9.0 (-hT) says at once that the sample
    can only come at exit (exit 1), instead of waiting out --timeout; over
    loopback TCP a program without a heap profiling mode is told as over a
    Unix socket (exit 1, not "sent"). On 9.2+ --wait sees the sample."""
    old = ghc_version() < (9, 2)
    sock = s.path("c.sock")
    p = Program(s, "probe", unix=sock, rts=["-hT", "-i0.5"])
    p.wait_socket(sock)
    rc, out, err = run(s, ["control", sock, "census", "--wait", "--timeout", "120"], 40)
    if old:
        expect(rc == 1 and "sent" in out and "not waiting" in err and "GHC 9.0" in err,
               "--wait on 9.0: %d %r %r" % (rc, out, err))
    else:
        expect(rc == 0 and "heap sample at program time" in out,
               "--wait: %d %r %r" % (rc, out, err))
    p.cmd("quit")
    p.finish()
    q = Program(s, "probe", tcp_port=0)
    port = q.tcp_port()
    for sub in (["census"], ["census", "--wait", "--timeout", "5"]):
        rc, out, err = run(s, ["control", "tcp:127.0.0.1:%d" % port, *sub], 30)
        expect(rc == 1 and "without a heap profiling mode" in err and "sent" not in out,
               "over TCP without -hT %s: %d %r %r" % (sub, rc, out, err))
    q.cmd("quit")
    q.finish()


@test(timeout=60)
def haskell_start_without_l_is_not_listening(s):
    """A start from Haskell in a program run without -l: the error says to
    run it with +RTS -l, and nothing ever says "listening" (docs/configuration.md
    tells scripts to wait for that line), no socket file."""
    sock = s.path("nol.sock")
    p = Program(s, "probe-late", env={"PROBE_NO_L": "1"})
    p.proc.stdin.write(("start-unix %s\n" % sock).encode())
    p.proc.stdin.flush()
    line = p.readline(timeout=30)
    p.cmd("quit")
    p.finish()
    err = p.stderr()
    expect(line.startswith("error") and "+RTS -l" in line, "the start: %r" % line)
    expect("listening" not in err, "stderr says listening: %r" % err)
    expect(not os.path.exists(sock), "the socket file is there")


@test(timeout=60)
def start_failure_lines_in_order(s):
    """A start from Haskell on a path in a missing directory: the library's
    line (the path, what to do) is on stderr before the program reports
    its own error (stdout and stderr to one file, in order)."""
    log = s.path("order.log")
    with open(log, "wb") as f:
        proc = subprocess.Popen([os.path.abspath(os.path.join(harness.BUILD, "probe-late"))],
                                stdin=subprocess.PIPE, stdout=f, stderr=subprocess.STDOUT,
                                cwd=s.dir, start_new_session=True,
                                env={k: v for k, v in os.environ.items()
                                     if not k.startswith("GHC_EVENTLOG_")})
        try:
            proc.communicate(("start-unix %s\nquit\n" % s.path("no/such/dir.sock")).encode(),
                             timeout=30)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    text = read(log)
    lines = text.splitlines()
    lib = [i for i, l in enumerate(lines) if l.startswith("eventlog-socket:")]
    prog = [i for i, l in enumerate(lines) if l.startswith("error")]
    expect(lib and prog and lib[0] < prog[0], "order: %r" % text)


@test(timeout=120)
def heap_csv_rows_are_table_census_rows(s):
    """`heap FILE --csv` and `table census FILE --csv` write the same rows,
    byte for byte (times exact to the nanosecond in both)."""
    sock = s.path("r.sock")
    p = Program(s, "probe", unix=sock, rts=["-hT", "-i0.05"], wait=True)
    p.wait_socket(sock)
    rec = s.path("r.eventlog")
    recorder = Cmd(s, ["record", sock, "-o", rec])
    busy_rounds(p, 2)
    p.cmd("quit")
    p.finish()
    expect(recorder.wait(60)[0] == 0, "record")
    a, b = s.path("heap.csv"), s.path("table.csv")
    expect(run(s, ["heap", rec, "--csv", a], 60)[0] == 0, "heap --csv")
    expect(run(s, ["table", "census", rec, "--csv", b], 60)[0] == 0, "table census")
    ta, tb = read(a), read(b)
    expect(ta.count("\n") > 2, "no census rows")
    expect(ta == tb, "the rows differ: %r vs %r" % (ta.splitlines()[1:3], tb.splitlines()[1:3]))


@test(timeout=120)
def report_charts_say_why_they_are_empty(s):
    """The report of a run whose live-thread count never changes while the
    stream runs says so in words (no chart that is one filled box); the
    capability strip is tall enough to read and paints the runs."""
    if chromium_path() is None:
        raise Skip("Chromium is not installed")
    sock = s.path("k.sock")
    p = Program(s, "probe", unix=sock, rts=["-hT", "-i0.2"], wait=True)
    p.wait_socket(sock)
    rec = s.path("k.eventlog")
    recorder = Cmd(s, ["record", sock, "-o", rec])
    for i in range(3):
        expect(p.query("work 0.3 8").startswith("ok "), "work")
        p.cmd("sleep 0.5")
    p.cmd("quit")
    p.finish()
    expect(recorder.wait(60)[0] == 0, "record")
    out = s.path("k.html")
    expect(run(s, ["report", rec, "-o", out], 60)[0] == 0, "report")
    b = Browser(s, width=1280, height=900)
    b.goto("file://" + out)
    b.wait_js("+document.body.dataset.drawn >= 1", what="the report drawn")
    live = b.js("(function(){var d=JSON.parse(document.getElementById('es-data').textContent);"
                "return d.threads.live_tl.filter(function(v){return v!==null;});})()")
    hidden = b.js("document.getElementById('threads-chart').hidden")
    note_text = b.js("document.getElementById('threads-chart-note').textContent")
    note("live threads %s..%s over %d buckets; chart hidden %s: %r"
         % (min(live) if live else None, max(live) if live else None, len(live), hidden, note_text))
    # One count over nearly all of the run (threads begin at the start and
    # end at the exit whatever the program does) tells nothing.
    constant = bool(live) and max(live.count(v) for v in set(live)) >= 0.9 * len(live)
    expect(hidden == constant, "chart hidden %s for a count that is %s"
           % (hidden, "constant" if constant else "changing"))
    if constant:
        expect("No chart of live threads" in note_text and "live nearly all along" in note_text,
               "no word why: %r" % note_text)
    strip = b.js("(function(){var c=document.getElementById('cap-strip');"
                 "return [c.height, +c.getAttribute('data-painted')];})()")
    expect(strip[0] >= 24 and strip[1] > 0, "the capability strip: height %d, %d painted"
           % tuple(strip))
