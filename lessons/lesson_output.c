/* lesson_output.c - .npy dumps and the allocation timeline of a lesson run. */
#include "lesson_output.h"

#include "../kernels/runtime/bf16.h"
#include "../kernels/runtime/track.h"
#include "npy.h"
#include "version.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* One tensor to DIR/<prefix>.<name>.npy as PyTorch's functions take it: bf16 widened to float32 (exact: every
 * bf16 is a float32), int32 to int64 (cross_entropy's targets, gather's indices), a scalar with shape ().
 * Widened copies live in a tracked scratch buffer. Prints one message naming the file on failure. */
static int dump_one(const lesson *L, const void *prob, const char *dir, const char *prefix, int i, const void *data)
{
    const lesson_tensor *ts = &L->tensors[i];
    size_t shape[LESSON_MAX_RANK], n = lesson_tensor_count(L, i, prob);
    int rank = ts->scalar ? 0 : ts->shape(prob, shape);
    void *wide = NULL;
    dtype t = ts->type;
    if (t == DT_BF16) {
        float *w = host_alloc_array(n, DT_F32, "driver: bf16 tensor widened for --dump");
        for (size_t k = 0; k < n; k++) w[k] = bf16_to_f32(((const bf16 *)data)[k]);
        wide = w, t = DT_F32;
    } else if (t == DT_I32) {
        int64_t *w = host_alloc_array(n, DT_I64, "driver: int32 tensor widened for --dump");
        for (size_t k = 0; k < n; k++) w[k] = ((const int32_t *)data)[k];
        wide = w, t = DT_I64;
    }
    int rc = npy_dump(dir, prefix, ts->name, wide ? wide : data, t, rank, shape);
    if (rc != 0)
        fprintf(stderr, "%s: --dump: writing %s/%s.%s.npy failed: %s\n", L->program, dir, prefix, ts->name,
                strerror(errno));
    if (wide) host_free(wide);
    return rc;
}

/* A JSON string of a name (letters, digits, "-_=,."): quotes and backslashes escaped all the same. */
static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        if ((unsigned char)*s >= 0x20) fputc(*s, f);
    }
    fputc('"', f);
}

/* DIR/meta.json: what the arrays beside it are - the lesson, its dims and options, the seed, the versions and
 * the implementations whose outputs were written. */
static int write_meta(const lesson *L, const char *dir, const lesson_result *res, int n, const lesson_dump_meta *m)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/meta.json", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "%s: --dump: cannot write %s: %s\n", L->program, path, strerror(errno));
        return -1;
    }
    fprintf(f, "{\n  \"program\": ");
    json_string(f, L->program);
    fprintf(f, ",\n  \"lesson\": %d,\n  \"version\": ", L->number);
    json_string(f, LESSON_VERSION);
    fprintf(f, ",\n  \"git_describe\": ");
    json_string(f, LESSON_GIT_DESCRIBE);
    fprintf(f, ",\n  \"size\": ");
    json_string(f, m->size);
    fprintf(f, ",\n  \"dims\": {");
    for (int d = 0; d < lesson_ndims(L); d++) {
        fprintf(f, "%s", d ? ", " : "");
        json_string(f, L->dim_names[d]);
        fprintf(f, ": %lld", m->dims[d]);
    }
    fprintf(f, "},\n  \"options\": {");
    for (int k = 0; k < lesson_nopts(L); k++) {
        fprintf(f, "%s", k ? ", " : "");
        json_string(f, L->opts[k].flag);
        fprintf(f, ": %lld", m->opts[k]);
    }
    fprintf(f, "},\n  \"seed\": %llu,\n  \"impls\": [", (unsigned long long)m->seed);
    for (int k = 0, w = 0; k < n; k++) {
        if (!res[k].row.ran) continue;
        fprintf(f, "%s", w++ ? ", " : "");
        json_string(f, res[k].row.impl);
    }
    fprintf(f, "],\n  \"files\": \"input.<name>.npy for each input, <impl>.<name>.npy for each output and gradient; "
               "bf16 as float32, int32 as int64, a scalar with shape ()\"\n}\n");
    int lost = ferror(f);
    if (fclose(f) != 0 || lost) {
        fprintf(stderr, "%s: --dump: writing %s failed: %s\n", L->program, path, strerror(errno ? errno : EIO));
        return -1;
    }
    return 0;
}

int lesson_dump(const lesson *L, const void *prob, const char *dir, void *const *inputs, const lesson_result *res,
                int n, const lesson_dump_meta *meta)
{
    if (npy_make_dir(dir) != 0) {
        fprintf(stderr, "%s: --dump %s is not a writable directory (%s)\n", L->program, dir, strerror(errno));
        return -1;
    }
    int err = 0;
    for (int i = 0; i < lesson_ntensors(L); i++)
        if (inputs[i]) err |= dump_one(L, prob, dir, "input", i, inputs[i]);
    for (int k = 0; k < n; k++) {
        if (!res[k].row.ran) continue;
        for (int i = 0; i < lesson_ntensors(L); i++)
            if (res[k].result[i]) err |= dump_one(L, prob, dir, res[k].row.impl, i, res[k].result[i]);
    }
    err |= write_meta(L, dir, res, n, meta);
    return err ? -1 : 0;
}

/* --- timeline ------------------------------------------------------------------------------------------- */

static FILE *timeline;
static const char *timeline_program, *timeline_path;
static const char *timeline_impl;
static size_t timeline_seq;
static size_t timeline_base[MEM_DOMAINS]; /* live bytes when the run began: the driver's own buffers */

/* A relabel's label is "<old> -> <new>": the plot moves its bytes from one label to the other. */
static void observe(void *ctx, char kind, mem_domain d, const char *label, const char *from, size_t bytes,
                    size_t live)
{
    (void)ctx;
    if (strncmp(label, "driver:", 7) == 0 && kind != 'r') { /* the driver's result copies: not the run's memory */
        if (kind == 'a') timeline_base[d] += bytes;
        else timeline_base[d] -= bytes;
        return;
    }
    const char *event = kind == 'a' ? "alloc" : kind == 'f' ? "free" : "relabel";
    fprintf(timeline, "%s,%zu,%s,%s,\"%s%s%s\",%zu,%zu\n", timeline_impl, timeline_seq++, event,
            d == MEM_HOST ? "host" : "device", from ? from : "", from ? " -> " : "", label, bytes,
            live - timeline_base[d]);
}

int lesson_timeline_open(const char *program, const char *path)
{
    timeline = fopen(path, "w");
    timeline_program = program, timeline_path = path;
    if (!timeline) {
        fprintf(stderr, "%s: cannot write --timeline %s: %s\n", program, path, strerror(errno));
        return -1;
    }
    fputs("impl,seq,event,domain,label,bytes,live_bytes\n", timeline);
    return 0;
}

void lesson_timeline_begin(const char *program, const char *impl)
{
    (void)program;
    if (!timeline) return;
    timeline_impl = impl;
    timeline_seq = 0;
    for (int d = 0; d < MEM_DOMAINS; d++) timeline_base[d] = track_counters((mem_domain)d).live_bytes;
    track_set_observer(observe, NULL);
}

void lesson_timeline_mark(const char *what)
{
    if (!timeline || !timeline_impl) return;
    fprintf(timeline, "%s,%zu,mark,,\"%s\",0,\n", timeline_impl, timeline_seq++, what);
}

void lesson_timeline_end(void)
{
    track_set_observer(NULL, NULL);
    timeline_impl = NULL;
}

int lesson_timeline_close(void)
{
    if (!timeline) return 0;
    int lost = ferror(timeline), closed = fclose(timeline);
    timeline = NULL;
    if (!lost && closed == 0) return 0;
    fprintf(stderr, "%s: writing --timeline %s failed: %s\n", timeline_program, timeline_path,
            strerror(errno ? errno : EIO));
    return -1;
}
