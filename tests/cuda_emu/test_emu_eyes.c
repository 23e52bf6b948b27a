/* test_emu_eyes.c - TEST-ONLY: the access-hook detectors and the profile (emu_eyes.h). Each planted bug of
 * planted_eyes.cu is one the two-pass comparison cannot see (both passes agree bit for bit): it must fail for
 * its own reason, named in the message, and its correct twin must pass with the right numbers. Under ASan the
 * .cu objects are not instrumented and the detectors are off: the suite is empty there. */
#define _POSIX_C_SOURCE 200809L /* setenv, mkstemp */
#include <check.h>
#include <driver_types.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "planted.h"
#include "test_emu.h"

#ifndef __SANITIZE_ADDRESS__ /* the eyes are off under ASan (not instrumented): no test to run */
#define N_EYES 256 /* four blocks of 64 */

/* in[i] = small integers: every partial sum exact in float, in any order */
static float block_sum(int b)
{
    float s = 0.0f;
    for (int i = b * 64; i < (b + 1) * 64; i++) s += in[i];
    return s;
}

START_TEST(shared_sum_atomic_passes)
{
    fill();
    ck_assert_int_eq(planted_block_sum(0, in, out, N_EYES), cudaSuccess);
    for (int b = 0; b < N_EYES / 64; b++) ck_assert_float_eq(out[b], block_sum(b));
}
END_TEST

START_TEST(shared_plain_sum_is_a_race)
{
    fill();
    ck_assert_int_eq(planted_block_sum(1, in, out, N_EYES), cudaErrorLaunchFailure);
    assert_message("kernel shared_sum_plain");
    assert_message("shared-memory race (racecheck): thread (1,0,0) reads 4 bytes of __shared__");
    assert_message("shared_sum_plain(float const*, float*, int)::total+0 at tests/cuda_emu/planted_eyes.cu:30; thread "
                   "(0,0,0) wrote it at tests/cuda_emu/planted_eyes.cu:30");
}
END_TEST

START_TEST(global_sum_atomic_passes)
{
    fill();
    ck_assert_int_eq(planted_block_sum(2, in, out, N_EYES), cudaSuccess);
    ck_assert_float_eq(out[0], block_sum(0) + block_sum(1) + block_sum(2) + block_sum(3));
}
END_TEST

START_TEST(global_plain_sum_is_a_hazard)
{
    fill();
    ck_assert_int_eq(planted_block_sum(3, in, out, N_EYES), cudaErrorLaunchFailure);
    assert_message("kernel global_sum_plain");
    assert_message("global-memory hazard between blocks: thread (0,0,0) of block (1,0,0) reads 4 bytes at byte 0 of a "
                   "16-byte cudaMalloc (made at tests/cuda_emu/planted_eyes.cu:79) at tests/cuda_emu/planted_eyes.cu:49");
    assert_message("thread (0,0,0) of block (0,0,0) wrote it at tests/cuda_emu/planted_eyes.cu:49");
}
END_TEST

START_TEST(warp_sums_merge_passes)
{
    fill();
    ck_assert_int_eq(planted_block_sum(4, in, out, N_EYES), cudaSuccess);
    for (int b = 0; b < N_EYES / 64; b++) ck_assert_float_eq(out[b], block_sum(b));
}
END_TEST

START_TEST(unwritten_shared_read)
{
    fill();
    ck_assert_int_eq(planted_block_sum(5, in, out, N_EYES), cudaErrorLaunchFailure);
    assert_message("uninitialised shared memory read (initcheck): thread (0,0,0) reads 4 bytes of __shared__ "
                   "warp_sums_merge(float const*, float*, int)::part+8 at tests/cuda_emu/planted_eyes.cu:62");
}
END_TEST

START_TEST(accumulate_zeroed_passes)
{
    fill();
    ck_assert_int_eq(planted_accumulate(0, in, out, N_EYES), cudaSuccess);
    for (int i = 0; i < N_EYES; i++) ck_assert_float_eq(out[i], in[i]);
}
END_TEST

START_TEST(uninitialised_cudamalloc_read)
{
    fill();
    ck_assert_int_eq(planted_accumulate(1, in, out, N_EYES), cudaErrorLaunchFailure);
    assert_message("uninitialised device memory read (initcheck): thread (0,0,0) of block (0,0,0) reads 4 bytes at "
                   "byte 0 of a 1024-byte cudaMalloc (made at tests/cuda_emu/planted_eyes.cu:");
    assert_message("at tests/cuda_emu/planted_eyes.cu:70");
}
END_TEST

START_TEST(poisoned_dev_alloc_read)
{
    fill();
    ck_assert_int_eq(planted_accumulate(2, in, out, N_EYES), cudaErrorLaunchFailure);
    assert_message("byte 0 of 'planted accumulator' (1024 bytes, dev_alloc)");
    assert_message("(a NaN poison fill does not count)");
}
END_TEST

/* TRACK_POISON=0, as the GPU report's initcheck runs set it (compute-sanitizer counts the fill as a write): no
 * fill at all, and the unwritten accumulator is still what initcheck reports */
START_TEST(unpoisoned_dev_alloc_read)
{
    fill();
    setenv("TRACK_POISON", "0", 1);
    int err = planted_accumulate(2, in, out, N_EYES);
    unsetenv("TRACK_POISON");
    ck_assert_int_eq(err, cudaErrorLaunchFailure);
    assert_message("uninitialised device memory read (initcheck): thread (0,0,0) of block (0,0,0) reads 4 bytes at "
                   "byte 0 of 'planted accumulator' (1024 bytes, dev_alloc)");
}
END_TEST

static emu_kernel_profile profile_of(int pattern, const char *kernel)
{
    emu_kernel_profile p;
    fill();
    emu_profile_enable(1);
    ck_assert_int_eq(planted_pattern(pattern, in, out), cudaSuccess);
    ck_assert_int_eq(emu_profile_kernel(kernel, &p), 1);
    ck_assert_uint_eq(p.launches, 1);
    return p;
}

START_TEST(coalesced_loads)
{
    emu_kernel_profile p = profile_of(0, "load_coalesced");
    ck_assert_double_eq(p.load_efficiency, 1.0);  /* 128 bytes in 4 sectors */
    ck_assert_double_eq(p.store_efficiency, 1.0);
    ck_assert_double_eq(p.bank_ways, -1.0);       /* no shared memory */
}
END_TEST

START_TEST(strided_loads)
{
    emu_kernel_profile p = profile_of(1, "load_strided");
    ck_assert_double_eq(p.load_efficiency, 0.125); /* 128 bytes in 32 sectors */
    ck_assert_double_eq(p.store_efficiency, 1.0);
}
END_TEST

START_TEST(conflict_free_shared)
{
    emu_kernel_profile p = profile_of(2, "smem_conflict_free");
    ck_assert_double_eq(p.bank_ways, 1.0);
}
END_TEST

START_TEST(bank_conflict_32_way)
{
    emu_kernel_profile p = profile_of(3, "smem_conflict32");
    ck_assert_double_eq(p.bank_ways, 32.0);
}
END_TEST

/* The profile holds a kernel to the design its header comment states (emu_profile_design.cc): the statements are
 * written into a source file given as EMU_PROFILE_TARGETS. A kernel below its statement, or without one, ends the
 * program with status 5 at exit; one that meets it does not. */
#define DESIGN_80 "Designed for: loads >= 80% of each 32-byte sector used, stores >= 80%, no shared memory."
static void run_with_design(int pattern, const char *kernel_in_source, const char *comment)
{
    char path[] = "/tmp/emu-design-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "/* %s */\n__global__ void %s(const float *in, float *out)\n{\n}\n", comment, kernel_in_source);
    fclose(f);
    setenv("EMU_PROFILE_TARGETS", path, 1);
    (void)profile_of(pattern, pattern ? "load_strided" : "load_coalesced");
    exit(0); /* the profile's check runs at exit (and the file is left for it: /tmp) */
}

START_TEST(design_missed_exits_5) { run_with_design(1, "load_strided", DESIGN_80); }
END_TEST
START_TEST(design_met_exits_0) { run_with_design(0, "load_coalesced", DESIGN_80); }
END_TEST
START_TEST(design_of_another_kernel_exits_5) { run_with_design(0, "some_other_kernel", DESIGN_80); }
END_TEST
START_TEST(design_not_stated_exits_5) { run_with_design(0, "load_coalesced", "copies a row"); }
END_TEST
START_TEST(design_unreadable_exits_5)
{
    run_with_design(0, "load_coalesced", "Designed for: loads mostly coalesced, stores >= 80%, no shared memory.");
}
END_TEST
START_TEST(today_figure_held_exits_0)
{
    run_with_design(1, "load_strided", DESIGN_80 " Today: loads 12.5% (each lane its own sector).");
}
END_TEST
START_TEST(today_figure_missed_exits_5)
{
    run_with_design(1, "load_strided", DESIGN_80 " Today: loads 20% (each lane its own sector).");
}
END_TEST
START_TEST(today_but_design_met_exits_5)
{
    run_with_design(0, "load_coalesced", DESIGN_80 " Today: loads 50% (an old figure).");
}
END_TEST

/* The same statements from the data file EMU_PROFILE_DESIGNS names (tests/cuda_emu/design_targets.txt's format:
 * "<kernel> <statements>", continuation lines indented), the source holding the kernel with the comment given. */
static void run_with_data_file(int pattern, const char *kernel_in_source, const char *comment, const char *entry)
{
    char path[] = "/tmp/emu-designs-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "# a comment line\n\n%s\n", entry);
    fclose(f);
    setenv("EMU_PROFILE_DESIGNS", path, 1);
    run_with_design(pattern, kernel_in_source, comment);
}

START_TEST(data_file_design_met_exits_0)
{
    run_with_data_file(0, "load_coalesced", "copies a row",
                       "load_coalesced Designed for: loads >= 80% of each 32-byte sector used,\n    stores >= 80%, "
                       "no shared memory.");
}
END_TEST
START_TEST(data_file_design_missed_exits_5)
{
    run_with_data_file(1, "load_strided", "copies a row", "load_strided " DESIGN_80);
}
END_TEST
START_TEST(data_file_and_comment_both_exit_5)
{
    run_with_data_file(0, "load_coalesced", DESIGN_80, "load_coalesced " DESIGN_80);
}
END_TEST
START_TEST(data_file_of_no_kernel_exits_5)
{
    run_with_data_file(0, "load_coalesced", DESIGN_80, "some_other_kernel " DESIGN_80);
}
END_TEST

#endif

Suite *emu_eyes_suite(void)
{
    Suite *s = suite_create("cuda-emu-eyes");
    TCase *t = tcase_create("detectors-and-profile");
#ifndef __SANITIZE_ADDRESS__
    tcase_add_test(t, shared_sum_atomic_passes);
    tcase_add_test(t, shared_plain_sum_is_a_race);
    tcase_add_test(t, global_sum_atomic_passes);
    tcase_add_test(t, global_plain_sum_is_a_hazard);
    tcase_add_test(t, warp_sums_merge_passes);
    tcase_add_test(t, unwritten_shared_read);
    tcase_add_test(t, accumulate_zeroed_passes);
    tcase_add_test(t, uninitialised_cudamalloc_read);
    tcase_add_test(t, poisoned_dev_alloc_read);
    tcase_add_test(t, unpoisoned_dev_alloc_read);
    tcase_add_test(t, coalesced_loads);
    tcase_add_test(t, strided_loads);
    tcase_add_test(t, conflict_free_shared);
    tcase_add_test(t, bank_conflict_32_way);
    tcase_add_exit_test(t, design_missed_exits_5, 5);
    tcase_add_exit_test(t, design_met_exits_0, 0);
    tcase_add_exit_test(t, design_of_another_kernel_exits_5, 5);
    tcase_add_exit_test(t, design_not_stated_exits_5, 5);
    tcase_add_exit_test(t, design_unreadable_exits_5, 5);
    tcase_add_exit_test(t, today_figure_held_exits_0, 0);
    tcase_add_exit_test(t, today_figure_missed_exits_5, 5);
    tcase_add_exit_test(t, today_but_design_met_exits_5, 5);
    tcase_add_exit_test(t, data_file_design_met_exits_0, 0);
    tcase_add_exit_test(t, data_file_design_missed_exits_5, 5);
    tcase_add_exit_test(t, data_file_and_comment_both_exit_5, 5);
    tcase_add_exit_test(t, data_file_of_no_kernel_exits_5, 5);
#endif
    suite_add_tcase(s, t);
    return s;
}
