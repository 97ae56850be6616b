/* Replays the fuzzing seeds and every saved finding through the fuzz
 * targets' oracles (tests/fuzz/fuzz_oracles.h), in the normal build and,
 * under `make sanitize`, with AddressSanitizer, UBSan and LeakSanitizer:
 *   tests/fuzz/corpus_mm/, tests/fuzz/regress_mm/       Matrix Market reader
 *   tests/fuzz/corpus_plan/, tests/fuzz/regress_plan/   plan loader
 * regress_* hold inputs that once broke our code (fixed since, see
 * docs/reliability.md); an abort or a sanitizer report names the input.
 * TF_FUZZ_REPLAY_MM and TF_FUZZ_REPLAY_PLAN may name one more directory
 * each, e.g. a corpus grown by `make fuzz` (build-fuzz/corpus_plan), to check
 * it for leaks of our own code, which the plan fuzzer does not (HDF5 leaks on
 * damaged files; here only libhdf5's leaks are suppressed).
 * Inputs that crash inside libhdf5 itself are kept apart, in
 * tests/fuzz/crashes/, and are not replayed here. */
#include "tf_test.h"
#include "fuzz/fuzz_oracles.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* HDF5 1.10.8 leaks memory when it meets damaged metadata (see
 * tests/test_plan_io.c); the plan replay sets this in its forked child so
 * that LeakSanitizer still reports every leak of ours. */
static volatile int g_hdf5_leaks_expected;
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return g_hdf5_leaks_expected ? "leak:libhdf5_serial.so\n" : "";
}

typedef void (*replay_fn)(const uint8_t *data, size_t size, const char *tmpdir);

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs fn on every regular file of tests/fuzz/SUB, or of SUB itself when it
 * starts with '/' (sorted); returns how many. */
static int replay_dir(const char *sub, replay_fn fn, const char *tmpdir)
{
    char dir[1024];
    if (sub[0] == '/')
        snprintf(dir, sizeof dir, "%s", sub);
    else
        snprintf(dir, sizeof dir, "%s/tests/fuzz/%s", tf_test_srcdir(), sub);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            names = realloc(names, cap * sizeof *names);
            ck_assert_ptr_nonnull(names);
        }
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, name_cmp);
    int count = 0;
    for (size_t i = 0; i < n; i++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        struct stat sb;
        if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            free(names[i]);
            continue;
        }
        FILE *f = fopen(path, "rb");
        ck_assert_msg(f != NULL, "cannot open %s", path);
        uint8_t *data = malloc((size_t)sb.st_size + 1);
        ck_assert_ptr_nonnull(data);
        size_t got = fread(data, 1, (size_t)sb.st_size, f);
        fclose(f);
        ck_assert_msg(got == (size_t)sb.st_size, "cannot read %s", path);
        fuzz_current_input = path;
        fn(data, got, tmpdir);
        fuzz_current_input = NULL;
        free(data);
        free(names[i]);
        count++;
    }
    free(names);
    return count;
}

static void mm_one(const uint8_t *data, size_t size, const char *tmpdir)
{
    (void)tmpdir;
    /* Skipped as by the libFuzzer target: a valid size line may ask for
     * gigabytes of row pointers (fuzz_oracles.h, FUZZ_MAX_DIM). */
    if (fuzz_mm_max_dim(data, size) > FUZZ_MAX_DIM)
        return;
    fuzz_mm_one(data, size);
}

static void plan_one(const uint8_t *data, size_t size, const char *tmpdir)
{
    fuzz_plan_one(data, size, tmpdir);
}

START_TEST(matrix_market_seeds_and_regressions)
{
    int n = replay_dir("corpus_mm", mm_one, NULL);
    ck_assert_int_ge(n, 5);
    replay_dir("regress_mm", mm_one, NULL);
    const char *extra = getenv("TF_FUZZ_REPLAY_MM");
    if (extra && extra[0] == '/')
        replay_dir(extra, mm_one, NULL);
}
END_TEST

START_TEST(plan_seeds_and_regressions)
{
    g_hdf5_leaks_expected = 1;
    char dir[256];
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(dir, sizeof dir, "%s/tf_fuzz_replay.XXXXXX", tmp);
    ck_assert_ptr_nonnull(mkdtemp(dir));
    int n = replay_dir("corpus_plan", plan_one, dir);
    ck_assert_int_ge(n, 2);
    replay_dir("regress_plan", plan_one, dir);
    const char *extra = getenv("TF_FUZZ_REPLAY_PLAN");
    if (extra && extra[0] == '/')
        replay_dir(extra, plan_one, dir);
    rmdir(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fuzz_replay");
    TCase *tc = tcase_create("replay");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, matrix_market_seeds_and_regressions);
    tcase_add_test(tc, plan_seeds_and_regressions);
    suite_add_tcase(s, tc);
    return tf_test_run_serial(s);
}
