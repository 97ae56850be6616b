#include "tf_dist_encode.h"
#include "tf_agree.h"
#include "tf_build.h"
#include "tf_error.h"
#include "tf_idle.h"

#include <stdlib.h>
#include <string.h>

/* Every rank must cut an array kind into chunks of the same length, the
 * dataset's: from the longest slice of that kind over all ranks. */
static int agree_chunks(MPI_Comm comm, const tf_plan *pl, int64_t chunk[N_COUNTS])
{
    int64_t mine[N_COUNTS] = {0}, all[N_COUNTS];
    for (int i = 0; i < pl->n_parts; i++)
        for (int c = 0; c < N_COUNTS; c++) {
            int64_t n = tf_pl_count_get(&pl->parts[i], c);
            if (n > mine[c])
                mine[c] = n;
        }
    if (tf_mpi_allreduce_idle(mine, all, N_COUNTS, MPI_INT64_T, MPI_MAX, comm) != MPI_SUCCESS)
        return tf_fail(TF_ERR_MPI, "agreeing on the plan's chunk lengths failed");
    tf_pl_chunks_of(all, chunk);
    return TF_OK;
}

/* drop: pl's parts, to be emptied as they are encoded; NULL keeps them. */
static int encode(MPI_Comm comm, const tf_plan *pl, int level, tf_rank_plan *drop,
                  tf_dist_enc *out)
{
    memset(out, 0, sizeof *out);
    int st = agree_chunks(comm, pl, out->chunk);
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
    return encode(comm, pl, level, NULL, out);
}

int tf_dist_encode_drop(MPI_Comm comm, tf_plan *pl, int level, tf_dist_enc *out)
{
    return encode(comm, pl, level, pl->parts, out);
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
