/* SPDX-License-Identifier: BSD-3-Clause */
/* es_fd through a real server: started in a program whose standard
 * streams are all closed (`<&- >&- 2>&-`), the library takes none of
 * their numbers (they are /dev/null), and the program exits cleanly
 * (libuv, whose loop's descriptors would have taken them, stops a program
 * that closes one of 0, 1, 2). In a child, whose streams are its own. */
#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "server/es_server.h"
#include "../unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Exits 0 when all went as it should, 3 when the server did not start, 4
 * when a standard stream's number is not /dev/null; libuv's assertion
 * ends it with SIGABRT. */
static void with_streams_closed(int unused) {
    (void)unused;
    char path[300];
    snprintf(path, sizeof path, "%s/fd.sock", unit_tmpdir());
    close(STDIN_FILENO);
    close(STDOUT_FILENO); /* stderr: unit_dies_of closed it */
    struct es_server *s = NULL;
    if (es_server_start_unix(&s, path, NULL, NULL, NULL) != 0)
        exit(3);
    struct stat st, null;
    if (stat("/dev/null", &null) != 0)
        exit(3);
    for (int fd = 0; fd <= 2; fd++)
        if (fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode) || st.st_rdev != null.st_rdev)
            exit(4);
    es_server_exiting(s);
    es_server_stop(s);
    es_server_free(s);
    exit(0); /* libuv's destructors run, as at a program's exit */
}

UNIT_CASE(fd_server_with_standard_streams_closed) {
    int r = unit_dies_of(with_streams_closed, 0);
    const char *how = "a check failed";
    if (r == 0)
        how = "exit 0";
    else if (r > 0)
        how = "killed by a signal";
    ok(r == 0,
       "a server started with stdin, stdout and stderr closed leaves /dev/null on them and "
       "exits cleanly (%s)",
       how);
}
