/* The three algorithms behind tf_baseline.c's dispatch. create agrees on
 * its outcome over b->comm; run allocates nothing; free releases the
 * algorithm's state only (the dispatcher frees the rest). */
#ifndef TF_BL_VARIANTS_H
#define TF_BL_VARIANTS_H

#include "tf_bl_common.h"

int tf_bl_allgather_create(tf_baseline *b, const tf_baseline_input *in);
int tf_bl_allgather_run(tf_baseline *b, const float *b_rows, float *c);
void tf_bl_allgather_free(tf_baseline *b);

int tf_bl_shift_create(tf_baseline *b, const tf_baseline_input *in);
int tf_bl_shift_run(tf_baseline *b, const float *b_rows, float *c);
void tf_bl_shift_free(tf_baseline *b);

int tf_bl_p2p_create(tf_baseline *b, const tf_baseline_input *in);
int tf_bl_p2p_run(tf_baseline *b, const float *b_rows, float *c);
void tf_bl_p2p_free(tf_baseline *b);

#endif
