# SPDX-License-Identifier: BSD-3-Clause
# The manual pages' one source (docs/man/*.scd) made into what is built
# from it, with POSIX awk only (mawk does), so the build needs no other tool:
#
#   awk -v to=man -v version=V -v date=YYYY-MM-DD -f scripts/man.awk PAGE.scd
#       the page in man(7) roff: what `man` shows and `make install` installs
#   awk -v to=c -f scripts/man.awk eventlog-socket.1.scd
#       the command's help (client/help.h): each subcommand's usage lines,
#       its --help text, and the options it documents with their values
#
# The source is written in scdoc's syntax, the part of it this script
# knows (scdoc itself is not needed):
#   the first line        NAME(SECTION)
#   ; text                a comment
#   # HEADING, ## heading a section, a subsection
#   a paragraph           lines up to a blank line; ++ ending a line breaks it
#   a term                a paragraph at the left margin followed at once
#                         (no blank line) by lines indented by one tab: the
#                         term and its description (more paragraphs of the
#                         description are indented by one tab too)
#   - item                a list item, at the left margin
#   ```                   a block shown as written (at the left margin)
#   *bold*, _underlined_  \* and \_ are the characters themselves; _ inside
#                         a word (GHC_EVENTLOG_WAIT) is itself too
#
# The help (to=c) relies on the page's layout:
#   # SYNOPSIS                 the top-level usage lines
#   # DESCRIPTION              its first paragraph opens the top-level help
#   # SUBCOMMANDS, ## NAME     one subsection per subcommand: its synopsis
#                              (usage lines; forms separated by ++), then a
#                              one-sentence summary, then the rest
#   # OPTIONS                  the options every subcommand takes
#   # EXIT STATUS              its first paragraph closes the top-level help
# A term whose first word is bold and starts with "-" documents options:
# each bold "-..." word in it is an option, and the underlined word right
# after it (one space between) is its value.

BEGIN {
    HB = "\001" # a hard line break (++) inside a paragraph's text
    NBSP = "\002" # a space no line breaks at: an option and its value
    nb = 0      # blocks: type[], level[], text[]
    inpara = 0
    incode = 0
    blank = 1
    if (to != "man" && to != "c") {
        print "man.awk: -v to=man or -v to=c" > "/dev/stderr"
        failed = 1
        exit 2
    }
}

# ---- reading the source into blocks ----

function add(t, lv, s) {
    nb++
    type[nb] = t
    level[nb] = lv
    text[nb] = s
}

NR == 1 {
    title = $0
    next
}

incode {
    if ($0 ~ /^```[ \t]*$/) {
        incode = 0
        blank = 0
        next
    }
    text[nb] = text[nb] (text[nb] == "" && !codestarted ? "" : "\n") $0
    codestarted = 1
    next
}

/^;/ { next }

/^```/ {
    inpara = 0
    incode = 1
    codestarted = 0
    add("code", 0, "")
    next
}

/^[ \t]*$/ {
    inpara = 0
    blank = 1
    next
}

/^## / {
    inpara = 0
    add("h2", 0, substr($0, 4))
    next
}

/^# / {
    inpara = 0
    add("h1", 0, substr($0, 3))
    next
}

{
    line = $0
    lv = 0
    while (substr(line, 1, 1) == "\t") {
        lv++
        line = substr(line, 2)
    }
    hard = 0
    if (line ~ /\+\+[ \t]*$/) {
        sub(/[ \t]*\+\+[ \t]*$/, "", line)
        hard = 1
    }
    if (lv > 1) {
        printf "man.awk: %s:%d: indented more than one tab\n", FILENAME, FNR > "/dev/stderr"
        failed = 1
        exit 1
    }
    if (inpara && !blank && lv > level[nb] && type[nb] == "para") {
        type[nb] = "term"
        add("para", lv, line)
    } else if (inpara && lv == level[nb] && !(lv == 0 && line ~ /^- /)) {
        text[nb] = text[nb] (substr(text[nb], length(text[nb])) == HB ? "" : " ") line
    } else if (lv == 0 && line ~ /^- /) {
        add("item", 0, substr(line, 3))
    } else {
        add("para", lv, line)
    }
    if (hard)
        text[nb] = text[nb] HB
    inpara = 1
    blank = 0
}

# ---- inline markup ----

function isalnum(c) {
    return c ~ /^[A-Za-z0-9]$/
}

# The text with its markup made roff (to=man) or taken out (to=c).
function inline(s, roff,    out, i, n, c, nx, pv, bold, ital) {
    out = ""
    n = length(s)
    bold = ital = 0
    pv = ""
    for (i = 1; i <= n; i++) {
        c = substr(s, i, 1)
        nx = i < n ? substr(s, i + 1, 1) : ""
        if (c == "\\" && (nx == "*" || nx == "_" || nx == "\\")) {
            c = nx
            i++
            out = out (roff ? roffchar(c, bold || ital, pv) : c)
        } else if (c == " " && pv == "*" && !bold && nx == "_") {
            out = out NBSP
        } else if (c == "*") {
            bold = !bold
            if (roff)
                out = out (bold ? "\\fB" : "\\fR")
        } else if (c == "_" && !ital && !isalnum(pv) && nx != "" && nx != " ") {
            ital = 1
            if (roff)
                out = out "\\fI"
        } else if (c == "_" && ital && !isalnum(nx)) {
            ital = 0
            if (roff)
                out = out "\\fR"
        } else {
            out = out (roff ? roffchar(c, bold || ital, pv) : c)
        }
        pv = c
    }
    if (roff && (bold || ital))
        out = out "\\fR"
    return out
}

# One character of text in roff: minus signs that are typed (options, and
# anything set in bold or underlined) stay ASCII; so do quotes there.
function roffchar(c, span, pv) {
    if (c == "\\")
        return "\\e"
    if (c == "-" && (span || pv == "" || pv == " " || pv == "-" || pv == "[" || pv == "("))
        return "\\-"
    if (c == "'" && span)
        return "\\(aq"
    if (c == "`")
        return "\\(ga"
    return c
}

# ---- wrapping ----

# `s` filled to `width` columns, the first line indented by `first`
# spaces and the others by `rest`; words are never split.
function fill(s, width, first, rest,    w, nw, i, out, line, ind) {

    nw = split(s, w, / +/)
    out = ""
    line = ""
    ind = first
    for (i = 1; i <= nw; i++) {
        if (w[i] == "")
            continue
        if (line != "" && ind + length(line) + 1 + length(w[i]) > width) {
            out = out spaces(ind) line "\n"
            line = ""
            ind = rest
        }
        line = line (line == "" ? "" : " ") w[i]
    }
    if (line != "")
        out = out spaces(ind) line "\n"
    if (to == "c")
        gsub(NBSP, " ", out)
    return out
}

function spaces(n,    s) {
    s = ""
    while (n-- > 0)
        s = s " "
    return s
}

# ---- to=man: roff ----

# Text lines of roff: filled, none starting with a control character.
function rofftext(s,    parts, np, i, out, lines, nl, j) {
    np = split(s, parts, HB)
    out = ""
    for (i = 1; i <= np; i++) {
        if (parts[i] == "" && i == np)
            continue
        if (i > 1)
            out = out ".br\n"
        nl = split(fill(nohyphen(inline(parts[i], 1)), 72, 0, 0), lines, "\n")
        for (j = 1; j <= nl; j++) {
            if (lines[j] == "")
                continue
            gsub(NBSP, "\\ ", lines[j])
            if (lines[j] ~ /^[.']/)
                lines[j] = "\\&" lines[j]
            # One space after a sentence, wherever the line ends (roff
            # puts two after a full stop that ends an input line).
            if (lines[j] ~ /[.?!:][)\]"']*(\\f[RBI])?$/)
                lines[j] = lines[j] "\\&"
            out = out lines[j] "\n"
        }
    }
    return out
}

# Words that are typed (with a font change or a minus sign: options,
# commands, paths) are never hyphenated: \% before each (groff 1.23 and
# later hyphenate and adjust by the reader's settings, whatever the page
# says at its top).
function nohyphen(s,    w, n, i, out) {
    n = split(s, w, / /)
    out = ""
    for (i = 1; i <= n; i++) {
        if (w[i] ~ /\\f[BI]|\\-/ && substr(w[i], 1, 2) != "\\%")
            w[i] = "\\%" w[i]
        out = out (i > 1 ? " " : "") w[i]
    }
    return out
}

function roffcode(s,    lines, n, i, out, l) {
    n = split(s, lines, "\n")
    out = ""
    for (i = 1; i <= n; i++) {
        l = lines[i]
        gsub(/\\/, "\\e", l)
        gsub(/-/, "\\-", l)
        gsub(/'/, "\\(aq", l)
        gsub(/`/, "\\(ga", l)
        if (l ~ /^[.]/)
            l = "\\&" l
        out = out l "\n"
    }
    return out
}

# Block i is a synopsis: the paragraph of SYNOPSIS, or the first one of a
# subcommand's subsection (which starts with the command's name).
function synopsis(i,    j) {
    if (type[i - 1] == "h2" && text[i] ~ /^\*eventlog-socket /)
        return 1
    for (j = i - 1; j > 0 && type[j] != "h1"; j--)
        ;
    return j > 0 && text[j] == "SYNOPSIS"
}

function roffsynopsis(s,    parts, np, j, out, hang, w) {
    # The hang: the command's words ("eventlog-socket record "), or 4.
    if (s ~ /^\*eventlog-socket[^*]*\*/) {
        w = substr(s, 2)
        hang = index(w, "*")
    } else {
        hang = 4
    }
    np = split(s, parts, HB)
    out = ".na\n.in +" hang "n\n"
    for (j = 1; j <= np; j++)
        if (parts[j] != "")
            out = out (j > 1 ? ".br\n" : "") ".ti -" hang "n\n" rofftext(parts[j])
    return out ".in\n.ad l\n"
}

function man(    name, sec, i, after) {
    name = title
    sub(/\(.*$/, "", name)
    sec = title
    sub(/^[^(]*\(/, "", sec)
    sub(/\).*$/, "", sec)
    printf ".\\\" Generated from %s by scripts/man.awk: do not edit.\n", FILENAME
    printf ".TH %s %s %s \"eventlog-socket %s\" \"eventlog-socket manual\"\n", toupper(name), sec,
           date, version
    print ".nh"
    print ".ad l"
    after = "sh"
    for (i = 1; i <= nb; i++) {
        if (type[i] == "h1" || type[i] == "h2") {
            print (type[i] == "h1" ? ".SH " : ".SS ") text[i]
            after = "sh"
        } else if (type[i] == "term") {
            # The description under its term, however short the term.
            print ".TP"
            printf "%s", rofftext(text[i])
            print ".br"
            after = "term"
        } else if (type[i] == "para" && level[i] == 1) {
            if (after != "term")
                print ".IP"
            printf "%s", rofftext(text[i])
            after = "desc"
        } else if (type[i] == "para" && synopsis(i)) {
            # Each form on lines of its own, continued under its arguments.
            if (after != "sh")
                print ".PP"
            printf "%s", roffsynopsis(text[i])
            after = "para"
        } else if (type[i] == "para") {
            if (after != "sh")
                print ".PP"
            printf "%s", rofftext(text[i])
            after = "para"
        } else if (type[i] == "item") {
            print ".IP \\(bu 2"
            printf "%s", rofftext(text[i])
            after = "item"
        } else if (type[i] == "code") {
            if (after != "sh")
                print ".PP"
            print ".RS 4"
            print ".nf"
            printf "%s", roffcode(text[i])
            print ".fi"
            print ".RE"
            after = "code"
        }
    }
}

# ---- to=c: the command's help ----

function plain(s) {
    return inline(s, 0)
}

# Blocks from..to as the help shows them, 79 columns wide: a blank line
# between blocks, but none within a list, nor between a term and its
# description or the next term.
function helptext(from, to,    i, out, parts, np, j, ind, pt, pl) {
    out = ""
    for (i = from; i <= to; i++) {
        if (type[i] == "h1" || type[i] == "h2")
            continue
        pt = type[i - 1]
        pl = level[i - 1]
        if (out != "" && !(type[i] == "item" && pt == "item") &&
            !((type[i] == "term" || type[i] == "item") && pt == "para" && pl == 0 &&
              text[i - 1] ~ /:$/) &&
            !(type[i] == "para" && level[i] == 1 && pt == "term") &&
            !(type[i] == "term" && (pt == "term" || (pt == "para" && pl == 1))))
            out = out "\n"
        if (type[i] == "code") {
            np = split(text[i], parts, "\n")
            for (j = 1; j <= np; j++)
                out = out "    " parts[j] "\n"
            continue
        }
        ind = type[i] == "term" || type[i] == "item" ? 2 : level[i] == 1 ? 6 : 0
        np = split(text[i], parts, HB)
        for (j = 1; j <= np; j++) {
            if (parts[j] == "" && j == np)
                continue
            if (type[i] == "item")
                out = out fill("- " plain(parts[j]), 79, ind, ind + 2)
            else
                out = out fill(plain(parts[j]), 79, ind, ind)
        }
    }
    return out
}

# The usage lines of a synopsis paragraph: "usage: " before the first form,
# each wrapped under its arguments.
function usage(s, cmd,    parts, np, j, out, hang) {
    np = split(s, parts, HB)
    out = ""
    hang = length("usage: eventlog-socket ") + (cmd == "" ? 0 : length(cmd) + 1)
    for (j = 1; j <= np; j++) {
        if (parts[j] == "")
            continue
        if (out == "")
            out = fill("usage: " plain(parts[j]), 79, 0, hang)
        else
            out = out fill(plain(parts[j]), 79, 7, hang)
    }
    return out
}

# A C string literal of `s`, one source line per line of text.
function cstring(s, ind,    lines, n, i, out, l) {
    if (s == "")
        return "\"\""
    n = split(s, lines, "\n")
    out = ""
    for (i = 1; i <= n; i++) {
        if (i == n && lines[i] == "")
            break
        l = lines[i]
        gsub(/\\/, "\\\\", l)
        gsub(/"/, "\\\"", l)
        out = out (out == "" ? "" : "\n" ind) "\"" l (i < n ? "\\n" : "") "\""
    }
    return out
}

# The options a term documents, as C initialisers {"FLAG", "VALUE"}, and
# the bold words of a term whose first word is an option.
function termflags(s, all,    out, rest, w, v, p) {
    out = ""
    if (!all && s !~ /^\*-/)
        return ""
    rest = s
    while ((p = index(rest, "*")) > 0) {
        rest = substr(rest, p + 1)
        p = index(rest, "*")
        if (p == 0)
            break
        w = substr(rest, 1, p - 1)
        rest = substr(rest, p + 1)
        v = ""
        if (substr(rest, 1, 2) == " _") {
            v = substr(rest, 3)
            sub(/_([^A-Za-z0-9].*)?$/, "", v)
            rest = substr(rest, 3 + length(v) + 1)
        }
        if (w ~ /^-/)
            out = out sprintf("{\"%s\", \"%s\"}, ", w, v)
    }
    return out
}

function flagsof(from, to,    i, out) {
    out = ""
    for (i = from; i <= to; i++)
        if (type[i] == "term")
            out = out termflags(text[i], 0)
    return out "{NULL, NULL}"
}

# The blocks of section (h1) `name`: sets S_FROM and S_TO (0 when absent).
function section(name,    i) {
    S_FROM = S_TO = 0
    for (i = 1; i <= nb; i++) {
        if (type[i] == "h1" && S_FROM)
            break
        if (type[i] == "h1" && text[i] == name)
            S_FROM = i + 1
    }
    if (S_FROM)
        S_TO = i - 1
}

function firstpara(from, to, lead,    i) {
    for (i = from; i <= to; i++)
        if (type[i] == "para" && level[i] == 0)
            return fill(lead plain(text[i]), 79, 0, 0)
    return ""
}

function cfile(    i, j, k, sub_from, sub_to, cmd, nsub, top, subs, common, opts_from, opts_to,
              forms, f, nf, syn) {
    print "/* Generated from " FILENAME " by scripts/man.awk: do not edit. */"
    print "#include \"help.h\""
    print ""
    section("OPTIONS")
    opts_from = S_FROM
    opts_to = S_TO
    for (i = opts_from; i <= opts_to && type[i] != "term"; i++)
        ;
    common = helptext(i, opts_to)
    printf "const struct es_help_flag es_help_common_flags[] = {%s};\n\n", flagsof(opts_from, opts_to)
    section("SUBCOMMANDS")
    nsub = 0
    subs = ""
    for (i = S_FROM; i <= S_TO; i++) {
        if (type[i] != "h2")
            continue
        cmd = text[i]
        for (j = i + 1; j <= S_TO && type[j] != "h2"; j++)
            ;
        sub_from = i + 1
        sub_to = j - 1
        if (type[sub_from] != "para" || type[sub_from + 1] != "para") {
            printf "man.awk: subcommand %s: no synopsis and summary\n", cmd > "/dev/stderr"
            failed = 1
            exit 1
        }
        nsub++
        printf "static const struct es_help_flag flags_%d[] = {%s};\n", nsub,
               flagsof(sub_from + 2, sub_to)
        printf "static const char usage_%d[] =\n    %s;\n", nsub, cstring(usage(text[sub_from], cmd), "    ")
        printf "static const char text_%d[] =\n    %s;\n\n", nsub,
               cstring("\n" fill(plain(text[sub_from + 1]), 79, 0, 0) "\n" \
                       helptext(sub_from + 2, sub_to) "\nOptions of every subcommand:\n" common, "    ")
        # The top-level list: each form of the synopsis, then the summary.
        nf = split(text[sub_from], forms, HB)
        for (f = 1; f <= nf; f++) {
            if (forms[f] == "")
                continue
            syn = plain(forms[f])
            sub(/^eventlog-socket /, "", syn)
            gsub(" \\[--connect-timeout" NBSP "S\\]| \\[--retry\\]", "", syn)
            top = top fill(syn, 79, 2, 3 + length(cmd))
        }
        top = top fill(plain(text[sub_from + 1]), 79, 6, 6)
        subs = subs sprintf("    {\"%s\", usage_%d, text_%d, flags_%d},\n", cmd, nsub, nsub, nsub)
    }
    section("SYNOPSIS")
    printf "static const char usage_top[] =\n    %s;\n", cstring(usage(text[S_FROM], ""), "    ")
    printf "static const struct es_help_flag flags_top[] = {%s{NULL, NULL}};\n",
           termflags(text[S_FROM], 1)
    section("DESCRIPTION")
    k = firstpara(S_FROM, S_TO, "")
    section("SOURCES")
    k = k "\nSubcommands:\n" top "\nOptions of every subcommand:\n" common "\n" \
        firstpara(S_FROM, S_TO, "")
    section("EXIT STATUS")
    k = k "\n" firstpara(S_FROM, S_TO, "Exit status: ") \
        "\n`eventlog-socket help SUBCOMMAND` tells more of one; `man eventlog-socket`, all.\n"
    printf "static const char text_top[] =\n    %s;\n\n", cstring("\n" k, "    ")
    printf "const struct es_help_page es_help_top = {\"\", usage_top, text_top, flags_top};\n"
    printf "const struct es_help_page es_help_pages[] = {\n%s};\n", subs
    printf "const int es_help_npages = %d;\n", nsub
}

END {
    if (failed)
        exit 1
    if (incode) {
        printf "man.awk: %s: a ``` block is not closed\n", FILENAME > "/dev/stderr"
        exit 1
    }
    if (to == "man")
        man()
    else
        cfile()
}
