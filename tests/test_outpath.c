/* Output paths (format/tf_outpath.h): links followed, non-regular files
 * refused, unique temporary files, a rename that replaces only regular files;
 * and the writers that use it (calibration file, SVG picture). */
#include "tf_test.h"
#include "tf_calib_file.h"
#include "tf_error.h"
#include "tf_outpath.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static char g_dir[512];

static void setup(void)
{
    const char *t = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(g_dir, sizeof g_dir, "%s/tfoutpath_XXXXXX", t);
    ck_assert_ptr_nonnull(mkdtemp(g_dir));
}

static void rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[1200];
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            struct stat sb;
            if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode))
                rm_tree(p);
            else
                unlink(p);
        }
    closedir(d);
    rmdir(dir);
}

static void teardown(void) { rm_tree(g_dir); }

static const char *at(int slot, const char *name)
{
    static char buf[8][700];
    snprintf(buf[slot], sizeof buf[slot], "%s/%s", g_dir, name);
    return buf[slot];
}

static int entries(void)
{
    DIR *d = opendir(g_dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

static void expect_text(const char *path, const char *text)
{
    char buf[256] = "";
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    ck_assert_str_eq(buf, text);
}

/* Writes text through the module: open, stream, commit. */
static int write_text(const char *path, const char *text)
{
    tf_outpath o;
    int st = tf_outpath_open(&o, path);
    if (st != TF_OK)
        return st;
    FILE *f = tf_outpath_stream(&o);
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    return tf_outpath_commit(&o);
}

static void expect_refused(const char *path, int status, const char *needle)
{
    ck_assert_int_eq(tf_outpath_check(path), status);
    ck_assert_msg(strstr(tf_error_message(), needle), "'%s' lacks '%s'", tf_error_message(),
                  needle);
    tf_outpath o;
    ck_assert_int_eq(tf_outpath_open(&o, path), status);
    ck_assert_msg(strstr(tf_error_message(), needle), "'%s' lacks '%s'", tf_error_message(),
                  needle);
}

START_TEST(new_and_existing_regular_files)
{
    const char *p = at(0, "out.txt");
    ck_assert_int_eq(tf_outpath_check(p), TF_OK);
    ck_assert_int_eq(entries(), 0); /* the check touches nothing */
    ck_assert_msg(write_text(p, "one\n") == TF_OK, "%s", tf_error_message());
    expect_text(p, "one\n");
    ck_assert_int_eq(write_text(p, "two\n"), TF_OK);
    expect_text(p, "two\n");
    ck_assert_int_eq(entries(), 1);
    /* The mode a plain creation gives, not mkstemp's 0600. */
    mode_t old = umask(022);
    ck_assert_int_eq(write_text(p, "three\n"), TF_OK);
    umask(old);
    struct stat sb;
    ck_assert_int_eq(stat(p, &sb), 0);
    ck_assert_int_eq(sb.st_mode & 0777, 0644);
}
END_TEST

START_TEST(links_are_followed_to_their_target)
{
    const char *target = at(0, "target.txt"), *link = at(1, "link.txt");
    put(target, "old\n");
    ck_assert_int_eq(symlink("target.txt", link), 0);
    ck_assert_int_eq(write_text(link, "new\n"), TF_OK);
    struct stat sb;
    ck_assert_int_eq(lstat(link, &sb), 0);
    ck_assert_msg(S_ISLNK(sb.st_mode), "the link was replaced");
    expect_text(target, "new\n");

    /* A chain of links, the last one absolute and pointing into a
     * subdirectory: the temporary file goes beside the final target. */
    const char *sub = at(2, "sub"), *final = at(3, "sub/final.txt");
    const char *l1 = at(4, "l1"), *l2 = at(5, "l2");
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    ck_assert_int_eq(symlink(final, l2), 0);
    ck_assert_int_eq(symlink("l2", l1), 0);
    tf_outpath o;
    ck_assert_int_eq(tf_outpath_open(&o, l1), TF_OK);
    ck_assert_str_eq(o.target, final);
    ck_assert_int_eq(strncmp(o.tmp, final, strlen(final)), 0);
    ck_assert_int_eq(write(o.fd, "deep\n", 5), 5);
    ck_assert_int_eq(tf_outpath_commit(&o), TF_OK);
    expect_text(final, "deep\n"); /* a dangling link's target is created */
    ck_assert_int_eq(lstat(l1, &sb), 0);
    ck_assert(S_ISLNK(sb.st_mode));

    const char *a = at(6, "loop_a"), *b = at(7, "loop_b");
    ck_assert_int_eq(symlink("loop_b", a), 0);
    ck_assert_int_eq(symlink("loop_a", b), 0);
    expect_refused(a, TF_ERR_IO, "symbolic links in a row");
}
END_TEST

START_TEST(non_regular_files_are_refused)
{
    const char *fifo = at(0, "fifo"), *dir = at(1, "dir"), *sock = at(2, "sock");
    const char *devlink = at(3, "devlink");
    ck_assert_int_eq(mkfifo(fifo, 0644), 0);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_ge(s, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(sock) < sizeof sa.sun_path) {
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock);
        ck_assert_int_eq(bind(s, (struct sockaddr *)&sa, sizeof sa), 0);
        expect_refused(sock, TF_ERR_ARG, "not a regular file (socket); twoface writes only");
    }
    close(s);
    expect_refused(fifo, TF_ERR_ARG, "fifo: not a regular file (FIFO); twoface writes only "
                                     "regular files");
    expect_refused(dir, TF_ERR_ARG, "not a regular file (directory)");
    expect_refused("/dev/null", TF_ERR_ARG,
                   "/dev/null: not a regular file (character device); twoface writes only "
                   "regular files");
    ck_assert_int_eq(symlink("/dev/null", devlink), 0);
    expect_refused(devlink, TF_ERR_ARG, "devlink (-> /dev/null): not a regular file");
    struct stat sb;
    ck_assert_int_eq(stat("/dev/null", &sb), 0);
    ck_assert(S_ISCHR(sb.st_mode));
    expect_refused("", TF_ERR_ARG, "the output path is empty");
    expect_refused(at(4, "missing/x.txt"), TF_ERR_IO, "missing: No such file or directory");
    put(at(5, "file"), "x");
    expect_refused(at(6, "file/x.txt"), TF_ERR_IO, "Not a directory");
    /* Nothing was created by the refusals. */
    ck_assert_int_eq(entries(), 5 - (strlen(sock) >= sizeof sa.sun_path));
}
END_TEST

START_TEST(temporary_names_are_unique_and_aborts_clean_up)
{
    const char *p = at(0, "out.txt");
    tf_outpath a, b;
    ck_assert_int_eq(tf_outpath_open(&a, p), TF_OK);
    ck_assert_int_eq(tf_outpath_open(&b, p), TF_OK);
    ck_assert_str_ne(a.tmp, b.tmp);
    ck_assert_int_eq(entries(), 2);
    ck_assert_int_eq(write(a.fd, "a\n", 2), 2);
    ck_assert_int_eq(write(b.fd, "b\n", 2), 2);
    ck_assert_int_eq(tf_outpath_commit(&b), TF_OK);
    ck_assert_int_eq(tf_outpath_commit(&a), TF_OK);
    expect_text(p, "a\n");
    ck_assert_int_eq(entries(), 1);
    ck_assert_int_eq(tf_outpath_open(&a, p), TF_OK);
    ck_assert_ptr_nonnull(tf_outpath_stream(&a));
    fputs("never\n", tf_outpath_stream(&a));
    tf_outpath_abort(&a);
    expect_text(p, "a\n");
    ck_assert_int_eq(entries(), 1);
}
END_TEST

/* What was checked at open may change before the rename: the rename must
 * still replace only a regular file. */
START_TEST(commit_replaces_only_a_regular_file)
{
    const char *p = at(0, "out.txt");
    tf_outpath o;
    ck_assert_int_eq(tf_outpath_open(&o, p), TF_OK);
    ck_assert_int_eq(mkfifo(p, 0644), 0);
    ck_assert_int_eq(tf_outpath_commit(&o), TF_ERR_IO);
    ck_assert_msg(strstr(tf_error_message(), "became a FIFO"), "%s", tf_error_message());
    struct stat sb;
    ck_assert_int_eq(lstat(p, &sb), 0);
    ck_assert(S_ISFIFO(sb.st_mode));
    ck_assert_int_eq(entries(), 1); /* the temporary file is gone */
    unlink(p);
    ck_assert_int_eq(tf_outpath_open(&o, p), TF_OK);
    ck_assert_int_eq(symlink("elsewhere", p), 0);
    ck_assert_int_eq(tf_outpath_commit(&o), TF_ERR_IO);
    ck_assert_msg(strstr(tf_error_message(), "became a symbolic link"), "%s",
                  tf_error_message());
    ck_assert_int_eq(entries(), 1);
}
END_TEST

/* An output on an input or on another output: the same existing file
 * under another spelling or through a link, or one new entry twice. */
START_TEST(outputs_distinct_from_inputs)
{
    const char *in = at(0, "in.txt"), *link = at(1, "in-link.txt");
    put(in, "input\n");
    ck_assert_int_eq(symlink("in.txt", link), 0);
    char dotted[1100];
    snprintf(dotted, sizeof dotted, "%s/./in.txt", g_dir);
    const char *same[] = {in, link, dotted};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(tf_outpath_distinct("-o", same[i], "--labels", in), TF_ERR_ARG);
        ck_assert_msg(strstr(tf_error_message(), "the same file as --labels") &&
                          !strchr(tf_error_message(), '\n'),
                      "%s", tf_error_message());
    }
    /* Two outputs not yet there, one spelt through "./". */
    const char *fresh = at(2, "new.h5");
    char fresh2[1100];
    snprintf(fresh2, sizeof fresh2, "%s/./new.h5", g_dir);
    ck_assert_int_eq(tf_outpath_distinct("--svg", fresh2, "-o", fresh), TF_ERR_ARG);
    /* Different files, a missing input, no input. */
    ck_assert_int_eq(tf_outpath_distinct("-o", fresh, "--labels", in), TF_OK);
    ck_assert_int_eq(tf_outpath_distinct("-o", in, "--b", at(3, "absent.h5")), TF_OK);
    ck_assert_int_eq(tf_outpath_distinct("-o", in, "--b", NULL), TF_OK);
    expect_text(in, "input\n");
}
END_TEST

START_TEST(calibration_writer_uses_it)
{
    tf_calibration c;
    memset(&c, 0, sizeof c);
    c.coeffs.threads = 1;
    const char *target = at(0, "cal.txt"), *link = at(1, "cal-link.txt");
    put(target, "old\n");
    ck_assert_int_eq(symlink("cal.txt", link), 0);
    ck_assert_msg(tf_calib_write(link, &c) == TF_OK, "%s", tf_error_message());
    tf_calibration d;
    ck_assert_msg(tf_calib_read(target, &d) == TF_OK, "%s", tf_error_message());
    ck_assert_int_eq(d.coeffs.threads, 1);
    struct stat sb;
    ck_assert_int_eq(lstat(link, &sb), 0);
    ck_assert(S_ISLNK(sb.st_mode));
    ck_assert_int_eq(tf_calib_write("/dev/null", &c), TF_ERR_ARG);
    ck_assert_int_eq(stat("/dev/null", &sb), 0);
    ck_assert(S_ISCHR(sb.st_mode));
    ck_assert_int_eq(entries(), 2);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("outpath");
    TCase *tc = tcase_create("outpath");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, new_and_existing_regular_files);
    tcase_add_test(tc, links_are_followed_to_their_target);
    tcase_add_test(tc, non_regular_files_are_refused);
    tcase_add_test(tc, temporary_names_are_unique_and_aborts_clean_up);
    tcase_add_test(tc, commit_replaces_only_a_regular_file);
    tcase_add_test(tc, calibration_writer_uses_it);
    tcase_add_test(tc, outputs_distinct_from_inputs);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tf_test_run_serial(suite()); }
