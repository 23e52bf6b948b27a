/* test_emu_model.c - TEST-ONLY: the time model's reading of a warp's issue path from nvcc's control bits
 * (emu_sass.cc). Each listing here is written in nvdisasm -hex's format with control words built from the
 * fields the model decodes, and each block's cycles are worked out by hand in the comments. And the pricing
 * of sm_90a's wgmma and TMA (planted_hopper_model.cu): a tensor-bound and a DRAM-bound kernel against their
 * bounds. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "include/emu_api.h"
#include "planted.h"

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

/* HGMMA (wgmma.mma_async) is read as an issue slot: its tensor work is the emulator's count of the operations
 * (the tests below), not the instruction's; before, any tensor-core shape but the HMMA ones aborted. */
START_TEST(hgmma_read_as_an_issue_slot)
{
    char path[] = "/tmp/test_emu_model.XXXXXX";
    write_mma(path, "HGMMA.64x256x16.F32.BF16 R24, gdesc[UR4], R24, gsb0");
    double cycles[2], n[2];
    int has_ctrl = 0;
    ck_assert_int_eq(emu_sass_block_paths(path, "_Z4mmav", cycles, n, 2, &has_ctrl), 1);
    ck_assert_double_eq(n[0], 2.0);
    unlink(path);
}
END_TEST

/* ---- sm_90a's wgmma and TMA, priced (planted_hopper_model.cu; README "wgmma and TMA") ---- No SASS here
 * (EMU_SASS unset): the counts are the emulator's own, so the prediction is the kernel's tensor or memory
 * work at the datasheet's rates, which these kernels are bound by on an H100 by construction. The figures the
 * tests compare with come from the datasheets (H100 SXM: 989.4 TFLOP/s dense bf16, 494.7 tf32, 3.35 TB/s
 * HBM3; 132 SMs), not from the model's table; the tolerances say what else the formula adds. Not in the ASan
 * build: its eyes, and with them the model's collection, are off. */
#ifndef __SANITIZE_ADDRESS__
static float model_out[528 * 128];

static double launch_share(const emu_model_prediction *p)
{
    for (int i = 0; emu_model_bound_name(i); i++)
        if (!strcmp(emu_model_bound_name(i), "launch")) return p->bound_s[i];
    return 0.0;
}

/* 528 blocks (4 per SM of 132), 8 groups of 4 m64n256k16 (tf32: k8) each: the busiest SM's tensor work at the
 * datasheet's peak per SM is the bound. Within 2%: the bound is also what the model computes from its table
 * (989 and 495, rounded), and nothing else in this kernel comes near it (a block's shared-memory reads of its
 * operands are 80 wavefronts per operation against about 139 tensor cycles). */
START_TEST(wgmma_priced_at_the_tensor_peak)
{
    for (int tf32 = 0; tf32 < 2; tf32++) {
        int blocks = 528, reps = 8, k = tf32 ? 8 : 16;
        ck_assert_int_eq(emu_model_enable("H100", 2), 1);
        int rc = planted_hopper_wgmma_loop(blocks, reps, tf32, model_out);
        emu_model_counts c;
        int seen = emu_model_last(&c);
        emu_model_enable(NULL, 0);
        ck_assert_int_eq(rc, 0);
        ck_assert_int_eq(seen, 1);
        double op_flop = 2.0 * 64 * 256 * k, flop = (double)blocks * reps * 4 * op_flop;
        ck_assert_double_eq_tol(tf32 ? c.wgmma_flop_tf32 : c.wgmma_flop16, flop, 1e-9 * flop);
        ck_assert_double_eq(tf32 ? c.wgmma_flop16 : c.wgmma_flop_tf32, 0.0);
        emu_model_prediction p;
        ck_assert_int_eq(emu_model_predict(&c, "H100", 0.0, &p), 1);
        double per_sm = (tf32 ? 494.7e12 : 989.4e12) / 132.0;
        double bound = ceil(blocks / 132.0) * reps * 4 * op_flop / per_sm, t = p.seconds - launch_share(&p);
        printf("model test: wgmma %s, 528 blocks x 8 x 4 m64n256k%d on H100: predicted %.3f us (launch "
               "apart), tensor-pipe bound %.3f us, ratio %.4f, limiter %s\n", tf32 ? "tf32" : "bf16", k,
               t * 1e6, bound * 1e6, t / bound, p.limiter);
        ck_assert_str_eq(p.limiter, "tensor");
        ck_assert_msg(t > 0.98 * bound && t < 1.02 * bound, "predicted %g s, bound %g s", t, bound);
    }
}
END_TEST

/* 65536 rows x 480 bf16 (60 MiB, past the 50 MB L2), 256 blocks each streaming 256 rows once: DRAM-bound. The
 * column tiles are 64 wide, so the 8th box of each row band is half outside the tensor: its zero fill lands
 * in shared memory and counts toward complete_tx (tma_bytes, 1024 bytes a row) but reads nothing from the L2
 * (960 bytes a row, exactly). Time within 2% of bytes / bandwidth: the kernel's other traffic is its 32 KB of
 * output. */
START_TEST(tma_priced_at_dram_bandwidth)
{
    int rows = 65536, cols = 480, blocks = 256;
    static float out[256 * 32];
    ck_assert_int_eq(emu_model_enable("H100", 2), 1);
    int rc = planted_hopper_tma_stream(rows, cols, blocks, out);
    emu_model_counts c;
    int seen = emu_model_last(&c);
    emu_model_enable(NULL, 0);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(seen, 1);
    double bytes = (double)rows * cols * 2;
    ck_assert_double_eq_tol(c.tma_bytes, (double)rows * 1024, 1e-9 * rows * 1024);
    ck_assert_double_eq_tol(c.l2_read_sectors * 32.0, bytes, 1e-9 * bytes);
    static const struct {
        const char *gpu;
        double bandwidth; /* the datasheets: H100 SXM 3.35 TB/s, H200 4.8 TB/s */
    } gpus[] = {{"H100", 3.35e12}, {"H200", 4.8e12}};
    for (int g = 0; g < 2; g++) {
        emu_model_prediction p;
        ck_assert_int_eq(emu_model_predict(&c, gpus[g].gpu, 0.0, &p), 1);
        double bound = bytes / gpus[g].bandwidth, t = p.seconds - launch_share(&p);
        printf("model test: TMA stream of %.1f MB on %s: predicted %.3f us (launch apart), DRAM bound %.3f "
               "us, ratio %.4f, limiter %s\n", bytes / 1e6, gpus[g].gpu, t * 1e6, bound * 1e6, t / bound,
               p.limiter);
        ck_assert_str_eq(p.limiter, "DRAM");
        ck_assert_msg(t > 0.98 * bound && t < 1.02 * bound, "%s: predicted %g s, bound %g s", gpus[g].gpu, t,
                      bound);
    }
}
END_TEST
#endif

Suite *emu_model_suite(void)
{
    Suite *s = suite_create("cuda-emu-model");
    TCase *t = tcase_create("issue-path");
    tcase_add_test(t, issue_path_from_control_bits);
    tcase_add_test(t, issue_path_without_control_bits);
    tcase_add_test(t, hmma_shapes_counted);
    tcase_add_test_raise_signal(t, hmma_other_shape_refused, SIGABRT);
    tcase_add_test(t, hgmma_read_as_an_issue_slot);
    suite_add_tcase(s, t);
#ifndef __SANITIZE_ADDRESS__
    TCase *h = tcase_create("hopper-pricing");
    tcase_set_timeout(h, 300);
    tcase_add_test(h, wgmma_priced_at_the_tensor_peak);
    tcase_add_test(h, tma_priced_at_dram_bandwidth);
    suite_add_tcase(s, h);
#endif
    return s;
}
