#include "tf_dcsr.h"

#include <string.h>

void tf_dcsr_free(tf_dcsr *d)
{
    tf_csr_free(&d->loc);
    memset(d, 0, sizeof *d);
}
