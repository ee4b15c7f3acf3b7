/* SPDX-License-Identifier: BSD-3-Clause */
/* What the client's model keeps of a stream's text and tables, whatever
 * the stream sends (client/model/census.c, ipe.c, notes.c):
 * census labels, names and markers are valid UTF-8 (cbits/format/es_utf8.h's
 * rule: U+FFFD for each bad byte, a cut between characters); -hi's info
 * table names stay within ES_MODEL_MAX_IPE_BYTES, and a figures-only model
 * (`metrics`) keeps none. No argument. */
#include "model/model.h"
#include "model_events.h"
#include "unit.h"

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
    ok(m->cur.n == 1 && strcmp(es_model_label(m, m->cur.e[0].label), "bad\xef\xbf\xbd(") == 0,
       "a census label's bad byte is U+FFFD");
    char longer[520];
    memset(longer, 'a', 510);
    strcpy(longer + 510, "\xc3\xa9");
    census_label(m, longer);
    const char *kept = es_model_label(m, m->cur.e[0].label);
    ok(strlen(kept) == 510 && kept[509] == 'a',
       "a 512-byte label ending in a two-byte character is cut before it (%zu bytes)",
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
