/* emu_internal.h - TEST-ONLY: what the emulator's own files share (device memory registry, error record). */
#ifndef CUDA_EMU_INTERNAL_H
#define CUDA_EMU_INTERNAL_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

namespace emu {

static const size_t TOTAL_MEM = (size_t)16 << 30; /* the emulated device's memory size */

struct global_cell; /* emu_hazard.cc: which block wrote and read each byte in the running launch */
struct global_site; /* emu_hazard.cc: the source lines of that writer and reader */

struct alloc_info {
    char *base;   /* what cudaMalloc returned */
    size_t bytes; /* what was asked for; red zones lie either side */
    void *site;   /* cudaMalloc's caller (named in messages when no label was given) */
    char label[64];              /* emu_label_alloc's (dev_alloc's label), or "" */
    global_cell *cells; /* per byte: initialised?, which blocks wrote and read it in the running launch */
    global_site *sites; /* per byte: the threads and source lines of that writer and reader */
};

/* The live allocation holding [p, p + bytes) (bytes 0: p may be one past the end), or NULL. */
const alloc_info *find_alloc(const void *p, size_t bytes);
/* Checks every live allocation's red zones; on damage writes a description to msg and returns 0. */
int redzones_intact(char *msg, size_t cap);
/* The lowest and highest byte addresses of all live allocations ([lo, hi); lo == hi when none). */
void alloc_span(uintptr_t *lo, uintptr_t *hi);
/* Records err with a message for cudaGetLastError / emu_last_error_message (the first one wins until read),
 * and prints it to stderr with the prefix "cuda-emu: ". Returns err. */
cudaError_t fail(cudaError_t err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int launch_error_pending(void);
/* During a stream capture (emu_graph.cc): 1, with the error recorded and the capture invalidated, for a call a
 * GPU refuses in global capture mode (any call / a call on a stream other than the captured one); else 0. */
int capture_refuses(const char *call);
int capture_refuses_stream(const char *call, cudaStream_t s);

/* Counts for EMU_STATS=1 (printed at exit): what the program asked of the "GPU", pass 1 only for kernels. */
struct counters {
    unsigned long long launches, blocks, threads, resumes; /* resumes: fiber switches into a thread */
    unsigned long long gemm_calls, gemm_flops;             /* 2 m n k per GEMM problem */
};
extern counters stats;

} /* namespace emu */

#endif
