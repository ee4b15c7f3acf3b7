/* SPDX-License-Identifier: BSD-3-Clause */
/* The sparks in the web view's JSON (client/web/json.h writes the rest):
 * "sparks":{seen, any, events, pool, rate, v, ev, caps:[{pool, rate, v, ev,
 * pts}]}, where v are the counters in enum es_model_spark's order (created
 * as +RTS -s counts it, dud, overflowed, converted, GC'd, fizzled), ev the
 * spark events (-lf) in enum es_model_spark_ev's order, and pts a
 * capability's counters over time, [time, v..., pool] (at most 128 per
 * capability, for the first 64). `seen`: spark counters arrived; `any`:
 * they say the program made sparks. Written whole, in a whole state and
 * in a delta when anything changed (the page replaces what it had). Pure; the model's thread. */
#ifndef ES_WEBSPARKS_H
#define ES_WEBSPARKS_H

#include "model/model.h"
#include "http/buf.h"

/* Append ,"sparks":{...} when `whole` or when the sparks changed since
 * *sig (a signature of what was written, updated); nothing otherwise (the
 * page keeps what it has). */
void es_websparks_json(struct es_httpbuf *out, const struct es_model *m, bool whole, uint64_t *sig);

#endif
