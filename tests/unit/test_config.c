/* Reading GHC_EVENTLOG_* from the environment. */
#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "es_config.h"
#include "tap.h"

static void clear(void) {
    unsetenv("GHC_EVENTLOG_MAX_BUFFER");
    unsetenv("GHC_EVENTLOG_CLIENT_BUFFER");
    unsetenv("GHC_EVENTLOG_SLOW_CLIENT");
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

    size_t z;
    ok(es_config_parse_size("4096", &z) == 0 && z == 4096, "plain bytes");
    ok(es_config_parse_size("64K", &z) == 0 && z == 65536, "64K");
    ok(es_config_parse_size("16M", &z) == 0 && z == 16u << 20, "16M");
    ok(es_config_parse_size("16MiB", &z) == 0 && z == 16u << 20, "16MiB");
    ok(es_config_parse_size("2gb", &z) == 0 && z == (size_t)2 << 30, "2gb");
    ok(es_config_parse_size("1.5M", &z) == EVENTLOG_SOCKET_EINVAL, "fractions rejected");
    ok(es_config_parse_size("-1", &z) == EVENTLOG_SOCKET_EINVAL, "negative rejected");
    ok(es_config_parse_size("12Q", &z) == EVENTLOG_SOCKET_EINVAL, "unknown suffix rejected");
    ok(es_config_parse_size("99999999999999999999", &z) == EVENTLOG_SOCKET_EINVAL,
       "overflow rejected");
    ok(es_config_parse_size("", &z) == EVENTLOG_SOCKET_EINVAL, "empty rejected");

    clear();
    setenv("GHC_EVENTLOG_UNIX_PATH", "/tmp/x.sock", 1);
    setenv("GHC_EVENTLOG_MAX_BUFFER", "32M", 1);
    setenv("GHC_EVENTLOG_SLOW_CLIENT", "Disconnect", 1);
    ok(es_config_from_env(&c) == 0 && c.max_buffer == 32u << 20 && c.client_buffer == 0 &&
           c.slow_client == EVENTLOG_SOCKET_SLOW_CLIENT_DISCONNECT,
       "buffer and policy from the environment");
    setenv("GHC_EVENTLOG_CLIENT_BUFFER", "1K", 1);
    ok(es_config_from_env(&c) == EVENTLOG_SOCKET_EINVAL, "a buffer under 64K is rejected");
    unsetenv("GHC_EVENTLOG_CLIENT_BUFFER");
    setenv("GHC_EVENTLOG_SLOW_CLIENT", "ignore", 1);
    ok(es_config_from_env(&c) == EVENTLOG_SOCKET_EINVAL, "an unknown policy is rejected");
    unsetenv("GHC_EVENTLOG_SLOW_CLIENT");
    unsetenv("GHC_EVENTLOG_MAX_BUFFER");

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
