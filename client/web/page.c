/* SPDX-License-Identifier: BSD-3-Clause */
/* The web view's page (client/web/page.h): its files by name (the table
 * scripts/embed-web.sh generates), and the template, page.html, with its
 * two marks replaced by the styles and the scripts, linked for `serve`,
 * inline with the data for `report`; and the two-run page of
 * `report RUN_A RUN_B`, compare.html, always inline. */
#include "page.h"

#include <string.h>

const struct es_webpage_asset *es_webpage_asset(const char *name) {
    for (size_t i = 0; i < es_webpage_nassets; i++)
        if (strcmp(es_webpage_assets[i].name, name) == 0)
            return &es_webpage_assets[i];
    return NULL;
}

/* The template with its two marks replaced by text that `emit` writes. */
static void page(struct es_httpbuf *out, const char *template,
                 void (*emit)(struct es_httpbuf *, int which, const void *), const void *ctx) {
    const struct es_webpage_asset *t = es_webpage_asset(template);
    const char *p = (const char *)t->data, *end = p + t->len;
    static const char *marks[2] = {"<!--ES_STYLE-->", "<!--ES_SCRIPTS-->"};
    for (int which = 0; which < 2; which++) {
        const char *m = strstr(p, marks[which]);
        if (m == NULL)
            break;
        es_httpbuf_add(out, p, (size_t)(m - p));
        emit(out, which, ctx);
        p = m + strlen(marks[which]);
    }
    es_httpbuf_add(out, p, (size_t)(end - p));
}

/* `ctx`: the query every link carries (the token, or ""). */
static void emit_linked(struct es_httpbuf *out, int which, const void *ctx) {
    const char *q = ctx;
    if (which == 0)
        es_httpbuf_printf(out,
                          "<link rel=\"stylesheet\" href=\"dygraph.css%s\">"
                          "<link rel=\"stylesheet\" href=\"flamegraph.css%s\">"
                          "<link rel=\"stylesheet\" href=\"style.css%s\">",
                          q, q, q);
    else
        es_httpbuf_printf(out,
                          "<script src=\"dygraph.js%s\"></script>"
                          "<script src=\"flamegraph.js%s\"></script>"
                          "<script src=\"esflame.js%s\"></script>"
                          "<script src=\"app.js%s\"></script>",
                          q, q, q, q);
}

static void add_asset(struct es_httpbuf *out, const char *name) {
    const struct es_webpage_asset *a = es_webpage_asset(name);
    es_httpbuf_add(out, (const char *)a->data, a->len);
}

/* What emit_inline writes: the data and the script that draws it. */
struct inline_ctx {
    const struct es_httpbuf *json;
    const char *script;
    bool flame; /* d3-flame-graph and flame.js too (the pages' time profile) */
};

/* Everything inline, the data as JSON in a non-executed script. */
static void emit_inline(struct es_httpbuf *out, int which, const void *ctx) {
    const struct inline_ctx *in = ctx;
    const struct es_httpbuf *json = in->json;
    if (which == 0) {
        ES_HTTPBUF_ADD(out, "<style>\n");
        add_asset(out, "dygraph.css");
        if (in->flame)
            add_asset(out, "flamegraph.css");
        add_asset(out, "style.css");
        ES_HTTPBUF_ADD(out, "</style>");
    } else {
        ES_HTTPBUF_ADD(out, "<script>\n");
        add_asset(out, "dygraph.js");
        if (in->flame) {
            ES_HTTPBUF_ADD(out, "\n</script>\n<script>\n");
            add_asset(out, "flamegraph.js");
            ES_HTTPBUF_ADD(out, "\n</script>\n<script>\n");
            add_asset(out, "esflame.js");
        }
        es_httpbuf_printf(out, "\n</script>\n<script id=\"es-data\" type=\"application/json\">");
        es_httpbuf_add(out, json->p, json->len);
        ES_HTTPBUF_ADD(out, "</script>\n<script>\n");
        add_asset(out, in->script);
        ES_HTTPBUF_ADD(out, "\n</script>");
    }
}

void es_webpage_inline(struct es_httpbuf *out, const struct es_httpbuf *json) {
    struct inline_ctx in = {json, "app.js", true};
    page(out, "page.html", emit_inline, &in);
}

void es_webpage_linked(struct es_httpbuf *out, const char *query) {
    page(out, "page.html", emit_linked, query);
}

void es_webpage_compare(struct es_httpbuf *out, const struct es_httpbuf *json) {
    struct inline_ctx in = {json, "compare.js", true};
    page(out, "compare.html", emit_inline, &in);
}
