/* Reading GHC_EVENTLOG_* from the environment. */
#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "es_config.h"
#include "tap.h"

static void clear(void) {
    unsetenv("GHC_EVENTLOG_UNIX_PATH");
    unsetenv("GHC_EVENTLOG_INET_HOST");
    unsetenv("GHC_EVENTLOG_INET_PORT");
    unsetenv("GHC_EVENTLOG_WAIT");
}

int main(void) {
    struct es_env_config c;
    bool b;
    ok(es_config_parse_bool("1", &b) == 0 && b, "1 is yes");
    ok(es_config_parse_bool("TRUE", &b) == 0 && b, "TRUE is yes");
    ok(es_config_parse_bool("no", &b) == 0 && !b, "no is no");
    ok(es_config_parse_bool("", &b) == 0 && !b, "empty is no");
    ok(es_config_parse_bool("maybe", &b) == EVENTLOG_SOCKET_EINVAL, "maybe is rejected");

    clear();
    ok(es_config_from_env(&c) == EVENTLOG_SOCKET_ENOTCONFIGURED, "nothing set: not configured");
    setenv("GHC_EVENTLOG_UNIX_PATH", "", 1);
    ok(es_config_from_env(&c) == EVENTLOG_SOCKET_ENOTCONFIGURED, "empty path: not configured");

    setenv("GHC_EVENTLOG_UNIX_PATH", "/tmp/x.sock", 1);
    ok(es_config_from_env(&c) == 0 && c.unix_path && !c.wait, "unix path");
    setenv("GHC_EVENTLOG_WAIT", "yes", 1);
    ok(es_config_from_env(&c) == 0 && c.wait, "wait=yes");
    setenv("GHC_EVENTLOG_WAIT", "sometimes", 1);
    ok(es_config_from_env(&c) == EVENTLOG_SOCKET_EINVAL, "wait=sometimes rejected");
    unsetenv("GHC_EVENTLOG_WAIT");

    setenv("GHC_EVENTLOG_INET_PORT", "4242", 1);
    ok(es_config_from_env(&c) == EVENTLOG_SOCKET_EINVAL, "path and port both set rejected");
    unsetenv("GHC_EVENTLOG_UNIX_PATH");
    ok(es_config_from_env(&c) == 0 && c.inet_port && !c.inet_host, "port alone");
    unsetenv("GHC_EVENTLOG_INET_PORT");
    setenv("GHC_EVENTLOG_INET_HOST", "localhost", 1);
    ok(es_config_from_env(&c) == EVENTLOG_SOCKET_EINVAL, "host without port rejected");
    clear();
    return tap_done();
}
