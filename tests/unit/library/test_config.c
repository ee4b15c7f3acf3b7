/* SPDX-License-Identifier: BSD-3-Clause */
/* Reading GHC_EVENTLOG_* from the environment. */
#define EVENTLOG_SOCKET_NO_RTS
#include "eventlog_socket.h"
#include "base/es_config.h"
#include "server/es_instance.h"
#include "base/es_log.h"
#include "../unit.h"

#include <ctype.h>
#include <errno.h>
#include <sys/stat.h>

/* The RTS side of the library is not linked here: no server is started. */
static int no_flush(unsigned ms) {
    (void)ms;
    return 0;
}
static void no_sigterm(bool on) {
    (void)on;
}
const struct es_instance_hooks es_instance_hooks = {NULL, no_flush, no_sigterm, NULL, NULL};

/* A socket path in the case's own directory: the path is checked against
 * the file system, so nothing already there may disturb the test. */
static char sock[4096];

static void clear(void) {
    unsetenv("GHC_EVENTLOG_MAX_BUFFER");
    unsetenv("GHC_EVENTLOG_CLIENT_BUFFER");
    unsetenv("GHC_EVENTLOG_SLOW_CLIENT");
    unsetenv("GHC_EVENTLOG_UNIX_PATH");
    unsetenv("GHC_EVENTLOG_INET_HOST");
    unsetenv("GHC_EVENTLOG_INET_PORT");
    unsetenv("GHC_EVENTLOG_WAIT");
}

/* What every case that reads the environment starts from: none of the
 * variables set (whatever the shell that ran the test had), and `sock`. */
static void start(void) {
    clear();
    snprintf(sock, sizeof sock, "%s/x.sock", unit_tmpdir());
}

/* es_config_from_env with the library's stderr captured into `log`. */
static int from_env_logged(struct es_config *c, char *log, size_t size) {
    es_log_drain(5000); /* earlier lines are not this call's */
    unit_capture_begin();
    es_config_defaults(c);
    int r = es_config_from_env(c);
    es_log_drain(5000); /* es_log only queues the line */
    unit_capture_end(log, size);
    return r;
}

/* `word` in lower case, upper case and capitalised: 0, 1 and 2. */
static const char *spelled(const char *word, int style, char *buf, size_t size) {
    snprintf(buf, size, "%s", word);
    for (char *p = buf; *p; p++)
        if (style == 1 || (style == 2 && p == buf))
            *p = (char)toupper((unsigned char)*p);
    return buf;
}

/* GHC_EVENTLOG_WAIT: every documented spelling in every case, and nonsense
 * refused with a message that lists what is accepted. */
UNIT_CASE(config_wait_spellings) {
    start();
    static const char *const yes[] = {"1", "true", "yes", "on"};
    static const char *const no[] = {"0", "false", "no", "off", ""};
    static const char *const nonsense[] = {"maybe", "2",    "-1",  "10", "y",       "n",
                                           "t",     "f",    "tru", "of", "yess",    " 1",
                                           "1 ",    "on\n", "1.0", "+1", "enabled", "disabled"};
    struct es_config c;
    es_config_defaults(&c);
    char log[1024], word[32];
    setenv("GHC_EVENTLOG_UNIX_PATH", sock, 1);
    for (int answer = 0; answer < 2; answer++) {
        const char *const *words = answer ? yes : no;
        unsigned count = answer ? sizeof yes / sizeof yes[0] : sizeof no / sizeof no[0];
        for (unsigned i = 0; i < count; i++)
            for (int style = 0; style < 3; style++) {
                spelled(words[i], style, word, sizeof word);
                if (style > 0 && strcmp(word, words[i]) == 0)
                    continue; /* no letters: one spelling only */
                setenv("GHC_EVENTLOG_WAIT", word, 1);
                c.wait = !answer;
                int r = from_env_logged(&c, log, sizeof log);
                ok(r == 0 && c.wait == (answer == 1) && log[0] == '\0',
                   "GHC_EVENTLOG_WAIT=\"%s\" means %s, silently", word, answer ? "wait" : "don't");
            }
    }
    for (unsigned i = 0; i < sizeof nonsense / sizeof nonsense[0]; i++) {
        setenv("GHC_EVENTLOG_WAIT", nonsense[i], 1);
        int r = from_env_logged(&c, log, sizeof log);
        char named[64];
        snprintf(named, sizeof named, "GHC_EVENTLOG_WAIT=\"%s\"", nonsense[i]);
        char shown[64];
        if (!ok(r == EVENTLOG_SOCKET_EINVAL && strstr(log, named) &&
                    strstr(log, "1, true, yes or on waits") &&
                    strstr(log, "0, false, no, off or empty does not (any case)"),
                "GHC_EVENTLOG_WAIT=\"%s\" is refused, naming the accepted spellings",
                unit_shown(nonsense[i], shown, sizeof shown)))
            printf("#   logged: %s", log);
    }
    unsetenv("GHC_EVENTLOG_WAIT");
    unsetenv("GHC_EVENTLOG_UNIX_PATH");
}

/* A GHC_EVENTLOG_UNIX_PATH that cannot work is refused before anything is
 * created, with a message naming the variable, the path and what to do. */
UNIT_CASE(config_unix_path_checks) {
    start();
    const char *dir = unit_tmpdir();
    struct es_config c;
    es_config_defaults(&c);
    char log[1024], path[128], named[192];
    struct {
        const char *name; /* under dir */
        int err;
        const char *says;
    } cases[] = {
        {"missing/x.sock", -ENOENT, "does not exist: create it first (mkdir -p"},
        {"x.sock/", EVENTLOG_SOCKET_EINVAL, "ends with '/': give the path of the socket file"},
        {"sub", EVENTLOG_SOCKET_ENOTSOCKET, "is a directory: give the path of a socket file"},
        {"file/x.sock", -ENOTDIR, "is a regular file, not a directory"},
    };
    snprintf(path, sizeof path, "%s/sub", dir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/file", dir);
    fclose(fopen(path, "w"));
    clear();
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, cases[i].name);
        setenv("GHC_EVENTLOG_UNIX_PATH", path, 1);
        int r = from_env_logged(&c, log, sizeof log);
        snprintf(named, sizeof named, "GHC_EVENTLOG_UNIX_PATH=\"%s\"", path);
        if (!ok(r == cases[i].err && strstr(log, named) && strstr(log, cases[i].says),
                "GHC_EVENTLOG_UNIX_PATH=DIR/%s is refused with the variable and \"%s\"",
                cases[i].name, cases[i].says))
            printf("#   returned %d, logged: %s", r, log);
    }
    setenv("GHC_EVENTLOG_UNIX_PATH", sock, 1);
    ok(from_env_logged(&c, log, sizeof log) == 0 && log[0] == '\0',
       "a path in an existing directory passes silently");
    clear();
    snprintf(path, sizeof path, "%s/sub", dir);
    rmdir(path);
    snprintf(path, sizeof path, "%s/file", dir);
    unlink(path);
}

/* One validation for the public options and the environment. */
UNIT_CASE(config_options_translate) {
    struct es_config c;
    struct eventlog_socket_options o;
    es_config_defaults(&c);
    eventlog_socket_options_init(&o);
    ok(o.max_buffer == c.max_buffer && o.client_buffer == c.client_limit &&
           o.slow_client == EVENTLOG_SOCKET_SLOW_CLIENT_DROP && o.max_clients == 1024,
       "options_init gives the defaults");
    o.client_buffer = 1 << 20;
    o.slow_client = EVENTLOG_SOCKET_SLOW_CLIENT_DISCONNECT;
    ok(es_config_from_options(&c, &o) == 0 && c.client_limit == 1u << 20 &&
           c.slow_client == EVENTLOG_SOCKET_SLOW_CLIENT_DISCONNECT,
       "options are translated into the configuration");
    struct es_config before = c;
    o.max_buffer = 1024;
    ok(es_config_from_options(&c, &o) == EVENTLOG_SOCKET_EINVAL &&
           c.max_buffer == before.max_buffer,
       "a buffer under 64K in the options is refused and changes nothing");
    o.max_buffer = 64 << 20;
    o.max_clients = 0;
    ok(es_config_from_options(&c, &o) == EVENTLOG_SOCKET_EINVAL, "max_clients 0 is refused");
    o.max_clients = 10;
    o.control_interval_ms = 60001;
    ok(es_config_from_options(&c, &o) == EVENTLOG_SOCKET_EINVAL,
       "a control interval over 60 s is refused");
    o.control_interval_ms = 0;
    o.slow_client = 7;
    ok(es_config_from_options(&c, &o) == EVENTLOG_SOCKET_EINVAL, "an unknown policy is refused");
    ok(es_config_from_options(&c, NULL) == EVENTLOG_SOCKET_EINVAL, "no options are refused");
    /* A refusal says why on stderr: a dump with no window to write. */
    o.slow_client = EVENTLOG_SOCKET_SLOW_CLIENT_DROP;
    o.dump_on_failure = "/tmp/never-written.eventlog";
    o.retain_bytes = 0;
    char log[1024];
    es_log_drain(5000);
    unit_capture_begin();
    int r = es_config_from_options(&c, &o);
    es_log_drain(5000);
    unit_capture_end(log, sizeof log);
    ok(r == EVENTLOG_SOCKET_EINVAL && strstr(log, "options refused") &&
           strstr(log, "GHC_EVENTLOG_DUMP_ON_FAILURE") && strstr(log, "give the window a size"),
       "a dump with no window is refused, saying why: %s", log);
    o.retain_bytes = 64 << 20;
    ok(es_config_from_options(&c, &o) == 0 && c.retain == 64u << 20,
       "with a window, the dump is taken");
    o.dump_on_failure = NULL;
    es_config_defaults(&c);
    c.client_limit = 1000;
    const char *why = es_config_invalid(&c);
    ok(why && strstr(why, "GHC_EVENTLOG_CLIENT_BUFFER") && strstr(why, "64K"),
       "the reason names the setting and its limit: %s", why ? why : "(none)");
}

/* Who may have lossless delivery, and for how long a stall is borne. */
UNIT_CASE(config_lossless_settings) {
    start();
    struct es_config c;
    char log[2048];
    es_config_defaults(&c);
    ok(c.lossless_clients == EVENTLOG_SOCKET_LOSSLESS_OWNER && c.lossless_stall_ms == 10000,
       "by default only the owner may have lossless delivery, and a stall is borne 10 s");
    clear();
    setenv("GHC_EVENTLOG_UNIX_PATH", sock, 1);
    const char *words[] = {"owner", "ALL", "None"};
    const int values[] = {EVENTLOG_SOCKET_LOSSLESS_OWNER, EVENTLOG_SOCKET_LOSSLESS_ALL,
                          EVENTLOG_SOCKET_LOSSLESS_NONE};
    for (int i = 0; i < 3; i++) {
        setenv("GHC_EVENTLOG_LOSSLESS_CLIENTS", words[i], 1);
        ok(from_env_logged(&c, log, sizeof log) == 0 && c.lossless_clients == values[i],
           "GHC_EVENTLOG_LOSSLESS_CLIENTS=%s", words[i]);
    }
    setenv("GHC_EVENTLOG_LOSSLESS_CLIENTS", "me", 1);
    ok(from_env_logged(&c, log, sizeof log) == EVENTLOG_SOCKET_EINVAL &&
           strstr(log, "GHC_EVENTLOG_LOSSLESS_CLIENTS=\"me\" is none of owner"),
       "another word is refused, saying what is accepted: %s", log);
    setenv("GHC_EVENTLOG_LOSSLESS_CLIENTS", "none", 1);
    setenv("GHC_EVENTLOG_SLOW_CLIENT", "wait", 1);
    ok(from_env_logged(&c, log, sizeof log) == EVENTLOG_SOCKET_EINVAL &&
           strstr(log, "GHC_EVENTLOG_SLOW_CLIENT=wait makes every client lossless"),
       "the wait policy with lossless delivery off is refused: %s", log);
    unsetenv("GHC_EVENTLOG_SLOW_CLIENT");
    unsetenv("GHC_EVENTLOG_LOSSLESS_CLIENTS");
    setenv("GHC_EVENTLOG_LOSSLESS_STALL_MS", "0", 1);
    ok(from_env_logged(&c, log, sizeof log) == 0 && c.lossless_stall_ms == 0,
       "GHC_EVENTLOG_LOSSLESS_STALL_MS=0: never");
    setenv("GHC_EVENTLOG_LOSSLESS_STALL_MS", "3600000", 1);
    ok(from_env_logged(&c, log, sizeof log) == 0 && c.lossless_stall_ms == 3600000,
       "an hour at most");
    setenv("GHC_EVENTLOG_LOSSLESS_STALL_MS", "3600001", 1);
    ok(from_env_logged(&c, log, sizeof log) == EVENTLOG_SOCKET_EINVAL &&
           strstr(log, "GHC_EVENTLOG_LOSSLESS_STALL_MS"),
       "more is refused: %s", log);
    unsetenv("GHC_EVENTLOG_LOSSLESS_STALL_MS");
    setenv("GHC_EVENTLOG_LINGER_MS", "500", 1);
    setenv("GHC_EVENTLOG_LINGER_MAX_MS", "30000", 1);
    ok(from_env_logged(&c, log, sizeof log) == 0 && c.linger_ms == 500 &&
           c.linger_max_ms == 30000 && es_config_linger_max(&c) == 30000,
       "GHC_EVENTLOG_LINGER_MS and _LINGER_MAX_MS are read");
    setenv("GHC_EVENTLOG_LINGER_MAX_MS", "100", 1);
    ok(from_env_logged(&c, log, sizeof log) == 0 && es_config_linger_max(&c) == 500,
       "a maximum below the linger time means the linger time");
    setenv("GHC_EVENTLOG_LINGER_MAX_MS", "600001", 1);
    ok(from_env_logged(&c, log, sizeof log) == EVENTLOG_SOCKET_EINVAL &&
           strstr(log, "GHC_EVENTLOG_LINGER_MAX_MS=\"600001\""),
       "more than ten minutes is refused: %s", log);
    setenv("GHC_EVENTLOG_LINGER_MAX_MS", "10000", 1);
    setenv("GHC_EVENTLOG_LINGER_MS", "2s", 1);
    ok(from_env_logged(&c, log, sizeof log) == EVENTLOG_SOCKET_EINVAL &&
           strstr(log, "GHC_EVENTLOG_LINGER_MS=\"2s\""),
       "and so is anything but digits: %s", log);
    unsetenv("GHC_EVENTLOG_LINGER_MS");
    unsetenv("GHC_EVENTLOG_LINGER_MAX_MS");
    clear();
    struct eventlog_socket_options o;
    eventlog_socket_options_init(&o);
    ok(o.lossless_clients == EVENTLOG_SOCKET_LOSSLESS_OWNER && o.lossless_stall_ms == 10000 &&
           o.linger_ms == 2000 && o.linger_max_ms == 10000,
       "options_init gives the same defaults");
    o.lossless_clients = EVENTLOG_SOCKET_LOSSLESS_ALL;
    o.lossless_stall_ms = 500;
    es_config_defaults(&c);
    ok(es_config_from_options(&c, &o) == 0 && c.lossless_clients == EVENTLOG_SOCKET_LOSSLESS_ALL &&
           c.lossless_stall_ms == 500,
       "and the options set them");
    o.lossless_clients = 9;
    ok(es_config_from_options(&c, &o) == EVENTLOG_SOCKET_EINVAL, "an unknown value is refused");
}

/* The flight recorder's settings: the window's size and age, the dump. */
UNIT_CASE(config_window_settings) {
    start();
    struct es_config c;
    char log[2048];
    es_config_defaults(&c);
    ok(c.retain == 0 && c.retain_seconds == 0 && c.dump_on_failure[0] == '\0',
       "by default no window and no dump");
    clear();
    setenv("GHC_EVENTLOG_UNIX_PATH", sock, 1);
    setenv("GHC_EVENTLOG_RETAIN", "16MiB", 1);
    ok(from_env_logged(&c, log, sizeof log) == 0 && c.retain == 16u << 20 && c.retain_seconds == 0,
       "GHC_EVENTLOG_RETAIN=16MiB");
    setenv("GHC_EVENTLOG_RETAIN", "1K", 1);
    ok(from_env_logged(&c, log, sizeof log) == EVENTLOG_SOCKET_EINVAL &&
           strstr(log, "GHC_EVENTLOG_RETAIN must be 0 (no window) or at least 64K"),
       "a window under 64K is refused: %s", log);
    unsetenv("GHC_EVENTLOG_RETAIN");
    es_config_defaults(&c);
    setenv("GHC_EVENTLOG_RETAIN_SECONDS", "300", 1);
    ok(from_env_logged(&c, log, sizeof log) == 0 && c.retain == ES_DEFAULT_RETAIN &&
           c.retain_seconds == 300,
       "GHC_EVENTLOG_RETAIN_SECONDS=300 alone keeps 300 s in a 64 MiB window");
    /* The command's grammar of times (es_duration.h): 5m is 300 s. */
    static const struct {
        const char *text;
        unsigned secs; /* 0: refused */
        const char *why;
    } ages[] = {{"5m", 300, NULL},
                {"300s", 300, NULL},
                {"1.5m", 90, NULL},
                {"2h", 7200, NULL},
                {"168h", 604800, NULL},
                {"2000ms", 2, NULL},
                {"1.5", 0, "is not whole seconds"},
                {"500ms", 0, "is not whole seconds"},
                {"169h", 0, "is not a duration (seconds, or a number with ms, s, m or h"},
                {"5 m", 0, "is not a duration"},
                {"5d", 0, "is not a duration"},
                {"-5m", 0, "is not a duration"},
                {"1e3", 0, "is not a duration"}};
    for (size_t i = 0; i < sizeof ages / sizeof ages[0]; i++) {
        es_config_defaults(&c);
        setenv("GHC_EVENTLOG_RETAIN_SECONDS", ages[i].text, 1);
        int r = from_env_logged(&c, log, sizeof log);
        if (ages[i].secs)
            ok(r == 0 && c.retain_seconds == ages[i].secs,
               "GHC_EVENTLOG_RETAIN_SECONDS=%s is %u s (%d, %u)", ages[i].text, ages[i].secs, r,
               c.retain_seconds);
        else
            ok(r == EVENTLOG_SOCKET_EINVAL && strstr(log, "GHC_EVENTLOG_RETAIN_SECONDS=\"") &&
                   strstr(log, ages[i].why),
               "GHC_EVENTLOG_RETAIN_SECONDS=%s is refused: %s", ages[i].text, log);
    }
    es_config_defaults(&c);
    setenv("GHC_EVENTLOG_RETAIN_SECONDS", "60", 1);
    setenv("GHC_EVENTLOG_RETAIN", "0", 1);
    ok(from_env_logged(&c, log, sizeof log) == EVENTLOG_SOCKET_EINVAL &&
           strstr(log, "GHC_EVENTLOG_RETAIN=0 turns off"),
       "an age for a window turned off is a contradiction: %s", log);
    unsetenv("GHC_EVENTLOG_RETAIN_SECONDS");
    unsetenv("GHC_EVENTLOG_RETAIN");
    es_config_defaults(&c);
    setenv("GHC_EVENTLOG_DUMP_ON_FAILURE", "/tmp/app-%p.eventlog", 1);
    ok(from_env_logged(&c, log, sizeof log) == 0 && c.retain == ES_DEFAULT_RETAIN &&
           strcmp(c.dump_on_failure, "/tmp/app-%p.eventlog") == 0,
       "GHC_EVENTLOG_DUMP_ON_FAILURE alone keeps a 64 MiB window to write");
    unsetenv("GHC_EVENTLOG_DUMP_ON_FAILURE");
    clear();
    struct eventlog_socket_options o;
    eventlog_socket_options_init(&o);
    ok(o.retain_bytes == 0 && o.retain_seconds == 0 && o.dump_on_failure == NULL,
       "options_init: no window, no dump");
    char name[40];
    strcpy(name, "/tmp/dump.eventlog");
    o.retain_bytes = 1 << 20;
    o.retain_seconds = 10;
    o.dump_on_failure = name;
    es_config_defaults(&c);
    ok(es_config_from_options(&c, &o) == 0 && c.retain == 1u << 20 && c.retain_seconds == 10,
       "the options set the window");
    name[0] = 'X';
    ok(strcmp(c.dump_on_failure, "/tmp/dump.eventlog") == 0, "and the dump's name is copied");
    o.retain_bytes = 0;
    ok(es_config_from_options(&c, &o) == EVENTLOG_SOCKET_EINVAL,
       "a dump or an age without a window is refused");
}

UNIT_CASE(config_bools) {
    bool b;
    ok(es_config_parse_bool("1", &b) == 0 && b, "1 is yes");
    ok(es_config_parse_bool("TRUE", &b) == 0 && b, "TRUE is yes");
    ok(es_config_parse_bool("no", &b) == 0 && !b, "no is no");
    ok(es_config_parse_bool("", &b) == 0 && !b, "empty is no");
    ok(es_config_parse_bool("maybe", &b) == EVENTLOG_SOCKET_EINVAL, "maybe is rejected");
}

UNIT_CASE(config_sizes) {
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
}

UNIT_CASE(config_buffers_and_policy) {
    start();
    struct es_config c;
    es_config_defaults(&c);
    setenv("GHC_EVENTLOG_UNIX_PATH", sock, 1);
    setenv("GHC_EVENTLOG_MAX_BUFFER", "32M", 1);
    setenv("GHC_EVENTLOG_SLOW_CLIENT", "Disconnect", 1);
    ok(es_config_from_env(&c) == 0 && c.max_buffer == 32u << 20 && c.client_limit == 64u << 20 &&
           c.slow_client == EVENTLOG_SOCKET_SLOW_CLIENT_DISCONNECT,
       "buffer and policy from the environment");
    setenv("GHC_EVENTLOG_CLIENT_BUFFER", "1K", 1);
    ok(es_config_from_env(&c) == EVENTLOG_SOCKET_EINVAL, "a buffer under 64K is rejected");
    unsetenv("GHC_EVENTLOG_CLIENT_BUFFER");
    setenv("GHC_EVENTLOG_SLOW_CLIENT", "ignore", 1);
    ok(es_config_from_env(&c) == EVENTLOG_SOCKET_EINVAL, "an unknown policy is rejected");
}

UNIT_CASE(config_unix_path_and_wait) {
    start();
    struct es_config c;
    es_config_defaults(&c);
    ok(es_config_from_env(&c) == EVENTLOG_SOCKET_ENOTCONFIGURED, "nothing set: not configured");
    setenv("GHC_EVENTLOG_UNIX_PATH", "", 1);
    ok(es_config_from_env(&c) == EVENTLOG_SOCKET_ENOTCONFIGURED, "empty path: not configured");
    setenv("GHC_EVENTLOG_UNIX_PATH", sock, 1);
    ok(es_config_from_env(&c) == 0 && c.unix_path && !c.wait, "unix path");
    setenv("GHC_EVENTLOG_WAIT", "yes", 1);
    ok(es_config_from_env(&c) == 0 && c.wait, "wait=yes");
    setenv("GHC_EVENTLOG_WAIT", "sometimes", 1);
    ok(es_config_from_env(&c) == EVENTLOG_SOCKET_EINVAL, "wait=sometimes rejected");
}

UNIT_CASE(config_path_or_port) {
    start();
    struct es_config c;
    es_config_defaults(&c);
    setenv("GHC_EVENTLOG_UNIX_PATH", sock, 1);
    setenv("GHC_EVENTLOG_INET_PORT", "4242", 1);
    ok(es_config_from_env(&c) == EVENTLOG_SOCKET_EINVAL, "path and port both set rejected");
    unsetenv("GHC_EVENTLOG_UNIX_PATH");
    ok(es_config_from_env(&c) == 0 && c.inet_port && !c.inet_host, "port alone");
    unsetenv("GHC_EVENTLOG_INET_PORT");
    setenv("GHC_EVENTLOG_INET_HOST", "localhost", 1);
    ok(es_config_from_env(&c) == EVENTLOG_SOCKET_EINVAL, "host without port rejected");
}
