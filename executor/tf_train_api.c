/* The parts of include/twoface.h's "Training loops" section that need code. */
#include "tf_exec.h"

MPI_Comm tf_get_comm(const tf_handle *h) { return h->comm; }
