/* gpu_model.h - --gpu-model GPU: each CUDA version's forward + backward predicted on a named GPU by the CPU
 * emulator's time model (tests/cuda_emu/README.md "The time model"), labelled a model, never a measurement.
 *
 * Only the emulation build (make EMU=1, build/emu/lessonN) has the model: it runs the version's kernels on the CPU
 * and turns what they do into time on that GPU, cuBLAS calls by a stated efficiency. The prediction pass runs
 * after the validated run, on a sample of each launch's blocks (its results are discarded), and a launch whose
 * kernel and configuration the pass has already seen is not run again (its prediction counts again). Under
 * EMU_DRY=3 (make predict) memory is address space only and the validated run is skipped: the forum's sizes. */
#ifndef LESSONS_GPU_MODEL_H
#define LESSONS_GPU_MODEL_H

#include <stddef.h>

typedef struct {
    int done;                 /* 0: not predicted */
    double ms;                /* predicted forward + backward, launch overheads included */
    double roofline;          /* the same work at the GPU's roofline / ms */
    char limiter[48];         /* the bound that holds most of the time */
    double limiter_share;
    unsigned long long launches, gemms, reused;
    int counted;              /* the build counted basic-block executions (make predict's build/emu-count) */
} gpu_model_result;

/* 0 if name is a GPU of the model's table; else -1 with why filled (unknown, or not the emulation build). */
int gpu_model_check(const char *name, char *why, size_t len);
/* The model's GPU names, "A6000, A100, H100, H200" (empty outside the emulation build). */
void gpu_model_names(char *buf, size_t len);
/* begin arms the model for the next implementation's run; the session brackets its timed pass (the last of a
 * device run's two: the first pays for set-up, as on the GPU) with gpu_model_timed_run(1) and (0); end reads it. */
void gpu_model_begin(const char *gpu);
void gpu_model_timed_run(int begin);
void gpu_model_end(gpu_model_result *out);
/* EMU_DRY=3: the prediction is the whole run (lesson_main skips the validated one). */
int gpu_model_only(void);

#endif
