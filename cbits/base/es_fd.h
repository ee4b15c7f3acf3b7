/* SPDX-License-Identifier: BSD-3-Clause */
/* The library's descriptors never take 0, 1 or 2. A program that closed a
 * standard stream (a daemon's stderr closed after start, a program run
 * with `>&- 2>&-`) leaves that number free, and the next descriptor opened
 * takes the lowest free one: a client's socket there would get the
 * program's output and the library's own log lines in the middle of its
 * eventlog, a dump file the RTS's error messages, and libuv's own
 * descriptors (its loop's, made where the library cannot move them) stop
 * the program at exit (libuv asserts that it never closes 0, 1 or 2).
 * Any thread. */
#ifndef ES_FD_H
#define ES_FD_H

/* `fd` itself if it is 3 or more; otherwise a duplicate at the lowest free
 * number from 3 on (close-on-exec), `fd` closed. -1 with errno set when no
 * duplicate can be made (then `fd` is closed too), and for a negative `fd`
 * (errno as it was): wraps a call that makes a descriptor. */
int es_fd_above_std(int fd);

/* Before the library makes descriptors of its own or libuv's: a standard
 * stream that is closed is opened on /dev/null (as a daemon does), so that
 * none of them takes its number. Its writes then go nowhere, as they would
 * have failed. */
void es_fd_fill_std(void);

#endif
