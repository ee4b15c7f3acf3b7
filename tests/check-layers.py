#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The levels of the C code hold (ARCHITECTURE.md, "Levels").

From the sources alone (no build, no tool but Python), for cbits/,
rts-writer/ and client/:

- the module graph: a module is a .c file and the .h of the same name
  (client/model/ and rts-writer/ are one module each, behind model.h and
  es_rts.h); module A depends on module B when a file of A includes a
  file of B, or names a function B defines inside a body or a macro (a
  call, or its address taken: a callback handed over is a dependency
  too; a declaration is not). Comments and strings are left out first.
- no module depends on one in a level above its own, nor on one of
  another folder at its own level (each folder is a unit), and no modules
  depend on each other in a circle, at any distance.
- in cbits/, every function that other files may call is named after the
  file that defines it: es_<file>_... (es_server_submit in es_server.c),
  or a public eventlog_socket_ name; a header's inline functions after the
  header too, but the format's raw byte readers (RAW_BYTES).
- no function is longer than MAX_LINES lines, braces included.

Prints TAP, one line per rule, with every violation as a comment. With
--self-test, plants a breach of each rule in a copy of the tree and checks
that it fails that rule, and only that one.
"""
import os
import re
import sys

MAX_LINES = 80

# Levels, bottom to top. The library: its folders in order, the RTS side
# on top. The command: the library's format and base under it, then its
# own levels (ARCHITECTURE.md, "client/"). include/ is the public header,
# below everything.
LEVELS = [
    ("include/", 0),
    ("cbits/base/", 10),
    ("cbits/format/", 11),
    ("cbits/net/", 12),
    ("cbits/delivery/", 13),
    ("cbits/policy/", 14),
    ("cbits/control/", 15),
    ("cbits/server/", 16),
    ("cbits/upstream/", 17),
    ("rts-writer/", 18),
    ("client/model/", 21),
    ("client/http/", 21),
    ("client/source/", 22),
    ("client/profile/", 22),
    ("client/spans/", 20),
    ("client/opts", 23, "client/ (the command line)"),
    ("client/help", 23, "client/ (the command line)"),
    ("client/subcommands", 23, "client/ (the command line)"),
    ("client/tables/", 24),
    ("client/top/", 24),
    ("client/prom/", 24),
    ("client/flight/", 24),
    ("client/control/", 24),
    ("client/web/", 25),
    ("client/main", 26, "client/ (the dispatch)"),
]
# The library may not use the command; the command uses only the
# library's format and base (what the Makefile links it with).
CLIENT_MAY_USE = ("cbits/base/", "cbits/format/", "include/")
# Modules of several files.
WHOLE = ("client/model/", "rts-writer/")
# Where #include "..." looks, after the including file's own folder.
INCLUDE_DIRS = ("cbits", "client", "include", "rts-writer")
ROOTS = ("include", "cbits", "rts-writer", "client")

# The wire format's readers and writers of raw bytes (format/es_header.h),
# the vocabulary of every file on both sides: named for what they read.
RAW_BYTES = {"es_be16", "es_be32", "es_be64", "es_put_be", "es_is_block",
             "es_block_time", "es_block_end_time", "es_put_block_marker"}

KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "do", "else",
            "case", "goto", "_Alignof", "_Static_assert", "__attribute__",
            "typeof", "__typeof__", "defined"}


def level_of(path):
    """A path's level and unit (its folder, or a part of client/)."""
    for entry in LEVELS:
        if path.startswith(entry[0]):
            return entry[1], entry[-1] if len(entry) > 2 else entry[0]
    return None, None


def module_of(path):
    for whole in WHOLE:
        if path.startswith(whole):
            return whole.rstrip("/")
    return os.path.splitext(path)[0]


def folder_of(module):
    """The unit a module belongs to: its folder, or for client/ itself
    and rts-writer/, its level's prefix."""
    _, prefix = level_of(module + "/" if module in
                         [w.rstrip("/") for w in WHOLE] else module)
    return prefix


def strip(text):
    """Comments, strings and characters blanked, lines kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j]) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    # C++'s extern "C" { ... } around a header is no scope of C's.
    return re.sub(r'extern\s*"\s*"\s*\{', lambda m: " " * len(m.group()),
                  "".join(out))


def without_directives(code):
    """Preprocessor lines (continued ones too) blanked; #define bodies
    are kept apart by the caller when it wants them."""
    lines = code.split("\n")
    out, cont = [], False
    for line in lines:
        directive = cont or line.lstrip().startswith("#")
        cont = directive and line.endswith("\\")
        out.append("" if directive else line)
    return "\n".join(out)


TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\S")


def uses(code):
    """The names a file uses: those inside braces (function bodies,
    initialisers) and in macros, not the declarations outside them."""
    names, depth = set(), 0
    directive = False
    for line in code.split("\n"):
        if directive or line.lstrip().startswith("#"):
            directive = line.endswith("\\")
            if not re.match(r"\s*#\s*include", line):
                names.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", line))
            continue
        for m in TOKEN.finditer(line):
            t = m.group()
            if t == "{":
                depth += 1
            elif t == "}":
                depth = max(depth - 1, 0)  # extern "C"'s end
            elif depth > 0 and re.match(r"[A-Za-z_]", t):
                names.add(t)
    return names


def functions(code):
    """The functions a file defines: (name, static, first line, last
    line), found at brace depth 0 as NAME ( ... ) {."""
    body = without_directives(code)
    toks = [(m.group(), body.count("\n", 0, m.start()) + 1)
            for m in TOKEN.finditer(body)]
    found = []
    depth, i, decl_start = 0, 0, 0
    while i < len(toks):
        t, line = toks[i]
        if t == "{":
            depth += 1
        elif t == "}":
            depth = max(depth - 1, 0)  # extern "C"'s end
            if depth == 0:
                decl_start = i + 1
        elif t == ";" and depth == 0:
            decl_start = i + 1
        elif (depth == 0 and i + 1 < len(toks) and toks[i + 1][0] == "("
              and re.match(r"[A-Za-z_]", t) and t not in KEYWORDS):
            j, par = i + 1, 0
            while j < len(toks):
                if toks[j][0] == "(":
                    par += 1
                elif toks[j][0] == ")":
                    par -= 1
                    if par == 0:
                        break
                j += 1
            if j + 1 < len(toks) and toks[j + 1][0] == "{":
                static = any(tok == "static" for tok, _ in toks[decl_start:i])
                k, d = j + 1, 0
                while k < len(toks):
                    if toks[k][0] == "{":
                        d += 1
                    elif toks[k][0] == "}":
                        d -= 1
                        if d == 0:
                            break
                    k += 1
                first = toks[decl_start][1] if decl_start < i else line
                found.append((t, static, first, toks[min(k, len(toks) - 1)][1]))
                i = k + 1
                decl_start = i
                continue
        i += 1
    return found


def resolve(src, name):
    for d in (os.path.dirname(src),) + INCLUDE_DIRS:
        p = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(p):
            return p
    return None


def read_tree():
    """Every C file under ROOTS (from the current directory): its text,
    its code (comments and strings blanked) and its functions."""
    files = sorted(os.path.join(dp, f)
                   for root in ROOTS for dp, _, fs in os.walk(root)
                   for f in fs if f.endswith((".c", ".h")))
    text = {f: open(f, encoding="utf-8").read() for f in files}
    code = {f: strip(t) for f, t in text.items()}
    defs = {f: functions(code[f]) for f in files}
    return files, text, code, defs


def dependencies(files, text, code, defs):
    """The module graph: (from, to) -> the first reason found."""
    # Who defines what other files may name: a .c file's functions that
    # are not static, a header's (inline) functions.
    owner = {}
    for f in files:
        for name, static, _, _ in defs[f]:
            if f.endswith(".h") or not static:
                owner.setdefault(name, set()).add(f)
    edges = {}

    def edge(a, b, why):
        ma, mb = module_of(a), module_of(b)
        if ma != mb:
            edges.setdefault((ma, mb), why)

    for f in files:
        for m in re.finditer(r'^\s*#\s*include\s*"([^"]+)"', text[f], re.M):
            target = resolve(f, m.group(1))
            if target is not None and target in text:
                edge(f, target, "%s includes %s" % (f, target))
        own = {name for name, _, _, _ in defs[f]}
        for name in sorted(uses(code[f]) - own):
            for target in sorted(owner.get(name, ())):
                edge(f, target, "%s calls %s (%s)" % (f, name, target))
    return edges


def unit_of(module):
    return level_of(module + ("/" if module + "/" in WHOLE else ""))


def wrong_way(edges):
    """Dependencies up a level, beside the module's own folder, or across
    the line between the library and the command."""
    bad = []
    for (a, b), why in sorted(edges.items()):
        la, pa = unit_of(a)
        lb, pb = unit_of(b)
        if la is None or lb is None:
            continue
        if a.startswith(("cbits/", "rts-writer")) and b.startswith("client/"):
            bad.append("the library uses the command: " + why)
        elif a.startswith("client/") and not b.startswith("client/") \
                and not b.startswith(CLIENT_MAY_USE):
            bad.append("the command uses more of the library than its "
                       "format and base: " + why)
        elif lb > la:
            bad.append("up a level (%s above %s): %s" % (pb, pa, why))
        elif lb == la and pa != pb:
            bad.append("sideways (%s beside %s): %s" % (pb, pa, why))
    return bad


def circles(edges):
    """Modules that depend on each other, at any distance: the strongly
    connected components of more than one module (Tarjan's algorithm),
    each with the dependencies inside it."""
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    found = []
    index, low, stack, on, counter = {}, {}, [], set(), [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    lines = []
    for comp in found:
        lines.append("modules that depend on each other: " + ", ".join(comp))
        lines.extend("  " + edges[(a, b)] for a in comp for b in comp
                     if (a, b) in edges)
    return lines


def misnamed(files, defs):
    """In cbits/, what a file exports is named after the file."""
    bad = []
    for f in files:
        if not f.startswith("cbits/"):
            continue
        base = os.path.splitext(os.path.basename(f))[0]
        for name, static, line, _ in defs[f]:
            if static and f.endswith(".c"):
                continue
            if name.startswith("eventlog_socket_") or name in RAW_BYTES or \
                    name == base or name.startswith(base + "_"):
                continue
            bad.append("%s:%d: %s is not named after %s (%s_...)"
                       % (f, line, name, os.path.basename(f), base))
    return bad


def too_long(files, defs):
    return ["%s:%d: %s is %d lines" % (f, first, name, last - first + 1)
            for f in files for name, _, first, last in defs[f]
            if last - first + 1 > MAX_LINES]


def analyze():
    """The rules, each with its violations (none: it holds)."""
    files, text, code, defs = read_tree()
    edges = dependencies(files, text, code, defs)
    return [
        ("no module uses one above it or beside its folder", wrong_way(edges)),
        ("no modules depend on each other in a circle", circles(edges)),
        ("cbits/: what a file exports is named after the file",
         misnamed(files, defs)),
        ("no function is over %d lines" % MAX_LINES, too_long(files, defs)),
    ], len({m for e in edges for m in e}), len(edges)


# What --self-test plants in a copy of the tree, each breaking one rule:
# (rule number, file, text appended).
PLANTED = [
    (1, "cbits/format/es_header.c",
     '#include "policy/es_wait.h"\n'),
    (1, "client/model/core.c",
     'void es_model_planted(void) { es_units_planted(); }\n'),
    (2, "cbits/delivery/es_store.c",
     'void es_store_planted(void);\n'
     'void es_store_planted(void) { es_fanout_planted(); }\n'),
    (2, "cbits/delivery/es_fanout.c",
     'void es_fanout_planted(void);\n'
     'void es_fanout_planted(void) { es_store_planted(); }\n'),
    (3, "cbits/delivery/es_pool.c",
     'int es_chunk_planted(void) { return 0; }\n'),
    (4, "cbits/base/es_log.c",
     'static int planted(void) {\n' + '    (void)0;\n' * 90 + '    return 0;\n}\n'),
]


def self_test():
    """The rules fail where they should: each planted breach, in a copy
    of the tree, makes its rule fail, and only its rule."""
    import shutil
    import tempfile
    here = os.getcwd()
    out = []
    with tempfile.TemporaryDirectory(prefix="check-layers.") as tmp:
        for root in ROOTS:
            shutil.copytree(root, os.path.join(tmp, root))
        os.chdir(tmp)
        try:
            clean = [bool(p) for _, p in analyze()[0]]
            out.append((not any(clean), "the copy breaks no rule"))
            # A function the planted client file calls must exist.
            with open("client/flight/units.c", "a") as f:
                f.write('void es_units_planted(void) {}\n')
            for rule in sorted({r for r, _, _ in PLANTED}):
                saved = {}
                for r, path, add in PLANTED:
                    if r == rule:
                        saved.setdefault(path, open(path).read())
                        with open(path, "a") as f:
                            f.write(add)
                failing = [i + 1 for i, (_, p) in enumerate(analyze()[0]) if p]
                for path, t in saved.items():
                    with open(path, "w") as f:
                        f.write(t)
                out.append((failing == [rule],
                            "a planted breach of rule %d fails it (and only it: %s)"
                            % (rule, failing)))
        finally:
            os.chdir(here)
    print("1..%d" % len(out))
    for i, (good, what) in enumerate(out, 1):
        print("%s %d - %s" % ("ok" if good else "not ok", i, what))
    return 0 if all(g for g, _ in out) else 1


def main():
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    results, nmodules, nedges = analyze()
    print("1..%d" % len(results))
    for i, (what, problems) in enumerate(results, 1):
        print("%s %d - %s" % ("not ok" if problems else "ok", i, what))
        for p in problems:
            print("#   " + p)
    print("# %d modules, %d dependencies between them" % (nmodules, nedges))
    return 1 if any(p for _, p in results) else 0


if __name__ == "__main__":
    sys.exit(main())
