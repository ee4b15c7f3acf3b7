#include "es_control.h"

#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"

void es_control_init(struct es_control_parser *p) {
    p->matched = 0;
    p->unknown = 0;
}

static int known_command(uint8_t cmd) {
    return cmd == EVENTLOG_SOCKET_CMD_START_HEAP_PROFILING ||
           cmd == EVENTLOG_SOCKET_CMD_STOP_HEAP_PROFILING ||
           cmd == EVENTLOG_SOCKET_CMD_REQUEST_HEAP_CENSUS;
}

size_t es_control_feed(struct es_control_parser *p, const uint8_t *buf, size_t len,
                       es_control_cb cb, void *ctx) {
    static const uint8_t magic[ES_CONTROL_MAGIC_LEN] = {'G', 'C', 'T', 'L'};
    size_t delivered = 0;
    for (size_t i = 0; i < len; i++) {
        uint8_t b = buf[i];
        if (p->matched == ES_CONTROL_MAGIC_LEN) {
            p->matched = 0;
            if (known_command(b)) {
                cb(b, ctx);
                delivered++;
            } else {
                p->unknown++;
            }
        } else if (b == magic[p->matched]) {
            p->matched++;
        } else {
            /* 'G' occurs only at the start of the magic, so after a mismatch
             * the only possible restart is at this byte itself. */
            p->matched = (b == magic[0]) ? 1 : 0;
        }
    }
    return delivered;
}
