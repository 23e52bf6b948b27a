/* gpu_model.h - what a build that runs the CUDA versions some other way than on a GPU tells the session, and
 * --gpu-model GPU: each CUDA version's forward + backward predicted on a named GPU by a time model, labelled
 * a model, never a measurement.
 *
 * This build (gpu_model.c) has no model, no dry run and no emulated device. The tests' CPU emulation build
 * links its own definitions in place of gpu_model.c (tests/cuda_emu/lesson_model.c; tests/cuda_emu/README.md
 * "The time model"): it runs the kernels on the CPU, may run them dry (address space only, nothing computed),
 * and turns what a timed pass does into time on the named GPU. */
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
    int counted;              /* the build counted basic-block executions (make predict's build) */
} gpu_model_result;

/* 1 where device runs are emulated on the CPU: their times mean nothing. */
int gpu_device_emulated(void);
/* 0 if name is a GPU of the model's table; else -1 with why filled (unknown, or this build has no model). */
int gpu_model_check(const char *name, char *why, size_t len);
/* The model's GPU names, comma-separated (empty where the build has no model). */
void gpu_model_names(char *buf, size_t len);
/* begin arms the model for the next implementation's run; the session brackets its timed pass (the last of a
 * device run's two: the first pays for set-up, as on the GPU) with gpu_model_timed_run(1) and (0); end reads
 * it. */
void gpu_model_begin(const char *gpu);
void gpu_model_timed_run(int begin);
void gpu_model_end(gpu_model_result *out);

#endif
