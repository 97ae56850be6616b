/* Reading a matrix straight into row bands: every rank of a communicator
 * ends with a band of rows, the bands in rank order, and no rank ever holds
 * more than its own share plus a few blocks of text or entries in flight.
 * The input side of the distributed planner (docs/planning.md, "Input").
 *
 *   plain .mtx        every rank parses its own byte range (cut at line
 *                     boundaries), entries then go to the ranks owning their
 *                     rows in bands balanced by entries and rows
 *                     (tf_dist_bounds.h);
 *   .mtx.gz/.mtx.zst  cannot be split: rank 0 decompresses and deals blocks
 *                     of lines out to the ranks, which parse them; the
 *                     bands are the blocks tf_dcsr_block gives;
 *   HDF5 CSR          every rank reads the slice of its own rows, a band of
 *                     equal weight found in indptr (tf_h5csr.h).
 * The kind comes from the file's first bytes. The result is bitwise the
 * serial reader's (tf_mm_read, tf_h5csr_read) restricted to the rank's rows,
 * whatever the number of ranks: duplicates are summed in double in file
 * order and rounded to float once. Failures are agreed (tf_agree_key.h):
 * every rank returns the same status and one-line message, the one a serial
 * read would give (for text, the failure with the smallest true line
 * number), so a caller prints it once. */
#ifndef TF_DIST_READ_H
#define TF_DIST_READ_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "tf_dcsr.h"

typedef struct {
    /* Bytes of text parsed (or dealt out, compressed input) at a time; 0:
     * 1 MiB. Tests make it tiny so that block boundaries fall everywhere. */
    size_t block_bytes;
    /* Entries sent to one rank per round of the exchange; 0: 2^18 / ranks
     * (at least 1024), which bounds each rank's two round buffers to 4 MiB
     * each (16 bytes an entry) up to 256 ranks. */
    int64_t round_entries;
    /* Bytes the row arrays of a rank's band may take, which follow the
     * file's declared rows rather than what it holds (tf_mm_read.h,
     * tf_h5csr.h): 0 means the node's available memory (tf_mem_available)
     * shared by the communicator's ranks on that node, -1 no bound, > 0
     * that many bytes per rank. Checked before any entry is read. */
    int64_t max_memory;
} tf_dist_read_options;

/* Collective over comm; path may differ between ranks only in spelling (a
 * rank that cannot open it fails the read on every rank). opt may be NULL.
 * On failure *out is zeroed. */
int tf_dist_read(MPI_Comm comm, const char *path, tf_dcsr *out);
int tf_dist_read_opt(MPI_Comm comm, const char *path, tf_dcsr *out,
                     const tf_dist_read_options *opt);

#endif
