#include "tf_cli.h"

#include "tf_error.h"

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tf_cli_i64(const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno || v < lo || v > hi)
        return tf_fail(TF_ERR_ARG, "%s '%s': expected a whole number in %lld..%lld", opt, s,
                       (long long)lo, (long long)hi);
    *out = v;
    return TF_OK;
}

int tf_cli_int(const char *opt, const char *s, long lo, long hi, int *out)
{
    int64_t v;
    int st = tf_cli_i64(opt, s, lo, hi, &v);
    if (st == TF_OK)
        *out = (int)v;
    return st;
}

int tf_cli_double(const char *opt, const char *s, double lo, double hi, const char *what,
                  double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || errno || !isfinite(v) || !(v >= lo && v <= hi))
        return tf_fail(TF_ERR_ARG, "%s '%s': expected %s in %.15g..%.15g", opt, s, what, lo, hi);
    *out = v;
    return TF_OK;
}

int tf_cli_u64(const char *opt, const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    /* strtoull accepts "-1" as 2^64 - 1: only digits may start the value. */
    unsigned long long v = strtoull(s, &end, 0);
    if (*s < '0' || *s > '9' || *end != '\0' || errno)
        return tf_fail(TF_ERR_ARG, "%s '%s': expected a whole number in 0..%llu", opt, s,
                       (unsigned long long)UINT64_MAX);
    *out = (uint64_t)v;
    return TF_OK;
}

/* How many long options `name` (up to its '=' or end) names: an exact match
 * counts as one, else every option it abbreviates; *hit is the last. */
static int match_long(const char *name, size_t len, const struct option *longopts,
                      const struct option **hit)
{
    int n = 0;
    *hit = NULL;
    for (const struct option *o = longopts; o && o->name; o++) {
        if (strncmp(o->name, name, len) != 0)
            continue;
        if (o->name[len] == '\0') {
            *hit = o;
            return 1;
        }
        *hit = o;
        n++;
    }
    return n;
}

int tf_cli_getopt_error(int c, char **argv, const struct option *longopts)
{
    /* getopt has stepped past the offending word (optind - 1), except inside
     * a group of short options ("-qz"), where optopt names the letter. */
    const char *word = optind > 0 ? argv[optind - 1] : "";
    if (word == NULL || strncmp(word, "--", 2) != 0) {
        if (optopt > ' ' && optopt < 0x7f) {
            if (c == ':')
                return tf_fail(TF_ERR_ARG, "option '-%c' needs a value", optopt);
            return tf_fail(TF_ERR_ARG, "unknown option '-%c' (--help lists them)", optopt);
        }
        return tf_fail(TF_ERR_ARG, "unknown option '%s' (--help lists them)", word ? word : "");
    }
    const char *name = word + 2;
    const char *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    const struct option *o;
    int n = match_long(name, len, longopts, &o);
    if (c == ':')
        return tf_fail(TF_ERR_ARG, "option '--%s' needs a value", o ? o->name : name);
    if (n > 1)
        return tf_fail(TF_ERR_ARG, "option '--%.*s' is ambiguous (--help lists the options)",
                       (int)len, name);
    if (n == 1 && eq && o->has_arg == no_argument)
        return tf_fail(TF_ERR_ARG, "option '--%s' takes no value", o->name);
    return tf_fail(TF_ERR_ARG, "unknown option '--%.*s' (--help lists them)", (int)len, name);
}

int tf_cli_omp_threads(void)
{
    int t = omp_get_max_threads();
    if (t <= TF_CLI_MAX_THREADS)
        return TF_OK;
    const char *env = getenv("OMP_NUM_THREADS");
    return tf_fail(TF_ERR_ARG, "OMP_NUM_THREADS=%s: at most %d OpenMP threads per process",
                   env ? env : "(unset)", TF_CLI_MAX_THREADS);
}

int tf_cli_path(const char *opt, const char *path)
{
    if (path && !path[0])
        return tf_fail(TF_ERR_ARG, "%s: the path is empty: give a file name", opt);
    return TF_OK;
}

int tf_cli_exit_status(const char *prog, int rc)
{
    errno = 0;
    int bad = fflush(stdout) != 0;
    int err = errno;
    bad |= ferror(stdout) != 0;
    if (rc != 0 || !bad)
        return rc;
    /* An earlier flush may have failed and taken its errno with it. */
    fprintf(stderr, "%s: standard output: %s\n", prog, err ? strerror(err) : "a write failed");
    return 1;
}

int tf_cli_not_fifo(const char *opt, const char *path)
{
    struct stat sb;
    if (!path || stat(path, &sb) != 0 || !S_ISFIFO(sb.st_mode))
        return TF_OK;
    /* An anonymous pipe (/dev/stdin from "|", <(...)) lives on the pipe
     * file system, as a pipe made here does; Linux opens it again without
     * waiting for a writer. A named FIFO, even one on standard input (<
     * fifo), waits at every open until a writer comes. */
    int fds[2];
    if (pipe(fds) == 0) {
        struct stat pb;
        int anon = fstat(fds[0], &pb) == 0 && pb.st_dev == sb.st_dev;
        close(fds[0]);
        close(fds[1]);
        if (anon)
            return TF_OK;
    }
    return tf_fail(TF_ERR_ARG, "%s %s: a named FIFO, which would be opened more than once and "
                   "lose what its writer sent; give a regular file, or pipe the data in and "
                   "name /dev/stdin", opt, path);
}
