/* cuda_lesson3.c - lesson 3 on the GPU (or the CPU emulation build): cuda-v1 .. cuda-v6 against the float64
 * reference, their device memory formulas against the tracker, in every
 * mode (saved argmax, --recompute, --deterministic); out bitwise equal to cpu's (exact grid scores -- exact in
 * TF32 too -- summed over j in the same order); the deterministic db bitwise equal across two runs. Tiny, small
 * and odd sizes, sizes one below, at and above the tile constants (64 rows and columns; K steps of 16 in v2, 32
 * in v3; v4's 64-row j and n tiles and 32-column stages, and its largest K, 256; K % 4 == 0 takes v3's float4
 * path and v4's cp.async copies), and NaN/Inf inputs for every version (maxsim_special.h). Small enough that
 * the emulation stays fast. Run by test_cuda without fork. */
#define _POSIX_C_SOURCE 200809L /* setenv: the emulated 99 KB GPUs */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/maxsim.h"
#include "../kernels/runtime/cuda_fit.h"
#include "../kernels/runtime/cuda_track.h"
#include "rng.h"
#include "track.h"
#include "lesson.h"
#include "cuda_suites.h"


static const ms_dims TINY = {2, 3, 2, 4, 3}, SMALL = {20, 20, 25, 19, 25}, TILED = {2, 70, 2, 130, 20};
static const ms_dims ODD = {3, 17, 5, 29, 11};
/* one below, at and above the tiles: J and N around 64, K around v3's 32 (and two of v2's 16-steps) */
static const ms_dims EDGE_LO = {1, 63, 2, 63, 31}, EDGE_AT = {1, 64, 1, 64, 32}, EDGE_HI = {2, 65, 1, 65, 33};
/* --deterministic's sort: N around the scan's 256-thread chunk (513: argmaxes land in later chunks), R = I*J
 * around the scatter's 32-row chunk; K around v2's 16-step */
/* v4: J and N one below, at and above its 64-row tiles and two of them, K around its 32-column stages (31 and 33:
 * the 4-byte path; 32 and 36: cp.async, 36 with a stage of 4 real columns) and at its largest, 256 (64 KB of a[i]
 * beside the 32 KB ring); N = 300: more stages than the ring holds, the ring's wrap */
static const ms_dims EDGE4_LO = {1, 63, 2, 63, 31}, EDGE4_AT = {1, 64, 1, 64, 32}, EDGE4_HI = {2, 129, 1, 129, 36};
static const ms_dims K4_MAX = {2, 5, 1, 7, 256}, EDGE4_K33 = {1, 9, 1, 300, 33};
/* MS_NAN_IN_B plants in b[1, 2, K-1]: M >= 2 */
static const ms_dims EDGE4_AT_M2 = {1, 64, 2, 64, 32};
static const ms_dims SORT_AT = {1, 32, 2, 256, 16}, SORT_HI = {1, 33, 2, 513, 17}, SORT_LO = {1, 31, 1, 255, 15};

#include "maxsim_special.h"

static void prob_for(const ms_dims *d, int recompute, int deterministic, lesson_problem *p)
{
    long long dims[5] = {(long long)d->I, (long long)d->J, (long long)d->M, (long long)d->N, (long long)d->K};
    long long opts[3] = {recompute, deterministic, ms_test_precision};
    ck_assert_ptr_null(lesson3_def.make_problem(dims, opts, p));
}

/* Runs impl; checks formula == tracker and the reference; returns the result (caller frees). */
static void run_checked(const char *impl, const lesson_problem *p, void *const *t, double *const *ref,
                        lesson_result *res)
{
    const lesson *L = &lesson3_def;
    int k = lesson_find_impl(L, impl);
    lesson_run_impl(L, p, k, t, res);
    mem_formula f = L->impls[k].memory(p);
    ck_assert_uint_eq(res->row.peak_bytes, f.peak);
    ck_assert_uint_eq(res->row.forward_live_bytes, f.forward_live);
    ck_assert_uint_eq(res->row.allocs, f.allocs);
    double err = lesson_max_rel_err(L, p, res, ref);
    ck_assert_msg(err <= L->tolerance, "%s: max rel err %g above %g", impl, err, L->tolerance);
}

static void gpu_case(const char *impl, const ms_dims *d, int recompute, int deterministic, uint64_t seed)
{
    const lesson *L = &lesson3_def;
    lesson_problem p;
    prob_for(d, recompute, deterministic, &p);
    void *t[LESSON_MAX_TENSORS];
    double *ref[LESSON_MAX_TENSORS];
    lesson_make_inputs(L, &p, seed, t);
    ck_assert_ptr_null(lesson_make_reference(L, &p, t, ref));
    lesson_result g, c;
    run_checked(impl, &p, t, ref, &g);
    run_checked("cpu", &p, t, ref, &c);
    ck_assert_int_eq(memcmp(g.result[MS_OUT], c.result[MS_OUT], ms_out_count(d) * sizeof(float)), 0);
    if (deterministic) {
        lesson_result g2;
        run_checked(impl, &p, t, ref, &g2);
        ck_assert_int_eq(memcmp(g.result[MS_DB], g2.result[MS_DB], ms_b_count(d) * sizeof(float)), 0);
        ck_assert_int_eq(memcmp(g.result[MS_DA], g2.result[MS_DA], ms_a_count(d) * sizeof(float)), 0);
        lesson_result_free(L, &g2);
    }
    lesson_result_free(L, &g);
    lesson_result_free(L, &c);
    lesson_free_ref(L, ref);
    lesson_free_slots(L, t);
}

START_TEST(cuda_v2_tiny) { gpu_case("cuda-v2", &TINY, 0, 0, 301); }
END_TEST
START_TEST(cuda_v2_small) { gpu_case("cuda-v2", &SMALL, 0, 0, 302); }
END_TEST
START_TEST(cuda_v2_tiled) { gpu_case("cuda-v2", &TILED, 0, 0, 303); }
END_TEST
START_TEST(cuda_v2_recompute_small) { gpu_case("cuda-v2", &SMALL, 1, 0, 304); }
END_TEST
START_TEST(cuda_v2_deterministic_small) { gpu_case("cuda-v2", &SMALL, 0, 1, 305); }
END_TEST
START_TEST(cuda_v2_recompute_deterministic_tiled) { gpu_case("cuda-v2", &TILED, 1, 1, 306); }
END_TEST
START_TEST(cuda_v1_tiny) { gpu_case("cuda-v1", &TINY, 0, 0, 307); }
END_TEST
START_TEST(cuda_v1_small) { gpu_case("cuda-v1", &SMALL, 0, 0, 308); }
END_TEST
START_TEST(cuda_v1_recompute_deterministic_small) { gpu_case("cuda-v1", &SMALL, 1, 1, 309); }
END_TEST
START_TEST(cuda_v3_tiny) { gpu_case("cuda-v3", &TINY, 0, 0, 310); }
END_TEST
START_TEST(cuda_v3_small) { gpu_case("cuda-v3", &SMALL, 0, 0, 311); }
END_TEST
START_TEST(cuda_v3_odd) { gpu_case("cuda-v3", &ODD, 0, 0, 312); }
END_TEST
START_TEST(cuda_v3_tiled_recompute_deterministic) { gpu_case("cuda-v3", &TILED, 1, 1, 313); }
END_TEST
START_TEST(cuda_v3_tile_edges)
{
    gpu_case("cuda-v3", &EDGE_LO, 0, 0, 314);
    gpu_case("cuda-v3", &EDGE_AT, 0, 1, 315);
    gpu_case("cuda-v3", &EDGE_HI, 1, 0, 316);
}
END_TEST
START_TEST(cuda_v4_tiny) { gpu_case("cuda-v4", &TINY, 0, 0, 360); }
END_TEST
START_TEST(cuda_v4_odd) { gpu_case("cuda-v4", &ODD, 1, 1, 362); } /* small runs in make emu-profile */
END_TEST
/* the mma.sync kernels (v4, v5): J and N one below, at and above their tiles, K at its largest, the ring's wrap;
 * seeds seed .. seed + 4 */
static void pipelined_tile_edges(const char *impl, uint64_t seed)
{
    gpu_case(impl, &EDGE4_LO, 0, 0, seed);
    gpu_case(impl, &EDGE4_AT, 0, 1, seed + 1);
    gpu_case(impl, &EDGE4_HI, 1, 0, seed + 2);
    gpu_case(impl, &K4_MAX, 0, 0, seed + 3);
    gpu_case(impl, &EDGE4_K33, 0, 0, seed + 4);
}
START_TEST(cuda_v4_tile_edges) { pipelined_tile_edges("cuda-v4", 363); }
END_TEST
START_TEST(cuda_v2_odd_tile_edges)
{
    gpu_case("cuda-v2", &ODD, 0, 1, 317);
    gpu_case("cuda-v2", &EDGE_HI, 0, 0, 318);
}
END_TEST
START_TEST(cuda_v1_odd) { gpu_case("cuda-v1", &ODD, 0, 1, 319); }
END_TEST
START_TEST(cuda_deterministic_sort_edges)
{
    gpu_case("cuda-v1", &SORT_LO, 0, 1, 320);
    gpu_case("cuda-v2", &SORT_AT, 0, 1, 321);
    gpu_case("cuda-v1", &SORT_HI, 1, 1, 322);
}
END_TEST

/* NaN and Inf rows (maxsim_special.h): each version, each case, at the odd size; the bucket path once each */
static void special_all(const char *impl, uint64_t seed)
{
    ms_special_case(impl, &ODD, MS_NAN_IN_A, 0, 0, seed);
    ms_special_case(impl, &ODD, MS_NAN_IN_B, 1, 0, seed + 1);
    ms_special_case(impl, &ODD, MS_INF, 0, 1, seed + 2);
}
START_TEST(cuda_v1_nan_inf) { special_all("cuda-v1", 330); }
END_TEST
START_TEST(cuda_v2_nan_inf) { special_all("cuda-v2", 340); }
END_TEST
/* special_all, then the 16-byte copies with NaN into the buckets (seed + 3) */
static void pipelined_nan_inf(const char *impl, uint64_t seed)
{
    special_all(impl, seed);
    ms_special_case(impl, &EDGE4_AT_M2, MS_NAN_IN_B, 0, 1, seed + 3);
}
START_TEST(cuda_v4_nan_inf) { pipelined_nan_inf("cuda-v4", 370); }
END_TEST
/* "cuda" runs the fastest version that fits (lesson_cuda_pick, cuda_order): every version before its pick refuses
 * the problem on this device and the pick does not. Under the emulator, whose device is set by the environment,
 * also which one: v4 at K = 256 on an sm_90 and on the 99 KB GPUs (98,304 bytes of shared memory), v3 at K = 257
 * (v4 takes K <= 256). */
static int alias_pick(const ms_dims *d)
{
    const lesson *L = &lesson3_def;
    lesson_problem p;
    prob_for(d, 0, 0, &p);
    int skipped = -1, row = lesson_cuda_pick(L, &p, SIZE_MAX, &skipped);
    for (int k = 0; k < skipped; k++) {
        const lesson_impl *im = &L->impls[lesson_cuda_version_impl(L, L->cuda_order[k])];
        ck_assert_msg(im->unfit(&p) != NULL, "cuda passed over %s, which fits", im->name);
    }
    ck_assert_int_eq(L->impls[row].version, L->cuda_order[skipped]);
    ck_assert_msg(L->impls[row].unfit(&p) == NULL, "cuda picked %s, which refuses: %s", L->impls[row].name,
                  L->impls[row].unfit(&p));
    return L->impls[row].version;
}
START_TEST(cuda_alias_picks_the_fastest_that_fits)
{
    ms_dims k257 = K4_MAX;
    k257.K = 257;
    int fast = alias_pick(&K4_MAX);
    ck_assert_int_eq(alias_pick(&k257), 3);
#ifdef CUDA_EMU
    ck_assert_int_eq(fast, lesson3_def.cuda_order[0]);
    setenv("EMU_GPU", "RTX4090", 1);
    ck_assert_int_eq(alias_pick(&K4_MAX), fast);
    setenv("EMU_GPU", "L4", 1);
    ck_assert_int_eq(alias_pick(&K4_MAX), fast);
    unsetenv("EMU_GPU");
#else
    (void)fast;
#endif
}
END_TEST
/* v5: J around its 128-row j tiles, N around its 64-row n tiles, K around its 64-column stages and its 8-column
 * rows (K8: 63 -> 64, 65 -> 72, 33 -> 40), at its largest, 256, and the ring's wrap (N = 300); the grid inputs
 * are exact in bf16 and fp16, so out is still bitwise cpu's. Then each case once more with --precision fp16. */
static const ms_dims EDGE5_LO = {1, 127, 2, 63, 63}, EDGE5_AT = {1, 128, 1, 64, 64}, EDGE5_HI = {2, 129, 1, 129, 65};
static void v5_tile_edges(uint64_t seed)
{
    gpu_case("cuda-v5", &EDGE5_LO, 0, 0, seed);
    gpu_case("cuda-v5", &EDGE5_AT, 0, 1, seed + 1);
    gpu_case("cuda-v5", &EDGE5_HI, 1, 0, seed + 2);
    gpu_case("cuda-v5", &K4_MAX, 0, 0, seed + 3);
    gpu_case("cuda-v5", &EDGE4_K33, 0, 0, seed + 4);
}
START_TEST(cuda_v5_tiny) { gpu_case("cuda-v5", &TINY, 0, 0, 380); }
END_TEST
START_TEST(cuda_v5_odd) { gpu_case("cuda-v5", &ODD, 1, 1, 381); }
END_TEST
START_TEST(cuda_v5_tile_edges) { v5_tile_edges(382); }
END_TEST
START_TEST(cuda_v5_nan_inf) { pipelined_nan_inf("cuda-v5", 390); }
END_TEST
START_TEST(cuda_v5_fp16)
{
    ms_test_precision = MS_FP16;
    gpu_case("cuda-v5", &ODD, 0, 1, 395);
    v5_tile_edges(396);
    pipelined_nan_inf("cuda-v5", 401);
    ms_test_precision = MS_BF16;
}
END_TEST

/* cuda-v5 (and v6) on data that is not on the grid: normal a and b, against the float64 scores. Each operand is rounded
 * to u = 2^-8 (bf16, 8 significant bits) or 2^-11 (fp16, 11; below 2^-14 its subnormals' absolute error is at
 * most 2^-25 = eta), the products of the rounded operands are exact in fp32, and fp32 sums K + 1 of them with
 * an error below (K + 1) 2^-23 of their magnitudes (twice the textbook gamma_K: the tensor core's order and
 * internal rounding are undocumented). So score n errs by at most
 *   e_n = sum_k [ p~_k - |a_k b_k| + (K + 1) 2^-23 p~_k ],   p~_k = ((1 + u)|a_k| + eta) ((1 + u)|b_k| + eta),
 * out[i, m] = sum_j max_n by at most sum_j max_n e_n (a max moves no more than its arguments) plus fp32's sum
 * over j, J 2^-23 sum_j (|max| + max e). An argmax can differ from float64's only where another column's exact
 * score lies within e_best + e_n of the best one: each flip must be such a row, and its exact score must lose
 * no more than that. The test prints the flips and the rows that could flip. */
typedef float *(*ms16_forward)(const ms_dims *, const float *, const float *, int, int, int, cuda_ms_saved *);
static void v16_precision(ms16_forward forward, int version, int f16, uint64_t seed)
{
    const ms_dims d = {2, 512, 2, 200, 32}; /* 2,048 rows (i, j, m); flips do not depend on K: score and error grow alike */
    size_t na = ms_a_count(&d), nb = ms_b_count(&d), no = ms_out_count(&d), ng = ms_arg_count(&d);
    float *a = malloc(na * 4), *b = malloc(nb * 4), *out = malloc(no * 4);
    int *arg = malloc(ng * 4);
    rng r;
    rng_seed(&r, seed);
    rng_fill_normal_f32(&r, a, na, 0.0f, 1.0f);
    rng_fill_normal_f32(&r, b, nb, 0.0f, 1.0f);
    float *da = dev_alloc_array(na, DT_F32, "a"), *db = dev_alloc_array(nb, DT_F32, "b");
    dev_upload(da, a, na * 4);
    dev_upload(db, b, nb * 4);
    cuda_ms_saved saved;
    float *dout = forward(&d, da, db, 0, 0, f16, &saved);
    dev_download(out, dout, no * 4);
    dev_download(arg, saved.arg, ng * 4);
    dev_free(saved.arg);
    dev_free(dout);
    dev_free(db);
    dev_free(da);
    double u = f16 ? 0x1p-11 : 0x1p-8, eta = f16 ? 0x1p-25 : 0.0, acc = (double)(d.K + 1) * 0x1p-23;
    double *s = malloc(d.N * sizeof *s), *e = malloc(d.N * sizeof *e);
    size_t flips = 0, could = 0;
    double worst_out = 0.0, worst_loss = 0.0;
    for (size_t i = 0; i < d.I; i++)
        for (size_t m = 0; m < d.M; m++) {
            double sum = 0.0, tol = 0.0, mag = 0.0;
            for (size_t j = 0; j < d.J; j++) {
                const float *x = a + (i * d.J + j) * d.K;
                size_t best = 0;
                double emax = 0.0;
                for (size_t n = 0; n < d.N; n++) {
                    const float *y = b + (m * d.N + n) * d.K;
                    double dot = 0.0, err = 0.0;
                    for (size_t k = 0; k < d.K; k++) {
                        double p = fabs((double)x[k] * y[k]);
                        double pr = ((1 + u) * fabs((double)x[k]) + eta) * ((1 + u) * fabs((double)y[k]) + eta);
                        dot += (double)x[k] * y[k];
                        err += pr - p + acc * pr;
                    }
                    s[n] = dot, e[n] = err;
                    if (dot > s[best]) best = n;
                    if (err > emax) emax = err;
                }
                int close = 0;
                for (size_t n = 0; n < d.N; n++) close |= n != best && s[n] >= s[best] - e[best] - e[n];
                size_t got = (size_t)arg[(i * d.J + j) * d.M + m];
                ck_assert_uint_lt(got, d.N);
                could += close;
                if (got != best) {
                    flips++;
                    ck_assert_msg(close, "row (%zu, %zu, %zu): argmax %zu, float64's %zu, no score within the bound",
                                  i, j, m, got, best);
                    ck_assert_msg(s[got] >= s[best] - e[best] - e[got], "a flip loses more than the bound");
                    if (s[best] - s[got] > worst_loss) worst_loss = s[best] - s[got];
                }
                sum += s[best], tol += emax, mag += fabs(s[best]) + emax;
            }
            tol += (double)d.J * 0x1p-23 * mag;
            double off = fabs((double)out[i * d.M + m] - sum);
            ck_assert_msg(off <= tol, "out[%zu, %zu] = %.9g, float64 %.9g: off by %g, bound %g", i, m,
                          out[i * d.M + m], sum, off, tol);
            if (off / tol > worst_out) worst_out = off / tol;
        }
    printf("cuda-v%d --precision %s, normal inputs, I=%zu J=%zu M=%zu N=%zu K=%zu: %zu of %zu argmaxes differ "
           "from float64's (%zu rows within the error bound could), the chosen score at most %.3g below the best; out "
           "within %.3f of its bound\n", version, f16 ? "fp16" : "bf16", d.I, d.J, d.M, d.N, d.K, flips, ng, could, worst_loss,
           worst_out);
    ck_assert_uint_le(flips, could);
    free(e), free(s), free(arg), free(out), free(b), free(a);
}
START_TEST(cuda_v5_precision_bf16) { v16_precision(ms5_forward, 5, 0, 410); }
END_TEST
START_TEST(cuda_v5_precision_fp16) { v16_precision(ms5_forward, 5, 1, 411); }
END_TEST

/* v6: J around its 256-row j tiles (257: two of them, the ring running on across the tile boundary), N around
 * its 128-row n tiles (129: the last one's columns past N are the next document's rows), K around its 64-column
 * stages and its 8-column rows, at its largest, 256, and more stages than the ring holds in one j tile (N = 300,
 * K = 200: 3 n tiles x 4 stages, three j tiles). The operands are v5's, so out is bitwise cpu's on the grid and
 * v5's bound holds on normal inputs (v16_precision): wgmma's products are exact and summed in fp32 like
 * mma.sync's. Where the device is not 9.0 the version refuses the problem (cuda_v6_only_on_9_0). */
static const ms_dims EDGE6_LO = {1, 255, 2, 127, 63}, EDGE6_AT = {1, 256, 1, 128, 64},
                     EDGE6_HI = {2, 257, 1, 129, 65}, WRAP6 = {1, 520, 1, 300, 200};
/* 0, with a line saying so, on a GPU that is not 9.0 (the emulated one is, unless EMU_GPU says otherwise) */
static int v6_here(void)
{
    const char *why = ms6_unfit(&TINY);
    if (why) printf("cuda-v6's cases skipped: %s\n", why);
    return why == NULL;
}
static void v6_tile_edges(uint64_t seed)
{
    if (!v6_here()) return;
    gpu_case("cuda-v6", &EDGE6_LO, 0, 0, seed);
    gpu_case("cuda-v6", &EDGE6_AT, 0, 1, seed + 1);
    gpu_case("cuda-v6", &EDGE6_HI, 1, 0, seed + 2);
    gpu_case("cuda-v6", &K4_MAX, 0, 0, seed + 3);
    gpu_case("cuda-v6", &WRAP6, 0, 0, seed + 4);
}
START_TEST(cuda_v6_tiny)
{
    if (v6_here()) gpu_case("cuda-v6", &TINY, 0, 0, 420);
}
END_TEST
START_TEST(cuda_v6_odd)
{
    if (v6_here()) gpu_case("cuda-v6", &ODD, 1, 1, 421);
}
END_TEST
START_TEST(cuda_v6_tile_edges) { v6_tile_edges(422); }
END_TEST
START_TEST(cuda_v6_nan_inf)
{
    if (v6_here()) pipelined_nan_inf("cuda-v6", 430);
}
END_TEST
START_TEST(cuda_v6_fp16)
{
    if (!v6_here()) return;
    ms_test_precision = MS_FP16;
    gpu_case("cuda-v6", &ODD, 0, 1, 435);
    gpu_case("cuda-v6", &EDGE6_HI, 0, 0, 436);
    pipelined_nan_inf("cuda-v6", 437);
    ms_test_precision = MS_BF16;
}
END_TEST
START_TEST(cuda_v6_precision_bf16)
{
    if (v6_here()) v16_precision(ms6_forward, 6, 0, 441);
}
END_TEST
START_TEST(cuda_v6_precision_fp16)
{
    if (v6_here()) v16_precision(ms6_forward, 6, 1, 442);
}
END_TEST
/* v6 runs on compute capability 9.0 only: elsewhere its fit check refuses with the reason, and the row is
 * skipped with that line. The emulated device is an sm_90 unless EMU_GPU names another. */
START_TEST(cuda_v6_only_on_9_0)
{
    const lesson *L = &lesson3_def;
    lesson_problem p;
    prob_for(&TINY, 0, 0, &p);
    const lesson_impl *v6 = &L->impls[lesson_find_impl(L, "cuda-v6")];
    const cuda_device_info *dev = cuda_device_info_get();
    const char *why = v6->unfit(&p);
    if (dev->cc == 90) ck_assert_msg(why == NULL, "cuda-v6 refuses on a 9.0 device: %s", why);
    else ck_assert_msg(why && strstr(why, "compute capability 9.0"), "cuda-v6 on %d: %s", dev->cc, why);
#ifdef CUDA_EMU
    setenv("EMU_GPU", "RTX4090", 1);
    why = v6->unfit(&p);
    ck_assert_msg(why && strstr(why, "needs compute capability 9.0") && strstr(why, "8.9"), "%s", why);
    setenv("EMU_GPU", "A100", 1);
    why = v6->unfit(&p);
    ck_assert_msg(why && strstr(why, "8.0"), "%s", why);
    setenv("EMU_GPU", "H200", 1);
    ck_assert_ptr_null(v6->unfit(&p));
    unsetenv("EMU_GPU");
#endif
}
END_TEST
START_TEST(cuda_v3_nan_inf)
{
    special_all("cuda-v3", 350);
    ms_special_case("cuda-v3", &EDGE_AT, MS_NAN_IN_A, 0, 1, 353); /* the float4 path, NaN into the buckets */
}
END_TEST

Suite *cuda_lesson3_suite(void)
{
    Suite *s = suite_create("cuda-lesson3");
    TCase *t = tcase_create("maxsim");
    tcase_add_test(t, cuda_v2_tiny);
    tcase_add_test(t, cuda_v2_tiled);
    tcase_add_test(t, cuda_v2_recompute_deterministic_tiled);
    tcase_add_test(t, cuda_v1_tiny);
    tcase_add_test(t, cuda_v1_small);
    tcase_add_test(t, cuda_v1_recompute_deterministic_small);
    tcase_add_test(t, cuda_v3_tiny);
    tcase_add_test(t, cuda_v3_small);
    tcase_add_test(t, cuda_v3_odd);
    tcase_add_test(t, cuda_v3_tiled_recompute_deterministic);
    tcase_add_test(t, cuda_v3_tile_edges);
    tcase_add_test(t, cuda_v2_odd_tile_edges);
    tcase_add_test(t, cuda_v1_odd);
    tcase_add_test(t, cuda_deterministic_sort_edges);
    tcase_add_test(t, cuda_v1_nan_inf);
    tcase_add_test(t, cuda_v2_nan_inf);
    tcase_add_test(t, cuda_v3_nan_inf);
    tcase_add_test(t, cuda_v4_tiny);
    tcase_add_test(t, cuda_v4_odd);
    tcase_add_test(t, cuda_v4_tile_edges);
    tcase_add_test(t, cuda_v4_nan_inf);
    tcase_add_test(t, cuda_v5_tiny);
    tcase_add_test(t, cuda_v5_odd);
    tcase_add_test(t, cuda_v5_tile_edges);
    tcase_add_test(t, cuda_v5_nan_inf);
    tcase_add_test(t, cuda_v5_fp16);
    tcase_add_test(t, cuda_v5_precision_bf16);
    tcase_add_test(t, cuda_v5_precision_fp16);
    tcase_add_test(t, cuda_alias_picks_the_fastest_that_fits);
    tcase_set_timeout(t, 300);
    suite_add_tcase(s, t);
    /* cuda-v6 (wgmma, TMA): its own case, so CK_RUN_CASE=maxsim-hopper runs it alone */
    TCase *h = tcase_create("maxsim-hopper");
    tcase_add_test(h, cuda_v6_tiny);
    tcase_add_test(h, cuda_v6_odd);
    tcase_add_test(h, cuda_v6_tile_edges);
    tcase_add_test(h, cuda_v6_nan_inf);
    tcase_add_test(h, cuda_v6_fp16);
    tcase_add_test(h, cuda_v6_precision_bf16);
    tcase_add_test(h, cuda_v6_precision_fp16);
    tcase_add_test(h, cuda_v6_only_on_9_0);
    tcase_set_timeout(h, 300);
    suite_add_tcase(s, h);
    /* the sizes that take the emulator most of this suite's time, tagged "slow": CI's re-runs of test_cuda under
     * ASan and with FMA contraction leave them out (CK_EXCLUDE_TAGS=slow); the plain emulation run keeps them */
    TCase *large = tcase_create("maxsim-large");
    tcase_set_tags(large, "slow");
    tcase_add_test(large, cuda_v2_small);
    tcase_add_test(large, cuda_v2_recompute_small);
    tcase_add_test(large, cuda_v2_deterministic_small);
    tcase_set_timeout(large, 300);
    suite_add_tcase(s, large);
    return s;
}
