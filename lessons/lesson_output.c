/* lesson_output.c - .npy dumps and the allocation timeline of a lesson run. */
#include "lesson_output.h"

#include "../kernels/runtime/bf16.h"
#include "../kernels/runtime/track.h"
#include "npy.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* One tensor to DIR/<prefix>.<name>.npy; bf16 widened to float32 in a tracked scratch buffer. */
static int dump_one(const lesson *L, const void *prob, const char *dir, const char *prefix, int i, const void *data)
{
    const lesson_tensor *ts = &L->tensors[i];
    size_t shape[LESSON_MAX_RANK];
    int rank = ts->shape(prob, shape);
    if (ts->type != DT_BF16) return npy_dump(dir, prefix, ts->name, data, ts->type, rank, shape);
    size_t n = lesson_tensor_count(L, i, prob);
    float *wide = host_alloc_array(n, DT_F32, "driver: bf16 tensor widened for --dump");
    const bf16 *h = data;
    for (size_t k = 0; k < n; k++) wide[k] = bf16_to_f32(h[k]);
    int rc = npy_dump(dir, prefix, ts->name, wide, DT_F32, rank, shape);
    host_free(wide);
    return rc;
}

int lesson_dump(const lesson *L, const void *prob, const char *dir, void *const *inputs, const lesson_result *res,
                int n)
{
    if (npy_make_dir(dir) != 0) return -1;
    int err = 0;
    for (int i = 0; i < lesson_ntensors(L); i++)
        if (inputs[i]) err |= dump_one(L, prob, dir, "input", i, inputs[i]);
    for (int k = 0; k < n; k++) {
        if (!res[k].row.ran) continue;
        for (int i = 0; i < lesson_ntensors(L); i++)
            if (res[k].result[i]) err |= dump_one(L, prob, dir, res[k].row.impl, i, res[k].result[i]);
    }
    return err ? -1 : 0;
}

/* --- timeline ------------------------------------------------------------------------------------------- */

static FILE *timeline;
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

void lesson_timeline_close(void)
{
    if (timeline) fclose(timeline);
    timeline = NULL;
}
