/* lesson_output.c - .npy dumps and the allocation timeline of a lesson run. */
#define _DEFAULT_SOURCE /* dirent, access */
#include "lesson_output.h"

#include "../../kernels/runtime/bf16.h"
#include "track.h"
#include "npy.h"
#include "output_file.h"
#include "version.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The files this run's --dump wrote (their names in DIR) and how many replaced an earlier run's: after the
 * outputs are published, lesson_dump_report removes the stale ones beside them and says what it did. */
#define DUMP_MAX (LESSON_MAX_TENSORS * (LESSON_MAX_IMPLS + 1) + 1)
static char dump_written[DUMP_MAX][80];
static int dump_nwritten, dump_nreplaced;

/* DIR/<name> through an output_file (whole or absent), filled by fill(stream, ctx). */
static int dump_file(const char *dir, const char *name, int (*fill)(FILE *, const void *), const void *ctx)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (dump_nwritten < DUMP_MAX) snprintf(dump_written[dump_nwritten++], sizeof dump_written[0], "%s", name);
    dump_nreplaced += access(path, F_OK) == 0;
    output_file *f = output_open("--dump", path, 0);
    if (!f) return -1;
    fill(output_stream(f), ctx); /* a failed write shows in output_close, which names the file */
    return output_close(f);
}

typedef struct {
    const void *data;
    dtype type;
    int rank;
    size_t shape[LESSON_MAX_RANK];
} npy_array;

static int write_npy(FILE *f, const void *ctx)
{
    const npy_array *a = ctx;
    return npy_write_stream(f, a->data, a->type, a->rank, a->shape);
}

/* One tensor to DIR/<prefix>.<name>.npy as PyTorch's functions take it: bf16 widened to float32 (exact: every
 * bf16 is a float32), int32 to int64 (cross_entropy's targets, gather's indices), a scalar with shape ().
 * Widened copies live in a tracked scratch buffer. Prints one message naming the file on failure. */
static int dump_one(const lesson *L, const void *prob, const char *dir, const char *prefix, int i,
                    const void *data)
{
    const lesson_tensor *ts = &L->tensors[i];
    npy_array a = {data, ts->type, 0, {0}};
    size_t n = lesson_tensor_count(L, i, prob);
    a.rank = ts->scalar ? 0 : ts->shape(prob, a.shape);
    void *wide = NULL;
    if (a.type == DT_BF16) {
        float *w = host_alloc_array(n, DT_F32, "driver: bf16 tensor widened for --dump");
        for (size_t k = 0; k < n; k++) w[k] = bf16_to_f32(((const bf16 *)data)[k]);
        wide = w, a.type = DT_F32;
    } else if (a.type == DT_I32) {
        int64_t *w = host_alloc_array(n, DT_I64, "driver: int32 tensor widened for --dump");
        for (size_t k = 0; k < n; k++) w[k] = ((const int32_t *)data)[k];
        wide = w, a.type = DT_I64;
    }
    if (wide) a.data = wide;
    char name[160];
    snprintf(name, sizeof name, "%s.%s.npy", prefix, ts->name);
    int rc = dump_file(dir, name, write_npy, &a);
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
typedef struct {
    const lesson *L;
    const lesson_result *res;
    int n;
    const lesson_dump_meta *m;
} meta_ctx;

static int write_meta(FILE *f, const void *ctx)
{
    const meta_ctx *c = ctx;
    const lesson *L = c->L;
    const lesson_dump_meta *m = c->m;
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
    for (int k = 0, w = 0; k < c->n; k++) {
        if (!c->res[k].row.ran) continue;
        fprintf(f, "%s", w++ ? ", " : "");
        json_string(f, c->res[k].row.impl);
    }
    fprintf(
        f,
        "],\n  \"files\": \"input.<name>.npy for each input, <impl>.<name>.npy for each output and gradient; "
        "bf16 as float32, int32 as int64, a scalar with shape ()\"\n}\n");
    return ferror(f) ? -1 : 0;
}

int lesson_dump(const lesson *L, const void *prob, const char *dir, void *const *inputs,
                const lesson_result *res, int n, const lesson_dump_meta *meta)
{
    dump_nwritten = dump_nreplaced = 0;
    if (output_make_dir(dir) != 0) {
        fprintf(stderr, "%s: --dump %s is not a writable directory (%s)\n", L->program, dir, strerror(errno));
        return -1;
    }
    int err = 0; /* the first failure stops the dump: its files are all discarded (output_file.h) */
    for (int i = 0; i < lesson_ntensors(L) && !err; i++)
        if (inputs[i]) err = dump_one(L, prob, dir, "input", i, inputs[i]);
    for (int k = 0; k < n && !err; k++) {
        if (!res[k].row.ran) continue;
        for (int i = 0; i < lesson_ntensors(L) && !err; i++)
            if (res[k].result[i]) err = dump_one(L, prob, dir, res[k].row.impl, i, res[k].result[i]);
    }
    meta_ctx mc = {L, res, n, meta};
    if (!err) err = dump_file(dir, "meta.json", write_meta, &mc);
    return err ? -1 : 0;
}

/* A file of DIR an earlier run of this lesson wrote and this one did not: <input or an
 * implementation>.<x>.npy */
static int stale_dump_file(const lesson *L, const char *name)
{
    size_t len = strlen(name);
    if (len < 5 || strcmp(name + len - 4, ".npy") != 0) return 0;
    for (int w = 0; w < dump_nwritten; w++)
        if (strcmp(dump_written[w], name) == 0) return 0;
    const char *dot = strchr(name, '.');
    if (!dot || dot == name + len - 4) return 0;
    size_t plen = (size_t)(dot - name);
    if (plen == 5 && strncmp(name, "input", 5) == 0) return 1;
    int alias = lesson_cuda_alias_impl(L) >= 0 && plen == strlen(LESSON_CUDA_ALIAS);
    if (alias && strncmp(name, LESSON_CUDA_ALIAS, plen) == 0) return 1;
    for (int i = 0; i < lesson_nimpls(L); i++)
        if (strlen(L->impls[i].name) == plen && strncmp(name, L->impls[i].name, plen) == 0) return 1;
    return 0;
}

int lesson_dump_report(const lesson *L, const char *dir, FILE *report)
{
    char removed[4096] = "";
    int nremoved = 0, failed = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!stale_dump_file(L, e->d_name)) continue;
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (unlink(path) != 0) {
            fprintf(stderr, "%s: --dump: cannot remove %s, which an earlier run left: %s\n", L->program, path,
                    strerror(errno));
            failed = 1;
            continue;
        }
        size_t used = strlen(removed);
        snprintf(removed + used, sizeof removed - used, "%s%s", nremoved++ ? ", " : "", e->d_name);
    }
    if (d) closedir(d);
    fprintf(report, "\nwrote %d .npy files and meta.json to %s", dump_nwritten - 1, dir);
    if (dump_nreplaced) fprintf(report, " (replacing %d file%s of the same name%s)", dump_nreplaced,
                                dump_nreplaced == 1 ? "" : "s", dump_nreplaced == 1 ? "" : "s");
    if (nremoved)
        fprintf(report, "; removed %d an earlier run left that this run does not write: %s", nremoved,
                removed);
    fprintf(report, "\n");
    return failed ? -1 : 0;
}

/* --- timeline ------------------------------------------------------------------------------------------- */

static output_file *timeline_out;
static FILE *timeline;
static const char *timeline_impl;
static size_t timeline_seq;
static size_t timeline_base[MEM_DOMAINS]; /* live bytes when the run began: the driver's own buffers */

/* A relabel's label is "<old> -> <new>": the plot moves its bytes from one label to the other. */
static void observe(void *ctx, char kind, mem_domain d, const char *label, const char *from, size_t bytes,
                    size_t live)
{
    (void)ctx;
    /* the driver's result copies: not the run's memory */
    if (strncmp(label, "driver:", 7) == 0 && kind != 'r') {
        if (kind == 'a') timeline_base[d] += bytes;
        else timeline_base[d] -= bytes;
        return;
    }
    const char *event = kind == 'a' ? "alloc" : kind == 'f' ? "free" : "relabel";
    fprintf(timeline, "%s,%zu,%s,%s,\"%s%s%s\",%zu,%zu\n", timeline_impl, timeline_seq++, event,
            d == MEM_HOST ? "host" : "device", from ? from : "", from ? " -> " : "", label, bytes,
            live - timeline_base[d]);
}

int lesson_timeline_open(const char *path)
{
    timeline_out = output_open("--timeline", path, 0);
    if (!timeline_out) return -1;
    timeline = output_stream(timeline_out);
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

int lesson_timeline_close(int keep)
{
    output_file *f = timeline_out;
    timeline = NULL, timeline_out = NULL;
    return f && keep ? output_close(f) : 0;
}
