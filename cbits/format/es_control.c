/* SPDX-License-Identifier: BSD-3-Clause */
#include "es_control.h"

#include "es_commands.h"

#include <assert.h>
#include <stdbool.h>
#include <string.h>

enum {
    SCAN,      /* between frames, looking for a magic */
    GCTL_CMD,  /* after "GCTL": the command byte */
    GCTL_ARG,  /* after a command byte that takes one: its argument */
    U_VERSION, /* after the upstream magic: the version byte */
    U_NS_LEN,  /* the namespace length */
    U_NS,      /* the namespace bytes */
    U_ID,      /* the command id */
};

enum { MAGIC_GCTL, MAGIC_UPSTREAM };

static const uint8_t *const gctl_magic = (const uint8_t *)ES_CONTROL_MAGIC;
static const uint8_t *const upstream_magic = (const uint8_t *)ES_CONTROL_UPSTREAM_MAGIC;

void es_control_init(struct es_control_parser *p) {
    p->state = SCAN;
    p->magic = MAGIC_GCTL;
    p->matched = 0;
    p->ns_len = 0;
    p->ns_got = 0;
    p->arg_of = 0;
    p->unknown = 0;
    p->custom = NULL;
}

/* For the asserts only (inline: no warning without them). */
static inline bool known_command(uint8_t cmd) {
    return es_commands_find(cmd) != NULL;
}

uint8_t es_control_upstream_command(const uint8_t *ns, size_t ns_len, uint8_t id) {
    static const char name[] = ES_CONTROL_UPSTREAM_NAMESPACE;
    if (ns_len != sizeof name - 1 || memcmp(ns, name, ns_len) != 0)
        return 0; /* the whole name, not a prefix of it */
    const struct es_commands_row *r = es_commands_upstream(id);
    return r != NULL ? (uint8_t)(r->code | (id & r->arg_mask)) : 0;
}

/* Advance the magic search by one byte. No byte occurs twice in the two
 * magics together, so after a mismatch the only place a magic can restart
 * is this byte itself, and one partial match at a time is enough. On a
 * complete magic the parser moves to that framing's next field and true is
 * returned. */
static bool search(struct es_control_parser *p, uint8_t b) {
    const uint8_t *m = p->magic == MAGIC_UPSTREAM ? upstream_magic : gctl_magic;
    assert(p->matched < ES_CONTROL_MAGIC_LEN); /* a whole magic moved it on */
    if (p->matched > 0 && b == m[p->matched]) {
        p->matched++;
    } else if (b == gctl_magic[0]) {
        p->magic = MAGIC_GCTL;
        p->matched = 1;
    } else if (b == upstream_magic[0]) {
        p->magic = MAGIC_UPSTREAM;
        p->matched = 1;
    } else {
        p->matched = 0;
    }
    if (p->matched < ES_CONTROL_MAGIC_LEN)
        return false;
    p->matched = 0;
    p->state = p->magic == MAGIC_UPSTREAM ? U_VERSION : GCTL_CMD;
    return true;
}

/* One byte of a frame after its magic (states GCTL_CMD to U_ID): returns
 * the kind of frame it completes, ES_CONTROL_NONE for none. */
static enum es_control_kind step(struct es_control_parser *p, uint8_t b,
                                 struct es_control_found *out) {
    switch (p->state) {
    case GCTL_CMD: {
        const struct es_commands_row *r = es_commands_gctl(b);
        p->state = SCAN;
        if (r == NULL) {
            p->unknown++;
            return ES_CONTROL_NONE;
        }
        if (r->arg_mask != 0) {
            p->state = GCTL_ARG; /* the next byte, whatever it is */
            p->arg_of = b;
            return ES_CONTROL_NONE;
        }
        out->cmd = r->code;
        return ES_CONTROL_COMMAND;
    }
    case GCTL_ARG:
        p->state = SCAN;
        out->cmd = es_commands_with_arg(es_commands_gctl(p->arg_of), b);
        if (out->cmd == 0) {
            p->unknown++;
            return ES_CONTROL_NONE;
        }
        return ES_CONTROL_COMMAND;
    case U_VERSION:
        p->matched = 0;
        if (b == ES_CONTROL_UPSTREAM_VERSION) {
            p->state = U_NS_LEN;
        } else {
            /* A frame we cannot read: this byte may begin the next. */
            p->state = SCAN;
            search(p, b);
        }
        return ES_CONTROL_NONE;
    case U_NS_LEN:
        if (b == 0) {
            p->state = SCAN;
            p->matched = 0;
        } else {
            p->ns_len = b;
            p->ns_got = 0;
            p->state = U_NS;
            search(p, b); /* may begin a magic; one byte cannot end one */
        }
        return ES_CONTROL_NONE;
    case U_NS:
        /* The namespace ends at its length (then U_ID) or at a magic. */
        assert(p->ns_got < p->ns_len && p->ns_len <= sizeof p->ns);
        p->ns[p->ns_got++] = b;
        /* A magic that ends here wins over the frame around it. */
        if (!search(p, b) && p->ns_got == p->ns_len) {
            p->state = U_ID;
            p->matched = 0;
        }
        return ES_CONTROL_NONE;
    case U_ID:
        p->state = SCAN;
        assert(p->ns_got == p->ns_len);
        out->cmd = es_control_upstream_command(p->ns, p->ns_len, b);
        assert(out->cmd == 0 || known_command(out->cmd));
        if (out->cmd != 0)
            return ES_CONTROL_COMMAND;
        out->ns = p->ns;
        out->ns_len = p->ns_len;
        out->id = b;
        return ES_CONTROL_CUSTOM;
    default:
        assert(false && "es_control_parser: a state no byte leads to");
        p->state = SCAN;
        return ES_CONTROL_NONE;
    }
}

size_t es_control_next(struct es_control_parser *p, const uint8_t *buf, size_t len,
                       struct es_control_found *out) {
    out->kind = ES_CONTROL_NONE;
    for (size_t i = 0; i < len; i++) {
        if (p->state == SCAN) {
            search(p, buf[i]);
            continue;
        }
        out->kind = step(p, buf[i], out);
        if (out->kind != ES_CONTROL_NONE)
            return i + 1;
    }
    return len;
}

size_t es_control_feed(struct es_control_parser *p, const uint8_t *buf, size_t len,
                       es_control_cb cb, void *ctx) {
    size_t delivered = 0;
    while (len > 0) {
        struct es_control_found f;
        size_t n = es_control_next(p, buf, len, &f);
        assert(n > 0 && n <= len);
        buf += n;
        len -= n;
        if (f.kind == ES_CONTROL_COMMAND) {
            if (cb != NULL)
                cb(f.cmd, ctx);
            delivered++;
        } else if (f.kind == ES_CONTROL_CUSTOM) {
            if (p->custom != NULL && p->custom(f.ns, f.ns_len, f.id))
                delivered++;
            else
                es_control_ignored(p);
        }
    }
    return delivered;
}
