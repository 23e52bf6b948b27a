/* lesson2.c - the log-space matrix chain: from an out-of-memory tree of matrix products to the forward
 * algorithm. The lesson as data (lesson.h) and the adapters to the typed implementations.
 * The implementations and what each does: build/lesson2 --help. Their files, in reading order: the reading
 * path at the top of docs/lesson-2.md.
 *   build/lesson2 --size forum     # the forum's n=500, v=40, c=200: naive predicted only
 */
#include "lesson2.h"

#include "rng.h"
#include "track.h"
#include "../naive/logchain_tree.h"
#include "../optimized/logchain_forward.h"
#include "lesson_defs.h"
#include "logchain_reference.h"

#include <assert.h>
#include <math.h>
#include <string.h>

static const lc_problem *prob_of(const void *prob) { return prob; }
static const lc_dims *dims_of(const void *prob) { return &prob_of(prob)->d; }
static_assert(sizeof(lc_problem) <= sizeof(lesson_problem), "the problem fits lesson_problem");

static const char *make_problem(const long long *dims, const long long *opts, void *prob)
{
    (void)opts;
    lc_problem p = {{(size_t)dims[0], (size_t)dims[1], (size_t)dims[2], (size_t)dims[3]}};
    if (p.d.v < 2) return "the chain needs at least 2 variables (v-1 >= 1 transition matrices)";
    if (lc_x_count(&p.d) == SIZE_MAX || lc_bulk_count(&p.d) == SIZE_MAX)
        return "the tensor sizes overflow 64 bits";
    memcpy(prob, &p, sizeof p);
    return NULL;
}

static int shape_x(const void *p, size_t *s)
{
    const lc_dims *d = dims_of(p);
    return lesson_shape4(s, d->n, d->t, d->v, d->c);
}
static int shape_bulk(const void *p, size_t *s)
{
    const lc_dims *d = dims_of(p);
    return lesson_shape5(s, 1, d->t, d->v - 1, d->c, d->c);
}
static int shape_p0(const void *p, size_t *s) { return lesson_shape3(s, 1, dims_of(p)->t, dims_of(p)->c); }
static int shape_out(const void *p, size_t *s) { return lesson_shape2(s, dims_of(p)->n, dims_of(p)->t); }

/* As in the forum: x = randn - 2; bulk and p0 = rand in (0, 1), kept off 0 so log and 1/P stay finite;
 * dout ~ N(0, 1). Drawn in that order. */
static void fill(const void *prob, uint64_t seed, void *const *t)
{
    const lc_dims *d = dims_of(prob);
    rng r;
    rng_seed(&r, seed);
    rng_fill_normal_f32(&r, t[X], lc_x_count(d), -2.0f, 1.0f);
    rng_fill_uniform_f32(&r, t[BULK], lc_bulk_count(d), 1e-3f, 1.0f);
    rng_fill_uniform_f32(&r, t[P0], lc_p0_count(d), 1e-3f, 1.0f);
    rng_fill_normal_f32(&r, t[DOUT], lc_out_count(d), 0.0f, 1.0f);
}

static void reference(const void *prob, void *const *t, double *const *ref)
{
    const lc_dims *d = dims_of(prob);
    lc_ref_result r;
    lc_reference(d, t[X], t[BULK], t[P0], t[DOUT], &r);
    memcpy(ref[OUT], r.out, lc_out_count(d) * sizeof(double));
    memcpy(ref[DX], r.dx, lc_x_count(d) * sizeof(double));
    memcpy(ref[DBULK], r.dbulk, lc_bulk_count(d) * sizeof(double));
    memcpy(ref[DP0], r.dp0, lc_p0_count(d) * sizeof(double));
    lc_reference_free(&r);
}

/* Each of the v-1 steps adds a float32 rounding of the running log values and of the step's products, so the
 * error of log Z and of the gradients grows in proportion to the chain length. */
static double tolerance_of(const void *prob)
{
    double v = (double)dims_of(prob)->v;
    return 1e-4 * (v > 64.0 ? v / 64.0 : 1.0);
}

/* --- adapters ------------------------------------------------------------------------------------------- */
static_assert(sizeof(naive_lc_saved) <= sizeof(((lesson_run *)0)->saved), "naive's saved state fits the run");
static_assert(sizeof(float *) <= sizeof(((lesson_run *)0)->saved), "the saved alphas fit the run");

static void naive_forward(lesson_run *r)
{
    r->t[OUT] = naive_lc_forward(dims_of(r->prob), r->t[X], r->t[BULK], r->t[P0], LC_ODD_CARRY,
                                 (naive_lc_saved *)r->saved.bytes);
}
static void naive_backward(lesson_run *r)
{
    naive_lc_backward(dims_of(r->prob), r->t[X], r->t[BULK], r->t[P0], r->t[OUT],
                      (naive_lc_saved *)r->saved.bytes, r->t[DOUT], (float **)&r->t[DX],
                      (float **)&r->t[DBULK], (float **)&r->t[DP0]);
}
/* cpu and cuda save the alphas (n,t,v,c); backward writes dx over them, so dx's slot takes that buffer. */
static float **saved_alpha(lesson_run *r) { return (float **)(void *)r->saved.bytes; }
static void cpu_forward(lesson_run *r)
{
    r->t[OUT] = cpu_lc_forward(dims_of(r->prob), r->t[X], r->t[BULK], r->t[P0], saved_alpha(r));
}
static void cpu_backward(lesson_run *r)
{
    cpu_lc_backward(dims_of(r->prob), r->t[X], r->t[BULK], r->t[P0], *saved_alpha(r), r->t[OUT], r->t[DOUT],
                    (float **)&r->t[DX], (float **)&r->t[DBULK], (float **)&r->t[DP0]);
}
#ifdef HAVE_CUDA
/* The one CUDA adapter: the row's version picks the kernels (v1 log-space kernels, v2 cuBLAS + row kernel, v3
 * v2's loops as one CUDA Graph, captured once per shape and replayed, v4 one persistent kernel per pass, v5
 * v4's walk with P's rows in flight ahead of it). A version without a case leaves out unset, and
 * the session stops there. */
static void cuda_forward(lesson_run *r)
{
    const lc_dims *d = dims_of(r->prob);
    switch (r->version) {
    case 1: r->t[OUT] = cuda_lc_forward_v1(d, r->t[X], r->t[BULK], r->t[P0], saved_alpha(r)); break;
    case 2: r->t[OUT] = cuda_lc_forward_v2(d, r->t[X], r->t[BULK], r->t[P0], saved_alpha(r)); break;
    case 3: r->t[OUT] = cuda_lc_forward_v3(d, r->t[X], r->t[BULK], r->t[P0], saved_alpha(r)); break;
    case 4: r->t[OUT] = cuda_lc_forward_v4(d, r->t[X], r->t[BULK], r->t[P0], saved_alpha(r)); break;
    case 5: r->t[OUT] = cuda_lc_forward_v5(d, r->t[X], r->t[BULK], r->t[P0], saved_alpha(r)); break;
    }
}
static void cuda_backward(lesson_run *r)
{
    const lc_dims *d = dims_of(r->prob);
    float **dx = (float **)&r->t[DX], **dbulk = (float **)&r->t[DBULK], **dp0 = (float **)&r->t[DP0];
    switch (r->version) {
    case 1:
        cuda_lc_backward_v1(d, r->t[X], r->t[BULK], r->t[P0], *saved_alpha(r), r->t[OUT], r->t[DOUT], dx,
                            dbulk, dp0);
        break;
    case 2:
        cuda_lc_backward_v2(d, r->t[X], r->t[BULK], r->t[P0], *saved_alpha(r), r->t[OUT], r->t[DOUT], dx,
                            dbulk, dp0);
        break;
    case 3:
        cuda_lc_backward_v3(d, r->t[X], r->t[BULK], r->t[P0], *saved_alpha(r), r->t[OUT], r->t[DOUT], dx,
                            dbulk, dp0);
        break;
    case 4:
        cuda_lc_backward_v4(d, r->t[X], r->t[BULK], r->t[P0], *saved_alpha(r), r->t[OUT], r->t[DOUT], dx,
                            dbulk, dp0);
        break;
    case 5:
        cuda_lc_backward_v5(d, r->t[X], r->t[BULK], r->t[P0], *saved_alpha(r), r->t[OUT], r->t[DOUT], dx,
                            dbulk, dp0);
        break;
    }
}
#else
#define cuda_forward NULL
#define cuda_backward NULL
#endif

/* cpu: per row and step one (c).(c x c) product forward and two backward (beta, dbulk): 3 n t (v-1) c^2.
 * naive: the tree multiplies v-1 (c x c) matrices per row pairwise, v-2 products of c^3 log-space
 * multiply-adds, and its backward twice that. */
static double cpu_work(const void *p)
{
    const lc_dims *d = dims_of(p);
    return 3.0 * (double)lc_rows(d) * (double)(d->v - 1) * (double)d->c * (double)d->c;
}
static double naive_work(const void *p)
{
    const lc_dims *d = dims_of(p);
    return 3.0 * (double)lc_rows(d) * (double)(d->v > 1 ? d->v - 2 : 0) * (double)d->c * (double)d->c *
           (double)d->c;
}
static mem_formula naive_memory(const void *p) { return naive_lc_memory(dims_of(p)); }
static mem_formula cpu_memory(const void *p) { return cpu_lc_memory(dims_of(p)); }
static mem_formula cuda_memory(const void *p) { return cuda_lc_memory_v2(dims_of(p)); }
static const char *cuda_unfit(const void *p)
{
    return cuda_lc_dims_fit_v2(dims_of(p)) ? NULL
                                           : "n, t or c exceeds the kernels' int indexing or grid limits";
}
static mem_formula cuda_v1_memory(const void *p) { return cuda_lc_memory_v1(dims_of(p)); }
static mem_formula cuda_v4_memory(const void *p) { return cuda_lc_memory_v4(dims_of(p)); }
static const char *cuda_v4_unfit(const void *p)
{
    return cuda_lc_dims_fit_v4(dims_of(p))
               ? NULL
               : "c > 256 (a lane keeps 8 of a row's c states) or n, t, v past the kernels' "
                 "int indexing or grid limits";
}
#ifdef HAVE_CUDA
static const char *cuda_v5_unfit(const void *p)
{
    const char *why = cuda_v4_unfit(p);
    return why ? why : lc5_unfit(dims_of(p));
}
#else
#define cuda_v5_unfit cuda_v4_unfit
#endif
static const char *cuda_v1_unfit(const void *p)
{
    return cuda_lc_dims_fit_v1(dims_of(p)) ? NULL : "n or c exceeds the kernels' int indexing or grid limits";
}

/* --- what the lesson says before and after the table ---------------------------------------------------- */

/* Work of the two multiplication orders, in multiply-adds (the ordering argument, docs/lesson-2.md): the tree
 * does v-2 (c x c).(c x c) products per chain, the forward algorithm v-1 (c).(c x c). */
static void preamble(const void *prob, FILE *f)
{
    const lc_dims *d = dims_of(prob);
    double chains = (double)d->n * (double)d->t, c = (double)d->c;
    double tree = chains * (double)(d->v - 2) * c * c * c, chain = chains * (double)(d->v - 1) * c * c;
    fprintf(f, "forward multiply-adds: tree of matrix products %.4g (n t (v-2) c^3), forward algorithm %.4g "
               "(n t (v-1) c^2), ratio %.1f\n", tree, chain, chain > 0 ? tree / chain : 0.0);
}

/* max over chains of |logZ - ref| / |ref| (element by element: the target is 1e-5 per chain) */
static double logz_rel_err(const lc_dims *d, const float *out, const double *ref)
{
    double m = 0.0;
    for (size_t r = 0; r < lc_out_count(d); r++) {
        double e = fabs((double)out[r] - ref[r]) / fabs(ref[r]);
        if (isnan(e)) return NAN;
        m = fmax(m, e);
    }
    return m;
}

/* The forum's zero padding, on the first chain only (a (1,1,v,c) problem: 1/(n t) of naive's memory). */
static void zero_padding(const lesson_report *rep, FILE *f)
{
    const lc_dims *d = dims_of(rep->prob);
    int odd_level = 0;
    for (size_t m = d->v - 1; m > 1; m = m / 2 + m % 2) odd_level |= (int)(m % 2);
    if (!odd_level || !rep->ref[OUT]) return;
    lc_dims d1 = {1, 1, d->v, d->c};
    naive_lc_saved sv;
    float *padded =
        naive_lc_forward(&d1, rep->inputs[X], rep->inputs[BULK], rep->inputs[P0], LC_ODD_ZERO_PAD, &sv);
    naive_lc_release(&sv);
    fprintf(
        f,
        "\nthe forum's zero padding (v-1 = %zu has odd levels; exp(0) = 1 pads with the all-ones matrix):\n"
        "chain 0 log Z = %.6f padded, %.6f true (f64): off by %.4f\n",
        d->v - 1, (double)padded[0], rep->ref[OUT][0], (double)padded[0] - rep->ref[OUT][0]);
    host_free(padded);
}

/* The closing paragraph: where each implementation's bytes go, from the same formulas the table checks. */
static void where_bytes_go(const lesson_report *rep, FILE *f)
{
    const lc_dims *d = dims_of(rep->prob);
    size_t N = lc_rows(d), c = d->c;
    size_t Q = size_mul(4, size_mul(N, size_mul(c, c)));
    size_t saved = size_mul(d->v - 2, size_add(size_mul(5, Q), size_mul(16, size_mul(N, c))));
    size_t inputs = size_mul(4, size_add(size_add(lc_x_count(d), lc_bulk_count(d)), lc_p0_count(d)));
    size_t alpha = size_mul(4, lc_x_count(d)),
           grads = size_mul(4, size_add(lc_bulk_count(d), lc_p0_count(d)));
    lc_memory nm = naive_lc_memory(d), cm = cpu_lc_memory(d);
    char b[6][32];
    fprintf(f, "Where the bytes go.\n");
    if (nm.peak != SIZE_MAX) {
        format_bytes_exact(nm.forward_live, b[0], sizeof b[0]);
        format_bytes_exact(saved, b[1], sizeof b[1]);
        format_bytes_exact(Q, b[2], sizeof b[2]);
        fprintf(
            f,
            "  naive: of the %s bytes live after forward, %s (%.1f%%) are what autograd saves for the\n"
            "  tree's backward: v-2 = %zu pair products, each keeping five (c,c) float32 matrices per chain\n"
            "  (e1, s1, e2, s2, mul; one of them for all n*t chains is 4 n t c^2 = %s bytes) and two\n"
            "  int64 argmax vectors.\n",
            b[0], b[1], 100.0 * (double)saved / (double)nm.forward_live, d->v - 2, b[2]);
    }
    format_bytes_exact(cm.forward_live, b[0], sizeof b[0]);
    format_bytes_exact(inputs, b[1], sizeof b[1]);
    format_bytes_exact(alpha, b[2], sizeof b[2]);
    format_bytes_exact(cm.peak, b[3], sizeof b[3]);
    format_bytes_exact(grads, b[4], sizeof b[4]);
    format_bytes_exact(cm.peak - cm.forward_live - grads - size_mul(4, N), b[5], sizeof b[5]);
    fprintf(f,
            "  cpu: its %s bytes live after forward are the inputs (%s), the alphas (n,t,v,c) saved for\n"
            "  backward (%s bytes, the size of x) and out; its peak, %s, adds dout, the gradients dbulk and\n"
            "  dp0 (%s) and %s bytes of (n,c) scratch. dx costs nothing: it is written over the alphas.\n",
            b[0], b[1], b[2], b[3], b[4], b[5]);
}

static void epilogue(const lesson_report *rep, FILE *f)
{
    const lc_dims *d = dims_of(rep->prob);
    for (int k = 0; k < rep->n; k++)
        if (rep->res[k].row.ran && rep->ref[OUT])
            fprintf(f, "log Z (out) relative error vs double, worst chain: %-8s %.2e\n", rep->res[k].row.impl,
                    logz_rel_err(d, rep->res[k].result[OUT], rep->ref[OUT]));
    zero_padding(rep, f);
    const lesson_result *naive = lesson_report_find(rep, "naive"), *cpu = lesson_report_find(rep, "cpu");
    lc_memory nm = naive_lc_memory(d);
    if (cpu && cpu->validated && (!naive || !naive->row.ran) && nm.peak != SIZE_MAX)
        fprintf(f, "\nnaive / cpu: predicted peak %.1fx (naive not run)\n",
                (double)nm.peak / (double)cpu->row.peak_bytes);
    fprintf(f, "\n");
    where_bytes_go(rep, f);
}

/* The first screen's answer, under the table: the forum's figure (naive's formula at its size) beside this
 * run's, the reason in one line, the saving. */
static void answer(const lesson_report *rep, FILE *f)
{
    const lesson_result *naive = lesson_report_find(rep, "naive"), *cpu = lesson_report_find(rep, "cpu");
    mem_formula forum;
    char b[32], h[16];
    if (lesson_size_formula(rep->L, "forum", "naive", &forum) != 0) return;
    format_bytes_exact(forum.peak, b, sizeof b);
    format_bytes_human(forum.peak, h, sizeof h);
    fprintf(f, "\nthe forum: its tree needs %s bytes (%s) at its size (naive's formula there): out of memory",
            b, h);
    if (naive && naive->row.ran) {
        format_bytes_exact(naive->row.peak_bytes, b, sizeof b);
        fprintf(f, "; this run's naive peaks at %s", b);
    }
    fprintf(f, "\nwhy: each pair product of the tree keeps five (c, c) matrices per chain for backward, "
               "(v-2) products; the forward algorithm keeps one (n, t, v, c) alpha\n");
    mem_formula fix;
    if (lesson_size_formula(rep->L, "forum", "cpu", &fix) == 0 && fix.peak > 0) {
        format_bytes_exact(fix.peak, b, sizeof b);
        fprintf(f, "the fix: the forward algorithm (cpu) needs %s bytes at the forum's size, %.1fx less", b,
                (double)forum.peak / (double)fix.peak);
        if (naive && cpu && naive->row.ran && cpu->row.ran) {
            size_t n = naive->row.peak_bytes, c = cpu->row.peak_bytes;
            format_bytes_exact(n > c ? n - c : c - n, b, sizeof b);
            fprintf(f, "; in this run it peaks %s bytes %s than naive", b, n > c ? "lower" : "higher");
        }
        fprintf(f, "\n");
    }
}

const lesson lesson2_def = {
    .number = 2,
    .program = "lesson2",
    .title = "Lesson 2: log-space matrix chain  log(p0^T D_0 P_0 D_1 P_1 ... P_{v-2} D_{v-1} 1)",
    .summary = "log-space matrix chain: the forum's tree of (c,c) products vs the forward algorithm\n"
               "  (default size medium: most of its run time is naive's c^3 tree)",
    .dim_names = {"n", "t", "v", "c"},
    .sizes = {{.name = "tiny", .dims = {2, 1, 5, 3}},
              {.name = "small", .dims = {10, 1, 6, 40}},
              {.name = "medium", .dims = {100, 1, 40, 100}},
              {.name = "forum", .dims = {500, 1, 40, 200}}},
    .default_size = "medium",
    .make_problem = make_problem,
    .tensors =
        {[X] =
             {.name = "x", .role = LT_INPUT, .type = DT_F32, .label = "x (n,t,v,c) input", .shape = shape_x},
         [BULK] = {.name = "bulk",
                   .role = LT_INPUT,
                   .type = DT_F32,
                   .label = "bulk (1,t,v-1,c,c) input",
                   .shape = shape_bulk},
         [P0] =
             {.name = "p0", .role = LT_INPUT, .type = DT_F32, .label = "p0 (1,t,c) input", .shape = shape_p0},
         [DOUT] = {.name = "dout",
                   .role = LT_UPSTREAM,
                   .type = DT_F32,
                   .label = "dout (n,t) upstream gradient",
                   .shape = shape_out},
         [OUT] = {.name = "out", .role = LT_OUTPUT, .type = DT_F32, .shape = shape_out},
         [DX] = {.name = "dx", .role = LT_GRAD, .type = DT_F32, .shape = shape_x, .grad_of = X},
         [DBULK] = {.name = "dbulk", .role = LT_GRAD, .type = DT_F32, .shape = shape_bulk, .grad_of = BULK},
         [DP0] = {.name = "dp0", .role = LT_GRAD, .type = DT_F32, .shape = shape_p0, .grad_of = P0}},
    .fill = fill,
    .reference = reference,
    .tolerance = 1e-4,
    .tolerance_why =
        "float32 rounding accumulates over the v-1 recursion steps, so the bound grows linearly: "
        "1e-4 * max(1, v/64); measured 6e-6 at v=40 and 1.5e-4 at v=512; a wrong index errs by O(1)",
    .tolerance_of = tolerance_of,
    .impls =
        {{.name = "naive",
          .about = "the forum's tree: (n,t,v-1,c,c) log matrices multiplied pairwise, every autograd "
                   "intermediate kept",
          .memory = naive_memory,
          .forward = naive_forward,
          .backward = naive_backward,
          .work = naive_work},
         {.name = "cpu",
          .about =
              "forward algorithm: alpha recursion (n x c).(c x c) per step, alphas (n,t,v,c) saved; beta "
              "backward",
          .memory = cpu_memory,
          .forward = cpu_forward,
          .backward = cpu_backward,
          .work = cpu_work},
         {LESSON_CUDA_VERSION(1),
          .about = "log-space CUDA kernels (tiled vector x matrix with online logsumexp), no cuBLAS",
          .memory = cuda_v1_memory, .unfit = cuda_v1_unfit, .forward = cuda_forward,
          .backward = cuda_backward},
         {LESSON_CUDA_VERSION(2),
          .about =
              "cpu's factorisation on the GPU: per step one cuBLAS GEMM over all t (strided batched) + a "
              "warp-per-row kernel",
          .uses_cublas = 1, .memory = cuda_memory, .unfit = cuda_unfit, .forward = cuda_forward,
          .backward = cuda_backward},
         {LESSON_CUDA_VERSION(3),
          .about = "v2's step loops captured into a CUDA Graph once per shape, replayed as one launch: 2 "
                   "launches per pass instead of 5v-2 (same kernels, GEMMs and memory)",
          .uses_cublas = 1, .graph = 1, .memory = cuda_memory, .unfit = cuda_unfit, .forward = cuda_forward,
          .backward = cuda_backward},
         {LESSON_CUDA_VERSION(4),
          .about =
              "one persistent kernel per pass: a block owns 4 rows and walks the whole chain, P_i streamed "
              "from L2; backward's dbulk one batched GEMM over every step (1 + 3 launches)",
          .uses_cublas = 1, .memory = cuda_v4_memory, .unfit = cuda_v4_unfit, .forward = cuda_forward,
          .backward = cuda_backward},
         {LESSON_CUDA_VERSION(5),
          .about =
              "v4 with P's rows copied ahead: each warp's next 7 rows of P on their way (cp.async into its "
              "own ring in shared memory, across steps), no clamps, one thread per state between walks (v4's "
              "memory)",
          .uses_cublas = 1, .memory = cuda_v4_memory, .unfit = cuda_v5_unfit, .forward = cuda_forward,
          .backward = cuda_backward}},
    .cuda_order = {5, 3, 4, 2, 1}, /* fastest first: docs/tools/cuda_order.py 2 */
    .preamble = preamble,
    .epilogue = epilogue,
    .answer = answer,
    .legend =
        "Labels: n batch rows, t chains per row (1 in the forum), v variables, c states; m = the matrices\n"
        "entering a tree level, m/2 its pair products. \"level:\" labels are reused by every level of the\n"
        "tree (allocs = levels), so their peak bytes are the largest level's; \"saved\" marks what autograd\n"
        "keeps for backward. (\"live after forward\" is what torch.cuda.memory_allocated() would print.)",
};
