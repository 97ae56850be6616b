#include "tf_gnn_cli.h"
#include "tf_cli.h"
#include "tf_error.h"
#include "tf_gnn_data.h"
#include "tf_gnn_dense.h"
#include "tf_gnn_features.h"
#include "tf_gnn_model.h"
#include "tf_gnn_outfile.h"
#include "tf_outpath.h"
#include "twoface.h"

#include <getopt.h>
#include <limits.h>
#include <string.h>

void tf_gnn_cli_usage(FILE *f)
{
    fprintf(f,
            "usage: mpirun -n P twoface-gcn PLAN --features F --labels L --split S [options]\n"
            "Trains a GCN (Kipf & Welling 2017; two layers by default) on the graph of PLAN (a plan of the\n"
            "normalised adjacency: twoface-plan --normalize gcn). docs/gnn.md has the details.\n"
            "  --features F          node features: Matrix Market (.mtx, .zst, .gz), row = node,\n"
            "                        or a dense float32 HDF5 dataset FILE.h5:/path\n"
            "  --labels L            text, line i = class (0..C-1) of node i\n"
            "  --split S             text, line i = train, val, test or none\n"
            "  --random-features F   F random features per node instead of --features\n"
            "  --random-classes C    random labels in 0..C-1 instead of --labels\n"
            "  --random-split        random split (10 %% train, 10 %% val, 20 %% test)\n"
            "  --layers L            graph convolutions, L >= 2 (default 2)\n"
            "  --hidden H            width of every hidden layer (default 16)\n"
            "  --epochs E            at most E epochs (default 200)\n"
            "  --lr X                Adam learning rate (default 0.01)\n"
            "  --weight-decay X      L2 on the first layer (default 5e-4)\n"
            "  --dropout X           dropout on the input and every hidden layer (default 0.5)\n"
            "  --patience N          early stopping window (default 10; 0 = never stop early)\n"
            "  --seed N              seed of init, dropout and random inputs (default 0)\n"
            "  --algo A              SpMM: twoface (the plan), allgather, shift, p2p\n"
            "  --replication c       shift only: replication factor (default 1)\n"
            "  --backward-plan PLAN  plan of A^T (twoface-plan --transpose --bands-from PLAN),\n"
            "                        needed when PLAN's matrix is not symmetric\n"
            "  --every N             print every N epochs (default 1; 0 = summary only)\n"
            "  --threads T           OpenMP threads per rank for an SpMM (default: executor's)\n"
            "  --checkpoint FILE     write the training state to FILE.h5 (atomically) every\n"
            "                        --checkpoint-every N epochs (default 10) and at the end\n"
            "  --resume FILE         continue the run whose checkpoint is FILE (same options)\n"
            "  --save-model FILE     the trained weights and hyper-parameters, HDF5\n"
            "  --predictions FILE    text, line i = node i's predicted class and split\n"
            "  --comm f32|bf16|plan  what the SpMMs' B rows (activations forward, gradients\n"
            "                        backward) travel as; default plan: the plans' choice\n"
            "  --json                one JSON object per line instead of text\n"
            "  -h, --help            this text\n");
}

enum {
    O_FEATURES = 256, O_LABELS, O_SPLIT, O_RFEAT, O_RCLASS, O_RSPLIT, O_HIDDEN, O_EPOCHS, O_LR,
    O_WD, O_DROPOUT, O_PATIENCE, O_SEED, O_ALGO, O_REPL, O_BWD, O_EVERY, O_THREADS, O_JSON, O_LAYERS,
    O_CKPT, O_CKPT_EVERY, O_RESUME, O_SAVE_MODEL, O_PREDICTIONS, O_COMM
};

static int one_option(int c, const char *arg, tf_gnn_cli *o)
{
    int64_t v = 0;
    int st = TF_OK;
    switch (c) {
    case O_FEATURES: o->features = arg; break;
    case O_LABELS: o->labels = arg; break;
    case O_SPLIT: o->split = arg; break;
    case O_RFEAT: st = tf_cli_i64("--random-features", arg, 1, 1 << 20, &o->random_features); break;
    case O_RCLASS:
        st = tf_cli_int("--random-classes", arg, 2, TF_GNN_MAX_CLASSES, &o->random_classes);
        break;
    case O_RSPLIT: o->random_split = 1; break;
    case O_LAYERS: st = tf_cli_int("--layers", arg, 2, TF_GNN_MAX_LAYERS, &o->layers); break;
    case O_HIDDEN: st = tf_cli_int("--hidden", arg, 1, TF_GNN_MAX_WIDTH, &o->hidden); break;
    case O_EPOCHS: st = tf_cli_i64("--epochs", arg, 1, 1000000000, &o->epochs); break;
    case O_LR: st = tf_cli_double("--lr", arg, 0, 1e6, "a number", &o->lr); break;
    case O_WD: st = tf_cli_double("--weight-decay", arg, 0, 1e6, "a number", &o->weight_decay); break;
    case O_DROPOUT:
        /* A keep probability of 0 would divide by zero: 1 itself is out. */
        st = tf_cli_double("--dropout", arg, 0, 1, "a number", &o->dropout);
        if (st == TF_OK && o->dropout >= 1)
            st = tf_fail(TF_ERR_ARG, "--dropout '%s': expected a number in 0..1, below 1", arg);
        break;
    case O_PATIENCE: st = tf_cli_int("--patience", arg, 0, 1000000, &o->patience); break;
    case O_SEED:
        st = tf_cli_i64("--seed", arg, 0, INT64_MAX, &v);
        o->seed = (uint64_t)v;
        break;
    case O_ALGO: o->algo = arg; break;
    case O_REPL: o->replication = arg; break;
    case O_BWD: o->backward_plan = arg; break;
    case O_EVERY: st = tf_cli_i64("--every", arg, 0, INT64_MAX, &o->every); break;
    case O_THREADS: st = tf_cli_int("--threads", arg, 0, 1024, &o->threads); break;
    case O_JSON: o->json = 1; break;
    case O_CKPT: o->checkpoint = arg; break;
    case O_CKPT_EVERY:
        st = tf_cli_i64("--checkpoint-every", arg, 1, INT64_MAX, &o->checkpoint_every);
        break;
    case O_RESUME: o->resume = arg; break;
    case O_SAVE_MODEL: o->save_model = arg; break;
    case O_PREDICTIONS: o->predictions = arg; break;
    case O_COMM:
        if (strcmp(arg, "plan") == 0)
            o->comm = TF_COMM_PLAN;
        else if (strcmp(arg, "f32") == 0)
            o->comm = TF_COMM_F32;
        else if (strcmp(arg, "bf16") == 0)
            o->comm = TF_COMM_BF16;
        else
            st = tf_fail(TF_ERR_ARG, "--comm '%s': expected f32, bf16 or plan", arg);
        break;
    default: st = tf_fail(TF_ERR_ARG, "unknown option (see --help)");
    }
    return st;
}

static int check_inputs(tf_gnn_cli *o)
{
    if (!o->plan)
        return tf_fail(TF_ERR_ARG, "no plan given (usage: twoface-gcn PLAN --features F "
                                   "--labels L --split S)");
    const char *names[6] = {"PLAN", "--backward-plan", "--features", "--labels", "--split",
                            "--resume"};
    const char *paths[6] = {o->plan, o->backward_plan, o->features, o->labels, o->split,
                            o->resume};
    for (int i = 0; i < 6; i++)
        if (tf_cli_path(names[i], paths[i]) || (i >= 2 && i <= 4 && tf_cli_not_fifo(names[i],
                                                                              paths[i])))
            return TF_ERR_ARG;
    if (!o->features == !o->random_features)
        return tf_fail(TF_ERR_ARG, "give exactly one of --features and --random-features");
    if (!o->labels == !o->random_classes)
        return tf_fail(TF_ERR_ARG, "give exactly one of --labels and --random-classes");
    if (!o->split == !o->random_split)
        return tf_fail(TF_ERR_ARG, "give exactly one of --split and --random-split");
    if (o->checkpoint_every && !o->checkpoint)
        return tf_fail(TF_ERR_ARG, "--checkpoint-every needs --checkpoint FILE");
    if (!o->checkpoint_every)
        o->checkpoint_every = 10;
    /* A bad output path is reported now, not after the training. */
    const char *outs[][2] = {{"--checkpoint", o->checkpoint}, {"--save-model", o->save_model},
                             {"--predictions", o->predictions}};
    for (int i = 0; i < 3; i++) {
        int st = outs[i][1] ? tf_gnn_outfile_check(outs[i][1]) : TF_OK;
        if (st)
            return tf_fail_prefix(st, "%s", outs[i][0]);
    }
    /* No output on an input or on another output. The checkpoint may be
     * the file the run resumes from: it is read before it is rewritten. */
    /* "FILE.h5:/dataset" reads FILE.h5. */
    char feat[PATH_MAX];
    const char *dset = NULL, *features = o->features;
    if (features && tf_gnn_features_split(features, feat, sizeof feat, &dset))
        features = feat;
    const char *ins[][2] = {{"PLAN", o->plan},       {"--backward-plan", o->backward_plan},
                            {"--features", features},
                            {"--labels", o->labels}, {"--split", o->split},
                            {"--resume", o->resume}};
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 6; j++) {
            if (i == 0 && j == 5)
                continue;
            int st = tf_outpath_distinct(outs[i][0], outs[i][1], ins[j][0], ins[j][1]);
            if (st)
                return st;
        }
        for (int j = 0; j < i; j++) {
            int st = tf_outpath_distinct(outs[i][0], outs[i][1], outs[j][0], outs[j][1]);
            if (st)
                return st;
        }
    }
    return TF_OK;
}

int tf_gnn_cli_parse(int argc, char **argv, tf_gnn_cli *o)
{
    static const struct option longopts[] = {
        {"features", required_argument, 0, O_FEATURES},
        {"labels", required_argument, 0, O_LABELS},
        {"split", required_argument, 0, O_SPLIT},
        {"random-features", required_argument, 0, O_RFEAT},
        {"random-classes", required_argument, 0, O_RCLASS},
        {"random-split", no_argument, 0, O_RSPLIT},
        {"hidden", required_argument, 0, O_HIDDEN},
        {"layers", required_argument, 0, O_LAYERS},
        {"epochs", required_argument, 0, O_EPOCHS},
        {"lr", required_argument, 0, O_LR},
        {"weight-decay", required_argument, 0, O_WD},
        {"dropout", required_argument, 0, O_DROPOUT},
        {"patience", required_argument, 0, O_PATIENCE},
        {"seed", required_argument, 0, O_SEED},
        {"algo", required_argument, 0, O_ALGO},
        {"replication", required_argument, 0, O_REPL},
        {"backward-plan", required_argument, 0, O_BWD},
        {"every", required_argument, 0, O_EVERY},
        {"threads", required_argument, 0, O_THREADS},
        {"json", no_argument, 0, O_JSON},
        {"checkpoint", required_argument, 0, O_CKPT},
        {"checkpoint-every", required_argument, 0, O_CKPT_EVERY},
        {"resume", required_argument, 0, O_RESUME},
        {"save-model", required_argument, 0, O_SAVE_MODEL},
        {"predictions", required_argument, 0, O_PREDICTIONS},
        {"comm", required_argument, 0, O_COMM},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    o->hidden = 16;
    o->layers = 2;
    o->epochs = 200;
    o->lr = 0.01;
    o->weight_decay = 5e-4;
    o->dropout = 0.5;
    o->patience = 10;
    o->algo = "twoface";
    o->every = 1;
    opterr = 0; /* messages come from tf_fail, printed once by rank 0 */
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        if (c == 'h')
            return -1;
        if (c == ':' || c == '?')
            return tf_cli_getopt_error(c, argv, longopts);
        int st = one_option(c, optarg, o);
        if (st)
            return st;
    }
    if (optind < argc)
        o->plan = argv[optind++];
    if (optind < argc)
        return tf_fail(TF_ERR_ARG, "unexpected argument '%s' (one plan only)", argv[optind]);
    int st = check_inputs(o);
    return st ? st : tf_cli_omp_threads();
}
