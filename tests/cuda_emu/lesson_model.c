/* lesson_model.c - the emulation build's side of lessons/runner/gpu_model.h (TEST-ONLY; emu.mk links it in place
 * of lessons/runner/gpu_model.c): --gpu-model's time model around one implementation's run, the dry run
 * (EMU_DRY=1, emu_dry.cc) and the mark that a device run is emulated. The product never names the emulator. */
#include "gpu_model.h"
#include "lesson.h"

#include <emu_api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int lesson_dry(void) { return emu_dry(); }
int gpu_device_emulated(void) { return 1; }

void gpu_model_names(char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; emu_model_gpu_name(i) && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", emu_model_gpu_name(i));
}

int gpu_model_check(const char *name, char *why, size_t len)
{
    for (int i = 0; emu_model_gpu_name(i); i++)
        if (!strcmp(name, emu_model_gpu_name(i))) return 0;
    char names[128];
    gpu_model_names(names, sizeof names);
    snprintf(why, len, "unknown GPU '%s' (the model knows %s)", name, names);
    return -1;
}

static const char *armed;   /* gpu_model_begin's GPU: the next timed run is observed */
static emu_model_window seen;
static int have;

void gpu_model_begin(const char *gpu) { armed = gpu, have = 0; }

void gpu_model_timed_run(int begin)
{
    if (!armed) return;
    /* the model's sample: the first wave (at most 32 of its blocks) and the edges; EMU_MODEL_SAMPLE=0: every block
     * of every launch (the sampling check, tests/cuda_emu/predict_sampling.sh) */
    const char *all = getenv("EMU_MODEL_SAMPLE");
    if (begin) emu_model_window_begin(armed, all ? atoi(all) : 2);
    else have = emu_model_window_end(&seen);
}

void gpu_model_end(gpu_model_result *out)
{
    emu_model_window w = seen;
    memset(out, 0, sizeof *out);
    armed = NULL;
    if (!have) return;
    out->done = 1;
    out->ms = w.seconds * 1e3;
    out->roofline = w.seconds > 0 ? w.ideal_seconds / w.seconds : 0.0;
    snprintf(out->limiter, sizeof out->limiter, "%s", w.limiter);
    out->limiter_share = w.limiter_share;
    out->launches = w.launches, out->gemms = w.gemms, out->reused = w.reused, out->counted = w.counted;
}
