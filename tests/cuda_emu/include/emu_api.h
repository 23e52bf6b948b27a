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

#ifdef __cplusplus
}
#endif

#endif
