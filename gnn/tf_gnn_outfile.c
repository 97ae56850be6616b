#include "tf_gnn_outfile.h"
#include "tf_error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Longer link chains than this are a loop (the kernel's own limit is 40). */
#define MAX_LINKS 40

static const char *kind(mode_t m)
{
    return S_ISDIR(m) ? "directory" : S_ISCHR(m) ? "character device" : S_ISBLK(m) ? "block device"
         : S_ISFIFO(m) ? "FIFO" : S_ISSOCK(m) ? "socket" : "special file";
}

/* target = path with symbolic links followed; a dangling link gives the
 * path its last link names. */
static int resolve(const char *path, char *target, size_t n)
{
    if (!path || !*path)
        return tf_fail(TF_ERR_ARG, "empty output file name");
    if (snprintf(target, n, "%s", path) >= (int)n)
        return tf_fail(TF_ERR_ARG, "%s: path too long", path);
    for (int hops = 0;; hops++) {
        struct stat st;
        if (lstat(target, &st) != 0 || !S_ISLNK(st.st_mode))
            return TF_OK;
        if (hops == MAX_LINKS)
            return tf_fail(TF_ERR_ARG, "%s: too many levels of symbolic links", path);
        char link[PATH_MAX];
        ssize_t len = readlink(target, link, sizeof link - 1);
        if (len < 0)
            return tf_fail(TF_ERR_IO, "%s: cannot read the link: %s", path, strerror(errno));
        link[len] = '\0';
        char next[PATH_MAX];
        const char *slash = strrchr(target, '/');
        int w = link[0] == '/' || !slash
                    ? snprintf(next, sizeof next, "%s", link)
                    : snprintf(next, sizeof next, "%.*s/%s", (int)(slash - target), target, link);
        if (w >= (int)sizeof next || snprintf(target, n, "%s", next) >= (int)n)
            return tf_fail(TF_ERR_ARG, "%s: link target too long", path);
    }
}

static void dir_of(const char *target, char *dir, size_t n)
{
    const char *slash = strrchr(target, '/');
    if (!slash)
        snprintf(dir, n, ".");
    else if (slash == target)
        snprintf(dir, n, "/");
    else
        snprintf(dir, n, "%.*s", (int)(slash - target), target);
}

static int check_target(const char *path, const char *target)
{
    struct stat st;
    if (stat(target, &st) == 0 && !S_ISREG(st.st_mode))
        return tf_fail(TF_ERR_ARG, "%s: not a regular file (%s); twoface writes only regular files",
                       path, kind(st.st_mode));
    char dir[PATH_MAX];
    dir_of(target, dir, sizeof dir);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return tf_fail(TF_ERR_IO, "%s: directory %s does not exist", path, dir);
    return TF_OK;
}

int tf_gnn_outfile_check(const char *path)
{
    char target[PATH_MAX];
    int st = resolve(path, target, sizeof target);
    return st ? st : check_target(path, target);
}

static int fsync_path(const char *p, int flags)
{
    int fd = open(p, flags);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

int tf_gnn_write_atomic(const char *path, tf_gnn_writer write, void *arg)
{
    char target[PATH_MAX], tmp[PATH_MAX + 64];
    int st = resolve(path, target, sizeof target);
    if (!st)
        st = check_target(path, target);
    if (st)
        return st;
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld.XXXXXX", target, (long)getpid()) >= (int)sizeof tmp)
        return tf_fail(TF_ERR_ARG, "%s: path too long", path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return tf_fail(TF_ERR_IO, "%s: cannot create a temporary file next to it: %s", path,
                       strerror(errno));
    /* mkstemp makes it 0600; a plain creation would give 0666 less the umask. */
    mode_t um = umask(0);
    umask(um);
    int rc = fchmod(fd, 0666 & ~um);
    close(fd);
    if (rc != 0)
        st = tf_fail(TF_ERR_IO, "%s: chmod: %s", tmp, strerror(errno));
    if (!st)
        st = write(tmp, arg);
    if (!st && fsync_path(tmp, O_RDONLY) != 0)
        st = tf_fail(TF_ERR_IO, "%s: fsync: %s", tmp, strerror(errno));
    if (!st)
        st = check_target(path, target); /* it may have become something else meanwhile */
    if (!st && rename(tmp, target) != 0)
        st = tf_fail(TF_ERR_IO, "%s: cannot rename %s over it: %s", path, tmp, strerror(errno));
    if (st) {
        unlink(tmp);
        return st;
    }
    char dir[PATH_MAX];
    dir_of(target, dir, sizeof dir);
    fsync_path(dir, O_RDONLY | O_DIRECTORY); /* best effort: not every file system allows it */
    return TF_OK;
}
