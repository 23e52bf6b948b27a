/* test_emu_model.c - TEST-ONLY: the time model's reading of a warp's issue path from nvcc's control bits
 * (emu_sass.cc). Each listing here is written in nvdisasm -hex's format with control words built from the fields
 * the model decodes, and each block's cycles are worked out by hand in the comments. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "include/emu_api.h"

Suite *emu_model_suite(void);

/* The second 64-bit word of an instruction: stall cycles, yield set, the scoreboard its result releases (7: none),
 * no read scoreboard, the scoreboards it waits on (a mask) */
static unsigned long long control(int stall, int write_sb, int wait_mask)
{
    return (unsigned long long)(stall | 1 << 4 | write_sb << 5 | 7 << 8 | wait_mask << 11) << 41;
}

/* op: the instruction text; with_hex 0 leaves the control words out (a listing made without -hex) */
static void inst(FILE *f, int with_hex, int at, const char *op, int stall, int write_sb, int wait_mask)
{
    fprintf(f, "        /*%04x*/                   %s ;", at, op);
    if (with_hex) fprintf(f, "   /* 0x000000000000794c */\n                                    /* 0x%016llx */", control(stall, write_sb, wait_mask));
    fprintf(f, "\n");
}

/* _Z8straightv: one block. _Z4loopv: a loop of one block whose first instruction waits on a shared load issued
 * by the previous iteration, then an exit block. */
static const char *write_listing(char *path, int with_hex)
{
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, ".text._Z8straightv:\n");
    inst(f, with_hex, 0x00, "LDS R0, [R2]", 1, 0, 0);      /* issues at 0; scoreboard 0 released at 0 + 30 */
    inst(f, with_hex, 0x10, "FADD R1, R0, R0", 4, 7, 1);   /* waits on scoreboard 0: issues at 30 */
    inst(f, with_hex, 0x20, "FADD R1, R1, R1", 4, 7, 0);   /* 30 + 4 */
    inst(f, with_hex, 0x30, "EXIT", 1, 7, 0);              /* 38; done at 39 */
    fprintf(f, ".text._Z4loopv:\n.L_x_0:\n");
    inst(f, with_hex, 0x00, "FFMA R3, R0, R0, R3", 1, 7, 2); /* waits on scoreboard 1, set by the LDS below */
    inst(f, with_hex, 0x10, "LDS R0, [R2]", 1, 1, 0);
    inst(f, with_hex, 0x20, "BRA `(.L_x_0)", 1, 7, 0);
    inst(f, with_hex, 0x30, "EXIT", 1, 7, 0);
    fclose(f);
    return path;
}

START_TEST(issue_path_from_control_bits)
{
    char path[] = "/tmp/test_emu_model.XXXXXX";
    write_listing(path, 1);
    double cycles[4], n[4];
    int has_ctrl = 0;
    ck_assert_int_eq(emu_sass_block_paths(path, "_Z8straightv", cycles, n, 4, &has_ctrl), 1);
    ck_assert_int_eq(has_ctrl, 1);
    ck_assert_double_eq(n[0], 4.0);
    ck_assert_double_eq_tol(cycles[0], 39.0, 1e-9); /* 30 for the shared load + 4 + 4 + 1, not 4 instructions */
    /* the loop: first pass FFMA at 0, LDS at 1 (released at 31), BRA at 2, done at 3; the next pass's FFMA waits
     * until 31: 31 cycles an iteration from then on, the steady state, not the first pass's 3 */
    ck_assert_int_eq(emu_sass_block_paths(path, "_Z4loopv", cycles, n, 4, &has_ctrl), 2);
    ck_assert_double_eq_tol(cycles[0], 31.0, 1e-9);
    ck_assert_double_eq_tol(cycles[1], 1.0, 1e-9);
    unlink(path);
}
END_TEST

START_TEST(issue_path_without_control_bits)
{
    char path[] = "/tmp/test_emu_model.XXXXXX";
    write_listing(path, 0);
    double cycles[4], n[4];
    int has_ctrl = 1;
    ck_assert_int_eq(emu_sass_block_paths(path, "_Z8straightv", cycles, n, 4, &has_ctrl), 1);
    ck_assert_int_eq(has_ctrl, 0);
    ck_assert_double_eq_tol(cycles[0], 4.0, 1e-9); /* one instruction a clock, the model's reading before -hex */
    unlink(path);
}
END_TEST

/* _Z4mmav: one tensor-core instruction of the given shape, then EXIT */
static void write_mma(char *path, const char *op)
{
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, ".text._Z4mmav:\n");
    inst(f, 1, 0x00, op, 1, 7, 0);
    inst(f, 1, 0x10, "EXIT", 1, 7, 0);
    fclose(f);
}

/* The tensor bound counts an HMMA.1684 on tf32 as 1024 FLOP, an HMMA.1688 on tf32 (mma.sync m16n8k8) as 2048
 * and an HMMA.16816 on bf16 as 4096: those shapes are read, any other is refused (counted at another's figure,
 * it would be wrong by its shape's factor). */
START_TEST(hmma_shapes_counted)
{
    static const char *ops[] = {"HMMA.1684.F32.TF32 R4, R8, R12, R4", "HMMA.16816.F32.BF16 R4, R8, R12, R4",
                                "HMMA.1688.F32.TF32 R4, R8, R12, R4"};
    double cycles[2], n[2];
    int has_ctrl = 0;
    for (int i = 0; i < 3; i++) {
        char path[] = "/tmp/test_emu_model.XXXXXX";
        write_mma(path, ops[i]);
        ck_assert_int_eq(emu_sass_block_paths(path, "_Z4mmav", cycles, n, 2, &has_ctrl), 1);
        ck_assert_double_eq(n[0], 2.0);
        unlink(path);
    }
}
END_TEST

START_TEST(hmma_other_shape_refused)
{
    char path[] = "/tmp/test_emu_model.XXXXXX";
    write_mma(path, "HMMA.884.F32.TF32 R4, R8, R12, R4");
    double cycles[2], n[2];
    int has_ctrl = 0;
    emu_sass_block_paths(path, "_Z4mmav", cycles, n, 2, &has_ctrl); /* aborts */
    unlink(path);
}
END_TEST

Suite *emu_model_suite(void)
{
    Suite *s = suite_create("cuda-emu-model");
    TCase *t = tcase_create("issue-path");
    tcase_add_test(t, issue_path_from_control_bits);
    tcase_add_test(t, issue_path_without_control_bits);
    tcase_add_test(t, hmma_shapes_counted);
    tcase_add_test_raise_signal(t, hmma_other_shape_refused, SIGABRT);
    suite_add_tcase(s, t);
    return s;
}
