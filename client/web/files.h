/* The web view's files (client/web/ and the charting library, dygraphs from
 * Debian's libjs-dygraphs), embedded in the command at build time by
 * scripts/embed-web.sh, so that neither `serve` nor `report` needs files
 * from elsewhere, let alone the internet; and the page made of them
 * (client/web/page.c). Read-only data and pure functions: any thread. */
#ifndef ES_WEB_H
#define ES_WEB_H

#include "http/buf.h"

#include <stddef.h>

struct es_web_asset {
    const char *name; /* "page.html", "app.js", "style.css", "dygraph.js", "dygraph.css",
                       * "compare.html", "compare.js" */
    const char *type; /* its Content-Type */
    const unsigned char *data;
    size_t len;
};

extern const struct es_web_asset es_web_assets[];
extern const size_t es_web_nassets;

/* The asset called `name`, or NULL. */
const struct es_web_asset *es_web_asset(const char *name);

/* The page with its styles, its scripts and the state `json`
 * (es_webjson_state) inline: one file that needs nothing else (`report`). */
void es_web_page(struct es_webbuf *out, const struct es_webbuf *json);
/* The page with its styles and scripts linked (`serve` serves them), each
 * link followed by `query` ("?token=...", or "" for none). */
void es_web_page_linked(struct es_webbuf *out, const char *query);
/* The two-run page (compare.html, `report RUN_A RUN_B`) with its styles,
 * its script (compare.js) and `json` (client/web/report_two.c) inline. */
void es_web_page_compare(struct es_webbuf *out, const struct es_webbuf *json);

#endif
