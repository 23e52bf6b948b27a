/* peak_alloc.c - PyTorch's true CPU peak: preloaded into the Python process (LD_PRELOAD), it counts the live and
 * peak bytes of every block PyTorch's CPU allocator hands out while measurement is on, temporaries included.
 *
 *   LD_PRELOAD=build/libpeak_alloc.so /usr/bin/python3 plots/pytorch_baseline.py ...
 *
 * Why posix_memalign: c10's DefaultCPUAllocator (c10/core/impl/alloc_cpu.cpp in PyTorch 1.13) allocates every
 * tensor storage with posix_memalign(&data, 64, nbytes) and releases it with free(); libc10.so imports exactly
 * those two (nm -D libc10.so | grep ' U '). aligned_alloc and memalign are counted too, so a build that switches
 * to them is still seen. Plain malloc is not interposed: CPython's objects and small C++ structures live there,
 * and they are not tensors.
 *
 * The Python side drives it through ctypes (ctypes.CDLL(None) finds the preloaded symbols):
 *   peak_alloc_begin()   forget everything counted so far, then count new aligned blocks (live = peak = 0)
 *   peak_alloc_reset_peak()   peak = live: the next peak is measured from what is live now (as
 *                        torch.cuda.reset_peak_memory_stats does on the GPU)
 *   peak_alloc_end()     stop counting new blocks; frees of blocks counted earlier still lower `live`
 *   peak_alloc_live(), peak_alloc_peak(), peak_alloc_count()   bytes live now, the most live at once, blocks
 *   peak_alloc_only_from("libc10.so")   count only blocks whose posix_memalign is called from that library's
 *                        code: c10's allocator, not oneDNN's or OpenBLAS's own scratch (1 if the library is loaded)
 * Only blocks allocated between begin and end are in the table, so a tensor made before begin and freed during
 * the measurement changes nothing: the caller adds its pre-existing tensors' bytes itself.
 *
 * Sizes are the requested bytes (what the tracker in kernels/runtime counts for the C lessons), kept in an
 * open-addressing hash table keyed by address; one mutex makes it thread-safe (PyTorch frees from its intra-op
 * threads and autograd's engine thread). The table lives in mmap'd memory, so counting never calls malloc.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* glibc's own free: calling it directly avoids resolving `free` through dlsym, which may itself free. */
extern void __libc_free(void *ptr);
extern void *__libc_memalign(size_t alignment, size_t size);

typedef struct {
    uintptr_t key; /* block address; 0 = empty, TOMBSTONE = deleted */
    size_t bytes;  /* requested size */
} slot;

#define TOMBSTONE ((uintptr_t)1)
#define MIN_CAPACITY ((size_t)1 << 16)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static slot *table;          /* capacity slots, a power of two */
static size_t capacity;      /* 0 until the first block is counted; never 0 again (free's unlocked hint) */
static size_t used;          /* live keys + tombstones: what probing walks over */
static size_t count;         /* live keys */
static size_t live, peak;    /* bytes */
static volatile int enabled; /* set by peak_alloc_begin, cleared by peak_alloc_end */
static uintptr_t from_lo, from_hi; /* peak_alloc_only_from: the callers' code range; 0, 0 = every caller */

static size_t hash_ptr(uintptr_t p)
{
    p >>= 4; /* aligned addresses: the low bits carry nothing */
    p *= (uintptr_t)0x9E3779B97F4A7C15ull;
    return (size_t)(p ^ (p >> 29));
}

static slot *table_new(size_t cap)
{
    void *m = mmap(NULL, cap * sizeof(slot), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return m == MAP_FAILED ? NULL : m; /* zero-filled: every slot empty */
}

static void insert_key(slot *t, size_t cap, uintptr_t key, size_t bytes)
{
    size_t i = hash_ptr(key) & (cap - 1);
    while (t[i].key > TOMBSTONE)
        i = (i + 1) & (cap - 1);
    t[i].key = key;
    t[i].bytes = bytes;
}

/* Keeps the table at most half full of keys and tombstones; rebuilding drops the tombstones. 0 on failure. */
static int table_reserve(void)
{
    if (capacity && 2 * (used + 1) <= capacity)
        return 1;
    size_t cap = MIN_CAPACITY;
    while (cap < 4 * (count + 1))
        cap *= 2;
    slot *t = table_new(cap);
    if (!t)
        return 0;
    for (size_t i = 0; i < capacity; i++)
        if (table[i].key > TOMBSTONE)
            insert_key(t, cap, table[i].key, table[i].bytes);
    if (table)
        munmap(table, capacity * sizeof(slot));
    table = t;
    capacity = cap;
    used = count;
    return 1;
}

static void count_block(void *p, size_t bytes, const void *caller)
{
    if (!p || !enabled)
        return;
    if (from_hi && ((uintptr_t)caller < from_lo || (uintptr_t)caller >= from_hi))
        return;
    pthread_mutex_lock(&lock);
    if (enabled && table_reserve()) {
        insert_key(table, capacity, (uintptr_t)p, bytes);
        used++;
        count++;
        live += bytes;
        if (live > peak)
            peak = live;
    }
    pthread_mutex_unlock(&lock);
}

static void uncount_block(void *p)
{
    pthread_mutex_lock(&lock);
    if (capacity) {
        size_t i = hash_ptr((uintptr_t)p) & (capacity - 1);
        for (; table[i].key; i = (i + 1) & (capacity - 1)) {
            if (table[i].key == (uintptr_t)p) {
                live -= table[i].bytes;
                table[i].key = TOMBSTONE;
                count--;
                break;
            }
        }
    }
    pthread_mutex_unlock(&lock);
}

/* ---- the interposed allocator entry points ------------------------------------------------------------- */

int posix_memalign(void **out, size_t alignment, size_t bytes)
{
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)))
        return EINVAL;
    void *p = __libc_memalign(alignment, bytes);
    if (!p && bytes)
        return ENOMEM;
    *out = p;
    count_block(p, bytes, __builtin_return_address(0));
    return 0;
}

void *aligned_alloc(size_t alignment, size_t bytes)
{
    void *p = __libc_memalign(alignment, bytes);
    count_block(p, bytes, __builtin_return_address(0));
    return p;
}

void *memalign(size_t alignment, size_t bytes)
{
    void *p = __libc_memalign(alignment, bytes);
    count_block(p, bytes, __builtin_return_address(0));
    return p;
}

void free(void *p)
{
    if (!p)
        return;
    if (capacity) /* nothing was ever counted: no lock on the common path of a process that never measures */
        uncount_block(p);
    __libc_free(p);
}

/* ---- the measurement API (ctypes) ---------------------------------------------------------------------- */

void peak_alloc_begin(void);
int peak_alloc_only_from(const char *library);
void peak_alloc_reset_peak(void);
void peak_alloc_end(void);
size_t peak_alloc_live(void);
size_t peak_alloc_peak(void);
size_t peak_alloc_count(void);

void peak_alloc_begin(void)
{
    pthread_mutex_lock(&lock);
    if (capacity)
        memset(table, 0, capacity * sizeof(slot));
    used = count = live = peak = 0;
    enabled = 1;
    pthread_mutex_unlock(&lock);
}

/* dl_iterate_phdr callback: the executable segments of the first loaded object whose path contains `want`. */
static int find_code_range(struct dl_phdr_info *info, size_t size, void *want)
{
    (void)size;
    if (!info->dlpi_name || !strstr(info->dlpi_name, (const char *)want))
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (!from_hi || lo < from_lo) from_lo = lo;
        if (hi > from_hi) from_hi = hi;
    }
    return 1;
}

int peak_alloc_only_from(const char *library)
{
    pthread_mutex_lock(&lock);
    from_lo = from_hi = 0;
    if (library)
        dl_iterate_phdr(find_code_range, (void *)library);
    int found = from_hi != 0;
    pthread_mutex_unlock(&lock);
    return found;
}

void peak_alloc_reset_peak(void)
{
    pthread_mutex_lock(&lock);
    peak = live;
    pthread_mutex_unlock(&lock);
}

void peak_alloc_end(void)
{
    pthread_mutex_lock(&lock);
    enabled = 0;
    pthread_mutex_unlock(&lock);
}

static size_t read_locked(const size_t *v)
{
    pthread_mutex_lock(&lock);
    size_t r = *v;
    pthread_mutex_unlock(&lock);
    return r;
}

size_t peak_alloc_live(void) { return read_locked(&live); }
size_t peak_alloc_peak(void) { return read_locked(&peak); }
size_t peak_alloc_count(void) { return read_locked(&count); }
