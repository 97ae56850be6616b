#include "tf_plan.h"
#include "tf_error.h"

#include <stdlib.h>
#include <string.h>

void tf_rank_plan_drop(tf_rank_plan *rp)
{
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
    rp->loc_ptr = rp->coll_ptr = rp->fet_ptr = NULL;
    rp->loc_idx = rp->coll_idx = rp->fet_idx = rp->fetch_rows = NULL;
    rp->loc_val = rp->coll_val = rp->fet_val = NULL;
    rp->recv_src = rp->recv_first = rp->recv_rows = rp->send_dst = rp->send_first = NULL;
    rp->send_rows = rp->run_owner = rp->run_first = rp->run_count = NULL;
    rp->recv_off = rp->run_off = NULL;
}

void tf_rank_plan_free(tf_rank_plan *rp)
{
    if (!rp)
        return;
    tf_rank_plan_drop(rp);
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
    free(plan->perm);
    free(plan->iperm);
    free(plan->stripes.owner);
    free(plan->stripes.first);
    free(plan->stripes.rows);
    free(plan->stripes.recipients);
    free(plan->stripes.fetchers);
    if (plan->alt) {
        tf_plan_free(plan->alt);
        free(plan->alt);
    }
    memset(plan, 0, sizeof *plan);
}

int tf_plan_check_alt(const tf_plan *p, const tf_plan *a)
{
#define DIFF(what) return tf_fail(TF_ERR_FORMAT, "alternative plan: %s differs from the plan's", what)
    if (a->alt)
        return tf_fail(TF_ERR_FORMAT, "alternative plan has an alternative of its own");
    if (a->m != p->m || a->n != p->n || a->nnz != p->nnz || a->checksum != p->checksum)
        DIFF("matrix (size, nonzeros or fingerprint)");
    if (a->nranks != p->nranks)
        DIFF("number of ranks");
    if (a->partition != p->partition)
        DIFF("partition");
    if (a->k_planned != p->k_planned)
        DIFF("planned K");
    if (a->normalization != p->normalization || a->symmetric != p->symmetric ||
        a->transposed != p->transposed || a->transpose_of != p->transpose_of)
        DIFF("normalisation, symmetry or transposition");
    if (a->comm != p->comm)
        DIFF("precision of what travels (comm)");
    if (!a->row_off || !a->brow_off || !p->row_off || !p->brow_off ||
        memcmp(a->row_off, p->row_off, ((size_t)p->nranks + 1) * sizeof *p->row_off) != 0 ||
        memcmp(a->brow_off, p->brow_off, ((size_t)p->nranks + 1) * sizeof *p->brow_off) != 0)
        DIFF("row or B-row bands");
    if (a->first_rank != p->first_rank || a->n_parts != p->n_parts)
        DIFF("set of rank parts held");
    if (a->perm || a->iperm)
        return tf_fail(TF_ERR_FORMAT, "alternative plan has a permutation of its own");
#undef DIFF
    return TF_OK;
}

const char *tf_plan_classes(const tf_plan *p)
{
    int coll = 0, fetch = 0;
    if (p->all_stats) {
        for (int r = 0; r < p->nranks; r++) {
            coll |= p->all_stats[r].coll_rows_recv > 0;
            fetch |= p->all_stats[r].fetch_requests > 0;
        }
    } else {
        for (int i = 0; i < p->n_parts; i++) {
            coll |= p->parts[i].n_recv > 0;
            fetch |= p->parts[i].n_runs > 0;
        }
    }
    return coll && fetch ? "hybrid" : coll ? "collective" : fetch ? "fetch" : "local";
}

double tf_plan_predicted_time(const tf_plan *p)
{
    double worst = 0;
    for (int r = 0; r < p->nranks; r++)
        if (p->all_stats[r].t_total > worst)
            worst = p->all_stats[r].t_total;
    return worst;
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

double tf_stats_fused_local_share(const tf_rank_stats *s, double nl, double n2)
{
    /* By nonzeros alone, a pass whose local nonzeros find their B rows in
     * cache and whose collective ones load them from memory charges the
     * local bucket for the collective's loads: the in-situ calibration then
     * scaled the local kernel by 1.25-2.02 on 4 simulated ranks, against
     * 1.34-1.36 with the two parts in separate passes (docs/cost-model.md,
     * "The fused pass in the in-situ run"). */
    double wl = nl, w2 = n2;
    if (s && s->nnz_local > 0 && s->nnz_coll > 0 && s->t_local > 0 && s->t_coll_comp > 0) {
        wl = nl * (s->t_local / (double)s->nnz_local);
        w2 = n2 * (s->t_coll_comp / (double)s->nnz_coll);
    }
    return wl + w2 > 0 ? wl / (wl + w2) : 1.0;
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

const char *tf_norm_name(int normalization)
{
    switch (normalization) {
    case TF_NORM_GCN: return "gcn";
    case TF_NORM_MEAN: return "mean";
    default: return "none";
    }
}

int tf_norm_parse(const char *s, int *normalization)
{
    if (strcmp(s, "none") == 0)
        *normalization = TF_NORM_NONE;
    else if (strcmp(s, "gcn") == 0)
        *normalization = TF_NORM_GCN;
    else if (strcmp(s, "mean") == 0)
        *normalization = TF_NORM_MEAN;
    else
        return tf_fail(TF_ERR_ARG, "normalisation '%s': expected gcn, mean or none", s);
    return TF_OK;
}

const char *tf_prec_name(int prec) { return prec == TF_PREC_BF16 ? "bf16" : "f32"; }

int tf_prec_parse(const char *s, int *prec)
{
    if (strcmp(s, "f32") == 0)
        *prec = TF_PREC_F32;
    else if (strcmp(s, "bf16") == 0)
        *prec = TF_PREC_BF16;
    else
        return tf_fail(TF_ERR_ARG, "precision '%s': expected f32 or bf16", s);
    return TF_OK;
}

int tf_prec_bytes(int prec) { return prec == TF_PREC_BF16 ? 2 : 4; }
