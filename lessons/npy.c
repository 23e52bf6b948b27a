/* npy.c - header: magic "\x93NUMPY", version 1.0, a little-endian uint16 header length, then a Python dict
 * literal padded with spaces and a newline so that the data starts at a multiple of 64 bytes. */
#include "npy.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int npy_write(const char *path, const void *data, dtype t, int ndim, const size_t *shape)
{
    char dict[256];
    int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", dtype_npy_descr(t));
    size_t count = 1;
    for (int d = 0; d < ndim; d++) {
        len += snprintf(dict + len, sizeof dict - (size_t)len, "%zu%s", shape[d], ndim == 1 ? "," : (d + 1 < ndim ? ", " : ""));
        count *= shape[d];
    }
    len += snprintf(dict + len, sizeof dict - (size_t)len, "), }");
    size_t preamble = 10; /* magic (6) + version (2) + header length (2) */
    size_t total = (preamble + (size_t)len + 1 + 63) / 64 * 64;
    size_t pad = total - preamble - (size_t)len - 1;

    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    unsigned short hlen = (unsigned short)(total - preamble);
    unsigned char head[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xff),
                              (unsigned char)(hlen >> 8)};
    int ok = fwrite(head, 1, sizeof head, f) == sizeof head && fwrite(dict, 1, (size_t)len, f) == (size_t)len;
    for (size_t i = 0; ok && i < pad; i++) ok = fputc(' ', f) != EOF;
    ok = ok && fputc('\n', f) != EOF;
    ok = ok && fwrite(data, dtype_size(t), count, f) == count;
    int err = ok ? 0 : errno;
    if (fclose(f) != 0 && !err) err = errno ? errno : EIO; /* a full disk shows here, when the buffer is written */
    if (!ok && !err) err = EIO;
    errno = err;
    return err ? -1 : 0;
}

int npy_make_dir(const char *dir)
{
    char buf[4096];
    if (strlen(dir) >= sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(buf, dir);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST) return -1;
            *p = c;
            if (!c) break;
        }
    }
    struct stat st;
    if (stat(dir, &st) != 0) return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

int npy_dump(const char *dir, const char *prefix, const char *name, const void *data, dtype t, int ndim,
             const size_t *shape)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.%s.npy", dir, prefix, name);
    return npy_write(path, data, t, ndim, shape);
}
