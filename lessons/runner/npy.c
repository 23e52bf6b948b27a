/* npy.c - header: magic "\x93NUMPY", version 1.0, a little-endian uint16 header length, then a Python dict
 * literal padded with spaces and a newline so that the data starts at a multiple of 64 bytes. */
#include "npy.h"

#include <errno.h>
#include <stdio.h>

int npy_write_stream(FILE *f, const void *data, dtype t, int ndim, const size_t *shape)
{
    char dict[256];
    int len =
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", dtype_npy_descr(t));
    size_t count = 1;
    for (int d = 0; d < ndim; d++) {
        len += snprintf(dict + len, sizeof dict - (size_t)len, "%zu%s", shape[d],
                        ndim == 1 ? "," : (d + 1 < ndim ? ", " : ""));
        count *= shape[d];
    }
    len += snprintf(dict + len, sizeof dict - (size_t)len, "), }");
    size_t preamble = 10; /* magic (6) + version (2) + header length (2) */
    size_t total = (preamble + (size_t)len + 1 + 63) / 64 * 64;
    size_t pad = total - preamble - (size_t)len - 1;

    unsigned short hlen = (unsigned short)(total - preamble);
    unsigned char head[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xff),
                              (unsigned char)(hlen >> 8)};
    int ok = fwrite(head, 1, sizeof head, f) == sizeof head && fwrite(dict, 1, (size_t)len, f) == (size_t)len;
    for (size_t i = 0; ok && i < pad; i++) ok = fputc(' ', f) != EOF;
    ok = ok && fputc('\n', f) != EOF;
    ok = ok && fwrite(data, dtype_size(t), count, f) == count;
    if (!ok && !errno) errno = EIO;
    return ok ? 0 : -1;
}

int npy_write(const char *path, const void *data, dtype t, int ndim, const size_t *shape)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    errno = 0;
    int err = npy_write_stream(f, data, t, ndim, shape) == 0 ? 0 : errno;
    /* a full disk shows here, when the buffer is written */
    if (fclose(f) != 0 && !err) err = errno ? errno : EIO;
    errno = err;
    return err ? -1 : 0;
}
