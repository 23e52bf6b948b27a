/* cuda_lesson4.c - lesson 4's GPU checks, run by test_cuda without fork (on a GPU, or under the CPU emulation
 * build). Small sizes so that emulation stays fast. Each case runs the cuda implementation through the generic
 * session: validated against the float64 reference with the lesson's tolerance (lesson4.c derives it), and the
 * device tracker's peak, live-after-forward and allocation count equal to the version's formula -- 15 allocations
 * (6 inputs, cuBLAS workspace, arena, out, dout, 5 gradients), so no cudaMalloc happens inside the loops. */
#include <check.h>

#include "../lessons/lesson4.h"
#include "../optimized/gru_fused.h"
#include "graph_twin.h"
#include "nan_testing.h"

static void run_version(const char *impl, gru_dims d, size_t checkpoint, size_t block, uint64_t seed)
{
    long long dims[4] = {(long long)d.T, (long long)d.B, (long long)d.X, (long long)d.H};
    long long opts[2] = {(long long)checkpoint, (long long)block};
    gru_problem p;
    ck_assert_ptr_null(gru_make_problem(dims, opts, &p));
    void *t[LESSON_MAX_TENSORS] = {0};
    double *ref[LESSON_MAX_TENSORS] = {0};
    lesson_make_inputs(&lesson4_def, &p, seed, t);
    ck_assert_ptr_null(lesson_make_reference(&lesson4_def, &p, t, ref));
    lesson_result res;
    lesson_run_impl(&lesson4_def, &p, lesson_find_impl(&lesson4_def, impl), t, &res);
    double e = lesson_max_rel_err(&lesson4_def, &p, &res, ref);
    ck_assert_msg(e <= lesson4_def.tolerance, "%s T=%zu ckpt=%zu: max rel err %g", impl, d.T, checkpoint, e);
    ck_assert_uint_eq(res.row.peak_bytes, res.row.predicted_peak);
    ck_assert_uint_eq(res.row.forward_live_bytes, res.row.predicted_forward_live);
    ck_assert_uint_eq(res.row.allocs, 15);
    lesson_result_free(&lesson4_def, &res);
    lesson_free_ref(&lesson4_def, ref);
    lesson_free_slots(&lesson4_def, t);
}

static void run_cuda(gru_dims d, size_t checkpoint, size_t block, uint64_t seed)
{
    run_version("cuda-v1", d, checkpoint, block, seed);
}

START_TEST(cuda4_tiny) { run_cuda((gru_dims){3, 2, 3, 4}, 0, 16, 91); }
END_TEST
START_TEST(cuda4_tiny_checkpoint) { run_cuda((gru_dims){5, 2, 3, 4}, 2, 1, 92); }
END_TEST
START_TEST(cuda4_odd_shape) { run_cuda((gru_dims){7, 3, 33, 20}, 3, 2, 93); }
END_TEST
START_TEST(cuda4_small) { run_cuda((gru_dims){16, 16, 32, 64}, 0, 16, 94); }
END_TEST

/* cuda-v3 (the forward loop as one cooperative kernel): H = 4 < the 8 blocks the emulated SM holds (so the grid is
 * H blocks of one unit) and H = 20 over 8 blocks (slices of 2 and 3 units); make test-emu runs the small size. */
START_TEST(cuda4_v3_tiny) { run_version("cuda-v3", (gru_dims){3, 2, 3, 4}, 0, 16, 91); }
END_TEST
START_TEST(cuda4_v3_odd_shape) { run_version("cuda-v3", (gru_dims){7, 3, 33, 20}, 0, 2, 93); }
END_TEST
/* checkpointing recomputes forward segments in backward, which v3's one-launch forward does not: refused */
/* --checkpoint refused by the version's fit check, and the same problem without it accepted */
static void checkpoint_refused(const char *(*unfit)(const gru_dims *, const gru_opts *))
{
    gru_dims d = {7, 3, 33, 20};
    gru_opts o = {3, 2};
    ck_assert_ptr_nonnull(unfit(&d, &o));
    o.checkpoint = 0;
    ck_assert_ptr_null(unfit(&d, &o));
}
START_TEST(cuda4_v3_checkpoint_refused) { checkpoint_refused(gru3_unfit); }
END_TEST

/* cuda-v2 (the step loops as CUDA Graphs) against cuda. Without checkpointing cuda launches per step 4 in
 * forward (2 GEMMs, 2 kernels) + 5 in backward (3 GEMMs, 2 kernels), one x W_ih GEMM per block of P steps, and
 * once: the dh fill and 6 weight-gradient GEMMs (4, + dW_enc's h0 row, + its other rows when T > 1). */
static void graph_twin(gru_dims d, size_t block, uint64_t seed)
{
    long long dims[4] = {(long long)d.T, (long long)d.B, (long long)d.X, (long long)d.H};
    long long opts[2] = {0, (long long)block};
    gru_problem p;
    ck_assert_ptr_null(gru_make_problem(dims, opts, &p));
    run_graph_twin(&lesson4_def, &p, seed, "cuda-v1", "cuda-v2", 9 * d.T + (d.T + block - 1) / block + 7);
}

START_TEST(cuda4_graph_tiny) { graph_twin((gru_dims){3, 2, 3, 4}, 2, 95); }
END_TEST
START_TEST(cuda4_graph_odd_shape) { graph_twin((gru_dims){7, 3, 33, 20}, 3, 96); }
END_TEST
/* with checkpointing (segments recomputed in backward): same results, still 2 launches */
START_TEST(cuda4_graph_checkpoint)
{
    long long dims[4] = {7, 3, 33, 20}, opts[2] = {3, 2};
    gru_problem p;
    ck_assert_ptr_null(gru_make_problem(dims, opts, &p));
    void *t[LESSON_MAX_TENSORS] = {0};
    lesson_make_inputs(&lesson4_def, &p, 97, t);
    lesson_result res;
    lesson_run_impl(&lesson4_def, &p, lesson_find_impl(&lesson4_def, "cuda-v2"), t, &res);
    ck_assert_uint_eq(res.row.launches, 2);
    ck_assert_uint_eq(res.row.peak_bytes, res.row.predicted_peak);
    lesson_result_free(&lesson4_def, &res);
    lesson_free_slots(&lesson4_def, t);
}
END_TEST
/* cuda-v4 (8 lanes per (row, unit)): the emulated SM holds 4 blocks of 512 threads. H = 4: 2 blocks of 2 units;
 * H = 20: 4 blocks of 5, X = 33 (lane 0 has one term more than the rest); Bt = 17, H = 30: slices of 7 and 8 units,
 * 136 (row, unit) items over 64 lane groups (3 passes, the last partial), X = 9 < 2 x 8 lanes. */
START_TEST(cuda4_v4_tiny) { run_version("cuda-v4", (gru_dims){3, 2, 3, 4}, 0, 16, 91); }
END_TEST
START_TEST(cuda4_v4_odd_shape) { run_version("cuda-v4", (gru_dims){7, 3, 33, 20}, 0, 2, 93); }
END_TEST
START_TEST(cuda4_v4_passes) { run_version("cuda-v4", (gru_dims){4, 17, 9, 30}, 0, 4, 95); }
END_TEST
/* cuda-v5 (v4's forward, backward as one cooperative kernel): the same three shapes, its backward's grid as v4's */
START_TEST(cuda4_v5_tiny) { run_version("cuda-v5", (gru_dims){3, 2, 3, 4}, 0, 16, 91); }
END_TEST
START_TEST(cuda4_v5_odd_shape) { run_version("cuda-v5", (gru_dims){7, 3, 33, 20}, 0, 2, 93); }
END_TEST
START_TEST(cuda4_v5_passes) { run_version("cuda-v5", (gru_dims){4, 17, 9, 30}, 0, 4, 95); }
END_TEST
/* The plan at medium (T Bt = 8,192 rows, X = 128, H = 256): dx's 8192 X floats hold 16 partials of dW_ih's r u
 * columns (128 x 512), 32 of its n columns (128 x 256), 8 of dW_enc (256 x 512), each 64 (tile, slice) blocks; the
 * 128 blocks aimed at would need 32, 64 (then 32: 256 rows a slice at least) and 16. */
START_TEST(cuda4_v5_split_plan)
{
    size_t R = 8192, cap = R * 128;
    ck_assert_uint_eq(gru5_split_slices(128, 512, R, cap), 16);
    ck_assert_uint_eq(gru5_split_slices(128, 256, R, cap), 32);
    ck_assert_uint_eq(gru5_split_slices(256, 512, R - 32, cap), 8);
    ck_assert_uint_eq(gru5_split_slices(128, 512, R, (size_t)1 << 30), 32);
    ck_assert_uint_eq(gru5_split_slices(128, 512, 511, cap), 1); /* under two slices of 256 rows */
}
END_TEST
/* R = T Bt = 871 rows: dW_ih's two sums in 3 slices of 290 rows and a partial for the row left over, dW_enc's 858
 * rows after h0's in 3 slices of 286 (kernels/gru_v5.cu); dx (871 X floats) holds them. Three slices: the middle one is neither the first
 * nor the last batch entry of the strided-batched GEMM. */
START_TEST(cuda4_v5_split_sums)
{
    gru_dims d = {67, 13, 5, 6};
    size_t R = d.T * d.B, cap = R * d.X;
    ck_assert_uint_eq(gru5_split_slices(d.X, 2 * d.H, R, cap), 3);
    ck_assert_uint_eq(gru5_split_partials(3, R), 4);
    ck_assert_uint_eq(gru5_split_slices(d.H, 2 * d.H, R - d.B, cap), 3);
    ck_assert_uint_eq(gru5_split_partials(3, R - d.B), 3);
    run_version("cuda-v5", d, 0, 4, 98);
}
END_TEST
/* v3 to v5's arena is the saved rows alone, T Bt 6H floats: 10,080 bytes here. cuda-v1's arena starts each buffer
 * on 256 bytes: S 10,240 + xp (T Bt 3H) 5,120 + zp (Bt 3H) 768 + hs (Bt H) 240 = 16,368. */
START_TEST(cuda4_persistent_arena)
{
    gru_dims d = {7, 3, 33, 20};
    gru_opts o = {0, 0};
    ck_assert_uint_eq(gru_saved_arena_bytes(&d), 10080);
    ck_assert_uint_eq(gru_fused_arena_bytes(&d, &o), 16368);
    ck_assert_uint_eq(cuda_gru_persistent_memory(&d).peak, cuda_gru_memory(&d, &o).peak - (16368 - 10080));
}
END_TEST
START_TEST(cuda4_v5_checkpoint_refused) { checkpoint_refused(gru5_unfit); }
END_TEST
START_TEST(cuda4_v4_checkpoint_refused) { checkpoint_refused(gru4_unfit); }
END_TEST
/* NaN and Inf inputs (tests/nan_rules.c states the rule: a NaN in x[t,b] reaches row b from step t on, and the weight gradients): every element of every output and gradient
 * is NaN, infinite or finite as the rule says. */
START_TEST(nan_rule_cuda_nan) { ck_assert_uint_eq(nan_lesson4("cuda-v1"), 0); }
END_TEST
START_TEST(nan_rule_cuda_v3_nan) { ck_assert_uint_eq(nan_lesson4("cuda-v3"), 0); }
END_TEST
START_TEST(nan_rule_cuda_v4_nan) { ck_assert_uint_eq(nan_lesson4("cuda-v4"), 0); }
END_TEST
START_TEST(nan_rule_cuda_v5_nan) { ck_assert_uint_eq(nan_lesson4("cuda-v5"), 0); }
END_TEST

Suite *cuda_lesson4_suite(void);
Suite *cuda_lesson4_suite(void)
{
    Suite *s = suite_create("cuda-lesson4");
    TCase *tc = tcase_create("gru");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, cuda4_tiny);
    tcase_add_test(tc, cuda4_tiny_checkpoint);
    tcase_add_test(tc, cuda4_odd_shape);
    tcase_add_test(tc, cuda4_small);
    tcase_add_test(tc, cuda4_graph_tiny);
    tcase_add_test(tc, cuda4_graph_odd_shape);
    tcase_add_test(tc, cuda4_graph_checkpoint);
    tcase_add_test(tc, cuda4_v3_tiny);
    tcase_add_test(tc, cuda4_v3_odd_shape);
    tcase_add_test(tc, cuda4_v3_checkpoint_refused);
    tcase_add_test(tc, cuda4_v4_tiny);
    tcase_add_test(tc, cuda4_v4_odd_shape);
    tcase_add_test(tc, cuda4_v4_passes);
    tcase_add_test(tc, cuda4_v4_checkpoint_refused);
    tcase_add_test(tc, cuda4_v5_tiny);
    tcase_add_test(tc, cuda4_v5_odd_shape);
    tcase_add_test(tc, cuda4_v5_passes);
    tcase_add_test(tc, cuda4_v5_checkpoint_refused);
    tcase_add_test(tc, cuda4_v5_split_plan);
    tcase_add_test(tc, cuda4_v5_split_sums);
    tcase_add_test(tc, cuda4_persistent_arena);
    suite_add_tcase(s, tc);
    TCase *nanc = tcase_create("nan");
    tcase_add_test(nanc, nan_rule_cuda_nan);
    tcase_add_test(nanc, nan_rule_cuda_v3_nan);
    tcase_add_test(nanc, nan_rule_cuda_v4_nan);
    tcase_add_test(nanc, nan_rule_cuda_v5_nan);
    suite_add_tcase(s, nanc);
    return s;
}
