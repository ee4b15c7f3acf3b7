/* SPDX-License-Identifier: BSD-3-Clause */
/* The eventlog-socket command's address parsing (client/source/addr.c): every
 * form docs/command.md lists, and the mistakes a user makes, each with a message. */
#include "source/addr.h"
#include "../unit.h"

#include <errno.h>

static void accepts(const char *text, enum es_addr_kind kind, const char *where, unsigned port,
                    const char *shown) {
    struct es_addr a;
    const char *why = NULL;
    char buf[400];
    int r = es_addr_parse(text, &a, &why);
    if (!ok(r == 0, "%s is an address", text)) {
        printf("#   %s\n", why);
        return;
    }
    if (kind == ES_ADDR_UNIX)
        ok(a.kind == ES_ADDR_UNIX && strcmp(a.path, where) == 0, "%s: Unix socket %s", text, where);
    else
        ok(a.kind == ES_ADDR_TCP && strcmp(a.host, where) == 0 && a.port == port,
           "%s: TCP host %s port %u", text, where, port);
    es_addr_format(&a, buf, sizeof buf);
    ok(strcmp(buf, shown) == 0, "%s is shown as %s (got %s)", text, shown, buf);
}

static void refuses(const char *text, const char *word) {
    struct es_addr a;
    const char *why = NULL;
    int r = es_addr_parse(text, &a, &why);
    ok(r == -EINVAL && why != NULL && strstr(why, word) != NULL && strchr(why, '\n') == NULL,
       "'%s' is refused with a one-line reason mentioning '%s' (%s)", text, word,
       why ? why : "none");
}

UNIT_CASE(client_addr_every_form) {
    accepts("unix:/tmp/app.sock", ES_ADDR_UNIX, "/tmp/app.sock", 0, "unix:/tmp/app.sock");
    accepts("/tmp/app.sock", ES_ADDR_UNIX, "/tmp/app.sock", 0, "unix:/tmp/app.sock");
    accepts("./app.sock", ES_ADDR_UNIX, "./app.sock", 0, "unix:./app.sock");
    accepts("unix:relative.sock", ES_ADDR_UNIX, "relative.sock", 0, "unix:relative.sock");
    /* A path with a colon is still a path: it contains '/'. */
    accepts("/tmp/a:1", ES_ADDR_UNIX, "/tmp/a:1", 0, "unix:/tmp/a:1");
    accepts("tcp:localhost:4242", ES_ADDR_TCP, "localhost", 4242, "tcp:localhost:4242");
    accepts("localhost:4242", ES_ADDR_TCP, "localhost", 4242, "tcp:localhost:4242");
    accepts("127.0.0.1:1", ES_ADDR_TCP, "127.0.0.1", 1, "tcp:127.0.0.1:1");
    accepts(":65535", ES_ADDR_TCP, "127.0.0.1", 65535, "tcp:127.0.0.1:65535");
    accepts("tcp::80", ES_ADDR_TCP, "127.0.0.1", 80, "tcp:127.0.0.1:80");
    accepts("[::1]:4242", ES_ADDR_TCP, "::1", 4242, "tcp:[::1]:4242");
    accepts("tcp:[::1]:4242", ES_ADDR_TCP, "::1", 4242, "tcp:[::1]:4242");
}

UNIT_CASE(client_addr_mistakes) {
    refuses("", "empty");
    refuses("app.sock", "./NAME");
    refuses("unix:", "empty");
    refuses("localhost", "./NAME");
    refuses("localhost:", "port");
    refuses(":0", "port");
    refuses(":65536", "port");
    refuses(":80x", "port");
    refuses(":-1", "port");
    refuses("tcp:host", "not an address");
    refuses("::1:80", "brackets");
    refuses("[]:80", "empty");
    char long_path[200];
    memset(long_path, 'a', sizeof long_path);
    long_path[0] = '/';
    long_path[sizeof long_path - 1] = '\0';
    refuses(long_path, "too long");
}
