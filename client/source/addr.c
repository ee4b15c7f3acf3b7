/* SPDX-License-Identifier: BSD-3-Clause */
#include "addr.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define USAGE "(use unix:/path, a path containing '/', tcp:HOST:PORT, HOST:PORT or :PORT)"

static int fail(const char **why, const char *text) {
    *why = text;
    return -EINVAL;
}

/* Digits only, 1 to 65535: "08080" is accepted, "+80", "80x" and "" are not. */
static int parse_port(const char *p, uint16_t *port) {
    unsigned long v = 0;
    if (*p == '\0')
        return -1;
    for (; *p != '\0'; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (unsigned long)(*p - '0');
        if (v > 65535)
            return -1;
    }
    if (v == 0)
        return -1;
    *port = (uint16_t)v;
    return 0;
}

static int parse_unix(const char *path, struct es_addr *out, const char **why) {
    if (*path == '\0')
        return fail(why, "the Unix socket path is empty " USAGE);
    if (strlen(path) >= sizeof out->path)
        return fail(why, "the Unix socket path is too long (at most 107 bytes)");
    out->kind = ES_ADDR_UNIX;
    strcpy(out->path, path);
    return 0;
}

/* HOST:PORT, :PORT, [V6]:PORT; the port follows the last colon. */
static int parse_tcp(const char *text, struct es_addr *out, const char **why) {
    const char *colon = strrchr(text, ':');
    if (colon == NULL)
        return fail(why, "not an address " USAGE);
    if (parse_port(colon + 1, &out->port) != 0)
        return fail(why, "the port must be a number from 1 to 65535");
    const char *host = text;
    size_t len = (size_t)(colon - text);
    if (len >= 2 && host[0] == '[' && host[len - 1] == ']') {
        host++;
        len -= 2;
        if (len == 0)
            return fail(why, "the host between [ and ] is empty");
    } else if (memchr(host, ':', len) != NULL) {
        return fail(why, "an IPv6 host must be written in brackets, as [::1]:PORT");
    }
    if (len == 0) {
        host = "127.0.0.1";
        len = strlen(host);
    }
    if (len >= sizeof out->host)
        return fail(why, "the host name is too long");
    out->kind = ES_ADDR_TCP;
    memcpy(out->host, host, len);
    out->host[len] = '\0';
    return 0;
}

int es_addr_parse(const char *text, struct es_addr *out, const char **why) {
    memset(out, 0, sizeof *out);
    if (text == NULL || *text == '\0')
        return fail(why, "the address is empty " USAGE);
    if (strncmp(text, "unix:", 5) == 0)
        return parse_unix(text + 5, out, why);
    if (strncmp(text, "tcp:", 4) == 0)
        return parse_tcp(text + 4, out, why);
    if (strchr(text, '/') != NULL)
        return parse_unix(text, out, why);
    if (strchr(text, ':') == NULL)
        return fail(why, "not an address: a Unix socket in this directory is ./NAME " USAGE);
    return parse_tcp(text, out, why);
}

void es_addr_format(const struct es_addr *a, char *buf, unsigned long size) {
    if (a->kind == ES_ADDR_UNIX)
        snprintf(buf, size, "unix:%s", a->path);
    else if (strchr(a->host, ':') != NULL)
        snprintf(buf, size, "tcp:[%s]:%u", a->host, (unsigned)a->port);
    else
        snprintf(buf, size, "tcp:%s:%u", a->host, (unsigned)a->port);
}
