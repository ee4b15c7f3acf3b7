/* SPDX-License-Identifier: BSD-3-Clause */
/* What `metrics` probes next among the paths its globs match
 * (client/prom/scan.c), with real socket files: another user's planted
 * sockets take their owner's share of the probes, a path new to a scan goes
 * before those of earlier scans, a silent path waits longer after each
 * failure and is due at once when another file is at its path, and the
 * paths kept are bounded without one user crowding out another. */
#include "prom/scan.h"
#include "../unit.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#define OTHER_UID 65534

/* A socket file at DIR/NAME that nothing listens on (a stale one); owned by
 * `uid` when that is not ours (root only). Returns its path in `path`. */
static void plant(const char *name, uid_t uid, char *path, size_t size) {
    snprintf(path, size, "%s/%s", unit_tmpdir(), name);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    unlink(path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0)
        unit_bail("cannot make the socket file %s", path);
    close(fd);
    if (uid != geteuid() && lchown(path, uid, (gid_t)-1) != 0)
        unit_bail("cannot give %s to uid %ld", path, (long)uid);
}

/* A scan that matches DIR/NAME-0 .. NAME-(n-1), made when `make`. */
static void scan_n(struct es_promscan *sc, const char *name, int n, uid_t uid, bool make,
                   uint64_t now) {
    es_promscan_begin(sc);
    for (int i = 0; i < n; i++) {
        char file[64], path[300];
        snprintf(file, sizeof file, "%s-%d", name, i);
        if (make)
            plant(file, uid, path, sizeof path);
        else
            snprintf(path, sizeof path, "%s/%s", unit_tmpdir(), file);
        es_promscan_match(sc, path, now);
    }
}

/* Whether the candidate is DIR/NAME. */
static bool is(const struct es_promscan_cand *c, const char *name) {
    char want[320];
    snprintf(want, sizeof want, "unix:%s/%s", unit_tmpdir(), name);
    return c != NULL && strcmp(c->source, want) == 0;
}

static const char *shown(const struct es_promscan_cand *c) {
    return c != NULL ? strrchr(c->source, '/') + 1 : "none";
}

UNIT_CASE(scan_other_users_sockets_take_their_share) {
    if (geteuid() != 0) {
        ok(1, "# SKIP another user's socket files need root");
        return;
    }
    struct es_promscan sc;
    es_promscan_init(&sc);
    /* 500 of another user's: the first 64 probes are all theirs. */
    scan_n(&sc, "planted", 500, OTHER_UID, true, 0);
    es_promscan_end(&sc, 0);
    struct es_promscan_cand *busy[ES_PROMSCAN_TRIALS];
    unsigned theirs = 0;
    for (unsigned i = 0; i < ES_PROMSCAN_TRIALS; i++)
        theirs += (busy[i] = es_promscan_next(&sc)) != NULL && busy[i]->owner->uid == OTHER_UID;
    ok(theirs == ES_PROMSCAN_TRIALS && es_promscan_next(&sc) == NULL,
       "alone, another user's paths get all %d probes, and no more (%u)", ES_PROMSCAN_TRIALS,
       theirs);
    /* Our program appears: its path takes the first probe that ends. */
    char path[300];
    plant("ours", geteuid(), path, sizeof path);
    scan_n(&sc, "planted", 500, OTHER_UID, false, 1000);
    es_promscan_match(&sc, path, 1000);
    es_promscan_end(&sc, 1000);
    ok(es_promscan_next(&sc) == NULL, "no probe while %d are under way", ES_PROMSCAN_TRIALS);
    es_promscan_failed(&sc, busy[0], "silent", 2000);
    struct es_promscan_cand *c = es_promscan_next(&sc);
    ok(is(c, "ours"),
       "the first probe to end goes to our path, not to the 436 planted ones "
       "waiting (got %s)",
       shown(c));
    /* From the start, both: their probes alternate. */
    es_promscan_destroy(&sc);
    es_promscan_init(&sc);
    scan_n(&sc, "planted", 500, OTHER_UID, false, 0);
    scan_n(&sc, "ours", 3, geteuid(), true, 0);
    es_promscan_end(&sc, 0);
    unsigned mine = 0;
    for (int i = 0; i < 6; i++) {
        c = es_promscan_next(&sc);
        mine += c != NULL && c->owner->uid == geteuid();
    }
    ok(mine == 3, "of the first 6 probes, 3 go to our 3 paths beside 500 planted (%u)", mine);
    es_promscan_destroy(&sc);
}

UNIT_CASE(scan_newest_paths_first) {
    struct es_promscan sc;
    es_promscan_init(&sc);
    scan_n(&sc, "old", 100, geteuid(), true, 0);
    es_promscan_end(&sc, 0);
    struct es_promscan_cand *c = es_promscan_next(&sc);
    ok(is(c, "old-0"), "one scan's new paths go in the glob's order (first: %s)", shown(c));
    for (int i = 0; i < 9; i++)
        es_promscan_next(&sc);
    /* A later scan: 90 old paths still untried, and two new ones. */
    char a[300], b[300];
    plant("new-a", geteuid(), a, sizeof a);
    plant("new-b", geteuid(), b, sizeof b);
    scan_n(&sc, "old", 100, geteuid(), false, 2000);
    es_promscan_match(&sc, a, 2000);
    es_promscan_match(&sc, b, 2000);
    es_promscan_end(&sc, 2000);
    c = es_promscan_next(&sc);
    struct es_promscan_cand *d = es_promscan_next(&sc);
    struct es_promscan_cand *e = es_promscan_next(&sc);
    ok(is(c, "new-a") && is(d, "new-b") && is(e, "old-10"),
       "the latest scan's new paths go before the 90 older ones waiting (%s, %s, %s)", shown(c),
       shown(d), shown(e));
    es_promscan_destroy(&sc);
}

UNIT_CASE(scan_silent_path_backs_off_until_replaced) {
    struct es_promscan sc;
    es_promscan_init(&sc);
    char path[300];
    plant("silent", geteuid(), path, sizeof path);
    uint64_t now = 0, pauses[7];
    for (int i = 0; i < 7; i++) {
        es_promscan_begin(&sc);
        es_promscan_match(&sc, path, now);
        es_promscan_end(&sc, now);
        struct es_promscan_cand *c = es_promscan_next(&sc);
        if (!ok(c != NULL, "try %d: the silent path is due", i + 1))
            break;
        es_promscan_failed(&sc, c, "silent", now);
        pauses[i] = c->due_ms - now;
        es_promscan_end(&sc, now + pauses[i] - 1);
        ok(es_promscan_next(&sc) == NULL, "try %d: not due %llu ms later", i + 1,
           (unsigned long long)pauses[i] - 1);
        now += pauses[i];
    }
    ok(pauses[0] == 5000 && pauses[1] == 10000 && pauses[2] == 20000 && pauses[3] == 40000 &&
           pauses[4] == 80000 && pauses[6] == 80000,
       "pauses of 5, 10, 20, 40 s, then 80 s (%llu, %llu, ..., %llu ms)",
       (unsigned long long)pauses[0], (unsigned long long)pauses[1], (unsigned long long)pauses[6]);
    /* Another file at the path (a program started there): due at once. */
    es_promscan_end(&sc, now);
    es_promscan_failed(&sc, es_promscan_next(&sc), "silent", now);
    es_promscan_end(&sc, now + 1000);
    ok(es_promscan_next(&sc) == NULL, "1 s into its 80 s pause, the same file is not tried");
    plant("silent", geteuid(), path, sizeof path);
    es_promscan_begin(&sc);
    es_promscan_match(&sc, path, now + 1000);
    es_promscan_end(&sc, now + 1000);
    struct es_promscan_cand *c = es_promscan_next(&sc);
    ok(c != NULL && c->failures == 0, "a new file at its path is tried at once, afresh");
    es_promscan_destroy(&sc);
}

UNIT_CASE(scan_kept_paths_are_bounded_per_owner) {
    struct es_promscan sc;
    es_promscan_init(&sc);
    sc.max = 50;
    bool root = geteuid() == 0;
    uid_t planter = root ? OTHER_UID : geteuid();
    scan_n(&sc, "planted", 80, planter, true, 0);
    es_promscan_end(&sc, 0);
    ok(sc.n == 50, "80 paths, 50 kept (%zu)", sc.n);
    if (!root) {
        ok(1, "# SKIP another user's socket files need root");
        es_promscan_destroy(&sc);
        return;
    }
    /* Our program's path, while another user's hold every place. */
    char path[300];
    plant("ours", geteuid(), path, sizeof path);
    scan_n(&sc, "planted", 80, OTHER_UID, false, 2000);
    es_promscan_match(&sc, path, 2000);
    es_promscan_end(&sc, 2000);
    struct es_promscan_cand *c = es_promscan_next(&sc);
    ok(sc.n == 50 && is(c, "ours"),
       "our path takes the place of one of theirs and is probed first (%zu kept; %s)", sc.n,
       shown(c));
    es_promscan_destroy(&sc);
}
