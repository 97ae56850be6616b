/* twoface-gcn's files, serially: the checkpoint file round trip and its
 * refusals (format, sizes, another graph / shape / feature width / rule,
 * non-finite or negative stored values);
 * the atomic writer (links followed, non-regular targets refused, no
 * temporary file left after a failed write); and a writer killed with
 * SIGKILL at many moments while rewriting a checkpoint, after which the
 * file still reads back whole, as one of the versions written. */
#include "tf_test.h"

#include "tf_error.h"
#include "tf_gnn_ckpt_file.h"
#include "tf_gnn_outfile.h"

#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char g_dir[512];

static void make_dir(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/gnn_ckpt.XXXXXX", t && *t ? t : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(g_dir));
}

static void remove_dir(void)
{
    DIR *d = opendir(g_dir);
    if (!d)
        return;
    struct dirent *e;
    char p[1024];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", g_dir, e->d_name);
            unlink(p);
        }
    closedir(d);
    rmdir(g_dir);
}

static int count_entries(void)
{
    DIR *d = opendir(g_dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

static const char *path_in(int slot, const char *name)
{
    static char buf[4][1024];
    snprintf(buf[slot], sizeof buf[slot], "%s/%s", g_dir, name);
    return buf[slot];
}

/* A checkpoint of a 3-layer model whose every number is derived from v. */
static void make_ckpt(tf_gnn_ckpt *c, double v)
{
    memset(c, 0, sizeof *c);
    c->id = (tf_gnn_ckpt_id){0x1234abcdULL, 50, 40, 3, 16, 5, 7, 0.5, 0.01, 5e-4, 4};
    c->nw = tf_gnn_ckpt_nweights(&c->id);
    ck_assert_uint_eq(c->nw, 40 * 16 + 16 * 16 + 16 * 5);
    c->w = malloc(c->nw * sizeof *c->w);
    c->adam_m = malloc(c->nw * sizeof *c->adam_m);
    c->adam_v = malloc(c->nw * sizeof *c->adam_v);
    c->stop_hist = malloc(4 * sizeof *c->stop_hist);
    for (size_t i = 0; i < c->nw; i++) {
        c->w[i] = v + (double)i * 1e-3;
        c->adam_m[i] = -v;
        c->adam_v[i] = 2 * v;
    }
    for (int i = 0; i < 4; i++)
        c->stop_hist[i] = v + i;
    c->epoch = c->adam_step = 12;
    c->stop_seen = 12;
}

static void check_version(const tf_gnn_ckpt *c, double v)
{
    ck_assert_int_eq(c->epoch, 12);
    ck_assert_int_eq(c->adam_step, 12);
    ck_assert_int_eq(c->stop_seen, 12);
    for (size_t i = 0; i < c->nw; i++) {
        ck_assert(c->w[i] == v + (double)i * 1e-3);
        ck_assert(c->adam_m[i] == -v && c->adam_v[i] == 2 * v);
    }
    for (int i = 0; i < 4; i++)
        ck_assert(c->stop_hist[i] == v + i);
}

START_TEST(checkpoint_round_trip)
{
    make_dir();
    tf_gnn_ckpt c, r;
    make_ckpt(&c, 0.25);
    const char *p = path_in(0, "ck.h5");
    ck_assert_int_eq(tf_gnn_ckpt_write(p, &c), TF_OK);
    ck_assert_int_eq(tf_gnn_ckpt_read(p, &r), TF_OK);
    ck_assert(memcmp(&r.id, &c.id, sizeof c.id) == 0);
    check_version(&r, 0.25);
    ck_assert_int_eq(tf_gnn_ckpt_match(p, &r.id, &c.id), TF_OK);
    ck_assert_int_eq(count_entries(), 1); /* no temporary file left */
    tf_gnn_ckpt_free(&r);
    tf_gnn_ckpt_free(&c);
    remove_dir();
}
END_TEST

START_TEST(checkpoint_refusals)
{
    make_dir();
    tf_gnn_ckpt c;
    make_ckpt(&c, 1);
    const tf_gnn_ckpt_id s = c.id;
    struct {
        const char *what;
        tf_gnn_ckpt_id now;
    } cases[7];
    for (int i = 0; i < 7; i++)
        cases[i].now = s;
    cases[0].what = "another graph";
    cases[0].now.fingerprint ^= 1;
    cases[1].what = "input features";
    cases[1].now.features = 41;
    cases[2].what = "--layers 3 --hidden 16";
    cases[2].now.layers = 2;
    cases[3].what = "--layers 3 --hidden 16";
    cases[3].now.hidden = 32;
    cases[4].what = "with 5 classes";
    cases[4].now.classes = 6;
    cases[5].what = "--seed 7";
    cases[5].now.seed = 8;
    cases[6].what = "another graph";
    cases[6].now.nodes = 51;
    for (int i = 0; i < 7; i++) {
        ck_assert_int_eq(tf_gnn_ckpt_match("ck.h5", &s, &cases[i].now), TF_ERR_ARG);
        ck_assert_msg(strstr(tf_error_message(), cases[i].what) &&
                          !strchr(tf_error_message(), '\n'),
                      "case %d: '%s'", i, tf_error_message());
    }
    /* Not a checkpoint: a text file, and an HDF5 file of another kind. */
    tf_gnn_ckpt r;
    const char *txt = path_in(0, "text.h5");
    FILE *f = fopen(txt, "w");
    fputs("hello\n", f);
    fclose(f);
    ck_assert_int_ne(tf_gnn_ckpt_read(txt, &r), TF_OK);
    ck_assert_msg(strstr(tf_error_message(), "text.h5"), "%s", tf_error_message());
    ck_assert_int_ne(tf_gnn_ckpt_read(path_in(1, "absent.h5"), &r), TF_OK);
    ck_assert_msg(strstr(tf_error_message(), "absent.h5"), "%s", tf_error_message());
    /* Inconsistent state: more Adam steps than epochs. */
    c.adam_step = 13;
    ck_assert_int_eq(tf_gnn_ckpt_write(path_in(2, "bad.h5"), &c), TF_OK);
    ck_assert_int_eq(tf_gnn_ckpt_read(path_in(2, "bad.h5"), &r), TF_ERR_FORMAT);
    ck_assert_msg(strstr(tf_error_message(), "adam_step"), "%s", tf_error_message());
    /* A shape that does not match the stored weights (a damaged file). */
    c.adam_step = 12;
    c.id.features = 4000000;
    ck_assert_int_eq(tf_gnn_ckpt_write(path_in(2, "bad.h5"), &c), TF_OK);
    ck_assert_int_eq(tf_gnn_ckpt_read(path_in(2, "bad.h5"), &r), TF_ERR_FORMAT);
    ck_assert_msg(strstr(tf_error_message(), "weights, but the model's shape has"), "%s",
                  tf_error_message());
    /* Damaged values: a NaN weight, an infinite Adam moment, a negative
     * second moment, each refused by name instead of resuming. */
    c.id.features = 40;
    struct {
        double *at;
        double v;
        const char *what;
    } vals[] = {{&c.w[3], NAN, "dataset /weights, element 3: nan"},
                {&c.adam_m[0], INFINITY, "dataset /adam_m, element 0: inf"},
                {&c.adam_v[7], -1.0, "dataset /adam_v, element 7: -1 is not a finite number >= 0"},
                {&c.stop_hist[1], NAN, "dataset /stop_history, element 1: nan"}};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        double keep = *vals[i].at;
        *vals[i].at = vals[i].v;
        ck_assert_int_eq(tf_gnn_ckpt_write(path_in(2, "bad.h5"), &c), TF_OK);
        ck_assert_int_eq(tf_gnn_ckpt_read(path_in(2, "bad.h5"), &r), TF_ERR_FORMAT);
        ck_assert_msg(strstr(tf_error_message(), vals[i].what) &&
                          strstr(tf_error_message(), "bad.h5") &&
                          !strchr(tf_error_message(), '\n'),
                      "case %zu: '%s'", i, tf_error_message());
        *vals[i].at = keep;
    }
    ck_assert_int_eq(tf_gnn_ckpt_write(path_in(2, "bad.h5"), &c), TF_OK);
    ck_assert_int_eq(tf_gnn_ckpt_read(path_in(2, "bad.h5"), &r), TF_OK);
    tf_gnn_ckpt_free(&r);
    tf_gnn_ckpt_free(&c);
    remove_dir();
}
END_TEST

static int write_hello(const char *tmp, void *arg)
{
    FILE *f = fopen(tmp, "w");
    if (!f)
        return tf_fail(TF_ERR_IO, "%s", tmp);
    fputs((const char *)arg, f);
    return fclose(f) == 0 ? TF_OK : tf_fail(TF_ERR_IO, "%s", tmp);
}

static int write_fails(const char *tmp, void *arg)
{
    (void)arg;
    FILE *f = fopen(tmp, "w");
    fputs("partial", f);
    fclose(f);
    return tf_fail(TF_ERR_IO, "the writer failed half way");
}

static void read_text(const char *p, char *buf, size_t n)
{
    FILE *f = fopen(p, "r");
    ck_assert_ptr_nonnull(f);
    size_t k = fread(buf, 1, n - 1, f);
    buf[k] = '\0';
    fclose(f);
}

START_TEST(atomic_writer_rules)
{
    make_dir();
    char buf[64];
    const char *target = path_in(0, "target.txt"), *link = path_in(1, "link.txt");
    ck_assert_int_eq(tf_gnn_write_atomic(target, write_hello, "one\n"), TF_OK);
    /* Through a link: the link stays, its target gets the new content. */
    ck_assert_int_eq(symlink("target.txt", link), 0);
    ck_assert_int_eq(tf_gnn_write_atomic(link, write_hello, "two\n"), TF_OK);
    struct stat st;
    ck_assert_int_eq(lstat(link, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    read_text(target, buf, sizeof buf);
    ck_assert_str_eq(buf, "two\n");
    /* A failing writer leaves the old file and no temporary file. */
    ck_assert_int_eq(tf_gnn_write_atomic(target, write_fails, NULL), TF_ERR_IO);
    read_text(target, buf, sizeof buf);
    ck_assert_str_eq(buf, "two\n");
    ck_assert_int_eq(count_entries(), 2);
    /* Not regular files: refused before writing, by the check too. */
    const char *sub = path_in(2, "adir");
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    ck_assert_int_eq(tf_gnn_write_atomic(sub, write_hello, "x"), TF_ERR_ARG);
    ck_assert_msg(strstr(tf_error_message(), "not a regular file (directory)"), "%s",
                  tf_error_message());
    ck_assert_int_eq(tf_gnn_outfile_check("/dev/null"), TF_ERR_ARG);
    ck_assert_msg(strstr(tf_error_message(), "character device"), "%s", tf_error_message());
    ck_assert_int_eq(tf_gnn_outfile_check(path_in(3, "nodir/x.h5")), TF_ERR_IO);
    ck_assert_int_eq(tf_gnn_outfile_check(""), TF_ERR_ARG);
    ck_assert_int_eq(count_entries(), 3);
    remove_dir();
}
END_TEST

/* A child rewrites the checkpoint with versions 1, 2, 3, ... until killed;
 * the parent kills it after a delay that walks through the write: from a
 * sixth of one write's time to four writes' (timed here, so that a slow
 * build - sanitizers - or a loaded machine still lets some writes end). */
START_TEST(killed_writer_leaves_a_whole_checkpoint)
{
    make_dir();
    const char *p = path_in(0, "ck.h5");
    tf_gnn_ckpt c;
    make_ckpt(&c, 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ck_assert_int_eq(tf_gnn_ckpt_write(p, &c), TF_OK);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double write_ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
    if (write_ns < 200000.0)
        write_ns = 200000.0;
    int newer = 0;
    for (int round = 0; round < 24; round++) {
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            for (int v = 1;; v++) {
                tf_gnn_ckpt k;
                make_ckpt(&k, 1000.0 * round + v);
                tf_gnn_ckpt_write(p, &k);
                tf_gnn_ckpt_free(&k);
            }
        }
        double ns = write_ns * (round + 1) / 6.0;
        struct timespec d = {(time_t)(ns / 1e9), (long)fmod(ns, 1e9)};
        nanosleep(&d, NULL);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        tf_gnn_ckpt r;
        ck_assert_msg(tf_gnn_ckpt_read(p, &r) == TF_OK, "round %d: %s", round,
                      tf_error_message());
        double v = r.adam_m[0] == 0 ? 0 : -r.adam_m[0];
        check_version(&r, v);
        newer += v >= 1000.0 * round + 1;
        tf_gnn_ckpt_free(&r);
    }
    /* The kills did land after some writes completed (else this checks nothing new). */
    ck_assert_int_gt(newer, 0);
    tf_gnn_ckpt_free(&c);
    remove_dir();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("test_gnn_ckpt");
    TCase *tc = tcase_create("ckpt");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, checkpoint_round_trip);
    tcase_add_test(tc, checkpoint_refusals);
    tcase_add_test(tc, atomic_writer_rules);
    tcase_add_test(tc, killed_writer_leaves_a_whole_checkpoint);
    suite_add_tcase(s, tc);
    return tf_test_run_serial(s);
}
