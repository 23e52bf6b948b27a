/* snapshot.c - --snapshot FILE: the tracker's allocations and frees as a PyTorch memory snapshot
 * (snapshot.h).
 *
 * The events are recorded while each implementation runs and the pickle is written once, at close. The record
 * lives in plain malloc'd memory on purpose: it is the tool's bookkeeping, not the lesson's, and an observer
 * that called host_alloc would re-enter the tracker it observes. */
#include "snapshot.h"
#include "snapshot_allocator.h"
#include "output_file.h"

#include "track.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    unsigned char domain;    /* MEM_HOST or MEM_DEVICE: device_traces[domain] */
    char kind;               /* 'a' alloc, 'f' free, 's' segment_alloc, 'S' segment_free */
    size_t bytes;            /* the tracker's exact bytes; a segment's size */
    uint64_t addr;           /* the viewer's address (snapshot_allocator.h) */
    const char *label;       /* the tracker's label (it keeps every label for the program's life) */
    const char *impl;        /* the implementation that ran */
    const char *run_file;    /* where the driver began its run (snapshot_begin's call) */
    int run_line;
    /* the allocating call's source file (a string literal, __FILE__), NULL if unknown */
    const char *file;
    int line;                /* and its line; a free repeats its allocation's site */
} snap_event;

typedef struct {
    const void *ptr;         /* the process's address, to pair a free with its allocation */
    sa_block *block;         /* where the caching allocator put it */
    unsigned char domain;
} snap_live;

static output_file *out_file;
static FILE *out;
static const char *program_name, *run_impl, *run_file;
static int run_line;
static snap_event *events;
static size_t nevents, cap_events;
static snap_live *live;
static size_t nlive, cap_live;
static track_observer chained;
static void *chained_ctx;
static int out_of_memory, runs;

static int grow(void **buf, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    size_t n = *cap ? 2 * *cap : 1024;
    void *b = realloc(*buf, n * elem);
    if (!b) return out_of_memory = -1;
    *buf = b;
    *cap = n;
    return 0;
}

static snap_event *add_event(snap_event e)
{
    if (grow((void **)&events, &cap_events, nevents + 1, sizeof *events) != 0) return NULL;
    e.impl = run_impl;
    e.run_file = run_file, e.run_line = run_line;
    events[nevents] = e;
    return &events[nevents++];
}

static void record_alloc(mem_domain d, const void *ptr, size_t bytes, const char *label)
{
    int line = 0;
    const char *file = track_event_site(&line);
    size_t seg;
    sa_block *b = sa_malloc((int)d, bytes, &seg);
    if (!b || grow((void **)&live, &cap_live, nlive + 1, sizeof *live) != 0) {
        out_of_memory = -1;
        return;
    }
    if (seg != (size_t)-1) { /* PyTorch records the cudaMalloc before the block it was made for */
        const sa_segment *g = &sa_segments(&(size_t){0})[seg];
        add_event((snap_event){.domain = (unsigned char)d, .kind = 's', .bytes = g->size, .addr = g->addr,
                               .label = label, .file = file, .line = line});
    }
    b->event = nevents;
    add_event((snap_event){.domain = (unsigned char)d, .kind = 'a', .bytes = bytes, .addr = b->addr,
                           .label = label, .file = file, .line = line});
    live[nlive++] = (snap_live){.ptr = ptr, .block = b, .domain = (unsigned char)d};
}

/* A free of a live block (the newest first: a free usually follows its allocation closely); one allocated
 * before the run began is not in this snapshot. */
static void record_free(mem_domain d, const void *ptr, size_t bytes, const char *label)
{
    for (size_t i = nlive; i-- > 0;) {
        if (live[i].ptr != ptr || live[i].domain != d) continue;
        sa_block *b = live[i].block;
        live[i] = live[--nlive];
        if (b->event < nevents) {
            const snap_event *a = &events[b->event];
            add_event((snap_event){.domain = (unsigned char)d, .kind = 'f', .bytes = bytes, .addr = b->addr,
                                   .label = label, .file = a->file, .line = a->line});
        }
        sa_free(b);
        return;
    }
}

static void observe(void *ctx, char kind, mem_domain d, const char *label, const char *from, size_t bytes,
                    size_t live_bytes)
{
    (void)ctx;
    if (chained) chained(chained_ctx, kind, d, label, from, bytes, live_bytes);
    if (kind == 'r' || strncmp(label, "driver:", 7) == 0) return; /* no bytes move / not the run's memory */
    if (kind == 'a') record_alloc(d, track_event_ptr(), bytes, label);
    else record_free(d, track_event_ptr(), bytes, label);
}

static void segment_released(void *ctx, size_t s)
{
    const sa_segment *g = &sa_segments(&(size_t){0})[s];
    (void)ctx;
    add_event((snap_event){.domain = (unsigned char)g->domain, .kind = 'S', .bytes = g->size, .addr = g->addr,
                           .label = "torch.cuda.empty_cache()"});
}

int snapshot_open(const char *program, const char *path)
{
    out_file = output_open("--snapshot", path, 0);
    if (!out_file) return -1;
    out = output_stream(out_file);
    program_name = program;
    return 0;
}

void snapshot_begin_at(const char *impl, const char *file, int line)
{
    if (!out) return;
    run_impl = impl;
    run_file = file, run_line = line;
    /* each implementation starts from an empty cache, as after torch.cuda.empty_cache(): its segments are its
     * own; the last one's stay reserved, as PyTorch keeps them, and are the snapshot's segments */
    if (runs++)
        for (int d = 0; d < MEM_DOMAINS; d++) sa_empty_cache(d, segment_released, NULL);
    chained = track_get_observer(&chained_ctx);
    track_set_observer(observe, NULL);
}

void snapshot_end(void)
{
    if (!out) return;
    track_set_observer(chained, chained_ctx);
    chained = NULL;
    /* blocks still live belong to the driver now (results it keeps): their frees are not the run's */
    nlive = 0;
}

/* ---- the pickle: protocol 2, the opcodes MemoryViz.js's unpickler knows -------------------------------- */

static void put_le(uint64_t v, int n)
{
    for (int i = 0; i < n; i++) fputc((int)((v >> (8 * i)) & 0xff), out);
}

static void pk_int(int64_t v)
{
    if (v >= INT32_MIN && v <= INT32_MAX) {
        fputc('J', out); /* BININT: 4-byte signed */
        put_le((uint64_t)(int32_t)v, 4);
    } else {
        fputc(0x8a, out); /* LONG1: n-byte two's complement */
        fputc(8, out);
        put_le((uint64_t)v, 8);
    }
}

static void pk_str(const char *s)
{
    size_t n = strlen(s);
    fputc('X', out); /* BINUNICODE: 4-byte length, UTF-8 */
    put_le(n, 4);
    fwrite(s, 1, n, out);
}

static void pk_dict_begin(void) { fputs("}(", out); } /* EMPTY_DICT, MARK */
static void pk_dict_end(void) { fputc('u', out); }     /* SETITEMS */
static void pk_key_int(const char *k, int64_t v) { pk_str(k); pk_int(v); }
static void pk_key_str(const char *k, const char *v) { pk_str(k); pk_str(v); }

/* A list's items go in batches of 1000 per APPENDS, as Python's pickler does (one MARK over 100,000 items
 * would spread them all as one JavaScript call's arguments). */
static void pk_list_begin(size_t *batch) { fputs("](", out); *batch = 0; } /* EMPTY_LIST, MARK */
static void pk_list_end(void) { fputc('e', out); }                          /* APPENDS */
static void pk_item_done(size_t *batch)
{
    if (++*batch == 1000) {
        fputs("e(", out);
        *batch = 0;
    }
}

static void frame(const char *name, const char *filename, int64_t line)
{
    pk_dict_begin();
    pk_key_str("name", name);
    pk_key_str("filename", filename);
    pk_key_int("line", line);
    pk_dict_end();
}

/* frames, innermost first as PyTorch writes them (the viewer shows each as filename:line:name): the
 * allocating call (its source file and line, the tracker's label as the function), then the run (where the
 * driver began it, "<program> --impl <impl>" as the function): "optimized/maxsim_fused.c:125:out (I,M) f32"
 * over "lessons/runner/lesson_main.c:301:lesson3 --impl cpu". */
static void frames(const snap_event *e)
{
    char run[256];
    snprintf(run, sizeof run, "%s --impl %s", program_name, e->impl);
    pk_str("frames");
    fputs("](", out);
    if (e->kind != 'S') frame(e->label, e->file ? e->file : "(registered without a site)", e->line);
    frame(run, e->run_file ? e->run_file : "(run without a site)", e->run_line);
    pk_list_end();
}

static void trace_entry(const snap_event *e, const char *action)
{
    pk_dict_begin();
    pk_key_str("action", action);
    pk_key_int("addr", (int64_t)e->addr);
    pk_key_int("size", (int64_t)e->bytes);
    pk_key_int("stream", 0);
    frames(e);
    pk_dict_end();
}

/* device_traces[d]: an allocation is one entry, a free two (free_requested, then free_completed), as PyTorch
 * records a free; the viewer folds the pair into one 'free'. A segment's reservation (segment_alloc, just
 * before the allocation that needed it) and release (segment_free, empty_cache before the next
 * implementation) are one entry each. */
static void device_trace(mem_domain d)
{
    size_t batch;
    pk_list_begin(&batch);
    for (size_t i = 0; i < nevents; i++) {
        const snap_event *e = &events[i];
        if (e->domain != d) continue;
        if (e->kind == 'f') {
            trace_entry(e, "free_requested");
            pk_item_done(&batch);
        }
        trace_entry(e, e->kind == 'a' ? "alloc" : e->kind == 'f' ? "free_completed"
                       : e->kind == 's' ? "segment_alloc" : "segment_free");
        pk_item_done(&batch);
    }
    pk_list_end();
}

/* A segment the caching allocator still holds at the end, block by block as torch.cuda.memory._snapshot()
 * lists it: an allocated block is 'active_allocated' with its request and its allocation's frames, a free one
 * 'inactive'. The segment's allocated_size and active_size add up its allocated blocks, requested_size their
 * requests. */
static void segment(const sa_segment *g)
{
    size_t allocated = 0, requested = 0, batch;
    for (const sa_block *b = g->first; b; b = b->next)
        if (b->allocated) allocated += b->size, requested += b->requested;
    pk_dict_begin();
    pk_key_int("device", g->domain);
    pk_key_int("address", (int64_t)g->addr);
    pk_key_int("total_size", (int64_t)g->size);
    pk_key_int("allocated_size", (int64_t)allocated);
    pk_key_int("active_size", (int64_t)allocated);
    pk_key_int("requested_size", (int64_t)requested);
    pk_key_int("stream", 0);
    pk_key_str("segment_type", g->small ? "small" : "large");
    pk_str("blocks");
    pk_list_begin(&batch);
    for (const sa_block *b = g->first; b; b = b->next) {
        pk_dict_begin();
        pk_key_int("address", (int64_t)b->addr);
        pk_key_int("size", (int64_t)b->size);
        pk_key_int("requested_size", (int64_t)b->requested);
        pk_key_str("state", b->allocated ? "active_allocated" : "inactive");
        if (b->allocated && b->event < nevents) {
            frames(&events[b->event]);
        } else {
            pk_str("frames");
            fputc(']', out); /* EMPTY_LIST */
        }
        pk_dict_end();
        pk_item_done(&batch);
    }
    pk_list_end();
    pk_dict_end();
}

static void write_snapshot(void)
{
    size_t batch;
    fputs("\x80\x02", out); /* PROTO 2 */
    pk_dict_begin();
    pk_str("segments");
    pk_list_begin(&batch);
    size_t nseg;
    const sa_segment *segs = sa_segments(&nseg);
    for (size_t i = 0; i < nseg; i++) {
        if (segs[i].released) continue;
        segment(&segs[i]);
        pk_item_done(&batch);
    }
    pk_list_end();
    pk_str("device_traces");
    pk_list_begin(&batch);
    for (int d = 0; d < MEM_DOMAINS; d++) device_trace((mem_domain)d);
    pk_list_end();
    pk_dict_end();
    fputc('.', out); /* STOP */
}

int snapshot_close(int keep)
{
    if (!out) return 0;
    int failed = 0;
    if (keep) {
        write_snapshot();
        if (out_of_memory)
            fprintf(stderr, "%s: could not write --snapshot: out of memory recording the events\n",
                    program_name);
        failed = out_of_memory ? -1 : output_close(out_file); /* output_close names the file when it fails */
    }
    out = NULL, out_file = NULL;
    free(events);
    free(live);
    events = NULL, live = NULL;
    nevents = cap_events = nlive = cap_live = 0;
    out_of_memory = 0;
    sa_reset();
    runs = 0;
    return failed ? -1 : 0;
}
