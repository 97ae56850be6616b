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

/* An n-row CSR whose row i holds len[i] nonzeros of value 1 in columns 0,
 * 1, ... (as many columns as the longest row, at least 1). */
void tf_test_csr_of_lengths(tf_csr *a, int64_t n, const int64_t *len);

/* Writes text to a fresh temporary file and returns its path (static buffer
 * per call slot; slot in 0..7). */
const char *tf_test_tmpfile(int slot, const char *suffix, const char *text, size_t len);

/* Directory holding the repository (for tests/data, examples/data): the
 * TF_SRCDIR environment variable, else ".". */
const char *tf_test_srcdir(void);

/* Call first in main of a test that threads: runs the test again with a
 * better environment, before MPI_Init (mpirun's environment is kept), once:
 *  - OMP_WAIT_POLICY=passive unless set: the threaded set-ups run 2 threads
 *    per rank at up to 4 ranks on a 2-core machine, and libgomp's idle
 *    threads spin by default (~60 ms of scheduling per SpMM instead of
 *    ~2 ms). libgomp reads the variable in a constructor, before main.
 *  - LSAN_OPTIONS gets fast_unwind_on_malloc=0: Open MPI's own start-up
 *    leaks are allocated in libraries without frame pointers, so the fast
 *    unwinder stops at "<unknown module>" and tests/lsan.supp cannot match
 *    them; the slow unwinder names the library. */
void tf_test_reexec(char **argv);

#endif
