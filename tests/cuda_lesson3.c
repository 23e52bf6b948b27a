/* cuda_lesson3.c - lesson 3 on the GPU (or the CPU emulation build): cuda-v1 .. cuda-v4 against the float64
 * reference, their device memory formulas against the tracker, in every
 * mode (saved argmax, --recompute, --deterministic); out bitwise equal to cpu's (exact grid scores -- exact in
 * TF32 too -- summed over j in the same order); the deterministic db bitwise equal across two runs. Tiny, small
 * and odd sizes, sizes one below, at and above the tile constants (64 rows and columns; K steps of 16 in v2, 32
 * in v3; v4's 64-row j and n tiles and 32-column stages, and its largest K, 256; K % 4 == 0 takes v3's float4
 * path and v4's cp.async copies), and NaN/Inf inputs for every version (maxsim_special.h). Small enough that
 * the emulation stays fast. Run by test_cuda without fork. */
#define _POSIX_C_SOURCE 200809L /* setenv: the emulated 99 KB GPUs */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/maxsim_problem.h"
#include "../kernels/runtime/track.h"
#include "../lessons/lesson3.h"
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
    long long opts[2] = {recompute, deterministic};
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
    ck_assert_int_eq(memcmp(g.result[OUT], c.result[OUT], ms_out_count(d) * sizeof(float)), 0);
    if (deterministic) {
        lesson_result g2;
        run_checked(impl, &p, t, ref, &g2);
        ck_assert_int_eq(memcmp(g.result[DB], g2.result[DB], ms_b_count(d) * sizeof(float)), 0);
        ck_assert_int_eq(memcmp(g.result[DA], g2.result[DA], ms_a_count(d) * sizeof(float)), 0);
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
    tcase_add_test(t, cuda_alias_picks_the_fastest_that_fits);
    tcase_set_timeout(t, 300);
    suite_add_tcase(s, t);
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
