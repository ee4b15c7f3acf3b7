# SPDX-License-Identifier: BSD-3-Clause
"""The files the `eventlog-socket` command writes: a recording on a disk
with one page free still parses (header and end marker), `record`'s
default name never runs out when names are planted, every file the
command creates is its user's alone (mode 0600 whatever the umask allows),
every name it makes itself (serve --record's FILE.N, record's and watch's)
is created anew, never through a planted link,
and a stream whose block marker claims 4 GiB is refused once its block
outgrows the largest a program sends, by `record`, `serve --record` and
`watch` alike, in bounded memory."""

import os
import re
import signal
import stat
import struct
import subprocess
import time

import fakeprog as fp
import harness
from client_cmd import Cmd
from harness import Skip, expect, note, test
from test_trust import rss_kib, start


class OnePageDisk:
    """A 64 KiB tmpfs with exactly one 4 KiB page free (root only),
    unmounted however the test ends."""

    def __init__(self, s):
        if os.geteuid() != 0:
            raise Skip("mounting a tmpfs needs root")
        self.dir = s.path("one-page")
        os.mkdir(self.dir)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", self.dir],
                           capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            raise Skip("cannot mount a tmpfs: %s" % r.stderr.strip())
        with open(os.path.join(self.dir, "filler"), "wb") as f:
            f.write(b"x" * (15 * 4096))
        free = os.statvfs(self.dir).f_bavail
        if free != 1:
            self.__exit__()
            raise Skip("the tmpfs has %d pages free, not 1" % free)

    def __enter__(self):
        return self.dir

    def __exit__(self, *exc):
        subprocess.run(["umount", "-l", self.dir], capture_output=True, timeout=30)


def whole_program(blocks=3):
    """A program's eventlog, sent in one piece: its header, `blocks` blocks
    of 8 KiB of messages, and the end marker."""
    bs = [fp.block(fp.program([b"fake"], 4242) if i == 0 else
                   [(fp.USER_MSG, 10 * i + k, b"m" * 800) for k in range(10)])
          for i in range(blocks)]
    return fp.eventlog(*bs)


def header_and_end(s, path, err, name):
    data = open(path, "rb").read()
    expect(data == fp.header() + fp.END,
           "%s kept %d bytes, not the header and an end marker (%d): %s"
           % (name, len(data), len(fp.header()) + 2, err[-400:]))
    harness.check_stream(s, data, name)


@test(ghc_free=True)
def record_full_disk_one_page_keeps_a_file(s):
    """record -o onto a disk with one 4 KiB page free, of a stream that
    arrives in one piece: exit 2, and the file holds the header and an end
    marker, which parse (it was left empty: a first write of the header and
    blocks together failed part-way)."""
    sock = s.path("p.sock")
    fp.start(s, sock, whole_program(), close=True)
    with OnePageDisk(s) as d:
        out = os.path.join(d, "one.eventlog")
        rc, _, err = Cmd(s, ["record", "unix:" + sock, "-o", out]).wait(30)
        expect(rc == 2 and "No space left" in err, "record exited %d: %s" % (rc, err))
        header_and_end(s, out, err, "record-one-page")


@test(ghc_free=True)
def serve_record_full_disk_one_page_keeps_a_file(s):
    """serve --record onto a disk with one page free: the recording stops
    with a message, the file holds the header and an end marker; serve
    exits 2 at Ctrl-C."""
    sock = s.path("sp.sock")
    fp.start(s, sock, whole_program())
    with OnePageDisk(s) as d:
        out = os.path.join(d, "serve.eventlog")
        srv, _ = start(s, sock, "127.0.0.1:0", ["--record", out])
        deadline = time.monotonic() + 30
        while "cannot write the recording" not in srv.stderr():
            expect(time.monotonic() < deadline, "serve said nothing: %r" % srv.stderr())
            time.sleep(0.1)
        srv.signal(signal.SIGINT)
        rc, _, err = srv.wait(30)
        expect(rc == 2, "serve exited %d: %s" % (rc, err))
        header_and_end(s, out, err, "serve-one-page")


@test(ghc_free=True)
def record_default_name_never_runs_out(s):
    """Names fake-4242.eventlog and .1 to .99 planted where `record` writes
    its default name: it records into another free name, which it names,
    mode 0600 (it gave up with nothing recorded, exit 2)."""
    sock = s.path("n.sock")
    fp.start(s, sock, whole_program(), close=True)
    d = s.path("names")
    os.mkdir(d)
    for i in range(100):
        name = "fake-4242.eventlog" if i == 0 else "fake-4242.%d.eventlog" % i
        with open(os.path.join(d, name), "w") as f:
            f.write("planted\n")
    rc, _, err = Cmd(s, ["record", "unix:" + sock], cwd=d).wait(30)
    m = re.search(r"recorded (fake-4242\.\w{6}\.eventlog) ", err)
    expect(rc == 0 and m, "record exited %d: %s" % (rc, err))
    path = os.path.join(d, m.group(1))
    harness.check_stream(s, open(path, "rb").read(), "past-99")
    expect(stat.S_IMODE(os.stat(path).st_mode) == 0o600, "mode %o" % os.stat(path).st_mode)
    expect(all(open(os.path.join(d, n)).read() == "planted\n" for n in os.listdir(d)
               if n != m.group(1)), "a planted file was written")
    note("recorded into %s" % m.group(1))


def census_log(s):
    path = s.path("census.eventlog")
    with open(path, "wb") as f:
        f.write(fp.eventlog(fp.block(fp.program([b"c"], 9) + fp.heap_profile()
                                     + fp.census(100, [(b"THUNK", 64)]) + fp.gc(150)
                                     + fp.census(200, [(b"THUNK", 96)]))))
    return path


@test(ghc_free=True)
def command_files_are_its_users_alone(s):
    """With umask 022, every file the command creates (record -o and its
    default name, serve --record, report and the two-run report, heap --hp
    and --csv, table and compare --csv) has mode 0600: others cannot read
    the program's eventlog or what is made of it (they were 0644)."""
    old = os.umask(0o022)
    try:
        sock = s.path("f.sock")
        fp.start(s, sock, whole_program())
        log = census_log(s)
        out = {n: s.path(n) for n in ("rec.eventlog", "serve.eventlog", "r.html", "two.html",
                                      "h.hp", "h.csv", "t.csv", "c.csv")}
        runs = [["record", "unix:" + sock, "-o", out["rec.eventlog"], "--duration", "1"],
                ["report", log, "-o", out["r.html"]], ["report", log, log, "-o", out["two.html"]],
                ["heap", log, "--hp", out["h.hp"]], ["heap", log, "--csv", out["h.csv"]],
                ["table", "census", log, "--csv", out["t.csv"]],
                ["compare", log, log, "--csv", out["c.csv"]]]
        for args in runs:
            rc, _, err = Cmd(s, args).wait(30)
            expect(rc in (0, 1), "%s: exit %d, %s" % (" ".join(args[:2]), rc, err))
        srv, _ = start(s, sock, "127.0.0.1:0", ["--record", out["serve.eventlog"]])
        d = s.path("default")
        os.mkdir(d)
        rc, _, err = Cmd(s, ["record", "unix:" + sock, "--duration", "1"], cwd=d).wait(30)
        out["default name"] = os.path.join(d, os.listdir(d)[0])
        srv.signal(signal.SIGINT)
        srv.wait(30)
        modes = {n: stat.S_IMODE(os.stat(p).st_mode) for n, p in out.items()}
    finally:
        os.umask(old)
    loose = {n: "%o" % m for n, m in modes.items() if m & 0o077}
    expect(not loose, "files others may read: %s" % loose)
    note("%d files, all 0600" % len(modes))


def long_block_stream(more=b""):
    """A program that sends a block (and `more`), then a block marker
    claiming 4 GiB and messages that keep coming."""
    head = fp.header() + fp.block(fp.program([b"long"], 77) + fp.gc(5)) + more
    head += struct.pack(">HQIQH", fp.BLOCK, 10000000, 0xFFFFFFF0, 20000000, 0)
    return head, fp.event(fp.USER_MSG, 11, b"x" * 4000)


@test(ghc_free=True)
def record_refuses_a_block_of_4_gib(s):
    """A block marker claiming 4 GiB, then 64 MiB of messages: record
    stops once the block passes 16 MiB (it held it all, waiting for the
    4 GiB), exit 2, saying which block and why; the file ends after the
    block before it, with the cut notice, and parses."""
    sock = s.path("l.sock")
    head, tail = long_block_stream()
    fp.start(s, sock, head, tail=tail, tail_bytes=64 << 20)
    out = s.path("long.eventlog")
    rc, _, err = Cmd(s, ["record", "unix:" + sock, "-o", out]).wait(30)
    expect(rc == 2 and "malformed stream" in err and "4096.0 MiB" in err,
           "record exited %d: %s" % (rc, err))
    data = open(out, "rb").read()
    expect(data.startswith(head[:-24]), "the block before is not kept whole")
    harness.check_stream(s, data, "long-block")
    note("record: %s" % err.strip().splitlines()[-1][:160])


@test(ghc_free=True)
def serve_refuses_a_block_of_4_gib(s):
    """The same stream to serve --record: the recording stops with the
    same message and parses, serve goes on serving the page, and its
    memory does not grow with the block (96 MiB of it sent: it held all of
    it)."""
    sock = s.path("sl.sock")
    head, tail = long_block_stream()
    fp.start(s, sock, head, tail=tail, tail_bytes=96 << 20)
    out = s.path("serve-long.eventlog")
    srv, url = start(s, sock, "127.0.0.1:0", ["--record", out])
    deadline = time.monotonic() + 60
    while "malformed stream" not in srv.stderr():
        expect(time.monotonic() < deadline and srv.proc.poll() is None,
               "serve said nothing: %r" % srv.stderr())
        time.sleep(0.1)
    time.sleep(2)  # the rest of the 96 MiB arrives meanwhile; not an assertion
    rss = rss_kib(srv.proc.pid)
    expect(rss < 48 * 1024, "serve holds %d KiB after 96 MiB of one block" % rss)
    harness.check_stream(s, open(out, "rb").read(), "serve-long-block")
    srv.signal(signal.SIGINT)
    rc, _, err = srv.wait(30)
    expect(rc == 2, "serve exited %d: %s" % (rc, err))
    note("serve: %d KiB after 96 MiB of one block" % rss)


@test(serial=True, ghc_free=True, timeout=180)
def watch_refuses_a_block_of_4_gib(s):
    """The same stream to watch, after a marker its condition fires on:
    watch refuses the block once it passes 16 MiB, as record does (it held
    every byte of it, waiting for the 4 GiB: 1.5 GiB for 1.5 GiB sent in
    the audit), exits 2 saying which block and why, and its peak memory
    stays near its --memory (8M here: under 48 MiB with the 16 MiB block,
    where 96 MiB of the block are sent); the file of the firing ends after
    the block before, with the cut notice, and parses."""
    sock = s.path("wl.sock")
    head, tail = long_block_stream(fp.block([(fp.MARKER, 6, b"go")]))
    fp.start(s, sock, head, tail=tail, tail_bytes=96 << 20)
    d = s.path("shots")
    os.mkdir(d)
    w = Cmd(s, ["watch", "unix:" + sock, "--trigger", "marker~^go$", "--memory", "8M",
                "-o", d])
    rc, peak, err = w.wait_rusage(90)
    note("watch: exit %d, peak %d KiB; %s" % (rc, peak, err.strip().splitlines()[-1][:160]))
    expect(rc == 2 and "malformed stream" in err and "4096.0 MiB" in err,
           "watch exited %d: %s" % (rc, err))
    expect(peak < 48 * 1024, "watch --memory 8M peaked at %d KiB" % peak)
    files = os.listdir(d)
    expect(len(files) == 1, "files written: %s" % files)
    summary = harness.check_stream(s, open(os.path.join(d, files[0]), "rb").read(), "watch-long")
    expect((6000000, "go") in summary.markers,
           "the firing's marker is not in the file: %s" % summary.markers)
    expect(any("malformed stream" in m for _, m in summary.messages),
           "no cut notice saying why: %s" % summary.messages[-3:])


def marked_program(name, pid, marker):
    """A program's whole eventlog, sent in one piece: who it is and one
    marker (at 3 ms)."""
    return fp.eventlog(fp.block(fp.program([name], pid) + [(fp.MARKER, 3, marker)]))


def links_to(victim, paths):
    for p in paths:
        os.symlink(victim, p)


def markers_in(s, path):
    with open(path, "rb") as f:
        return [m for _, m in harness.check_stream(s, f.read(), os.path.basename(path)).markers]


def serve_two_runs_into(s, rec):
    """serve --retry --record REC, shown two runs (two fake programs, one
    after the other at the same socket); returns serve's stderr."""
    sock = s.path("runs.sock")
    first = fp.start(s, sock, marked_program(b"runs", 101, b"run one"), close=True)
    srv, _ = start(s, sock, "127.0.0.1:0", ["--retry", "--record", rec])
    for n, program in ((1, None), (2, marked_program(b"runs", 102, b"run two"))):
        if program is not None:
            s.kill(first)
            os.unlink(sock)
            fp.start(s, sock, program, close=True)
        deadline = time.monotonic() + 60
        while srv.stderr().count("the program exited") < n:
            expect(time.monotonic() < deadline and srv.proc.poll() is None,
                   "serve did not show run %d: %r" % (n, srv.stderr()))
            time.sleep(0.1)
    srv.signal(signal.SIGINT)
    rc, _, err = srv.wait(30)
    expect(rc == 0, "serve exited %d: %s" % (rc, err))
    return err


@test(ghc_free=True, timeout=180)
def numbered_files_never_follow_a_link(s):
    """Every name the command makes itself is created anew, 0600, never
    through a link: `serve --retry --record FILE` with FILE.2 planted as a
    link to another file of the user's records run 2 into FILE.3 and says
    so, the file linked to untouched (it was overwritten with run 2);
    `record`'s default name and `watch`'s files pass over links planted at
    theirs (NAME and NAME.1) for NAME.2."""
    victim = s.path("victim")
    with open(victim, "w") as f:
        f.write("precious\n")
    rec = s.path("runs.eventlog")
    links_to(victim, [rec + ".2"])
    err = serve_two_runs_into(s, rec)
    expect(open(victim, "rb").read() == b"precious\n", "serve wrote through FILE.2's link: %r"
           % open(victim, "rb").read()[:40])
    expect(os.path.islink(rec + ".2"), "the planted link was replaced")
    first, second = markers_in(s, rec), markers_in(s, rec + ".3")
    expect(first == ["run one"] and second == ["run two"],
           "run 1 in FILE and run 2 in FILE.3: %s, %s" % (first, second))
    expect("run 2 is recorded in %s.3: %s.2 is taken" % (rec, rec) in err,
           "serve does not say where run 2 went: %r" % err)
    made = {"serve": rec + ".3"}

    d = s.path("default")
    os.mkdir(d)
    links_to(victim, [os.path.join(d, "named-4242.eventlog"),
                      os.path.join(d, "named-4242.1.eventlog")])
    sock = s.path("named.sock")
    fp.start(s, sock, marked_program(b"named", 4242, b"named"), close=True)
    rc, _, err = Cmd(s, ["record", "unix:" + sock], cwd=d).wait(30)
    made["record"] = os.path.join(d, "named-4242.2.eventlog")
    expect(rc == 0 and os.path.exists(made["record"]), "record exited %d: %s" % (rc, err))

    w = s.path("shots")
    os.mkdir(w)
    now = time.time()
    for t in range(int(now) - 2, int(now) + 120):
        stem = os.path.join(w, "shot-5151-" + time.strftime("%Y%m%d-%H%M%S", time.localtime(t)))
        links_to(victim, [stem + ".eventlog", stem + ".1.eventlog"])
    sock = s.path("shot.sock")
    fp.start(s, sock, marked_program(b"shot", 5151, b"go"), close=True)
    rc, _, err = Cmd(s, ["watch", "unix:" + sock, "--trigger", "marker~^go$", "-o", w]).wait(30)
    files = [n for n in os.listdir(w) if not os.path.islink(os.path.join(w, n))]
    expect(rc == 0 and len(files) == 1 and files[0].endswith(".2.eventlog"),
           "watch exited %d with %s: %s" % (rc, files, err))
    made["watch"] = os.path.join(w, files[0])

    expect(open(victim, "rb").read() == b"precious\n", "a link was written through")
    for who, path in made.items():
        expect(not os.path.islink(path) and stat.S_IMODE(os.stat(path).st_mode) == 0o600,
               "%s's file %s: mode %o" % (who, path, os.lstat(path).st_mode))
        expect(markers_in(s, path) != [], "%s's file holds no marker" % who)
    note("files made past the links: %s" % ", ".join(os.path.basename(p) for p in made.values()))
