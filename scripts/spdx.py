#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The licence line at the top of every source file of the repository.

    scripts/spdx.py          # TAP: which tracked source files lack it
    scripts/spdx.py --fix    # add it where it is missing

A source file's licence line is `SPDX-License-Identifier: BSD-3-Clause` in
the file's own comment syntax, on its first line, or on its second after a
line that must come first (`#!`, `<!DOCTYPE html>`, `cabal-version:`).
Files that are data or documents, not source, carry none: their kinds are
listed in SKIP with the reason; nor do other projects' files vendored
unchanged (VENDORED), which carry their own licence.
"""
import os
import subprocess
import sys

TAG = "SPDX-License-Identifier: BSD-3-Clause"

# How each kind of file says it: the comment's opening and closing.
COMMENT = {
    ".c": ("/* ", " */"), ".h": ("/* ", " */"), ".js": ("/* ", " */"), ".css": ("/* ", " */"),
    ".hs": ("-- ", ""), ".hsc": ("-- ", ""),
    ".py": ("# ", ""), ".sh": ("# ", ""), ".awk": ("# ", ""), ".yml": ("# ", ""),
    ".cabal": ("-- ", ""), ".project": ("-- ", ""), ".in": ("# ", ""),
    ".html": ("<!-- ", " -->"),
    "Makefile": ("# ", ""), "run": ("# ", ""), ".clang-format": ("# ", ""),
    ".flake8": ("# ", ""), ".cppcheck-suppressions": ("# ", ""),
}
# Not source: no comment syntax (json), recorded data (eventlog, expect
# fixtures compared byte for byte), images, and documents (md, scd: the
# man pages' source, whose first line is the page's title by scdoc's rule).
SKIP = {".json", ".eventlog", ".expect", ".png", ".md", ".scd", ".gitignore"}
# Other projects' files kept unchanged under their own licence (each folder
# has a README.md naming the source, the version and the licence).
VENDORED = ("client/web/vendor/",)
# Lines that must stay first in their file.
FIRST = ("#!", "<!DOCTYPE", "<!doctype", "cabal-version:")


def kind(path):
    if path.startswith(VENDORED):
        return None
    base = os.path.basename(path)
    if base in COMMENT:
        return base
    ext = os.path.splitext(base)[1]
    if ext in SKIP or base in ("LICENSE", ".gitignore"):
        return None
    return ext if ext in COMMENT else "?"


def has_tag(lines):
    return any(TAG in line for line in lines[:2])


def fix(path, k, lines):
    open_, close = COMMENT[k]
    line = open_ + TAG + close + "\n"
    at = 1 if lines and lines[0].startswith(FIRST) else 0
    lines.insert(at, line)
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(lines)


def tracked():
    """The files git tracks; None without git (the chroots) or a checkout."""
    try:
        r = subprocess.run(["git", "ls-files"], capture_output=True, text=True)
    except OSError:
        return None
    return r.stdout.split("\n") if r.returncode == 0 else None


# Without git: the tree, less what builds make.
BUILT = {".git", "build", "dist-newstyle", "__pycache__", "node_modules"}


def walk():
    out = []
    for d, dirs, files in os.walk("."):
        dirs[:] = sorted(x for x in dirs if x not in BUILT)
        out += [os.path.relpath(os.path.join(d, f)) for f in sorted(files)]
    return out


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    os.chdir(root)
    files = tracked()
    walked = files is None
    if walked:
        files = walk()
    do_fix = "--fix" in sys.argv[1:]
    missing, unknown, n = [], [], 0
    for path in filter(None, files):
        k = kind(path)
        if k is None or not os.path.isfile(path):
            continue
        if k == "?":
            if not walked:  # an untracked file of any kind may be anything's output
                unknown.append(path)
            continue
        n += 1
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
        if has_tag(lines):
            continue
        if do_fix:
            fix(path, k, lines)
        else:
            missing.append(path)
    print("1..2")
    if missing:
        print("not ok 1 - %d of %d source files lack the line '%s' at the top "
              "(scripts/spdx.py --fix adds it):" % (len(missing), n, TAG))
        for p in missing:
            print("#   " + p)
    else:
        print("ok 1 - all %d source files say '%s' at the top" % (n, TAG))
    if unknown:
        print("not ok 2 - files of a kind scripts/spdx.py does not know (a comment "
              "syntax in COMMENT, or a reason in SKIP):")
        for p in unknown:
            print("#   " + p)
    else:
        print("ok 2 - every tracked file is source with a known comment syntax, or data/documents")
    return 1 if missing or unknown else 0


if __name__ == "__main__":
    sys.exit(main())
