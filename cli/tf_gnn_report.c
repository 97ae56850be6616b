#include "tf_gnn_report.h"

#include <math.h>
#include <stdio.h>

/* An accuracy or loss of a split without nodes is NaN: shown as n/a (JSON
 * null), never as a fake 0. fmt has one double conversion. */
static const char *num(char *buf, size_t n, const char *fmt, double v, int json)
{
    if (isnan(v))
        snprintf(buf, n, "%s", json ? "null" : "n/a");
    else
        snprintf(buf, n, fmt, v);
    return buf;
}

/* ,"key":"value" with the value's quotes, backslashes and control
 * characters escaped (a path may hold any of them). */
static void print_json_string(FILE *f, const char *key, const char *v)
{
    fprintf(f, ",\"%s\":\"", key);
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

void tf_gnn_report_epoch(const tf_gnn_epoch *e, void *arg)
{
    const tf_gnn_report *r = arg;
    if (!r->out || r->every <= 0 || (e->epoch != 1 && e->epoch % r->every != 0))
        return;
    const tf_gnn_eval *v = &e->eval;
    char vl[32], va[32], ta[32];
    int j = r->json;
    if (j)
        fprintf(r->out,
                "{\"algo\":\"%s\",\"epoch\":%lld,\"train_loss\":%.9g,\"train_acc\":%s,"
                "\"val_loss\":%s,"
                "\"val_acc\":%s,\"time_ms\":%.3f}\n",
                r->algo, (long long)e->epoch, e->train_loss,
                num(ta, sizeof ta, "%.6f", v->acc[TF_GNN_TRAIN], j),
                num(vl, sizeof vl, "%.9g", v->loss[TF_GNN_VAL], j),
                num(va, sizeof va, "%.6f", v->acc[TF_GNN_VAL], j), 1e3 * e->seconds);
    else
        fprintf(r->out,
                "%s%sepoch %4lld  train loss %.6f  val loss %s  val acc %s  %8.3f ms\n",
                r->show_algo ? r->algo : "", r->show_algo ? ": " : "", (long long)e->epoch,
                e->train_loss, num(vl, sizeof vl, "%.6f", v->loss[TF_GNN_VAL], j),
                num(va, sizeof va, "%6.2f %%", 100 * v->acc[TF_GNN_VAL], j), 1e3 * e->seconds);
    fflush(r->out);
}

void tf_gnn_report_summary(const tf_gnn_report *r, const tf_gnn_result *res)
{
    if (!r->out)
        return;
    const tf_gnn_eval *v = &res->eval;
    double share = res->total > 0 ? res->spmm / res->total : 0;
    char a[3][32], tl[32];
    int j = r->json;
    for (int sp = 0; sp < 3; sp++) {
        static const int which[3] = {TF_GNN_TRAIN, TF_GNN_VAL, TF_GNN_TEST};
        num(a[sp], sizeof a[sp], j ? "%.6f" : "%.2f %%", (j ? 1 : 100) * v->acc[which[sp]], j);
    }
    if (j)
        fprintf(r->out,
                "{\"summary\":true,\"algo\":\"%s\",\"comm\":\"%s\",\"ranks\":%d,\"epochs\":%lld,"
                "\"stopped_early\":%s,\"train_acc\":%s,\"val_acc\":%s,\"test_acc\":%s,"
                "\"test_loss\":%s,\"epoch_ms\":%.4f,\"epoch_ms_median\":%.4f,\"spmm_ms\":%.4f,\"dense_ms\":%.4f,"
                "\"allreduce_ms\":%.4f,\"spmm_share\":%.4f",
                r->algo, r->comm, r->ranks, (long long)res->epochs, res->stopped ? "true" : "false",
                a[0], a[1], a[2], num(tl, sizeof tl, "%.9g", v->loss[TF_GNN_TEST], j),
                1e3 * res->total, 1e3 * res->median, 1e3 * res->spmm, 1e3 * res->dense,
                1e3 * res->allreduce, share);
    if (r->json) {
        const char *key[3] = {"checkpoint", "model", "predictions"};
        const char *val[3] = {r->checkpoint, r->model, r->predictions};
        for (int i = 0; i < 3; i++)
            if (val[i])
                print_json_string(r->out, key[i], val[i]);
        fprintf(r->out, "}\n");
    } else {
        fprintf(r->out, "test accuracy %s (val %s, train %s) after %lld epochs%s\n",
                a[2], a[1], a[0], (long long)res->epochs, res->stopped ? " (early stop)" : "");
        fprintf(r->out,
                "time per epoch %.3f ms = spmm %.3f ms (%.1f %%) + dense %.3f ms + allreduce "
                "%.3f ms (mean over ranks), median %.3f ms  [%s, %d ranks, comm %s]\n",
                1e3 * res->total, 1e3 * res->spmm, 100 * share, 1e3 * res->dense,
                1e3 * res->allreduce, 1e3 * res->median, r->algo, r->ranks, r->comm);
        if (r->checkpoint)
            fprintf(r->out, "checkpoint %s (after epoch %lld)\n", r->checkpoint,
                    (long long)res->epochs);
        if (r->model)
            fprintf(r->out, "model %s\n", r->model);
        if (r->predictions)
            fprintf(r->out, "predictions %s\n", r->predictions);
    }
    fflush(r->out);
}
