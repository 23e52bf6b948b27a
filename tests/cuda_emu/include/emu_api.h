/* emu_api.h - TEST-ONLY: what a C test asks the CPU emulator (tests/cuda_emu/test_emu.c). */
#ifndef CUDA_EMU_API_H
#define CUDA_EMU_API_H

#ifdef __cplusplus
extern "C" {
#endif

/* The message recorded with the last error (cudaGetLastError clears the code, not the message); "" if none. */
const char *emu_last_error_message(void);
/* Clears the recorded error and message. */
void emu_clear_error(void);
/* 1 under EMU_DRY=1: the dry run (emu_dry.cc), where device memory is address space and nothing is computed. */
int emu_dry(void);
/* Sets the dry-run mode as EMU_DRY would (0 off, 1 boundary blocks, 2 configurations only): for tests. */
void emu_set_dry(int mode);

#ifdef __cplusplus
}
#endif

#endif
