/* twoface-plan: the costly preprocessing, once per graph. */
#include "tf_calib_file.h"
#include "tf_error.h"
#include "tf_explain.h"
#include "tf_mm_read.h"
#include "tf_partition.h"
#include "tf_plan.h"
#include "tf_plan_io.h"
#include "tf_planner.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: twoface-plan MATRIX -n P -o PLAN.h5 [options]\n"
            "  MATRIX                 Matrix Market file (.mtx, .mtx.zst, .mtx.gz)\n"
            "  -n, --ranks P          number of MPI ranks the plan is for (required)\n"
            "  -o, --output PLAN.h5   plan file to write (atomically)\n"
            "  -k K                   dense width to optimise for (default %d)\n"
            "  --calibration FILE     cost-model coefficients from twoface-calibrate\n"
            "                         (default: built-in coefficients, docs/cost-model.md)\n"
            "  --mode M               twoface (default), fetch or collective\n"
            "  --stripe-width W       rows per dense stripe (default %d)\n"
            "  --gap G                max unwanted rows spanned by a fetch run\n"
            "                         (default: from the model)\n"
            "  --partition rows|nnz   balance bands by rows (default) or nonzeros\n"
            "  --threads T            executor threads per rank the model assumes\n"
            "                         (default: from the calibration, else 1)\n"
            "  --zstd-level L         compression level 0..22 (default %d; 0 = none)\n"
            "  --explain              print the per-rank classification and predictions\n"
            "  --svg FILE             draw ranks x column stripes coloured by class\n"
            "  -q, --quiet            no phase timings on stderr\n"
            "  -h, --help             this text\n",
            TF_DEFAULT_K, TF_DEFAULT_STRIPE_WIDTH, TF_PLAN_ZSTD_DEFAULT);
}

static int parse_int(const char *opt, const char *s, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno || v < lo || v > hi) {
        fprintf(stderr, "twoface-plan: %s '%s': expected a whole number in %ld..%ld\n", opt, s,
                lo, hi);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int main(int argc, char **argv)
{
    tf_plan_options o;
    tf_plan_options_default(&o);
    const char *out_path = NULL, *calib = NULL, *svg = NULL;
    int explain = 0, quiet = 0, level = TF_PLAN_ZSTD_DEFAULT, threads = 0;
    enum { O_CALIB = 256, O_MODE, O_WIDTH, O_GAP, O_PART, O_EXPLAIN, O_SVG, O_LEVEL, O_THREADS };
    static const struct option longopts[] = {
        {"ranks", required_argument, 0, 'n'},     {"output", required_argument, 0, 'o'},
        {"calibration", required_argument, 0, O_CALIB}, {"mode", required_argument, 0, O_MODE},
        {"stripe-width", required_argument, 0, O_WIDTH}, {"gap", required_argument, 0, O_GAP},
        {"partition", required_argument, 0, O_PART}, {"explain", no_argument, 0, O_EXPLAIN},
        {"svg", required_argument, 0, O_SVG},     {"zstd-level", required_argument, 0, O_LEVEL},
        {"threads", required_argument, 0, O_THREADS}, {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},            {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "n:o:k:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (parse_int("-n", optarg, 1, 1 << 20, &o.nranks))
                return 2;
            break;
        case 'o': out_path = optarg; break;
        case 'k':
            if (parse_int("-k", optarg, 1, 1 << 20, &o.k))
                return 2;
            break;
        case O_CALIB: calib = optarg; break;
        case O_MODE:
            if (tf_mode_parse(optarg, &o.mode)) {
                fprintf(stderr, "twoface-plan: %s\n", tf_error_message());
                return 2;
            }
            break;
        case O_WIDTH:
            if (parse_int("--stripe-width", optarg, 1, 1 << 24, &o.stripe_width))
                return 2;
            break;
        case O_GAP:
            if (parse_int("--gap", optarg, 0, 1 << 24, &o.gap))
                return 2;
            break;
        case O_PART:
            if (tf_partition_parse(optarg, &o.partition)) {
                fprintf(stderr, "twoface-plan: %s\n", tf_error_message());
                return 2;
            }
            break;
        case O_EXPLAIN: explain = 1; break;
        case O_SVG: svg = optarg; break;
        case O_LEVEL:
            if (parse_int("--zstd-level", optarg, 0, 22, &level))
                return 2;
            break;
        case O_THREADS:
            if (parse_int("--threads", optarg, 1, 4096, &threads))
                return 2;
            break;
        case 'q': quiet = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc - 1 || o.nranks < 1 || !out_path) {
        fprintf(stderr, "twoface-plan: %s\n",
                optind >= argc ? "missing MATRIX"
                : optind < argc - 1 ? "more than one MATRIX given"
                : o.nranks < 1 ? "missing -n P (ranks the plan is for)"
                               : "missing -o PLAN.h5");
        usage(stderr);
        return 2;
    }
    const char *matrix = argv[optind];
    if (calib) {
        tf_calibration cal;
        if (tf_calib_read(calib, &cal)) {
            fprintf(stderr, "twoface-plan: %s\n", tf_error_message());
            return 1;
        }
        o.coeffs = cal.coeffs;
    }
    if (threads)
        o.coeffs.threads = threads;

    double t0 = omp_get_wtime();
    tf_csr a;
    tf_mm_read_options ro = TF_MM_READ_OPTIONS_INIT;
    if (tf_mm_read(matrix, &a, &ro)) {
        fprintf(stderr, "twoface-plan: %s\n", tf_error_message());
        return 1;
    }
    double t_read = omp_get_wtime() - t0;
    double phase[TF_PLAN_PHASES] = {0};
    o.timing = phase;
    tf_plan plan;
    if (tf_plan_build(&a, &o, &plan)) {
        fprintf(stderr, "twoface-plan: %s: %s\n", matrix, tf_error_message());
        tf_csr_free(&a);
        return 1;
    }
    tf_csr_free(&a);
    double t1 = omp_get_wtime();
    if (tf_plan_write(out_path, &plan, level)) {
        fprintf(stderr, "twoface-plan: %s\n", tf_error_message());
        tf_plan_free(&plan);
        return 1;
    }
    double t_write = omp_get_wtime() - t1;
    int rc = 0;
    if (svg && tf_explain_svg(svg, &plan)) {
        fprintf(stderr, "twoface-plan: %s\n", tf_error_message());
        rc = 1;
    }
    if (explain)
        tf_explain_print(stdout, &plan);
    if (!quiet) {
        double plan_s = phase[0] + phase[1] + phase[2] + phase[3];
        fprintf(stderr,
                "twoface-plan: %s -> %s: %lld x %lld, %lld nnz, %d ranks, K %d, mode %s\n"
                "  time: read %.3f s, partition %.3f s, analyse %.3f s, classify %.3f s, "
                "build %.3f s, write %.3f s; planning %.3f s without I/O, %.3f s with "
                "(%d OpenMP threads)\n",
                matrix, out_path, (long long)plan.m, (long long)plan.n, (long long)plan.nnz,
                plan.nranks, plan.k_planned, tf_mode_name(plan.mode), t_read, phase[0], phase[1],
                phase[2], phase[3], t_write, plan_s, plan_s + t_read + t_write,
                omp_get_max_threads());
    }
    tf_plan_free(&plan);
    return rc;
}
