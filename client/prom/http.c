/* SPDX-License-Identifier: BSD-3-Clause */
#include "http.h"

#include "http/server.h"
#include "http/resp.h"

#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libmicrohttpd's limits; who holds the connections, and the request
 * deadline: client/http/guard.h, as for serve. */
static const struct es_httpserver_limits limits = {
    .conns = 64, .per_ip = 32, .memory = 32 * 1024, .timeout_s = 10};

struct es_promhttp {
    struct es_httpserver srv; /* who may scrape: as for serve (docs/security.md) */
    pthread_mutex_t mu;       /* guards text and len */
    char *text;
    size_t len;
};

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_size, void **state) {
    (void)version;
    (void)upload_data;
    (void)upload_size;
    (void)state;
    struct es_promhttp *h = cls;
    enum es_httpauth_verdict v = es_httpserver_admit(&h->srv, c);
    switch (v) {
    case ES_HTTPAUTH_OK:
        break;
    case ES_HTTPAUTH_OTHER_USER:
        return es_httpresp_text(c, MHD_HTTP_FORBIDDEN,
                                h->srv.auth.given
                                    ? "this eventlog-socket metrics is another user's: scrape "
                                      "with its --token-file's token (docs/prometheus.md)\n"
                                    : "this eventlog-socket metrics is another user's "
                                      "(docs/security.md)\n");
    case ES_HTTPAUTH_NO_TOKEN:
        return es_httpresp_text(c, MHD_HTTP_FORBIDDEN,
                                h->srv.auth.given
                                    ? "scrape with the token of its --token-file "
                                      "(Authorization: Bearer, or ?token=)\n"
                                    : "scrape the URL eventlog-socket metrics printed (it has "
                                      "?token=)\n");
    case ES_HTTPAUTH_WRONG_HOST:
        return es_httpresp_text(c, MHD_HTTP_MISDIRECTED_REQUEST, "wrong Host\n");
    }
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return es_httpresp_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET only\n");
    if (strcmp(url, "/") == 0)
        return es_httpresp_text(c, MHD_HTTP_OK,
                                "eventlog-socket metrics: Prometheus metrics at /metrics\n");
    if (strcmp(url, "/metrics") != 0)
        return es_httpresp_text(c, MHD_HTTP_NOT_FOUND, "not found (the metrics are at /metrics)\n");
    pthread_mutex_lock(&h->mu);
    size_t len = h->len;
    char *copy = malloc(len ? len : 1);
    if (copy != NULL && len)
        memcpy(copy, h->text, len);
    pthread_mutex_unlock(&h->mu);
    if (copy == NULL)
        return es_httpresp_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    return es_httpresp_owned(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", copy, len);
}

struct es_promhttp *es_promhttp_start(const struct sockaddr_storage *sa, bool loopback,
                                      const char *token) {
    struct es_promhttp *h = calloc(1, sizeof *h);
    if (h == NULL)
        return NULL;
    pthread_mutex_init(&h->mu, NULL);
    if (es_httpserver_start(&h->srv, sa, loopback, token, &limits, on_request, h) != 0) {
        int e = errno;
        pthread_mutex_destroy(&h->mu);
        free(h);
        errno = e;
        return NULL;
    }
    return h;
}

void es_promhttp_cut_late(struct es_promhttp *h) {
    es_httpguard_cut_late(&h->srv.guard);
}

unsigned es_promhttp_port(const struct es_promhttp *h) {
    return h->srv.auth.port;
}

const char *es_promhttp_token(const struct es_promhttp *h) {
    return h->srv.auth.given ? "" : h->srv.auth.token;
}

void es_promhttp_print_url(const struct es_promhttp *h, const char *http, const char *token_file) {
    const char *colon = strrchr(http, ':'), *token = es_promhttp_token(h);
    if (colon == http)
        printf("eventlog-socket metrics: http://127.0.0.1:%u/metrics%s%s\n", h->srv.auth.port,
               token[0] ? "?token=" : "", token);
    else
        printf("eventlog-socket metrics: http://%.*s:%u/metrics%s%s\n", (int)(colon - http), http,
               h->srv.auth.port, token[0] ? "?token=" : "", token);
    if (token_file != NULL)
        printf("eventlog-socket metrics: scrapes carry the token in %s (Authorization: Bearer, "
               "or ?token=)\n",
               token_file);
}

void es_promhttp_publish(struct es_promhttp *h, char *text, size_t len) {
    pthread_mutex_lock(&h->mu);
    char *old = h->text;
    h->text = text;
    h->len = len;
    pthread_mutex_unlock(&h->mu);
    free(old);
}

void es_promhttp_stop(struct es_promhttp *h) {
    es_httpserver_stop(&h->srv);
    pthread_mutex_destroy(&h->mu);
    free(h->text);
    free(h);
}
