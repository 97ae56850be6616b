#include "tf_gnn_text.h"

#include <stdio.h>
#include <string.h>

int tf_gnn_is_hdf5(const char *path)
{
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    unsigned char head[8];
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return n == sizeof head && memcmp(head, sig, sizeof sig) == 0;
}

void tf_gnn_printable(const char *s, size_t max, char *out, size_t n)
{
    size_t o = 0;
    if (n == 0)
        return;
    for (size_t i = 0; s[i] && i < max; i++) {
        unsigned char c = (unsigned char)s[i];
        char piece[5];
        if (c >= 0x20 && c < 0x7f)
            snprintf(piece, sizeof piece, "%c", c);
        else
            snprintf(piece, sizeof piece, "\\x%02x", c);
        size_t len = strlen(piece);
        if (o + len >= n)
            break;
        memcpy(out + o, piece, len);
        o += len;
    }
    out[o] = '\0';
}
