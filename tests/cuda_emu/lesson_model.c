/* lesson_model.c - the emulation build's side of lessons/runner/device_hooks.h (TEST-ONLY; emu.mk links it in
 * place of device_hooks.c): the dry run (EMU_DRY, emu_dry.cc), the mark that device runs are emulated, and
 * EMU_PREDICT=GPU: each CUDA version's validated run repeated once under the time model (its results
 * discarded: a sample of each launch's blocks ran), the predictions printed under the table. */
#include "device_hooks.h"

#include <emu_api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int lesson_dry(void) { return emu_dry(); }
int device_emulated(void) { return 1; }

typedef struct {
    const char *impl;
    emu_model_window w;
} prediction;

static const char *gpu;     /* EMU_PREDICT, checked before main */
static int observing, have; /* inside device_after_run; its timed pass was observed */
static emu_model_window seen;
static prediction done[LESSON_MAX_IMPLS];
static int ndone;

/* EMU_PREDICT names a GPU of the model's table, or the program stops before it runs anything. */
__attribute__((constructor)) static void predict_check(void)
{
    const char *name = getenv("EMU_PREDICT");
    if (!name || !*name) return;
    char names[128] = "";
    size_t used = 0;
    for (int i = 0; emu_model_gpu_name(i); i++) {
        if (!strcmp(name, emu_model_gpu_name(i))) {
            gpu = name;
            return;
        }
        const char *sep = i ? ", " : "";
        used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", sep, emu_model_gpu_name(i));
    }
    fprintf(stderr, "EMU_PREDICT=%s: unknown GPU (the model knows %s)\n", name, names);
    exit(2);
}

void device_timed_pass(int begin)
{
    if (!observing) return;
    /* the model's sample: the first wave (at most 32 of its blocks) and the edges; EMU_MODEL_SAMPLE=0: every
     * block of every launch (the sampling check, tests/cuda_emu/predict_sampling.sh) */
    const char *all = getenv("EMU_MODEL_SAMPLE");
    if (begin) emu_model_window_begin(gpu, all ? atoi(all) : 2);
    else have = emu_model_window_end(&seen);
}

void device_after_run(const lesson *L, const void *prob, int impl, void *const *t)
{
    if (!gpu || ndone == LESSON_MAX_IMPLS) return;
    lesson_result tmp;
    observing = 1, have = 0;
    lesson_run_impl(L, prob, impl, t, &tmp);
    observing = 0;
    lesson_result_free(L, &tmp);
    if (have) done[ndone++] = (prediction){L->impls[impl].name, seen};
}

void device_report(FILE *out)
{
    if (!ndone) return;
    int counted = 0;
    fprintf(out,
            "\nTime model on %s: a MODEL of that GPU, not a measurement (tests/cuda_emu/README.md; its error "
            "on the calibration set: make predict-peers):\n",
            gpu);
    for (int k = 0; k < ndone; k++) {
        const emu_model_window *w = &done[k].w;
        counted |= w->counted;
        fprintf(out,
                "  %-8s predicted %10.3f ms forward + backward  limiter %s (%.0f%% of the time)  %.1f%% of "
                "the roofline  [%llu launches (%llu predicted again), %llu cuBLAS calls]\n",
                done[k].impl, w->seconds * 1e3, w->limiter, 100.0 * w->limiter_share,
                w->seconds > 0 ? 100.0 * w->ideal_seconds / w->seconds : 0.0, (unsigned long long)w->launches,
                (unsigned long long)w->reused, (unsigned long long)w->gemms);
    }
    if (!counted)
        fprintf(out, "  (this build does not count basic blocks: code that moves no memory is taken to run "
                     "as often as its\n"
                     "  loop, an upper bound; make predict's build, build/emu-count, counts it)\n");
}
