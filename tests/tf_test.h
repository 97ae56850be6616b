/* Shared test helpers: Check runners for serial and MPI suites, and small
 * matrix builders. Test data is generated here or read from tests/data and
 * examples/data, never from ../shared. */
#ifndef TF_TEST_H
#define TF_TEST_H

#include <check.h>
#include <stdint.h>
#include "tf_csr.h"

/* Runs a serial suite (forking, per-test timeout from CK_DEFAULT_TIMEOUT) and
 * returns the process exit status. */
int tf_test_run_serial(Suite *s);

/* MPI: initialises MPI (THREAD_MULTIPLE), runs the suite on every rank
 * without forking, combines the results over ranks and prints one
 * Check-style summary line on rank 0 ("N%: Checks: T, Failures: F, Errors: E",
 * a test counting as failed if it failed on any rank), finalises MPI and
 * returns the exit status. */
int tf_test_run_mpi(int *argc, char ***argv, Suite *(*make_suite)(void));

/* A random sparse matrix with the given shape and about nnz entries
 * (duplicates removed), deterministic in seed; values in [-2, 2]. */
void tf_test_random_csr(tf_csr *a, int64_t m, int64_t n, int64_t nnz, uint64_t seed);

/* Writes text to a fresh temporary file and returns its path (static buffer
 * per call slot; slot in 0..7). */
const char *tf_test_tmpfile(int slot, const char *suffix, const char *text, size_t len);

/* Directory holding the repository (for tests/data, examples/data): the
 * TF_SRCDIR environment variable, else ".". */
const char *tf_test_srcdir(void);

#endif
