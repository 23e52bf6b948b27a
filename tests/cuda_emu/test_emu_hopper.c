/* test_emu_hopper.c - TEST-ONLY: sm_90a's layer through kernels/runtime/ptx/hopper_ptx.h and
 * kernels/runtime/tma_map.h (planted_hopper.cu): wgmma of every operand type and N = 64, 128, 256 from both
 * shared-memory layouts, and with MN-major (imm-trans) operands; a bf16 GEMM through TMA and wgmma in a 2-stage
 * mbarrier ring (also with M, N and K off the tile, the boxes' outside read as zeros), each against a double
 * reference; and the planted bugs -- a wrong swizzle, a missing fence (generic stores before wgmma;
 * mbarrier.init before the TMA), a wgmma with no wgmma.fence, an expect_tx short or over, a stale phase parity,
 * an accumulator written in flight, a stage released before wgmma.wait_group, a misaligned swizzled tile, an
 * MN-major operand's LBO and SBO swapped, LBO zero or overlapping SBO, an imm-trans left off -- each failing for
 * its own reason. Run by test_emu.c.
 *
 * Inputs: fresh random multiples of 1/8 in [-1, 1), never 0, exact in bf16, f16 and tf32, so every product is a
 * multiple of 1/64 and every partial sum (|sum| <= 1 + K, K <= 256) needs at most 15 significant bits: fp32 sums
 * them exactly in any order, and the result must equal the double reference bit for bit (zero tolerance). An
 * element in the wrong place moves a product by at least 1/64. */
#include <driver_types.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "planted.h"
#include "test_emu.h"

#define GM 128
#define GK 256
#define GN_MAX 512

static float TA[64 * 16], TB[256 * 16], TC0[64 * 256], TD[64 * 256];
static float GA[GM * GK], GB[GN_MAX * GK], GC[GM * GN_MAX];
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
    fresh(TA, sizeof TA / sizeof *TA), fresh(TB, sizeof TB / sizeof *TB), fresh(TC0, sizeof TC0 / sizeof *TC0);
    fresh(GA, sizeof GA / sizeof *GA), fresh(GB, sizeof GB / sizeof *GB);
    emu_clear_error();
}

/* elements of C (m x n) that differ from C0 + A . B^T in double (A m x k, B n x k; C0 may be NULL) */
static int wrong(const float *A, const float *B, const float *C0, const float *C, int m, int n, int k)
{
    int bad = 0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double ref = C0 ? C0[i * n + j] : 0.0;
            for (int q = 0; q < k; q++) ref += (double)A[i * k + q] * B[j * k + q];
            bad += !((double)C[i * n + j] == ref);
        }
    return bad;
}

START_TEST(hopper_tile_types_and_layouts)
{
    static const int cases[][3] = {{HOPPER_BF16, 64, 1},  {HOPPER_BF16, 128, 1}, {HOPPER_BF16, 256, 1},
                                   {HOPPER_F16, 128, 1},  {HOPPER_TF32, 128, 1}, {HOPPER_TF32, 256, 1},
                                   {HOPPER_BF16, 64, 0},  {HOPPER_F16, 256, 0},  {HOPPER_TF32, 64, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        int op = cases[c][0], n = cases[c][1], sw = cases[c][2], k = op == HOPPER_TF32 ? 8 : 16;
        inputs();
        ck_assert_int_eq(planted_hopper_tile(op, n, sw, HOPPER_TILE_CORRECT, TA, TB, TC0, TD), cudaSuccess);
        int bad = wrong(TA, TB, TC0, TD, 64, n, k);
        ck_assert_msg(bad == 0, "op %d, n %d, swizzled %d: %d of %d elements wrong (seed %llu)", op, n, sw, bad,
                      64 * n, (unsigned long long)seed);
    }
}
END_TEST

START_TEST(hopper_tile_no_fence)
{
    inputs();
    int err = planted_hopper_tile(HOPPER_BF16, 128, 1, HOPPER_TILE_NO_FENCE, TA, TB, TC0, TD);
#ifdef __SANITIZE_ADDRESS__
    (void)err; /* the generic stores are seen by the eyes only, which ASan's build does not have */
#else
    ck_assert_int_eq(err, cudaErrorIllegalInstruction);
    assert_message("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 at tests/cuda_emu/planted_hopper.cu:");
    assert_message("through the generic proxy with no fence.proxy.async since");
#endif
}
END_TEST

START_TEST(hopper_tile_no_wgmma_fence)
{
    inputs();
    ck_assert_int_eq(planted_hopper_tile(HOPPER_F16, 64, 1, HOPPER_TILE_NO_WGMMA_FENCE, TA, TB, TC0, TD),
                     cudaErrorIllegalInstruction);
    assert_message("with no wgmma.fence since its last wgmma.wait_group");
}
END_TEST

START_TEST(hopper_tile_accumulator_in_flight)
{
    inputs();
    ck_assert_int_eq(planted_hopper_tile(HOPPER_BF16, 64, 0, HOPPER_TILE_ACC_IN_FLIGHT, TA, TB, TC0, TD),
                     cudaErrorIllegalInstruction);
    assert_message("wgmma.wait_group at tests/cuda_emu/planted_hopper.cu:");
    assert_message("accumulator d[1] of wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16");
    assert_message("was written while the operation was in flight");
}
END_TEST

/* MN-major operands (imm-trans): A, B or both stored k rows of M or N, 128-byte swizzle; the same exact result */
START_TEST(hopper_tile_mn_major)
{
    static const int cases[][3] = {{HOPPER_BF16, 64, 1}, {HOPPER_BF16, 128, 2}, {HOPPER_BF16, 256, 3},
                                   {HOPPER_F16, 128, 3}, {HOPPER_F16, 256, 2},  {HOPPER_BF16, 128, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        int op = cases[c][0], n = cases[c][1], trans = cases[c][2];
        inputs();
        ck_assert_int_eq(planted_hopper_tile_mn(op, n, trans, HOPPER_MN_CORRECT, TA, TB, TC0, TD), cudaSuccess);
        int bad = wrong(TA, TB, TC0, TD, 64, n, 16);
        ck_assert_msg(bad == 0, "op %d, n %d, trans %d: %d of %d elements wrong (seed %llu)", op, n, trans, bad,
                      64 * n, (unsigned long long)seed);
    }
}
END_TEST

/* LBO and SBO swapped, or the imm-trans flag left off: descriptors the hardware takes, elements read from the
 * wrong places; the result must be wrong (the inputs are never 0, so a moved product moves the sum) */
START_TEST(hopper_tile_mn_wrong_fields)
{
    static const int bugs[] = {HOPPER_MN_SWAPPED, HOPPER_MN_NO_TRANS};
    for (int i = 0; i < 2; i++) {
        inputs();
        ck_assert_int_eq(planted_hopper_tile_mn(HOPPER_BF16, 128, 3, bugs[i], TA, TB, TC0, TD), cudaSuccess);
        int bad = wrong(TA, TB, TC0, TD, 64, 128, 16);
        ck_assert_msg(bad > 0, "bug %d: the result is right (seed %llu)", bugs[i], (unsigned long long)seed);
    }
}
END_TEST

START_TEST(hopper_tile_mn_lbo_zero)
{
    inputs();
    ck_assert_int_eq(planted_hopper_tile_mn(HOPPER_BF16, 128, 2, HOPPER_MN_LBO_ZERO, TA, TB, TC0, TD),
                     cudaErrorIllegalInstruction);
    assert_message("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 at tests/cuda_emu/planted_hopper.cu:");
    assert_message("B is MN-major (imm-trans 1), 256 bytes wide, and its LBO 0 bytes is not a multiple");
}
END_TEST

START_TEST(hopper_tile_mn_overlap)
{
    inputs();
    ck_assert_int_eq(planted_hopper_tile_mn(HOPPER_F16, 256, 3, HOPPER_MN_OVERLAP, TA, TB, TC0, TD),
                     cudaErrorIllegalInstruction);
    assert_message("B's descriptor (MN-major, LBO 1024, SBO 1024, the 128-byte swizzle) places two of its");
}
END_TEST

START_TEST(hopper_gemm_correct)
{
    static const int bns[] = {64, 128, 256};
    for (int i = 0; i < 3; i++) {
        int bn = bns[i], n = 2 * bn;
        inputs();
        ck_assert_int_eq(planted_hopper_gemm(bn, HOPPER_GEMM_CORRECT, GA, GB, GC, GM, n, GK), cudaSuccess);
        int bad = wrong(GA, GB, NULL, GC, GM, n, GK);
        ck_assert_msg(bad == 0, "bn %d: %d of %d elements wrong (seed %llu)", bn, bad, GM * n,
                      (unsigned long long)seed);
    }
}
END_TEST

/* one group left in flight across k-tiles (wait_group 1): each k-tile's first wgmma chains onto the previous
 * k-tile's, still in flight, and the producer refills a stage released after the wait that retired its reads */
START_TEST(hopper_gemm_wait_one)
{
    static const int bns[] = {64, 256};
    for (int i = 0; i < 2; i++) {
        int bn = bns[i], n = 2 * bn;
        inputs();
        ck_assert_int_eq(planted_hopper_gemm(bn, HOPPER_GEMM_WAIT_ONE, GA, GB, GC, GM, n, GK), cudaSuccess);
        int bad = wrong(GA, GB, NULL, GC, GM, n, GK);
        ck_assert_msg(bad == 0, "bn %d: %d of %d elements wrong (seed %llu)", bn, bad, GM * n,
                      (unsigned long long)seed);
    }
}
END_TEST

/* M, N and K off the tile: the boxes reach past the tensor, whose outside the TMA fills with zeros */
START_TEST(hopper_gemm_out_of_bounds)
{
    int m = 120, n = 200, k = 200;
    inputs();
    ck_assert_int_eq(planted_hopper_gemm(128, HOPPER_GEMM_CORRECT, GA, GB, GC, m, n, k), cudaSuccess);
    int bad = wrong(GA, GB, NULL, GC, m, n, k);
    ck_assert_msg(bad == 0, "%d of %d elements wrong (seed %llu)", bad, m * n, (unsigned long long)seed);
}
END_TEST

/* B given K x N and read N-major through TMA boxes: dx = G . W's shape, W [V, H] read in place (K = V) */
START_TEST(hopper_gemm_n_major)
{
    static float GBT[GK * GN_MAX];
    static const int bns[] = {64, 128, 256};
    for (int i = 0; i < 3; i++) {
        int bn = bns[i], n = 2 * bn, m = i == 1 ? 120 : GM, k = i == 1 ? 200 : GK;
        inputs();
        for (int q = 0; q < k; q++)
            for (int j = 0; j < n; j++) GBT[q * n + j] = GB[j * k + q];
        ck_assert_int_eq(planted_hopper_gemm_nmajor(bn, 1, GA, GBT, GC, m, n, k), cudaSuccess);
        int bad = wrong(GA, GB, NULL, GC, m, n, k);
        ck_assert_msg(bad == 0, "bn %d: %d of %d elements wrong (seed %llu)", bn, bad, m * n,
                      (unsigned long long)seed);
    }
}
END_TEST

/* A given K x M and B K x N, both read MN-major through TMA boxes: dW = G^T . x's shape, G [n, v] and x [n, h]
 * read in place (K = n) */
START_TEST(hopper_gemm_mn_major_both)
{
    static float GAT[GK * GM], GBT[GK * GN_MAX];
    int m = GM, n = 256, k = 192;
    inputs();
    for (int q = 0; q < k; q++) {
        for (int i = 0; i < m; i++) GAT[q * m + i] = GA[i * k + q];
        for (int j = 0; j < n; j++) GBT[q * n + j] = GB[j * k + q];
    }
    ck_assert_int_eq(planted_hopper_gemm_nmajor(128, 0, GAT, GBT, GC, m, n, k), cudaSuccess);
    int bad = wrong(GA, GB, NULL, GC, m, n, k);
    ck_assert_msg(bad == 0, "%d of %d elements wrong (seed %llu)", bad, m * n, (unsigned long long)seed);
}
END_TEST

static int gemm_bug(int bug)
{
    inputs();
    return planted_hopper_gemm(64, bug, GA, GB, GC, GM, 128, GK);
}

START_TEST(hopper_gemm_wrong_swizzle)
{
    ck_assert_int_eq(gemm_bug(HOPPER_GEMM_WRONG_SWIZZLE), cudaErrorIllegalInstruction);
    assert_message("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 at tests/cuda_emu/planted_hopper.cu:");
    assert_message("descriptor says no swizzle, but cp.async.bulk.tensor at tests/cuda_emu/planted_hopper.cu:");
    assert_message("with the 128-byte swizzle");
}
END_TEST

START_TEST(hopper_gemm_no_init_fence)
{
    ck_assert_int_eq(gemm_bug(HOPPER_GEMM_NO_INIT_FENCE), cudaErrorIllegalInstruction);
    assert_message("cp.async.bulk.tensor at tests/cuda_emu/planted_hopper.cu:");
    assert_message("with no fence.proxy.async after it");
}
END_TEST

START_TEST(hopper_gemm_expect_tx_small)
{
    ck_assert_int_eq(gemm_bug(HOPPER_GEMM_EXPECT_TX_SMALL), cudaErrorIllegalInstruction);
    assert_message("24576 bytes landed on the mbarrier");
    assert_message("whose expect_tx announced 22528: the expect_tx byte count must equal");
}
END_TEST

START_TEST(hopper_gemm_expect_tx_large)
{
    ck_assert_int_eq(gemm_bug(HOPPER_GEMM_EXPECT_TX_LARGE), cudaErrorLaunchFailure);
    assert_message("mbarrier/wgmma wait: not every thread of the block reached it");
    assert_message("waiting at mbarrier.try_wait tests/cuda_emu/planted_hopper.cu:");
    assert_message("a tx-count of 2048 bytes outstanding (expect_tx announced 26624, 24576 landed)");
}
END_TEST

START_TEST(hopper_gemm_stale_phase)
{
    ck_assert_int_eq(gemm_bug(HOPPER_GEMM_STALE_PHASE), cudaErrorIllegalInstruction);
    assert_message("mbarrier.try_wait.parity at tests/cuda_emu/planted_hopper.cu:");
    assert_message("a phase this thread has already observed: a stale phase parity");
}
END_TEST

START_TEST(hopper_gemm_release_in_flight)
{
    ck_assert_int_eq(gemm_bug(HOPPER_GEMM_RELEASE_IN_FLIGHT), cudaErrorIllegalInstruction);
    assert_message("cp.async.bulk.tensor at tests/cuda_emu/planted_hopper.cu:");
    assert_message("may still read: the mbarrier at");
}
END_TEST

START_TEST(hopper_gemm_misaligned)
{
    ck_assert_int_eq(gemm_bug(HOPPER_GEMM_MISALIGNED), cudaErrorMisalignedAddress);
    assert_message("cp.async.bulk.tensor at tests/cuda_emu/planted_hopper.cu:");
    assert_message("is not 1024-byte aligned");
}
END_TEST

Suite *emu_hopper_suite(void)
{
    Suite *s = suite_create("cuda-emu-hopper");
    TCase *t = tcase_create("hopper");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, hopper_tile_types_and_layouts);
    tcase_add_test(t, hopper_tile_no_fence);
    tcase_add_test(t, hopper_tile_no_wgmma_fence);
    tcase_add_test(t, hopper_tile_accumulator_in_flight);
    tcase_add_test(t, hopper_tile_mn_major);
    tcase_add_test(t, hopper_tile_mn_wrong_fields);
    tcase_add_test(t, hopper_tile_mn_lbo_zero);
    tcase_add_test(t, hopper_tile_mn_overlap);
    tcase_add_test(t, hopper_gemm_correct);
    tcase_add_test(t, hopper_gemm_out_of_bounds);
    tcase_add_test(t, hopper_gemm_wait_one);
    tcase_add_test(t, hopper_gemm_n_major);
    tcase_add_test(t, hopper_gemm_mn_major_both);
    tcase_add_test(t, hopper_gemm_wrong_swizzle);
    tcase_add_test(t, hopper_gemm_no_init_fence);
    tcase_add_test(t, hopper_gemm_expect_tx_small);
    tcase_add_test(t, hopper_gemm_expect_tx_large);
    tcase_add_test(t, hopper_gemm_stale_phase);
    tcase_add_test(t, hopper_gemm_release_in_flight);
    tcase_add_test(t, hopper_gemm_misaligned);
    suite_add_tcase(s, t);
    return s;
}
