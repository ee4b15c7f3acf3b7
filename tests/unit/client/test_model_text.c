/* SPDX-License-Identifier: BSD-3-Clause */
/* What the client's model keeps of a stream's text and tables, whatever
 * the stream sends (client/model/census.c, label.c, ipe.c, notes.c):
 * names and markers are valid UTF-8 (cbits/format/es_utf8.h's rule: U+FFFD
 * for each bad byte, a cut between characters); census labels follow
 * model.h's rule (a plain label as sent, any other made plain and given a
 * suffix from a hash of its bytes), so labels sent apart stay apart; -hi's
 * info table names stay within ES_MODEL_MAX_IPE_BYTES, and a figures-only
 * model (`metrics`) keeps none. No argument. */
#include "model/model.h"
#include "model_events.h"
#include "../unit.h"

#include <stdlib.h>
#include <string.h>

static struct es_model *new_model(bool figures_only) {
    struct es_model *m = malloc(sizeof *m);
    es_model_init(m);
    if (figures_only)
        es_model_figures_only(m);
    return m;
}

static void free_model(struct es_model *m) {
    es_model_destroy(m);
    free(m);
}

static void census_label(struct es_model *m, const char *label) {
    struct ev b;
    put(m, u(mk(&b, ES_EVENT_HEAP_PROF_SAMPLE_BEGIN, 10), 1, 8));
    put(m, str(u(u(mk(&b, ES_EVENT_HEAP_PROF_SAMPLE_STRING, 10), 0, 1), 64, 8), label, true));
    put(m, u(mk(&b, ES_EVENT_HEAP_PROF_SAMPLE_END, 10), 1, 8));
}

UNIT_CASE(model_text_labels) {
    struct es_model *m = new_model(false);
    census_label(m, "bad\xff(");
    ok(m->cur.n == 1 &&
           strcmp(es_model_label(m, m->cur.e[0].label), "bad\xef\xbf\xbd(~0eb96681fc52f797") == 0,
       "a census label's bad byte is U+FFFD, and the label has its bytes' suffix: %s",
       es_model_label(m, m->cur.e[0].label));
    char longer[520];
    memset(longer, 'a', 510);
    strcpy(longer + 510, "\xc3\xa9");
    census_label(m, longer);
    const char *kept = es_model_label(m, m->cur.e[0].label);
    ok(strlen(kept) == ES_MODEL_LABEL_MAX && strspn(kept, "a") == 494 && kept[494] == '~',
       "a 512-byte label is cut between characters to leave room for its suffix (%zu bytes)",
       strlen(kept));
    struct ev b;
    put(m, str(mk(&b, ES_EVENT_USER_MARKER, 20), "mark\xc3", false));
    ok(strcmp(m->notes[0].text, "mark\xef\xbf\xbd") == 0, "a marker's cut sequence is U+FFFD");
    put(m, str(str(u(mk(&b, ES_EVENT_PROGRAM_ARGS, 30), 0, 4), "/bin/pr\xfeg", true), "-x\x80",
               false));
    ok(strcmp(m->program, "pr\xef\xbf\xbdg") == 0 && strstr(m->args, "-x\xef\xbf\xbd") != NULL,
       "the program's name and arguments too: %s, %s", m->program, m->args);
    free_model(m);
}

/* IPE: address, then table name, closure type, type, label, module,
 * source location; the name kept is "LABEL (LOC)". */
static void ipe(struct es_model *m, uint64_t addr) {
    char label[256], loc[300];
    snprintf(label, sizeof label, "label-%llu", (unsigned long long)addr);
    memset(label + strlen(label), 'l', 200);
    label[255] = '\0';
    memset(loc, 'f', 299);
    loc[299] = '\0';
    struct ev b;
    mk(&b, ES_EVENT_IPE, 40);
    u(&b, addr, 8);
    str(str(str(str(str(str(&b, "t_info", true), "THUNK", true), "T", true), label, true), "M",
            true),
        loc, true);
    put(m, &b);
}

UNIT_CASE(model_text_ipe_tables) {
    struct es_model *m = new_model(false), *f = new_model(true);
    size_t n = 0;
    for (uint64_t addr = 0x1000; n < 100000; addr += 16, n++) {
        ipe(m, addr);
        ipe(f, addr);
    }
    ok(m->ipe_n > 1000 && m->ipe_bytes <= ES_MODEL_MAX_IPE_BYTES && m->ipe_dropped > 0 &&
           m->ipe_n + m->ipe_dropped == n,
       "%zu IPE events of ~560-byte names: %zu kept in %zu bytes (at most %zu), %llu not", n,
       m->ipe_n, m->ipe_bytes, ES_MODEL_MAX_IPE_BYTES, (unsigned long long)m->ipe_dropped);
    ok(f->ipe_n == 0 && f->ipe == NULL, "a figures-only model keeps none (%zu)", f->ipe_n);
    es_model_reset(m);
    ok(m->ipe_n == 0 && m->ipe_bytes == 0, "reset: the tables go with the run");
    free_model(m);
    free_model(f);
}

/* The label of `raw`, as a new string. */
static char *clean(const char *raw) {
    char out[ES_MODEL_LABEL_MAX + 1];
    size_t n = es_model_label_clean(out, (const uint8_t *)raw, strlen(raw));
    ok(n == strlen(out) && n <= ES_MODEL_LABEL_MAX, "%zu bytes at most %d", n, ES_MODEL_LABEL_MAX);
    return strdup(out);
}

/* Whether `s` ends with a suffix: '~' and 16 hex digits. */
static bool suffixed(const char *s) {
    size_t n = strlen(s);
    return n >= 17 && s[n - 17] == '~' && strspn(s + n - 16, "0123456789abcdef") == 16;
}

/* Whether `s` holds no control character (C0, DEL, U+0080 to U+009F). */
static bool no_control(const char *s) {
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0))
            return false;
    return true;
}

UNIT_CASE(model_text_label_rule) {
    /* Plain labels, every one an RTS makes, as sent. */
    const char *plain[] = {"ARR_WORDS",   "go/main", "other",  "Main.CAF",
                           "caf\xc3\xa9", "",        "x~0123", "a b"};
    for (size_t i = 0; i < sizeof plain / sizeof *plain; i++) {
        char *c = clean(plain[i]);
        ok(strcmp(c, plain[i]) == 0, "plain %s kept as sent: %s", plain[i], c);
        free(c);
    }
    /* Each pair is one text once cleaned or cut the old way: apart now. */
    char long_a[600], long_b[600];
    memset(long_a, 'a', 599);
    long_a[599] = '\0';
    memcpy(long_b, long_a, sizeof long_b);
    long_b[580] = 'b';
    const char *pairs[][2] = {
        {"bad\xc3(", "bad\xff("},         {"\xff\xfe", "\xfe\xff"}, {long_a, long_b},
        {"esc\x1b[31m", "esc\x07[31m"},   {"cr\r", "del\x7f"},      {"c1\xc2\x85", "c1\xc2\x9b"},
        {"bad\xef\xbf\xbd(", "bad\xff("}, /* a real U+FFFD is plain */
    };
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        char *a = clean(pairs[i][0]), *b = clean(pairs[i][1]), *again = clean(pairs[i][1]);
        ok(strcmp(a, b) != 0 && strcmp(b, again) == 0, "pair %zu apart (%.40s, %.40s), stable", i,
           a, b);
        ok(suffixed(b) && no_control(a) && no_control(b) && !es_model_label_plain(b, strlen(b)),
           "pair %zu: the changed one renamed, no control character: %.40s", i, b);
        free(a);
        free(b);
        free(again);
    }
    /* A label sent as another's renamed text is renamed too. */
    char *renamed = clean("bad\xff(");
    char *sent = clean(renamed);
    ok(strcmp(sent, renamed) != 0 && suffixed(sent), "%s sent as it is: %s", renamed, sent);
    /* The model's own "(other labels)" is never a program's label. */
    char *other = clean("(other labels)");
    ok(strcmp(other, "(other labels)~a72a64365ae075bd") == 0, "(other labels) sent: %s", other);
    /* An output's rename: the shown text, then the suffix of the label. */
    char out[33];
    size_t n = es_model_label_rename(out, sizeof out, "other", "other");
    ok(n == strlen(out) && strcmp(out, "other~0a24ad61c2562a55") == 0, "renamed other: %s", out);
    /* 16 bytes of two-byte characters, 15 bytes of room: 14 kept. */
    n = es_model_label_rename(
        out, sizeof out, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", "x");
    ok(n == 14 + 17 && n == strlen(out) && suffixed(out) && (unsigned char)out[12] == 0xc3,
       "a rename that must cut cuts between characters: %s", out);
    free(renamed);
    free(sent);
    free(other);
}

/* A census of `n` labels, `len[i]` bytes each (0: strlen), 10 bytes each. */
static void census_of(struct es_model *m, const char *const *labels, size_t n, uint64_t t) {
    struct ev b;
    put(m, u(mk(&b, ES_EVENT_HEAP_PROF_SAMPLE_BEGIN, t), 1, 8));
    for (size_t i = 0; i < n; i++)
        put(m,
            str(u(u(mk(&b, ES_EVENT_HEAP_PROF_SAMPLE_STRING, t), 0, 1), 10, 8), labels[i], true));
    put(m, u(mk(&b, ES_EVENT_HEAP_PROF_SAMPLE_END, t), 1, 8));
}

/* Whether the latest census has one line per label, the lines' texts apart. */
static bool lines_apart(const struct es_model *m) {
    for (size_t i = 0; i < m->cur.n; i++)
        for (size_t j = i + 1; j < m->cur.n; j++)
            if (strcmp(es_model_label(m, m->cur.e[i].label),
                       es_model_label(m, m->cur.e[j].label)) == 0)
                return false;
    return true;
}

UNIT_CASE(model_text_census_labels_apart) {
    struct es_model *m = new_model(false);
    char long_a[560], long_b[560];
    memset(long_a, 'a', 559);
    long_a[559] = '\0';
    memcpy(long_b, long_a, sizeof long_b);
    long_b[550] = 'b';
    const char *labels[] = {"bad\xc3(", "bad\xff(", long_a, long_b,    "(other labels)",
                            "other",    "ok",       "ok",   "esc\x1b", "bel\x07"};
    size_t n = sizeof labels / sizeof *labels;
    census_of(m, labels, n, 10);
    ok(m->cur.n == n - 1 && lines_apart(m) && m->cur.total == 10 * n,
       "%zu labels, one twice: %zu lines, apart, %llu bytes", n, m->cur.n,
       (unsigned long long)m->cur.total);
    /* Again, in the same order (the model's guess), then with each label
     * sent as the text another was renamed to: still apart. */
    census_of(m, labels, n, 20);
    ok(m->cur.n == n - 1 && lines_apart(m), "the next census: %zu lines, apart", m->cur.n);
    char *renamed[16];
    const char *sent[16];
    for (size_t i = 0; i < m->cur.n; i++)
        sent[i] = renamed[i] = strdup(es_model_label(m, m->cur.e[i].label));
    size_t k = m->cur.n;
    census_of(m, labels, n, 30); /* the guess is on the first label */
    const char *both[32];
    for (size_t i = 0; i < n; i++)
        both[i] = labels[i];
    for (size_t i = 0; i < k; i++)
        both[n + i] = sent[i];
    census_of(m, both, n + k, 40);
    ok(lines_apart(m) && m->cur.total == 10 * (n + k),
       "labels and the texts they were kept as, in one census: %zu lines, apart", m->cur.n);
    /* The text label 1 was renamed to, sent where the model guesses label 1. */
    const char *guessed[] = {labels[0], sent[1]};
    census_of(m, guessed, 2, 50);
    ok(m->cur.n == 2 && lines_apart(m) && m->cur.e[1].label != 1 &&
           strcmp(es_model_label(m, m->cur.e[1].label), sent[1]) != 0,
       "%s sent where the model guesses it: its own line %s", sent[1],
       es_model_label(m, m->cur.e[1].label));
    for (size_t i = 0; i < k; i++)
        free(renamed[i]);
    free_model(m);
}
