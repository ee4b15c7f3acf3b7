/* Creating listening sockets safely, on the real file system and loopback. */
#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "es_listen.h"
#include "tap.h"

#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static char dir[] = "/tmp/es-test-listen-XXXXXX";

static char *path_in_dir(const char *name) {
    static char buf[256];
    snprintf(buf, sizeof buf, "%s/%s", dir, name);
    return buf;
}

int main(void) {
    struct es_listen_result r, r2;
    struct stat st;
    if (mkdtemp(dir) == NULL) {
        printf("Bail out! mkdtemp\n");
        return 1;
    }

    char longpath[200];
    memset(longpath, 'a', sizeof longpath - 1);
    longpath[0] = '/';
    longpath[sizeof longpath - 1] = '\0';
    ok(es_listen_unix(longpath, &r) == EVENTLOG_SOCKET_ENAMETOOLONG, "too long a path");
    ok(es_listen_unix("", &r) == EVENTLOG_SOCKET_EINVAL, "empty path");

    /* A regular file in the way is left exactly as it was. */
    char *file = strdup(path_in_dir("not-a-socket"));
    FILE *f = fopen(file, "w");
    fputs("precious", f);
    fclose(f);
    ok(es_listen_unix(file, &r) == EVENTLOG_SOCKET_ENOTSOCKET, "a regular file is refused");
    char content[32] = {0};
    f = fopen(file, "r");
    ok(f && fgets(content, sizeof content, f) && strcmp(content, "precious") == 0,
       "the file is untouched");
    fclose(f);
    unlink(file);
    free(file);
    ok(es_listen_unix(path_in_dir(""), &r) == EVENTLOG_SOCKET_ENOTSOCKET, "a directory is refused");

    /* A fresh socket: mode 0600. */
    char *sock = strdup(path_in_dir("s.sock"));
    ok(es_listen_unix(sock, &r) == 0 && r.fd >= 0, "listening on a new path");
    ok(lstat(sock, &st) == 0 && S_ISSOCK(st.st_mode) && (st.st_mode & 0777) == 0600,
       "socket file has mode 0600 (got %o)", st.st_mode & 0777);
    ok(strcmp(r.desc + 5, sock) == 0, "description names the path");

    /* Someone is listening: refuse, leave it alone. */
    ok(es_listen_unix(sock, &r2) == EVENTLOG_SOCKET_EADDRINUSE, "a live listener is refused");
    ok(lstat(sock, &st) == 0 && st.st_ino == r.ino, "the live socket is still there");

    /* The listener dies without removing its file: the file is stale. File
     * change times are as coarse as the kernel tick, and the new file may
     * reuse the old inode number; a real replacement comes much later than
     * a tick, so let one pass. */
    close(r.fd);
    struct timespec tick = {0, 30 * 1000 * 1000};
    nanosleep(&tick, NULL);
    ok(es_listen_unix(sock, &r2) == 0, "a stale socket is replaced");
    ok(lstat(sock, &st) == 0 && st.st_ino == r2.ino, "the new socket is ours");

    /* Removing only removes our own file. */
    es_listen_unlink_unix(sock, &r); /* r describes the old, replaced file */
    ok(lstat(sock, &st) == 0, "someone else's socket file is not removed");
    es_listen_unlink_unix(sock, &r2);
    ok(lstat(sock, &st) != 0, "our socket file is removed");
    close(r2.fd);
    free(sock);

    /* TCP */
    ok(es_listen_tcp(NULL, "0", &r) == 0 && r.port > 0, "port 0 picks a free port (%d)", r.port);
    ok(strncmp(r.desc, "127.0.0.1:", 10) == 0, "no host means loopback (%s)", r.desc);
    char port[16];
    snprintf(port, sizeof port, "%d", r.port);
    ok(es_listen_tcp("127.0.0.1", port, &r2) == EVENTLOG_SOCKET_EADDRINUSE,
       "a port in use is refused");
    close(r.fd);
    ok(es_listen_tcp("", "abc", &r) == EVENTLOG_SOCKET_EINVAL, "a non-numeric port is refused");
    ok(es_listen_tcp("", "70000", &r) == EVENTLOG_SOCKET_EINVAL, "port 70000 is refused");
    ok(es_listen_tcp("", "", &r) == EVENTLOG_SOCKET_EINVAL, "an empty port is refused");
    /* Digits only: what strtol would skip or accept is refused, at either end. */
    static const char *const bad_ports[] = {" 80",  "80 ", "\t80",  "80\n",
                                            "8 0",  "+80", "-0",    "-80",
                                            "0x50", "80a", "65536", "99999999999999999999"};
    for (unsigned i = 0; i < sizeof bad_ports / sizeof bad_ports[0]; i++) {
        char shown[64];
        size_t k = 0;
        for (const char *p = bad_ports[i]; *p && k + 3 < sizeof shown; p++)
            k += (size_t)snprintf(shown + k, sizeof shown - k, "%s",
                                  *p == '\t'   ? "\\t"
                                  : *p == '\n' ? "\\n"
                                               : (char[2]){*p, 0});
        ok(es_listen_tcp("", bad_ports[i], &r) == EVENTLOG_SOCKET_EINVAL && r.fd == -1,
           "port \"%s\" is refused", shown);
    }
    ok(es_listen_tcp(NULL, "000", &r) == 0 && r.port > 0, "leading zeros are digits (000 is 0)");
    close(r.fd);

    rmdir(dir);
    return tap_done();
}
