/* test_lesson5.c - lesson 5's checks: bf16 rounding, the row math, finite-difference gradients, naive and cpu
 * against the float64 reference, ignored targets, memory formulas equal to the tracker, and cpu at least as
 * accurate as naive.
 *
 * Tolerances. Errors are reported as max|x - ref| / max|ref| per tensor (compare.h's summary number), with
 * u = 2^-8, the spacing of bf16 values in [1, 2) (round to nearest: relative error <= u/2 = 2^-9).
 *   cpu: the logits are float32 GEMMs (error ~ H eps32 |x||w|, negligible), the gradient is rounded once to bf16
 *     before the GEMMs (u/2 relative per element), dx is rounded to bf16 twice (after the GEMM and after the
 *     dloss scaling): |err| <= (u/2)(1 + 1) max|dx| + the gradient's rounding carried through the sum, at most
 *     u/2 of sum |g||w|. We allow 2u = 2^-7 for dx and dW, and 1e-5 for the loss (a float32 sum of float32 row
 *     losses of size ~log V).
 *   naive: the logits themselves are rounded to bf16: |dz| <= (u/2)|z|, so every exp(z - lse) is off by up to
 *     (u/2)(|z| + |lse|) relative; with |z| <= 4 sigma = 8 here and |lse| ~ log V + 2, that is ~ (u/2) 20 = 10u.
 *     dW adds one bf16 rounding per chunk before the sum. We allow 16u = 2^-4 for the gradients and for the loss
 *     (u/2 max|z| ~ 4u absolute on a loss of ~ log V; the bound 16u relative covers it).
 *   gradient checks: the float64 reference's analytic gradients against central differences of its own loss,
 *     h = 1e-6: truncation ~ h^2 |f'''| ~ 1e-12, cancellation ~ 1e-16 |L| / h ~ 1e-10; atol 1e-8, rtol 1e-6.
 */
#define _POSIX_C_SOURCE 200809L
#include <check.h>

#include "check_main.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/runtime/bf16.h"
#include "compare.h"
#include "gradcheck.h"
#include "rng.h"
#include "track.h"
#include "../kernels/linear_ce.h"
#include "lesson.h"
#include "../lessons/linear_ce_reference.h"

#define U8 (1.0 / 256.0) /* u = 2^-8 */

static lce_dims dims(size_t N, size_t H, size_t V, size_t chunk)
{
    lce_dims d = {N, H, V, chunk ? chunk : lce_default_chunk(N, H, V), 0};
    if (d.chunk > N) d.chunk = N;
    return d;
}

/* ---- bf16 ------------------------------------------------------------------------------------------------ */

static float f32_of(uint32_t u) { float f; memcpy(&f, &u, sizeof f); return f; }

/* Round to nearest even by definition: the two bf16 neighbours of f, the nearer in exact (double) arithmetic,
 * the even one on a tie. Finite, non-NaN f only. */
static bf16 bf16_by_definition(float f)
{
    uint32_t u = bf16_f32_bits(f);
    bf16 lo = (bf16)(u >> 16), hi = (bf16)(lo + 1); /* toward zero, and one step away from zero */
    double dlo = fabs((double)f - (double)bf16_to_f32(lo));
    double dhi = ((hi & 0x7fff) == 0x7f80) ? INFINITY : fabs((double)f - (double)bf16_to_f32(hi));
    if ((hi & 0x7fff) == 0x7f80) { /* past the largest finite bf16: IEEE rounds to inf at or beyond half a step */
        double half = 0.5 * fabs((double)bf16_to_f32(lo) - (double)bf16_to_f32((bf16)(lo - 1)));
        return dlo >= half ? hi : lo;
    }
    if (dlo < dhi) return lo;
    if (dhi < dlo) return hi;
    return (lo & 1) ? hi : lo;
}

START_TEST(bf16_roundtrip_all)
{
    for (uint32_t h = 0; h < 65536; h++) { /* every bf16 survives f32 and back; NaNs stay NaN */
        float f = bf16_to_f32((bf16)h);
        bf16 back = bf16_from_f32(f);
        if (isnan(f)) ck_assert_msg(isnan(bf16_to_f32(back)) && (back & 0x8000) == (h & 0x8000), "NaN %04x", h);
        else ck_assert_msg(back == h, "bf16 %04x came back as %04x", h, back);
    }
}
END_TEST

START_TEST(bf16_ties_to_even)
{
    /* 1 + 2^-8 is exactly halfway between 1 (even, 0x3f80) and 1 + 2^-7 (odd): to 1. 1 + 3 * 2^-8 is halfway
     * between 1 + 2^-7 (odd) and 1 + 2^-6 (even, 0x3f82): up. One ulp of f32 off the tie decides it. */
    ck_assert_uint_eq(bf16_from_f32(f32_of(0x3f808000u)), 0x3f80);
    ck_assert_uint_eq(bf16_from_f32(f32_of(0x3f818000u)), 0x3f82);
    ck_assert_uint_eq(bf16_from_f32(f32_of(0x3f808001u)), 0x3f81);
    ck_assert_uint_eq(bf16_from_f32(f32_of(0x3f807fffu)), 0x3f80);
    ck_assert_uint_eq(bf16_from_f32(f32_of(0xbf808000u)), 0xbf80); /* negative: the same, mirrored */
    ck_assert_uint_eq(bf16_from_f32(f32_of(0xbf818000u)), 0xbf82);
    ck_assert_uint_eq(bf16_from_f32(f32_of(0x00008000u)), 0x0000); /* subnormal tie to even zero */
    ck_assert_uint_eq(bf16_from_f32(f32_of(0x00018000u)), 0x0002);
}
END_TEST

/* The filter's predicate, shared by cuda-v3's kernels and any host caller (linear_ce.h): below 2^-12 is
 * negligible; NaN and the infinities never are, so a tile holding a NaN row is never skipped (the emulator's
 * cuda_lce_v3_filter_nan_row runs the kernels on such a tile). */
START_TEST(filter_never_drops_nan)
{
    ck_assert(lce_grad_negligible(0.0f) && lce_grad_negligible(-0.99f * LCE_FILTER_EPS));
    ck_assert(!lce_grad_negligible(LCE_FILTER_EPS) && !lce_grad_negligible(-1.0f));
    ck_assert(!lce_grad_negligible(NAN) && !lce_grad_negligible(-NAN));
    ck_assert(!lce_grad_negligible(INFINITY) && !lce_grad_negligible(-INFINITY));
}
END_TEST

START_TEST(bf16_inf_nan_overflow)
{
    ck_assert_uint_eq(bf16_from_f32(INFINITY), 0x7f80);
    ck_assert_uint_eq(bf16_from_f32(-INFINITY), 0xff80);
    ck_assert_uint_eq(bf16_from_f32(0.0f), 0x0000);
    ck_assert_uint_eq(bf16_from_f32(-0.0f), 0x8000);
    /* NaNs whose payload is only in the low 16 bits must not truncate to inf */
    uint32_t nans[] = {0x7f800001u, 0x7fc00000u, 0xff800001u, 0x7fffffffu, 0xffc00001u};
    for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
        bf16 h = bf16_from_f32(f32_of(nans[i]));
        ck_assert_msg(isnan(bf16_to_f32(h)), "f32 %08x -> %04x is not a NaN", nans[i], h);
        ck_assert_uint_eq(h & 0x8000, (nans[i] >> 16) & 0x8000);
    }
    ck_assert_uint_eq(bf16_from_f32(FLT_MAX), 0x7f80);            /* rounds past 0x7f7f: inf */
    ck_assert_uint_eq(bf16_from_f32(f32_of(0x7f7f7fffu)), 0x7f7f); /* just under the tie: the largest finite */
    ck_assert_uint_eq(bf16_from_f32(f32_of(0x7f7f8000u)), 0x7f80); /* the tie, odd 0x7f7f: up to inf */
}
END_TEST

START_TEST(bf16_random_against_definition)
{
    rng r;
    rng_seed(&r, 51);
    for (int i = 0; i < 500000; i++) {
        uint32_t u = (uint32_t)rng_u64(&r);
        if ((u & 0x7f800000u) == 0x7f800000u) continue; /* inf and NaN: the test above */
        float f = f32_of(u);
        ck_assert_msg(bf16_from_f32(f) == bf16_by_definition(f), "f32 %08x: %04x, by definition %04x", u,
                      bf16_from_f32(f), bf16_by_definition(f));
    }
}
END_TEST

/* ---- the row math ---------------------------------------------------------------------------------------- */

START_TEST(online_lse_matches_double)
{
    rng r;
    rng_seed(&r, 52);
    float z[1000];
    for (int i = 0; i < 1000; i++) z[i] = (float)(10.0 * rng_normal(&r)) + (i == 700 ? 80.0f : 0.0f);
    lce_lse_acc a = lce_lse_init(), p = lce_lse_init(), q = lce_lse_init();
    for (int i = 0; i < 1000; i++) a = lce_lse_add(a, z[i]);
    for (int i = 0; i < 1000; i += 2) p = lce_lse_add(p, z[i]); /* two threads' halves, merged */
    for (int i = 1; i < 1000; i += 2) q = lce_lse_add(q, z[i]);
    double m = -INFINITY, s = 0.0;
    for (int i = 0; i < 1000; i++) m = fmax(m, z[i]);
    for (int i = 0; i < 1000; i++) s += exp(z[i] - m);
    double ref = m + log(s);
    /* each of the 1000 adds rounds s (relative eps) and each rescale too: 2000 eps relative on s, absolute on lse */
    ck_assert_double_eq_tol(lce_lse_finish(a), ref, 2000 * 1.2e-7 + 1e-5 * fabs(ref) * 1e-2);
    ck_assert_double_eq_tol(lce_lse_finish(lce_lse_merge(p, q)), ref, 2000 * 1.2e-7 + 1e-7);
    ck_assert(lce_lse_finish(lce_lse_merge(lce_lse_init(), a)) == lce_lse_finish(a)); /* merging nothing is exact */
}
END_TEST

/* cpu_lce_rows leaves row r's bf16 gradient in the first half of its own f32 row */
START_TEST(row_pass_in_place_layout)
{
    size_t V = 37, rows = 3;
    float z[3 * 37], zc[3 * 37];
    int32_t t[3] = {5, LCE_IGNORE, 36};
    rng r;
    rng_seed(&r, 53);
    rng_fill_normal_f32(&r, z, rows * V, 0.0f, 2.0f);
    memcpy(zc, z, sizeof z);
    float scale = 0.5f;
    double loss = cpu_lce_rows(z, t, rows, V, scale);
    double want = 0.0;
    for (size_t i = 0; i < rows; i++) {
        const bf16 *g = (const bf16 *)(z + i * V);
        if (t[i] == LCE_IGNORE) {
            for (size_t v = 0; v < V; v++) ck_assert_uint_eq(g[v], 0);
            continue;
        }
        double m = -INFINITY, s = 0.0;
        for (size_t v = 0; v < V; v++) m = fmax(m, zc[i * V + v]);
        for (size_t v = 0; v < V; v++) s += exp(zc[i * V + v] - m);
        double lse = m + log(s);
        want += lse - zc[i * V + t[i]];
        for (size_t v = 0; v < V; v++) {
            double gv = (exp(zc[i * V + v] - lse) - (v == (size_t)t[i])) * scale;
            /* one bf16 rounding (u relative) on a float32 value accurate to ~1e-6 */
            ck_assert_msg(fabs(bf16_to_f32(g[v]) - gv) <= U8 * fabs(gv) + 1e-6, "row %zu v %zu: %g vs %g", i,
                          v, bf16_to_f32(g[v]), gv);
        }
    }
    ck_assert_double_eq_tol(loss, want, 1e-5);
}
END_TEST

/* Each row-pass path this CPU runs (loop index: avx512, avx2, c), forced, against float64: rows long enough for the
 * vector loops and with tails (V = 4133, 109), logits of a wide range (sd 8: exp down to ~1e-40, below float's
 * normals), an ignored row, a row with -inf logits. The gradient within one bf16 rounding (u relative) plus 1e-6,
 * the exact zeros where exp underflows or the row is ignored. Each row's loss within 1e-5 plus 2e-7 (float32's
 * rounding, 1 ulp-ish) of |lse| and of |z_t|: the sum s of V floats in 32 lanes (or 16, or double in C) errs by at
 * most (V / 16) 2^-24 relative = 1.5e-5 at V = 4133, typically far less; exp's ~1 ulp adds 1e-7 to it. */
static const char *const ROW_PATHS[] = {"avx512", "avx2", "c"};

START_TEST(row_pass_each_path_against_double)
{
    if (!cpu_lce_rows_can(ROW_PATHS[_i])) {
        printf("row_pass_each_path: %s: skipped, this CPU lacks its instructions\n", ROW_PATHS[_i]);
        return;
    }
    ck_assert_int_eq(cpu_lce_rows_use(ROW_PATHS[_i]), 0);
    ck_assert_ptr_nonnull(strstr(cpu_lce_rows_about(), ROW_PATHS[_i]));
    static const size_t Vs[] = {4133, 109};
    for (size_t k = 0; k < 2; k++) {
        size_t V = Vs[k], rows = 5;
        float *z = host_alloc_array(rows * V, DT_F32, "test logits"), *zc = host_alloc_array(rows * V, DT_F32, "test copy");
        int32_t t[5] = {0, LCE_IGNORE, (int32_t)V - 1, 17, 40};
        rng r;
        rng_seed(&r, 61 + k);
        rng_fill_normal_f32(&r, z, rows * V, 0.0f, 8.0f);
        for (size_t v = 0; v < V; v += 7) z[4 * V + v] = -INFINITY; /* row 4: -inf logits, exp exactly 0 */
        memcpy(zc, z, rows * V * sizeof *z);
        float scale = 0.25f;
        double loss = cpu_lce_rows(z, t, rows, V, scale), want = 0.0, bound = 0.0;
        for (size_t i = 0; i < rows; i++) {
            const bf16 *g = (const bf16 *)(z + i * V);
            if (t[i] == LCE_IGNORE) {
                for (size_t v = 0; v < V; v++) ck_assert_uint_eq(g[v], 0);
                continue;
            }
            const float *zi = zc + i * V;
            double m = -INFINITY, s = 0.0;
            for (size_t v = 0; v < V; v++) m = fmax(m, zi[v]);
            for (size_t v = 0; v < V; v++) s += exp((double)zi[v] - m);
            double lse = m + log(s);
            want += lse - zi[t[i]];
            bound += 1e-5 + 2e-7 * (fabs(lse) + fabs(zi[t[i]]));
            for (size_t v = 0; v < V; v++) {
                double gv = (exp((double)zi[v] - lse) - (v == (size_t)t[i])) * scale;
                ck_assert_msg(fabs(bf16_to_f32(g[v]) - gv) <= U8 * fabs(gv) + 1e-6, "%s V %zu row %zu v %zu: %g vs %g",
                              ROW_PATHS[_i], V, i, v, bf16_to_f32(g[v]), gv);
                if (zi[v] == -INFINITY) ck_assert_uint_eq(g[v], 0);
            }
        }
        ck_assert_msg(fabs(loss - want) <= bound, "%s V %zu: loss %.9g vs %.9g (bound %.3g)", ROW_PATHS[_i], V, loss,
                      want, bound);
        host_free(z);
        host_free(zc);
    }
}
END_TEST

/* ---- finite differences of the float64 math ---------------------------------------------------------------- */

typedef struct {
    const lce_dims *d;
    double *x, *W;
    const int32_t *target;
} fd_ctx;

static double fd_loss(void *p)
{
    fd_ctx *c = p;
    return lce_reference_loss_f64(c->d, c->x, c->W, c->target);
}

START_TEST(reference_gradients_fd_tiny)
{
    lce_dims d = dims(4, 3, 7, 0);
    bf16 *x = host_alloc_array(lce_x_count(&d), DT_BF16, "test x"), *W = host_alloc_array(lce_w_count(&d), DT_BF16, "test W");
    int32_t *t = host_alloc_array(d.N, DT_I32, "test target");
    float dl;
    lce_fill(&d, 54, x, W, t, &dl);
    ck_assert_int_eq(t[1], LCE_IGNORE); /* tiny has an ignored row */
    double loss, *dx = host_alloc_array(lce_x_count(&d), DT_F64, "ref dx"), *dW = host_alloc_array(lce_w_count(&d), DT_F64, "ref dW");
    lce_reference(&d, x, W, t, 1.0, &loss, dx, dW);
    double *xd = host_alloc_array(lce_x_count(&d), DT_F64, "x f64"), *Wd = host_alloc_array(lce_w_count(&d), DT_F64, "W f64");
    for (size_t i = 0; i < lce_x_count(&d); i++) xd[i] = bf16_to_f32(x[i]);
    for (size_t i = 0; i < lce_w_count(&d); i++) Wd[i] = bf16_to_f32(W[i]);
    fd_ctx c = {&d, xd, Wd, t};
    ck_assert_double_eq_tol(fd_loss(&c), loss, 1e-12);
    gradcheck_result rx = gradcheck(fd_loss, &c, xd, DT_F64, dx, DT_F64, lce_x_count(&d), 1, 1e-6, 1e-8, 1e-6);
    gradcheck_result rw = gradcheck(fd_loss, &c, Wd, DT_F64, dW, DT_F64, lce_w_count(&d), 1, 1e-6, 1e-8, 1e-6);
    ck_assert_msg(rx.failed == 0, "dx: %zu failed, worst %zu: analytic %g, numeric %g", rx.failed, rx.worst, rx.worst_analytic, rx.worst_numeric);
    ck_assert_msg(rw.failed == 0, "dW: %zu failed, worst %zu: analytic %g, numeric %g", rw.failed, rw.worst, rw.worst_analytic, rw.worst_numeric);
    for (size_t h = 0; h < d.H; h++) ck_assert(dx[1 * d.H + h] == 0.0); /* the ignored row */
    host_free(x); host_free(W); host_free(t); host_free(dx); host_free(dW); host_free(xd); host_free(Wd);
}
END_TEST

/* ---- running an implementation as the session does --------------------------------------------------------- */

typedef enum { IMPL_NAIVE, IMPL_CPU } impl_id;

typedef struct {
    bf16 *x, *W;
    int32_t *target;
    float dloss;
} t_inputs;

typedef struct {
    float loss;
    bf16 *dx;
    float *dW;
    size_t peak, forward_live, allocs;
} t_result;

typedef struct {
    double loss, *dx, *dW;
} t_ref;

static void make_inputs(const lce_dims *d, uint64_t seed, t_inputs *in)
{
    in->x = host_alloc_array(lce_x_count(d), DT_BF16, "test: x");
    in->W = host_alloc_array(lce_w_count(d), DT_BF16, "test: W");
    in->target = host_alloc_array(d->N, DT_I32, "test: target");
    lce_fill(d, seed, in->x, in->W, in->target, &in->dloss);
}

static void free_inputs(t_inputs *in) { host_free(in->x); host_free(in->W); host_free(in->target); }

static void make_ref(const lce_dims *d, const t_inputs *in, t_ref *r)
{
    r->dx = host_alloc_array(lce_x_count(d), DT_F64, "test: ref dx");
    r->dW = host_alloc_array(lce_w_count(d), DT_F64, "test: ref dW");
    lce_reference(d, in->x, in->W, in->target, in->dloss, &r->loss, r->dx, r->dW);
}

static void free_ref(t_ref *r) { host_free(r->dx); host_free(r->dW); }

static void *copy_in(const void *src, size_t bytes, const char *label)
{
    void *p = host_alloc(bytes, label);
    memcpy(p, src, bytes);
    return p;
}

/* The session's measurement: scope, input copies, forward, live, dloss copy, backward, peak, allocations. */
static void run_impl(impl_id impl, const lce_dims *d, const t_inputs *in, t_result *res)
{
    track_scope s;
    track_scope_begin(&s);
    bf16 *x = copy_in(in->x, lce_x_count(d) * 2, "x [N,H] bf16 input");
    bf16 *W = copy_in(in->W, lce_w_count(d) * 2, "W [V,H] bf16 input");
    int32_t *t = copy_in(in->target, d->N * 4, "target [N] int32 input");
    naive_lce_saved ns;
    fused_lce_saved fs;
    float *loss = impl == IMPL_NAIVE ? naive_lce_forward(d, x, W, t, &ns) : cpu_lce_forward(d, x, W, t, &fs);
    res->forward_live = track_scope_read(&s, MEM_HOST).live_bytes;
    float *dl = copy_in(&in->dloss, 4, "dloss [1] f32 upstream");
    bf16 *dx;
    float *dW;
    if (impl == IMPL_NAIVE) naive_lce_backward(d, &ns, dl, &dx, &dW);
    else cpu_lce_backward(d, &fs, dl, &dx, &dW);
    mem_counters m = track_scope_read(&s, MEM_HOST);
    res->peak = m.peak_bytes;
    res->allocs = m.allocs;
    res->loss = loss[0];
    res->dx = dx;
    res->dW = dW;
    host_free(x); host_free(W); host_free(t); host_free(dl); host_free(loss);
}

static void free_result(t_result *r) { host_free(r->dx); host_free(r->dW); }

static void expect_formula(impl_id impl, const lce_dims *d, const t_result *r)
{
    mem_formula f = impl == IMPL_NAIVE ? naive_lce_memory(d) : cpu_lce_memory(d);
    ck_assert_msg(r->peak == f.peak && r->forward_live == f.forward_live && r->allocs == f.allocs,
                  "%s N=%zu H=%zu V=%zu chunk=%zu: tracker peak %zu live %zu allocs %zu, formula %zu %zu %zu",
                  impl == IMPL_NAIVE ? "naive" : "cpu", d->N, d->H, d->V, d->chunk, r->peak, r->forward_live,
                  r->allocs, f.peak, f.forward_live, f.allocs);
}

typedef struct {
    double loss, dx, dW;
} t_err;

static t_err errors(const lce_dims *d, const t_result *r, const t_ref *ref)
{
    t_err e;
    e.loss = fabs(r->loss - ref->loss) / fabs(ref->loss);
    e.dx = max_rel_err(r->dx, DT_BF16, ref->dx, DT_F64, lce_x_count(d));
    e.dW = max_rel_err(r->dW, DT_F32, ref->dW, DT_F64, lce_w_count(d));
    return e;
}

static t_err run_checked(impl_id impl, const lce_dims *d, const t_inputs *in, const t_ref *ref, double tol_g,
                         double tol_loss)
{
    t_result r;
    run_impl(impl, d, in, &r);
    expect_formula(impl, d, &r);
    t_err e = errors(d, &r, ref);
    ck_assert_msg(e.loss <= tol_loss && e.dx <= tol_g && e.dW <= tol_g,
                  "%s N=%zu H=%zu V=%zu chunk=%zu: errors loss %.3g dx %.3g dW %.3g over %.3g / %.3g",
                  impl == IMPL_NAIVE ? "naive" : "cpu", d->N, d->H, d->V, d->chunk, e.loss, e.dx, e.dW, tol_g,
                  tol_loss);
    free_result(&r);
    return e;
}

static void check_both(lce_dims d, uint64_t seed)
{
    t_inputs in;
    t_ref ref;
    make_inputs(&d, seed, &in);
    make_ref(&d, &in, &ref);
    t_err en = run_checked(IMPL_NAIVE, &d, &in, &ref, 16 * U8, 16 * U8);
    t_err ec = run_checked(IMPL_CPU, &d, &in, &ref, 2 * U8, 1e-5);
    /* the fix is the more accurate one, tensor by tensor */
    ck_assert_msg(ec.dW <= en.dW && ec.dx <= en.dx + U8 && ec.loss <= en.loss, /* dx: see session_case */
                  "cpu errors (loss %.3g dx %.3g dW %.3g) not <= naive's (%.3g %.3g %.3g)", ec.loss, ec.dx, ec.dW,
                  en.loss, en.dx, en.dW);
    free_ref(&ref);
    free_inputs(&in);
}

START_TEST(tiny_against_f64) { check_both(dims(4, 3, 7, 0), 61); }
END_TEST
START_TEST(small_against_f64) { check_both(dims(256, 128, 4096, 0), 62); }
END_TEST
/* one chunk (the fully materialised logits), one row per chunk, and a chunk that does not divide N */
START_TEST(chunk_one_chunk) { check_both(dims(40, 16, 300, 40), 63); }
END_TEST
START_TEST(chunk_one_row) { check_both(dims(40, 16, 300, 1), 64); }
END_TEST
START_TEST(chunk_ragged) { check_both(dims(41, 16, 300, 6), 65); }
END_TEST
/* V not a multiple of the panel, V < panel, H > V */
START_TEST(panel_edges) { check_both(dims(33, 20, 2 * LCE_VPANEL + 37, 0), 66); check_both(dims(9, 300, 11, 0), 67); }
END_TEST

/* Ignored rows: their dx rows are exactly 0, and changing their x changes nothing. */
START_TEST(ignored_rows)
{
    lce_dims d = dims(64, 16, 500, 0);
    t_inputs in;
    make_inputs(&d, 68, &in);
    for (size_t n = 0; n < d.N; n += 3) in.target[n] = LCE_IGNORE;
    for (int impl = IMPL_NAIVE; impl <= IMPL_CPU; impl++) {
        t_result a, b;
        run_impl((impl_id)impl, &d, &in, &a);
        for (size_t h = 0; h < d.H; h++) in.x[3 * d.H + h] = bf16_from_f32(5.0f); /* row 3 is ignored */
        run_impl((impl_id)impl, &d, &in, &b);
        ck_assert(a.loss == b.loss);
        ck_assert(memcmp(a.dW, b.dW, lce_w_count(&d) * 4) == 0);
        for (size_t n = 0; n < d.N; n += 3)
            for (size_t h = 0; h < d.H; h++) ck_assert_uint_eq(a.dx[n * d.H + h] & 0x7fff, 0);
        free_result(&a);
        free_result(&b);
    }
    t_ref ref;
    make_ref(&d, &in, &ref); /* and the mean divides by the counted rows only */
    t_result c;
    run_impl(IMPL_CPU, &d, &in, &c);
    ck_assert_double_eq_tol(c.loss, ref.loss, 1e-5 * ref.loss);
    free_result(&c);
    free_ref(&ref);
    free_inputs(&in);
}
END_TEST

START_TEST(all_rows_ignored)
{
    lce_dims d = dims(8, 4, 20, 0);
    t_inputs in;
    make_inputs(&d, 69, &in);
    for (size_t n = 0; n < d.N; n++) in.target[n] = LCE_IGNORE;
    for (int impl = IMPL_NAIVE; impl <= IMPL_CPU; impl++) {
        t_result r;
        run_impl((impl_id)impl, &d, &in, &r);
        ck_assert(r.loss == 0.0f);
        for (size_t i = 0; i < lce_w_count(&d); i++) ck_assert(r.dW[i] == 0.0f);
        for (size_t i = 0; i < lce_x_count(&d); i++) ck_assert_uint_eq(r.dx[i] & 0x7fff, 0);
        free_result(&r);
    }
    free_inputs(&in);
}
END_TEST

/* The lesson's point in numbers: naive's extra peak is at least the V*H*6 temporaries. At medium (chunk 16) cpu
 * holds a logits block of 128 rows (linear_ce.h), (128 - 16) * V * 4 bytes more than one chunk's: added
 * back. At the seed's size the chunk is 256 rows, cpu's block is the chunk, and the saving is the whole of it. */
START_TEST(temporaries_in_the_formula)
{
    lce_dims d = dims(2048, 256, 32768, 0); /* medium: formulas only, nothing runs */
    mem_formula n = naive_lce_memory(&d), c = cpu_lce_memory(&d);
    size_t six = 6 * lce_w_count(&d), extra = (cpu_lce_block_rows(&d) - d.chunk) * d.V * 4;
    ck_assert_uint_eq(cpu_lce_block_rows(&d), 128);
    ck_assert_uint_ge(n.peak - c.peak + extra, (size_t)(0.9 * (double)six));
    /* and to the byte, as the run's "the rest" line says: cpu's panels, a chunk's logits in f32 rather than bf16,
     * less naive's GEMM scratch and loss_1d */
    size_t panels = cpu_lce_workspace_bytes(&d) - 4 * cpu_lce_block_rows(&d) * d.V;
    ck_assert_uint_eq(n.peak - c.peak + extra + panels + 2 * d.chunk * d.V,
                      six + naive_lce_scratch_bytes(&d) + 4 * d.N);
    ck_assert_uint_eq(n.forward_live, c.forward_live); /* both keep grad_weight and grad_input, nothing else */
    lce_dims f = dims(8192, 4096, 128256, 0);           /* the seed's V = 128k, H = 4096 */
    ck_assert_uint_eq(f.chunk, 256);
    ck_assert_uint_eq(cpu_lce_block_rows(&f), f.chunk);
    n = naive_lce_memory(&f), c = cpu_lce_memory(&f);
    ck_assert_uint_ge(n.peak - c.peak, (size_t)(0.9 * (double)(6 * lce_w_count(&f))));
    ck_assert_uint_eq(6 * lce_w_count(&f), 3152019456u); /* "this would save 3GB" */
}
END_TEST

/* Through the generic session (what build/lesson5 prints): formulas equal the tracker, every run validates. */
extern const lesson lesson5_def;

static void session_case(long long N, long long H, long long V, long long chunk, uint64_t seed)
{
    const lesson *L = &lesson5_def;
    long long dv[3] = {N, H, V}, opts[LESSON_MAX_OPTS] = {chunk}; /* every option, --filter and --peaked off */
    lesson_problem prob;
    ck_assert_ptr_null(L->make_problem(dv, opts, &prob));
    void *t[LESSON_MAX_TENSORS] = {0};
    double *ref[LESSON_MAX_TENSORS] = {0};
    lesson_make_inputs(L, &prob, seed, t);
    ck_assert_ptr_null(lesson_make_reference(L, &prob, t, ref));
    double err[2], dw[2];
    for (int k = 0; k < 2; k++) {
        int impl = lesson_find_impl(L, k ? "cpu" : "naive");
        lesson_result res;
        lesson_run_impl(L, &prob, impl, t, &res);
        mem_formula f = L->impls[impl].memory(&prob);
        ck_assert_uint_eq(res.row.peak_bytes, f.peak);
        ck_assert_uint_eq(res.row.forward_live_bytes, f.forward_live);
        ck_assert_uint_eq(res.row.allocs, f.allocs);
        err[k] = lesson_max_rel_err(L, &prob, &res, ref);
        dw[k] = max_rel_err(res.result[6], DT_F32, ref[6], DT_F64, lce_w_count((const lce_dims *)&prob)); /* dW */
        ck_assert_msg(err[k] <= res.tolerance, "%s: %.3g over %.3g", L->impls[impl].name, err[k], res.tolerance);
        lesson_result_free(L, &res);
    }
    /* dW is where the fix acts: strictly more accurate. The overall number is dominated by dx, bf16 in both and
     * rounded the same way, so the two can differ by one bf16 step (u) either way. */
    ck_assert_msg(dw[1] <= dw[0], "cpu dW %.3g above naive %.3g", dw[1], dw[0]);
    ck_assert_msg(err[1] <= err[0] + U8, "cpu %.3g above naive %.3g + u", err[1], err[0]);
    lesson_free_ref(L, ref);
    lesson_free_slots(L, t);
}

START_TEST(session_tiny) { session_case(4, 3, 7, 0, 71); }
END_TEST
START_TEST(session_small) { session_case(256, 128, 4096, 0, 72); }
END_TEST
START_TEST(session_small_one_chunk) { session_case(256, 128, 4096, 256, 73); }
END_TEST
START_TEST(session_bad_dims)
{
    long long dv[3] = {8, 4, 20}, big[LESSON_MAX_OPTS] = {9};
    lesson_problem prob;
    ck_assert_ptr_nonnull(lesson5_def.make_problem(dv, big, &prob)); /* --chunk above N */
    long long huge[3] = {1LL << 40, 1LL << 40, 1LL << 30}, zero[LESSON_MAX_OPTS] = {0};
    ck_assert_ptr_nonnull(lesson5_def.make_problem(huge, zero, &prob)); /* V*H*6 overflows */
}
END_TEST

/* ---- the CUDA version's chunk: its traffic model (kernels/linear_ce.h) --------------------------------- */

/* The chosen chunk is the model's argmin of the logits buffer subject to "modeled time within LCE_CHUNK_SLACK of
 * one chunk": it meets the bound, and every smaller candidate (the powers of two below it) does not. */
static void expect_model_choice(size_t N, size_t H, size_t V)
{
    size_t c = lce_model_chunk(N, H, V);
    double bound = (1.0 + LCE_CHUNK_SLACK) * lce_chunk_model(N, H, V, N).ms;
    ck_assert(c >= 1 && c <= N);
    ck_assert_msg(c == N || (c & (c - 1)) == 0, "chunk %zu is neither N nor a power of two", c);
    ck_assert_msg(lce_chunk_model(N, H, V, c).ms <= bound, "N=%zu: chunk %zu misses the bound", N, c);
    for (size_t smaller = 1; smaller < c; smaller *= 2)
        ck_assert_msg(lce_chunk_model(N, H, V, smaller).ms > bound, "N=%zu H=%zu V=%zu: %zu rows also meet the "
                      "bound, so %zu is not the smallest", N, H, V, smaller, c);
}

START_TEST(chunk_model_argmin)
{
    expect_model_choice(4, 3, 7);
    expect_model_choice(37, 19, 301);
    expect_model_choice(256, 128, 4096);
    expect_model_choice(2048, 256, 32768);
    expect_model_choice(8192, 4096, 128256);
    expect_model_choice(100000, 4096, 256000);
    ck_assert_uint_ge(lce_model_chunk(8192, 4096, 128256), 1024); /* the expectation at the seed's size */
}
END_TEST

/* At N = chunk = 8192 (the seed's size) every GEMM is compute-bound (c = 8192 > 4 F / B = 1181 flop/byte for dW,
 * the leanest), so the model is 3 GEMMs of 2 N V H flops at F plus the row pass's 6 N V bytes at B; and at
 * chunk 256 dW's read-modify-write is 32 chunks of 2 V H 4 bytes. Computed here independently of the model. */
START_TEST(chunk_model_figures)
{
    double N = 8192, H = 4096, V = 128256;
    double ms = 1e3 * (3 * 2 * N * V * H / LCE_MODEL_FLOPS + 6 * N * V / LCE_MODEL_BYTES);
    lce_chunk_cost one = lce_chunk_model(8192, 4096, 128256, 8192), c256 = lce_chunk_model(8192, 4096, 128256, 256);
    ck_assert_double_eq_tol(one.ms, ms, 1e-9 * ms);
    ck_assert_double_eq_tol(c256.dw_rmw_bytes, 32 * 2 * V * H * 4, 0.5);
    ck_assert_double_eq_tol(c256.logits_bytes, 256 * V * 4, 0.5);
    ck_assert(c256.ms > one.ms); /* 32 passes over dW and W cost time */
    lce_chunk_cost ragged = lce_chunk_model(1000, 64, 512, 300); /* 3 chunks of 300 + one of 100 */
    ck_assert_double_eq_tol(ragged.dw_rmw_bytes, 4 * 2 * 512.0 * 64 * 4, 0.5);
}
END_TEST

/* --chunk 0 gives cuda the model's chunk (naive and cpu keep the seed's rule); --chunk K gives every version K */
START_TEST(chunk_model_in_the_problem)
{
    long long dims[3] = {8192, 4096, 128256}, opts[LESSON_MAX_OPTS] = {0};
    lesson_problem prob;
    const lce_dims *d = (const lce_dims *)(const void *)&prob; /* lce_problem's first member */
    ck_assert_ptr_null(lesson5_def.make_problem(dims, opts, &prob));
    ck_assert_uint_eq(d->chunk, 256);
    ck_assert_uint_eq(d->cuda_chunk, lce_model_chunk(8192, 4096, 128256));
    opts[0] = 512;
    ck_assert_ptr_null(lesson5_def.make_problem(dims, opts, &prob));
    ck_assert_uint_eq(d->cuda_chunk, 512);
}
END_TEST

static TCase *chunk_model_tcase(void)
{
    TCase *t = tcase_create("cuda-chunk-model");
    tcase_add_test(t, chunk_model_argmin);
    tcase_add_test(t, chunk_model_figures);
    tcase_add_test(t, chunk_model_in_the_problem);
    return t;
}

static Suite *lesson5_suite(void)
{
    Suite *s = suite_create("lesson5");
    TCase *b = tcase_create("bf16");
    tcase_add_test(b, bf16_roundtrip_all);
    tcase_add_test(b, bf16_ties_to_even);
    tcase_add_test(b, bf16_inf_nan_overflow);
    tcase_add_test(b, bf16_random_against_definition);
    tcase_set_timeout(b, 30);
    suite_add_tcase(s, b);
    TCase *m = tcase_create("math");
    tcase_add_test(m, online_lse_matches_double);
    tcase_add_test(m, row_pass_in_place_layout);
    tcase_add_loop_test(m, row_pass_each_path_against_double, 0, 3);
    tcase_add_test(m, filter_never_drops_nan);
    tcase_set_timeout(m, 30);
    suite_add_tcase(s, m);
    TCase *g = tcase_create("gradients"); /* every lesson's gradient checks: CK_RUN_CASE=gradients */
    tcase_add_test(g, reference_gradients_fd_tiny);
    tcase_set_timeout(g, 30);
    suite_add_tcase(s, g);
    TCase *r = tcase_create("implementations");
    tcase_add_test(r, tiny_against_f64);
    tcase_add_test(r, small_against_f64);
    tcase_add_test(r, chunk_one_chunk);
    tcase_add_test(r, chunk_one_row);
    tcase_add_test(r, chunk_ragged);
    tcase_add_test(r, panel_edges);
    tcase_add_test(r, ignored_rows);
    tcase_add_test(r, all_rows_ignored);
    tcase_add_test(r, temporaries_in_the_formula);
    tcase_add_test(r, session_tiny);
    tcase_add_test(r, session_small);
    tcase_add_test(r, session_small_one_chunk);
    tcase_add_test(r, session_bad_dims);
    tcase_set_timeout(r, 60);
    suite_add_tcase(s, r);
    suite_add_tcase(s, chunk_model_tcase());
    return s;
}

int main(void) { return check_main(lesson5_suite()); }
