/* Status codes and the per-thread error message.
 *
 * Every function that can fail returns a tf_status. On failure it also records
 * a one-line message (file, line or rank, and what was expected) in a
 * thread-local buffer, readable with tf_error_message(). Thread-local because
 * the executor runs MPI calls on several OpenMP threads at once. */
#ifndef TF_ERROR_H
#define TF_ERROR_H

#include <stdarg.h>

typedef enum {
    TF_OK = 0,
    TF_ERR_ARG,      /* bad argument or option */
    TF_ERR_IO,       /* cannot open, read or write a file */
    TF_ERR_PARSE,    /* malformed input text (Matrix Market, calibration) */
    TF_ERR_FORMAT,   /* well-formed file that is not what was expected (plan) */
    TF_ERR_NOMEM,    /* allocation failed or would exceed the memory limit */
    TF_ERR_MPI,      /* an MPI call failed, or another rank failed */
    TF_ERR_HDF5,     /* an HDF5 call failed */
    TF_ERR_RANGE,    /* a size or count does not fit */
    TF_ERR_INTERNAL  /* an invariant was broken: a bug */
} tf_status;

/* Generic text for a status code, never NULL. */
const char *tf_strerror(int status);

/* The detailed message of the last failure on this thread ("" if none). */
const char *tf_error_message(void);

/* Record a failure: formats the message and returns `status` so that callers
 * can write `return tf_fail(TF_ERR_PARSE, "%s:%ld: ...", ...)`. */
int tf_fail(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prefix the current message with more context ("while reading X: ..."). */
int tf_fail_prefix(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

void tf_error_clear(void);

#endif
