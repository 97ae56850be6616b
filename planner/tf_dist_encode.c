#include "tf_dist_encode.h"
#include "tf_agree.h"
#include "tf_agree_carry.h"
#include "tf_build.h"
#include "tf_error.h"
#include "tf_idle.h"

#include <stdlib.h>
#include <string.h>

/* Every rank must cut an array kind into chunks of the same length, the
 * dataset's: from the longest slice of that kind over all ranks. status:
 * the caller's step before, carried by the maximum (pl is not read on a
 * rank that failed). */
static int agree_chunks(MPI_Comm comm, int status, const tf_plan *pl, int64_t chunk[N_COUNTS])
{
    int64_t most[N_COUNTS] = {0};
    for (int i = 0; status == TF_OK && i < pl->n_parts; i++)
        for (int c = 0; c < N_COUNTS; c++) {
            int64_t n = tf_pl_count_get(&pl->parts[i], c);
            if (n > most[c])
                most[c] = n;
        }
    int st = tf_agree_allreduce(comm, status, most, N_COUNTS, MPI_INT64_T, MPI_MAX);
    if (st == TF_OK)
        tf_pl_chunks_of(most, chunk);
    return st;
}

/* drop: pl's parts, to be emptied as they are encoded; NULL keeps them.
 * status: as tf_dist_encode_drop's. */
static int encode(MPI_Comm comm, int status, const tf_plan *pl, int level, tf_rank_plan *drop,
                  tf_dist_enc *out)
{
    memset(out, 0, sizeof *out);
    int st = agree_chunks(comm, status, pl, out->chunk);
    /* A rank whose step before failed takes part in the agreement only:
     * its plan is not for reading. */
    if (status != TF_OK)
        return st;
    if (st == TF_OK && pl->n_parts > 0) {
        out->parts = calloc((size_t)pl->n_parts, sizeof *out->parts);
        if (!out->parts)
            st = tf_fail(TF_ERR_NOMEM, "out of memory for %d plan parts", pl->n_parts);
        else
            out->n_parts = pl->n_parts;
    }
    /* A part's arrays go as soon as its chunks are made: never a whole
     * plan's arrays and its chunks at once. */
    for (int i = 0; st == TF_OK && i < out->n_parts; i++) {
        st = tf_pl_encode_part(pl, &pl->parts[i], level, out->chunk, &out->parts[i]);
        if (drop)
            tf_rank_plan_drop(&drop[i]);
    }
    for (int i = 0; drop && i < pl->n_parts; i++)
        tf_rank_plan_drop(&drop[i]);
    return tf_agree(comm, st);
}

int tf_dist_encode(MPI_Comm comm, const tf_plan *pl, int level, tf_dist_enc *out)
{
    return encode(comm, TF_OK, pl, level, NULL, out);
}

int tf_dist_encode_drop(MPI_Comm comm, int status, tf_plan *pl, int level, tf_dist_enc *out)
{
    return encode(comm, status, pl, level, status == TF_OK ? pl->parts : NULL, out);
}

void tf_dist_enc_free(tf_dist_enc *e)
{
    for (int i = 0; i < e->n_parts; i++)
        tf_pl_enc_part_free(&e->parts[i]);
    free(e->parts);
    memset(e, 0, sizeof *e);
}

int64_t tf_dist_enc_bytes(const tf_dist_enc *e)
{
    int64_t b = 0;
    for (int i = 0; i < e->n_parts; i++)
        b += e->parts[i].h.n_bytes + e->parts[i].h.n_sizes * (int64_t)sizeof(uint32_t);
    return b;
}
