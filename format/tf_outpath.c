/* Output files: link following, refusal of non-regular files, a unique
 * temporary file and the atomic rename (tf_outpath.h). */
#include "tf_outpath.h"
#include "tf_error.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* As many hops as the kernel follows (MAXSYMLINKS): a longer chain is a loop
 * for every other program too. */
#define MAX_LINK_HOPS 40

static const char *kind_name(mode_t m)
{
    if (S_ISDIR(m))
        return "directory";
    if (S_ISCHR(m))
        return "character device";
    if (S_ISBLK(m))
        return "block device";
    if (S_ISFIFO(m))
        return "FIFO";
    if (S_ISSOCK(m))
        return "socket";
    if (S_ISLNK(m))
        return "symbolic link";
    return "special file";
}

static void dir_of(const char *path, char *dir, size_t n)
{
    snprintf(dir, n, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, n, ".");
    else if (slash == dir)
        slash[1] = '\0';
    else
        *slash = '\0';
}

/* Follows `path` through symbolic links to the file that a write would
 * replace. *exists says whether it exists, *mode is its lstat mode then. */
static int resolve(const char *path, char *target, size_t n, int *exists, mode_t *mode)
{
    char cur[PATH_MAX];
    if (snprintf(cur, sizeof cur, "%s", path) >= (int)sizeof cur)
        return tf_fail(TF_ERR_ARG, "%s: path too long", path);
    for (int hop = 0; hop <= MAX_LINK_HOPS; hop++) {
        struct stat sb;
        if (lstat(cur, &sb) < 0) {
            if (errno != ENOENT)
                return tf_fail(TF_ERR_IO, "%s: cannot examine %s: %s", path, cur,
                               strerror(errno));
            *exists = 0;
            *mode = 0;
            snprintf(target, n, "%s", cur);
            return TF_OK;
        }
        if (!S_ISLNK(sb.st_mode)) {
            *exists = 1;
            *mode = sb.st_mode;
            snprintf(target, n, "%s", cur);
            return TF_OK;
        }
        char link[PATH_MAX];
        ssize_t len = readlink(cur, link, sizeof link - 1);
        if (len < 0)
            return tf_fail(TF_ERR_IO, "%s: cannot read the link %s: %s", path, cur,
                           strerror(errno));
        link[len] = '\0';
        if (link[0] == '/') {
            snprintf(cur, sizeof cur, "%s", link);
        } else {
            /* A relative link is relative to the directory holding it. */
            char dir[PATH_MAX], next[PATH_MAX];
            dir_of(cur, dir, sizeof dir);
            if (snprintf(next, sizeof next, "%s/%s", dir, link) >= (int)sizeof next)
                return tf_fail(TF_ERR_ARG, "%s: the link's target path is too long", path);
            memcpy(cur, next, sizeof cur);
        }
    }
    return tf_fail(TF_ERR_IO, "%s: more than %d symbolic links in a row (a loop?)", path,
                   MAX_LINK_HOPS);
}

/* "PATH" or "PATH (-> TARGET)" for messages about the target. */
static void shown(const char *path, const char *target, char *buf, size_t n)
{
    if (strcmp(path, target) == 0)
        snprintf(buf, n, "%s", path);
    else
        snprintf(buf, n, "%s (-> %s)", path, target);
}

static int check(const char *path, char *target, size_t n)
{
    if (!path || !path[0])
        return tf_fail(TF_ERR_ARG, "the output path is empty: give a file name");
    int exists = 0;
    mode_t mode = 0;
    int st = resolve(path, target, n, &exists, &mode);
    if (st != TF_OK)
        return st;
    char who[2 * PATH_MAX + 8];
    shown(path, target, who, sizeof who);
    if (exists && !S_ISREG(mode))
        return tf_fail(TF_ERR_ARG, "%s: not a regular file (%s); twoface writes only regular files",
                       who, kind_name(mode));
    char dir[PATH_MAX];
    dir_of(target, dir, sizeof dir);
    struct stat sb;
    if (stat(dir, &sb) < 0)
        return tf_fail(TF_ERR_IO, "%s: cannot use the directory %s: %s", who, dir,
                       strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return tf_fail(TF_ERR_IO, "%s: %s is not a directory", who, dir);
    if (access(dir, W_OK | X_OK) < 0)
        return tf_fail(TF_ERR_IO, "%s: cannot write in the directory %s: %s", who, dir,
                       strerror(errno));
    return TF_OK;
}

int tf_outpath_check(const char *path)
{
    char target[PATH_MAX];
    return check(path, target, sizeof target);
}

/* The directory entry `path` resolves to (links followed), with its
 * directory made canonical: two spellings of one entry compare equal. */
static int entry_of(const char *path, char *entry, size_t n)
{
    char target[PATH_MAX], dir[PATH_MAX], real[PATH_MAX];
    int exists = 0;
    mode_t mode = 0;
    if (resolve(path, target, sizeof target, &exists, &mode) != TF_OK)
        return 0;
    dir_of(target, dir, sizeof dir);
    if (!realpath(dir, real))
        return 0;
    const char *slash = strrchr(target, '/');
    return snprintf(entry, n, "%s/%s", real, slash ? slash + 1 : target) < (int)n;
}

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if (ea && eb)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (ea || eb)
        return 0; /* one entry cannot both exist and not */
    char x[2 * PATH_MAX], y[2 * PATH_MAX];
    return entry_of(a, x, sizeof x) && entry_of(b, y, sizeof y) && strcmp(x, y) == 0;
}

int tf_outpath_distinct(const char *out_opt, const char *out, const char *other_opt,
                        const char *other)
{
    if (!out || !other || !out[0] || !other[0] || !same_file(out, other))
        return TF_OK;
    return tf_fail(TF_ERR_ARG,
                   "%s %s: the same file as %s %s; an output must not replace an input or "
                   "another output",
                   out_opt, out, other_opt, other);
}

/* mkstemp creates files 0600; a writer that used open() or fopen() would
 * have got 0666 less the umask, which is what users of the files expect.
 * umask can only be read by setting it, hence the lock. */
static mode_t creation_mode(void)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    mode_t m = umask(0);
    umask(m);
    pthread_mutex_unlock(&lock);
    return 0666 & ~m;
}

int tf_outpath_open(tf_outpath *o, const char *path)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    int st = check(path, o->target, sizeof o->target);
    if (st != TF_OK)
        return st;
    snprintf(o->path, sizeof o->path, "%s", path);
    if (snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld.XXXXXX", o->target, (long)getpid()) >=
        (int)sizeof o->tmp)
        return tf_fail(TF_ERR_ARG, "%s: path too long", path);
    o->fd = mkstemp(o->tmp);
    if (o->fd < 0)
        return tf_fail(TF_ERR_IO, "%s: cannot create a temporary file beside %s: %s", path,
                       o->target, strerror(errno));
    if (fchmod(o->fd, creation_mode()) < 0) {
        int e = errno;
        tf_outpath_abort(o);
        return tf_fail(TF_ERR_IO, "%s: cannot set the mode of %s: %s", path, o->tmp,
                       strerror(e));
    }
    return TF_OK;
}

FILE *tf_outpath_stream(tf_outpath *o)
{
    if (!o->stream && o->fd >= 0) {
        o->stream = fdopen(o->fd, "w");
        if (!o->stream)
            tf_fail(TF_ERR_IO, "%s: cannot open a stream on %s: %s", o->path, o->tmp,
                    strerror(errno));
        else
            o->fd = -1;
    }
    return o->stream;
}

/* Closes whatever is open on the temporary file; returns 0 or errno. */
static int close_tmp(tf_outpath *o, int flush)
{
    int e = 0;
    if (o->stream) {
        if (flush && (fflush(o->stream) != 0 || ferror(o->stream)))
            e = errno ? errno : EIO;
        if (flush && !e && fsync(fileno(o->stream)) < 0)
            e = errno;
        /* fclose can report a delayed write error (NFS). */
        if (fclose(o->stream) != 0 && !e)
            e = errno;
        o->stream = NULL;
    } else if (o->fd >= 0) {
        if (flush && fsync(o->fd) < 0)
            e = errno;
        if (close(o->fd) < 0 && !e)
            e = errno;
        o->fd = -1;
    }
    return e;
}

void tf_outpath_abort(tf_outpath *o)
{
    close_tmp(o, 0);
    if (o->tmp[0])
        unlink(o->tmp);
    o->tmp[0] = '\0';
}

/* The file is synced before the rename and its directory after it: a crash
 * then leaves either the old file or the complete new one. */
static int fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return -1;
    int r = fsync(fd);
    /* Some file systems cannot sync directories; that is not our failure. */
    if (r < 0 && (errno == EINVAL || errno == EROFS))
        r = 0;
    int e = errno;
    close(fd);
    errno = e;
    return r;
}

int tf_outpath_commit(tf_outpath *o)
{
    if (!o->tmp[0])
        return tf_fail(TF_ERR_INTERNAL, "%s: nothing to commit", o->path);
    char tmp[sizeof o->tmp];
    memcpy(tmp, o->tmp, sizeof tmp);
    int e = close_tmp(o, 1);
    if (e) {
        tf_outpath_abort(o);
        return tf_fail(TF_ERR_IO, "%s: cannot write %s: %s", o->path, tmp, strerror(e));
    }
    /* The target was checked at open; something may have been put there
     * since, and rename would replace a link or a device node as readily
     * as a file. */
    struct stat sb;
    char who[2 * PATH_MAX + 8];
    shown(o->path, o->target, who, sizeof who);
    if (lstat(o->target, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        tf_outpath_abort(o);
        return tf_fail(TF_ERR_IO, "%s: became a %s while it was being written; left as it is",
                       who, kind_name(sb.st_mode));
    }
    if (rename(o->tmp, o->target) < 0) {
        e = errno;
        tf_outpath_abort(o);
        return tf_fail(TF_ERR_IO, "%s: cannot rename %s to it: %s", who, tmp, strerror(e));
    }
    o->tmp[0] = '\0';
    char dir[PATH_MAX];
    dir_of(o->target, dir, sizeof dir);
    if (fsync_dir(dir) < 0)
        return tf_fail(TF_ERR_IO, "%s: written, but cannot sync the directory %s: %s", o->path,
                       dir, strerror(errno));
    return TF_OK;
}
