/* twoface-calibrate: measures this machine's cost-model coefficients
 * (docs/cost-model.md) and writes them for twoface-plan --calibration; or,
 * with --validate, compares a plan's predicted times with measured ones.
 *
 *   mpirun -n P twoface-calibrate -o CALIB [--quick] [-k K ...] [--threads T]
 *   mpirun -n P twoface-calibrate --validate PLAN.h5 [PLAN2.h5 ...] [-k K] [-i N]
 *                                 [--warmup W] [--threads T] [--json]
 *
 * Every rank parses the same arguments, so they agree on errors without
 * talking; failures later are agreed through tf_cal_agree. Every failure is
 * one line on stderr (rank 0) and a non-zero exit on every rank. */
#include "tf_agree.h"
#include "tf_calib_file.h"
#include "tf_calibrate.h"
#include "tf_cli.h"
#include "tf_insitu.h"
#include "tf_error.h"
#include "tf_outpath.h"

#include <errno.h>
#include <getopt.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROG "twoface-calibrate"

static int g_rank = 0;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpirun -n P " PROG " -o CALIB [--quick] [-k K ...] [--threads T]\n"
            "       mpirun -n P " PROG " --validate PLAN.h5 [PLAN.h5 ...] [-k K] [-i N] [--json]\n"
            "  -o, --output CALIB    calibration file to write (for twoface-plan --calibration)\n"
            "  --quick               short sweeps (under 30 s on 2 cores, 4 ranks)\n"
            "  --reps N              repetitions of every measured point, and rounds of the\n"
            "                        in-situ run (default 40-100 and 10 with --quick,\n"
            "                        200-500 and 30 without); a simulator (SMPI) is\n"
            "                        deterministic, and 3 are enough there\n"
            "  -k K[,K...]           dense widths to measure the kernels at (repeatable;\n"
            "                        default 128); with --validate: the run's K (default:\n"
            "                        the plan's)\n"
            "  --threads T           OpenMP threads per rank the executor will use\n"
            "                        (default omp_get_max_threads(), i.e. OMP_NUM_THREADS)\n"
            "  --validate PLAN.h5    run the plan(s) with the executor and print predicted\n"
            "                        beside measured times of each half, per rank; several\n"
            "                        plans run interleaved, one SpMM of each in turn\n"
            "  -i, --iterations N    timed SpMMs per plan (default 20)\n"
            "  --warmup W            untimed SpMMs per plan first (default 3)\n"
            "  --json                one JSON line per plan (validation)\n"
            "  --no-insitu           write the microbenchmark fits as they are, without the\n"
            "                        in-situ scaling by a run of the executor\n"
            "  -h, --help            this text\n");
}

static int finish(int code)
{
    MPI_Finalize();
    return tf_cli_exit_status(PROG, code);
}

static void say(const char *msg)
{
    if (g_rank == 0) {
        fprintf(stderr, PROG ": %s\n", msg);
        fflush(stderr);
    }
}

typedef struct {
    const char *output;
    int quick, threads, json, iters, warmup, help, no_insitu, reps;
    int nk, k[TF_CAL_MAXK];
    int validate;
    int nplans;
    char **plans;
} args;

static int parse_args(int argc, char **argv, args *a)
{
    memset(a, 0, sizeof *a);
    a->iters = 20;
    a->warmup = 3;
    enum { O_QUICK = 256, O_THREADS, O_VALIDATE, O_WARMUP, O_JSON, O_NO_INSITU, O_REPS };
    static const struct option longopts[] = {
        {"output", required_argument, 0, 'o'},   {"quick", no_argument, 0, O_QUICK},
        {"threads", required_argument, 0, O_THREADS}, {"validate", required_argument, 0, O_VALIDATE},
        {"iterations", required_argument, 0, 'i'}, {"warmup", required_argument, 0, O_WARMUP},
        {"json", no_argument, 0, O_JSON},         {"help", no_argument, 0, 'h'},
        {"no-insitu", no_argument, 0, O_NO_INSITU}, {"reps", required_argument, 0, O_REPS},
        {0, 0, 0, 0}};
    char *first_plan = NULL;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:k:i:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': a->output = optarg; break;
        case O_QUICK: a->quick = 1; break;
        case 'k': {
            /* "-k 32 -k 128" or "-k 32,128". An empty item is a slip, as in
             * twoface-exec --algo, not a value to skip. */
            size_t len = strlen(optarg);
            if (len > 0 && (optarg[0] == ',' || optarg[len - 1] == ',' || strstr(optarg, ",,")))
                return tf_fail(TF_ERR_ARG, "-k '%s': empty item in the list", optarg);
            char buf[256];
            snprintf(buf, sizeof buf, "%s", optarg);
            for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
                if (a->nk == TF_CAL_MAXK)
                    return tf_fail(TF_ERR_ARG, "-k: at most %d values", TF_CAL_MAXK);
                if (tf_cli_int("-k", tok, 1, 1 << 16, &a->k[a->nk]))
                    return TF_ERR_ARG;
                a->nk++;
            }
            if (a->nk == 0)
                return tf_fail(TF_ERR_ARG, "-k '%s': expected a whole number", optarg);
            break;
        }
        case O_THREADS:
            if (tf_cli_int("--threads", optarg, 1, 4096, &a->threads))
                return TF_ERR_ARG;
            break;
        case O_VALIDATE:
            a->validate = 1;
            first_plan = optarg;
            break;
        case 'i':
            if (tf_cli_int("-i", optarg, 1, 1000000, &a->iters))
                return TF_ERR_ARG;
            break;
        case O_WARMUP:
            if (tf_cli_int("--warmup", optarg, 0, 1000000, &a->warmup))
                return TF_ERR_ARG;
            break;
        case O_JSON: a->json = 1; break;
        case O_NO_INSITU: a->no_insitu = 1; break;
        case O_REPS:
            if (tf_cli_int("--reps", optarg, 1, 100000, &a->reps))
                return TF_ERR_ARG;
            break;
        case 'h': a->help = 1; return TF_OK;
        default: return tf_cli_getopt_error(c, argv, longopts);
        }
    }
    if (a->validate) {
        /* --validate PLAN [PLAN ...]: the first from the option, the rest
         * positional. */
        a->nplans = 1 + (argc - optind);
        a->plans = malloc((size_t)a->nplans * sizeof *a->plans);
        if (!a->plans)
            return tf_fail(TF_ERR_NOMEM, "out of memory");
        a->plans[0] = first_plan;
        for (int i = optind; i < argc; i++)
            a->plans[1 + i - optind] = argv[i];
        for (int i = 0; i < a->nplans; i++)
            if (tf_cli_path("--validate", a->plans[i]))
                return TF_ERR_ARG;
        if (a->nk > 1)
            return tf_fail(TF_ERR_ARG, "--validate runs at one K; %d given", a->nk);
        if (a->output)
            return tf_fail(TF_ERR_ARG, "-o and --validate do not go together");
        return tf_cli_omp_threads();
    }
    if (optind < argc)
        return tf_fail(TF_ERR_ARG, "unexpected argument '%s'", argv[optind]);
    if (!a->output)
        return tf_fail(TF_ERR_ARG, "missing -o CALIB (the calibration file to write; --help lists the options)");
    if (a->json)
        return tf_fail(TF_ERR_ARG, "--json applies to --validate");
    if (a->nk == 0)
        a->k[a->nk++] = 128;
    return tf_cli_omp_threads();
}

/* The options that decide what is measured, the same on every rank: with
 * others the ranks would run other measurements and wait in different
 * calls. The paths may differ per rank. */
static int same_options(MPI_Comm comm, const args *a)
{
    const int64_t v[] = {a->output != NULL, a->quick, a->threads, a->json, a->iters,
                         a->warmup, a->help, a->no_insitu, a->reps, a->nk, a->validate,
                         a->nplans};
    uint64_t h = tf_agree_mix_ints(0, v, sizeof v / sizeof v[0]);
    for (int i = 0; i < a->nk; i++)
        h = tf_agree_mix(h, (uint64_t)a->k[i]);
    return tf_agree_same(comm, h, TF_ERR_ARG,
                         "rank %d was given other options than rank 0 (-o, --quick, --threads, "
                         "--json, -i, --warmup, --help, --no-insitu, --reps, -k, --validate "
                         "and its plans' count): every rank must get the same",
                         g_rank);
}

/* Provenance values are one line with no '#', which starts a comment in a
 * calibration file. */
static void prov_set(tf_calibration *cal, const char *key, const char *val)
{
    for (int i = 0; i < TF_CALIB_NPROV; i++)
        if (strcmp(tf_calib_prov_keys[i], key) == 0) {
            char *d = cal->prov[i];
            snprintf(d, sizeof cal->prov[i], "%s", val);
            for (; *d; d++)
                if (*d == '#' || *d == '\n' || *d == '\r')
                    *d = ' ';
        }
}

static void mpi_library(char *out, size_t n)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(v, &len);
    v[len < MPI_MAX_LIBRARY_VERSION_STRING ? len : MPI_MAX_LIBRARY_VERSION_STRING - 1] = '\0';
    char *nl = strchr(v, '\n');
    if (nl)
        *nl = '\0';
    snprintf(out, n, "%s", v);
}

/* Share of all CPUs busy over `secs` seconds (-1 when unknown), from
 * /proc/stat. On a shared machine other programs' load ends up in every
 * coefficient, so the file says how much there was. Sampled before
 * MPI_Init, while this job's own ranks are all asleep in the same call (the
 * 1-minute load average would count the previous job too). */
static int cpu_times(double *busy, double *total)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return -1;
    unsigned long long v[8] = {0};
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    if (n < 5)
        return -1;
    double t = 0;
    for (int i = 0; i < 8; i++)
        t += (double)v[i];
    *total = t;
    *busy = t - (double)v[3] - (double)v[4]; /* minus idle and iowait */
    return 0;
}

static double busy_share(double secs)
{
    double b0, t0, b1, t1;
    if (cpu_times(&b0, &t0))
        return -1.0;
    struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
    nanosleep(&ts, NULL);
    if (cpu_times(&b1, &t1) || t1 <= t0)
        return -1.0;
    return (b1 - b0) / (t1 - t0);
}

static double g_busy_before = -1.0;

static int calibrate(const args *a, MPI_Comm comm, int nranks)
{
    double t_start = MPI_Wtime();
    tf_cal_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.comm = comm;
    cfg.rank = g_rank;
    cfg.nranks = nranks;
    cfg.quick = a->quick;
    cfg.reps = a->reps;
    cfg.threads = a->threads > 0 ? a->threads : omp_get_max_threads();
    cfg.nk = a->nk;
    memcpy(cfg.k, a->k, sizeof cfg.k);
    cfg.log = g_rank == 0 ? stdout : NULL;
    cfg.one_node = tf_cal_one_node(comm);

    int st = TF_OK;
    if (nranks < 2)
        st = tf_fail(TF_ERR_ARG, "calibration needs at least 2 ranks (there is nobody to "
                                 "exchange with); run it with mpirun -n P");
    /* Fail now rather than after minutes of measuring. */
    if (st == TF_OK && g_rank == 0) {
        if (tf_outpath_check(a->output))
            st = TF_ERR_IO;
    }
    st = tf_cal_agree(comm, st);
    if (st)
        return st;

    char lib[256], host[256] = "unknown", transport[256], kv[256] = "";
    mpi_library(lib, sizeof lib);
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    const char *btl = getenv("OMPI_MCA_btl"), *osc = getenv("OMPI_MCA_osc");
    snprintf(transport, sizeof transport, "btl=%s osc=%s", btl && *btl ? btl : "default",
             osc && *osc ? osc : "default");
    for (int i = 0; i < cfg.nk; i++) {
        size_t l = strlen(kv);
        snprintf(kv + l, sizeof kv - l, "%s%d", i ? "," : "", cfg.k[i]);
    }
    if (cfg.log) {
        fprintf(cfg.log, PROG ": %s run on %s: %d ranks, %d thread(s) per rank assumed, "
                         "%ld online cores; %s; %s; kernels at K = %s\n",
                a->quick ? "quick" : "full", host, nranks, cfg.threads,
                sysconf(_SC_NPROCESSORS_ONLN), lib, transport, kv);
        if (g_busy_before > 0.2)
            fprintf(cfg.log, "warning: other programs kept %.0f%% of the %ld cores busy just "
                             "before starting: their interference will be in the "
                             "coefficients\n",
                    100.0 * g_busy_before, sysconf(_SC_NPROCESSORS_ONLN));
        fflush(cfg.log);
    }

    tf_fit coll, fetch, kern[3];
    double gamma_cached = 0.0, cache_bytes = 0.0, gamma_row = 0.0;
    double t0 = MPI_Wtime();
    st = tf_measure_coll(&cfg, &coll);
    double t1 = MPI_Wtime();
    if (cfg.log)
        fflush(cfg.log);
    double overlap = 0.0;
    if (st == TF_OK)
        st = tf_measure_fetch(&cfg, &fetch);
    if (st == TF_OK)
        st = tf_measure_overlap(&cfg, fetch.coef[0], &overlap);
    double t2 = MPI_Wtime();
    if (cfg.log)
        fflush(cfg.log);
    if (st == TF_OK)
        st = tf_measure_kernels(&cfg, kern, &gamma_cached, &cache_bytes, &gamma_row);
    double t3 = MPI_Wtime(), barrier = 0.0, alpha_sync = 0.0;
    if (st == TF_OK)
        st = tf_measure_sync(&cfg, &alpha_sync, &barrier);
    if (st)
        return st;

    tf_calibration cal;
    memset(&cal, 0, sizeof cal);
    cal.coeffs.alpha_coll = coll.coef[0];
    cal.coeffs.beta_coll = coll.coef[1];
    cal.coeffs.beta_coll_max = coll.coef[2];
    cal.coeffs.alpha_fetch = fetch.coef[0];
    cal.coeffs.beta_fetch = fetch.coef[1];
    cal.coeffs.gamma_local = kern[0].coef[0];
    cal.coeffs.gamma_coll = kern[1].coef[0];
    cal.coeffs.gamma_fetch = kern[2].coef[0];
    cal.coeffs.gamma_fetch_cached = kern[2].np == 2 ? kern[2].coef[1] : 0.0;
    cal.coeffs.overlap_fetch = overlap;
    cal.coeffs.gamma_cached = gamma_cached;
    cal.coeffs.cache_bytes = cache_bytes;
    cal.coeffs.gamma_row = gamma_row;
    cal.coeffs.alpha_sync = alpha_sync;
    cal.coeffs.threads = cfg.threads;
    /* Microbenchmarks give the shape of each half's cost; a run of the real
     * executor sets its scale (tf_insitu.h explains why). */
    double insitu[5] = {1, 1, 1, 1, 1};
    if (!a->no_insitu) {
        int kin = cfg.nk > 0 ? cfg.k[cfg.nk - 1] : 128;
        for (int i = 0; i < cfg.nk; i++)
            if (cfg.k[i] == 128)
                kin = 128;
        int ist = tf_measure_insitu(comm, kin, tf_cal_reps(&cfg, 10, 30), &cal.coeffs,
                                    g_rank == 0 ? stdout : NULL, insitu);
        if (ist)
            return ist;
    }

    char buf[512]; /* the note, about 280 bytes; cal.prov keeps up to 511 */
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    prov_set(&cal, "date", buf);
    prov_set(&cal, "host", host);
    snprintf(buf, sizeof buf, "%d", nranks);
    prov_set(&cal, "ranks", buf);
    snprintf(buf, sizeof buf, "%d", cfg.threads);
    prov_set(&cal, "threads_measured", buf);
    prov_set(&cal, "mpi_library", lib);
    prov_set(&cal, "transport", transport);
    prov_set(&cal, "k_values", kv);
    char clamped[128] = "";
    const tf_fit *fits[5] = {&coll, &fetch, &kern[0], &kern[1], &kern[2]};
    static const char *const pnames[5][3] = {{"alpha_coll", "beta_coll", "beta_coll_max"},
                                             {"alpha_fetch", "beta_fetch", ""},
                                             {"gamma_local", "", ""},
                                             {"gamma_coll", "", ""},
                                             {"gamma_fetch", "gamma_fetch_cached", ""}};
    for (int f = 0; f < 5; f++)
        for (int j = 0; j < fits[f]->np; j++)
            if (fits[f]->clamped[j]) {
                size_t l = strlen(clamped);
                snprintf(clamped + l, sizeof clamped - l, "%s%s", l ? " " : "", pnames[f][j]);
            }
    snprintf(buf, sizeof buf,
             "%s sweep on %ld cores, %.0f%% busy with other work before; fit RMS rel. error coll "
             "%.0f%% fetch %.0f%% gamma_local %.0f%% gamma_coll %.0f%% gamma_fetch %.0f%%; "
             "clamped to 0: %s; in-situ scale local %.2f collective %.2f fetch comm %.2f handshake %.2f (fetch kernel measured / predicted %.2f, not applied)",
             a->quick ? "quick" : "full", sysconf(_SC_NPROCESSORS_ONLN), 100.0 * g_busy_before,
             100 * coll.rms_rel, 100 * fetch.rms_rel, 100 * kern[0].rms_rel,
             100 * kern[1].rms_rel, 100 * kern[2].rms_rel, clamped[0] ? clamped : "none",
             insitu[0], insitu[1], insitu[2], insitu[3], insitu[4]);
    prov_set(&cal, "note", buf);

    if (g_rank == 0)
        st = tf_calib_write(a->output, &cal);
    st = tf_cal_agree(comm, st);
    if (st)
        return st;

    if (cfg.log) {
        FILE *f = cfg.log;
        fprintf(f, "\ncoefficients (%s):\n", a->output);
        for (int i = 0; i < TF_NCOEFFS; i++) {
            double v = tf_coeffs_get(&cal.coeffs, i);
            if (i == TF_NCOEFFS - 1)
                fprintf(f, "  %-12s = %d %s\n", tf_coeff_names[i], (int)v, tf_coeff_units[i]);
            else
                fprintf(f, "  %-12s = %.4g %s\n", tf_coeff_names[i], v, tf_coeff_units[i]);
        }
        {
            /* A row the collective moves is paid by both sides' copies and,
             * on a duplex link, once more in each side's busier direction. */
            double coll_row = 2 * cal.coeffs.beta_coll + 2 * cal.coeffs.beta_coll_max;
            if (coll_row > 0)
                fprintf(f, "per byte of a row moved: fetch %.3g s (beta_fetch), collective %.3g s "
                           "(2 x beta_coll + 2 x beta_coll_max, sender and receiver): ratio %.2f\n",
                        cal.coeffs.beta_fetch, coll_row, cal.coeffs.beta_fetch / coll_row);
        }
        fprintf(f, "per-request overhead of a fetch: %.2f us (alpha_fetch); per message of the "
                   "collective: %.2f us per side (alpha_coll)\n",
                1e6 * cal.coeffs.alpha_fetch, 1e6 * cal.coeffs.alpha_coll);
        for (int i = 0; i < cfg.nk; i++) {
            double per_row = cal.coeffs.beta_fetch * 4.0 * cfg.k[i];
            fprintf(f, "at K = %d a request costs as much as fetching %.1f extra rows (the "
                       "planner's largest gap G)\n",
                    cfg.k[i], per_row > 0 ? cal.coeffs.alpha_fetch / per_row : 0.0);
        }
        fprintf(f, "handshake per fetch peer: %.2f us (alpha_sync); one barrier round: %.1f us\n",
                1e6 * cal.coeffs.alpha_sync, 1e6 * barrier);
        fprintf(f, "time: collective %.1f s, fetch %.1f s, kernels %.1f s, total %.1f s\n",
                t1 - t0, t2 - t1, t3 - t2, MPI_Wtime() - t_start);
        fflush(f);
    }
    return TF_OK;
}

int main(int argc, char **argv)
{
    /* The executor's choice (README): sm one-sided for allocated windows,
     * never ucx, which returned corrupted MPI_Get data here. Set before
     * MPI_Init, which reads it; the user's own setting wins. */
    setenv("OMPI_MCA_osc", "sm,rdma", 0);
    /* Only a calibration records it; validation and errors need no delay. */
    int want_busy = argc > 1;
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "--validate", 10) == 0 || strcmp(argv[i], "-h") == 0 ||
            strcmp(argv[i], "--help") == 0)
            want_busy = 0;
    if (want_busy)
        g_busy_before = busy_share(0.5);
    /* The coefficients describe the transports a plan is made for - the
     * exchange, the one-sided gets, the collective's copies - not the
     * executor's in-place path on one node, where both classes read the
     * same rows and the plan's choice decides nothing (docs/executor.md,
     * "One node: B read in place"): the in-situ runs time the copies. */
    const char *shm = getenv("TWOFACE_COLL_SHM");
    if (want_busy && (!shm || !*shm || strcmp(shm, "auto") == 0))
        setenv("TWOFACE_COLL_SHM", "copy", 1);
    int provided = 0;
    /* Ask only for what the run can use: with one OpenMP thread the executor
     * never calls MPI from two threads, and FUNNELED lets transports that
     * refuse THREAD_MULTIPLE (osc pt2pt, one-sided over plain TCP) run. */
    MPI_Init_thread(&argc, &argv,
                    omp_get_max_threads() > 1 ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED,
                    &provided);
    MPI_Comm comm = MPI_COMM_WORLD;
    int nranks;
    MPI_Comm_rank(comm, &g_rank);
    MPI_Comm_size(comm, &nranks);
    /* Failures such as a transport that cannot create the window (osc rdma
     * over btl tcp) become one-line messages on every rank instead of Open
     * MPI's multi-line abort. */
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);

    args a;
    /* OMP_NUM_THREADS is this rank's environment: the ranks agree, so that
     * none goes on alone into the measurements. */
    if (tf_agree(comm, parse_args(argc, argv, &a)) != TF_OK || same_options(comm, &a) != TF_OK) {
        say(tf_error_message());
        free(a.plans);
        return finish(2);
    }
    if (a.help) {
        if (g_rank == 0)
            usage(stdout);
        free(a.plans);
        return finish(0);
    }

    int st;
    if (a.validate) {
        tf_validate_options vo;
        memset(&vo, 0, sizeof vo);
        vo.k = a.nk ? a.k[0] : 0;
        vo.iters = a.iters;
        vo.warmup = a.warmup;
        vo.threads = a.threads;
        vo.json = a.json;
        vo.seed = 1;
        st = tf_validate(comm, a.nplans, a.plans, &vo, g_rank == 0 ? stdout : NULL);
    } else {
        st = calibrate(&a, comm, nranks);
    }
    free(a.plans);
    if (st) {
        say(tf_error_message());
        return finish(1);
    }
    return finish(0);
}
