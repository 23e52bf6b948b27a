/* gpu_model.c - a build on a GPU (or with none): no time model, no dry run, nothing emulated
 * (gpu_model.h). */
#include "gpu_model.h"
#include "lesson.h"

#include <stdio.h>
#include <string.h>

int lesson_dry(void) { return 0; }
int gpu_device_emulated(void) { return 0; }

void gpu_model_names(char *buf, size_t len) { if (len) buf[0] = '\0'; }

int gpu_model_check(const char *name, char *why, size_t len)
{
    snprintf(why, len,
             "--gpu-model %s: the time model runs in the tests' CPU emulation build only (make EMU=1 "
             "build/emu/lessonN; tests/cuda_emu/README.md)",
             name);
    return -1;
}

void gpu_model_begin(const char *gpu) { (void)gpu; }
void gpu_model_timed_run(int begin) { (void)begin; }
void gpu_model_end(gpu_model_result *out) { memset(out, 0, sizeof *out); }
