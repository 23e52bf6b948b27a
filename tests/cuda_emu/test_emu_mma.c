/* test_emu_mma.c - TEST-ONLY: mma.sync, ldmatrix and cp.async through kernels/runtime/ptx/mma_ptx.h
 * (planted_mma.cu): every operand type and ldmatrix form against a double reference, the tf32 rounding, and
 * the planted bugs -- C read in the wrong lane order, half a warp at an mma.sync, ldmatrix rows in global
 * memory or misaligned, a read before the cp.async landed, a misaligned cp.async -- each failing for its own
 * reason. Run by test_emu.c.
 *
 * Inputs: fresh random multiples of 1/8 in [-1, 1), never 0, exact in bf16, f16 and tf32, so every product is
 * a multiple of 1/64 and every partial sum (|sum| <= K = 64) needs at most 13 significant bits: fp32 sums
 * them exactly in any order, and the result must equal the double reference bit for bit. A fragment element
 * in the wrong lane or register moves a product by at least 1/64, far outside that zero tolerance. */
#include <driver_types.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "planted.h"
#include "test_emu.h"

/* the block kernel's M, N and K: a 2 x 2 grid of 64 x 64 tiles, 4 k-tiles of 16 (8 of tf32) */
#define MB 128
#define NB 128
#define KB 64
#define KT 32 /* the tile kernel's K */

static float TA[16 * KT], TB[KT * 8], TC[16 * 8];
static float BA[MB * KB], BB[KB * NB], BC[MB * NB];
static uint64_t seed;

static float grid_value(void) /* a multiple of 1/8 in [-1, 1), not 0 */
{
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    int v = (int)(seed >> 33) % 15 - 8;
    return (float)(v >= 0 ? v + 1 : v) / 8.0f;
}

static void fresh(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) x[i] = grid_value();
}

static void inputs(void)
{
    if (!seed) seed = (uint64_t)time(NULL) | 1;
    fresh(TA, sizeof TA / sizeof *TA), fresh(TB, sizeof TB / sizeof *TB);
    fresh(BA, sizeof BA / sizeof *BA), fresh(BB, sizeof BB / sizeof *BB);
    emu_clear_error();
}

/* elements of C (m x n) that differ from the double reference A . B */
static int wrong(const float *A, const float *B, const float *C, int m, int n, int k)
{
    int bad = 0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double ref = 0;
            for (int q = 0; q < k; q++) ref += (double)A[i * k + q] * B[q * n + j];
            bad += !((double)C[i * n + j] == ref);
        }
    return bad;
}

START_TEST(mma_tile_types)
{
    static const int variants[] = {MMA_TILE_BF16, MMA_TILE_F16, MMA_TILE_TF32};
    for (int v = 0; v < 3; v++) {
        inputs();
        ck_assert_int_eq(planted_mma_tile(variants[v], TA, TB, TC), cudaSuccess);
        int bad = wrong(TA, TB, TC, 16, 8, KT);
        ck_assert_msg(bad == 0, "variant %d: %d of 128 elements wrong (seed %llu)", v, bad,
                      (unsigned long long)seed);
    }
}
END_TEST

/* A = +-(1 + 2^-11), half a tf32 ulp above 1: cvt.rna rounds it away from zero to 1 + 2^-10, the tensor core
 * alone truncates it to 1. The sums stay exact (multiples of 2^-13 below 2^6). */
static int tf32_wrong(int variant, float rounded)
{
    inputs();
    for (int i = 0; i < 16 * KT; i++) TA[i] = (i % 3 ? 1.0f : -1.0f) * (1.0f + 1.0f / 2048);
    ck_assert_int_eq(planted_mma_tile(variant, TA, TB, TC), cudaSuccess);
    for (int i = 0; i < 16 * KT; i++) TA[i] = (i % 3 ? 1.0f : -1.0f) * rounded;
    return wrong(TA, TB, TC, 16, 8, KT);
}

START_TEST(mma_tile_tf32_rounding)
{
    ck_assert_int_eq(tf32_wrong(MMA_TILE_TF32, 1.0f + 1.0f / 1024), 0);
    ck_assert_int_eq(tf32_wrong(MMA_TILE_TF32_RAW, 1.0f), 0);
    ck_assert_int_gt(tf32_wrong(MMA_TILE_TF32_RAW, 1.0f + 1.0f / 1024), 100); /* the two rules differ here */
}
END_TEST

START_TEST(mma_tile_wrong_lanes)
{
    inputs();
    /* no error: just wrong */
    ck_assert_int_eq(planted_mma_tile(MMA_TILE_WRONG_LANES, TA, TB, TC), cudaSuccess);
    ck_assert_int_gt(wrong(TA, TB, TC, 16, 8, KT), 100);
}
END_TEST

START_TEST(mma_tile_half_warp)
{
    inputs();
    ck_assert_int_eq(planted_mma_tile(MMA_TILE_HALF_WARP, TA, TB, TC), cudaErrorIllegalInstruction);
    assert_message("mma.sync/ldmatrix at tests/cuda_emu/planted_mma.cu:");
    assert_message("has exited");
}
END_TEST

START_TEST(mma_tile_ldmatrix_global)
{
    inputs();
    ck_assert_int_eq(planted_mma_tile(MMA_TILE_LDMATRIX_GLOBAL, TA, TB, TC), cudaErrorIllegalAddress);
    assert_message("ldmatrix.sync.aligned.m8n8.x4.shared.b16 at tests/cuda_emu/planted_mma.cu:");
    assert_message("is not in the block's shared memory");
}
END_TEST

START_TEST(mma_tile_mixed_instructions)
{
    inputs();
    ck_assert_int_eq(planted_mma_tile(MMA_TILE_MIXED, TA, TB, TC), cudaErrorIllegalInstruction);
    assert_message("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 at tests/cuda_emu/planted_mma.cu:");
    assert_message("lane 16 executes mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32");
}
END_TEST

START_TEST(mma_block_forms)
{
    for (int v = MMA_BLOCK_X4_TRANS; v <= MMA_BLOCK_TF32; v++) {
        inputs();
        ck_assert_int_eq(planted_mma_block(v, MMA_BLOCK_CORRECT, BA, BB, BC, MB, NB, KB), cudaSuccess);
        int bad = wrong(BA, BB, BC, MB, NB, KB);
        ck_assert_msg(bad == 0, "variant %d: %d of %d elements wrong (seed %llu)", v, bad, MB * NB,
                      (unsigned long long)seed);
    }
}
END_TEST

START_TEST(mma_block_misaligned_ldmatrix)
{
    inputs();
    ck_assert_int_eq(planted_mma_block(MMA_BLOCK_X4, MMA_BLOCK_MISALIGNED, BA, BB, BC, MB, NB, KB),
                     cudaErrorMisalignedAddress);
    assert_message("ldmatrix.sync.aligned.m8n8.x4.shared.b16 at tests/cuda_emu/planted_mma.cu:");
    assert_message("is not 16-byte aligned");
}
END_TEST

START_TEST(mma_block_no_wait)
{
    inputs();
    int err = planted_mma_block(MMA_BLOCK_X4_TRANS, MMA_BLOCK_NO_WAIT, BA, BB, BC, MB, NB, KB);
    /* under ASan (no eyes) the poison (NaN) reaches C, or the two passes read different poison */
#ifdef __SANITIZE_ADDRESS__
    if (err == cudaSuccess) {
        int nan = 0;
        for (int i = 0; i < MB * NB; i++) nan += isnan(BC[i]);
        ck_assert_msg(nan > 0, "no poison seen by a read before the copy landed");
        return;
    }
    ck_assert_int_eq(err, cudaErrorLaunchFailure);
#else
    ck_assert_int_eq(err, cudaErrorLaunchFailure);
    assert_message("shared memory read before its cp.async landed");
    assert_message("planted_mma.cu");
#endif
}
END_TEST

START_TEST(mma_block_cp_async_misaligned)
{
    inputs();
    ck_assert_int_eq(planted_mma_block(MMA_BLOCK_X4_TRANS, MMA_BLOCK_CP_MISALIGNED, BA, BB, BC, MB, NB, KB),
                     cudaErrorMisalignedAddress);
    assert_message("both must be aligned to 16 bytes");
}
END_TEST

START_TEST(mma_block_cp_async_to_global)
{
    inputs();
    ck_assert_int_eq(planted_mma_block(MMA_BLOCK_X4_TRANS, MMA_BLOCK_CP_TO_GLOBAL, BA, BB, BC, MB, NB, KB),
                     cudaErrorIllegalAddress);
    assert_message("is not the block's shared memory");
}
END_TEST

Suite *emu_mma_suite(void)
{
    Suite *s = suite_create("cuda-emu-mma");
    TCase *t = tcase_create("mma-sync");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, mma_tile_types);
    tcase_add_test(t, mma_tile_tf32_rounding);
    tcase_add_test(t, mma_tile_wrong_lanes);
    tcase_add_test(t, mma_tile_half_warp);
    tcase_add_test(t, mma_tile_ldmatrix_global);
    tcase_add_test(t, mma_tile_mixed_instructions);
    tcase_add_test(t, mma_block_forms);
    tcase_add_test(t, mma_block_misaligned_ldmatrix);
    tcase_add_test(t, mma_block_no_wait);
    tcase_add_test(t, mma_block_cp_async_misaligned);
    tcase_add_test(t, mma_block_cp_async_to_global);
    suite_add_tcase(s, t);
    return s;
}
