/* lesson5.c - fused linear cross-entropy: the weight gradient accumulated in place, in fp32, with no
 * temporaries.
 *
 * The lesson as data (lesson.h) and the adapters from the generic session to the typed implementations.
 * The implementations, their options and what each does: build/lesson5 --help. Their files, in reading order:
 * the reading path at the top of docs/lesson-5.md.
 *   build/lesson5 --size medium      build/lesson5 --size small --chunk 256
 */
#include "lesson5.h"

#include "gemm_cpu.h"
#include "lesson_defs.h"
#include "linear_ce_reference.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

static const lce_problem *prob_of(const void *prob) { return prob; }
static const lce_dims *dims_of(const void *prob) { return &prob_of(prob)->d; }
static_assert(sizeof(lce_problem) <= sizeof(lesson_problem), "the problem fits lesson_problem");

static const char *make_problem(const long long *dims, const long long *opts, void *prob)
{
    lce_problem p = {.d = {(size_t)dims[0], (size_t)dims[1], (size_t)dims[2], 0, 0}};
    lce_dims d = p.d;
    if (d.V > INT32_MAX) return "V must fit the int32 targets (at most 2147483647)";
    if (size_mul(6, size_mul(d.V, d.H)) == SIZE_MAX || size_mul(4, size_mul(d.N, d.V)) == SIZE_MAX)
        return "V*H or N*V overflows 64 bits";
    if ((size_t)opts[OPT_CHUNK] > d.N) return "--chunk must be at most N (rows per chunk)";
    d.chunk = opts[OPT_CHUNK] ? (size_t)opts[OPT_CHUNK] : lce_default_chunk(d.N, d.H, d.V);
    if (d.chunk > d.N) d.chunk = d.N; /* the power of two can exceed N: the one chunk then holds N rows */
    d.cuda_chunk = opts[OPT_CHUNK] ? d.chunk : lce_model_chunk(d.N, d.H, d.V);
    p.d = d;
    p.filter = (int)opts[OPT_FILTER];
    p.peaked = (int)opts[OPT_PEAKED];
    memcpy(prob, &p, sizeof p);
    return NULL;
}

static int shape_x(const void *p, size_t *s) { return lesson_shape2(s, dims_of(p)->N, dims_of(p)->H); }
static int shape_w(const void *p, size_t *s) { return lesson_shape2(s, dims_of(p)->V, dims_of(p)->H); }
static int shape_n(const void *p, size_t *s) { return lesson_shape1(s, dims_of(p)->N); }
static int shape_1(const void *p, size_t *s) { (void)p; return lesson_shape1(s, 1); }

/* --peaked: x times 32 (exact in bf16: logits of std ~64 instead of ~2) and each counted row's target the
 * argmax of its logits (in double): the sharp softmax of a model that predicts its data, the regime Cut
 * Cross-Entropy's filter is made for. N*V*H multiply-adds once, on the CPU. */
static void make_peaked(const lce_dims *d, bf16 *x, const bf16 *w, int32_t *target)
{
    for (size_t i = 0; i < lce_x_count(d); i++) x[i] = bf16_from_f32(32.0f * bf16_to_f32(x[i]));
    for (size_t n = 0; n < d->N; n++) {
        if (target[n] == LCE_IGNORE) continue;
        double best = -INFINITY;
        for (size_t v = 0; v < d->V; v++) {
            double z = 0.0;
            for (size_t h = 0; h < d->H; h++)
                z += (double)bf16_to_f32(x[n * d->H + h]) * bf16_to_f32(w[v * d->H + h]);
            if (z > best) {
                best = z;
                target[n] = (int32_t)v;
            }
        }
    }
}

static void fill(const void *prob, uint64_t seed, void *const *t)
{
    lce_fill(dims_of(prob), seed, t[X], t[W], t[TARGET], t[DLOSS]);
    if (prob_of(prob)->peaked) make_peaked(dims_of(prob), t[X], t[W], t[TARGET]);
}

static void reference(const void *prob, void *const *t, double *const *ref)
{
    lce_reference(dims_of(prob), t[X], t[W], t[TARGET], ((const float *)t[DLOSS])[0], ref[LOSS], ref[DX],
                  ref[DW]);
}

/* N*V*H multiply-adds, three times, in double (cblas_dgemm): refused past 2^35 N*V*H, minutes here */
static const char *reference_unfit(const void *prob)
{
    const lce_dims *d = dims_of(prob);
    if (size_mul(d->N, lce_w_count(d)) > ((size_t)1 << 35))
        return "the float64 reference needs 3*N*V*H multiply-adds in double (over 1e11 here)";
    return NULL;
}

/* --- adapters ------------------------------------------------------------------------------------------- */
static_assert(sizeof(naive_lce_saved) <= sizeof(((lesson_run *)0)->saved),
              "naive's saved state fits the run");
static_assert(sizeof(fused_lce_saved) <= sizeof(((lesson_run *)0)->saved), "cpu's saved state fits the run");
static_assert(sizeof(lce1_saved) <= sizeof(((lesson_run *)0)->saved), "cuda-v1's saved state fits the run");
static_assert(sizeof(lce_cuda_saved) <= sizeof(((lesson_run *)0)->saved), "cuda-v2-v5's saved state fits");

static void naive_forward(lesson_run *r)
{
    r->t[LOSS] = naive_lce_forward(dims_of(r->prob), r->t[X], r->t[W], r->t[TARGET],
                                   (naive_lce_saved *)r->saved.bytes);
}
static void naive_backward(lesson_run *r)
{
    naive_lce_backward(dims_of(r->prob), (naive_lce_saved *)r->saved.bytes, r->t[DLOSS], (bf16 **)&r->t[DX],
                       (float **)&r->t[DW]);
}
static void cpu_forward(lesson_run *r)
{
    r->t[LOSS] =
        cpu_lce_forward(dims_of(r->prob), r->t[X], r->t[W], r->t[TARGET], (fused_lce_saved *)r->saved.bytes);
}
static void cpu_backward(lesson_run *r)
{
    cpu_lce_backward(dims_of(r->prob), (fused_lce_saved *)r->saved.bytes, r->t[DLOSS], (bf16 **)&r->t[DX],
                     (float **)&r->t[DW]);
}
#ifdef HAVE_CUDA
/* The one CUDA dispatch: the row's version picks the implementation (linear_ce.h). A version without a
 * case leaves loss unset, and the session stops there with that message. */
static void cuda_forward(lesson_run *r)
{
    const lce_dims *d = dims_of(r->prob);
    const bf16 *x = r->t[X], *w = r->t[W];
    const int32_t *t = r->t[TARGET];
    lce_cuda_saved *s = (lce_cuda_saved *)r->saved.bytes;
    switch (r->version) {
    case 1: r->t[LOSS] = lce1_forward(d, x, w, t, (lce1_saved *)r->saved.bytes); break;
    case 2: r->t[LOSS] = lce2_forward(d, x, w, t, s); break;
    case 3: r->t[LOSS] = lce3_forward(d, x, w, t, s); break;
    case 4: r->t[LOSS] = lce4_forward(d, x, w, t, s); break;
    case 5: r->t[LOSS] = lce5_forward(d, x, w, t, s); break;
    }
}
static void cuda_backward(lesson_run *r)
{
    const lce_dims *d = dims_of(r->prob);
    bf16 **dx = (bf16 **)&r->t[DX];
    float **dw = (float **)&r->t[DW];
    lce_cuda_saved *s = (lce_cuda_saved *)r->saved.bytes;
    int filter = prob_of(r->prob)->filter;
    switch (r->version) {
    case 1: lce1_backward(d, (lce1_saved *)r->saved.bytes, r->t[DLOSS], dx, dw); break;
    case 2: lce2_backward(d, s, r->t[DLOSS], dx, dw); break;
    case 3: lce3_backward(d, filter, s, r->t[DLOSS], dx, dw); break;
    case 4: lce4_backward(d, filter, s, r->t[DLOSS], dx, dw); break;
    case 5: lce5_backward(d, filter, s, r->t[DLOSS], dx, dw); break;
    }
}
#else
#define cuda_forward NULL
#define cuda_backward NULL
#endif

/* three GEMMs of N*H*V multiply-adds each (logits, dx, dW), whatever the chunking */
static double gemm_work(const void *p)
{
    const lce_dims *d = dims_of(p);
    return 3.0 * (double)d->N * (double)d->H * (double)d->V;
}
/* The progress notice's smaller problem (lesson.h: calibrate): N cut, the chunk kept, so that naive's passes
 * over [V,H] per chunk scale with the multiply-adds as they do at full size, and at least one of cpu's blocks
 * of rows (a GEMM of fewer rows runs at a lower rate: at N=16 cpu's estimate was 5x its time). */
static void calibrate(const void *prob, long long *dims, long long *opts)
{
    const lce_dims *d = dims_of(prob);
    size_t least = cpu_lce_block_rows(d) > d->chunk ? cpu_lce_block_rows(d) : d->chunk;
    opts[OPT_CHUNK] = (long long)d->chunk;
    if (dims[0] < (long long)least) dims[0] = (long long)least;
}

static mem_formula naive_memory(const void *p) { return naive_lce_memory(dims_of(p)); }
static mem_formula cpu_memory(const void *p) { return cpu_lce_memory(dims_of(p)); }
static mem_formula v1_memory(const void *p) { return lce1_memory(dims_of(p)); }
static const char *v1_unfit(const void *p) { return lce1_unfit(dims_of(p)); }
static mem_formula v2_memory(const void *p) { return lce2_memory(dims_of(p)); }
static const char *v2_unfit(const void *p) { return lce2_unfit(dims_of(p)); }
static mem_formula v3_memory(const void *p) { return lce3_memory(dims_of(p)); }
static const char *v3_unfit(const void *p) { return lce3_unfit(dims_of(p)); }
static mem_formula v4_memory(const void *p) { return lce4_memory(dims_of(p)); }
#ifdef HAVE_CUDA
static const char *v4_unfit(const void *p)
{
    const char *why = lce4_unfit(dims_of(p));
    return why ? why : lce4_device_unfit();
}
/* v5 also needs compute capability 9.0 (lce5_device_unfit) */
static const char *v5_unfit(const void *p)
{
    const char *why = lce5_unfit(dims_of(p));
    return why ? why : lce5_device_unfit();
}
#else
static const char *v4_unfit(const void *p) { return lce4_unfit(dims_of(p)); }
static const char *v5_unfit(const void *p) { return lce5_unfit(dims_of(p)); }
#endif

/* --- what the lesson says before and after the table ---------------------------------------------------- */
static void preamble(const void *prob, FILE *f)
{
    const lce_dims *d = dims_of(prob);
    char six[32], lg[32];
    format_bytes_exact(size_mul(6, lce_w_count(d)), six, sizeof six);
    format_bytes_exact(size_mul(2, size_mul(d->chunk, d->V)), lg, sizeof lg);
    fprintf(f, "naive, cpu: chunk %zu rows (the seed's rule next_power_of_2(ceil(N / ceil(V/H))) gives %zu), "
               "%zu chunk%s;\none chunk's bf16 logits [c,V] = %s bytes; V*H*6 = %s bytes\n", d->chunk,
            lce_default_chunk(d->N, d->H, d->V), lce_chunks(d), lce_chunks(d) == 1 ? "" : "s", lg, six);
    lce_print_chunk_choice(d, f);
    fprintf(f, "naive, cpu: %s\n", gemm_cpu_bf16_about());
    fprintf(f, "cpu: row pass (max, exp and sum, bf16 gradient): %s\n", cpu_lce_rows_about());
}

/* max |x - ref| / max |ref| of one tensor of one implementation */
static double tensor_err(const lesson_report *rep, const lesson_result *res, int i, dtype t)
{
    size_t n = lesson_tensor_count(rep->L, i, rep->prob);
    double m = 0.0, mr = 0.0;
    for (size_t k = 0; k < n; k++) {
        m = fmax(m, fabs(dtype_load(res->result[i], t, k) - rep->ref[i][k]));
        mr = fmax(mr, fabs(rep->ref[i][k]));
    }
    return mr > 0.0 ? m / mr : m;
}

static void print_errors(const lesson_report *rep, FILE *f)
{
    if (!rep->ref[LOSS]) return;
    fprintf(f, "Error against float64, tensor by tensor (max |x - ref| / max |ref|):\n");
    for (int k = 0; k < rep->n; k++) {
        const lesson_result *res = &rep->res[k];
        if (!res->row.ran) continue;
        fprintf(f, "  %-7s loss %.2e   dx (bf16) %.2e   dW (f32) %.2e\n", res->row.impl,
                tensor_err(rep, res, LOSS, DT_F32), tensor_err(rep, res, DX, DT_BF16),
                tensor_err(rep, res, DW, DT_F32));
    }
}

/* --filter: what Cut Cross-Entropy's gradient filter skipped in a CUDA version's run (cuda-v3's [32,64]
 * tiles, cuda-v4's [128,128]) and what it cost in accuracy, against the same implementation run once more
 * without it */
static void print_filter_of(const lesson_report *rep, const char *impl, FILE *f)
{
    const lce_problem *p = prob_of(rep->prob);
    const lesson_result *v = lesson_report_find(rep, impl);
    if (!p->filter || !v || !v->row.ran || !rep->ref[LOSS]) return;
#ifdef HAVE_CUDA
    int v4 = !strcmp(impl, "cuda-v4"), v5 = !strcmp(impl, "cuda-v5");
    lce3_filter_count st = lce3_last_filter();
    if (v4 || v5) {
        lce_filter_count c = v5 ? lce5_last_filter() : lce4_last_filter();
        st.filter = c.filter, st.tiles = c.tiles, st.skipped_dx = st.skipped_dw = c.skipped;
    }
    lce_problem off = *p;
    off.filter = 0;
    lesson_result r;
    lesson_run_impl(rep->L, &off, v->impl, rep->inputs, &r);
    fprintf(f,
            "%s --filter: a %s gradient tile is skipped when every |softmax - onehot| < 2^-12 (CCE's "
            "default,\nbf16's eps / 32); skipped %u of %llu tiles in dx, %u of %llu in dW. Error against "
            "float64:\n",
            impl, v4 || v5 ? "[128,128]" : "[32,64]", st.skipped_dx, st.tiles, st.skipped_dw, st.tiles);
    fprintf(f, "  filtered    dx (bf16) %.2e   dW (f32) %.2e\n  unfiltered  dx (bf16) %.2e   dW (f32) %.2e\n",
            tensor_err(rep, v, DX, DT_BF16), tensor_err(rep, v, DW, DT_F32), tensor_err(rep, &r, DX, DT_BF16),
            tensor_err(rep, &r, DW, DT_F32));
    lesson_result_free(rep->L, &r);
#else
    (void)f;
#endif
}
static void print_filter(const lesson_report *rep, FILE *f)
{
    print_filter_of(rep, "cuda-v3", f);
    print_filter_of(rep, "cuda-v4", f);
    print_filter_of(rep, "cuda-v5", f);
}

/* The seed's figure: "For V = 128k and H = 4096, this would save 3GB of memory." */
static void print_seed_figure(FILE *f)
{
    lce_dims s = {8192, 4096, 128256, lce_default_chunk(8192, 4096, 128256), 0};
    mem_formula n = naive_lce_memory(&s), c = cpu_lce_memory(&s);
    char a[32], b[32], six[32];
    format_bytes_exact(n.peak, a, sizeof a);
    format_bytes_exact(c.peak, b, sizeof b);
    format_bytes_exact(6 * lce_w_count(&s), six, sizeof six);
    fprintf(
        f,
        "At the seed's size (N=8192, H=4096, V=128256, chunk %zu) the formulas give naive %s bytes, cpu %s "
        "bytes;\nV*H*6 = %s bytes is the seed's \"this would save 3GB\".\n",
        s.chunk, a, b, six);
}

/* naive's peak minus cpu's, against the V*H*6 bytes of the seed's line, saying what divides what */
static void print_peak_difference(const lce_dims *d, size_t naive_peak, size_t cpu_peak, FILE *f)
{
    /* cpu's logits beyond a chunk's */
    size_t block = cpu_lce_block_rows(d), extra = (block - d->chunk) * d->V * 4;
    size_t six_bytes = 6 * lce_w_count(d), diff = naive_peak - cpu_peak;
    char dif[32], six[32], more[32], sum[32];
    format_bytes_exact(diff, dif, sizeof dif);
    format_bytes_exact(six_bytes, six, sizeof six);
    format_bytes_exact(extra, more, sizeof more);
    format_bytes_exact(diff + extra, sum, sizeof sum);
    fprintf(
        f,
        "Peak difference, naive - cpu: %s bytes. naive's bf16 [V,H] product and its fp32 copy: V*H*6 = %s "
        "bytes.\n",
        dif, six);
    if (extra)
        fprintf(
            f,
            "cpu keeps %s bytes that naive does not: its f32 logits block is %zu rows, not one chunk's %zu, "
            "so each\npass of its dW GEMM over [V,H] serves %zu rows. (difference + those bytes) / (V*H*6) = "
            "%s / %s = %.3f\n",
            more, block, d->chunk, block, sum, six, (double)(diff + extra) / (double)six_bytes);
    else
        fprintf(f, "difference / (V*H*6) = %s / %s = %.3f\n", dif, six, (double)diff / (double)six_bytes);
    /* the rest, to the byte: cpu's workspace beyond its logits (the f32 panels), its f32 logits of a
     * chunk's rows where naive's are bf16, against naive's GEMM scratch and loss_1d (the formulas' terms) */
    long long rest = (long long)six_bytes - (long long)(diff + extra);
    long long panels = (long long)cpu_lce_workspace_bytes(d) - (long long)(4 * block * d->V);
    long long wide = (long long)(2 * d->chunk * d->V), scratch = (long long)naive_lce_scratch_bytes(d);
    long long loss = (long long)(4 * d->N);
    if (rest <= 0 || panels < 0 || rest != panels + wide - scratch - loss) return;
    long long part[5] = {rest, panels, wide, scratch, loss};
    char txt[5][32];
    for (int k = 0; k < 5; k++) format_bytes_exact((size_t)part[k], txt[k], sizeof txt[k]);
    fprintf(f,
            "the rest, %s bytes = cpu's f32 panels %s + a chunk's logits in f32, not bf16, %s - naive's GEMM "
            "scratch %s - its loss_1d %s\n",
            txt[0], txt[1], txt[2], txt[3], txt[4]);
}

static void epilogue(const lesson_report *rep, FILE *f)
{
    print_errors(rep, f);
    const lesson_result *naive = lesson_report_find(rep, "naive"), *cpu = lesson_report_find(rep, "cpu");
    if (naive && cpu && naive->validated && cpu->validated)
        print_peak_difference(dims_of(rep->prob), naive->row.peak_bytes, cpu->row.peak_bytes, f);
    print_filter(rep, f);
    print_seed_figure(f);
    fprintf(f,
            "Where the bytes go: both keep the fp32 weight gradient [V,H] and the bf16 input gradient [N,H]; "
            "naive adds,\nfor every chunk, a bf16 [V,H] product and its fp32 copy (V*H*6 bytes, three passes "
            "over [V,H]), which\ncpu never allocates because its GEMM adds each chunk into the fp32 gradient "
            "itself.\n");
}

/* The first screen's answer, under the table: the seed's figure (naive's formula at the forum size, the V*H*6
 * bytes of its "3GB") beside this run's, the reason in one line, the saving. */
static void answer(const lesson_report *rep, FILE *f)
{
    const lesson_result *naive = lesson_report_find(rep, "naive"), *cpu = lesson_report_find(rep, "cpu");
    const lce_dims *d = dims_of(rep->prob);
    mem_formula forum;
    size_t six = 0;
    char b[32], s[32];
    if (lesson_size_formula(rep->L, "forum", "naive", &forum) != 0) return;
    for (int k = 0; k < lesson_nsizes(rep->L); k++)
        if (strcmp(rep->L->sizes[k].name, "forum") == 0)
            six = size_mul(6, size_mul((size_t)rep->L->sizes[k].dims[1], (size_t)rep->L->sizes[k].dims[2]));
    format_bytes_exact(forum.peak, b, sizeof b);
    format_bytes_exact(six, s, sizeof s);
    fprintf(f, "\nthe seed: \"this would save 3GB\": at its size naive's formula peaks at %s bytes, V*H*6 = "
               "%s of them per chunk", b, s);
    if (naive && naive->row.ran) {
        format_bytes_exact(naive->row.peak_bytes, b, sizeof b);
        format_bytes_exact(size_mul(6, lce_w_count(d)), s, sizeof s);
        fprintf(f, "; this run's naive peaks at %s, V*H*6 = %s", b, s);
    }
    fprintf(f, "\nwhy: grad_weight += mm(g^T, x).float() rounds each chunk's [V,H] product to bf16 (V*H*2 "
               "bytes) and copies it to fp32 (V*H*4) before adding it\n");
    if (naive && cpu && naive->row.ran && cpu->row.ran) {
        size_t n = naive->row.peak_bytes, c = cpu->row.peak_bytes;
        format_bytes_exact(n > c ? n - c : c - n, b, sizeof b);
        size_t block = cpu_lce_block_rows(d), extra = block > d->chunk ? (block - d->chunk) * d->V * 4 : 0;
        fprintf(f, "the fix: one GEMM adding each chunk into the fp32 gradient (beta = 1, cpu) makes "
                   "neither: it peaks %s bytes %s", b, n > c ? "lower" : "higher");
        format_bytes_exact(extra, s, sizeof s);
        if (extra) fprintf(f, " (its f32 logits, %zu rows at a time for GEMM speed, hold %s more)", block, s);
        fprintf(f, "\n");
    } else {
        format_bytes_exact(cpu_memory(rep->prob).peak, b, sizeof b);
        fprintf(f, "the fix: one GEMM adding each chunk into the fp32 gradient (beta = 1, cpu) makes "
                   "neither: it needs %s bytes here, by its formula\n", b);
    }
}

const lesson lesson5_def = {
    .number = 5,
    .program = "lesson5",
    .title = "Lesson 5: linear cross-entropy, dW through bf16 and fp32 temporaries (V*H*6 bytes a chunk); "
             "x [N,H], W [V,H] bf16",
    .summary = "fused linear cross-entropy: the weight gradient accumulated in place, in fp32",
    .dim_names = {"N", "H", "V"},
    .sizes = {{.name = "tiny", .dims = {4, 3, 7}},
              {.name = "small", .dims = {256, 128, 4096}},
              {.name = "medium", .dims = {2048, 256, 32768}},
              {.name = "forum", .dims = {8192, 4096, 128256}}},
    .default_size = "medium",
    .opts = {[OPT_CHUNK] = {.flag = "--chunk",
                            .takes_value = 1,
                            .def = 0,
                            .min = 0,
                            .max = 1LL << 40,
                            .help = "rows per chunk; 0: the seed's rule next_power_of_2(ceil(N/ceil(V/H)))"},
             [OPT_FILTER] =
                 {.flag = "--filter",
                  .takes_value = 0,
                  .def = 0,
                  .min = 0,
                  .max = 1,
                  .help = "cuda-v3 to cuda-v5: skip every gradient tile (32x64, 128x128) whose |softmax - "
                          "onehot| < 2^-12 (Cut Cross-Entropy's filter) and print its error beside the "
                          "unfiltered run's"},
             [OPT_PEAKED] =
                 {.flag = "--peaked",
                  .takes_value = 0,
                  .def = 0,
                  .min = 0,
                  .max = 1,
                  .help = "inputs of a model that predicts its data: x times 32, each target its row's "
                          "argmax (a sharp softmax: where --filter skips tiles)"}},
    .make_problem = make_problem,
    .calibrate = calibrate,
    .tensors = {[X] = {.name = "x",
                       .role = LT_INPUT,
                       .type = DT_BF16,
                       .label = "x [N,H] bf16 input",
                       .shape = shape_x},
                [W] = {.name = "W",
                       .role = LT_INPUT,
                       .type = DT_BF16,
                       .label = "W [V,H] bf16 input",
                       .shape = shape_w},
                [TARGET] = {.name = "target",
                            .role = LT_INPUT,
                            .type = DT_I32,
                            .label = "target [N] int32 input",
                            .shape = shape_n},
                [DLOSS] = {.name = "dloss",
                           .role = LT_UPSTREAM,
                           .type = DT_F32,
                           .label = "dloss [1] f32 upstream gradient",
                           .shape = shape_1,
                           .scalar = 1},
                [LOSS] = {.name = "loss", .role = LT_OUTPUT, .type = DT_F32, .shape = shape_1, .scalar = 1},
                [DX] = {.name = "dx", .role = LT_GRAD, .type = DT_BF16, .shape = shape_x, .grad_of = X},
                [DW] = {.name = "dW", .role = LT_GRAD, .type = DT_F32, .shape = shape_w, .grad_of = W}},
    .fill = fill,
    .reference = reference,
    .reference_unfit = reference_unfit,
    .tolerance = 2.0 / 256.0,
    .tolerance_why =
        "bf16 keeps 8 significant bits (u = 2^-8): dx is rounded twice and the gradient operand once, "
        "so 2u; naive also rounds the logits (u |z| each), hence its own 16u. Unchanged on the bf16 "
        "instructions: a bf16 product is exact in float32 and the sums stay float32 (K 2^-24 << u)",
    .impls =
        {{.name = "naive",
          .about =
              "the seed's chunk loop: logits [chunk,V] bf16, grad_weight += mm(g^T, x_chunk).float() "
              "(bf16 [V,H] + f32 [V,H] temporaries)",
          .memory = naive_memory,
          .forward = naive_forward,
          .backward = naive_backward,
          .tolerance = 16.0 / 256.0,
          .work = gemm_work},
         {.name = "cpu",
          .about =
              "k chunks at a time (k = ceil(128 / chunk): GEMMs of >= 128 rows): fp32 logits, one pass per "
              "row (logsumexp, loss, bf16 gradient in place), dW += g^T x_block inside the GEMM (beta = 1)",
          .memory = cpu_memory,
          .forward = cpu_forward,
          .backward = cpu_backward,
          .work = gemm_work},
         {LESSON_CUDA_VERSION(1),
          .about =
              "cublasGemmEx (bf16 A/B, fp32 C) for logits, dx and the in-place dW; one fused row kernel "
              "(cuda names this one: v2-v5 keep no logits buffer; v2 and v3 measured slower on an H200, v4 "
              "and v5 are unmeasured: docs/lesson-5.md)",
          .uses_cublas = 1, .memory = v1_memory, .unfit = v1_unfit, .forward = cuda_forward,
          .backward = cuda_backward},
         {LESSON_CUDA_VERSION(2),
          .about =
              "no logits buffer (Cut Cross-Entropy): online logsumexp streamed over V, only lse [N] saved; "
              "backward recomputes the logits for dx and dW (no cuBLAS)",
          .memory = v2_memory, .unfit = v2_unfit, .forward = cuda_forward, .backward = cuda_backward},
         {LESSON_CUDA_VERSION(3),
          .about = "cuda-v2 on WMMA tensor cores: bf16 logit tiles [32,64] from 16-byte shared-memory loads, "
                   "online logsumexp per row; backward recomputes the tiles, G . W and G^T . x by WMMA",
          .memory = v3_memory, .unfit = v3_unfit, .forward = cuda_forward, .backward = cuda_backward},
         {LESSON_CUDA_VERSION(4),
          .about =
              "Cut Cross-Entropy on mma.sync: [128,256] bf16 tiles through a 3-stage cp.async pipeline, "
              "ldmatrix(.trans) reading x, W and G in place, lse partials, G and the filter's vote from the "
              "accumulators; backward writes a bf16 G chunk [N,8192], then dx += G W and dW = G^T x",
          .memory = v4_memory, .unfit = v4_unfit, .forward = cuda_forward, .backward = cuda_backward},
         {LESSON_CUDA_VERSION(5),
          .about = "v4 on Hopper, compute capability 9.0 only: TMA into a 4-stage mbarrier ring, wgmma "
                   "m64n256k16 on two warpgroups, W, x and G^T by MN-major descriptors; H % 8 == 0",
          .memory = v4_memory, .unfit = v5_unfit, .forward = cuda_forward, .backward = cuda_backward}},
    .cuda_order = {1, 4, 3, 2, 5}, /* fastest first: docs/tools/cuda_order.py 5 (v5 untimed: last) */
    .preamble = preamble,
    .epilogue = epilogue,
    .answer = answer,
    .legend =
        "(\"peak\" includes x, W, target and dloss; both keep grad_weight and grad_input from forward to "
        "backward, as the seed's code does.)",
};
