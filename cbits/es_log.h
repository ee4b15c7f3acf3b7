/* Logging to stderr, one line per message, prefixed "eventlog-socket: ".
 * Only the loop thread and API calls log; the RTS writer callbacks never do,
 * because a write to a full stderr pipe could block an RTS thread. */
#ifndef ES_LOG_H
#define ES_LOG_H

void es_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
