# SPDX-License-Identifier: BSD-3-Clause
"""What the RTS's classes of events cost a program, and what switching them
all off leaves (BENCHMARKS.md section 16), as instruction counts under
callgrind, the counted runs of section 1c (-V0; on -N1 two runs of one
configuration agree to about 1 in 10^6):

- the program without +RTS -l (no eventlog at all), the reference;
- with -l and our writer, nobody connected, every class switched off as it
  starts (eventlog_socket_switch_event_classes, in a POST_START hook of
  the bench's C main, as a client's `events off all` would): the ratio to
  the reference is what a program pays for being able to switch them on;
- with -l's defaults (scheduler, GC, sampled sparks, user events), and
  with one class on alone: what each class costs.

Programs: fibber-c-main's program (bench/fibber, `30` x10) on one
capability and on two (-N2: the whole program's count then moves with the
two capabilities' scheduling under callgrind, by about 1.5%; the library's
share stays exact), and a thread-heavy one (bench/workload threads 20000
20: 20 000 threads, each yielding 20 times).
"""

import os
import shutil

import benchlib
from bench_instructions import library_cost
from benchlib import run_workload

NAME = "classes"

# name: (arguments, RTS options, program, capabilities)
PROGRAMS = {
    "fibber": (["30"] * 10, ["-V0", "-A256k"], "bench/fibber", 1),
    "fibber -N2": (["30"] * 10, ["-V0", "-A256k"], "bench/fibber", 2),
    "threads": (["threads", "20000", "20"], ["-V0"], "bench/workload", 1),
}
SCHED, GC, NONMOVING, SAMPLED, FULL, USER = 1, 2, 4, 8, 16, 32
ALL = 63
# (label, eventlog on, BENCH_CLASSES "ON,OFF": the classes switched at start)
CONFIGS = [
    ("no -l", False, None),
    ("all off", True, "0,%d" % ALL),
    ("-l defaults", True, None),
    ("scheduler alone", True, "%d,%d" % (SCHED, ALL & ~SCHED)),
    ("gc alone", True, "%d,%d" % (GC, ALL & ~GC)),
    ("sparks-sampled alone", True, "%d,%d" % (SAMPLED, ALL & ~SAMPLED)),
    ("sparks-full alone", True, "%d,%d" % (FULL, ALL & ~FULL)),
    ("user alone", True, "%d,%d" % (USER, ALL & ~USER)),
]


def count(b, name, label, args, rts, program, caps, eventlog, classes):
    valgrind = shutil.which("valgrind")
    keep = os.path.join(benchlib.BUILD, "bench", "callgrind")
    os.makedirs(keep, exist_ok=True)
    cg = os.path.join(keep, "classes-%s-%s.out" % (name.replace(" ", ""),
                                                   label.replace(" ", "-")))
    wrap = [valgrind, "--tool=callgrind", "--trace-children=no", "--callgrind-out-file=" + cg]
    env = {"BENCH_CLASSES": classes} if classes else None
    run_workload(b, args, "socket0" if eventlog else "none", b.path("c.sock"), caps=caps,
                 rts_extra=rts, wrap=wrap, timeout=1200, program=program, env_extra=env)
    total, by, _, _ = library_cost(cg, b.exe(program))
    return {"instructions": total, "library": sum(by.values())}


def run(b):
    if shutil.which("valgrind") is None:
        b.results[NAME] = {"skipped": "valgrind is not installed"}
        return
    out = {}
    for name, (args, rts, program, caps) in PROGRAMS.items():
        res = {"workload": " ".join(args[:3] + ["+RTS", "-N%d" % caps] + rts + ["-RTS"])}
        for label, eventlog, classes in CONFIGS:
            res[label] = count(b, name, label, args, rts, program, caps, eventlog, classes)
        out[name] = res
    b.results[NAME] = out


def report(r, add):
    if NAME not in r:
        return
    c = r[NAME]
    add("")
    add("16. Event classes: instructions against the program without +RTS -l")
    if "skipped" in c:
        add("   skipped: " + c["skipped"])
        return
    for name, res in c.items():
        base = res["no -l"]["instructions"]
        off = res["all off"]["instructions"]
        add("   %s (%s): no -l %d" % (name, res["workload"], base))
        for label, _, _ in CONFIGS[1:]:
            n = res[label]["instructions"]
            add("     %-22s %d  x%.4f  (+%.2f%% over all off; library %d)" % (
                label, n, n / base, 100.0 * (n - off) / base, res[label]["library"]))
