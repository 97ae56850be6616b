/* Calibration files: the cost-model coefficients that twoface-calibrate
 * measures and twoface-plan --calibration reads. Plain text, one
 *
 *     name = value  # unit
 *
 * line per coefficient (every name of tf_coeff_names must appear once),
 * provenance lines with the same syntax and free-text values (date, host,
 * ranks, threads_measured, mpi_library, transport, k_values, note), '#'
 * comment lines and blank lines. Anything else is an error naming the line. */
#ifndef TF_CALIB_FILE_H
#define TF_CALIB_FILE_H

#include <stdio.h>
#include "tf_coeffs.h"

/* The largest cache_bytes a file may give (1 PiB); times per unit are at
 * most 1 s. */
#define TF_CALIB_MAX_CACHE_BYTES 1125899906842624.0

#define TF_CALIB_NPROV 8
extern const char *const tf_calib_prov_keys[TF_CALIB_NPROV];

typedef struct {
    tf_coeffs coeffs;
    char prov[TF_CALIB_NPROV][512]; /* "" when absent; the note of a full run is about 280 bytes */
} tf_calibration;

int tf_calib_read(const char *path, tf_calibration *out);
/* Parses text already in memory; `name` appears in messages. */
int tf_calib_parse(const char *name, const char *text, tf_calibration *out);
/* Writes atomically (temporary file, then rename). */
int tf_calib_write(const char *path, const tf_calibration *c);

#endif
