/* emu_api.h - TEST-ONLY: what a C test asks the CPU emulator (tests/cuda_emu/test_emu.c). */
#ifndef CUDA_EMU_API_H
#define CUDA_EMU_API_H

#include <stddef.h>

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
/* Blocks run so far (first pass of each launch; a dry run's boundary blocks only): for tests. */
unsigned long long emu_blocks_run(void);

/* Names a device allocation in the detectors' messages (dev_alloc passes its label). */
void emu_label_alloc(const void *p, const char *label);
/* [p, p + bytes) of a device allocation counts as never written again (initcheck): dev_alloc calls it after its
 * NaN poison fill, which is a host-side cudaMemset that compute-sanitizer would take as initialisation -- here
 * a kernel that reads a poisoned byte nothing wrote is still reported. */
void emu_mark_uninit(const void *p, size_t bytes);

/* The memory-efficiency profile of one kernel so far (EMU_PROFILE=1 or emu_profile_enable). Efficiencies are
 * requested bytes / (32-byte sectors * 32) over all its global loads (stores); bank_ways is the largest shared
 * memory wavefronts-per-request of any of its source lines. -1 where the kernel made no such access. Returns
 * 0 if the kernel never ran while profiling. */
typedef struct {
    double load_efficiency, store_efficiency, bank_ways;
    unsigned long long launches;
} emu_kernel_profile;
void emu_profile_enable(int on);
int emu_profile_kernel(const char *kernel, emu_kernel_profile *out);

/* ---- the GPU time model (emu_model.cc, emu_sass.cc, emu_gpu.cc; tests/cuda_emu/README.md) ----
 * EMU_GPU_MODEL=A6000|A100|H100|H200 (or emu_model_enable) makes every launch observed for the model: the warp
 * instructions of nvcc's SASS for that GPU's architecture (EMU_SASS: nvdisasm -g listings), fitted onto the bytes
 * each source line moved here; shared-memory wavefronts; L1 per block; an L2 over the first wave; barriers.
 * EMU_MODEL_SAMPLE=1 runs only a sample of the blocks (the first wave, one of each edge role, the last block) and
 * extrapolates by the grid: the kernel's results are then incomplete (predict only; validate without it). */
enum {
    EMU_PIPE_FP32,   /* FFMA FMUL FADD ... */
    EMU_PIPE_FP64,   /* DFMA DMUL DADD */
    EMU_PIPE_IMAD,   /* IMAD (the FMA-heavy pipe) */
    EMU_PIPE_ALU,    /* IADD3 LOP3 ISETP LEA SHF MOV FSETP ... */
    EMU_PIPE_SFU,    /* MUFU, conversions */
    EMU_PIPE_MMA16,  /* HMMA on f16/bf16 */
    EMU_PIPE_MMA_TF32, /* HMMA on tf32 */
    EMU_PIPE_LSU,    /* every memory, shuffle and vote instruction (the MIO queue) */
    EMU_PIPE_CTRL,   /* branches, barriers, uniform datapath, S2R: issue slots only */
    EMU_PIPE_MMA_TF32_K8, /* HMMA.1688 on tf32 (mma.sync m16n8k8): twice an HMMA.1684's work */
    EMU_PIPES
};
typedef struct {
    char kernel[128];          /* the kernel's name at its launch */
    int found_sass;            /* 0: no SASS for it (instructions unknown, memory only) */
    double blocks, threads_per_block, regs, static_smem, dynamic_smem;
    double warps;              /* in the grid */
    double inst[EMU_PIPES];    /* warp instructions, whole grid */
    double global_waits;       /* dynamic executions, summed over warps, of SASS blocks that load global memory */
    double warp_path_clk;      /* cycles of the warps' issue paths by nvcc's stall counts and scoreboard waits,
                                * summed over warps (global-load waits apart); 0 when the SASS has no control bits */
    double shared_wavefronts, l1_wavefronts;          /* whole grid */
    double global_requests;    /* warp requests to global memory (loads and stores), whole grid */
    double l1_hit_sectors, l2_read_sectors, l2_write_sectors, l2_hit_sectors, dram_sectors;
    double barriers;           /* __syncthreads released, summed over blocks */
    double async_bytes;        /* bytes copied global -> shared by cp.async (also counted as L2 reads) */
    double fit_residual;       /* relative residual of the SASS-to-lines byte fit */
    double blocks_run;         /* how many blocks the emulator ran for it */
    /* sm_90a's asynchronous layer, counted by the emulator itself (emu_hopper.cc; README "wgmma and TMA"),
     * whole grid: wgmma.mma_async's FLOP on f16/bf16 and on tf32 (2 x 64 x N x K per operation of a
     * warpgroup), and the bytes of the TMA's boxes (what lands in shared memory and counts toward
     * complete_tx; the part inside the tensor is also in l2_read_sectors) */
    double wgmma_flop16, wgmma_flop_tf32, tma_bytes;
} emu_model_counts;
/* The time model's reading of a SASS listing (nvdisasm [-hex] -gi -c, as EMU_SASS takes): for the kernel with this
 * mangled name, each basic block's cycles for one warp (path) and instructions (inst), up to max blocks. Returns the
 * number of blocks (0: no such kernel), and in *has_ctrl whether the listing carried the control bits. */
int emu_sass_block_paths(const char *listing, const char *mangled, double *path, double *inst, int max, int *has_ctrl);
/* Turns the model on for gpu ("A6000", "A100", "H100"); 0 if that GPU is unknown. sample: as EMU_MODEL_SAMPLE. */
int emu_model_enable(const char *gpu, int sample);
/* The counts of the last launch (0 if none was observed). */
int emu_model_last(emu_model_counts *out);

typedef struct {
    double seconds;            /* predicted time of the launch, launch overhead included */
    const char *limiter;       /* the bound that sets it */
    double bound_s[16];        /* each bound's time, in the order of emu_model_bound_name */
    int nbounds;
    double resident_blocks, waves;
    double roofline_fraction;  /* max(FLOP/peak, DRAM bytes/bandwidth) / time */
} emu_model_prediction;
const char *emu_model_bound_name(int i);
/* The time of one launch with these counts on gpu; 0 if gpu unknown. flops: the useful FLOP of the launch
 * (for the roofline fraction), declared by the caller. */
int emu_model_predict(const emu_model_counts *c, const char *gpu, double flops, emu_model_prediction *out);
/* cuBLAS SGEMM/GEMM (m, n, k, batch; bytes per element of A/B; tensor: TF32/bf16 tensor cores) by the stated
 * efficiency model of emu_gpu.cc. */
int emu_model_predict_gemm(const char *gpu, double m, double n, double k, double batch, int elem_bytes, int tensor,
                           emu_model_prediction *out);
/* The GPU table: name, and the line that says where its figures come from; NULL past the end. */
const char *emu_model_gpu_name(int i);
const char *emu_model_gpu_source(int i);
/* The fitted constants: name, value; NULL past the end. */
const char *emu_model_constant(int i, double *value);

/* The model over a stretch of host code (a lesson's forward + backward): every launch and cuBLAS call between
 * begin and end is predicted on gpu and summed. sample: the launches run the model's sample of blocks (their
 * results are then incomplete: predict only), one pass, and a launch of a kernel with a grid, block and shared
 * memory already seen in the window is not run again: its prediction is counted again. 0 if gpu is unknown. */
int emu_model_window_begin(const char *gpu, int sample);
typedef struct {
    double seconds;            /* the predicted time of every launch and cuBLAS call, launch overheads included */
    double ideal_seconds;      /* the same work at the roofline: max(FLOP / peak, DRAM bytes / bandwidth), summed */
    char limiter[48];          /* the bound that holds the most of the time, with its share in limiter_share */
    double limiter_share;
    unsigned long long launches, gemms, reused;
    int counted;               /* 1: basic-block executions were counted (EMU_COUNT=1 build; emu_sass.cc) */
} emu_model_window;
int emu_model_window_end(emu_model_window *out);

#ifdef __cplusplus
}
#endif

#endif
