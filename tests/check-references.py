#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Comments and documents name only what exists.

From the tracked files alone (git ls-files), no build:

1. every file a comment or a document names (`es_server.c`,
   `policy/es_lossless.h`, `tests/run-unit.sh`, `docs/haskell.md`) is
   a file of the repository: by its path from the root, from the naming
   file's folder, from cbits/, client/ or tests/, as the end of a path, or
   by its name alone; GHC's, libuv's and the system's files are named as
   theirs (EXTERNAL);
2. every function, type or constant of ours a comment or a document names
   (es_..., eventlog_socket_..., ES_..., EVENTLOG_SOCKET_...) occurs in
   the code (comments left out; a string's words count, as the metrics'
   names are strings), or is a module's name or a family's prefix: a
   renamed function leaves no comment behind;
3. a document that gives a file's length ("`client/source/conn.c`, 723
   lines") gives its length now;
4. no document points at an issue tracker that is not in the repository
   ("issue N"), but bench/HISTORY.md, the record of past measurements by
   the work items they were made for (tests/lint.sh holds the code to the
   same rule).

Prints TAP, one line per rule, with every violation as a comment. With
--self-test, plants a breach of each rule in a copy and checks that each
rule fails on its own.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Files of other projects, named as theirs: GHC's RTS and headers, libuv,
# the C library, other tools' outputs.
EXTERNAL = re.compile(
    r"^(rts/|includes/|src/unix/|src/|uv/|sys/|linux/|netinet/|arpa/|GHC/|Debug/|System/)"
    r"|^(Rts|RtsAPI|HsFFI|ghcversion|uv|unistd|stdio|stdlib|string|pthread|signal|errno|"
    r"fcntl|poll|assert|stdatomic|stdint|stddef|stdbool|time|limits|locale|inttypes|math|"
    r"ctype|dirent|ifaddrs|netdb|pwd|grp|dlfcn|execinfo|microhttpd|ncurses|curses|zlib|"
    r"EventLog|Stats|Heap|Proftimer|Schedule|Timer|Itimer|Pthread|Capability|Trace|"
    r"RtsStartup|RtsFlags|Messages|EventLogFormat|CCS|stream|core|unix|flamegraph)\.[ch]$"
    r"|^(flamegraph\.pl|profile\.proto|setup\.py|Setup\.hs|Main\.hs|app\.hs|Constants\.h)$"
    r"|^include/net/"
    # What a build writes (build/gen/help.c), and placeholders in usage
    # texts: X.[ch], dir/file.c, OUT.c, PREFIX/include/...
    r"|^build/|^(X|OUT|file|dir/file)\.|^PREFIX/")
DOC_EXT = (".md", ".scd")
SRC_EXT = (".c", ".h", ".py", ".sh", ".hs", ".js")
FILE_RE = re.compile(r"(?<![\w/.$-])((?:[\w.-]+/)*[\w-]+(?:\.\[ch\]|\.(?:c|h|py|sh|hs|md|scd)))"
                     r"(?![\w/])")
IDENT_RE = re.compile(r"(?<![\w$])((?:es|eventlog_socket|ES|EVENTLOG_SOCKET)_[A-Za-z0-9_]*"
                      r"[A-Za-z0-9])(?!\w)(?![\w*<(]*[*<])"
                      r"(?!\.\[?[a-z])")
LENGTH_RE = re.compile(r"`([\w/.-]+\.[a-z]+)`,? (\d[\d ]*) lines")
ISSUE_RE = re.compile(r"\bissues? #?\d+", re.I)
# The record of past measurements names what the code was then, and the
# work items they were made for.
HISTORY = {"bench/HISTORY.md"}


# Where a tree without git (a chroot's copy) keeps what is not source.
NOT_SOURCE = {".git", "build", "dist-newstyle", "node_modules", "__pycache__"}


def tracked(root):
    """The repository's files: git's list, or without git every file but
    those under NOT_SOURCE's folders."""
    try:
        out = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True)
        if out.returncode == 0:
            return [f for f in out.stdout.split("\n")
                    if f and os.path.exists(os.path.join(root, f))]
    except OSError:
        pass
    files = []
    for d, dirs, names in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in NOT_SOURCE)
        files += [os.path.relpath(os.path.join(d, n), root) for n in sorted(names)]
    return files


def strip_c(text):
    """(code, comments) of C text: strings and comments out of the code."""
    code, comments = [], []
    pat = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
    last = 0
    for m in pat.finditer(text):
        code.append(text[last:m.start()])
        tok = m.group(0)
        if tok.startswith("/"):
            comments.append(tok)
            code.append("\n" * tok.count("\n"))
        else:
            # A string's words count as the code's (the metrics' names).
            code.append(" %s " % " ".join(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", tok)))
        last = m.end()
    code.append(text[last:])
    return "".join(code), "\n".join(comments)


def strip_hash(text):
    """(code, comments) of Python or shell: # comments and docstrings."""
    comments, code = [], []
    for line in text.split("\n"):
        m = re.search(r"(^|\s)#(?!!)(.*)$", line)
        if m:
            comments.append(m.group(2))
            line = line[:m.start()]
        code.append(line)
    docs = re.findall(r'"""(.*?)"""', text, re.S)
    return "\n".join(code), "\n".join(comments + docs)


def strip_hs(text):
    comments = re.findall(r"--[^\n]*|\{-.*?-\}", text, re.S)
    code = re.sub(r"--[^\n]*|\{-.*?-\}", "", text, flags=re.S)
    return code, "\n".join(comments)


def split(path, text):
    if path.endswith((".c", ".h", ".js")):
        return strip_c(text)
    if path.endswith((".py", ".sh")) or "/" not in path and "." not in path:
        return strip_hash(text)
    if path.endswith(".hs"):
        return strip_hs(text)
    return "", text


def resolves(name, where, files, bases, suffixes):
    if EXTERNAL.search(name.split("/")[-1]) or EXTERNAL.search(name):
        return True
    names = [name[:-5] + ".c", name[:-5] + ".h"] if name.endswith(".[ch]") else [name]
    for n in names:
        if "/" not in n:
            if n in bases:
                return True
            continue
        folder = os.path.dirname(where)
        for base in ("", folder, "cbits", "client", "tests", "tests/unit", "tests/unit/library",
                     "tests/unit/client", "tests/integration", "tests/integration/library",
                     "tests/integration/client"):
            if os.path.normpath(os.path.join(base, n)) in files:
                return True
        if n in suffixes:
            return True
    return False


def check(root, planted=None):
    """The rules' results; `planted` (path: text) adds files (--self-test)."""
    planted = planted or {}
    files = tracked(root) + sorted(planted)
    fileset = set(files)
    bases = {os.path.basename(f) for f in files}
    suffixes = set()
    for f in files:
        parts = f.split("/")
        for i in range(1, len(parts)):
            suffixes.add("/".join(parts[i:]))
    code_text, said = [], []  # said: (path, text) of comments and documents
    for f in files:
        if not f.endswith(SRC_EXT + DOC_EXT) or f.startswith(("tests/fixtures/", "node_modules/")):
            continue
        try:
            if f in planted:
                text = planted[f]
            else:
                with open(os.path.join(root, f), encoding="utf-8") as fh:
                    text = fh.read()
        except (UnicodeDecodeError, OSError):
            continue
        code, comments = split(f, text)
        code_text.append(code)
        said.append((f, comments))
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", "\n".join(code_text)))
    bad_files, bad_ids, bad_lengths, bad_issues = [], [], [], []
    # A module is named by its file's name too (es_admit: es_admit.[ch]),
    # and a family of names by their prefix (es_webjson: es_webjson_state).
    words |= {os.path.splitext(b)[0] for b in bases}
    for w in list(words):
        parts = w.split("_")
        words.update("_".join(parts[:i]) for i in range(2, len(parts)))
    for f, text in said:
        if f in HISTORY:
            continue
        for m in FILE_RE.finditer(text):
            name = m.group(1)
            if not resolves(name, f, fileset, bases, suffixes):
                bad_files.append("%s names %s" % (f, name))
        for m in IDENT_RE.finditer(text):
            if m.group(1) not in words:
                bad_ids.append("%s names %s" % (f, m.group(1)))
        if f.endswith(DOC_EXT):
            for m in LENGTH_RE.finditer(text):
                path, said_n = m.group(1), int(m.group(2).replace(" ", ""))
                if path in fileset:
                    with open(os.path.join(root, path), encoding="utf-8") as fh:
                        n = fh.read().count("\n")
                    if n != said_n:
                        bad_lengths.append("%s: %s has %d lines, not %d" % (f, path, n, said_n))
            for m in ISSUE_RE.finditer(text):
                bad_issues.append("%s: \"%s\"" % (f, m.group(0)))
    return [
        ("every file a comment or a document names exists", sorted(set(bad_files))),
        ("every function, type or constant of ours they name occurs in the code",
         sorted(set(bad_ids))),
        ("every file's length a document gives is its length", sorted(set(bad_lengths))),
        ("no document points at an issue tracker outside the repository",
         sorted(set(bad_issues))),
    ]


def report(results):
    print("1..%d" % len(results))
    failed = 0
    for i, (what, bad) in enumerate(results, 1):
        print("%sok %d - %s%s" % ("not " if bad else "", i, what,
                                  " (%d)" % len(bad) if bad else ""))
        for b in bad:
            print("#   " + b)
        failed += bool(bad)
    print("check-references: %d passed, %d failed" % (len(results) - failed, failed))
    return 1 if failed else 0


# One breach of each rule, in a file planted beside the others.
BREACHES = [
    {"cbits/base/planted.c": "/* as es_gone.c does */\nint x;\n"},
    # (the name is put together: this file's strings count as code)
    {"cbits/base/planted.c": "/* es_server_" + "gone_away() */\nint x;\n"},
    {"docs/planted.md": "`README.md`, 3 lines long, is not: `README.md`, 3 lines.\n"},
    {"docs/planted.md": "As " + "issue" + " 12 said.\n"},  # split: tests/lint.sh reads this
]


def self_test():
    clean = [bool(bad) for _, bad in check(ROOT)]
    if any(clean):
        print("# the tree itself fails a rule: fix that first")
        return 1
    failed = 0
    for i, planted in enumerate(BREACHES):
        got = [bool(bad) for _, bad in check(ROOT, planted)]
        want = [j == i for j in range(len(BREACHES))]
        good = got == want
        failed += not good
        print("%sok %d - a breach of rule %d fails that rule alone (%s)"
              % ("" if good else "not ", i + 1, i + 1, got))
    print("1..%d" % len(BREACHES))
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    sys.exit(report(check(ROOT)))
