#include "tf_exec_opts.h"

#include "tf_cli.h"
#include "tf_error.h"
#include "tf_outpath.h"
#include "twoface.h"

#include <string.h>

void tf_exec_usage(FILE *f)
{
    fprintf(f,
            "usage: mpirun -n P twoface-exec PLAN.h5 [PLAN2.h5 ...] [options]\n"
            "  --algo A,B,...        algorithms to run interleaved on the same B: twoface,\n"
            "                        fetch, collective (each needs a plan of that --mode),\n"
            "                        allgather, shift, p2p (on the first plan's partition);\n"
            "                        default: the mode of every plan given\n"
            "  --replication C,...   shift's replication factors, each dividing P; one\n"
            "                        entry shift(c=C) each (default: divisors of P up to 4)\n"
            "  -k K                  dense width (default: --b's width, else the planned K)\n"
            "  -i, --iterations N    timed rounds (default 10; with --time the minimum)\n"
            "  --time S              run timed rounds until S seconds have passed\n"
            "  --max-iterations N    cap on timed rounds with --time (default 100000)\n"
            "  --warmup W            untimed rounds first (default 2; more while a\n"
            "                        twoface plan's start-up trial runs)\n"
            "  --b FILE.h5           B from dataset /B (float32, n x K); default: generator\n"
            "  --c-out FILE.h5       write the first algorithm's C to dataset /C (m x K)\n"
            "  --check               compare every C with a serial reference (tolerance 1e-5;\n"
            "                        with bf16, 1e-5 + 2^-8: the documented bound)\n"
            "  --comm f32|bf16|plan  what B rows travel as (default plan: the plan's choice,\n"
            "                        twoface-plan --comm; the baselines follow it too);\n"
            "                        f32,bf16: every algorithm in both, interleaved\n"
            "  --json                one JSON object per algorithm on stdout\n"
            "  --threads T           OpenMP threads per rank (default OMP_NUM_THREADS,\n"
            "                        else the node's processors / its ranks)\n"
            "  --threads-fetch T     threads of the fetch group (default 1 if T >= 2;\n"
            "                        0 = one thread overlaps both halves)\n"
            "  --select-calls N      start-up trial of a plan carrying a runner-up: timed\n"
            "                        SpMM calls per plan (default 4, up to 32 where a\n"
            "                        call is short; -1 = no trial)\n"
            "  --seed S              seed of the B generator (default 1; round r uses S + r)\n"
            "  -h, --help            this text\n");
}

/* --comm f32|bf16|plan, or a pair "f32,bf16" / "bf16,f32": every algorithm
 * then runs in both precisions, interleaved (the fair way to compare them on
 * a shared machine). */
static int parse_comm(const char *s, tf_exec_args *a)
{
    static const char *const names[3] = {"plan", "f32", "bf16"};
    int got[2] = {-1, -1}, n = 0;
    const char *p = s;
    while (n < 2) {
        size_t len = strcspn(p, ",");
        for (int i = 0; i < 3; i++)
            if (strlen(names[i]) == len && strncmp(p, names[i], len) == 0)
                got[n] = i;
        if (got[n] < 0)
            break;
        n++;
        if (p[len] != ',')
            break;
        p += len + 1;
    }
    int pair = n == 2 && got[0] != TF_COMM_PLAN && got[1] != TF_COMM_PLAN && got[0] != got[1];
    if (got[0] < 0 || (n == 2 && !pair) || (n == 2 && p[strcspn(p, ",")] != '\0'))
        return tf_fail(TF_ERR_ARG, "--comm '%s': expected f32, bf16, plan, f32,bf16 or bf16,f32",
                       s);
    a->comm = got[0];
    a->comm2 = n == 2 ? got[1] : TF_COMM_PLAN;
    return TF_OK;
}

int tf_exec_parse_args(int argc, char **argv, tf_exec_args *a)
{
    memset(a, 0, sizeof *a);
    a->iters = 10;
    a->warmup = 2;
    a->max_iters = 100000;
    a->threads_fetch = -1;
    a->seed = 1;
    enum {
        O_WARMUP = 256, O_THREADS, O_THREADS_FETCH, O_SEED, O_B, O_C_OUT, O_CHECK, O_JSON,
        O_ALGO, O_REPLICATION, O_TIME, O_MAX_ITERS, O_SELECT_CALLS, O_COMM
    };
    static const struct option longopts[] = {
        {"k", required_argument, 0, 'k'},
        {"iterations", required_argument, 0, 'i'},
        {"warmup", required_argument, 0, O_WARMUP},
        {"threads", required_argument, 0, O_THREADS},
        {"threads-fetch", required_argument, 0, O_THREADS_FETCH},
        {"seed", required_argument, 0, O_SEED},
        {"b", required_argument, 0, O_B},
        {"c-out", required_argument, 0, O_C_OUT},
        {"check", no_argument, 0, O_CHECK},
        {"json", no_argument, 0, O_JSON},
        {"algo", required_argument, 0, O_ALGO},
        {"replication", required_argument, 0, O_REPLICATION},
        {"time", required_argument, 0, O_TIME},
        {"max-iterations", required_argument, 0, O_MAX_ITERS},
        {"select-calls", required_argument, 0, O_SELECT_CALLS},
        {"comm", required_argument, 0, O_COMM},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    opterr = 0;
    int c, st = TF_OK;
    while (st == TF_OK && (c = getopt_long(argc, argv, ":k:i:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'k': st = tf_cli_int("-k", optarg, 1, 1 << 24, &a->k); break;
        case 'i': st = tf_cli_int("-i", optarg, 1, 100000000, &a->iters); break;
        case O_MAX_ITERS:
            st = tf_cli_int("--max-iterations", optarg, 1, 100000000, &a->max_iters);
            break;
        case O_WARMUP: st = tf_cli_int("--warmup", optarg, 0, 100000000, &a->warmup); break;
        case O_THREADS: st = tf_cli_int("--threads", optarg, 1, 4096, &a->threads); break;
        case O_THREADS_FETCH:
            st = tf_cli_int("--threads-fetch", optarg, 0, 4096, &a->threads_fetch);
            break;
        case O_SELECT_CALLS:
            st = tf_cli_int("--select-calls", optarg, -1, 1000, &a->select_calls);
            break;
        case O_TIME:
            st = tf_cli_double("--time", optarg, 0, 1e6, "seconds", &a->time_budget);
            break;
        case O_SEED: st = tf_cli_u64("--seed", optarg, &a->seed); break;
        case O_COMM: st = parse_comm(optarg, a); break;
        case O_B: a->b_path = optarg; break;
        case O_C_OUT: a->c_path = optarg; break;
        case O_CHECK: a->check = 1; break;
        case O_JSON: a->json = 1; break;
        case O_ALGO: a->algo = optarg; break;
        case O_REPLICATION: a->replication = optarg; break;
        case 'h': return -1;
        default: st = tf_cli_getopt_error(c, argv, longopts); break;
        }
    }
    if (st)
        return st;
    for (int i = optind; i < argc; i++) {
        if (a->nplans >= TF_EXEC_MAX_PLANS)
            return tf_fail(TF_ERR_ARG, "unexpected argument '%s' (at most %d plans)", argv[i],
                           TF_EXEC_MAX_PLANS);
        a->plans[a->nplans++] = argv[i];
    }
    if (a->nplans == 0)
        return tf_fail(TF_ERR_ARG, "missing PLAN.h5 (--help lists the options)");
    for (int i = 0; i < a->nplans && !st; i++)
        st = tf_cli_path("PLAN", a->plans[i]);
    if (!st)
        st = tf_cli_path("--b", a->b_path);
    if (st)
        return st;
    if (a->replication && !a->algo)
        return tf_fail(TF_ERR_ARG, "--replication applies to shift only: add --algo shift");
    if (a->max_iters < a->iters)
        a->max_iters = a->iters;
    /* Before the plan is loaded and the SpMMs run: only rank 0 writes C,
     * but every rank sees the same path and says the same. */
    if (a->c_path && tf_outpath_check(a->c_path))
        return tf_fail_prefix(TF_ERR_ARG, "--c-out");
    /* C must not replace a plan or B: the run reads them. */
    st = tf_outpath_distinct("--c-out", a->c_path, "--b", a->b_path);
    for (int i = 0; i < a->nplans && !st; i++)
        st = tf_outpath_distinct("--c-out", a->c_path, "PLAN", a->plans[i]);
    return st ? st : tf_cli_omp_threads();
}
