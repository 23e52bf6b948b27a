/* lesson4.c - a GRU with a sampled latent in a step loop: why eager autograd keeps 10H floats per step.
 *
 * The lesson as data (lesson.h) and the adapters from the generic session to the typed implementations.
 * The implementations, their options (--checkpoint, --block) and what each does: build/lesson4 --help. Their
 * files, in reading order: the reading path at the top of docs/lesson-4.md.
 *   build/lesson4 --size medium                  # naive vs cpu
 *   build/lesson4 --size medium --checkpoint 16  # the segment trade
 */
#include "lesson4.h"

#include "arena.h"
#include "../kernels/runtime/cuda_track.h" /* CUBLAS_WORKSPACE_BYTES: a constant, no CUDA needed */
#include "rng.h"
#include "track.h"
#include "../naive/gru_eager.h"
#include "../optimized/gru_fused.h"
#include "gru_reference.h"
#include "lesson_defs.h"

#include <assert.h>
#include <math.h>
#include <string.h>

static const gru_problem *prob_of(const void *prob) { return prob; }
static const gru_dims *dims_of(const void *prob) { return &prob_of(prob)->d; }

const char *gru_make_problem(const long long *dims, const long long *opts, void *prob)
{
    gru_problem p;
    memset(&p, 0, sizeof p);
    p.d = (gru_dims){(size_t)dims[0], (size_t)dims[1], (size_t)dims[2], (size_t)dims[3]};
    p.o = (gru_opts){(size_t)opts[0], (size_t)opts[1]};
    if (gru_seq_count(&p.d) == SIZE_MAX || gru_x_count(&p.d) == SIZE_MAX ||
        size_mul(p.d.H, p.d.H) == SIZE_MAX || size_mul(gru_seq_count(&p.d), 10 * 4) == SIZE_MAX)
        return "T*Bt*H (or T*Bt*X) times the bytes saved per step overflows 64 bits";
    p.probe = gru_sampler_probe();
    static_assert(sizeof(gru_problem) <= sizeof(lesson_problem), "the problem fits the session's storage");
    memcpy(prob, &p, sizeof p);
    return NULL;
}

static int shape_x(const void *p, size_t *s)
{
    return lesson_shape3(s, dims_of(p)->T, dims_of(p)->B, dims_of(p)->X);
}
static int shape_bh(const void *p, size_t *s) { return lesson_shape2(s, dims_of(p)->B, dims_of(p)->H); }
static int shape_seq(const void *p, size_t *s)
{
    return lesson_shape3(s, dims_of(p)->T, dims_of(p)->B, dims_of(p)->H);
}
static int shape_wenc(const void *p, size_t *s) { return lesson_shape2(s, dims_of(p)->H, 2 * dims_of(p)->H); }
static int shape_wih(const void *p, size_t *s) { return lesson_shape2(s, dims_of(p)->X, 3 * dims_of(p)->H); }
static int shape_wzh(const void *p, size_t *s) { return lesson_shape2(s, dims_of(p)->H, 3 * dims_of(p)->H); }

/* x, eps, dout ~ N(0, 1); h0 ~ N(0, 0.5); weights at their layer's usual scale 1/sqrt(fan-in), W_enc halved
 * so that exp(lv/2) stays near 1 (the forum's latent is a unit-scale Gaussian). Drawn in this order. */
void gru_fill(const void *prob, uint64_t seed, void *const *t)
{
    const gru_dims *d = dims_of(prob);
    rng r;
    rng_seed(&r, seed);
    rng_fill_normal_f32(&r, t[X_], gru_x_count(d), 0.0f, 1.0f);
    rng_fill_normal_f32(&r, t[H0], gru_h0_count(d), 0.0f, 0.5f);
    rng_fill_normal_f32(&r, t[EPS], gru_seq_count(d), 0.0f, 1.0f);
    rng_fill_normal_f32(&r, t[WENC], gru_wenc_count(d), 0.0f, 0.5f / sqrtf((float)d->H));
    rng_fill_normal_f32(&r, t[WIH], gru_wih_count(d), 0.0f, 1.0f / sqrtf((float)d->X));
    rng_fill_normal_f32(&r, t[WZH], gru_wzh_count(d), 0.0f, 1.0f / sqrtf((float)d->H));
    rng_fill_normal_f32(&r, t[DOUT], gru_seq_count(d), 0.0f, 1.0f);
}

static gru_inputs inputs_of(void *const *t)
{
    return (gru_inputs){t[X_], t[H0], t[EPS], t[WENC], t[WIH], t[WZH], t[DOUT]};
}

static void reference(const void *prob, void *const *t, double *const *ref)
{
    gru_inputs in = inputs_of(t);
    gru_ref_outputs o = {ref[OUT], ref[DX], ref[DH0], ref[DWENC], ref[DWIH], ref[DWZH]};
    gru_reference(dims_of(prob), &in, &o);
}

/* The reference costs T B (X + 2H) 3H double multiply-adds each way (small per-step dgemms): refuse past
 * ~2e10. */
static const char *reference_unfit(const void *prob)
{
    const gru_dims *d = dims_of(prob);
    double work = (double)d->T * d->B * (d->X + 2.0 * d->H) * 3.0 * d->H;
    return work > 2e10 ? "the float64 reference would take minutes at this size (T*Bt*(X+2H)*3H > 2e10)"
                       : NULL;
}

/* --- the step sampler ----------------------------------------------------------------------------------- */
static gru_trace *trace_now;

static void trace_push(gru_trace *tr, gru_phase ph, size_t t, mem_counters c)
{
    if (tr->n == GRU_TRACE_MAX) return;
    tr->phase[tr->n] = ph;
    tr->step[tr->n] = t;
    tr->live[tr->n] = c.live_bytes - tr->base_live + tr->inputs;
    tr->n++;
}

static void sample(void *ctx, gru_phase ph, size_t t)
{
    (void)ctx;
    gru_trace *tr = trace_now;
    if (!tr) return;
    mem_counters c = track_counters(MEM_HOST);
    if (ph == GRU_FWD_BEGIN) { /* the session has just copied the inputs in */
        tr->n = 0;
        tr->base_live = c.live_bytes;
        tr->base_allocs = c.allocs;
        return;
    }
    int last = ph == GRU_FWD_STEP ? t == tr->T - 1 : t == 0,
        first = ph == GRU_FWD_STEP ? t == 0 : t == tr->T - 1;
    if (ph == GRU_FWD_STEP && first) tr->fwd_first_allocs = c.allocs;
    if (ph == GRU_FWD_STEP && last) tr->fwd_last_allocs = c.allocs;
    if (ph == GRU_BWD_STEP && first) tr->bwd_first_allocs = c.allocs;
    if (ph == GRU_BWD_STEP && last) tr->bwd_last_allocs = c.allocs;
    int on_stride = ph == GRU_FWD_STEP ? (t + 1) % tr->stride == 0 : t % tr->stride == 0;
    if (ph == GRU_BWD_END || first || last || on_stride) trace_push(tr, ph, t, c);
}

static const gru_probe sampler = {sample, NULL};
const gru_probe *gru_sampler_probe(void) { return &sampler; }

void gru_sampler_attach(gru_trace *tr, const gru_dims *d, size_t stride)
{
    trace_now = tr;
    if (!tr) return;
    memset(tr, 0, sizeof *tr);
    tr->T = d->T;
    tr->stride = stride ? stride : 1;
    tr->inputs = gru_input_bytes(d);
}

double gru_trace_fwd_allocs_per_step(const gru_trace *tr)
{
    return tr->T > 1 ? (double)(tr->fwd_last_allocs - tr->fwd_first_allocs) / (double)(tr->T - 1) : 0.0;
}
double gru_trace_bwd_allocs_per_step(const gru_trace *tr)
{
    return tr->T > 1 ? (double)(tr->bwd_last_allocs - tr->bwd_first_allocs) / (double)(tr->T - 1) : 0.0;
}

/* The lesson's own traces: one per host implementation, recorded while the session runs it. */
static gru_trace lesson_traces[2];
static void trace_for(const gru_problem *p, int which)
{
    size_t stride = p->d.T >= 8 ? p->d.T / 8 : 1;
    gru_sampler_attach(&lesson_traces[which], &p->d, stride);
}

/* --- adapters ------------------------------------------------------------------------------------------- */
typedef struct {
    void *arena;
    gru_fused_ws ws;
} cpu_saved;
static_assert(sizeof(gru_eager_saved) <= sizeof(((lesson_run *)0)->saved),
              "naive's saved state fits the run");
static_assert(sizeof(cpu_saved) <= sizeof(((lesson_run *)0)->saved), "cpu's saved state fits the run");

static void naive_forward(lesson_run *r)
{
    const gru_problem *p = r->prob;
    trace_for(p, 0);
    r->t[OUT] = naive_gru_forward(&p->d, r->t[X_], r->t[H0], r->t[EPS], r->t[WENC], r->t[WIH], r->t[WZH],
                                  (gru_eager_saved *)r->saved.bytes, p->probe);
}
static void store_grads(lesson_run *r, const gru_grads *g)
{
    r->t[DX] = g->dx, r->t[DH0] = g->dh0, r->t[DWENC] = g->dW_enc, r->t[DWIH] = g->dW_ih,
    r->t[DWZH] = g->dW_zh;
}
static void naive_backward(lesson_run *r)
{
    const gru_problem *p = r->prob;
    gru_grads g;
    naive_gru_backward(&p->d, r->t[X_], r->t[H0], r->t[EPS], r->t[WENC], r->t[WIH], r->t[WZH], r->t[DOUT],
                       (gru_eager_saved *)r->saved.bytes, &g, p->probe);
    store_grads(r, &g);
    gru_sampler_attach(NULL, NULL, 0);
}
static void cpu_forward(lesson_run *r)
{
    const gru_problem *p = r->prob;
    cpu_saved *s = (cpu_saved *)r->saved.bytes;
    trace_for(p, 1);
    r->t[OUT] = cpu_gru_forward(&p->d, &p->o, r->t[X_], r->t[H0], r->t[EPS], r->t[WENC], r->t[WIH], r->t[WZH],
                                &s->arena, &s->ws, p->probe);
}
static void cpu_backward(lesson_run *r)
{
    const gru_problem *p = r->prob;
    cpu_saved *s = (cpu_saved *)r->saved.bytes;
    gru_grads g;
    cpu_gru_backward(&p->d, &p->o, r->t[X_], r->t[H0], r->t[EPS], r->t[WENC], r->t[WIH], r->t[WZH], r->t[OUT],
                     r->t[DOUT], s->arena, &s->ws, &g, p->probe);
    store_grads(r, &g);
    gru_sampler_attach(NULL, NULL, 0);
}
#ifdef HAVE_CUDA
/* The one CUDA adapter: version 1 launches the step loops, version 2 replays them as one CUDA Graph captured
 * once per shape (the same kernels and GEMMs), versions 3 and 4 run the forward loop as one persistent
 * cooperative kernel (backward: version 2's graph), version 5 backward's too; a version without a case leaves
 * out unset, and the session stops there. */
static void cuda_forward(lesson_run *r)
{
    const gru_problem *p = r->prob;
    cpu_saved *s = (cpu_saved *)r->saved.bytes;
    float *out = NULL;
    const gru_dims *d = &p->d;
    const gru_opts *o = &p->o;
    const float *x = r->t[X_], *h0 = r->t[H0], *eps = r->t[EPS], *We = r->t[WENC], *Wi = r->t[WIH],
                *Wz = r->t[WZH];
    switch (r->version) {
    case 1: out = cuda_gru_forward_v1(d, o, x, h0, eps, We, Wi, Wz, &s->arena, &s->ws); break;
    case 2: out = cuda_gru_forward_v2(d, o, x, h0, eps, We, Wi, Wz, &s->arena, &s->ws); break;
    case 3: out = cuda_gru_forward_v3(d, o, x, h0, eps, We, Wi, Wz, &s->arena, &s->ws); break;
    case 4: out = cuda_gru_forward_v4(d, o, x, h0, eps, We, Wi, Wz, &s->arena, &s->ws); break;
    case 5: out = cuda_gru_forward_v5(d, o, x, h0, eps, We, Wi, Wz, &s->arena, &s->ws); break;
    }
    r->t[OUT] = out;
}
static void cuda_backward(lesson_run *r)
{
    const gru_problem *p = r->prob;
    cpu_saved *s = (cpu_saved *)r->saved.bytes;
    gru_grads g;
    const gru_dims *d = &p->d;
    const gru_opts *o = &p->o;
    const float *x = r->t[X_], *h0 = r->t[H0], *eps = r->t[EPS], *We = r->t[WENC], *Wi = r->t[WIH],
                *Wz = r->t[WZH], *out = r->t[OUT], *dout = r->t[DOUT];
    switch (r->version) {
    case 1: cuda_gru_backward_v1(d, o, x, h0, eps, We, Wi, Wz, out, dout, s->arena, &s->ws, &g); break;
    case 2: cuda_gru_backward_v2(d, o, x, h0, eps, We, Wi, Wz, out, dout, s->arena, &s->ws, &g); break;
    case 3: cuda_gru_backward_v3(d, o, x, h0, eps, We, Wi, Wz, out, dout, s->arena, &s->ws, &g); break;
    case 4: cuda_gru_backward_v4(d, o, x, h0, eps, We, Wi, Wz, out, dout, s->arena, &s->ws, &g); break;
    case 5: cuda_gru_backward_v5(d, o, x, h0, eps, We, Wi, Wz, out, dout, s->arena, &s->ws, &g); break;
    default: return; /* no such version: the gradients stay unset and the session says so */
    }
    store_grads(r, &g);
}
#else
#define cuda_forward NULL
#define cuda_backward NULL
#endif

/* per step h W_enc (B H 2H), x_t W_ih (B X 3H), z W_zh (B H 3H) forward; backward twice that (weight and
 * input gradients): 3 T B (3 X H + 5 H^2) multiply-adds for both CPU versions */
static double gemm_work(const void *p)
{
    const gru_dims *d = dims_of(p);
    return 3.0 * (double)d->T * (double)d->B *
           (3.0 * (double)d->X * (double)d->H + 5.0 * (double)d->H * (double)d->H);
}
static mem_formula naive_memory(const void *p) { return naive_gru_memory(dims_of(p)); }
static mem_formula cpu_memory(const void *p) { return cpu_gru_memory(dims_of(p), &prob_of(p)->o); }
static mem_formula cuda_memory(const void *p) { return cuda_gru_memory(dims_of(p), &prob_of(p)->o); }
static mem_formula cuda_persistent_memory(const void *p) { return cuda_gru_persistent_memory(dims_of(p)); }
static const char *cuda_unfit(const void *p) { return cuda_gru_unfit(dims_of(p), &prob_of(p)->o); }
#ifdef HAVE_CUDA
static const char *cuda_v3_unfit(const void *p)
{
    const char *why = cuda_gru_unfit(dims_of(p), &prob_of(p)->o);
    return why ? why : gru3_unfit(dims_of(p), &prob_of(p)->o);
}
static const char *cuda_v4_unfit(const void *p)
{
    const char *why = cuda_gru_unfit(dims_of(p), &prob_of(p)->o);
    return why ? why : gru4_unfit(dims_of(p), &prob_of(p)->o);
}
static const char *cuda_v5_unfit(const void *p)
{
    const char *why = cuda_gru_unfit(dims_of(p), &prob_of(p)->o);
    return why ? why : gru5_unfit(dims_of(p), &prob_of(p)->o);
}
#else
#define cuda_v3_unfit cuda_unfit
#define cuda_v4_unfit cuda_unfit
#define cuda_v5_unfit cuda_unfit
#endif

/* --- what the lesson says before and after the table ---------------------------------------------------- */
/* The forum's "2x more memory than with LSTMs", per step: PyTorch's fused LSTM cell saves its 4H gate
 * activations (the workspace _thnn_fused_lstm_cell_backward reads) and the cell state c; h is saved by the
 * next step's GEMM and is the output. The forum's loop keeps 10H and stacks a copy of h. Per step, not per
 * run: inputs, weights and gradients are the same for both models and are not compared. */
static void print_lstm_comparison(const gru_dims *d, FILE *f)
{
    const size_t row = size_mul(size_mul(d->B, d->H), 4);
    char lstm[32], forum[32];
    format_bytes_exact(size_mul(6, row), lstm, sizeof lstm);
    format_bytes_exact(size_mul(11, row), forum, sizeof forum);
    fprintf(
        f,
        "an LSTM cell of the same H keeps 4 gates, c and h: 6*Bt*H*4 = %s bytes per step; the forum's loop "
        "keeps 10H plus its stacked copy of h: 11*Bt*H*4 = %s bytes per step, 11/6 = %.2f times the LSTM's\n",
        lstm, forum, 11.0 / 6.0);
}

/* cuda-v1's formula is cpu's plus cuBLAS's workspace, allocated once per run through the tracker: on a GPU
 * the peak includes it, so at small sizes its peak can be above naive's (which runs on the host, without
 * cuBLAS). cuda-v3 to v5 carve the saved rows alone. */
static void print_cuda_workspace(const gru_dims *d, const gru_opts *o, FILE *f)
{
    char cpu[32], ws[32], cuda[32], saved[32];
    format_bytes_exact(cpu_gru_memory(d, o).peak, cpu, sizeof cpu);
    format_bytes_exact(CUBLAS_WORKSPACE_BYTES, ws, sizeof ws);
    format_bytes_exact(cuda_gru_memory(d, o).peak, cuda, sizeof cuda);
    fprintf(
        f,
        "cuda-v1's peak = cpu's + the cuBLAS workspace (32 MiB, tracked, allocated once per run): %s + %s = "
        "%s bytes (cuda-v2's too)\n",
        cpu, ws, cuda);
    format_bytes_exact(gru_saved_arena_bytes(d), saved, sizeof saved);
    format_bytes_exact(cuda_gru_persistent_memory(d).peak, cuda, sizeof cuda);
    fprintf(
        f,
        "cuda-v3 to v5 compute x W_ih inside their kernels: their arena is the saved rows alone, T*Bt*6H*4 = "
        "%s bytes; their peak %s bytes\n",
        saved, cuda);
}

static void preamble(const void *prob, FILE *f)
{
    const gru_problem *p = prob;
    const gru_dims *d = &p->d;
    gru_fused_ws ws;
    arena a;
    char b[32];
    format_bytes_exact(ARENA_BYTES(a, gru_fused_carve(d, &p->o, &a, &ws)), b, sizeof b);
    fprintf(
        f,
        "cpu/cuda arena, allocated once before the loop: saved rows cap*Bt*6H*4 + x W_ih block P*Bt*3H*4 +\n"
        "  step scratch Bt*3H*4 + Bt*H*4 (each rounded up to 256 bytes), cap = %zu (%s), P = %zu: %s bytes\n",
        ws.cap, ws.cap == d->T ? "T: every step saved" : "--checkpoint", ws.P, b);
    format_bytes_exact(naive_gru_kept_per_step(d), b, sizeof b);
    fprintf(
        f,
        "naive keeps 10*Bt*H*4 = %s bytes per step for backward (e1, z, z W_zh, u, r, n, h-n, h); cpu keeps "
        "6*Bt*H*4 beside h (which is out)\n",
        b);
    print_lstm_comparison(d, f);
    print_cuda_workspace(d, &p->o, f);
}

static const char *phase_name(gru_phase ph)
{
    return ph == GRU_FWD_STEP   ? "forward, after step"
           : ph == GRU_BWD_STEP ? "backward, after step"
                                : "backward done";
}

/* live bytes step by step, naive beside cpu (same sample points: both loops call the probe alike) */
static void print_traces(FILE *f, const gru_trace *nv, const gru_trace *cp)
{
    fprintf(f, "\nLive bytes during the run (inputs included; the session adds dout before backward):\n");
    fprintf(f, "  %-22s %6s %16s %16s\n", "", "t", "naive", "cpu");
    for (int i = 0; i < nv->n && i < cp->n; i++) {
        if (nv->phase[i] != cp->phase[i] || nv->step[i] != cp->step[i]) break;
        char a[32], b[32];
        format_bytes_exact(nv->live[i], a, sizeof a);
        format_bytes_exact(cp->live[i], b, sizeof b);
        if (nv->phase[i] == GRU_BWD_END)
            fprintf(f, "  %-22s %6s %16s %16s\n", phase_name(nv->phase[i]), "", a, b);
        else
            fprintf(f, "  %-22s %6zu %16s %16s\n", phase_name(nv->phase[i]), nv->step[i], a, b);
    }
}

static void epilogue(const lesson_report *rep, FILE *f)
{
    const gru_problem *p = rep->prob;
    const lesson_result *nv = lesson_report_find(rep, "naive"), *cp = lesson_report_find(rep, "cpu");
    if (nv)
        fprintf(
            f,
            "naive allocates %.0f times per forward step and %.0f times per backward step (steps 1..T-1).\n",
            gru_trace_fwd_allocs_per_step(&lesson_traces[0]),
            gru_trace_bwd_allocs_per_step(&lesson_traces[0]));
    if (cp)
        fprintf(
            f,
            "cpu allocates %.0f times per forward step and %.0f per backward step; the whole run %zu times "
            "(6 inputs, arena, out, dout, 5 gradients).\n",
            gru_trace_fwd_allocs_per_step(&lesson_traces[1]),
            gru_trace_bwd_allocs_per_step(&lesson_traces[1]), cp->row.allocs);
    if (nv && cp) print_traces(f, &lesson_traces[0], &lesson_traces[1]);
    if (!nv || !cp || !nv->validated || !cp->validated) return;
    char kept[32], saved[32];
    format_bytes_exact(size_mul(naive_gru_kept_per_step(&p->d), p->d.T), kept, sizeof kept);
    format_bytes_exact(size_mul(size_mul(gru_seq_count(&p->d) / p->d.T, 4 * GRU_SAVED_PER_ROW),
                                p->o.checkpoint && p->o.checkpoint < p->d.T ? p->o.checkpoint : p->d.T),
                       saved, sizeof saved);
    fprintf(
        f,
        "\nnaive's peak / cpu's peak = %.2f: the same cell, fused (the forum's \"2x\" is against an LSTM: "
        "the per-step line above).\n",
        (double)nv->row.peak_bytes / (double)cp->row.peak_bytes);
    fprintf(
        f,
        "Where the bytes go: naive keeps %s bytes of autograd's saved results (10H floats per step and row: "
        "exp, z, all of z W_zh for its zn view, three activations, h - n, h) plus a stacked copy of h; cpu "
        "keeps h once, as the output, and %s bytes of r, u, n, zn, z, e in its arena%s.\n",
        kept, saved, p->o.checkpoint ? ", one checkpoint segment at a time" : "");
}

/* The first screen's answer, under the table: the forum gives no sizes, only "2x an LSTM": what each keeps
 * per step beside this run's peaks, the reason in one line, the saving. */
static void answer(const lesson_report *rep, FILE *f)
{
    const lesson_result *naive = lesson_report_find(rep, "naive"), *cpu = lesson_report_find(rep, "cpu");
    fprintf(f, "\nthe forum: \"2x more than an LSTM\": its loop keeps 11H floats a step and row (10H saved "
               "by its ops and the stacked h), an LSTM 6H: 11/6 = 1.83\n"
               "why: every op's result is a new tensor and autograd keeps what each backward reads, step by "
               "step; the fused cell keeps h + 6H in one arena\n");
    if (naive && cpu && naive->row.ran && cpu->row.ran) {
        char b[32];
        size_t n = naive->row.peak_bytes, c = cpu->row.peak_bytes;
        format_bytes_exact(n > c ? n - c : c - n, b, sizeof b);
        fprintf(f, "the fix: the fused cell (cpu) peaks %s bytes %s, %zu allocations instead of %zu\n", b,
                n > c ? "lower" : "higher at this size (its arena's fixed parts)", cpu->row.allocs,
                naive->row.allocs);
    }
}

const lesson lesson4_def = {
    .number = 4,
    .program = "lesson4",
    .title = "Lesson 4: a GRU with a sampled latent in a step loop - per-step allocations versus one arena",
    .summary = "RNN step loop: autograd's saved tensors per step versus a fused cell with one arena",
    .dim_names = {"T", "Bt", "X", "H"},
    .sizes = {{.name = "tiny", .dims = {3, 2, 3, 4}},
              {.name = "small", .dims = {64, 16, 32, 64}},
              {.name = "medium", .dims = {256, 32, 128, 256}}},
    .default_size = "medium",
    .opts =
        {{.flag = "--checkpoint",
          .takes_value = 1,
          .def = 0,
          .min = 0,
          .max = 1LL << 40,
          .help =
              "cpu/cuda: save the cell's rows for one segment of K steps and recompute it in backward (0: "
              "save all)"},
         {.flag = "--block",
          .takes_value = 1,
          .def = 16,
          .min = 0,
          .max = 1LL << 40,
          .help = "cpu/cuda: steps per input-projection GEMM (0: all T at once)"}},
    .make_problem = gru_make_problem,
    .tensors =
        {[X_] =
             {.name = "x", .role = LT_INPUT, .type = DT_F32, .label = "x (T,Bt,X) input", .shape = shape_x},
         [H0] =
             {.name = "h0", .role = LT_INPUT, .type = DT_F32, .label = "h0 (Bt,H) input", .shape = shape_bh},
         [EPS] = {.name = "eps",
                  .role = LT_INPUT,
                  .type = DT_F32,
                  .label = "eps (T,Bt,H) input noise",
                  .shape = shape_seq},
         [WENC] = {.name = "W_enc",
                   .role = LT_INPUT,
                   .type = DT_F32,
                   .label = "W_enc (H,2H) input",
                   .shape = shape_wenc},
         [WIH] = {.name = "W_ih",
                  .role = LT_INPUT,
                  .type = DT_F32,
                  .label = "W_ih (X,3H) input",
                  .shape = shape_wih},
         [WZH] = {.name = "W_zh",
                  .role = LT_INPUT,
                  .type = DT_F32,
                  .label = "W_zh (H,3H) input",
                  .shape = shape_wzh},
         [DOUT] = {.name = "dout",
                   .role = LT_UPSTREAM,
                   .type = DT_F32,
                   .label = "dout (T,Bt,H) upstream gradient",
                   .shape = shape_seq},
         [OUT] = {.name = "out", .role = LT_OUTPUT, .type = DT_F32, .shape = shape_seq},
         [DX] = {.name = "dx", .role = LT_GRAD, .type = DT_F32, .shape = shape_x, .grad_of = X_},
         [DH0] = {.name = "dh0", .role = LT_GRAD, .type = DT_F32, .shape = shape_bh, .grad_of = H0},
         [DWENC] = {.name = "dW_enc", .role = LT_GRAD, .type = DT_F32, .shape = shape_wenc, .grad_of = WENC},
         [DWIH] = {.name = "dW_ih", .role = LT_GRAD, .type = DT_F32, .shape = shape_wih, .grad_of = WIH},
         [DWZH] = {.name = "dW_zh", .role = LT_GRAD, .type = DT_F32, .shape = shape_wzh, .grad_of = WZH}},
    .fill = gru_fill,
    .reference = reference,
    .reference_unfit = reference_unfit,
    .tolerance = 1e-3,
    .tolerance_why =
        "float32 GEMMs of up to max(X,3H) terms err ~6e-8*sqrt(K) per step; backward through time "
        "adds T such errors (the recurrence contracts), ~T*3e-6 < 1e-3 at T=256; a wrong index errs O(1)",
    .impls =
        {{.name = "naive",
          .about =
              "eager autograd: every op of every step a new allocation, 10H floats per step kept for "
              "backward",
          .memory = naive_memory,
          .forward = naive_forward,
          .backward = naive_backward,
          .work = gemm_work},
         {.name = "cpu",
          .about =
              "fused cell: x W_ih per block of steps, one GEMM each for pd and z W_zh, fused gates; h + 6H "
              "per step, one arena",
          .memory = cpu_memory,
          .forward = cpu_forward,
          .backward = cpu_backward,
          .work = gemm_work},
         {LESSON_CUDA_VERSION(1),
          .about = "the same with cuBLAS GEMMs and fused cell kernels (tracked device memory)",
          .uses_cublas = 1, .memory = cuda_memory, .unfit = cuda_unfit, .forward = cuda_forward,
          .backward = cuda_backward},
         {LESSON_CUDA_VERSION(2),
          .about = "v1's step loops captured into a CUDA Graph once per shape, replayed as one launch: 2 "
                   "launches per pass instead of 9T + T/P + 7 (same kernels, GEMMs and memory)",
          .uses_cublas = 1, .graph = 1, .memory = cuda_memory, .unfit = cuda_unfit, .forward = cuda_forward,
          .backward = cuda_backward},
         {LESSON_CUDA_VERSION(3),
          .about = "forward as one persistent cooperative kernel: each block keeps its hidden units' weight "
                   "columns in shared memory, 2 grid.syncs per step; backward v2's graph",
          .uses_cublas = 1, .memory = cuda_persistent_memory, .unfit = cuda_v3_unfit, .forward = cuda_forward,
          .backward = cuda_backward},
         {LESSON_CUDA_VERSION(4),
          .about = "v3's persistent forward with 8 lanes per (row, unit): every thread of a block at work, "
                   "x_t W_ih beside h W_enc, blocks of 2 units or more; backward v2's graph",
          .uses_cublas = 1, .memory = cuda_persistent_memory, .unfit = cuda_v4_unfit, .forward = cuda_forward,
          .backward = cuda_backward},
         {LESSON_CUDA_VERSION(5),
          .about =
              "v4's forward, a persistent backward: the step loop as one cooperative kernel too (2 "
              "grid.syncs per step, dW_zh summed in shared memory), then v1's weight GEMMs, long sums split "
              "(partials in dx)",
          .uses_cublas = 1, .memory = cuda_persistent_memory, .unfit = cuda_v5_unfit, .forward = cuda_forward,
          .backward = cuda_backward}},
    .cuda_order = {4, 5, 2, 1, 3}, /* fastest first: docs/tools/cuda_order.py 4 */
    .preamble = preamble,
    .epilogue = epilogue,
    .answer = answer,
    .legend = "(\"peak\" includes the inputs, dout and the gradients; the arena is one tracked allocation.)",
};
