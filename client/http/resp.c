/* SPDX-License-Identifier: BSD-3-Clause */
#include "resp.h"

#include <stdlib.h>
#include <string.h>

enum MHD_Result es_httpresp(struct MHD_Connection *c, unsigned status, const char *type,
                            const void *data, size_t len, enum MHD_ResponseMemoryMode mode) {
    struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)data, mode);
    if (r == NULL) {
        if (mode == MHD_RESPMEM_MUST_FREE)
            free((void *)data);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    /* A page's address may carry the token: never sent on as a Referer. */
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    /* The answer owns a MUST_FREE body now: destroying it (here, or once
     * it has been sent) frees the body, also when queueing failed. */
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

enum MHD_Result es_httpresp_text(struct MHD_Connection *c, unsigned status, const char *text) {
    return es_httpresp(c, status, "text/plain; charset=utf-8", text, strlen(text),
                       MHD_RESPMEM_PERSISTENT);
}
