#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Whether tests/cabal/tiny's throwing handlers were told whole on stderr
(the file given): tiny/2's message of two lines, the first 300 two-byte
characters and 300 x's, longer than one line of the library's log, so in
pieces of whole characters; tiny/3's, whose message is itself an error.
Lines of the library's other threads may come between the pieces. Says
what is missing and exits 1, or exits 0.

    told_whole.py STDERR-FILE"""

import sys

PREFIX = "eventlog-socket: "


def main():
    text = open(sys.argv[1], "rb").read().decode("utf-8", errors="replace")
    lines = [ln[len(PREFIX):] for ln in text.splitlines() if ln.startswith(PREFIX)]
    wrong = []
    head = "command tiny/2 failed: user error (boom"
    if head not in lines:
        wrong.append("no line %r" % head)
    else:
        rest = lines[lines.index(head) + 1:]
        pieces = [ln for ln in rest if ln and set(ln) <= {"\u00e9", "x"}]
        body = "".join(pieces)
        if body != "\u00e9" * 300 + "x" * 300:
            wrong.append("the long line came as %d pieces of %s characters, not 300 + 300"
                         % (len(pieces), [len(p) for p in pieces]))
        if "the end)" not in rest:
            wrong.append("no line 'the end)' after it")
    unshowable = "command tiny/3 failed, with an exception whose message is itself an error"
    if unshowable not in lines:
        wrong.append("no line %r" % unshowable)
    for w in wrong:
        print("told_whole.py: %s" % w, file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
