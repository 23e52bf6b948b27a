/* lesson1.c - broadcast batched matmul: why torch.matmul keeps 1,107,427,328 bytes alive.
 *
 * The lesson as data (lesson.h) and the adapters from the generic session to the typed implementations.
 * The implementations and what each does: build/lesson1 --help. Their files, in reading order: the reading
 * path at the top of docs/lesson-1.md.   build/lesson1 --size forum --impl naive     # the forum's
 * 1,107,427,328 bytes
 */
#include "lesson1.h"

#include "rng.h"
#include "../naive/bmm_broadcast.h"
#include "../optimized/bmm_grouped.h"
#include "bmm_reference.h"
#include "lesson_defs.h"

#include <assert.h>
#include <math.h>
#include <string.h>

static const bmm_problem *prob_of(const void *prob) { return prob; }
static const bmm_dims *dims_of(const void *prob) { return &prob_of(prob)->d; }
static_assert(sizeof(bmm_problem) <= sizeof(lesson_problem), "the problem fits lesson_problem");

static const char *make_problem(const long long *dims, const long long *opts, void *prob)
{
    (void)opts;
    bmm_problem p = {{(size_t)dims[0], (size_t)dims[1], (size_t)dims[2], (size_t)dims[3]}};
    if (bmm_w_expanded_count(&p.d) == SIZE_MAX) return "B*G*K*N overflows 64 bits";
    memcpy(prob, &p, sizeof p);
    return NULL;
}

static int shape_x(const void *p, size_t *s)
{
    return lesson_shape2(s, dims_of(p)->B, dims_of(p)->G * dims_of(p)->K);
}
static int shape_w(const void *p, size_t *s)
{
    return lesson_shape3(s, dims_of(p)->G, dims_of(p)->K, dims_of(p)->N);
}
static int shape_out(const void *p, size_t *s)
{
    return lesson_shape3(s, dims_of(p)->B, dims_of(p)->G, dims_of(p)->N);
}

/* x ~ N(0, 1), W ~ N(0, 1/K) (a layer's usual scale), dout ~ N(0, 1), drawn in that order */
static void fill(const void *prob, uint64_t seed, void *const *t)
{
    const bmm_dims *d = dims_of(prob);
    rng r;
    rng_seed(&r, seed);
    rng_fill_normal_f32(&r, t[X], bmm_x_count(d), 0.0f, 1.0f);
    rng_fill_normal_f32(&r, t[W], bmm_w_count(d), 0.0f, 1.0f / sqrtf((float)d->K));
    rng_fill_normal_f32(&r, t[DOUT], bmm_out_count(d), 0.0f, 1.0f);
}

static void reference(const void *prob, void *const *t, double *const *ref)
{
    const bmm_dims *d = dims_of(prob);
    bmm_reference_result r;
    bmm_reference(d, t[X], t[W], t[DOUT], &r);
    memcpy(ref[OUT], r.out, bmm_out_count(d) * sizeof(double));
    memcpy(ref[DX], r.dx, bmm_x_count(d) * sizeof(double));
    memcpy(ref[DW], r.dW, bmm_w_count(d) * sizeof(double));
    bmm_reference_free(&r);
}

/* --- adapters ------------------------------------------------------------------------------------------- */
static_assert(sizeof(naive_bmm_saved) <= sizeof(((lesson_run *)0)->saved),
              "naive's saved state fits the run");

static void naive_forward(lesson_run *r)
{
    r->t[OUT] = naive_bmm_forward(dims_of(r->prob), r->t[X], r->t[W], (naive_bmm_saved *)r->saved.bytes);
}
static void naive_backward(lesson_run *r)
{
    naive_bmm_backward(dims_of(r->prob), r->t[X], (naive_bmm_saved *)r->saved.bytes, r->t[DOUT],
                       (float **)&r->t[DX], (float **)&r->t[DW]);
}
static void cpu_forward(lesson_run *r) { r->t[OUT] = cpu_bmm_forward(dims_of(r->prob), r->t[X], r->t[W]); }
static void cpu_backward(lesson_run *r)
{
    cpu_bmm_backward(dims_of(r->prob), r->t[X], r->t[W], r->t[DOUT], (float **)&r->t[DX],
                     (float **)&r->t[DW]);
}
#ifdef HAVE_CUDA
static void cuda_forward(lesson_run *r) { r->t[OUT] = cuda_bmm_forward(dims_of(r->prob), r->t[X], r->t[W]); }
static void cuda_backward(lesson_run *r)
{
    cuda_bmm_backward(dims_of(r->prob), r->t[X], r->t[W], r->t[DOUT], (float **)&r->t[DX],
                      (float **)&r->t[DW]);
}
#else
#define cuda_forward NULL
#define cuda_backward NULL
#endif

/* three GEMMs of B*G*K*N multiply-adds each (out, dx, dW), however the operands are laid out */
static double gemm_work(const void *p)
{
    const bmm_dims *d = dims_of(p);
    return 3.0 * (double)d->B * (double)d->G * (double)d->K * (double)d->N;
}
static mem_formula naive_memory(const void *p) { return naive_bmm_memory(dims_of(p)); }
static mem_formula cpu_memory(const void *p) { return cpu_bmm_memory(dims_of(p)); }
static mem_formula cuda_memory(const void *p) { return cuda_bmm_memory(dims_of(p)); }
static const char *cuda_unfit(const void *p)
{
    return cuda_bmm_dims_fit(dims_of(p)) ? NULL : "a leading dimension exceeds cuBLAS's int range";
}

/* --- what the lesson says after the table --------------------------------------------------------------- */
static void epilogue(const lesson_report *rep, FILE *f)
{
    const lesson_result *naive = lesson_report_find(rep, "naive"), *cpu = lesson_report_find(rep, "cpu");
    if (!naive || !cpu || !naive->validated || !cpu->validated) return;
    char extra[32], wexp[32];
    format_bytes_exact(naive->row.forward_live_bytes - cpu->row.forward_live_bytes, extra, sizeof extra);
    format_bytes_exact(4 * bmm_w_expanded_count(dims_of(rep->prob)), wexp, sizeof wexp);
    fprintf(
        f,
        "After forward, naive holds %s bytes more than cpu: the expanded copy of W, B*G*K*N*4 = %s bytes.\n"
        "Its backward adds a gradient of the same size before summing it over B.\n",
        extra, wexp);
}

/* The first screen's answer, under the table: the forum's figure (naive's formula at its size) beside this
 * run's, the reason in one line, the saving. */
static void answer(const lesson_report *rep, FILE *f)
{
    const lesson_result *naive = lesson_report_find(rep, "naive"), *cpu = lesson_report_find(rep, "cpu");
    mem_formula forum;
    char b[32], w[32];
    if (lesson_size_formula(rep->L, "forum", "naive", &forum) != 0) return;
    format_bytes_exact(forum.forward_live, b, sizeof b);
    fprintf(f, "\nthe forum: torch.matmul keeps %s bytes after forward at its size (naive's formula there)",
            b);
    if (naive && naive->row.ran) {
        format_bytes_exact(naive->row.forward_live_bytes, b, sizeof b);
        fprintf(f, "; this run's naive keeps %s", b);
    }
    format_bytes_exact(4 * bmm_w_expanded_count(dims_of(rep->prob)), w, sizeof w);
    fprintf(f, "\nwhy: W is expanded and copied to (B*G, K, N), %s bytes here, and bmm saves the copy for "
               "backward\n", w);
    if (naive && cpu && naive->row.ran && cpu->row.ran &&
        naive->row.forward_live_bytes > cpu->row.forward_live_bytes) {
        format_bytes_exact(naive->row.forward_live_bytes - cpu->row.forward_live_bytes, b, sizeof b);
        fprintf(f, "the fix: the grouped GEMM (cpu) keeps no copy: %s bytes less after forward\n", b);
    }
}

const lesson lesson1_def = {
    .number = 1,
    .program = "lesson1",
    .title = "Lesson 1: broadcast batched matmul, x (B, G*K) viewed (B, G, 1, K) times W (G, K, N)",
    .summary = "broadcast batched matmul: the expanded weight kept for backward",
    .dim_names = {"B", "G", "K", "N"},
    .sizes = {{.name = "tiny", .dims = {3, 2, 4, 5}},
              {.name = "small", .dims = {512, 8, 64, 64}},
              {.name = "forum", .dims = {8192, 8, 64, 64}}},
    .default_size = "forum",
    .make_problem = make_problem,
    .tensors =
        {[X] = {.name = "x", .role = LT_INPUT, .type = DT_F32, .label = "x (B,G*K) input", .shape = shape_x},
         [W] = {.name = "W", .role = LT_INPUT, .type = DT_F32, .label = "W (G,K,N) input", .shape = shape_w},
         [DOUT] = {.name = "dout",
                   .role = LT_UPSTREAM,
                   .type = DT_F32,
                   .label = "dout (B,G,N) upstream gradient",
                   .shape = shape_out},
         [OUT] = {.name = "out", .role = LT_OUTPUT, .type = DT_F32, .shape = shape_out},
         [DX] = {.name = "dx", .role = LT_GRAD, .type = DT_F32, .shape = shape_x, .grad_of = X},
         [DW] = {.name = "dW", .role = LT_GRAD, .type = DT_F32, .shape = shape_w, .grad_of = W}},
    .fill = fill,
    .reference = reference,
    .tolerance = 1e-4,
    .tolerance_why =
        "float32 sums of up to B terms err by about 6e-8*sqrt(B) relative; a wrong index errs by O(1)",
    .impls =
        {{.name = "naive",
          .about =
              "torch.matmul's broadcasting path: W expanded and copied to (B*G, K, N), the copy saved for "
              "backward",
          .memory = naive_memory,
          .forward = naive_forward,
          .backward = naive_backward,
          .work = gemm_work},
         {.name = "cpu",
          .about =
              "grouped GEMM on strided views (what an einsum runs): out_g = x_g W_g, no copy, no expansion",
          .memory = cpu_memory,
          .forward = cpu_forward,
          .backward = cpu_backward,
          .work = gemm_work},
         {LESSON_CUDA_VERSION(1),
          .about = "the same three GEMMs with cublasSgemmStridedBatched on the GPU (tracked device memory)",
          .uses_cublas = 1, .memory = cuda_memory, .unfit = cuda_unfit, .forward = cuda_forward,
          .backward = cuda_backward}},
    .cuda_order = {1}, /* fastest first: docs/tools/cuda_order.py 1 */
    .epilogue = epilogue,
    .answer = answer,
    .legend = "(\"live after forward\" is what torch.cuda.memory_allocated() printed in the forum.)",
};
