/* SPDX-License-Identifier: BSD-3-Clause */
/* Answers of the command's two HTTP servers (serve's, client/web/http.h,
 * and metrics', client/prom/http.h), with the headers every answer
 * carries. The HTTP threads. */
#ifndef ES_HTTPRESP_H
#define ES_HTTPRESP_H

#include <microhttpd.h>
#include <stddef.h>

/* A body that outlives the answer: static text, the embedded files. */
enum MHD_Result es_httpresp_static(struct MHD_Connection *c, unsigned status, const char *type,
                                   const void *data, size_t len);

/* A body from malloc: the answer owns it from the call on, freed whatever
 * happens. */
enum MHD_Result es_httpresp_owned(struct MHD_Connection *c, unsigned status, const char *type,
                                  void *data, size_t len);

/* A static text/plain body. */
enum MHD_Result es_httpresp_text(struct MHD_Connection *c, unsigned status, const char *text);

#endif
