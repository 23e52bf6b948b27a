/* test_emu_limits.c - TEST-ONLY: the dry run (emu_dry.cc) catches a limit that bites only at a large size, and
 * the dynamic shared-memory opt-in is enforced per kernel. Each planted bug (planted_limits.cu) fails for its own
 * reason, its correct twin passes at the same size; the int-index bug passes at a small size, which is why
 * no ordinary test sees it. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen, setenv, clock_gettime */
#include <check.h>
#include <driver_types.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "planted.h"
#include "test_emu.h"

#ifdef __SANITIZE_ADDRESS__
#define ASAN_EXIT 23 /* test_emu.c sets ASan's exit code */
#endif

static const long long LARGE = (1LL << 31) + 1024; /* 8 GiB of floats: reserved, never committed */

START_TEST(int_index_passes_small)
{
    emu_clear_error();
    ck_assert_int_eq(planted_fill(1, 1000), cudaSuccess);
}
END_TEST

START_TEST(int_index_wraps_at_large_size)
{
    emu_clear_error();
    emu_set_dry(1);
#ifdef ASAN_EXIT
    fprintf(stderr, "test_emu: the AddressSanitizer SEGV report that follows is EXPECTED (planted wrapped index)\n");
#endif
    int e = planted_fill(1, LARGE);
#ifdef ASAN_EXIT
    (void)e;
    ck_abort_msg("ASan should have ended the process at the wrapped index");
#else
    ck_assert_int_eq(e, cudaErrorIllegalAddress);
    assert_message("kernel fill_int_index");
    assert_message("dry run: block 8388611,0,0"); /* the last block */
    assert_message("outside every device allocation");
#endif
}
END_TEST

START_TEST(wide_index_passes_at_large_size)
{
    emu_clear_error();
    emu_set_dry(1);
    ck_assert_int_eq(planted_fill(0, LARGE), cudaSuccess);
    ck_assert_str_eq(emu_last_error_message(), "");
}
END_TEST

/* The dry run's boundary iterations (emu_loops.cc adds the skip to the loop): a loop of 2^26 iterations per thread runs 3,
 * the last two among them, so an index that wraps only at the loop's last increment is caught at once. Without
 * the skip the int loop would take seconds to get there, and its 64-bit twin minutes. */
static const long long STRIDED = 2147483647LL; /* 2^31 - 1 floats */

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0->tv_nsec);
}

START_TEST(loop_index_wraps_at_its_last_iteration)
{
    emu_clear_error();
    emu_set_dry(1);
#ifdef ASAN_EXIT
    fprintf(stderr, "test_emu: the AddressSanitizer SEGV report that follows is EXPECTED (planted wrapped loop index)\n");
#endif
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int e = planted_stride_sum(1, STRIDED);
#ifdef ASAN_EXIT
    (void)e;
    ck_abort_msg("ASan should have ended the process at the wrapped loop index");
#else
    double s = seconds_since(&t0);
    ck_assert_int_eq(e, cudaErrorIllegalAddress);
    assert_message("kernel sum_stride_int");
    assert_message("dry run: block 0,0,0 thread 0,0,0"); /* thread 0's last increment wraps first */
    assert_message("outside every device allocation");
    ck_assert_msg(s < 1.0, "the dry run took %.2f s: are the loop's middle iterations skipped?", s);
#endif
}
END_TEST

START_TEST(wide_loop_index_passes)
{
    emu_clear_error();
    emu_set_dry(1);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ck_assert_int_eq(planted_stride_sum(0, STRIDED), cudaSuccess);
    ck_assert_str_eq(emu_last_error_message(), "");
    double s = seconds_since(&t0);
    ck_assert_msg(s < 1.0, "the dry run took %.2f s: are the loop's middle iterations skipped?", s);
}
END_TEST

START_TEST(grid_y_overflows_at_large_size)
{
    emu_clear_error();
    emu_set_dry(2); /* the configuration is refused before any block runs */
    ck_assert_int_eq(planted_fill(2, LARGE), cudaSuccess);   /* 32769 rows: within grid.y */
    ck_assert_int_eq(planted_fill(2, 1LL << 32 | 1), cudaErrorInvalidConfiguration); /* 65537 rows */
    assert_message("kernel fill_rows");
    assert_message("grid too large");
}
END_TEST

START_TEST(smem_above_48k_needs_the_optin)
{
    emu_clear_error();
    ck_assert_int_eq(planted_smem(0, 48 << 10), cudaSuccess);
    ck_assert_int_eq(planted_smem(0, 64 << 10), cudaErrorInvalidConfiguration);
    assert_message("without cudaFuncSetAttribute");
}
END_TEST

START_TEST(smem_optin_allows_up_to_it)
{
    emu_clear_error();
    ck_assert_int_eq(planted_smem(100 << 10, 64 << 10), cudaSuccess);
    ck_assert_int_eq(planted_smem(100 << 10, 101 << 10), cudaErrorInvalidConfiguration);
    assert_message("than the kernel's cudaFuncSetAttribute opt-in");
    emu_clear_error();
    ck_assert_int_eq(planted_optin_limit(), 232448);
    ck_assert_int_eq(planted_smem(200 << 10, 64 << 10), cudaSuccess); /* the emulated sm_90 allows 227 KiB */
    ck_assert_int_eq(planted_smem(228 << 10, 64 << 10), cudaErrorInvalidValue);
    assert_message("above the 232448 bytes");
    emu_clear_error();
    setenv("EMU_SMEM_OPTIN", "166912", 1); /* an sm_80's limit */
    ck_assert_int_eq(planted_optin_limit(), 166912);
    ck_assert_int_eq(planted_smem(200 << 10, 64 << 10), cudaErrorInvalidValue);
    assert_message("above the 166912 bytes");
    unsetenv("EMU_SMEM_OPTIN");
    emu_clear_error();
}
END_TEST

/* EMU_GPU: the emulated device is that GPU (emu_gpu.cc's table). A kernel that opts in to 108 KiB without a fit
 * check (the planted over-limit version) fails on the 99 KB GPUs as it would there, and runs on an H100; behind
 * cuda_fit it is skipped with both figures instead. */
START_TEST(gpu_profiles_hold_their_limits)
{
    const char *small[2] = {"RTX4090", "L4"}, *why = NULL;
    char name[256];
    size_t big = 108 << 10;
    for (int k = 0; k < 2; k++) {
        setenv("EMU_GPU", small[k], 1);
        emu_clear_error();
        ck_assert_int_eq(planted_device_cc(name, sizeof name), 89);
        ck_assert_msg(strstr(name, small[k]) != NULL, "%s", name);
        ck_assert_int_eq(planted_optin_limit(), 101376);
        ck_assert_int_eq(planted_smem((int)big, big), cudaErrorInvalidValue);
        assert_message("above the 101376 bytes");
        emu_clear_error();
        ck_assert_int_eq(planted_fitted_smem(big, &why), -1);
        ck_assert_str_eq(why, "needs 110,592 bytes of shared memory per block, this GPU allows 101,376");
        ck_assert_int_eq(planted_fitted_smem(96 << 10, &why), cudaSuccess);
    }
    setenv("EMU_GPU", "RTX5090", 1);
    ck_assert_int_eq(planted_device_cc(name, sizeof name), 120);
    ck_assert_int_eq(planted_optin_limit(), 101376);
    setenv("EMU_GPU", "A100", 1);
    ck_assert_int_eq(planted_device_cc(name, sizeof name), 80);
    ck_assert_int_eq(planted_optin_limit(), 166912);
    setenv("EMU_GPU", "H100", 1);
    emu_clear_error();
    ck_assert_int_eq(planted_smem((int)big, big), cudaSuccess);
    ck_assert_int_eq(planted_fitted_smem(big, &why), cudaSuccess);
    unsetenv("EMU_GPU");
    ck_assert_int_eq(planted_device_cc(name, sizeof name), 90); /* without EMU_GPU: as before, an sm_90 */
    ck_assert_str_eq(name, "emulated (CPU)");
    emu_clear_error();
}
END_TEST

/* an 8-byte load 4 bytes off its boundary faults on a GPU (misaligned address): so it fails here */
START_TEST(vector_load_needs_its_alignment)
{
    emu_clear_error();
    ck_assert_int_eq(planted_vector_load(2), cudaSuccess);
#ifndef ASAN_EXIT /* the ASan + UBSan build has no access hooks (they are the plain build's detectors), and UBSan's
                   * own alignment check would end the process at the planted load */
    ck_assert_int_eq(planted_vector_load(1), cudaErrorMisalignedAddress);
    assert_message("accesses 8 bytes of global memory");
    assert_message("not 8-byte aligned");
#endif
    emu_clear_error();
}
END_TEST

/* an EMU_GPU the table lacks is refused with the list, not taken for some default */
START_TEST(gpu_profile_unknown_exits)
{
    setenv("EMU_GPU", "RTX9999", 1);
    (void)planted_optin_limit();
}
END_TEST

/* nvcc's account (EMU_PTXAS, emu_resources.cc): 128 registers per thread allow 512 threads, not 1024 */
START_TEST(registers_limit_the_block)
{
    char path[] = "/tmp/emu_ptxas_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs("ptxas info    : Compiling entry function '_Z12echo_threadsPf' for 'sm_90'\n"
          "ptxas info    : Function properties for _Z12echo_threadsPf\n"
          "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
          "ptxas info    : Used 128 registers, used 0 barriers, 0 bytes smem, 360 bytes cmem[0]\n", f);
    fclose(f);
    setenv("EMU_PTXAS", path, 1);
    emu_clear_error();
    ck_assert_int_eq(planted_block(512), cudaSuccess);
    ck_assert_int_eq(planted_block(1024), cudaErrorLaunchOutOfResources);
    assert_message("1024 threads x 128 registers (sm_90, ptxas) need more than the 65536");
    remove(path);
}
END_TEST

Suite *emu_limits_suite(void)
{
    Suite *s = suite_create("cuda-emu-limits");
    TCase *t = tcase_create("dry-run");
    tcase_add_test(t, int_index_passes_small);
#ifdef ASAN_EXIT
    tcase_add_exit_test(t, int_index_wraps_at_large_size, ASAN_EXIT);
#else
    tcase_add_test(t, int_index_wraps_at_large_size);
#endif
    tcase_add_test(t, wide_index_passes_at_large_size);
    tcase_add_test(t, grid_y_overflows_at_large_size);
#ifdef ASAN_EXIT
    tcase_add_exit_test(t, loop_index_wraps_at_its_last_iteration, ASAN_EXIT);
#else
    tcase_add_test(t, loop_index_wraps_at_its_last_iteration);
#endif
    tcase_add_test(t, wide_loop_index_passes);
    suite_add_tcase(s, t);
    TCase *m = tcase_create("launch-resources");
    tcase_add_test(m, smem_above_48k_needs_the_optin);
    tcase_add_test(m, smem_optin_allows_up_to_it);
    tcase_add_test(m, registers_limit_the_block);
    tcase_add_test(m, gpu_profiles_hold_their_limits);
    tcase_add_test(m, vector_load_needs_its_alignment);
    tcase_add_exit_test(m, gpu_profile_unknown_exits, 2);
    suite_add_tcase(s, m);
    return s;
}
