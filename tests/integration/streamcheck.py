# SPDX-License-Identifier: BSD-3-Clause
"""The ghc-events-based checker (tests/programs/checker, build/eventlog-check) run on
a stream, and what it found: events, markers, messages, heap samples,
HEAP_LIVE/HEAP_SIZE. The tests import these from harness."""

import os
import subprocess

import harness


class Summary:
    """What the checker found in a stream."""

    def __init__(self, text):
        self.text = text
        self.values = {}
        self.counts = {}
        self.markers = []
        self.messages = []
        self.binary = []  # (time, payload bytes) of each binary user message
        self.samples = []
        self.cc_samples = []
        self.heap_live = []  # (time, bytes) of each HEAP_LIVE
        self.heap_size = []  # and HEAP_SIZE
        self.partial = False
        self.span = None  # (first, last) event time, ns
        for line in text.splitlines():
            parts = line.split(" ", 2)
            if parts[0] in ("events", "types", "blocks"):
                self.values[parts[0]] = int(parts[1])
            elif parts[0] == "count":
                self.counts[parts[1]] = int(parts[2])
            elif parts[0] == "marker":
                self.markers.append((int(parts[1]), parts[2] if len(parts) > 2 else ""))
            elif parts[0] == "message":
                self.messages.append((int(parts[1]), parts[2] if len(parts) > 2 else ""))
            elif parts[0] == "binary":
                self.binary.append((int(parts[1]),
                                    bytes.fromhex(parts[2] if len(parts) > 2 else "")))
            elif parts[0] == "sample":
                self.samples.append(int(parts[1]))
            elif parts[0] == "ccsample":
                self.cc_samples.append(int(parts[1]))
            elif parts[0] in ("heaplive", "heapsize"):
                t, b = int(parts[1]), int(parts[2])
                (self.heap_live if parts[0] == "heaplive" else self.heap_size).append((t, b))
            elif parts[0] == "span":
                self.span = (int(parts[1]), int(parts[2].split()[0]))
            elif parts[0] == "partial":
                self.partial = True

    def marker_time(self, name):
        for t, m in self.markers:
            if m == name:
                return t
        raise harness.TestFailure("marker %r not in the stream" % name)

    def samples_between(self, a, b):
        return sum(1 for t in self.samples if a <= t < b)

    def cc_samples_between(self, a, b):
        """Cost-centre profiling samples (PROF_SAMPLE_COST_CENTRE) in [a, b)."""
        return sum(1 for t in self.cc_samples if a <= t < b)

    def tagged(self, tag):
        """Indices i of user messages "TAG i"."""
        prefix = tag + " "
        return [int(m[len(prefix):]) for _, m in self.messages if m.startswith(prefix)]


def check_stream(scope, data, name, partial=False):
    """Judge a stream with the checker; fail the test if it does not parse."""
    path = scope.path(name + ".eventlog")
    with open(path, "wb") as f:
        f.write(data)
    checker = os.path.abspath(os.path.join(harness.BUILD, "eventlog-check"))
    argv = [checker] + (["--partial"] if partial else []) + [path]
    res = subprocess.run(argv, capture_output=True, timeout=120)
    out = res.stdout.decode(errors="replace")
    if res.returncode != 0:
        raise harness.TestFailure("%s (%d bytes) does not parse: %s%s"
                                  % (name, len(data), out.splitlines()[0] if out else "",
                                     res.stderr.decode(errors="replace")))
    return Summary(out)
