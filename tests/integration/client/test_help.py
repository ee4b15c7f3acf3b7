# SPDX-License-Identifier: BSD-3-Clause
"""The command's help and its manual pages: `help SUB` is `SUB --help`;
the manual page, the help and the option parser name the same options;
usage errors name what is missing and the nearest subcommand or option;
both pages render without a warning in groff, mandoc and man, in 80
columns; the environment page lists exactly the variables the library
reads (cbits/base/es_config.c)."""

import glob
import os
import re
import shutil
import subprocess

import harness
from client_cmd import run
from harness import ROOT, Skip, expect, note, test

# Every subcommand the command has (client/main.c's table).
SUBCOMMANDS = {"record", "control", "heap", "top", "serve", "report", "compare", "table",
               "metrics", "watch", "profile"}

FIXTURE = os.path.join(ROOT, "tests", "fixtures", "ghc-9.6.6.eventlog")
PAGES = ("eventlog-socket.1", "eventlog-socket.7")


def page_path(name):
    path = os.path.abspath(os.path.join(harness.BUILD, "man", name))
    expect(os.path.exists(path), "%s was not built (make builds build/man/)" % path)
    return path


def man_text(name):
    """The page as `man -l` shows it in 80 columns, as plain text."""
    if shutil.which("man") is None:
        raise Skip("man (man-db) is not installed")
    # -rHY=0: groff 1.23 (Debian trixie, sid) hyphenates man pages despite
    # the page's .nh; a word split over two lines would hide it from a test.
    env = dict(os.environ, MANWIDTH="80", MANPAGER="cat", PAGER="cat", LC_ALL="C.UTF-8",
               MANROFFOPT="-rHY=0")
    env.pop("MAN_KEEP_FORMATTING", None)
    r = subprocess.run(["man", "-l", page_path(name)], capture_output=True, text=True, env=env,
                       timeout=60)
    expect(r.returncode == 0 and not r.stderr, "man -l %s: exit %d, %r"
           % (name, r.returncode, r.stderr))
    return r.stdout


def sections(text):
    """{SECTION: [lines]} of a rendered page (headings start in column 0)."""
    out, cur = {}, None
    for line in text.splitlines():
        if line and not line[0].isspace():
            cur = line.strip()
            out[cur] = []
        elif cur is not None:
            out[cur].append(line)
    return out


def subsections(lines):
    """{name: [lines]} of a section's subsections (headings at 3 spaces)."""
    out, cur = {}, None
    for line in lines:
        m = re.match(r"^   (\S.*)$", line)
        if m:
            cur = m.group(1)
            out[cur] = []
        elif cur is not None:
            out[cur].append(line)
    return out


FLAG = re.compile(r"(?:^|[\s,\[(|])(--?[a-z][a-z-]*)")


def indent(line):
    return len(line) - len(line.lstrip(" "))


def base_indent(lines):
    """A section's text indent (7 columns in groff 1.22, 5 in 1.23 and
    later; subsection headings are at 3)."""
    return min((indent(ln) for ln in lines if ln.strip() and indent(ln) > 3), default=7)


def terms(lines, first=r"-", base=None):
    """The term lines of a rendered list: at the text indent (or `base`),
    starting with `first`, the next line (the description) further in."""
    base = base_indent(lines) if base is None else base
    out = []
    for i, line in enumerate(lines[:-1]):
        nxt = lines[i + 1]
        if (indent(line) == base and re.match(first, line.strip())
                and nxt.strip() and indent(nxt) > base):
            out.append(line.strip())
    return out


def flags_of(term_lines):
    return {f for t in term_lines for f in FLAG.findall(t)}


def help_of(s, args):
    rc, out, err = run(s, args)
    expect(rc == 0 and not err, "%s: exit %d, stderr %r" % (" ".join(args), rc, err[:300]))
    return out


def manual_subcommands(s):
    page = sections(man_text("eventlog-socket.1"))
    expect("SUBCOMMANDS" in page and "OPTIONS" in page,
           "the page has no SUBCOMMANDS or OPTIONS section: %r" % list(page))
    return subsections(page["SUBCOMMANDS"]), flags_of(terms(page["OPTIONS"]))


@test(ghc_free=True)
def client_help_subcommand_is_its_help(s):
    """`eventlog-socket help SUB` prints exactly `SUB --help` (and `-h`),
    on stdout with exit 0, for every subcommand; `help`, `--help` and `-h`
    alone print the same top-level help, and `help` of no subcommand is a
    usage error (exit 2) that suggests the nearest one."""
    subs = ["record", "control", "heap", "top", "serve", "report", "table", "compare", "metrics"]
    for sub in subs:
        text = help_of(s, [sub, "--help"])
        expect(text.startswith("usage: eventlog-socket " + sub), "%s --help: %r" % (sub, text[:80]))
        expect(help_of(s, ["help", sub]) == text, "help %s differs from %s --help" % (sub, sub))
        expect(help_of(s, [sub, "-h"]) == text, "%s -h differs from %s --help" % (sub, sub))
    top = help_of(s, ["--help"])
    expect(help_of(s, ["help"]) == top and help_of(s, ["-h"]) == top,
           "help, --help and -h differ")
    rc, out, err = run(s, ["help", "recrod"])
    expect(rc == 2 and not out and "did you mean record?" in err,
           "help recrod: exit %d, %r" % (rc, err))
    note("%d subcommands: help SUB = SUB --help = SUB -h" % len(subs))


@test(ghc_free=True)
def client_help_and_manual_name_every_option(s):
    """Each subcommand's options in the manual page (its subsection's terms
    and OPTIONS) are exactly those of its --help; each is accepted by the
    parser (never "unknown option"); the top-level --help names every
    subcommand and every option of each (by one of its names). The parser itself refuses to run
    with a table that differs from the manual, so `SUB --help` exiting 0
    with nothing on stderr shows that its table agrees too."""
    subs, common = manual_subcommands(s)
    expect(common == {"--connect-timeout", "--retry", "-h", "--help"},
           "OPTIONS documents %s" % sorted(common))
    expect(set(subs) == SUBCOMMANDS,
           "the manual has %d subcommands: %s" % (len(subs), sorted(subs)))
    top = help_of(s, ["--help"])
    total = 0
    for sub, lines in subs.items():
        own = terms(lines)
        manual = flags_of(own) | common
        text = help_of(s, [sub, "--help"])
        helped = flags_of(terms(text.splitlines(), base=2))
        expect(manual == helped, "%s: the manual has %s, --help %s"
               % (sub, sorted(manual - helped), sorted(helped - manual)))
        expect(re.search(r"^  %s\b" % sub, top, re.M), "--help does not list %s" % sub)
        for term in own:  # an option, or another name of it (-o, --output)
            expect(any(re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(f), top)
                       for f in flags_of([term])),
                   "--help does not name %s (of %s)" % (term, sub))
        for flag in sorted(manual):
            rc, _, err = run(s, [sub, flag])
            expect("unknown option" not in err and rc in (0, 2),
                   "%s %s: exit %d, %r" % (sub, flag, rc, err[:200]))
        total += len(manual)
    note("%d options of %d subcommands in the manual, their --help and the top-level --help"
         % (total, len(subs)))


@test(ghc_free=True)
def client_usage_error_names_what_is_missing(s):
    """A missing argument or required option is named on the first line
    of stderr, then the usage; exit 2, no connection tried, no file."""
    cases = [
        (["record"], "record: ADDR is required"),
        (["control", s.path("x.sock")], "control: start|stop|census|events is required"),
        (["heap", FIXTURE], "heap: --hp OUT.hp or --csv OUT.csv is required"),
        (["profile"], "profile: ADDR|FILE is required"),
        (["profile", FIXTURE], "profile: -o OUT is required"),
        (["top"], "top: ADDR is required"),
        (["serve"], "serve: ADDR is required"),
        (["report"], "report: FILE|ADDR is required"),
        (["report", FIXTURE], "report: -o OUT.html is required"),
        (["report", FIXTURE, FIXTURE], "report: -o OUT.html is required"),
        (["table"], "table: KIND is required"),
        (["table", "gc"], "table: ADDR|FILE is required"),
        (["table", "gc", FIXTURE], "table: --csv OUT.csv is required"),
        (["compare", FIXTURE], "compare: RUN_B is required"),
        (["metrics"], "metrics: SOURCE is required"),
        ([], "eventlog-socket: SUBCOMMAND is required"),
    ]
    for args, first in cases:
        rc, out, err = run(s, args)
        lines = err.splitlines()
        expect(rc == 2 and not out, "%s: exit %d, stdout %r" % (args, rc, out[:80]))
        expect(lines and lines[0].endswith(first),
               "%s: first line %r, not ...%r" % (args, lines[:1], first))
        expect(len(lines) > 1 and lines[1].startswith("usage: eventlog-socket"),
               "%s: no usage after the message: %r" % (args, err))
    made = [f for f in os.listdir(s.dir) if f.endswith((".html", ".csv", ".hp"))]
    expect(not made, "files were written: %s" % made)
    note("%d command lines, each naming what is missing" % len(cases))


@test(ghc_free=True)
def client_usage_error_suggests_nearest(s):
    """An unknown subcommand, option or control command word gets the
    nearest one (edit distance,
    a swap of two letters counting one), or a unique prefix; nothing when
    none is near; an option written with = is told to take a space."""
    sock = s.path("never.sock")
    cases = [
        (["recrod"], "no subcommand recrod; did you mean record?"),
        (["hep", FIXTURE], "no subcommand hep; did you mean heap?"),
        (["comapre"], "did you mean compare?"),
        (["metric"], "did you mean metrics?"),
        (["--verison"], "did you mean --version?"),
        (["record", sock, "--lossles"], "unknown option --lossles; did you mean --lossless?"),
        (["record", sock, "--ouptut", "x"], "did you mean --output?"),
        (["serve", sock, "--htp", ":0"], "did you mean --http?"),
        (["metrics", "--toplabels", "3", sock], "did you mean --top-labels?"),
        (["control", sock, "census", "--wiat"], "did you mean --wait?"),
        (["top", sock, "--rety"], "did you mean --retry?"),
        (["table", "gc", FIXTURE, "--connect"], "did you mean --connect-timeout?"),
        (["serve", sock, "--http=127.0.0.1:0"], "write --http VALUE, with a space"),
        # control's command words as well as its flags.
        (["control", sock, "censsu"],
         "censsu is not start, stop, census or events; did you mean census?"),
        (["control", sock, "stpo", "--wait"], "did you mean stop?"),
        (["control", sock, "star"], "did you mean start?"),
    ]
    for args, words in cases:
        rc, out, err = run(s, args)
        expect(rc == 2 and words in err, "%s: exit %d, %r" % (args, rc, err))
        expect("usage: eventlog-socket" in err, "%s: no usage: %r" % (args, err))
        expect("no such socket" not in err, "%s: tried to connect: %r" % (args, err))
    for args in (["zzzzzz"], ["record", sock, "--zzzzzz"], ["record", sock, "-x"],
                 ["control", sock, "zzzzzz"]):
        rc, _, err = run(s, args)
        expect(rc == 2 and "did you mean" not in err, "%s: %r" % (args, err))
    note("%d suggestions, 4 words near nothing" % len(cases))


def lint(path):
    """What groff, mandoc and man say about the page: a list of problems,
    and the tools that ran."""
    problems, ran = [], []
    if shutil.which("groff"):
        r = subprocess.run(["groff", "-ww", "-man", "-Tutf8", path], capture_output=True,
                           timeout=60)
        ran.append("groff -ww")
        if r.returncode != 0 or r.stderr:
            problems.append("groff -ww: %r" % r.stderr.decode(errors="replace")[:500])
    if shutil.which("mandoc"):
        r = subprocess.run(["mandoc", "-T", "lint", path], capture_output=True, timeout=60)
        ran.append("mandoc -T lint")
        if r.returncode != 0 or r.stdout or r.stderr:
            problems.append("mandoc -T lint: %r" % (r.stdout + r.stderr).decode()[:500])
    return problems, ran


@test(ghc_free=True)
def man_pages_render_clean(s):
    """Both pages: no warning from groff -ww, mandoc -T lint or man -l; no
    line wider than 80 columns in man's own layout, and the text left-aligned
    (no gaps widened to justify it)."""
    ran = set()
    for name in PAGES:
        problems, tools = lint(page_path(name))
        ran.update(tools)
        expect(not problems, "%s: %s" % (name, "; ".join(problems)))
        text = man_text(name)
        wide = [line for line in text.splitlines() if len(line) > 80]
        expect(not wide, "%s: lines over 80 columns: %r" % (name, wide[:3]))
        expect(len(text.splitlines()) > 50, "%s: only %d lines" % (name, len(text.splitlines())))
        # Left-aligned (.ad l), not justified: no widened gap between two
        # words of running text (the title and footer lines aside). Before,
        # the paragraphs after the first list of terms were justified.
        gaps = [line for line in text.splitlines()[1:-1]
                if re.search(r"[a-z,;:)]  +[a-z(]", line.strip())
                and "eventlog-socket manual" not in line]
        expect(not gaps, "%s: justified, %d lines with widened gaps: %r"
               % (name, len(gaps), gaps[:3]))
    if len(ran) < 2:
        raise Skip("groff or mandoc is not installed (ran: %s)" % ", ".join(sorted(ran)))
    note("%s: no warnings from %s and man -l, 80 columns"
         % (", ".join(PAGES), ", ".join(sorted(ran))))


def variables_read():
    """The GHC_EVENTLOG_* variables cbits' es_config.c reads from the
    environment."""
    found = glob.glob(os.path.join(ROOT, "cbits", "**", "es_config.c"), recursive=True)
    expect(len(found) == 1, "es_config.c: %s" % found)
    with open(found[0]) as f:
        code = f.read()
    names = set(re.findall(r'\b(?:getenv|env|bool_var|size_var|read_ms|read_whole|read_seconds)'
                           r'\(\s*"(GHC_EVENTLOG_[A-Z_]+)"',
                           code))
    expect(len(names) >= 10, "only %s read in %s" % (sorted(names), found[0]))
    return names


@test(ghc_free=True)
def man7_lists_every_variable(s):
    """eventlog-socket(7)'s ENVIRONMENT has one entry per variable the
    library reads (es_config.c), no other, each with its default."""
    page = sections(man_text("eventlog-socket.7"))
    expect("ENVIRONMENT" in page, "no ENVIRONMENT section: %r" % list(page))
    lines = page["ENVIRONMENT"]
    entries = terms(lines, first="GHC_EVENTLOG_")
    documented = {re.match(r"(GHC_EVENTLOG_[A-Z_]+)", t).group(1) for t in entries}
    read = variables_read()
    expect(documented == read, "the page lacks %s; the code does not read %s"
           % (sorted(read - documented), sorted(documented - read)))
    # Each entry's text, up to the next entry, says its default.
    text = "\n".join(lines)
    base = base_indent(lines)
    for name in sorted(documented):
        entry = re.split(r"^ {%d}%s=" % (base, name), text, 1, re.M)[1]
        entry = re.split(r"^ {%d}GHC_EVENTLOG_" % base, entry, 1, re.M)[0]
        entry = re.sub("[\u2010-]\n\\s*", "", entry)  # a hyphenated word, whole again
        expect(re.search(r"Default:\s+\S", entry), "%s: no default given" % name)
    note("%d variables, the same in the page and in es_config.c" % len(read))


@test(ghc_free=True)
def man_table_columns_are_the_csv_header(s):
    """The columns the manual gives for each `table` KIND are the header
    row `table KIND FILE --csv -` writes, in order; and the kinds are all
    there are (another one is refused naming the six)."""
    subs, _ = manual_subcommands(s)
    lines = subs["table"]
    base = base_indent(lines)
    kinds = {}
    for term in terms(lines, first=r"[a-z]+$"):
        i = lines.index(" " * base + term)
        desc = []
        for d in lines[i + 1:]:
            if indent(d) <= base:
                break
            desc.append(d.strip())
        head = re.split(r"\.\s|:", " ".join(desc), 1)[0]
        kinds[term] = [c.strip() for c in head.split(",")]
    expect(sorted(kinds) == sorted(["gc", "heap", "census", "markers", "sparks", "threads",
                                    "profile", "spans"]),
           "the manual's kinds: %s" % sorted(kinds))
    for kind, columns in kinds.items():
        rc, out, err = run(s, ["table", kind, FIXTURE, "--csv", "-"])
        header = out.splitlines()[0].split(",") if out else []
        expect(rc == 0 and header == columns, "table %s: exit %d, header %s, the manual %s"
               % (kind, rc, header, columns))
    rc, _, err = run(s, ["table", "nosuch", FIXTURE, "--csv", "-"])
    expect(rc == 2 and all(k in err for k in kinds), "table nosuch: %d %r" % (rc, err))
    note("%d kinds, %d columns" % (len(kinds), sum(len(c) for c in kinds.values())))
