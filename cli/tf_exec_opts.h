/* twoface-exec's command line: what the user asked for, parsed with
 * getopt_long in the style of every twoface program (cli/tf_cli.h).
 * Program-private: not part of libtwoface. */
#ifndef TF_EXEC_OPTS_H
#define TF_EXEC_OPTS_H

#include <stdint.h>
#include <stdio.h>

#define TF_EXEC_MAX_PLANS 8

typedef struct {
    const char *plans[TF_EXEC_MAX_PLANS];
    int nplans;
    const char *algo, *replication; /* as given, parsed by tf_algo_parse */
    int k;                          /* 0: from --b, else the planned K */
    int iters, warmup, max_iters;
    double time_budget;             /* seconds; 0: run exactly iters rounds */
    const char *b_path, *c_path;
    int check, json;
    int threads, threads_fetch;
    int select_calls;
    int comm;                       /* TF_COMM_*: --comm (default: the plan's) */
    int comm2;                      /* --comm A,B: the second (each algorithm runs in
                                       both, interleaved); TF_COMM_PLAN (0) = none */
    uint64_t seed;
} tf_exec_args;

/* The --help text. */
void tf_exec_usage(FILE *f);

/* Fills *a (defaults for what is not given). Returns TF_OK, TF_ERR_ARG with a
 * one-line message, or -1 when --help was asked for. Uses getopt's global
 * state: call once per process. */
int tf_exec_parse_args(int argc, char **argv, tf_exec_args *a);

#endif
