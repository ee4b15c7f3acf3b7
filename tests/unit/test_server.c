/* The whole server without GHC: real Unix sockets, real clients, chunks
 * from a recorded eventlog submitted as the RTS would. Runs under ASan. */
#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "es_server.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static char dir[] = "/tmp/es-test-server-XXXXXX";
static char sock_path[256];

static pthread_mutex_t cmd_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t cmds[16];
static size_t ncmds;

static void on_command(uint8_t cmd, void *ctx) {
    (void)ctx;
    pthread_mutex_lock(&cmd_lock);
    if (ncmds < sizeof cmds)
        cmds[ncmds] = cmd;
    ncmds++;
    pthread_mutex_unlock(&cmd_lock);
}

static int connect_unix(const char *path) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strncpy(a.sun_path, path, sizeof a.sun_path - 1);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Read until EOF (or an error), at most `cap` bytes kept; bounded by a
 * 10 s poll timeout so a bug cannot hang the test. */
static size_t read_all(int fd, unsigned char *buf, size_t cap) {
    size_t n = 0;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 10000) <= 0)
            break;
        unsigned char tmp[65536];
        ssize_t r = read(fd, tmp, sizeof tmp);
        if (r <= 0)
            break;
        size_t keep = (size_t)r <= cap - n ? (size_t)r : cap - n;
        memcpy(buf + n, tmp, keep);
        n += keep;
    }
    return n;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A valid block of `nevents` user messages (type 19) of `len` bytes. */
static unsigned char *make_block(size_t nevents, size_t len, size_t *out_len) {
    size_t size = 24 + nevents * (12 + len);
    unsigned char *b = calloc(1, size);
    b[1] = 18;
    b[10] = (unsigned char)(size >> 24);
    b[11] = (unsigned char)(size >> 16);
    b[12] = (unsigned char)(size >> 8);
    b[13] = (unsigned char)size;
    unsigned char *e = b + 24;
    for (size_t i = 0; i < nevents; i++, e += 12 + len) {
        e[1] = 19;
        e[10] = (unsigned char)(len >> 8);
        e[11] = (unsigned char)len;
        memset(e + 12, 'm', len);
    }
    *out_len = size;
    return b;
}

int main(void) {
    if (mkdtemp(dir) == NULL) {
        printf("Bail out! mkdtemp\n");
        return 1;
    }
    snprintf(sock_path, sizeof sock_path, "%s/srv.sock", dir);
    size_t len;
    unsigned char *log = tap_read_file("tests/fixtures/ghc-9.0.2.eventlog", &len);
    struct es_header *h = malloc(sizeof *h);
    es_header_parse(log, len, h);
    size_t hlen = h->len;
    size_t b1 = es_be32(log + hlen + 10); /* first block */
    size_t rest = len - hlen - b1;        /* second block and the end marker */

    struct es_server_config cfg;
    es_server_config_defaults(&cfg);
    cfg.linger_ms = 500;
    struct es_server *s = NULL;
    ok(es_server_start_unix(&s, sock_path, &cfg, on_command, NULL) == 0, "server started");

    /* Header and first block arrive before any client (a stale block
     * marker in front of the header must be removed). */
    unsigned char *stale = malloc(24 + hlen);
    memset(stale, 0, 24);
    stale[1] = 18;
    memcpy(stale + 24, log, hlen);
    es_server_submit(s, stale, 24 + hlen);
    es_server_submit(s, log + hlen, b1);

    int a = connect_unix(sock_path);
    ok(a >= 0 && es_server_wait_client(s) == 0, "first client connected");
    ok(write(a, "GCTL\x03xxGCTL\x01", 12) == 12, "client A sent two frames");
    for (int i = 0; i < 200; i++) {
        pthread_mutex_lock(&cmd_lock);
        size_t n = ncmds;
        pthread_mutex_unlock(&cmd_lock);
        if (n >= 2)
            break;
        sleep_ms(10);
    }
    pthread_mutex_lock(&cmd_lock);
    ok(ncmds == 2 && cmds[0] == 3 && cmds[1] == 1, "commands 3 then 1 arrived (%zu)", ncmds);
    pthread_mutex_unlock(&cmd_lock);

    int b = connect_unix(sock_path);
    /* Make sure B is accepted before the last chunk: A's commands went
     * through the loop already, so give B's accept the same chance. */
    sleep_ms(100);
    es_server_submit(s, log + hlen + b1, rest);
    es_server_stop(s);
    struct stat st;
    ok(lstat(sock_path, &st) != 0, "socket file removed at stop");

    unsigned char *got = malloc(2 * len);
    size_t na = read_all(a, got, 2 * len);
    ok(na == len && memcmp(got, log, len) == 0,
       "first client got header + everything, stale marker removed (%zu of %zu)", na, len);
    size_t nb = read_all(b, got, 2 * len);
    ok(nb == hlen + rest && memcmp(got, log, hlen) == 0 &&
           memcmp(got + hlen, log + hlen + b1, rest) == 0,
       "later client got header + later chunks only (%zu of %zu)", nb, hlen + rest);
    close(a);
    close(b);
    ok(es_server_wait_client(s) == 0, "wait after stop still reports the client");
    es_server_free(s);

    /* A client that never reads is disconnected when it falls behind its
     * limit; stop then does not wait for it. */
    cfg.client_limit = 256 << 10;
    ok(es_server_start_unix(&s, sock_path, &cfg, on_command, NULL) == 0, "server restarted");
    es_server_submit(s, log, hlen);
    int c = connect_unix(sock_path);
    es_server_wait_client(s);
    size_t blen;
    unsigned char *block = make_block(1000, 1000, &blen); /* ~1 MiB */
    for (int i = 0; i < 16; i++)
        es_server_submit(s, block, blen);
    es_server_stop(s);
    ok(s->clients_lagged == 1, "the stalled client was disconnected for lag");
    ok(s->store.bytes_held == 0 || s->nclients == 0, "no client left at stop");
    size_t nc = read_all(c, got, 2 * len);
    ok(nc >= hlen && memcmp(got, log, hlen) == 0, "it had received the header first");
    close(c);
    es_server_free(s);

    /* A client with a big limit that stalls: stop gives up after linger. */
    cfg.client_limit = 64u << 20;
    ok(es_server_start_unix(&s, sock_path, &cfg, on_command, NULL) == 0, "server restarted");
    es_server_submit(s, log, hlen);
    int d = connect_unix(sock_path);
    es_server_wait_client(s);
    for (int i = 0; i < 16; i++)
        es_server_submit(s, block, blen);
    es_server_stop(s);
    ok(s->nclients == 0 && s->clients_lagged == 0, "stop returned after the linger time");
    close(d);
    es_server_free(s);

    /* No client ever: stop is immediate and wait reports the stop. */
    ok(es_server_start_unix(&s, sock_path, &cfg, on_command, NULL) == 0, "server restarted");
    es_server_submit(s, log, len);
    es_server_stop(s);
    ok(es_server_wait_client(s) == EVENTLOG_SOCKET_ESTOPPED, "wait reports a stopped server");
    es_server_free(s);

    free(block);
    free(got);
    free(stale);
    free(h);
    free(log);
    rmdir(dir);
    return tap_done();
}
