# SPDX-License-Identifier: BSD-3-Clause
"""`eventlog-socket profile`: time profiles out of the cost-centre samples,
judged against the RTS's own .prof of the same run, ghc-events' count of the
samples, pprof's profile.proto decoded by protoc (Debian's
golang-github-google-pprof-dev and protobuf-compiler), and, on a live
program, by what it leaves running."""

import fcntl
import gzip
import json
import os
import re
import shutil
import subprocess
import time
import urllib.request

import harness
from cdp import Browser
from harness import (Program, Skip, check_stream, expect, ghc_version, note, serve, test,
                     upstream)
from test_metrics import (free_port, prom_query, scrape, start_metrics, start_prometheus,
                          value, wait_for)
from test_table import pandas_run
from test_top import Tmux, top_command
from test_control import profiled_probe

# The RTS's own cost centres, which a .prof file's %time leaves out (MAIN
# stays: it has time of its own).
BUILTIN = {"GC", "IDLE", "SYSTEM", "OVERHEAD_of", "DONT_CARE", "PINNED"}
# How the client names a cost centre it has no definition (event 161) for
# (client/profile/prof.c, client/model/costs.c): a frame no one can read.
PLACEHOLDER = re.compile(r"^cost centre \d+$")
# A cost centre's name as GHC prints it: MODULE.LABEL ("Main.heavy",
# "GHC.Event.Thread.CAF"); the RTS's own go by their label alone.
NAMED = re.compile(r"^[A-Z][\w']*(\.[A-Z][\w']*)*\.[^\s;]+$")
PROTO = "/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto"
# speedscope's own viewer (its built files, from npm), to open our files in.
SPEEDSCOPE = ("speedscope", "1.25.0",
              "2831f1e0d26df914b477e522d78b8485511495a6af81a0b88158f8b48f9e0d03")


def client_path():
    return os.path.abspath(os.path.join(harness.BUILD, "eventlog-socket"))


def run_profile(*args, timeout=120):
    return subprocess.run([client_path(), "profile", *args], capture_output=True, text=True,
                          timeout=timeout)


def profiled_program(threaded=False):
    """tests/programs/profiled built with -prof -fprof-auto (BUILD/profiled,
    or BUILD/profiled-thr with -threaded; rebuilt when its source changed);
    skip where this GHC has no profiling libraries."""
    root = harness.ROOT
    name = "profiled-thr" if threaded else "profiled"
    exe = os.path.abspath(os.path.join(harness.BUILD, name))
    src = os.path.join(root, "tests/programs/profiled/Main.hs")
    with open(exe + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(exe) and os.path.getmtime(exe) > os.path.getmtime(src):
            return exe
        major, minor = ghc_version()
        argv = ([harness.HC, "-prof", "-fprof-auto-top", "-O", "-rtsopts"] +
                (["-threaded"] if threaded else []) +
                (["-eventlog"] if (major, minor) < (9, 4) else []) +
                ["-outputdir", os.path.join(harness.BUILD, "hs", name), "-o", exe + ".new", src])
        res = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=root)
        if res.returncode != 0:
            out = res.stdout + res.stderr
            if "profiling libraries" in out:
                raise Skip("GHC %d.%d has no profiling libraries (apt-get install ghc-prof)"
                           % (major, minor))
            raise harness.TestFailure("ghc -prof failed:\n" + out)
        os.rename(exe + ".new", exe)
        return exe


def run_with_rts_files(s, rts, rounds=20, threaded=False):
    """Run the profiled program in the scope's directory with `rts`: the
    RTS writes PROGRAM.eventlog and PROGRAM.prof there; return their
    paths."""
    exe = profiled_program(threaded)
    p = s.spawn([exe, str(rounds), "+RTS", *rts, "-RTS"], cwd=s.dir, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE)
    _, err = p.communicate(timeout=120)
    expect(p.returncode == 0, "the profiled program failed: %r" % err)
    name = os.path.basename(exe)
    return os.path.join(s.dir, name + ".eventlog"), os.path.join(s.dir, name + ".prof")


def read_folded(path):
    """{stack (a tuple of frames, root first): samples}."""
    stacks = {}
    with open(path) as f:
        for line in f:
            frames, n = line.rstrip("\n").rsplit(" ", 1)
            key = tuple(frames.split(";"))
            expect(key not in stacks, "%s: the stack %r twice" % (path, frames))
            stacks[key] = int(n)
    return stacks


def unnamed_frames(stacks):
    """The frames of `stacks` that are not a cost centre's name: numbered
    placeholders, or anything neither MODULE.LABEL nor the RTS's own."""
    frames = {f for k in stacks for f in k}
    return sorted(f for f in frames if PLACEHOLDER.match(f)
                  or not (f in BUILTIN or f == "MAIN" or NAMED.match(f)))


def read_prof_tree(path):
    """The .prof file's tree: a list of (path of "Module.name" from below
    MAIN, individual %time, inherited %time), and the total ticks."""
    with open(path) as f:
        lines = f.read().splitlines()
    ticks = None
    for line in lines:
        m = re.search(r"\((\d+) ticks @", line)
        if m:
            ticks = int(m.group(1))
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("COST CENTRE")
                 and " no. " in line)
    nodes, stack = [], []
    for line in lines[start + 1:]:
        if not line.strip():
            continue
        depth = len(line) - len(line.lstrip(" "))
        toks = line.split()
        name, module = toks[0], toks[1]
        ind_time, inh_time = float(toks[-4]), float(toks[-2])
        del stack[depth:]
        stack.append("%s.%s" % (module, name))
        # stack[0] is MAIN.MAIN, the root every sample's stack leaves out.
        nodes.append((tuple(stack[1:]), ind_time, inh_time))
    return nodes, ticks


def shares(stacks):
    """Innermost and inherited shares (%) of each stack path, over the
    samples not in the RTS's own cost centres."""
    counted = {k: n for k, n in stacks.items() if k[-1] not in BUILTIN}
    total = sum(counted.values())
    inner, inherited = {}, {}
    for k, n in counted.items():
        key = () if k == ("MAIN",) else k
        inner[key] = inner.get(key, 0) + 100.0 * n / total
        for i in range(len(key) + 1):
            inherited[key[:i]] = inherited.get(key[:i], 0) + 100.0 * n / total
    return inner, inherited, total


def ghc_events_samples(path):
    """The cost-centre samples ghc-events counts in the eventlog."""
    out = subprocess.run(["ghc-events", "show", path], capture_output=True, text=True,
                         timeout=120).stdout
    return sum(1 for line in out.splitlines() if "prof sample" in line)


def check_against_prof(s, rts, threaded=False):
    """The RTS reads a capability's running stack twice a tick, once for the
    .prof file and once for the event (rts/Proftimer.c, handleProfTick),
    from its ticker thread while the capability runs on: where the stack
    changes all the time (a function and the lambda it folds with, under
    -fprof-auto), the two can split a hot loop differently. So the program
    is built with -fprof-auto-top: its stacks change a few times a run."""
    log, prof = run_with_rts_files(s, rts, threaded=threaded)
    folded = s.path("t.folded")
    res = run_profile(log, "-o", folded)
    expect(res.returncode == 0, "profile failed (%d): %s" % (res.returncode, res.stderr))
    stacks = read_folded(folded)
    nodes, ticks = read_prof_tree(prof)
    inner, inherited, total = shares(stacks)
    events = ghc_events_samples(log)
    note("%d samples (%d the RTS's own); ghc-events counts %d; the .prof file %s ticks"
         % (sum(stacks.values()), sum(stacks.values()) - total, events, ticks))
    held = sum(stacks.values())
    expect(held == events, "the folded file holds %d samples, ghc-events counts %d"
           % (held, events))
    expect(total == ticks, "%d samples outside the RTS's own cost centres, the .prof file "
           "counts %s ticks" % (total, ticks))
    checked = 0
    for path, ind, inh in nodes:
        ours_ind, ours_inh = inner.get(path, 0.0), inherited.get(path, 0.0)
        expect(abs(ours_ind - ind) <= 1.0 and abs(ours_inh - inh) <= 1.0,
               "%s: .prof says %.1f %% individual, %.1f %% inherited; the profile %.1f, %.1f"
               % (";".join(path) or "MAIN", ind, inh, ours_ind, ours_inh))
        checked += ind > 1
    expect(checked >= 2, "only %d cost centres with time in the .prof file" % checked)
    heavy = inherited.get(("Main.main", "Main.heavy"), 0)
    expect(50 < heavy < 95, "heavy's inherited share %.1f %%: the program spends about "
           "three quarters there" % heavy)
    return log, stacks


@test(timeout=300)
def profile_matches_the_rts_prof(s):
    """A recording of a profiled program run with +RTS -p -l: each stack's
    share of samples, innermost and inherited, equals the RTS's own .prof
    file's %time within one point; the folded file holds every sample
    ghc-events counts."""
    check_against_prof(s, ["-p", "-l"])


@test(timeout=300)
def profile_leaves_out_idle_capabilities(s):
    """The threaded RTS on two capabilities, one of them idle: its IDLE
    samples are in the profile as IDLE, and the shares without them still
    equal the .prof file's."""
    _, stacks = check_against_prof(s, ["-p", "-l", "-N2"], threaded=True)
    idle = sum(n for k, n in stacks.items() if k[-1] == "IDLE")
    note("IDLE samples: %d" % idle)
    expect(idle > 0, "no IDLE samples from the idle capability: %r" % sorted(stacks)[:5])


def protoc_decode(path):
    if not os.path.exists(PROTO):
        raise harness.TestFailure("%s is missing (apt-get install golang-github-google-pprof-dev)"
                                  % PROTO)
    with gzip.open(path) as f:
        data = f.read()
    res = subprocess.run(["protoc", "--decode=perftools.profiles.Profile",
                          "-I" + os.path.dirname(PROTO), PROTO], input=data,
                         capture_output=True, timeout=60)
    expect(res.returncode == 0, "protoc cannot decode %s: %s" % (path, res.stderr))
    return res.stdout.decode()


def pprof_stacks(text):
    """{stack of names, root first: (samples, cpu ns)} from protoc's text."""
    strings = re.findall(r'^string_table: "(.*)"$', text, re.M)
    funcs = {int(i): int(n) for i, n in re.findall(
        r"^function \{\n  id: (\d+)\n  name: (\d+)", text, re.M)}
    locs = {int(i): int(f) for i, f in re.findall(
        r"^location \{\n  id: (\d+)\n  line \{\n    function_id: (\d+)", text, re.M)}
    out = {}
    for block in re.findall(r"^sample \{\n(.*?)^\}", text, re.M | re.S):
        ids = [int(x) for x in re.findall(r"location_id: (\d+)", block)]
        vals = [int(x) for x in re.findall(r"value: (\d+)", block)]
        names = tuple(strings[funcs[locs[i]]].replace("\\\\", "\\") for i in reversed(ids))
        out[names] = tuple(vals)
    return out, text


@test(timeout=300)
def profile_files_read_by_their_tools(s):
    """One recording in the three formats: the .pb.gz decodes with pprof's
    profile.proto through protoc, with the folded file's stacks and counts
    and the tick as its period; the speedscope file's samples weigh the
    samples' CPU time, per capability."""
    log, _ = run_with_rts_files(s, ["-p", "-l"])
    outs = {ext: s.path("t" + ext) for ext in (".folded", ".pb.gz", ".speedscope.json")}
    for out in outs.values():
        res = run_profile(log, "-o", out)
        expect(res.returncode == 0, "profile -o %s failed: %s" % (out, res.stderr))
    folded = read_folded(outs[".folded"])
    pp, text = pprof_stacks(protoc_decode(outs[".pb.gz"]))
    expect({k: v[0] for k, v in pp.items()} == folded,
           "pprof's stacks differ from the folded file's: %r vs %r" % (pp, folded))
    period = int(re.search(r"^period: (\d+)", text, re.M).group(1))
    expect(all(cpu == n * period for n, cpu in pp.values()),
           "cpu values are not samples x period %d: %r" % (period, pp))
    expect(re.search(r'string_table: "cpu"', text) and re.search(r'string_table: "samples"', text),
           "sample types samples/cpu missing")
    with open(outs[".speedscope.json"]) as f:
        doc = json.load(f)
    frames = [fr["name"] for fr in doc["shared"]["frames"]]
    weight = sum(sum(p["weights"]) for p in doc["profiles"])
    total = sum(folded.values())
    expect(abs(weight - total * period / 1e9) < 1e-6,
           "speedscope's weights add up to %g s, the samples to %g s"
           % (weight, total * period / 1e9))
    speed = {}
    for prof in doc["profiles"]:
        expect(prof["type"] == "sampled" and len(prof["samples"]) == len(prof["weights"]),
               "not a sampled profile: %r" % {k: prof[k] for k in ("type", "name")})
        for st, w in zip(prof["samples"], prof["weights"]):
            key = tuple(frames[i] for i in st)
            speed[key] = speed.get(key, 0) + round(w * 1e9 / period)
    expect(speed == folded, "speedscope's stacks differ: %r vs %r" % (speed, folded))
    note("%d stacks, %d samples, period %d ns, %d frames"
         % (len(folded), total, period, len(frames)))


def speedscope_dir():
    """speedscope's built viewer (scripts/npm-fetch.sh); skip without npm."""
    res = subprocess.run([os.path.join(harness.ROOT, "scripts", "npm-fetch.sh"), *SPEEDSCOPE],
                         capture_output=True, text=True, timeout=300)
    if res.returncode == 3:
        raise Skip("npm is not installed here: speedscope cannot be fetched")
    expect(res.returncode == 0, "fetching speedscope failed: %s" % res.stderr)
    return os.path.join(res.stdout.strip(), "dist", "release")


def serve_files(s, web):
    """`web` served on loopback by Python's http.server; its base URL once
    it answers."""
    port = free_port()
    s.spawn(["python3", "-m", "http.server", "--bind", "127.0.0.1", str(port)], cwd=web,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = "http://127.0.0.1:%d/" % port
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(base + "index.html", timeout=5):
                return base
        except OSError:
            expect(time.monotonic() < deadline, "http.server did not answer on %s" % base)
            time.sleep(0.2)


def sandwich_rows(b):
    """speedscope's Sandwich view as {symbol: (total ms, self ms)}."""
    b.js("Array.from(document.querySelectorAll('div')).filter(d => d.children.length <= 1 &&"
         " d.textContent.endsWith('Sandwich')).pop().click()")
    # The table's head comes a frame or more before its rows (a loaded
    # machine showed "Symbol Name" over none): wait for rows, and for two
    # readings a moment apart to agree.
    row_re = re.compile(r"([\d.]+)(ns|\u00b5s|us|ms|s|min) \([^)]*\)\s+"
                        r"([\d.]+)(ns|\u00b5s|us|ms|s|min) \([^)]*\)\s+(\S+)")
    deadline, last = time.monotonic() + 30, None
    while True:
        text = b.wait_js("document.body.innerText.indexOf('Symbol Name') >= 0 ? "
                         "document.body.innerText : ''", what="the Sandwich view")
        rows = row_re.findall(text)
        if rows and rows == last:
            break
        expect(time.monotonic() < deadline, "the Sandwich view shows no rows: %r" % text[-500:])
        last = rows
        time.sleep(0.3)
    unit = {"ns": 1e-6, "\u00b5s": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1e3, "min": 6e4}
    return {name: (float(t) * unit[tu], float(o) * unit[ou], shown_step(t) * unit[tu])
            for t, tu, o, ou, name in rows}


def shown_step(number):
    """The step of a number as speedscope printed it: "1.20" is to 0.01,
    so 1.20 s stands for anything from 1.195 s to 1.205 s."""
    return 10.0 ** -len(number.partition(".")[2])


@test(timeout=300)
def profile_speedscope_shows_it(s):
    """The .speedscope.json opened in speedscope itself (its built viewer
    from npm, served locally to headless Chromium): it opens on the
    capability that did the work, and its Sandwich view gives each cost
    centre the time `table profile` counts on that capability, a tick
    each. Screenshots of the time order and the sandwich go to
    BUILD/speedscope-time-order.png and BUILD/speedscope-sandwich.png."""
    viewer = speedscope_dir()
    log, _ = run_with_rts_files(s, ["-p", "-l", "-N2"], threaded=True)
    web = s.path("web")
    shutil.copytree(viewer, web)
    res = run_profile(log, "-o", os.path.join(web, "t.speedscope.json"))
    expect(res.returncode == 0, "profile failed: %s" % res.stderr)
    csv_out = s.path("t.csv")
    subprocess.run([client_path(), "table", "profile", log, "--csv", csv_out], check=True,
                   capture_output=True, timeout=120)
    per_cap = {}
    with open(csv_out) as f:
        next(f)
        for line in f:
            _, cap, stack = line.rstrip("\n").split(",", 2)
            counts = per_cap.setdefault(int(cap), {})
            for frame in set(stack.split(";")):
                counts[frame] = counts.get(frame, 0) + 1
    busiest = max(per_cap, key=lambda c: sum(n for f, n in per_cap[c].items() if f != "IDLE"))
    base = serve_files(s, web)
    b = Browser(s, width=1280, height=800)
    b.goto(base + "index.html#profileURL=" + base + "t.speedscope.json")
    shown = b.wait_js("(document.body.innerText.match(/capability \\d+ \\(\\d+\\/\\d+\\)/)"
                      " || [''])[0]", what="a capability's profile")
    expect(shown.startswith("capability %d " % busiest),
           "speedscope opened on %r, the busiest is capability %d" % (shown, busiest))
    time.sleep(1)
    b.screenshot(os.path.join(harness.BUILD, "speedscope-time-order.png"))
    rows = sandwich_rows(b)
    b.screenshot(os.path.join(harness.BUILD, "speedscope-sandwich.png"))
    expect(not b.errors(), "speedscope's errors: %r" % b.errors())
    want = per_cap[busiest]
    note("Sandwich: %r" % rows)
    for frame in ("Main.heavy", "Main.light", "Main.main"):
        # A tick is 1 ms; past a second speedscope prints 10 ms steps.
        expect(frame in rows and abs(rows[frame][0] - want[frame])
               < max(0.5, rows[frame][2] / 2 + 1e-6),
               "%s: speedscope shows %r ms in all, the samples on capability %d are %d"
               % (frame, rows.get(frame), busiest, want.get(frame, 0)))
    note("speedscope on %s: %s" % (shown, ", ".join(
        "%s %.0f ms" % (f, rows[f][0]) for f in ("Main.main", "Main.heavy", "Main.light"))))


@test(timeout=300)
def profile_table_rows_are_the_samples(s):
    """`table profile`: a row per sample, read by pandas in one call; its
    stacks counted are the folded file's, its capabilities those of a -N2
    run, its times within the run."""
    log, _ = run_with_rts_files(s, ["-p", "-l", "-N2"], threaded=True)
    folded, csv_out = s.path("t.folded"), s.path("t.csv")
    res = run_profile(log, "-o", folded)
    expect(res.returncode == 0, "profile failed: %s" % res.stderr)
    res = subprocess.run([client_path(), "table", "profile", log, "--csv", csv_out],
                         capture_output=True, text=True, timeout=120)
    expect(res.returncode == 0, "table profile failed (%d): %s" % (res.returncode, res.stderr))
    out = pandas_run(
        "import json, pandas as pd\n"
        "d = pd.read_csv(%r)\n"
        "print(json.dumps({'columns': list(d.columns), 'caps': sorted(d.capability.unique()"
        ".tolist()), 'min': float(d.time_s.min()),"
        " 'stacks': d['stack'].value_counts().to_dict()}))" % csv_out)
    if out is None:
        raise Skip("Debian's python3 has no pandas")
    got = json.loads(out)
    stacks = {tuple(k.split(";")): n for k, n in got["stacks"].items()}
    expect(got["columns"] == ["time_s", "capability", "stack"], "columns %r" % got["columns"])
    expect(stacks == read_folded(folded), "the table's stacks differ from the folded file's: %r"
           % sorted(stacks.items())[:4])
    expect(got["caps"] == [0, 1] and got["min"] > 0,
           "capabilities %r, first time %r" % (got["caps"], got["min"]))
    note("%d rows, capabilities %r" % (sum(stacks.values()), got["caps"]))


@test(timeout=300)
def profile_since_takes_the_end_of_a_recording(s):
    """`profile FILE --since 100ms`: the samples of the recording's last
    100 ms, as many as `table profile` has from then on (to a tick), in all
    three formats alike."""
    log, _ = run_with_rts_files(s, ["-p", "-l"])
    csv_out = s.path("t.csv")
    subprocess.run([client_path(), "table", "profile", log, "--csv", csv_out], check=True,
                   capture_output=True, timeout=120)
    with open(csv_out) as f:
        next(f)
        times = [float(line.split(",", 1)[0]) for line in f]
    last = max(times)
    want = sum(1 for t in times if t >= last - 0.1)
    counts = {}
    for ext in (".folded", ".pb.gz", ".speedscope.json"):
        out = s.path("since" + ext)
        res = run_profile(log, "-o", out, "--since", "100ms")
        expect(res.returncode == 0, "profile --since failed: %s" % res.stderr)
        m = re.search(r"(\d+) samples .* from program time ([\d.]+) s to ([\d.]+) s", res.stderr)
        expect(m and float(m.group(3)) - float(m.group(2)) <= 0.1 + 1e-9,
               "%s: not the last 100 ms: %r" % (ext, res.stderr))
        counts[ext] = int(m.group(1))
    folded = sum(read_folded(s.path("since.folded")).values())
    note("%d samples in the last 100 ms (table: %d of %d); %r" % (folded, want, len(times), counts))
    expect(abs(folded - want) <= 1 and len(set(counts.values())) == 1
           and folded == counts[".folded"],
           "the last 100 ms: profile %r, table %d" % (counts, want))
    res = run_profile(log, "-o", s.path("x.folded"), "--since", "10m")
    expect(res.returncode == 0 and sum(read_folded(s.path("x.folded")).values()) == len(times),
           "--since longer than the run: every sample (%s)" % res.stderr)


@test(timeout=180)
def profile_refuses_what_it_cannot_write(s):
    """A name without a format's ending, a recording without samples, and a
    recording of a program without profiling: each says why and what to do;
    no file is left behind."""
    res = run_profile(s.path("x.eventlog"), "-o", s.path("out.svg"))
    expect(res.returncode == 2 and ".folded" in res.stderr and ".pb.gz" in res.stderr,
           "an unknown ending: %d %r" % (res.returncode, res.stderr))
    log, _ = run_with_rts_files(s, ["-l"], rounds=2)  # profiled, not profiling
    out = s.path("none.folded")
    res = run_profile(log, "-o", out)
    expect(res.returncode == 1 and "was not running" in res.stderr and "+RTS -p" in res.stderr,
           "no samples: %d %r" % (res.returncode, res.stderr))
    expect(not os.path.exists(out), "a file was written without samples")
    for fixture in ("ghc-9.0.2", "ghc-9.6.6", "ghc-9.10.3"):
        res = run_profile(os.path.join(harness.ROOT, "tests/fixtures", fixture + ".eventlog"),
                          "-o", out)
        expect(res.returncode == 1 and "not built with profiling" in res.stderr
               and "-prof" in res.stderr, "%s: %d %r" % (fixture, res.returncode, res.stderr))
        expect(not os.path.exists(out), "a file was written for %s" % fixture)


def live_needs_flush():
    if ghc_version() < (9, 2):
        raise Skip("GHC 9.0 cannot flush: its samples arrive in 2 MiB steps and at exit")


def live_profile(s, rts, duration=3):
    """The profiled probe, busy, with a recording client from the start;
    `profile` run against it for `duration` s between markers A and B, then
    1.5 s more to C. Returns the profile's result, its folded stacks, the
    recording's summary and the markers' times."""
    exe = profiled_probe(s)
    p, connect = serve(s, "live", ["--busy"], rts=rts, exe=exe)
    c = connect()
    sock = s.path("live.sock")
    time.sleep(0.5)
    p.cmd("marker A")
    out = s.path("live.folded")
    res = run_profile(sock, "-o", out, "--duration", str(duration), timeout=60)
    p.cmd("marker B")
    time.sleep(1.5)
    p.cmd("marker C")
    p.cmd("quit")
    p.finish()
    summ = check_stream(s, c.wait_eof(), "live")
    stacks = read_folded(out) if os.path.exists(out) else {}
    t = {m: summ.marker_time(m) for m in "ABC"}
    return res, stacks, summ, t


@test(timeout=180)
def profile_live_starts_and_stops_profiling(s):
    """A profiled program running without -p: `profile ADDR --duration 3`
    starts cost-centre profiling, writes about three seconds of samples,
    and stops it again: no samples before it ran, none after."""
    live_needs_flush()
    res, stacks, summ, t = live_profile(s, [])
    note(res.stderr.strip())
    expect(res.returncode == 0, "profile failed (%d): %s" % (res.returncode, res.stderr))
    expect("started" in res.stderr, "profile did not say it started profiling: %r" % res.stderr)
    before = summ.cc_samples_between(0, t["A"])
    during = summ.cc_samples_between(t["A"], t["B"])
    after = summ.cc_samples_between(t["B"] + 300000000, t["C"])
    n = sum(stacks.values())
    note("samples: before=%d during=%d after=%d; the profile holds %d" % (before, during, after, n))
    expect(before == 0, "samples before profile ran: %d" % before)
    expect(after == 0, "profiling still running after profile returned: %d samples" % after)
    expect(0 < n <= during, "the profile holds %d samples, the stream %d while it ran"
           % (n, during))
    unnamed = [k for k in stacks if any(f.startswith("cost centre ") for f in k)]
    expect(not unnamed, "a late joiner's profile has unnamed frames: %r" % unnamed[:3])
    m = re.search(r"from program time ([\d.]+) s to ([\d.]+) s", res.stderr)
    expect(m and float(m.group(2)) - float(m.group(1)) <= 3.0 + 0.01,
           "samples from more than the 3 s asked for: %r" % res.stderr)
    # The CPU time only with the tick, which a profile started by a
    # command may not bring.
    expect(re.search(r"\d+ samples \(\d+ stacks(, [\d.e+-]+ s of CPU)?\) from program time",
                     res.stderr), "profile's summary reads %r" % res.stderr)


@test(timeout=180)
def profile_live_leaves_running_profiling_running(s):
    """The same program run with +RTS -p: profile only collects, and the
    samples go on after it returned."""
    live_needs_flush()
    res, stacks, summ, t = live_profile(s, ["-p"], duration=2)
    expect(res.returncode == 0, "profile failed (%d): %s" % (res.returncode, res.stderr))
    expect("is running" in res.stderr, "profile did not say profiling was running: %r"
           % res.stderr)
    after = summ.cc_samples_between(t["B"] + 300000000, t["C"])
    note("samples after profile returned: %d; the profile holds %d"
         % (after, sum(stacks.values())))
    expect(after > 0, "profile stopped the profiling it found running")
    expect(sum(stacks.values()) > 0, "no samples in the profile")


@test(timeout=120)
def profile_live_refuses_a_program_without_profiling(s):
    """A program not built with profiling: profile says so and how to build
    it, and writes nothing."""
    live_needs_flush()
    p, connect = serve(s, "plain", ["--busy"], rts=[])
    out = s.path("plain.folded")
    res = run_profile(s.path("plain.sock"), "-o", out, "--duration", "1", timeout=60)
    p.cmd("quit")
    p.finish()
    expect(res.returncode == 2 and "not built with profiling" in res.stderr
           and "-prof" in res.stderr, "%d %r" % (res.returncode, res.stderr))
    expect(not os.path.exists(out), "a file was written")


def ghc_events_innermost(path):
    """ghc-events' reading of a recording: every sample's innermost cost
    centre by name (MODULE.LABEL, the RTS's own by label; an empty stack is
    MAIN's), and the number of samples."""
    out = subprocess.run(["ghc-events", "show", path], capture_output=True, text=True,
                         timeout=120).stdout
    names = {}
    for cid, label, module, src in re.findall(r"cost centre (\d+) (\S+) in (\S+) at (\S+)", out):
        names[int(cid)] = label if src == "<built-in>" else "%s.%s" % (module, label)
    counts, total = {}, 0
    for stack in re.findall(r"prof sample \d+, cost centre stack ?(.*)$", out, re.M):
        ids = [int(x) for x in stack.replace(",", " ").split()]
        name = names.get(ids[0], "cost centre %d" % ids[0]) if ids else "MAIN"
        counts[name] = counts.get(name, 0) + 1
        total += 1
    return total, counts


@test(timeout=240)
def profile_metrics_reach_prometheus(s):
    """`metrics --top-labels 2` on a profiled program whose samples have
    more innermost cost centres than that (the profiled probe run
    --heavy-light --busy: Main.heavy, Main.light, the busy thread's MAIN,
    GC, SYSTEM): exactly two series, the two with the most samples, each
    equal to ghc-events' count in a recording of the same stream; the rest
    in no series (no "other": client/prom/text.c, f_costs), so that all
    samples less the two are the left-out ones' samples. A real Prometheus
    scrapes them and answers the fleet's queries for them. On GHC 9.0 the
    samples come at exit, and the exporter keeps the final figures."""
    top = 2
    exe = profiled_probe(s)
    p, connect = serve(s, "m", ["--heavy-light", "--busy"], rts=[], exe=exe)
    rec = connect()  # the recording (it releases the program)
    sock = s.path("m.sock")
    _, port = start_metrics(s, "unix:" + sock, extra=["--top-labels", str(top)])
    wait_for(port, "the connection", lambda sm: value(sm, "eventlog_socket_connected") == 1)
    prom = start_prometheus(s, port)
    expect(prom is not None, "prometheus is not installed")
    rec.send(upstream(1))  # start cost-centre profiling, then stop it 3 s later
    time.sleep(3)
    rec.send(upstream(2))
    time.sleep(1.5)
    p.cmd("quit")
    p.finish()
    check_stream(s, rec.wait_eof(), "m")
    total, truth = ghc_events_innermost(s.path("m.eventlog"))
    expect(total > 100, "only %d samples in the recording" % total)
    expect(len(truth) > top, "only %d cost centres innermost, not more than the cap %d: %r"
           % (len(truth), top, truth))
    _, sm = wait_for(port, "all %d samples" % total,
                     lambda sm: value(sm, "ghc_time_profile_samples_total") == total, timeout=60)
    exported = {dict(labels)["cost_centre"]: v for (n, labels), v in sm.items()
                if n == "ghc_cost_centre_samples_total"}
    note("%d samples; ghc-events: %s; exported: %s" % (
        total, sorted(truth.items(), key=lambda kv: -kv[1]), exported))
    expect(len(exported) == top, "%d series for --top-labels %d: %r"
           % (len(exported), top, sorted(exported)))
    for name, v in exported.items():
        expect(truth.get(name) == v, "%s: exported %s, ghc-events counts %s"
               % (name, v, truth.get(name)))
    rest = {k: v for k, v in truth.items() if k not in exported}
    expect(min(exported.values()) >= max(rest.values()),
           "not the top: exported %r, left out %r" % (exported, rest))
    expect(total - sum(exported.values()) == sum(rest.values()) > 0,
           "all samples less the exported ones: %d, the left-out ones' %d"
           % (total - sum(exported.values()), sum(rest.values())))
    queries = {"all": "sum(ghc_time_profile_samples_total)",
               "series": "count(ghc_cost_centre_samples_total)",
               "rest": "sum(ghc_time_profile_samples_total) - "
                       "sum(ghc_cost_centre_samples_total)",
               "top": 'topk(1, ghc_cost_centre_samples_total{cost_centre!="IDLE"})'}
    deadline = time.monotonic() + 60
    while True:
        got = {k: prom_query(prom, q) for k, q in queries.items()}
        if all(got.values()) and float(got["all"][0]["value"][1]) == total:
            break
        expect(time.monotonic() < deadline,
               "Prometheus never had the %d samples: %r" % (total, got))
        time.sleep(0.5)
    answers = {k: float(v[0]["value"][1]) for k, v in got.items()}
    note("Prometheus: %r" % answers)
    expect(answers["series"] == top, "Prometheus holds %g cost-centre series, the cap is %d"
           % (answers["series"], top))
    expect(answers["rest"] == sum(rest.values()),
           "Prometheus: all samples less the series' %g, ghc-events' left-out ones %d"
           % (answers["rest"], sum(rest.values())))
    hottest = got["top"][0]["metric"]["cost_centre"]
    best = max((v, k) for k, v in truth.items() if k != "IDLE")[1]
    expect(truth[hottest] == truth[best], "Prometheus's hottest is %s (%d), ghc-events' %s (%d)"
           % (hottest, truth[hottest], best, truth[best]))
    text = scrape(port)
    expect("# TYPE ghc_cost_centre_samples_total counter" in text, "no TYPE line")


@test(timeout=180)
def metrics_without_samples_export_no_cost_centres(s):
    """`metrics` on two programs that stream no cost-centre sample, the
    probe built without profiling and the profiled probe not profiling (its
    cost centres defined, none sampled): their final figures are exported,
    but no series of the time profile, nor its HELP or TYPE lines."""
    exe = profiled_probe(s)
    plain, _ = serve(s, "plain", ["--busy"])
    prof, _ = serve(s, "prof", ["--heavy-light"], exe=exe)
    srcs = {"plain": "unix:" + s.path("plain.sock"), "prof": "unix:" + s.path("prof.sock")}
    _, port = start_metrics(s, *srcs.values())
    for name, src in srcs.items():
        wait_for(port, "the connection to " + name,
                 lambda sm: value(sm, "eventlog_socket_connected", source=src) == 1)
    time.sleep(2)
    for p in (plain, prof):
        p.cmd("quit")
        p.finish()
    for name, src in srcs.items():
        text, _ = wait_for(port, "the final figures of " + name,
                           lambda sm: value(sm, "eventlog_socket_connected", source=src) == 0
                           and value(sm, "ghc_allocated_bytes_total", source=src) is not None)
    profile = [line for line in text.splitlines()
               if "ghc_time_profile_samples_total" in line
               or "ghc_cost_centre_samples_total" in line]
    note("%d lines exported, %d of the time profile" % (len(text.splitlines()), len(profile)))
    expect(not profile, "the time profile of programs without samples: %r" % profile[:4])


@test(timeout=180)
def profile_top_shows_where_the_time_goes(s):
    """`top` on the profiled probe computing in Main.heavy and Main.light
    (--heavy-light: three to one) with +RTS -p: a Time line with the cost
    centres most often running in the last 10 s, the first Main.heavy, the
    one ghc-events finds most often innermost in a recording of the same
    run, with its share of the samples not idle within 10 points (the
    program does the same all along), and Main.light on the line too."""
    live_needs_flush()
    exe = profiled_probe(s)
    p, connect = serve(s, "tt", ["--heavy-light"], rts=["-p"], exe=exe)
    rec = connect()
    t = Tmux(s, top_command(s.path("tt.sock")))
    line = r"^Time\s+(\S+) (\d+)%.*\(last 10 s: (\d+) samples"
    m = t.wait(line, timeout=30, what="the Time line")
    time.sleep(2)
    m = t.wait(line, what="the Time line")
    first, share = m.group(1), int(m.group(2))
    p.cmd("quit")
    p.finish()
    check_stream(s, rec.wait_eof(), "tt")
    total, truth = ghc_events_innermost(s.path("tt.eventlog"))
    busy = {k: v for k, v in truth.items() if k != "IDLE"}
    best = max(busy, key=busy.get)
    want = 100.0 * busy[best] / sum(busy.values())
    note("top: %r; ghc-events over the run: %s %.0f%% of %d samples"
         % (m.group(0), best, want, total))
    expect(best == "Main.heavy", "ghc-events' hottest is %s, not Main.heavy: %r" % (best, truth))
    expect(first == best, "top's first cost centre is %s, ghc-events' %s" % (first, best))
    expect(abs(share - want) <= 10, "top says %d%%, the run %.0f%%" % (share, want))
    expect(re.search(r"\bMain\.light \d+%", m.group(0)), "no Main.light on %r" % m.group(0))
    t.keys("q")


@test(timeout=180)
def profile_live_since_takes_the_window(s):
    """`profile ADDR --since 1s` of a program profiling with +RTS -p and
    keeping a window of 2 s (GHC_EVENTLOG_RETAIN_SECONDS): the window's
    last second, at once, the stream's own samples of that second, every
    frame named (Main.heavy, Main.light, the RTS's own), never "cost centre
    N", although the window has long let go of the program's start, where
    the cost centres were defined (the whole window, --since 10m, starts
    seconds into the run); a program keeping no window is refused, saying
    how to keep one."""
    live_needs_flush()
    exe = profiled_probe(s)
    sock = s.path("w.sock")
    p = Program(s, exe, ["--heavy-light"], unix=sock, rts=["-p"],
                env={"GHC_EVENTLOG_RETAIN": "64M", "GHC_EVENTLOG_RETAIN_SECONDS": "2"})
    p.wait_socket(sock)
    time.sleep(6)
    got = {}
    for since in ("1s", "10m"):
        out = s.path("w-%s.folded" % since)
        res = run_profile(sock, "-o", out, "--since", since, timeout=60)
        expect(res.returncode == 0, "profile --since %s failed (%d): %s"
               % (since, res.returncode, res.stderr))
        m = re.search(r"(\d+) samples .* from program time ([\d.]+) s to ([\d.]+) s",
                      res.stderr)
        expect(m is not None and "window" in res.stderr, "no summary: %r" % res.stderr)
        got[since] = (read_folded(out), int(m.group(1)), float(m.group(2)), float(m.group(3)))
        note("--since %s: %s" % (since, res.stderr.strip()))
    stacks, n, start, end = got["1s"]
    held = sum(stacks.values())
    expect(end - start <= 1.0 + 1e-6 and held == n and held > 300,
           "the last second of the window: %d samples over %.3f s" % (held, end - start))
    whole = got["10m"][2]
    expect(whole > 1.0, "the window reaches back to %.3f s, the run's start: its definitions "
           "may be its own, not those the library keeps" % whole)
    for since, (st, _, _, _) in got.items():
        frames = {f for k in st for f in k}
        expect(not unnamed_frames(st), "--since %s: frames without a name: %r"
               % (since, unnamed_frames(st)))
        expect("Main.heavy" in frames, "--since %s: no Main.heavy in %r" % (since, sorted(frames)))
    p.cmd("quit")
    p.finish()
    q = Program(s, exe, ["--busy"], unix=s.path("n.sock"), rts=["-p"])
    q.wait_socket(s.path("n.sock"))
    res = run_profile(s.path("n.sock"), "-o", s.path("n.folded"), "--since", "1s", timeout=60)
    expect(res.returncode == 2 and "GHC_EVENTLOG_RETAIN" in res.stderr
           and not os.path.exists(s.path("n.folded")),
           "no window: %d %r" % (res.returncode, res.stderr))
    q.cmd("quit")
    q.finish()
