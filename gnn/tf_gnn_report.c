#include "tf_gnn_report.h"

void tf_gnn_report_epoch(const tf_gnn_epoch *e, void *arg)
{
    const tf_gnn_report *r = arg;
    if (!r->out || r->every <= 0 || (e->epoch != 1 && e->epoch % r->every != 0))
        return;
    const tf_gnn_eval *v = &e->eval;
    if (r->json)
        fprintf(r->out,
                "{\"algo\":\"%s\",\"epoch\":%lld,\"train_loss\":%.9g,\"train_acc\":%.6f,"
                "\"val_loss\":%.9g,"
                "\"val_acc\":%.6f,\"time_ms\":%.3f}\n",
                r->algo, (long long)e->epoch, e->train_loss, v->acc[TF_GNN_TRAIN],
                v->loss[TF_GNN_VAL], v->acc[TF_GNN_VAL], 1e3 * e->seconds);
    else
        fprintf(r->out,
                "%s%sepoch %4lld  train loss %.6f  val loss %.6f  val acc %6.2f %%  %8.3f ms\n",
                r->show_algo ? r->algo : "", r->show_algo ? ": " : "", (long long)e->epoch,
                e->train_loss, v->loss[TF_GNN_VAL],
                100 * v->acc[TF_GNN_VAL], 1e3 * e->seconds);
    fflush(r->out);
}

void tf_gnn_report_summary(const tf_gnn_report *r, const tf_gnn_result *res)
{
    if (!r->out)
        return;
    const tf_gnn_eval *v = &res->eval;
    double share = res->total > 0 ? res->spmm / res->total : 0;
    if (r->json)
        fprintf(r->out,
                "{\"summary\":true,\"algo\":\"%s\",\"comm\":\"%s\",\"ranks\":%d,\"epochs\":%lld,"
                "\"stopped_early\":%s,\"train_acc\":%.6f,\"val_acc\":%.6f,\"test_acc\":%.6f,"
                "\"test_loss\":%.9g,\"epoch_ms\":%.4f,\"epoch_ms_median\":%.4f,\"spmm_ms\":%.4f,\"dense_ms\":%.4f,"
                "\"allreduce_ms\":%.4f,\"spmm_share\":%.4f}\n",
                r->algo, r->comm, r->ranks, (long long)res->epochs, res->stopped ? "true" : "false",
                v->acc[TF_GNN_TRAIN], v->acc[TF_GNN_VAL], v->acc[TF_GNN_TEST],
                v->loss[TF_GNN_TEST], 1e3 * res->total, 1e3 * res->median, 1e3 * res->spmm, 1e3 * res->dense,
                1e3 * res->allreduce, share);
    else {
        fprintf(r->out, "test accuracy %.2f %% (val %.2f %%, train %.2f %%) after %lld epochs%s\n",
                100 * v->acc[TF_GNN_TEST], 100 * v->acc[TF_GNN_VAL], 100 * v->acc[TF_GNN_TRAIN],
                (long long)res->epochs, res->stopped ? " (early stop)" : "");
        fprintf(r->out,
                "time per epoch %.3f ms = spmm %.3f ms (%.1f %%) + dense %.3f ms + allreduce "
                "%.3f ms (mean over ranks), median %.3f ms  [%s, %d ranks, comm %s]\n",
                1e3 * res->total, 1e3 * res->spmm, 100 * share, 1e3 * res->dense,
                1e3 * res->allreduce, 1e3 * res->median, r->algo, r->ranks, r->comm);
    }
    fflush(r->out);
}
