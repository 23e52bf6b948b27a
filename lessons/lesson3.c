/* lesson3.c - MaxSim: torch.einsum('ijk,mnk->ijmn', a, b).max(-1).values.sum(1) without the 4-D tensor.
 *
 * The lesson as data (lesson.h) and the adapters from the generic session to the typed implementations.
 * The implementations, their options and what each does: build/lesson3 --help. Their files, in reading order:
 * the reading path at the top of docs/lesson-3.md.
 *   build/lesson3 --size medium     build/lesson3 --size medium --recompute
 */
#include "../kernels/maxsim.h"
#include "lesson.h"

#include "lesson_defs.h"
#include "maxsim_reference.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static_assert(sizeof(ms_problem) <= sizeof(lesson_problem), "the problem fits lesson_problem");
static const char *const precision_names[] = {"bf16", "fp16", NULL}; /* MS_BF16, MS_FP16 */

static const ms_problem *prob_of(const void *p) { return p; }
static const ms_dims *dims_of(const void *p) { return &prob_of(p)->d; }

static const char *make_problem(const long long *dims, const long long *opts, void *prob)
{
    ms_problem p = {{(size_t)dims[0], (size_t)dims[1], (size_t)dims[2], (size_t)dims[3], (size_t)dims[4]},
                    (int)opts[MS_OPT_RECOMPUTE], (int)opts[MS_OPT_DETERMINISTIC],
                    (int)opts[MS_OPT_PRECISION]};
    if (ms_scores_count(&p.d) == SIZE_MAX || size_mul(ms_scores_count(&p.d), 8) == SIZE_MAX)
        return "I*J*M*N*8 overflows 64 bits";
    if (p.d.N > INT32_MAX) return "N must stay below 2^31: the argmax is stored as int32";
    memcpy(prob, &p, sizeof p);
    return NULL;
}

static int shape_a(const void *p, size_t *s)
{
    return lesson_shape3(s, dims_of(p)->I, dims_of(p)->J, dims_of(p)->K);
}
static int shape_b(const void *p, size_t *s)
{
    return lesson_shape3(s, dims_of(p)->M, dims_of(p)->N, dims_of(p)->K);
}
static int shape_out(const void *p, size_t *s) { return lesson_shape2(s, dims_of(p)->I, dims_of(p)->M); }

static void fill(const void *prob, uint64_t seed, void *const *t)
{
    ms_fill_inputs(dims_of(prob), seed, t[MS_A], t[MS_B], t[MS_DOUT]);
}

static void reference(const void *prob, void *const *t, double *const *ref)
{
    ms_reference(dims_of(prob), t[MS_A], t[MS_B], t[MS_DOUT], ref[MS_OUT], ref[MS_DA], ref[MS_DB]);
}

/* The reference costs I*J*M*N*K double multiply-adds in cblas_dgemm (no 4-D tensor): past 2e11, minutes. */
static const char *reference_unfit(const void *prob)
{
    static char why[160];
    double fmas = ms_gemm_fmas(dims_of(prob));
    if (fmas <= 2e11) return NULL;
    snprintf(why, sizeof why,
             "the float64 reference needs %.3g multiply-adds (I*J*M*N*K), hours at this size", fmas);
    return why;
}

/* --- adapters ------------------------------------------------------------------------------------------- */
static_assert(sizeof(naive_ms_saved) <= sizeof(((lesson_run *)0)->saved), "naive's saved state fits the run");
static_assert(sizeof(cpu_ms_saved) <= sizeof(((lesson_run *)0)->saved), "cpu's saved state fits the run");
static_assert(sizeof(cuda_ms_saved) <= sizeof(((lesson_run *)0)->saved), "cuda's saved state fits the run");

static void naive_forward(lesson_run *r)
{
    r->t[MS_OUT] =
        naive_ms_forward(dims_of(r->prob), r->t[MS_A], r->t[MS_B], (naive_ms_saved *)r->saved.bytes);
}
static void naive_backward(lesson_run *r)
{
    naive_ms_backward(dims_of(r->prob), r->t[MS_A], r->t[MS_B], (naive_ms_saved *)r->saved.bytes,
                      r->t[MS_DOUT], (float **)&r->t[MS_DA], (float **)&r->t[MS_DB]);
}
static void cpu_forward(lesson_run *r)
{
    r->t[MS_OUT] = cpu_ms_forward(dims_of(r->prob), r->t[MS_A], r->t[MS_B], prob_of(r->prob)->recompute,
                               (cpu_ms_saved *)r->saved.bytes);
}
static void cpu_backward(lesson_run *r)
{
    cpu_ms_backward(dims_of(r->prob), r->t[MS_A], r->t[MS_B], (cpu_ms_saved *)r->saved.bytes, r->t[MS_DOUT],
                    (float **)&r->t[MS_DA], (float **)&r->t[MS_DB]);
}
#ifdef HAVE_CUDA
/* The one CUDA dispatch: the row's version picks the implementation (kernels/maxsim.h). A version without a
 * case leaves out unset, and the session stops there with that message. */
static void cuda_forward(lesson_run *r)
{
    const ms_problem *p = prob_of(r->prob);
    const ms_dims *d = &p->d;
    const float *a = r->t[MS_A], *b = r->t[MS_B];
    int rc = p->recompute, det = p->deterministic;
    cuda_ms_saved *s = (cuda_ms_saved *)r->saved.bytes;
    switch (r->version) {
    case 1: r->t[MS_OUT] = ms1_forward(d, a, b, rc, det, s); break;
    case 2: r->t[MS_OUT] = ms2_forward(d, a, b, rc, det, s); break;
    case 3: r->t[MS_OUT] = ms3_forward(d, a, b, rc, det, s); break;
    case 4: r->t[MS_OUT] = ms4_forward(d, a, b, rc, det, s); break;
    case 5: r->t[MS_OUT] = ms5_forward(d, a, b, rc, det, p->precision == MS_FP16, s); break;
    case 6: r->t[MS_OUT] = ms6_forward(d, a, b, rc, det, p->precision == MS_FP16, s); break;
    }
}
static void cuda_backward(lesson_run *r)
{
    const ms_dims *d = dims_of(r->prob);
    const float *a = r->t[MS_A], *b = r->t[MS_B], *dout = r->t[MS_DOUT];
    float **da = (float **)&r->t[MS_DA], **db = (float **)&r->t[MS_DB];
    cuda_ms_saved *s = (cuda_ms_saved *)r->saved.bytes;
    switch (r->version) {
    case 1: ms1_backward(d, a, b, s, dout, da, db); break;
    case 2: ms2_backward(d, a, b, s, dout, da, db); break;
    case 3: ms3_backward(d, a, b, s, dout, da, db); break;
    case 4: ms4_backward(d, a, b, s, dout, da, db); break;
    case 5: ms5_backward(d, a, b, s, dout, da, db); break;
    case 6: ms6_backward(d, a, b, s, dout, da, db); break;
    }
}
#else
#define cuda_forward NULL
#define cuda_backward NULL
#endif

static mem_formula naive_memory(const void *p) { return naive_ms_memory(dims_of(p)); }
static mem_formula cpu_memory(const void *p) { return cpu_ms_memory(dims_of(p), prob_of(p)->recompute); }
static mem_formula cuda_memory(const void *p)
{
    return cuda_ms_memory(dims_of(p), prob_of(p)->recompute, prob_of(p)->deterministic, 0);
}
/* cuda-v5 and v6 also hold 16-bit copies of a and b while their forward runs */
static mem_formula cuda5_memory(const void *p)
{
    return cuda_ms_memory(dims_of(p), prob_of(p)->recompute, prob_of(p)->deterministic, 1);
}
static const char *cuda_unfit(const void *p) { return cuda_ms_unfit(dims_of(p)); }
#ifdef HAVE_CUDA
/* the dims first (cuda_ms_unfit), then the version's own check: K and the device's limits */
static const char *cuda4_unfit(const void *p)
{
    const char *why = cuda_ms_unfit(dims_of(p));
    return why ? why : ms4_unfit(dims_of(p));
}
static const char *cuda5_unfit(const void *p)
{
    const char *why = cuda_ms_unfit(dims_of(p));
    return why ? why : ms5_unfit(dims_of(p));
}
/* v6 also needs compute capability 9.0 (ms6_unfit) */
static const char *cuda6_unfit(const void *p)
{
    const char *why = cuda_ms_unfit(dims_of(p));
    return why ? why : ms6_unfit(dims_of(p));
}
#else
static const char *cuda4_unfit(const void *p) { return cuda_ms4_unfit(dims_of(p)); }
#define cuda5_unfit cuda4_unfit
#define cuda6_unfit cuda4_unfit
#endif

/* cpu is fused, so memory never stops it; time does: the session skips it, with an estimate, beyond
 * --time-limit. naive's work is one GEMM forward and two backward (its memory stops it first anyway). */
static double cpu_work(const void *p) { return cpu_ms_work(dims_of(p), prob_of(p)->recompute); }
static double naive_work(const void *p) { return 3.0 * ms_gemm_fmas(dims_of(p)); }

/* --- what the lesson says before and after the table ---------------------------------------------------- */
static void preamble(const void *prob, FILE *f)
{
    const ms_dims *d = dims_of(prob);
    char ex[32], hu[16];
    format_bytes_exact(size_mul(ms_scores_count(d), 4), ex, sizeof ex);
    format_bytes_human(size_mul(ms_scores_count(d), 4), hu, sizeof hu);
    fprintf(f, "the einsum's scores [I,J,M,N] f32: %s bytes (%s); the GEMM behind them: %.4g multiply-adds\n",
            ex, hu, ms_gemm_fmas(d));
    fprintf(f,
            "inputs on a 1/8 grid, so every score is exact in float32 and all implementations pick the same "
            "argmax (ties: lowest n)\n");
}

/* Inputs, outputs and gradients: what any implementation must hold; the rest is the algorithm's. */
static size_t io_bytes(const ms_dims *d)
{
    size_t in = size_mul(size_add(ms_a_count(d), ms_b_count(d)), 4), o = size_mul(ms_out_count(d), 4);
    return size_add(size_mul(in, 2), size_mul(o, 2)); /* a b da db | out dout */
}

/* The seed thread's profiler table ran its example, I=20, J=20, M=25, N=19, K=25. */
static void thread_figures(const ms_dims *d, FILE *f)
{
    size_t sc = size_mul(ms_scores_count(d), 4), mx = size_mul(ms_arg_count(d), 4 + 8);
    int thread = d->I == 20 && d->J == 20 && d->M == 25 && d->N == 19 && d->K == 25;
    char se[32], sh[16], me[32], mh[16];
    format_bytes_exact(sc, se, sizeof se);
    format_bytes_human(sc, sh, sizeof sh);
    format_bytes_exact(mx, me, sizeof me);
    format_bytes_human(mx, mh, sizeof mh);
    fprintf(
        f,
        "einsum result (aten::bmm) %s bytes (%s); max(-1) values f32 + indices int64 (aten::max) %s bytes "
        "(%s)%s\n",
        se, sh, me, mh, thread ? "  (the thread's profiler: 742.19 Kb and 117.19 Kb)" : "");
}

/* The thread's proposal: chunks of k queries, each checkpointed (its 4-D slab re-made in backward). */
static void chunk_answer(const ms_dims *d, FILE *f)
{
    char sb[32], sh[16];
    size_t slab = size_mul(size_mul(ms_scores_count(d), 4), 1) / (d->I ? d->I : 1); /* k = 1 query */
    format_bytes_exact(slab, sb, sizeof sb);
    format_bytes_human(slab, sh, sizeof sh);
    fprintf(
        f,
        "chunk + checkpoint (the thread's question), one query per chunk: each chunk's [1,J,M,N] slab is "
        "%s bytes (%s),\nmade twice (forward, recompute) plus its zero-filled gradient and two backward "
        "GEMMs "
        "over it: about 4x the\neinsum's multiply-adds. It works; the fused reduction needs no slab and 1x "
        "(2x with --recompute).\n",
        sb, sh);
}

static void beyond_line(const lesson_report *rep, FILE *f)
{
    const ms_dims *d = dims_of(rep->prob);
    const lesson_result *naive = lesson_report_find(rep, "naive");
    size_t io = io_bytes(d), np = naive ? naive->row.peak_bytes : naive_ms_memory(d).peak;
    char b1[32], b2[32];
    format_bytes_exact(io, b1, sizeof b1);
    format_bytes_exact(np - io, b2, sizeof b2);
    fprintf(f, "bytes beyond inputs, outputs and gradients (%s bytes) at peak:\n", b1);
    fprintf(f, "  %-8s %15s%s\n", "naive", b2, naive ? "" : " (predicted, not run)");
    for (int k = 0; k < rep->n; k++) {
        const lesson_result *r = &rep->res[k];
        if (!r->row.ran || r == naive) continue;
        size_t beyond = r->row.peak_bytes - io;
        format_bytes_exact(beyond, b2, sizeof b2);
        fprintf(f, "  %-8s %15s   naive / %s: peak %.1fx, beyond %.1fx\n", r->row.impl, b2, r->row.impl,
                (double)np / (double)r->row.peak_bytes,
                beyond ? (double)(np - io) / (double)beyond : INFINITY);
    }
}

static void epilogue(const lesson_report *rep, FILE *f)
{
    const ms_problem *p = prob_of(rep->prob);
    fprintf(f, "\n");
    thread_figures(&p->d, f);
    chunk_answer(&p->d, f);
    beyond_line(rep, f);
    char tile[32];
    format_bytes_exact(cpu_ms_scratch_bytes(&p->d), tile, sizeof tile);
    fprintf(
        f,
        "\nWhere the bytes go: naive's peak is the [I,J,M,N] f32 tensor, made twice (the einsum's scores "
        "in forward,\nMaxBackward's zero-filled gradient in backward) plus int64 indices [I,J,M]; cpu holds "
        "%s,\na %s-byte scores tile while it runs, and otherwise only the inputs, the output and the "
        "gradients.\n",
        p->recompute ? "nothing between forward and backward (--recompute)"
                     : "the int32 argmax [I,J,M] between forward and backward",
        tile);
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
    fprintf(f, "\nthe forum: the einsum needs %s bytes (%s) at its size (naive's formula there): out of "
               "memory", b, h);
    if (naive && naive->row.ran) {
        format_bytes_exact(naive->row.peak_bytes, b, sizeof b);
        fprintf(f, "; this run's naive peaks at %s", b);
    }
    fprintf(f, "\nwhy: the einsum writes every score [I,J,M,N] for max(-1) to keep one in N, and max's "
               "backward a zero-filled gradient as large\n");
    mem_formula fix;
    if (lesson_size_formula(rep->L, "forum", "cpu", &fix) != 0 || fix.peak == 0) return;
    format_bytes_exact(fix.peak, b, sizeof b);
    format_bytes_human(fix.peak, h, sizeof h);
    fprintf(f, "the fix: the max fused into a tiled GEMM (cpu) needs %s bytes (%s) at the forum's size, "
               "%.0fx less", b, h, (double)forum.peak / (double)fix.peak);
    if (naive && cpu && naive->row.ran && cpu->row.ran) {
        size_t n = naive->row.peak_bytes, c = cpu->row.peak_bytes;
        format_bytes_exact(n > c ? n - c : c - n, b, sizeof b);
        const char *kept = prob_of(rep->prob)->recompute
                               ? "naive keeps its int64 argmax [I,J,M], cpu nothing (--recompute)"
                               : "both keep the argmax [I,J,M], naive's int64, cpu's int32";
        fprintf(f, "; in this run it peaks %s bytes %s than naive\n  (after forward %s)", b,
                n > c ? "lower" : "higher", kept);
    }
    fprintf(f, "\n");
}

const lesson lesson3_def = {
    .number = 3,
    .program = "lesson3",
    .title = "Lesson 3: MaxSim  out[i,m] = sum_j max_n <a[i,j,:], b[m,n,:]>  (the forum's 4-D einsum)",
    .summary =
        "MaxSim / late interaction: einsum('ijk,mnk->ijmn').max(-1).values.sum(1) with and without the\n"
        "  4-D tensor (default size medium; forum: naive is predicted, cpu estimated)",
    .dim_names = {"I", "J", "M", "N", "K"},
    .sizes = {{.name = "tiny", .dims = {2, 3, 2, 4, 3}},
              {.name = "small", .dims = {20, 20, 25, 19, 25}},
              {.name = "medium", .dims = {32, 256, 32, 256, 128}},
              {.name = "forum", .dims = {300, 2000, 315, 1990, 256}}},
    .default_size = "medium",
    .opts = {[MS_OPT_RECOMPUTE] = {.flag = "--recompute",
                                   .help = "cpu, cuda: keep nothing for backward; recompute the argmax there "
                                           "(checkpointing)",
                                   .max = 1},
             [MS_OPT_DETERMINISTIC] =
                 {.flag = "--deterministic",
                  .help = "cuda: db by buckets of rows sorted by argmax instead of atomics (bitwise "
                          "reproducible)",
                  .max = 1},
             [MS_OPT_PRECISION] = {.flag = "--precision",
                                   .takes_value = 1,
                                   .max = 1,
                                   .names = precision_names,
                                   .help = "cuda-v5, v6: their operands' 16-bit type, bf16 or fp16"}},
    .make_problem = make_problem,
    .tensors = {[MS_A] = {.name = "a",
                          .role = LT_INPUT,
                          .type = DT_F32,
                          .label = "a [I,J,K] input",
                          .shape = shape_a},
                [MS_B] = {.name = "b",
                          .role = LT_INPUT,
                          .type = DT_F32,
                          .label = "b [M,N,K] input",
                          .shape = shape_b},
                [MS_DOUT] = {.name = "dout",
                             .role = LT_UPSTREAM,
                             .type = DT_F32,
                             .label = "dout [I,M] upstream gradient",
                             .shape = shape_out},
                [MS_OUT] = {.name = "out", .role = LT_OUTPUT, .type = DT_F32, .shape = shape_out},
                [MS_DA] = {.name = "da", .role = LT_GRAD, .type = DT_F32, .shape = shape_a, .grad_of = MS_A},
                [MS_DB] = {.name = "db", .role = LT_GRAD, .type = DT_F32, .shape = shape_b, .grad_of = MS_B}},
    .fill = fill,
    .reference = reference,
    .reference_unfit = reference_unfit,
    .tolerance = 1e-4,
    .tolerance_why =
        "scores are exact (grid inputs); float32 sums of up to I*J gradient terms err by ~6e-8*sqrt(I*J); "
        "a wrong argmax moves a whole term, ~1e-1",
    .impls =
        {{.name = "naive",
          .about = "the einsum: scores [I,J,M,N] (one GEMM), max(-1) with int64 indices, sum(1); backward "
                   "scatters dout into a zero [I,J,M,N] and runs two GEMMs over it",
          .memory = naive_memory,
          .forward = naive_forward,
          .backward = naive_backward,
          .work = naive_work},
         {.name = "cpu",
          .about =
              "fused: tiles of (i,j) x (m,n) reduced to max/argmax at once, int32 argmax saved (none with "
              "--recompute); gather da, scatter-add db",
          .memory = cpu_memory,
          .forward = cpu_forward,
          .backward = cpu_backward,
          .work = cpu_work},
         {LESSON_CUDA_VERSION(1),
          .about = "one thread per (i,m) looping j, n, k: db by atomics (--deterministic: a "
                   "parallel stable counting sort of the rows by argmax)",
          .memory = cuda_memory, .unfit = cuda_unfit, .forward = cuda_forward, .backward = cuda_backward},
         {LESSON_CUDA_VERSION(2),
          .about = "FP32 tiles as a GEMM makes them, the max in the epilogue: one block per (i,m), 64x64 "
                   "shared-memory tiles, FP32 4x4 register tiles, sum over j in the block; same backward as "
                   "v1",
          .memory = cuda_memory, .unfit = cuda_unfit, .forward = cuda_forward, .backward = cuda_backward},
         {LESSON_CUDA_VERSION(3),
          .about =
              "TF32 WMMA tensor cores, the max from shared memory: 64x64 tiles, max/argmax on the tile in "
              "padded shared memory, float4 loads, blocks m-outer so b[m] stays in L2; same backward as v1 "
              "(any K: cuda runs it where v4, which takes K <= 256, does not fit)",
          .memory = cuda_memory, .unfit = cuda_unfit, .forward = cuda_forward, .backward = cuda_backward},
         {LESSON_CUDA_VERSION(4),
          .about =
              "mma.sync TF32, the max on the accumulators: a[i]'s 64 rows resident in shared memory, b "
              "streamed by a 4-stage cp.async ring into XOR-swizzled tiles read by ldmatrix, TF32 rounding "
              "once per element; K <= 256; same backward as v1",
          .memory = cuda_memory, .unfit = cuda4_unfit, .forward = cuda_forward, .backward = cuda_backward},
         {LESSON_CUDA_VERSION(5),
          .about =
              "v4 on 16-bit operands (--precision bf16 or fp16): a and b converted once, m16n8k16, a[i]'s "
              "128 rows resident; scores move by the operands' rounding (lesson-3-appendix.md); K <= 256; "
              "same backward as v1",
          .memory = cuda5_memory, .unfit = cuda5_unfit, .forward = cuda_forward, .backward = cuda_backward},
         {LESSON_CUDA_VERSION(6),
          .about = "v5 on Hopper's wgmma and TMA (compute capability 9.0 only): b by TMA into a 4-stage "
                   "mbarrier ring, wgmma on a[i]'s 256 resident rows, the max on the accumulators; K <= 256; "
                   "same backward as v1",
          .memory = cuda5_memory, .unfit = cuda6_unfit, .forward = cuda_forward, .backward = cuda_backward}},
    .cuda_order = {5, 4, 3, 2, 1, 6}, /* fastest first: docs/tools/cuda_order.py 3 (v6 untimed: last) */
    .preamble = preamble,
    .epilogue = epilogue,
    .answer = answer,
    .legend = "(\"beyond\" = peak minus inputs, outputs and gradients: what the algorithm itself costs.)",
};
