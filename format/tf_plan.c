#include "tf_plan.h"
#include "tf_error.h"

#include <stdlib.h>
#include <string.h>

void tf_rank_plan_free(tf_rank_plan *rp)
{
    if (!rp)
        return;
    free(rp->loc_ptr);
    free(rp->loc_idx);
    free(rp->loc_val);
    free(rp->recv_src);
    free(rp->recv_first);
    free(rp->recv_rows);
    free(rp->recv_off);
    free(rp->coll_ptr);
    free(rp->coll_idx);
    free(rp->coll_val);
    free(rp->send_dst);
    free(rp->send_first);
    free(rp->send_rows);
    free(rp->run_owner);
    free(rp->run_first);
    free(rp->run_count);
    free(rp->run_off);
    free(rp->fetch_rows);
    free(rp->fet_ptr);
    free(rp->fet_idx);
    free(rp->fet_val);
    memset(rp, 0, sizeof *rp);
}

void tf_plan_free(tf_plan *plan)
{
    if (!plan)
        return;
    for (int i = 0; i < plan->n_parts; i++)
        tf_rank_plan_free(&plan->parts[i]);
    free(plan->parts);
    free(plan->all_stats);
    free(plan->row_off);
    free(plan->brow_off);
    free(plan->stripes.owner);
    free(plan->stripes.first);
    free(plan->stripes.rows);
    free(plan->stripes.recipients);
    free(plan->stripes.fetchers);
    memset(plan, 0, sizeof *plan);
}

const char *tf_mode_name(int mode)
{
    switch (mode) {
    case TF_MODE_FETCH: return "fetch";
    case TF_MODE_COLLECTIVE: return "collective";
    default: return "twoface";
    }
}

const char *tf_coll_rows_name(int coll_rows)
{
    return coll_rows == TF_COLL_STRIPE ? "stripe" : "needed";
}

int tf_coll_rows_parse(const char *s, int *coll_rows)
{
    if (strcmp(s, "needed") == 0)
        *coll_rows = TF_COLL_NEEDED;
    else if (strcmp(s, "stripe") == 0)
        *coll_rows = TF_COLL_STRIPE;
    else
        return tf_fail(TF_ERR_ARG, "collective rows '%s': expected needed or stripe", s);
    return TF_OK;
}

int tf_mode_parse(const char *s, int *mode)
{
    if (strcmp(s, "twoface") == 0)
        *mode = TF_MODE_TWOFACE;
    else if (strcmp(s, "fetch") == 0)
        *mode = TF_MODE_FETCH;
    else if (strcmp(s, "collective") == 0)
        *mode = TF_MODE_COLLECTIVE;
    else
        return tf_fail(TF_ERR_ARG, "mode '%s': expected twoface, fetch or collective", s);
    return TF_OK;
}
