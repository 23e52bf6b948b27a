/* track.c - registry of live allocations (an open-addressing hash table keyed by pointer) and counters.
 *
 * Lesson 4 allocates thousands of small tensors per step, so lookups must be O(1): linear probing with
 * backward-shift deletion (no tombstones, so a long step loop never degrades the table). */
#define _GNU_SOURCE /* mmap's MAP_ANONYMOUS, MAP_NORESERVE; program_invocation_short_name for the messages */
#include <errno.h>
#include "track.h"
#include "timer.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MAX_LABELS 256

typedef struct {
    const char *name; /* interned: labels are string literals or outlive the program's allocations */
    size_t live, peak, allocs;
    /* allocated into or relabelled to since the scope began: printed by track_print_labels */
    int touched;
} label_stats;

typedef struct {
    uintptr_t key; /* 0 = empty slot */
    size_t bytes;
    unsigned short label;
    unsigned char domain;
} slot;

static slot *table;
static size_t table_cap, table_used;
static mem_counters counters[MEM_DOMAINS];
static label_stats labels[MEM_DOMAINS][MAX_LABELS];
static int nlabels[MEM_DOMAINS];
static int poison_on = 1;
static double alloc_ms;
static track_observer observer;
static void *observer_ctx;
static const void *event_ptr; /* the buffer the observer is being told about (track_event_ptr) */
static const char *site_file; /* the host_alloc / dev_alloc call being registered (track_event_site) */
static int site_line;

double track_alloc_ms(void) { return alloc_ms; }
void track_add_alloc_ms(double ms) { alloc_ms += ms; }

const void *track_event_ptr(void) { return event_ptr; }

track_observer track_get_observer(void **ctx)
{
    *ctx = observer_ctx;
    return observer;
}

void track_set_observer(track_observer fn, void *ctx)
{
    observer = fn;
    observer_ctx = ctx;
}

static void notify(char kind, mem_domain d, unsigned short label, unsigned short from, size_t bytes);

static void die(const char *what, const void *p)
{
    fprintf(stderr, "track: %s (pointer %p)\n", what, p);
    abort();
}

static size_t hash_ptr(uintptr_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return (size_t)k;
}

static void table_insert_raw(slot s)
{
    size_t i = hash_ptr(s.key) & (table_cap - 1);
    while (table[i].key) i = (i + 1) & (table_cap - 1);
    table[i] = s;
}

static void table_grow(void)
{
    slot *old = table;
    size_t old_cap = table_cap;
    table_cap = table_cap ? table_cap * 2 : 1024;
    /* The registry's own memory is bookkeeping, not a tensor: it is allocated untracked. */
    table = calloc(table_cap, sizeof *table);
    if (!table) die("out of memory growing the allocation registry", NULL);
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].key) table_insert_raw(old[i]);
    free(old);
}

static size_t table_find(mem_domain d, uintptr_t key)
{
    if (!table_cap) return SIZE_MAX;
    size_t i = hash_ptr(key) & (table_cap - 1);
    while (table[i].key) {
        if (table[i].key == key && table[i].domain == d) return i;
        i = (i + 1) & (table_cap - 1);
    }
    return SIZE_MAX;
}

static void table_remove_at(size_t i)
{
    /* backward-shift deletion: pull later members of the probe run into the hole */
    size_t hole = i, j = i;
    for (;;) {
        j = (j + 1) & (table_cap - 1);
        if (!table[j].key) break;
        size_t home = hash_ptr(table[j].key) & (table_cap - 1);
        /* j may move to hole only if its home is not in (hole, j] cyclically */
        int between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!between) {
            table[hole] = table[j];
            hole = j;
        }
    }
    table[hole].key = 0;
}

static unsigned short label_index(mem_domain d, const char *name)
{
    if (!name) name = "(unlabelled)";
    for (int i = 0; i < nlabels[d]; i++)
        if (labels[d][i].name == name || strcmp(labels[d][i].name, name) == 0) return (unsigned short)i;
    if (nlabels[d] == MAX_LABELS) return MAX_LABELS - 1; /* the last slot absorbs the overflow */
    labels[d][nlabels[d]].name = nlabels[d] == MAX_LABELS - 1 ? "(other labels)" : name;
    return (unsigned short)nlabels[d]++;
}

void track_register(mem_domain d, void *p, size_t bytes, const char *label)
{
    if (!p) die("registering a NULL pointer", p);
    if (table_find(d, (uintptr_t)p) != SIZE_MAX) die("registering a pointer that is already live", p);
    if (2 * (table_used + 1) > table_cap) table_grow();
    slot s = {(uintptr_t)p, bytes, label_index(d, label), (unsigned char)d};
    table_insert_raw(s);
    table_used++;

    mem_counters *c = &counters[d];
    c->live_bytes += bytes;
    c->allocs++;
    if (c->live_bytes > c->peak_bytes) c->peak_bytes = c->live_bytes;
    label_stats *l = &labels[d][s.label];
    l->live += bytes;
    l->allocs++;
    l->touched = 1;
    if (l->live > l->peak) l->peak = l->live;
    event_ptr = p;
    notify('a', d, s.label, 0, bytes);
    site_file = NULL; /* the next registration names its own site, or none */
    site_line = 0;
}

void track_set_site(const char *file, int line)
{
    site_file = file;
    site_line = line;
}

const char *track_event_site(int *line)
{
    if (line) *line = site_line;
    return site_file;
}

void track_relabel(mem_domain d, void *p, const char *label)
{
    size_t i = table_find(d, (uintptr_t)p);
    if (i == SIZE_MAX) die("relabelling a pointer that is not live", p);
    unsigned short to = label_index(d, label), from = table[i].label;
    labels[d][from].live -= table[i].bytes;
    table[i].label = to;
    label_stats *l = &labels[d][to];
    l->live += table[i].bytes;
    l->touched = 1;
    if (l->live > l->peak) l->peak = l->live;
    event_ptr = p;
    notify('r', d, to, from, table[i].bytes);
}

size_t track_unregister(mem_domain d, void *p)
{
    size_t i = table_find(d, (uintptr_t)p);
    if (i == SIZE_MAX)
        die("freeing a pointer that is not live (double free, or not from a tracked allocator)", p);
    size_t bytes = table[i].bytes;
    unsigned short label = table[i].label;
    labels[d][label].live -= bytes;
    table_remove_at(i);
    table_used--;
    counters[d].live_bytes -= bytes;
    counters[d].frees++;
    event_ptr = p;
    notify('f', d, label, 0, bytes);
    return bytes;
}

size_t track_size_of(mem_domain d, const void *p)
{
    size_t i = table_find(d, (uintptr_t)p);
    return i == SIZE_MAX ? 0 : table[i].bytes;
}

/* Lazy host memory (a run that fills nothing): reserved address space, committed page by page on first write,
 * so the inputs of a forum-size problem cost nothing while nobody fills them. Page-aligned, hence
 * 256-aligned. */
static int lazy_host;

void track_set_lazy_host(int on) { lazy_host = on; }

static void *lazy_map(size_t bytes)
{
    void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void *host_alloc_at(size_t bytes, const char *label, const char *file, int line)
{
    /* 256-byte alignment, as cudaMalloc gives, so an arena carved from host memory lays out exactly like
     * one carved from device memory. aligned_alloc wants a multiple of the alignment; the extra tail is not
     * counted (the tracker counts the tensor's bytes, as PyTorch's memory_allocated counts a tensor's
     * storage). */
    double t0 = host_time_ms();
    size_t rounded = (bytes + 255) & ~(size_t)255;
    if (rounded < bytes) rounded = SIZE_MAX; /* overflow: let aligned_alloc refuse it below */
    void *p = rounded == SIZE_MAX ? NULL
              : lazy_host         ? lazy_map(rounded)
                                  : aligned_alloc(256, rounded ? rounded : 256);
    if (!p) {
        fprintf(stderr, "%s: out of host memory allocating %zu bytes for '%s'\n",
                program_invocation_short_name, bytes, label ? label : "(unlabelled)");
        exit(3);
    }
    if (poison_on) memset(p, 0xFF, bytes);
    alloc_ms += host_time_ms() - t0;
    track_set_site(file, line);
    track_register(MEM_HOST, p, bytes, label);
    return p;
}

void *host_alloc_array_at(size_t count, dtype t, const char *label, const char *file, int line)
{
    size_t es = dtype_size(t);
    if (es && count > SIZE_MAX / es) {
        fprintf(stderr, "%s: %zu elements of %s for '%s' overflow size_t\n", program_invocation_short_name,
                count, dtype_name(t), label ? label : "(unlabelled)");
        exit(3);
    }
    return host_alloc_at(count * es, label, file, line);
}

void host_free(void *p)
{
    if (!p) return;
    size_t bytes = track_unregister(MEM_HOST, p);
    double t0 = host_time_ms();
    if (lazy_host) munmap(p, bytes ? bytes : 1);
    else free(p);
    alloc_ms += host_time_ms() - t0;
}

mem_counters track_counters(mem_domain d) { return counters[d]; }

static void notify(char kind, mem_domain d, unsigned short label, unsigned short from, size_t bytes)
{
    if (observer)
        observer(observer_ctx, kind, d, labels[d][label].name, kind == 'r' ? labels[d][from].name : NULL,
                 bytes, counters[d].live_bytes);
}

void track_scope_begin(track_scope *s)
{
    for (int d = 0; d < MEM_DOMAINS; d++) {
        counters[d].peak_bytes = counters[d].live_bytes;
        s->base[d] = counters[d];
        for (int i = 0; i < nlabels[d]; i++) {
            labels[d][i].peak = labels[d][i].live;
            labels[d][i].allocs = 0;
            labels[d][i].touched = 0;
        }
    }
}

mem_counters track_scope_read(const track_scope *s, mem_domain d)
{
    mem_counters now = counters[d], base = s->base[d], r;
    r.live_bytes = now.live_bytes - base.live_bytes;
    r.peak_bytes = now.peak_bytes - base.live_bytes;
    r.allocs = now.allocs - base.allocs;
    r.frees = now.frees - base.frees;
    return r;
}

void track_set_poison(int on) { poison_on = on; }
int track_poison(void) { return poison_on; }

/* 1234567 -> "1,234,567" */
static const char *with_commas(size_t v, char *buf, size_t len)
{
    char digits[32];
    int nd = snprintf(digits, sizeof digits, "%zu", v);
    size_t o = 0;
    for (int i = 0; i < nd && o + 2 < len; i++) {
        if (i && (nd - i) % 3 == 0) buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
    return buf;
}

void track_print_labels(FILE *f, mem_domain d)
{
    char b1[32], b2[32];
    fprintf(f, "    %-48s %16s %7s\n", "tensor (label)", "peak bytes", "allocs");
    for (int i = 0; i < nlabels[d]; i++) {
        const label_stats *l = &labels[d][i];
        if (!l->touched) continue; /* not touched in this scope */
        fprintf(f, "    %-48s %16s %7zu", l->name, with_commas(l->peak, b1, sizeof b1), l->allocs);
        if (l->live) fprintf(f, "   (%s still live)", with_commas(l->live, b2, sizeof b2));
        fputc('\n', f);
    }
}

size_t track_label_peak(mem_domain d, const char *label)
{
    for (int i = 0; i < nlabels[d]; i++)
        if (strcmp(labels[d][i].name, label) == 0) return labels[d][i].peak;
    return 0;
}

size_t track_report_live(FILE *f)
{
    size_t n = 0;
    for (size_t i = 0; i < table_cap; i++) {
        if (!table[i].key) continue;
        const slot *s = &table[i];
        fprintf(f, "leak: %s allocation '%s' of %zu bytes still live\n",
                s->domain == MEM_HOST ? "host" : "device", labels[s->domain][s->label].name, s->bytes);
        n++;
    }
    return n;
}
