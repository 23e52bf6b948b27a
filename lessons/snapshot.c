/* snapshot.c - --snapshot FILE: the tracker's allocations and frees as a PyTorch memory snapshot (snapshot.h).
 *
 * The events are recorded while each implementation runs and the pickle is written once, at close. The record
 * lives in plain malloc'd memory on purpose: it is the tool's bookkeeping, not the lesson's, and an observer
 * that called host_alloc would re-enter the tracker it observes. */
#include "snapshot.h"

#include "../kernels/runtime/track.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    unsigned char domain;    /* MEM_HOST or MEM_DEVICE: device_traces[domain] */
    char kind;               /* 'a' alloc, 'f' free */
    size_t bytes;            /* the tracker's exact bytes */
    uint64_t addr;           /* the viewer's address (below) */
    const char *label;       /* the tracker's label (it keeps every label for the program's life) */
    const char *impl;        /* the implementation that ran */
    size_t seq;              /* event number within the implementation's run */
    const char *file;        /* the allocating call's source file (a string literal, __FILE__), NULL if unknown */
    int line;                /* and its line; a free repeats its allocation's site */
} snap_event;

typedef struct {
    const void *ptr;         /* the process's address, to pair a free with its allocation */
    uint64_t addr;           /* the viewer's address given at allocation */
    unsigned char domain;
    const char *file;        /* the allocation's site, for the free's frame */
    int line;
} snap_live;

/* One segment per domain; every block gets the next 512-byte-aligned range (PyTorch's smallest block) and no
 * range is reused, so each block keeps one place in the viewer's segment view. */
static const uint64_t segment_base[MEM_DOMAINS] = {(uint64_t)1 << 32, (uint64_t)1 << 44};
#define BLOCK_ALIGN 512u

static FILE *out;
static const char *out_path, *program_name, *run_impl;
static snap_event *events;
static size_t nevents, cap_events, run_seq;
static snap_live *live;
static size_t nlive, cap_live;
static uint64_t next_addr[MEM_DOMAINS];
static track_observer chained;
static void *chained_ctx;
static int out_of_memory;

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

static uint64_t take_addr(mem_domain d, const void *ptr, size_t bytes, const char *file, int line)
{
    uint64_t a = segment_base[d] + next_addr[d];
    size_t span = bytes ? (bytes + BLOCK_ALIGN - 1) / BLOCK_ALIGN * BLOCK_ALIGN : BLOCK_ALIGN;
    next_addr[d] += span;
    if (grow((void **)&live, &cap_live, nlive + 1, sizeof *live) == 0)
        live[nlive++] = (snap_live){.ptr = ptr, .addr = a, .domain = (unsigned char)d, .file = file, .line = line};
    return a;
}

/* The viewer's address of a live block (and its allocation's site), removed from the live list; the newest
 * first (a free usually follows its allocation closely). */
static uint64_t give_addr(mem_domain d, const void *ptr, const char **file, int *line)
{
    for (size_t i = nlive; i-- > 0;) {
        if (live[i].ptr != ptr || live[i].domain != d) continue;
        uint64_t a = live[i].addr;
        *file = live[i].file;
        *line = live[i].line;
        live[i] = live[--nlive];
        return a;
    }
    return 0; /* allocated before the run began: not in this snapshot */
}

static void observe(void *ctx, char kind, mem_domain d, const char *label, const char *from, size_t bytes,
                    size_t live_bytes)
{
    (void)ctx;
    if (chained) chained(chained_ctx, kind, d, label, from, bytes, live_bytes);
    if (kind == 'r' || strncmp(label, "driver:", 7) == 0) return; /* no bytes move / not the run's memory */
    const void *ptr = track_event_ptr();
    int line = 0;
    const char *file = kind == 'a' ? track_event_site(&line) : NULL;
    uint64_t addr = kind == 'a' ? take_addr(d, ptr, bytes, file, line) : give_addr(d, ptr, &file, &line);
    if (!addr || grow((void **)&events, &cap_events, nevents + 1, sizeof *events) != 0) return;
    events[nevents++] = (snap_event){.domain = (unsigned char)d, .kind = kind, .bytes = bytes, .addr = addr,
                                     .label = label, .impl = run_impl, .seq = run_seq++, .file = file,
                                     .line = line};
}

int snapshot_open(const char *program, const char *path)
{
    out = fopen(path, "wb");
    if (!out) {
        fprintf(stderr, "%s: cannot write --snapshot %s: %s\n", program, path, strerror(errno));
        return -1;
    }
    out_path = path;
    program_name = program;
    return 0;
}

void snapshot_begin(const char *program, const char *impl)
{
    (void)program;
    if (!out) return;
    run_impl = impl;
    run_seq = 0;
    chained = track_get_observer(&chained_ctx);
    track_set_observer(observe, NULL);
}

void snapshot_end(void)
{
    if (!out) return;
    track_set_observer(chained, chained_ctx);
    chained = NULL;
    nlive = 0; /* blocks still live belong to the driver now (results it keeps): their frees are not the run's */
}

/* ---- the pickle: protocol 2, the opcodes MemoryViz.js's unpickler knows --------------------------------- */

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

/* frames, innermost first as PyTorch writes them: the allocating call (the tracker's label as the function, its
 * source file and line), then the run (the implementation, the event number as the line). The viewer shows them
 * as a stack: "optimized/maxsim_fused.c:125 out (I,M) f32" over "build/lesson3 --impl cpu:4". */
static void trace_entry(const snap_event *e, const char *action)
{
    char run[256];
    snprintf(run, sizeof run, "%s --impl %s", program_name, e->impl);
    pk_dict_begin();
    pk_key_str("action", action);
    pk_key_int("addr", (int64_t)e->addr);
    pk_key_int("size", (int64_t)e->bytes);
    pk_key_int("stream", 0);
    pk_str("frames");
    fputs("](", out);
    frame(e->label, e->file ? e->file : "(registered without a site)", e->line);
    frame(e->impl, run, (int64_t)e->seq);
    pk_list_end();
    pk_dict_end();
}

/* device_traces[d]: an allocation is one entry, a free two (free_requested, then free_completed), as PyTorch
 * records a free; the viewer folds the pair into one 'free'. */
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
        trace_entry(e, e->kind == 'a' ? "alloc" : "free_completed");
        pk_item_done(&batch);
    }
    pk_list_end();
}

/* The segment of a domain that allocated anything: all of it free at the end (every block was freed), so it
 * holds one inactive block as long as itself. */
static void segment(mem_domain d)
{
    int64_t span = (int64_t)next_addr[d];
    pk_dict_begin();
    pk_key_int("device", d);
    pk_key_int("address", (int64_t)segment_base[d]);
    pk_key_int("total_size", span);
    pk_key_int("allocated_size", 0);
    pk_key_int("active_size", 0);
    pk_key_int("requested_size", 0);
    pk_key_int("stream", 0);
    pk_key_str("segment_type", "large");
    pk_str("blocks");
    fputs("](", out);
    pk_dict_begin();
    pk_key_int("size", span);
    pk_key_int("requested_size", 0);
    pk_key_str("state", "inactive");
    pk_str("frames");
    fputc(']', out);
    pk_dict_end();
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
    for (int d = 0; d < MEM_DOMAINS; d++)
        if (next_addr[d]) segment((mem_domain)d);
    pk_list_end();
    pk_str("device_traces");
    pk_list_begin(&batch);
    for (int d = 0; d < MEM_DOMAINS; d++) device_trace((mem_domain)d);
    pk_list_end();
    pk_dict_end();
    fputc('.', out); /* STOP */
}

int snapshot_close(void)
{
    if (!out) return 0;
    write_snapshot();
    int failed = ferror(out) | (fclose(out) != 0) | out_of_memory;
    if (failed) fprintf(stderr, "%s: could not write --snapshot %s%s\n", program_name, out_path,
                        out_of_memory ? " (out of memory recording the events)" : "");
    out = NULL;
    free(events);
    free(live);
    events = NULL, live = NULL;
    nevents = cap_events = nlive = cap_live = 0;
    memset(next_addr, 0, sizeof next_addr);
    return failed ? -1 : 0;
}
