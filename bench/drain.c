/* A benchmark client: connect to a Unix socket (waiting for it to appear)
 * and read until EOF, or with --stall never read and wait to be killed.
 * Prints the number of bytes read. */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: drain SOCKET [--stall]\n");
        return 2;
    }
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strncpy(a.sun_path, argv[1], sizeof a.sun_path - 1);
    int fd = -1;
    for (int tries = 0; tries < 20000; tries++) { /* 20 s */
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
            break;
        close(fd);
        fd = -1;
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (fd < 0) {
        fprintf(stderr, "drain: cannot connect to %s\n", argv[1]);
        return 1;
    }
    if (argc > 2 && strcmp(argv[2], "--stall") == 0) {
        for (;;)
            pause();
    }
    static char buf[1 << 20];
    unsigned long long total = 0;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n > 0)
            total += (unsigned long long)n;
        else if (n == 0 || errno != EINTR)
            break;
    }
    printf("%llu\n", total);
    return 0;
}
