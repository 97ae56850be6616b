#include "tf_calib_file.h"
#include "tf_error.h"
#include "tf_outpath.h"
#include "tf_outpath.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const tf_calib_prov_keys[TF_CALIB_NPROV] = {
    "date", "host", "ranks", "threads_measured", "mpi_library", "transport", "k_values", "note"};

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
        *--e = '\0';
    return s;
}

int tf_calib_parse(const char *name, const char *text, tf_calibration *out)
{
    memset(out, 0, sizeof *out);
    int seen[TF_NCOEFFS] = {0};
    const char *p = text;
    long line = 0;
    char buf[1024];
    while (*p) {
        line++;
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len >= sizeof buf)
            return tf_fail(TF_ERR_PARSE, "%s:%ld: line longer than %zu bytes", name, line,
                           sizeof buf - 1);
        memcpy(buf, p, len);
        buf[len] = '\0';
        p += len + (nl ? 1 : 0);
        for (size_t i = 0; i < len; i++)
            if (buf[i] == '\0' || ((unsigned char)buf[i] < 0x20 && buf[i] != '\t' && buf[i] != '\r'))
                return tf_fail(TF_ERR_PARSE, "%s:%ld: binary data, expected 'name = value'", name, line);
        char *s = trim(buf);
        if (*s == '\0' || *s == '#')
            continue;
        char *eq = strchr(s, '=');
        if (!eq)
            return tf_fail(TF_ERR_PARSE, "%s:%ld: expected 'name = value', found '%.60s'", name,
                           line, s);
        *eq = '\0';
        char *key = trim(s);
        char *val = eq + 1;
        char *hash = strchr(val, '#');
        if (hash)
            *hash = '\0';
        val = trim(val);
        int k = -1;
        for (int i = 0; i < TF_NCOEFFS; i++)
            if (strcmp(key, tf_coeff_names[i]) == 0)
                k = i;
        if (k >= 0) {
            if (seen[k])
                return tf_fail(TF_ERR_PARSE, "%s:%ld: '%s' given twice", name, line, key);
            char *end;
            errno = 0;
            double v = strtod(val, &end);
            if (*val == '\0' || *end != '\0' || errno == ERANGE || !isfinite(v) || v < 0)
                return tf_fail(TF_ERR_PARSE,
                               "%s:%ld: '%s' needs a finite non-negative number, found '%.40s'",
                               name, line, key, val);
            if (k == TF_NCOEFFS - 1 && (v != floor(v) || v < 1 || v > 4096))
                return tf_fail(TF_ERR_PARSE, "%s:%ld: 'threads' needs a whole number 1..4096, found '%.40s'",
                               name, line, val);
            /* Bounds that keep every prediction finite: a time per unit
             * above a second, or a cache above 2^50 bytes, is no machine,
             * and their products with counts would reach inf (then NaN in
             * the ratios) or overflow the reuse window's integer. */
            if (strncmp(tf_coeff_units[k], "s/", 2) == 0 && v > 1)
                return tf_fail(TF_ERR_PARSE, "%s:%ld: '%s' is seconds per %s, at most 1, found "
                               "'%.40s'", name, line, key, tf_coeff_units[k] + 2, val);
            if (strcmp(key, "cache_bytes") == 0 && v > TF_CALIB_MAX_CACHE_BYTES)
                return tf_fail(TF_ERR_PARSE, "%s:%ld: 'cache_bytes' at most 2^50, found '%.40s'",
                               name, line, val);
            if (strcmp(key, "overlap_fetch") == 0 && v > 1)
                return tf_fail(TF_ERR_PARSE, "%s:%ld: 'overlap_fetch' is a share, 0..1, found '%.40s'",
                               name, line, val);
            tf_coeffs_set(&out->coeffs, k, v);
            seen[k] = 1;
            continue;
        }
        int pk = -1;
        for (int i = 0; i < TF_CALIB_NPROV; i++)
            if (strcmp(key, tf_calib_prov_keys[i]) == 0)
                pk = i;
        if (pk < 0)
            return tf_fail(TF_ERR_PARSE, "%s:%ld: unknown key '%.40s'", name, line, key);
        snprintf(out->prov[pk], sizeof out->prov[pk], "%s", val);
    }
    for (int i = 0; i < TF_NCOEFFS; i++)
        if (!seen[i] && !tf_coeff_optional(i))
            return tf_fail(TF_ERR_PARSE, "%s: missing key '%s'", name, tf_coeff_names[i]);
    return TF_OK;
}

int tf_calib_read(const char *path, tf_calibration *out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return tf_fail(TF_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    /* Calibration files are a few dozen lines; anything large is not one. */
    char *text = malloc(65537);
    if (!text) {
        fclose(f);
        return tf_fail(TF_ERR_NOMEM, "%s: out of memory", path);
    }
    errno = 0;
    size_t n = fread(text, 1, 65536, f);
    int big = !feof(f) && fgetc(f) != EOF;
    int err = ferror(f) ? (errno ? errno : EIO) : 0;
    fclose(f);
    if (err || big) {
        free(text);
        /* The reason, such as "Is a directory", is what the user can act on. */
        if (err)
            return tf_fail(TF_ERR_IO, "%s: cannot read: %s", path, strerror(err));
        return tf_fail(TF_ERR_PARSE, "%s: larger than 64 KiB, not a calibration file", path);
    }
    text[n] = '\0';
    if (strlen(text) != n) {
        free(text);
        return tf_fail(TF_ERR_PARSE, "%s: contains NUL bytes, not a calibration file", path);
    }
    int st = tf_calib_parse(path, text, out);
    free(text);
    return st;
}

int tf_calib_write(const char *path, const tf_calibration *c)
{
    tf_outpath out;
    int st = tf_outpath_open(&out, path);
    if (st != TF_OK)
        return st;
    FILE *f = tf_outpath_stream(&out);
    if (!f) {
        tf_outpath_abort(&out);
        return TF_ERR_IO;
    }
    fprintf(f, "# twoface cost-model calibration (docs/cost-model.md)\n");
    for (int i = 0; i < TF_CALIB_NPROV; i++)
        if (c->prov[i][0])
            fprintf(f, "%s = %s\n", tf_calib_prov_keys[i], c->prov[i]);
    for (int i = 0; i < TF_NCOEFFS; i++) {
        double v = tf_coeffs_get(&c->coeffs, i);
        if (i == TF_NCOEFFS - 1)
            fprintf(f, "%-12s = %d  # %s\n", tf_coeff_names[i], (int)v, tf_coeff_units[i]);
        else
            fprintf(f, "%-12s = %.6e  # %s\n", tf_coeff_names[i], v, tf_coeff_units[i]);
    }
    return tf_outpath_commit(&out);
}
