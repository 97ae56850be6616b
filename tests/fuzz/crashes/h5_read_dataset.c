/* Reads one dataset with nothing but HDF5: shows the over-read is HDF5's. */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    if (argc != 3) { fprintf(stderr, "usage: %s FILE DATASET\n", argv[0]); return 2; }
    hid_t f = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, argv[2], H5P_DEFAULT);
    hid_t s = H5Dget_space(d);
    hssize_t n = H5Sget_simple_extent_npoints(s);
    float *buf = malloc((size_t)n * sizeof *buf);
    herr_t e = H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
    printf("H5Dread of %lld elements: %d\n", (long long)n, (int)e);
    free(buf); H5Sclose(s); H5Dclose(d); H5Fclose(f);
    return 0;
}
