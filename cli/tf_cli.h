/* Command-line options of the twoface programs: one style for every program.
 *
 * The programs parse with getopt_long (optstring starting with ':', opterr
 * = 0, so that getopt prints nothing) and report every problem as one line
 * through tf_error_message():
 *   -k 'x': expected a whole number in 1..16777216
 *   option '--b' needs a value
 *   option '--check' takes no value
 *   unknown option '--foo' (--help lists them)
 * The program prefixes its name ("twoface-exec: ...").
 *
 * Not part of libtwoface: linked into the programs only (Makefile, CLI_LIB). */
#ifndef TF_CLI_H
#define TF_CLI_H

#include <getopt.h>
#include <stdint.h>

/* A whole number in [lo, hi]. TF_OK or TF_ERR_ARG with a message. */
int tf_cli_int(const char *opt, const char *s, long lo, long hi, int *out);
/* The same for 64-bit values (counts, seeds). */
int tf_cli_i64(const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out);

/* A finite number in [lo, hi] (what: "seconds", "a number", ... for the
 * message). */
int tf_cli_double(const char *opt, const char *s, double lo, double hi, const char *what,
                  double *out);

/* A non-negative whole number up to 2^64 - 1 (decimal, or 0x hexadecimal). */
int tf_cli_u64(const char *opt, const char *s, uint64_t *out);

/* An input path given empty (`--labels ''`, a variable that was not set):
 * TF_ERR_ARG with "OPT: the path is empty: give a file name", as an empty
 * output path gets (the open's message, ": cannot open", names nothing);
 * TF_OK for a NULL path (not given) or a non-empty one. */
int tf_cli_path(const char *opt, const char *path);

/* A named FIFO given as an input that the program opens more than once (a
 * matrix: its format is sniffed, then read; GCN text files alike): the
 * first close throws away what the writer sent, and the next open waits
 * for a writer that has gone, for ever. TF_ERR_ARG naming the option and the file for one; TF_OK for
 * anything else, including anonymous pipes (`... | PROGRAM /dev/stdin`,
 * <(...)), which can be opened again without losing data. */
int tf_cli_not_fifo(const char *opt, const char *path);

/* A program's exit status with its standard output checked: a report that
 * could not be written (stdout on a full disk, /dev/full) is a failure,
 * not exit 0 with the output lost. Returns rc when it is not 0; else 0, or
 * 1 after "PROG: standard output: REASON" on stderr. Call once, last. */
int tf_cli_exit_status(const char *prog, int rc);

/* The message for what getopt_long returned as ':' (missing value) or '?'
 * (unknown, ambiguous, or a value given to a flag), from the state getopt
 * left (optind, optopt). Always returns TF_ERR_ARG. */
int tf_cli_getopt_error(int c, char **argv, const struct option *longopts);

/* The most OpenMP threads a process may ask for, by --threads or by
 * OMP_NUM_THREADS. */
#define TF_CLI_MAX_THREADS 4096

/* OMP_NUM_THREADS past TF_CLI_MAX_THREADS: libgomp crashed in the first
 * parallel region asked for 100000 threads (5000 ran), so every program
 * refuses it before any. TF_OK, or TF_ERR_ARG with the message. */
int tf_cli_omp_threads(void);

#endif
