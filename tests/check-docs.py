#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The user's docs hold together (README.md as a front door, docs/ by
reader). TAP:

- README.md is at most 250 lines;
- every relative link and #anchor of the project's Markdown files resolves:
  the file exists, and the anchor is a heading of the target as GitHub
  makes its ids (lower case; punctuation but `-` and `_` dropped; each
  space a `-`; `-1`, `-2` for repeats), or an explicit id/name;
- no line of README.md or docs/*.md is over 400 characters, and no table
  cell there over 200;
- docs/configuration.md's table lists exactly the GHC_EVENTLOG_* variables
  cbits/base/es_config.c reads, each with the default that eventlog-socket(7)
  (docs/man/eventlog-socket.7.scd, itself held to the code by
  tests/unit/library/test_config_manual.c) gives.

Usage: tests/check-docs.py [REPO]"""

import glob
import os
import re
import sys

REPO = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
README_MAX_LINES = 250
LINE_MAX = 400
CELL_MAX = 200

results = []


def ok(cond, what, details=()):
    results.append((bool(cond), what, list(details)))


def rel(path):
    return os.path.relpath(path, REPO)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def prose_lines(text):
    """(line number, line) of the lines outside fenced code blocks."""
    fence = None
    for n, line in enumerate(text.split("\n"), 1):
        m = re.match(r"^ {0,3}(`{3,}|~{3,})", line)
        if fence is None and m:
            fence = m.group(1)
            continue
        if fence is not None:
            if line.strip().startswith(fence[0] * len(fence)) and \
                    line.strip().strip(fence[0]) == "":
                fence = None
            continue
        yield n, line


def strip_code_spans(line):
    """The line with the text of its code spans replaced by x's (links and
    headings inside backquotes are no links; their length is kept)."""
    return re.sub(r"(`+)(.+?)\1", lambda m: "x" * len(m.group(0)), line)


def github_slug(heading):
    """The id GitHub gives a heading (before the -N of repeats)."""
    text = heading.strip()
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links: their text
    text = re.sub(r"<[^>]+>", "", text)                      # inline HTML
    text = text.replace("`", "").replace("*", "")
    text = text.lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    """The ids a Markdown file's headings (and explicit anchors) have."""
    if path in cache:
        return cache[path]
    text = read(path)
    ids, seen = set(), {}
    for _, line in prose_lines(text):
        m = re.match(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if m:
            slug = github_slug(m.group(2))
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            ids.add(slug if n == 0 else "%s-%d" % (slug, n))
        for a in re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", line):
            ids.add(a)
    cache[path] = ids
    return ids


def links(text):
    """(line number, target) of the inline links and images outside code."""
    # An HTML comment is not rendered: its text links nothing.
    text = re.sub(r"<!--.*?-->", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    for n, line in prose_lines(text):
        line = strip_code_spans(line)
        for m in re.finditer(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]"
                             r"\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)", line):
            yield n, m.group(1)
        for m in re.finditer(r"^\s*\[[^\]]+\]:\s*(\S+)", line):
            yield n, m.group(1)


def check_links(path):
    bad = []
    count = 0
    for n, target in links(read(path)):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
            continue  # http:, https:, mailto:
        count += 1
        file_part, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part \
            else path
        if not os.path.exists(dest):
            bad.append("%s:%d: %s: no such file %s" % (rel(path), n, target, rel(dest)))
            continue
        if anchor:
            if not dest.endswith(".md") or os.path.isdir(dest):
                bad.append("%s:%d: %s: an anchor into a file that is not Markdown"
                           % (rel(path), n, target))
            elif anchor not in anchors(dest):
                bad.append("%s:%d: %s: %s has no heading with the id %r"
                           % (rel(path), n, target, rel(dest), anchor))
    ok(not bad, "%s: every relative link and anchor resolves (%d links)" % (rel(path), count), bad)


def table_cells(line):
    """The cells of a Markdown table row (a `\\|` is no separator)."""
    body = line.strip()
    if not (body.startswith("|") and body.endswith("|")):
        return []
    body = body[1:-1]
    return [c.strip() for c in re.split(r"(?<!\\)\|", body)]


def check_lengths(path):
    long_lines, long_cells = [], []
    for n, line in enumerate(read(path).split("\n"), 1):
        if len(line) > LINE_MAX:
            long_lines.append("%s:%d: %d characters" % (rel(path), n, len(line)))
    for n, line in prose_lines(read(path)):
        for cell in table_cells(line):
            if len(cell) > CELL_MAX:
                long_cells.append("%s:%d: a cell of %d characters: %s..."
                                  % (rel(path), n, len(cell), cell[:60]))
    ok(not long_lines, "%s: no line over %d characters" % (rel(path), LINE_MAX), long_lines)
    ok(not long_cells, "%s: no table cell over %d characters (prose goes under the table)"
       % (rel(path), CELL_MAX), long_cells)


def variables_read():
    """The GHC_EVENTLOG_* variables es_config.c reads from the environment."""
    found = glob.glob(os.path.join(REPO, "cbits", "**", "es_config.c"), recursive=True)
    if len(found) != 1:
        return None, "es_config.c: %s" % found
    code = read(found[0])
    names = set(re.findall(r'\b(?:getenv|env|bool_var|size_var|read_ms|read_whole)'
                           r'\(\s*"(GHC_EVENTLOG_[A-Z_]+)"',
                           code))
    return names, rel(found[0])


def man_defaults():
    """{variable: default} of eventlog-socket(7)'s ENVIRONMENT ("none" when
    it has none)."""
    page = read(os.path.join(REPO, "docs", "man", "eventlog-socket.7.scd"))
    section = page.split("\n# ENVIRONMENT\n", 1)[1].split("\n# ", 1)[0]
    out = {}
    for entry in re.split(r"\n(?=\*GHC_EVENTLOG_)", section):
        m = re.match(r"\*(GHC_EVENTLOG_[A-Z_]+)\*", entry)
        if not m:
            continue
        d = re.search(r"Default:\s+(?:\*([^*]+)\*|(none))", entry)
        out[m.group(1)] = (d.group(1) or d.group(2)) if d else None
    return out


def check_configuration():
    path = os.path.join(REPO, "docs", "configuration.md")
    if not os.path.exists(path):
        ok(False, "docs/configuration.md lists the GHC_EVENTLOG_* variables", ["it is missing"])
        return
    # The table whose header is "| variable | default | meaning |".
    rows, inside = {}, False
    for n, line in prose_lines(read(path)):
        cells = table_cells(line)
        if [c.lower() for c in cells] == ["variable", "default", "meaning"]:
            inside = True
        elif not cells:
            inside = False
        elif inside:
            m = re.fullmatch(r"`(GHC_EVENTLOG_[A-Z_]+)`", cells[0])
            if m:
                rows[m.group(1)] = cells[1].strip("`")
    read_names, where = variables_read()
    if read_names is None:
        ok(False, "the variables the library reads", [where])
        return
    ok(len(read_names) >= 10 and set(rows) == read_names,
       "docs/configuration.md's table lists exactly the %d variables %s reads"
       % (len(read_names), where),
       ["not in the table: %s" % sorted(read_names - set(rows)),
        "in the table, not read: %s" % sorted(set(rows) - read_names)])
    man = man_defaults()
    bad = ["%s: the table says %r, eventlog-socket(7) %r" % (v, rows[v], man.get(v))
           for v in sorted(rows) if man.get(v) != rows[v]]
    ok(not bad and rows, "docs/configuration.md's defaults are eventlog-socket(7)'s "
       "(%d variables)" % len(rows), bad)


def main():
    readme = os.path.join(REPO, "README.md")
    docs = sorted(glob.glob(os.path.join(REPO, "docs", "*.md")))
    n = read(readme).count("\n")
    ok(n <= README_MAX_LINES, "README.md is %d lines, at most %d" % (n, README_MAX_LINES))
    others = [os.path.join(REPO, f) for f in ("CONTRIBUTING.md", "CHANGELOG.md",
                                              "ARCHITECTURE.md", "protocol.md",
                                              "BENCHMARKS.md")]
    ok(len(docs) >= 5, "docs/ has the reader's pages (%d)" % len(docs))
    for path in [readme] + docs + [p for p in others if os.path.exists(p)]:
        check_links(path)
    for path in [readme] + docs:
        check_lengths(path)
    check_configuration()
    print("1..%d" % len(results))
    failed = 0
    for i, (good, what, details) in enumerate(results, 1):
        print("%s %d - %s" % ("ok" if good else "not ok", i, what))
        if not good:
            failed += 1
            for d in details[:20]:
                print("#   %s" % d)
    print("# %d passed, %d failed" % (len(results) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
