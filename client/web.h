/* The web view's files (client/web/ and the charting library, dygraphs from
 * Debian's libjs-dygraphs), embedded in the command at build time by
 * scripts/embed-web.sh, so that neither `serve` nor `report` needs files
 * from elsewhere, let alone the internet. Read-only data: any thread. */
#ifndef ES_WEB_H
#define ES_WEB_H

#include <stddef.h>

struct es_web_asset {
    const char *name; /* "page.html", "app.js", "style.css", "dygraph.js", "dygraph.css" */
    const char *type; /* its Content-Type */
    const unsigned char *data;
    size_t len;
};

extern const struct es_web_asset es_web_assets[];
extern const size_t es_web_nassets;

/* The asset called `name`, or NULL. */
const struct es_web_asset *es_web_asset(const char *name);

#endif
