/* SPDX-License-Identifier: BSD-3-Clause */
#include "resp.h"

#include <stdlib.h>
#include <string.h>

/* The headers every answer carries, then the answer queued. */
static enum MHD_Result queue(struct MHD_Connection *c, unsigned status, const char *type,
                             struct MHD_Response *r) {
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    /* A page's address may carry the token: never sent on as a Referer. */
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    /* Destroying the answer (here, or once it has been sent) frees a
     * MUST_FREE body, also when queueing failed. */
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

enum MHD_Result es_httpresp_static(struct MHD_Connection *c, unsigned status, const char *type,
                                   const void *data, size_t len) {
    /* libmicrohttpd 0.9 takes the body as void * whatever the mode; with
     * MHD_RESPMEM_PERSISTENT it only reads it. */
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)data, MHD_RESPMEM_PERSISTENT);
    return r == NULL ? MHD_NO : queue(c, status, type, r);
}

enum MHD_Result es_httpresp_owned(struct MHD_Connection *c, unsigned status, const char *type,
                                  void *data, size_t len) {
    struct MHD_Response *r = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
    if (r == NULL) {
        free(data);
        return MHD_NO;
    }
    return queue(c, status, type, r);
}

enum MHD_Result es_httpresp_text(struct MHD_Connection *c, unsigned status, const char *text) {
    return es_httpresp_static(c, status, "text/plain; charset=utf-8", text, strlen(text));
}
