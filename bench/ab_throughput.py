# SPDX-License-Identifier: BSD-3-Clause
"""Two builds of bench/throughput against each other and against a raw
Unix socket, in one run: ROUNDS rounds of one client, 1 GiB, two writers,
alternating which build goes first, each round followed by a raw run.
Prints each build's MiB/s and CPU seconds per GiB (whole process, and the
walker thread's by the library's own counter), and its ratio to the raw
runs (of the medians, and of each run to the raw run of its round).

    python3 bench/ab_throughput.py OLD_THROUGHPUT NEW_THROUGHPUT [ROUNDS]

The "before" of a change is a copy of build/bench/throughput made before
rebuilding; the raw runs use NEW's binary."""

import json
import statistics
import subprocess
import sys


def run(exe, args):
    out = subprocess.run([exe] + args, capture_output=True, text=True, check=True,
                         timeout=300).stdout
    return json.loads(out)


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    exes = {"old": argv[0], "new": argv[1]}
    rounds = int(argv[2]) if len(argv) == 3 else 10
    res = {"old": [], "new": [], "raw": []}
    for r in range(rounds):
        for k in (("old", "new") if r % 2 == 0 else ("new", "old")):
            res[k].append(run(exes[k], ["socket", "1", "1024", "2"]))
        res["raw"].append(run(exes["new"], ["raw", "1", "1024"]))
    med = statistics.median

    def spread(xs, f):
        return "%s (%s-%s)" % (f % med(xs), f % min(xs), f % max(xs))

    raw_mib = [d["mib_per_s"] for d in res["raw"]]
    raw_cpu = [d["cpu_s_per_gib"] for d in res["raw"]]
    print("raw  MiB/s %s  CPU s/GiB %s" % (spread(raw_mib, "%.0f"), spread(raw_cpu, "%.3f")))
    for k in ("old", "new"):
        mib = [d["mib_per_s"] for d in res[k]]
        cpu = [d["cpu_s_per_gib"] for d in res[k]]
        walker = [d["library_cpu_s"]["walker"] / (d["bytes"] / 2**30) for d in res[k]]
        pairs = [a / b for a, b in zip(mib, raw_mib)]
        print("%s  MiB/s %s  CPU s/GiB %s  walker s/GiB %s" % (
            k, spread(mib, "%.0f"), spread(cpu, "%.3f"), spread(walker, "%.3f")))
        print("     / raw: ratio of medians %.2f, each run %s, CPU per GiB x%.2f" % (
            med(mib) / med(raw_mib), spread(pairs, "%.2f"), med(cpu) / med(raw_cpu)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
