/* test_emu.h - TEST-ONLY: what test_emu.c and test_emu_sync.c share. */
#ifndef CUDA_EMU_TEST_EMU_H
#define CUDA_EMU_TEST_EMU_H

#include <check.h>
#include <string.h>

#include "include/emu_api.h"

#define N_REV 512
/* input and output of one planted launch; each test fills them afresh */
static float in[N_REV], out[N_REV];

static inline void fill(void)
{
    for (int i = 0; i < N_REV; i++) in[i] = (float)(i % 97) - 40.0f, out[i] = 0.0f;
    emu_clear_error();
}

static inline void assert_message(const char *part)
{
    const char *m = emu_last_error_message();
    ck_assert_msg(strstr(m, part) != NULL, "expected \"%s\" in the emulator's message: \"%s\"", part, m);
}


Suite *emu_sync_suite(void); /* test_emu_sync.c: barriers and warp operations */
Suite *emu_graph_suite(void); /* test_emu_graph.c: stream capture and graph replay */
Suite *emu_limits_suite(void); /* test_emu_limits.c: the dry run and the shared-memory opt-in */
Suite *emu_eyes_suite(void); /* test_emu_eyes.c: the access-hook detectors and the profile */
Suite *emu_model_suite(void); /* test_emu_model.c: the time model's reading of SASS control bits */
Suite *emu_async_suite(void); /* test_emu_async.c: cp.async, cuda::barrier, cuda::pipeline */
Suite *emu_mma_suite(void); /* test_emu_mma.c: mma.sync, ldmatrix, cp.async through mma_ptx.h */
Suite *emu_hopper_suite(void); /* test_emu_hopper.c: mbarrier, TMA, wgmma through hopper_ptx.h */

#endif
