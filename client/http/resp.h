/* SPDX-License-Identifier: BSD-3-Clause */
/* Answers of the command's two HTTP servers (serve's, client/web/http.h,
 * and metrics', client/prom/http.h), with the headers every answer
 * carries. A body given as MHD_RESPMEM_MUST_FREE belongs to the answer
 * from the call on, freed whatever happens. The HTTP threads. */
#ifndef ES_HTTPRESP_H
#define ES_HTTPRESP_H

#include <microhttpd.h>
#include <stddef.h>

enum MHD_Result es_httpresp(struct MHD_Connection *c, unsigned status, const char *type,
                            const void *data, size_t len, enum MHD_ResponseMemoryMode mode);

/* A static text/plain body. */
enum MHD_Result es_httpresp_text(struct MHD_Connection *c, unsigned status, const char *text);

#endif
