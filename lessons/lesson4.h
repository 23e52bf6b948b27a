/* lesson4.h - lesson 4's tensors, problem struct and the step sampler its epilogue prints: what its
 * definition (lesson4.c), its tests and its CUDA tests share. */
#ifndef LESSONS_LESSON4_H
#define LESSONS_LESSON4_H

#include <stdint.h>
#include <stdio.h>

#include "../kernels/gru_problem.h"
#include "../optimized/gru_fused.h"
#include "lesson.h"

/* lesson4_def.tensors, in this order (L4_NTENSORS: how many) */
enum { X_, H0, EPS, WENC, WIH, WZH, DOUT, OUT, DX, DH0, DWENC, DWIH, DWZH, L4_NTENSORS };

/* The problem a run sees (the naming rule: lesson1.h) */
typedef struct {
    gru_dims d;
    gru_opts o;                /* --checkpoint, --block: used by cpu and cuda */
    const gru_probe *probe;    /* the step sampler below */
} gru_problem;

extern const lesson lesson4_def;

const char *gru_make_problem(const long long *dims, const long long *opts, void *prob);
void gru_fill(const void *prob, uint64_t seed, void *const *t);

/* --- the step sampler: live bytes and allocation counts after chosen steps of one run ------------------- */
#define GRU_TRACE_MAX 40
typedef struct {
    int n;
    gru_phase phase[GRU_TRACE_MAX];
    size_t step[GRU_TRACE_MAX];
    size_t live[GRU_TRACE_MAX];   /* bytes live in the run: the inputs plus what the implementation holds */
    size_t base_live, base_allocs, inputs;
    size_t fwd_first_allocs, fwd_last_allocs, bwd_first_allocs, bwd_last_allocs; /* after step 0 / T-1 */
    size_t T, stride;
} gru_trace;

const gru_probe *gru_sampler_probe(void);
/* Subsequent runs record into tr (NULL: stop recording). Samples every stride steps and the first and
 * last. */
void gru_sampler_attach(gru_trace *tr, const gru_dims *d, size_t stride);
/* allocations per step inside the forward / backward loops (steps 1 .. T-1), from a trace */
double gru_trace_fwd_allocs_per_step(const gru_trace *tr);
double gru_trace_bwd_allocs_per_step(const gru_trace *tr);

#endif
