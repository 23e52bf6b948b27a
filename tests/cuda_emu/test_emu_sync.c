/* test_emu_sync.c - TEST-ONLY: planted barrier and warp-shuffle bugs (planted_sync.cu, planted_warp.cu), each
 * expected to fail for its own reason, and their correct twins expected to pass. Run by test_emu.c. */
#include <driver_types.h>
#include <math.h>

#include "include/emu_api.h"
#include "planted.h"
#include "test_emu.h"

START_TEST(reverse_correct)
{
    fill();
    ck_assert_int_eq(planted_reverse(0, in, out, N_REV), cudaSuccess);
    for (int i = 0; i < N_REV; i++) ck_assert_float_eq(out[i], in[(i / 256) * 256 + 255 - i % 256]);
}
END_TEST

START_TEST(missing_syncthreads)
{
    fill();
    ck_assert_int_eq(planted_reverse(1, in, out, N_REV), cudaErrorLaunchFailure);
#ifdef __SANITIZE_ADDRESS__ /* no access hooks under ASan: the two-pass comparison sees it */
    assert_message("depends on the order threads and blocks run in");
#else /* thread 0 reads s[0] before thread 255 wrote it: initcheck, in the first pass */
    assert_message("uninitialised shared memory read (initcheck): thread (0,0,0) reads 4 bytes of __shared__");
    assert_message("planted_sync.cu:23");
#endif
    assert_message("reverse_no_sync");
}
END_TEST

START_TEST(divergent_syncthreads)
{
    fill();
    ck_assert_int_eq(planted_reverse(2, in, out, N_REV), cudaErrorLaunchFailure);
    assert_message("not every thread of the block reached it");
    assert_message("threads 0-127: waiting at __syncthreads");
    assert_message("threads 128-255: exited");
}
END_TEST

START_TEST(exit_before_syncthreads)
{
    fill();
    ck_assert_int_eq(planted_reverse(3, in, out, 300), cudaErrorLaunchFailure);
    assert_message("block (1,0,0)");
    assert_message("threads 44-255: exited");
}
END_TEST

START_TEST(shuffle_sum_correct)
{
    float sums[N_REV / 32];
    fill();
    ck_assert_int_eq(planted_warp_sum(0, in, sums, N_REV), cudaSuccess);
    for (int w = 0; w < N_REV / 32; w++) {
        float s = 0.0f;
        for (int l = 0; l < 32; l++) s += in[w * 32 + l];
        ck_assert_float_eq_tol(sums[w], s, 1e-3f);
    }
}
END_TEST

/* A wrong offset sequence is no error to the hardware: the test sees the wrong number, and which one. */
START_TEST(shuffle_wrong_offsets)
{
    float sums[N_REV / 32];
    fill();
    ck_assert_int_eq(planted_warp_sum(1, in, sums, N_REV), cudaSuccess);
    for (int w = 0; w < N_REV / 32; w++) {
        float all = 0.0f, even = 0.0f;
        for (int l = 0; l < 32; l++) all += in[w * 32 + l], even += l % 2 ? 0.0f : in[w * 32 + l];
        ck_assert_float_eq_tol(sums[w], even, 1e-3f); /* offsets 16..2 sum the even lanes only */
        ck_assert(fabsf(sums[w] - all) > 1e-3f || fabsf(all - even) <= 1e-3f);
    }
}
END_TEST

START_TEST(shuffle_outside_mask)
{
    float sums[N_REV / 32];
    fill();
    ck_assert_int_eq(planted_warp_sum(2, in, sums, N_REV), cudaErrorIllegalInstruction);
    assert_message("lane 0 of warp 0 reads lane 16, which is not in mask 0x0000ffff");
}
END_TEST

START_TEST(shuffle_half_warp_correct)
{
    float sums[N_REV / 32];
    fill();
    ck_assert_int_eq(planted_warp_sum(3, in, sums, N_REV), cudaSuccess);
    for (int w = 0; w < N_REV / 32; w++) {
        float s = 0.0f;
        for (int l = 0; l < 16; l++) s += in[w * 32 + l];
        ck_assert_float_eq_tol(sums[w], s, 1e-3f);
    }
}
END_TEST

/* The emulator's warp rules against CUDA's documented ones (Programming Guide, warp shuffle and vote
 * functions), written out here lane by lane, independently of emu_warp.cc. */
START_TEST(warp_operation_rules)
{
    int vin[64], res[64 * 7];
    for (int t = 0; t < 64; t++) vin[t] = t < 32 ? (t * 7 + 3) % 50 : t % 40; /* warp 1: all < 40 */
    emu_clear_error();
    ck_assert_int_eq(planted_warp_semantics(vin, res), cudaSuccess);
    for (int t = 0; t < 64; t++) {
        int w = t / 32 * 32, L = t % 32, *r = res + t * 7;
        unsigned ballot = 0;
        int any = 0, all = 1;
        for (int l = 0; l < 32; l++) {
            ballot |= (unsigned)(vin[w + l] & 1) << l;
            any |= vin[w + l] < 40, all &= vin[w + l] < 40;
        }
        ck_assert_int_eq(r[0], vin[w + (L & ~7) + 5]);                    /* srcLane 5 of the 8-lane group */
        ck_assert_int_eq(r[1], vin[w + (L % 8 >= 3 ? L - 3 : L)]);         /* up: own value below the group */
        ck_assert_int_eq(r[2], vin[w + (L % 8 + 3 < 8 ? L + 3 : L)]);      /* down: own value past the group */
        ck_assert_int_eq(r[3], vin[w + (L ^ 9)]);
        ck_assert_int_eq(r[4], vin[w + (L ^ 2)]);
        ck_assert_uint_eq((unsigned)r[5], ballot);
        ck_assert_int_eq(r[6], any + 2 * all);
    }
}
END_TEST

/* cooperative launches (planted_grid.cu): 8 blocks of 64 threads fit the emulated SM (32 blocks, 2048 threads) */
#define GRID_BLOCKS 8
START_TEST(grid_sync_correct)
{
    fill();
    ck_assert_int_eq(planted_grid_sync(0, in, out, GRID_BLOCKS), cudaSuccess);
    for (int i = 0; i < GRID_BLOCKS * 64; i++)
        ck_assert_float_eq(out[i], in[((i / 64 + 1) % GRID_BLOCKS) * 64 + i % 64] + 1.0f + 3.0f * in[i]);
}
END_TEST

START_TEST(missing_grid_sync)
{
    fill();
    ck_assert_int_eq(planted_grid_sync(1, in, out, GRID_BLOCKS), cudaErrorLaunchFailure);
#ifdef __SANITIZE_ADDRESS__ /* no access hooks under ASan: the two-pass comparison sees it */
    assert_message("depends on the order threads and blocks run in");
#else /* block 0 reads block 1's stage before block 1 ran: initcheck, in the first pass */
    assert_message("uninitialised device memory read (initcheck)");
    assert_message("planted_grid.cu:34");
#endif
    assert_message("neighbour_no_grid_sync");
}
END_TEST

START_TEST(grid_sync_block_exits)
{
    fill();
    ck_assert_int_eq(planted_grid_sync(2, in, out, GRID_BLOCKS), cudaErrorLaunchFailure);
    assert_message("grid.sync: this block ended while 7 of the grid's 8 blocks wait");
    assert_message("block (0,0,0)");
}
END_TEST

START_TEST(grid_sync_not_cooperative)
{
    fill();
    ck_assert_int_eq(planted_grid_sync(3, in, out, GRID_BLOCKS), cudaErrorLaunchFailure);
    assert_message("grid.sync() in a launch that is not cooperative");
}
END_TEST

/* 33 blocks: the emulated SM holds 32 at most (the documented precondition: the whole grid resident at once) */
START_TEST(grid_too_large)
{
    static float big_in[33 * 64], big_out[33 * 64];
    ck_assert_int_eq(planted_grid_sync(0, big_in, big_out, 33), cudaErrorCooperativeLaunchTooLarge);
    assert_message("cooperative launch of 33 blocks, but only 32 can be resident at once");
}
END_TEST

/* A dry run (emu_dry.cc) plans a cooperative grid on an H200's 132 SMs, 32 blocks of 64 threads each, and runs its
 * boundary blocks only, as for any launch: the first and the last, each through the grid.sync, which releases
 * them; a block that ends before it still fails. */
#define DRY_GRID_BLOCKS (132 * 32)
START_TEST(grid_sync_dry_run_boundary_blocks)
{
    static float big_in[DRY_GRID_BLOCKS * 64], big_out[DRY_GRID_BLOCKS * 64];
    emu_clear_error();
    emu_set_dry(1);
    unsigned long long before = emu_blocks_run();
    int ok = planted_grid_sync(0, big_in, big_out, DRY_GRID_BLOCKS);
    unsigned long long ran = emu_blocks_run() - before;
    int exits = planted_grid_sync(2, big_in, big_out, DRY_GRID_BLOCKS);
    emu_set_dry(0);
    ck_assert_int_eq(ok, cudaSuccess);
    ck_assert_uint_eq(ran, 2);
    ck_assert_int_eq(exits, cudaErrorLaunchFailure);
    assert_message("grid.sync: this block ended while 1 of the dry run's 2 blocks wait (block 4223");
}
END_TEST

/* The time model observes a cooperative launch: its sample of blocks, each block's accesses on both sides of the
 * grid.sync. Per block, in[] (64 floats, 8 sectors) and its neighbour's stage after the grid.sync (8 sectors) come
 * from the L2; the second read of in[] hits L1. 8 blocks, each of weight 1. Not in the ASan build: it has no access
 * hooks, so nothing for the model to observe. */
#ifndef __SANITIZE_ADDRESS__
START_TEST(grid_sync_under_model)
{
    fill();
    ck_assert_int_eq(emu_model_enable("H100", 2), 1);
    int rc = planted_grid_sync(0, in, out, GRID_BLOCKS);
    emu_model_counts c;
    int seen = emu_model_last(&c);
    emu_model_enable(NULL, 0);
    ck_assert_int_eq(rc, cudaSuccess);
    ck_assert_int_eq(seen, 1);
    ck_assert_str_eq(c.kernel, "neighbour_ok");
    ck_assert_double_eq(c.blocks_run, GRID_BLOCKS);
    ck_assert_double_eq_tol(c.l2_read_sectors, GRID_BLOCKS * 16.0, 1e-9);
    ck_assert_double_eq_tol(c.l2_write_sectors, GRID_BLOCKS * 16.0, 1e-9); /* stage and out */
}
END_TEST
#endif

Suite *emu_sync_suite(void)
{
    Suite *s = suite_create("cuda-emu-planted-sync");
    TCase *t = tcase_create("barriers-and-shuffles");
    tcase_add_test(t, reverse_correct);
    tcase_add_test(t, missing_syncthreads);
    tcase_add_test(t, divergent_syncthreads);
    tcase_add_test(t, exit_before_syncthreads);
    tcase_add_test(t, shuffle_sum_correct);
    tcase_add_test(t, shuffle_wrong_offsets);
    tcase_add_test(t, shuffle_outside_mask);
    tcase_add_test(t, shuffle_half_warp_correct);
    tcase_add_test(t, warp_operation_rules);
    tcase_add_test(t, grid_sync_correct);
    tcase_add_test(t, missing_grid_sync);
    tcase_add_test(t, grid_sync_block_exits);
    tcase_add_test(t, grid_sync_not_cooperative);
    tcase_add_test(t, grid_too_large);
    tcase_add_test(t, grid_sync_dry_run_boundary_blocks);
#ifndef __SANITIZE_ADDRESS__
    tcase_add_test(t, grid_sync_under_model);
#endif
    suite_add_tcase(s, t);
    return s;
}
