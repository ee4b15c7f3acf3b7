/* SPDX-License-Identifier: BSD-3-Clause */
/* The model's family "info tables" (client/model/impl.h): IPE events
 * (GHC 9.2+, +RTS -hi with info table provenance), which name the
 * addresses -hi's censuses label their bands with, and the heap profile
 * modes' names. The census labels themselves: client/model/census.c. */
#include "impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *es_model_breakdown_name(uint32_t b) {
    static const char *const names[] = {
        [ES_MODEL_BY_CCS] = "cost-centre stack (-hc)",
        [ES_MODEL_BY_MODULE] = "module (-hm)",
        [ES_MODEL_BY_DESCR] = "closure description (-hd)",
        [ES_MODEL_BY_TYPE] = "type description (-hy)",
        [ES_MODEL_BY_RETAINER] = "retainer set (-hr)",
        [ES_MODEL_BY_BIOGRAPHY] = "biography (-hb)",
        [ES_MODEL_BY_CLOSURE_TYPE] = "closure type (-hT)",
        [ES_MODEL_BY_INFO_TABLE] = "info table (-hi)",
        [ES_MODEL_BY_ERA] = "era (-he)",
    };
    return b < sizeof names / sizeof *names && names[b] ? names[b] : "unknown";
}

/* GHC 9.0 and later send retainer and biographical samples as strings,
 * but a biographical profile's censuses only at exit (rts/ProfHeap.c keeps
 * them until then), and older GHCs send neither: while no label has come,
 * say where the samples are. */
const char *es_model_breakdown_lack(uint32_t b, bool have_labels) {
    if (have_labels)
        return NULL;
    if (b == ES_MODEL_BY_RETAINER)
        return "the program runs a retainer profile (+RTS -hr) and no sample of it has come: "
               "GHCs before 9.0 write them only to the RTS's own PROGRAM.hp; read that, or "
               "profile with -hc, -hm, -hd, -hy, -hi or -hT";
    if (b == ES_MODEL_BY_BIOGRAPHY)
        return "the program runs a biographical profile (+RTS -hb) and no sample of it has "
               "come: the RTS sends its censuses only when the program exits (GHCs before 9.0 "
               "never, see the RTS's own PROGRAM.hp); profile with -hc, -hm, -hd, -hy, -hi or "
               "-hT to watch it live";
    return NULL;
}

static size_t ipe_slot(const struct es_model *m, uint64_t addr) {
    size_t j = (size_t)((addr >> 3) * 0x9E3779B97F4A7C15ull) & (m->ipe_cap - 1);
    while (m->ipe[j].addr && m->ipe[j].addr != addr)
        j = (j + 1) & (m->ipe_cap - 1);
    return j;
}

static int ipe_grow(struct es_model *m) {
    size_t ncap = m->ipe_cap ? m->ipe_cap * 2 : 256;
    struct es_model_ipe *old = m->ipe, *n = calloc(ncap, sizeof *n);
    if (n == NULL)
        return -1;
    size_t ocap = m->ipe_cap;
    m->ipe = n;
    m->ipe_cap = ncap;
    m->ipe_bytes += (ncap - ocap) * sizeof *n;
    for (size_t i = 0; i < ocap; i++)
        if (old[i].addr)
            m->ipe[ipe_slot(m, old[i].addr)] = old[i];
    free(old);
    return 0;
}

/* Whether a table named `name` may be kept: the bound in bytes, names and
 * table (as it will be after growing) counted. */
static bool ipe_room(const struct es_model *m, const char *name) {
    size_t table = (m->ipe_n + 1) * 2 > m->ipe_cap ? (m->ipe_cap ? m->ipe_cap : 256) : 0;
    return m->ipe_bytes + table * sizeof *m->ipe + strlen(name) + 1 <= ES_MODEL_MAX_IPE_BYTES;
}

/* IPE: the info table's address, then table name, closure type, type,
 * label, module and "FILE:SPAN" (GHC 9.2 and later; ghc-events' InfoProv). */
void es_model_on_ipe(struct es_model *m, struct es_model_ev *e) {
    struct es_payload *r = &e->r;
    uint64_t addr = es_payload_u64(r);
    char table[256], cty[16], type[256], label[256], module[256], loc[512];
    es_payload_text(r, table, sizeof table);
    es_payload_text(r, cty, sizeof cty);
    es_payload_text(r, type, sizeof type);
    es_payload_text(r, label, sizeof label);
    es_payload_text(r, module, sizeof module);
    es_payload_text(r, loc, sizeof loc);
    if (!es_payload_ok(r) || addr == 0 || m->figures_only)
        return;
    /* The label (the binding or constructor), else the table's name
     * without "_info"; the source location when GHC knows it. */
    size_t tl = strlen(table);
    if (label[0] == '\0' && tl > 5 && strcmp(table + tl - 5, "_info") == 0)
        table[tl - 5] = '\0';
    char name[1100];
    const char *what = label[0] ? label : table;
    if (loc[0] && strcmp(loc, ":") != 0)
        snprintf(name, sizeof name, "%s (%s)", what, loc);
    else
        snprintf(name, sizeof name, "%s", what);
    clean_text(name);
    if (!ipe_room(m, name)) {
        m->ipe_dropped++;
        return;
    }
    if ((m->ipe_n + 1) * 2 > m->ipe_cap && ipe_grow(m) < 0) {
        m->oom = true;
        return;
    }
    size_t j = ipe_slot(m, addr);
    char *copy = strdup(name);
    if (copy == NULL) {
        m->oom = true;
        return;
    }
    if (m->ipe[j].addr == 0) {
        m->ipe_n++;
    } else {
        m->ipe_bytes -= strlen(m->ipe[j].name) + 1;
        free(m->ipe[j].name);
    }
    m->ipe_bytes += strlen(copy) + 1;
    m->ipe[j].addr = addr;
    m->ipe[j].name = copy;
}

const char *es_model_label_name(const struct es_model *m, uint32_t i) {
    const char *l = es_model_label(m, i);
    if (m->breakdown != ES_MODEL_BY_INFO_TABLE || m->ipe_n == 0 || strncmp(l, "0x", 2) != 0)
        return l;
    char *end;
    uint64_t addr = strtoull(l + 2, &end, 16);
    if (*end != '\0' || addr == 0)
        return l;
    size_t j = ipe_slot(m, addr);
    return m->ipe[j].addr ? m->ipe[j].name : l;
}

void es_model_ipe_free(struct es_model *m) {
    for (size_t i = 0; i < m->ipe_cap; i++)
        free(m->ipe[i].name);
    free(m->ipe);
    m->ipe = NULL;
    m->ipe_cap = m->ipe_n = m->ipe_bytes = 0;
}
