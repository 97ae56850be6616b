#include "tf_error.h"

#include <stdio.h>
#include <string.h>

#define TF_MSG_MAX 1024

static _Thread_local char tf_msg[TF_MSG_MAX];

const char *tf_strerror(int status)
{
    switch (status) {
    case TF_OK: return "success";
    case TF_ERR_ARG: return "invalid argument";
    case TF_ERR_IO: return "input/output error";
    case TF_ERR_PARSE: return "malformed input";
    case TF_ERR_FORMAT: return "unexpected file contents";
    case TF_ERR_NOMEM: return "out of memory";
    case TF_ERR_MPI: return "MPI failure";
    case TF_ERR_HDF5: return "HDF5 failure";
    case TF_ERR_RANGE: return "value out of range";
    case TF_ERR_INTERNAL: return "internal error";
    default: return "unknown status";
    }
}

const char *tf_error_message(void) { return tf_msg; }

void tf_error_clear(void) { tf_msg[0] = '\0'; }

/* Messages are one line: any newline a formatted argument smuggles in (a
 * garbage token from a binary file, say) is replaced, and non-printable bytes
 * are shown as '?', so a terminal is never corrupted by user data. */
static void sanitize(char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c == 0x7f)
            *s = '?';
    }
}

int tf_fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tf_msg, sizeof tf_msg, fmt, ap);
    va_end(ap);
    sanitize(tf_msg);
    return status;
}

int tf_fail_prefix(int status, const char *fmt, ...)
{
    char old[TF_MSG_MAX];
    char pre[TF_MSG_MAX];
    va_list ap;
    memcpy(old, tf_msg, sizeof old);
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    size_t n = strlen(pre);
    if (old[0] && n + 2 < sizeof tf_msg) {
        memcpy(pre + n, ": ", 3);
        n += 2;
    }
    /* Copy what fits of the old message after the prefix. */
    size_t room = sizeof tf_msg - 1 - (n < sizeof tf_msg - 1 ? n : sizeof tf_msg - 1);
    memcpy(tf_msg, pre, sizeof tf_msg - 1 - room);
    size_t olen = strlen(old);
    if (olen > room)
        olen = room;
    memcpy(tf_msg + (sizeof tf_msg - 1 - room), old, olen);
    tf_msg[sizeof tf_msg - 1 - room + olen] = '\0';
    sanitize(tf_msg);
    return status;
}
