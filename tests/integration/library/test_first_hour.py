# SPDX-License-Identifier: BSD-3-Clause
"""What a new user meets in the first hour: errors that say what
to do. A TCP port in use names the address, the port and the variable; a
program started from Haskell with esoWait says it waits, as the C main
does; a recording's name that is not there is a missing file, not a
program that is not running. GHC 9.0 said where the user looks (top,
the page, record, control); a missing heap profiling mode told from it;
README's Haskell quick start built and watched as written; a program
linked without -eventlog refused before it listens; record's names over TCP, heap's JOB
line; README's screenshots."""

import base64
import os
import re
import shlex
import shutil
import signal
import struct
import subprocess
import time
import zlib

from cdp import Browser, chromium_path
from client_cmd import last_line, pty_stderr_of, run
import harness
from harness import Client, Program, Skip, check_stream, expect, ghc_version, note, serve, test
from test_top import Tmux, top_command
from tmuxpane import TmuxPane
from test_web import start_serve
from test_config import config_error


@test
def tcp_port_in_use_names_it(s):
    """A second program on a port another one listens on: exit 1, and the
    message names the host, the port and GHC_EVENTLOG_INET_PORT."""
    owner = Program(s, "probe", tcp_port=0)
    port = owner.tcp_port()
    err = config_error(s, {"GHC_EVENTLOG_INET_PORT": str(port)})
    expect("127.0.0.1 port %d" % port in err and "GHC_EVENTLOG_INET_PORT" in err
           and "another process is listening" in err, "stderr: %s" % err)
    owner.cmd("quit")
    owner.finish()


@test
def haskell_start_with_wait_says_it_waits(s):
    """eventlog_socket_start_unix with wait (what startWith does with
    esoWait = True) prints "waiting for a client to connect", then goes on
    once one has."""
    sock = s.path("hs.sock")
    p = Program(s, "probe-late")
    p.proc.stdin.write(("start-unix-wait %s\n" % sock).encode())
    p.proc.stdin.flush()
    p.wait_stderr("waiting for a client to connect")
    c = Client(s, unix=sock)
    expect(p.readline(timeout=30) == "ok", "the start did not return once a client came")
    p.cmd("quit")
    p.finish()
    c.wait_eof()


@test(ghc_free=True)
def missing_recording_is_a_missing_file(s):
    """`heap missing.eventlog` (a typo): "no such file", exit 2; not the
    advice for a socket whose program is not running."""
    for args in (["heap", "missing.eventlog", "--hp", s.path("x.hp")],
                 ["report", "missing.eventlog", "-o", s.path("x.html")]):
        rc, _, err = run(s, args, 15)
        expect(rc == 2 and "no such file" in err and "running" not in err,
               "%s: exit %d, stderr %r" % (args, rc, err))


GHC90_NOTE = "GHC 9.0: events arrive in 2 MiB steps and at exit"


@test
def ghc90_says_so_where_the_user_looks(s):
    """A GHC 9.0 program (its header declares no IPE events) is told as
    such at once, before any of its events: `top` shows "GHC 9.0" and the
    line GHC90_NOTE, the page of `serve` a visible note, `record`'s
    progress line and `control --wait`'s hint the same words. On 9.2+
    none of them says it, and top shows the version from the stream."""
    old = ghc_version() < (9, 2)
    p, _ = serve(s, "g90", rts=["-hT"])
    sock = s.path("g90.sock")
    t = Tmux(s, top_command(sock))
    if old:
        t.wait(r"GHC 9\.0  up \?", what="GHC 9.0 and an unknown uptime in the title")
        t.wait(re.escape(GHC90_NOTE), what="the GHC 9.0 line")
    else:
        t.wait(r"GHC 9\.\d+\.\d+  up \d", what="the version from the stream")
        expect(GHC90_NOTE not in t.screen(), "a 9.0 note on a %s stream" % (ghc_version(),))

    rc, text = pty_stderr_of(s, ["record", sock, "-o", s.path("g90.eventlog"),
                                 "--duration", "1.5"], lambda: None)
    expect(rc == 0, "record --duration: exit %d: %r" % (rc, text))
    expect((GHC90_NOTE in text) == old, "progress line: %r" % text)
    final = last_line(text.replace("\r", "\n").replace("\x1b[K", ""))
    expect(final.startswith("eventlog-socket: recorded") and (GHC90_NOTE in final) == old,
           "record's last line: %r" % final)

    rc, out, err = run(s, ["control", sock, "census", "--wait", "--timeout", "2"], 30)
    if old:
        expect(rc == 1 and GHC90_NOTE in err and "without a heap profiling mode" not in err,
               "control --wait: exit %d, %r %r" % (rc, out, err))
    else:
        expect(rc == 0 and "heap sample at program time" in out and GHC90_NOTE not in err,
               "control --wait: exit %d, %r %r" % (rc, out, err))

    if chromium_path() is not None:
        srv, url = start_serve(s, sock)
        b = Browser(s)
        b.goto(url)
        b.wait_js("document.getElementById('state').textContent === 'connected'",
                  what="connected")
        if old:
            b.wait_js("!document.getElementById('ghc90').hidden && "
                      "document.getElementById('ghc90').getBoundingClientRect().height > 0 && "
                      "document.getElementById('ghc90').textContent.indexOf(%r) === 0"
                      % GHC90_NOTE, what="the GHC 9.0 note")
            expect(b.js("document.getElementById('ghc').textContent") == "GHC 9.0",
                   "the page's GHC")
        else:
            b.wait_js("document.getElementById('ghc').textContent.indexOf('GHC 9.') === 0",
                      what="the GHC version")
            expect(b.js("document.getElementById('ghc90').hidden"), "a 9.0 note on 9.2+")
        srv.signal(signal.SIGTERM)
        srv.wait()
    else:
        note("Chromium is not installed: the page is not checked")
    p.cmd("quit")
    p.finish()
    t.wait(r"program exited", what="the exit")
    expect(GHC90_NOTE not in t.screen(), "the 9.0 line stays after the exit")


@test
def control_tells_no_heap_mode_from_ghc90(s):
    """`control census` on a program without -hT: exit 1, "without a heap
    profiling mode", with and without --wait (without: not "sent"), and
    never GHC 9.0 blamed. With -hT: "sent", exit 0; --wait on 9.0 times
    out blaming GHC 9.0 only, on 9.2+ sees the sample."""
    old = ghc_version() < (9, 2)
    for rts in ([], ["-hT"]):
        sock = s.path("m%d.sock" % len(rts))
        p = Program(s, "probe", unix=sock, rts=rts)
        p.wait_socket(sock)
        rc, out, err = run(s, ["control", sock, "census"], 30)
        rc_w, out_w, err_w = run(s, ["control", sock, "census", "--wait", "--timeout", "3"], 30)
        note("%s: %d %r %r; --wait: %d %r %r" % (rts, rc, out, err, rc_w, out_w, err_w))
        if not rts:
            for r, o, e in ((rc, out, err), (rc_w, out_w, err_w)):
                expect(r == 1 and "without a heap profiling mode" in e and "+RTS -hT" in e
                       and "sent" not in o and "GHC 9.0" not in e,
                       "no -hT: exit %d, %r %r" % (r, o, e))
        else:
            expect(rc == 0 and "census: sent" in out and (GHC90_NOTE in out) == old,
                   "-hT: exit %d, %r %r" % (rc, out, err))
            if old:
                expect(rc_w == 1 and GHC90_NOTE in err_w
                       and "without a heap profiling mode" not in err_w,
                       "-hT --wait on 9.0: exit %d, %r" % (rc_w, err_w))
            else:
                expect(rc_w == 0 and "heap sample at program time" in out_w,
                       "-hT --wait: exit %d, %r %r" % (rc_w, out_w, err_w))
        p.cmd("quit")
        p.finish()


@test
def heap_live_without_a_heap_profile_writes_nothing(s):
    """`heap ADDR --hp X --csv Y` on a running program without -hT: says
    there is no heap profile and stops (exit 1) while the program still
    runs, and creates neither file."""
    sock = s.path("nohp.sock")
    p = Program(s, "probe", unix=sock)
    p.wait_socket(sock)
    hp, csv = s.path("nohp.hp"), s.path("nohp.csv")
    rc, _, err = run(s, ["heap", sock, "--hp", hp, "--csv", csv], 30)
    expect(rc == 1 and "no heap profile" in err and "+RTS -hT" in err,
           "exit %d, %r" % (rc, err))
    expect(not os.path.exists(hp) and not os.path.exists(csv), "a file was written")
    expect(p.proc.poll() is None, "the program ended: heap did not tell while it ran")
    p.cmd("quit")
    p.finish()


REPO = harness.ROOT


def readme_recipe():
    """The complete cabal project of README's Haskell quick start: {path:
    text} of the blocks that open with `-- app/PATH`, and the shell blocks
    that open with `# in app/`, in order (build and watch with top; run
    again and record)."""
    with open(os.path.join(REPO, "README.md")) as f:
        readme = f.read()
    files, scripts = {}, []
    for lang, body in re.findall(r"^```(\w*)\n(.*?)^```", readme, re.M | re.S):
        first = body.split("\n", 1)[0]
        m = re.match(r"-- (app/\S+)$", first)
        if m:
            files[m.group(1)] = body.split("\n", 1)[1]
        elif lang == "sh" and first.startswith("# in app/"):
            scripts.append(body)
    return files, scripts


@test(timeout=1500)
def readme_cabal_recipe_builds_and_runs(s):
    """README's Haskell quick start, copied out of README as a user would
    (cabal.project, app.cabal, Main.hs, the shell commands), next to this
    repository as ../eventlog-socket, with a cabal directory of its own (no
    ~/.cabal, no index), the socket moved into the test's directory. Its
    first commands, in a terminal (tmux): built offline, the program runs
    and `top` shows it by name to its end, with its last marker; q ends the
    commands with status 0. Its second: run again and recorded; the
    recording parses, holds the program's last marker and heap samples, and
    the .hp file has them too. Its third: a second recorded run, which
    leaves the first recording and its .hp as they were, and compare of the
    two, which finds the program's labels in both."""
    files, scripts = readme_recipe()
    expect(set(files) == {"app/cabal.project", "app/app.cabal", "app/Main.hs"}
           and len(scripts) == 3 and "eventlog-socket top" in scripts[0]
           and "eventlog-socket record" in scripts[1]
           and "eventlog-socket compare" in scripts[2],
           "README's recipe: files %s, scripts %r" % (sorted(files), scripts))
    for path, text in files.items():
        os.makedirs(os.path.dirname(s.path(path)), exist_ok=True)
        with open(s.path(path), "w") as f:
            f.write(text)
    os.symlink(REPO, s.path("eventlog-socket"))
    sock = s.path("app.sock")
    path = os.path.abspath(harness.BUILD) + os.pathsep + os.environ["PATH"]
    for i, script in enumerate(scripts):
        with open(s.path("recipe%d.sh" % i), "w") as f:
            f.write(script.replace("/tmp/app.sock", sock))

    # The first commands in a terminal: top needs one. The pane stays after
    # they end, with their exit status on screen.
    with open(s.path("watch.sh"), "w") as f:
        f.write("cd %s || exit 1\n"
                "for v in $(compgen -e | grep '^GHC_EVENTLOG_'); do unset \"$v\"; done\n"
                "export CABAL_DIR=%s PATH=%s LANG=C.UTF-8 TERM=xterm-256color\n"
                "bash -e %s\necho RECIPE-EXIT=$?\nsleep 600\n"
                % (shlex.quote(s.path("app")), shlex.quote(s.path("cabal-dir")),
                   shlex.quote(path), shlex.quote(s.path("recipe0.sh"))))
    t = Tmux(s, "bash %s" % shlex.quote(s.path("watch.sh")), width=120, height=40)
    m, screen = TmuxPane.wait(t, r"^ app \(pid \d+\)|RECIPE-EXIT=\d+", timeout=1200)
    expect(m is not None and m.group(0).startswith(" app"),
           "top never showed the program (the build's or top's last words):\n%s" % screen)
    t.wait(r"program exited", timeout=300, what='"program exited"')
    end = t.wait(r"round 15: 300000 keys", timeout=60, what="the program's last marker").string
    t.keys("q")
    t.wait(r"RECIPE-EXIT=0", what="the commands ending with status 0 after q")
    note("top, at the end: %s" % " / ".join(line.strip() for line in end.splitlines()[:2]))

    env = dict(os.environ, CABAL_DIR=s.path("cabal-dir"), PATH=path)
    env = {k: v for k, v in env.items() if not k.startswith("GHC_EVENTLOG_")}
    rc, text = run_recipe(s, "recipe1.sh", env)
    expect(rc == 0, "the recipe's commands: exit %s:\n%s" % (rc, text[-3000:]))
    with open(s.path("app/run-1.eventlog"), "rb") as f:
        first = f.read()
    summary = check_stream(s, first, "recipe")
    expect(any(m.startswith("round 15: 300000 keys") for _, m in summary.markers),
           "no last marker in the recording: %s" % summary.markers[-3:])
    expect(summary.samples, "no heap sample in the recording")
    with open(s.path("app/run-1.hp")) as f:
        hp = f.read()
    expect(hp.startswith("JOB ") and hp.count("BEGIN_SAMPLE") >= 2, "run-1.hp: %r" % hp[:300])
    note("recipe: %d markers, %d heap samples; %s" % (len(summary.markers), len(summary.samples),
                                                      text.strip().splitlines()[-1]))

    # The second run, and the two compared: the first recording and its
    # .hp are as they were (the RTS writes app.eventlog and app.hp at
    # every run), and compare finds the same labels in both.
    rc, text = run_recipe(s, "recipe2.sh", env)
    expect(rc == 0, "the second run and compare: exit %s:\n%s" % (rc, text[-3000:]))
    with open(s.path("app/run-1.eventlog"), "rb") as f:
        expect(f.read() == first, "the second run changed the first recording")
    with open(s.path("app/run-1.hp")) as f:
        expect(f.read() == hp, "the second run changed the first .hp")
    check_stream(s, open(s.path("app/run-2.eventlog"), "rb").read(), "recipe-2")
    lines = text.splitlines()
    head = [k for k, line in enumerate(lines) if line.startswith("label") and "peak A" in line]
    maps = [line for line in lines[head[0] + 1:] if "Bin" in line.split(" ", 1)[0]] if head else []
    expect(maps and "only in" not in maps[0],
           "compare's table lacks the map's nodes in both runs:\n%s" % text[-3000:])
    note("compare: %s" % maps[0].strip())


def run_recipe(s, script, env):
    """One of README's shell blocks, as a user runs it, in app/: its exit
    status and what it printed."""
    out = s.path(script + ".log")
    with open(out, "wb") as log:
        proc = subprocess.Popen(["bash", "-e", s.path(script)],
                                cwd=s.path("app"), env=env, stdin=subprocess.DEVNULL,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc = proc.wait(timeout=600)
        except subprocess.TimeoutExpired:
            rc = None
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
    with open(out, errors="replace") as f:
        return rc, f.read()


@test(timeout=300)
def no_eventlog_rts_refused_before_listening(s):
    """A C main linked without -eventlog (GHC < 9.4, whose plain RTS cannot
    log events): one line naming -eventlog, exit 1, no socket file and no
    "listening on"; not the RTS's usage text for -l."""
    if ghc_version() >= (9, 4):
        raise Skip("from GHC 9.4 on every RTS logs events (-eventlog is a no-op)")
    exe = s.path("fib-noeventlog")
    build = os.path.abspath(harness.BUILD)
    # Copies: GHC writes a C file's object next to it.
    for src in ("app/Main.hs", "cbits/fibber-c-main.c"):
        shutil.copy(os.path.join(REPO, "examples/fibber-c-main", src),
                    s.path(os.path.basename(src)))
    res = subprocess.run(
        [harness.HC, "-O", "-threaded", "-no-hs-main", "-I" + os.path.join(REPO, "include"),
         "-outputdir", s.path("noev-obj"), "-o", exe, s.path("Main.hs"),
         s.path("fibber-c-main.c"), os.path.join(build, "libeventlog-socket.a")]
        + subprocess.run(["pkg-config", "--libs", "libuv"], capture_output=True,
                         text=True).stdout.split(),
        capture_output=True, text=True, timeout=240)
    expect(res.returncode == 0, "build: %s" % res.stderr[-2000:])
    for var, value in (("GHC_EVENTLOG_UNIX_PATH", s.path("noev.sock")),
                       ("GHC_EVENTLOG_INET_PORT", "0")):
        env = {k: v for k, v in os.environ.items() if not k.startswith("GHC_EVENTLOG_")}
        env[var] = value
        run_ = subprocess.run([exe], env=env, capture_output=True, text=True, timeout=60,
                              cwd=s.dir)
        err = run_.stderr
        expect(run_.returncode == 1 and len(err.strip().splitlines()) == 1
               and "-eventlog" in err and "listening" not in err,
               "%s: exit %d, stderr %r" % (var, run_.returncode, err))
    expect(not os.path.exists(s.path("noev.sock")), "the socket file was created")


@test
def record_over_tcp_names_the_program(s):
    """`record` over loopback TCP without -o names the file PROGRAM-PID.eventlog
    also when the stream names the program only at exit (GHC 9.0): the pid
    and name come from the process that owns the other end."""
    p = Program(s, "probe", tcp_port=0)
    port = p.tcp_port()
    rc, _, err = run(s, ["record", "tcp:127.0.0.1:%d" % port, "--duration", "3"], 30)
    want = "probe-%d.eventlog" % p.proc.pid
    expect(rc == 0 and os.path.exists(s.path(want)),
           "exit %d, files %s, stderr %r" % (rc, sorted(os.listdir(s.dir)), err))
    p.cmd("quit")
    p.finish()


@test
def heap_job_line_as_the_rts_writes_it(s):
    """The .hp file's JOB line is the one the RTS writes in its own .hp for
    the same run (a non-profiled program: its name alone, no arguments)."""
    from test_heap import record_with_rts_files
    ghc_hp, log = record_with_rts_files(s, seconds=0.5)
    ours = s.path("ours.hp")
    rc, _, err = run(s, ["heap", log, "--hp", ours], 60)
    expect(rc == 0, "heap: exit %d, %r" % (rc, err))
    with open(ghc_hp) as f:
        theirs = f.readline()
    with open(ours) as f:
        mine = f.readline()
    expect(mine == theirs, "JOB: ours %r, the RTS's %r" % (mine, theirs))


def terminal_html(ansi, cols, rows):
    """A page that shows a tmux capture (capture-pane -e: text with SGR
    escapes) as the terminal did: bold, dim and reverse video."""
    import html
    out, style = [], set()
    pos = 0
    for m in re.finditer(r"\x1b\[([0-9;]*)m", ansi):
        out.append((ansi[pos:m.start()], frozenset(style)))
        for code in (m.group(1) or "0").split(";"):
            code = int(code or 0)
            if code == 0:
                style.clear()
            elif code in (1, 2, 7):
                style.add(code)
            elif code == 22:
                style.discard(1)
                style.discard(2)
            elif code == 27:
                style.discard(7)
        pos = m.end()
    out.append((ansi[pos:], frozenset(style)))
    spans = []
    for text, st in out:
        if not text:
            continue
        cls = " ".join({1: "b", 2: "d", 7: "r"}[c] for c in sorted(st))
        spans.append('<span class="%s">%s</span>' % (cls, html.escape(text)) if cls
                     else html.escape(text))
    return ("<!DOCTYPE html><meta charset=utf-8><style>"
            "body{margin:0;background:#1d1f21}"
            "pre{margin:0;padding:10px;color:#d8d8d8;background:#1d1f21;"
            "font:14px/1.25 'DejaVu Sans Mono',monospace;width:%dch;height:%dem}"
            ".b{font-weight:bold;color:#fff}.d{color:#8a8a8a}"
            ".r{background:#d8d8d8;color:#1d1f21}</style><pre>%s</pre>"
            % (cols, int(rows * 1.25) + 1, "".join(spans)))


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    expect(head[:8] == b"\x89PNG\r\n\x1a\n", "%s is no PNG" % path)
    return struct.unpack(">II", head[16:24])


# README's pictures record what they show: a PNG text chunk under this key
# lists the view's sections, so that a test can tell a picture made before
# the view gained or lost one.
SECTIONS_KEY = "eventlog-socket sections"


def png_chunks(data):
    """(type, payload) of each chunk of a PNG."""
    pos, out = 8, []
    while pos + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        out.append((kind, data[pos + 8:pos + 8 + n]))
        pos += 12 + n
    return out


def png_sections(path):
    """The sections a picture says it shows, or None."""
    with open(path, "rb") as f:
        for kind, body in png_chunks(f.read()):
            key, _, value = body.partition(b"\0")
            if kind == b"tEXt" and key.decode("latin-1") == SECTIONS_KEY:
                return value.decode("latin-1").split("|")
    return None


def with_sections(data, sections):
    """The PNG `data` with a text chunk listing `sections`, before IEND."""
    body = SECTIONS_KEY.encode("latin-1") + b"\0" + "|".join(sections).encode("latin-1")
    chunk = struct.pack(">I", len(body)) + b"tEXt" + body
    chunk += struct.pack(">I", zlib.crc32(b"tEXt" + body) & 0xffffffff)
    end = data.rindex(b"IEND") - 4
    return data[:end] + chunk + data[end:]


def top_sections(ansi):
    """top's section names: the bold words that open a line of its screen."""
    out = []
    for line in ansi.splitlines():
        m = re.match(r"\x1b\[1m([A-Za-z][^\x1b]*?)\s*\x1b\[", line)
        if m:
            out.append(m.group(1).strip())
    return out


@test(timeout=240)
def readme_screenshots(s):
    """Screenshots of `top` (tmux, its screen drawn as a page) and of the
    page of `serve`, on a busy program with -hT and markers; each PNG
    records the sections it shows. Where the program is live (GHC 9.2+),
    README's pictures (docs/top.png, docs/serve.png) must show the
    sections the views show now: a view that gained or lost one fails
    the test until `make screenshots` makes them again (ES_SCREENSHOTS=DIR,
    relative to the repository, writes them there; the target runs this
    test in the GHC 9.6 chroot with DIR docs)."""
    if chromium_path() is None:
        raise Skip("Chromium is not installed")
    p, _ = serve(s, "shot", ["--busy"], rts=["-hT", "-i0.5"])
    sock = s.path("shot.sock")
    cols, rows = 110, 36
    t = Tmux(s, top_command(sock), width=cols, height=rows)
    t.wait(r"^ probe \(pid \d+\)", what="the program's name")
    srv, url = start_serve(s, sock)
    for i in range(12):
        p.cmd("marker step %d" % i)
        time.sleep(0.5)
    live = ghc_version() >= (9, 2)
    if live:
        t.wait(r"^Census\s+#\d+", what="a census", timeout=30)
    ansi = t.run("capture-pane", "-e", "-p", "-t", "top").stdout
    shots = {}
    b = Browser(s, width=1280, height=900)
    page = s.path("top.html")
    with open(page, "w") as f:
        f.write(terminal_html(ansi, cols, rows))
    b.goto("file://" + page)
    box = b.js("(function(){var r=document.querySelector('pre').getBoundingClientRect();"
               "return [r.width, r.height];})()")
    shots["top.png"] = b.call("Page.captureScreenshot", {
        "format": "png", "clip": {"x": 0, "y": 0, "width": box[0], "height": box[1],
                                  "scale": 1}}, session=b.session)["data"]
    b.goto(url)
    b.wait_js("document.getElementById('program').textContent === 'probe'",
              what="the program's name")
    if live:
        b.wait_js("+document.getElementById('census-count').textContent >= 2", timeout=60,
                  what="censuses on the page")
    time.sleep(1.5)
    shots["serve.png"] = b.call("Page.captureScreenshot", {
        "format": "png", "clip": {"x": 0, "y": 0, "width": 1280, "height": 1500, "scale": 1},
        "captureBeyondViewport": True}, session=b.session)["data"]
    sections = {"top.png": top_sections(ansi),
                "serve.png": b.js("Array.from(document.querySelectorAll('h2'))"
                                  ".filter(function(e){return e.offsetParent !== null;})"
                                  ".map(function(e){return e.textContent.trim();})")}
    dest = os.environ.get("ES_SCREENSHOTS")
    stale = []
    for name, data in shots.items():
        path = s.path(name)
        with open(path, "wb") as f:
            f.write(with_sections(base64.b64decode(data), sections[name]))
        w, h = png_size(path)
        note("%s: %dx%d, sections %s" % (name, w, h, sections[name]))
        expect(w >= 600 and h >= 400, "%s is %dx%d" % (name, w, h))
        if dest:
            os.makedirs(os.path.join(REPO, dest), exist_ok=True)
            shutil.copy(path, os.path.join(REPO, dest, name))
        elif png_sections(os.path.join(REPO, "docs", name)) != sections[name]:
            stale.append("docs/%s shows %s, the view now %s" % (
                name, png_sections(os.path.join(REPO, "docs", name)), sections[name]))
    # GHC 9.0 sends censuses only at exit: its views differ from README's,
    # which are made where the program is live.
    if stale and live:
        raise harness.TestFailure("README's pictures are stale: %s; make them again with "
                                  "`make screenshots`" % "; ".join(stale))
    for line in stale:
        note("not live here, so not judged: %s" % line)
    srv.signal(signal.SIGTERM)
    srv.wait()
    p.cmd("quit")
    p.finish()


@test(timeout=120)
def haskell_start_refusal_names_the_setting(s):
    """A bad setting from a Haskell start (startFromEnv, startWith): the
    exception's message names the variable, the value and what is taken,
    and the library's own line about it is on stderr before the
    exception's, whole, every time (it came from another thread, after the
    exception or inside its line)."""
    cases = (("env", [], {"GHC_EVENTLOG_RETAIN": "1.5M"},
              'GHC_EVENTLOG_RETAIN="1.5M" is not a size'),
             ("with", [s.path("w.sock"), str(1 << 20), "0", s.path("no-dir/app-%p.eventlog")], {},
              "cannot be used: the directory %s" % s.path("no-dir")))
    for how, args, env, words in cases:
        for i in range(6):
            sock = s.path("hs%d.sock" % i)
            p = Program(s, "hsstart", [how] + args, unix=sock, env=env, stdin=False)
            rc, _ = p.wait_rusage(60)
            lines = p.stderr().splitlines()
            mine = [k for k, line in enumerate(lines)
                    if line.startswith("eventlog-socket: ") and words in line]
            theirs = [k for k, line in enumerate(lines) if "user error (eventlog-socket: " in line]
            expect(rc == 1 and mine and theirs and mine[0] < theirs[0],
                   "%s, run %d: exit %s; the library's line first, whole? stderr:\n%s"
                   % (how, i, rc, p.stderr()))
            expect(words in lines[theirs[0]],
                   "%s: the exception does not say why: %s" % (how, lines[theirs[0]]))
    note(lines[theirs[0]])
