/* SPDX-License-Identifier: BSD-3-Clause */
/* The subcommands of the `eventlog-socket` command (client/main.c
 * dispatches by name). Each gets argv from its own name on and returns the
 * process's exit status: 0 success, 1 a result the user should know
 * about (a recording cut, a --wait that timed out), 2 a usage error or no
 * eventlog to work with. Each runs on the main thread (`serve` starts
 * HTTP threads of its own). */
#ifndef ES_SUBCOMMANDS_H
#define ES_SUBCOMMANDS_H

int es_record_main(int argc, char **argv);  /* client/flight/record.c */
int es_control_main(int argc, char **argv); /* client/control/control.c */
int es_heap_main(int argc, char **argv);    /* client/tables/heap.c */
int es_top_main(int argc, char **argv);     /* client/top/top.c */
int es_serve_main(int argc, char **argv);   /* client/web/serve.c */
int es_report_main(int argc, char **argv);  /* client/web/report.c */
int es_metrics_main(int argc, char **argv); /* client/prom/metrics.c */
int es_table_main(int argc, char **argv);   /* client/tables/table.c */
int es_compare_main(int argc, char **argv); /* client/tables/compare.c */
int es_profile_main(int argc, char **argv); /* client/tables/profile.c */
/* `watch` (client/flight/watch.c), which `record --trigger ...` is:
 * whether record's arguments ask for it. */
int es_watch_main(int argc, char **argv);
int es_watch_wanted(int argc, char **argv);

/* `report RUN_A RUN_B -o OUT`, for es_report_main once it parsed the
 * arguments (client/web/report_two.c). */
struct es_conn_options;
int es_report_two(const char *src[2], const char *out, const struct es_conn_options *opt);

#endif
