/* SPDX-License-Identifier: BSD-3-Clause */
#include "naming.h"

#include "outfile.h"
#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TRIES 100

/* Keep a file name to characters that need no quoting. */
static void safe_name(char *s) {
    for (; *s; s++)
        if (*s == '/' || *s < ' ' || *s == ' ')
            *s = '_';
}

void es_naming_program(struct es_conn *c, char *prog, size_t size, unsigned long *pid) {
    const struct es_conn_info *in = &c->info;
    int peer = in->have_pid && in->have_args ? 0 : es_conn_peer_pid(c);
    *pid = in->have_pid ? in->pid : (unsigned long)peer;
    prog[0] = '\0';
    if (in->have_args && in->program[0] != '\0')
        snprintf(prog, size, "%s", in->program);
    else
        es_session_program_of(peer, prog, size);
    safe_name(prog);
}

void es_naming_stamp(char *out, size_t size) {
    time_t now = time(NULL);
    struct tm tm;
    strftime(out, size, "%Y%m%d-%H%M%S", localtime_r(&now, &tm));
}

void es_naming_stem(struct es_conn *c, bool stamped, char *out, size_t size) {
    char prog[256], stamp[32];
    unsigned long pid;
    es_naming_program(c, prog, sizeof prog, &pid);
    const char *who = prog[0] ? prog : "eventlog-socket";
    es_naming_stamp(stamp, sizeof stamp);
    if (stamped)
        snprintf(out, size, "%s-%lu-%s", who, pid, stamp);
    else if (prog[0] != '\0' && pid != 0)
        snprintf(out, size, "%s-%lu", prog, pid);
    else
        snprintf(out, size, "%s-%s", who, stamp);
}

int es_naming_create(const char *stem, char *path, size_t size) {
    for (int i = 0; i < TRIES; i++) {
        if (i == 0)
            snprintf(path, size, "%s.eventlog", stem);
        else
            snprintf(path, size, "%s.%d.eventlog", stem, i);
        int fd = es_outfile_create(path, O_WRONLY);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    /* Names planted in advance never leave the recording without a file:
     * six random characters, as mkstemp(3) makes them (mode 0600). */
    snprintf(path, size, "%s.XXXXXX.eventlog", stem);
    return es_outfile_create_random(path, (int)strlen(".eventlog"));
}

int es_naming_create_numbered(const char *base, unsigned *num, int flags, char *path, size_t size) {
    for (unsigned n = *num; n < *num + TRIES; n++) {
        if ((size_t)snprintf(path, size, "%s.%u", base, n) >= size) {
            errno = ENAMETOOLONG; /* never a name cut short */
            return -1;
        }
        int fd = es_outfile_create(path, flags);
        if (fd >= 0) {
            *num = n;
            return fd;
        }
        if (errno != EEXIST)
            return -1;
    }
    snprintf(path, size, "%s.%u.XXXXXX", base, *num);
    return es_outfile_create_random(path, 0);
}
