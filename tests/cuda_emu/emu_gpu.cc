/* emu_gpu.cc - TEST-ONLY: the GPUs the time model knows, and the time of one launch from its observed counts
 * (emu_model.cc). tests/cuda_emu/README.md explains the formula; in short, for a launch of B blocks on a GPU
 * with S SMs, R resident blocks per SM (registers, shared memory, threads, block slots), the busiest SM runs
 * n = ceil(B / S) blocks and
 *
 *   SM throughput  = n x max over pipes p of (warp instructions of a block on p / p's rate per SM and clock),
 *                    the issue slots (4 schedulers per SM) derated by the fitted issue efficiency, and the MIO
 *                    (shared-memory bank wavefronts + L1 wavefronts, one per clock per SM)
 *   SM latency     = ceil(n / R) x (a block's own path: the longer of its pipe work and a warp's issue path (the
 *                    cycles nvcc's stall counts and scoreboard waits give its instructions, emu_sass.cc), plus
 *                    its global-load waits x the latency of where the data is (L1 / L2 / DRAM hit rates from the
 *                    simulated caches), plus the block's barriers x the barrier cost)
 *   L2, DRAM       = sectors x 32 bytes / bandwidth (device-wide)
 *   time           = max(SM throughput, SM latency, L2, DRAM) / clock + launch overhead.
 * The limiter is the largest term; each term's share is printed beside it. */
#include "emu_dry.h"
#include "emu_model.h"

#include <algorithm>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace emu {

struct gpu_spec {
    const char *name, *arch;
    double sms, ghz;                   /* boost clock */
    double fp32_lanes, fp64_lanes, int_lanes, sfu_lanes; /* results per clock per SM */
    double mma16_tflops, tf32_tflops;  /* dense tensor-core peaks */
    double dram_gbs, l2_bytes, l2_bytes_per_clk;
    double l1_smem_bytes, smem_per_sm, threads_per_sm, blocks_per_sm, regs_per_sm;
    /* what the device reports under EMU_GPU (emu_device.cc): compute capability, the dynamic shared memory a
     * block may opt in to, the device memory */
    int cc;
    double smem_optin, mem_bytes;
    const char *source;
};

/* Lanes per SM per clock: CUDA C++ Programming Guide, "Arithmetic Instructions", throughput table (8.0: FP32 64,
 * FP64 32; 8.6 and 8.9: FP32 128, FP64 2; 9.0: FP32 128, FP64 64; 12.0 as 8.9; 32-bit integer add/logic/multiply-add
 * 64; special functions 16). Residency and shared memory: the Guide's "Technical Specifications per Compute
 * Capability" (threads per SM 2048 on 8.0 and 9.0, 1536 on 8.6, 8.9 and 12.0; blocks per SM 32, 16 on 8.6, 24 on
 * 8.9; shared memory per SM 164 KB on 8.0, 228 KB on 9.0, 100 KB on 8.6, 8.9 and 12.0, and per block with the
 * opt-in 163 KB, 227 KB and 99 KB). L2 bandwidth: the A100 whitepaper's 5120 bytes/clock; not published for the
 * others, taken as the same per SM and clock (47.4). */
static const gpu_spec GPUS[] = {
    {"A6000", "sm_86", 84, 1.80, 128, 2, 64, 16, 154.8, 77.4, 768, 6e6, 84 * 47.4, 128 << 10, 100 << 10, 1536, 16,
     65536, 86, 101376, 48e9,
     "NVIDIA RTX A6000 datasheet (84 SMs, 1.80 GHz boost, 38.7 TFLOP/s FP32, 309.7 TFLOP/s f16 tensor with "
     "sparsity = 154.8 dense, 768 GB/s GDDR6, 6 MB L2, 48 GB) and the GA102 whitepaper (128 KB L1/shared per SM)"},
    {"A100", "sm_80", 108, 1.41, 64, 32, 64, 16, 312, 156, 2039, 40e6, 5120, 192 << 10, 164 << 10, 2048, 32, 65536,
     80, 166912, 80e9,
     "NVIDIA A100 Tensor Core GPU Architecture whitepaper and A100 80GB SXM datasheet (108 SMs, 1.41 GHz, 19.5 "
     "TFLOP/s FP32, 312 bf16 / 156 TF32 dense, 2039 GB/s, 40 MB L2, 192 KB L1/shared per SM, L2 5120 B/clk)"},
    {"H100", "sm_90", 132, 1.98, 128, 64, 64, 16, 989, 495, 3350, 50e6, 132 * 47.4, 256 << 10, 228 << 10, 2048, 32,
     65536, 90, 232448, 80e9,
     "NVIDIA H100 Tensor Core GPU datasheet and Hopper whitepaper, SXM5 (132 SMs, 1.98 GHz boost, 67 TFLOP/s FP32, "
     "989 bf16 / 495 TF32 dense, 3.35 TB/s HBM3, 50 MB L2, 256 KB L1/shared per SM, 228 KB shared, 80 GB)"},
    {"H200", "sm_90", 132, 1.98, 128, 64, 64, 16, 989, 495, 4800, 50e6, 132 * 47.4, 256 << 10, 228 << 10, 2048, 32,
     65536, 90, 232448, 141e9,
     "NVIDIA H200 Tensor Core GPU datasheet, SXM (141 GB HBM3e at 4.8 TB/s; the same GH100 compute as H100 SXM: "
     "67 TFLOP/s FP32, 989 bf16 / 495 TF32 dense); L2 not in the datasheet: H100 SXM's 50 MB (the same die)"},
    {"RTX4090", "sm_89", 128, 2.52, 128, 2, 64, 16, 165.2, 82.6, 1008, 72e6, 128 * 47.4, 128 << 10, 100 << 10, 1536,
     24, 65536, 89, 101376, 24e9,
     "NVIDIA Ada GPU architecture whitepaper, GeForce RTX 4090 (128 SMs, 2.52 GHz boost, 82.6 TFLOP/s FP32, 165.2 "
     "f16/bf16 tensor with FP32 accumulate and 82.6 TF32 dense, 1008 GB/s GDDR6X, 72 MB L2, 128 KB L1/shared per SM, "
     "24 GB)"},
    {"L4", "sm_89", 58, 2.04, 128, 2, 64, 16, 121, 60, 300, 48e6, 58 * 47.4, 128 << 10, 100 << 10, 1536, 24, 65536,
     89, 101376, 24e9,
     "NVIDIA L4 Tensor Core GPU datasheet (58 SMs, 2.04 GHz boost, 30.3 TFLOP/s FP32, 242 bf16 and 120 TF32 with "
     "sparsity = 121 and 60 dense, 300 GB/s GDDR6, 48 MB L2, 24 GB)"},
    {"RTX5090", "sm_120", 170, 2.41, 128, 2, 64, 16, 209.5, 104.8, 1792, 96e6, 170 * 47.4, 128 << 10, 100 << 10,
     1536, 32, 65536, 120, 101376, 32e9,
     "NVIDIA RTX Blackwell GPU architecture whitepaper, GeForce RTX 5090 (170 SMs, 2.41 GHz boost, 104.8 TFLOP/s FP32, "
     "838 f16 tensor with sparsity and FP16 accumulate = 209.5 dense with FP32 accumulate, 104.8 TF32 dense, "
     "1792 GB/s GDDR7, 96 MB L2, 128 KB L1/shared per SM, 32 GB)"},
};
static const int NGPUS = sizeof GPUS / sizeof GPUS[0];

/* The fitted constants (tests/cuda_emu/README.md: how, on which figures). Not const: a fit (model_fit.cc)
 * sets them through model_set_constant; nothing else does. */
struct constant {
    const char *name;
    double value;
};
static constant K[] = {
    {"issue_efficiency", 0.70},     /* fraction of 4 warp instructions per SM per clock reached */
    {"l1_hit_latency_clk", 30.0},   /* a global load that hits L1; DRAM = 2 x the L2 figure */
    {"l2_hit_latency_clk", 250.0},
    {"barrier_clk", 40.0},          /* a __syncthreads on a warp's path */
    {"cublas_efficiency", 0.66},    /* cuBLAS SGEMM's fraction of the FP32 peak (fitted on the cuBLAS row) */
    {"global_request_clk", 2.0},    /* least L1/LSU cycles a global load or store request takes */
    {"launch_overhead_us", 3.0},    /* not fitted: the calibration at side 4096 cannot see it */
    {"variable_latency_clk", 20.0}, /* not fitted: a MUFU, conversion or S2R result a warp waits for (a stated
                                     * figure of the order microbenchmarks of Volta to Hopper report) */
    {"cublas_min_tile", 128.0},     /* the smallest output tile edge cuBLAS goes down to when its 128 x 128 tiles
                                     * leave SMs idle (128: never; model_fit.cc fits it) */
};
enum { K_ISSUE, K_L1, K_L2, K_BAR, K_BLAS, K_GREQ, K_LAUNCH, K_VARLAT, K_BLAS_TILE };

double model_constant(const char *name)
{
    for (const constant &k : K)
        if (!strcmp(k.name, name)) return k.value;
    fprintf(stderr, "cuda-emu: the time model has no constant %s\n", name);
    abort();
}

int model_set_constant(const char *name, double value)
{
    for (constant &k : K)
        if (!strcmp(k.name, name)) return k.value = value, 1;
    return 0;
}

int gpu_index(const char *name)
{
    for (int i = 0; i < NGPUS; i++)
        if (!strcasecmp(name, GPUS[i].name)) return i;
    return -1;
}

const char *gpu_names(void)
{
    static char names[160];
    if (!names[0])
        for (int i = 0; i < NGPUS; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", GPUS[i].name);
    return names;
}

int gpu_profile(int g, device_profile *p)
{
    if (g < 0 || g >= NGPUS) return 0;
    const gpu_spec &s = GPUS[g];
    p->name = s.name;
    p->cc = s.cc, p->sms = (int)s.sms;
    p->smem_optin = (size_t)s.smem_optin, p->smem_per_sm = (size_t)s.smem_per_sm;
    p->threads_per_sm = (int)s.threads_per_sm, p->blocks_per_sm = (int)s.blocks_per_sm;
    p->regs_per_sm = (int)s.regs_per_sm, p->l2_bytes = (size_t)s.l2_bytes, p->mem_bytes = (size_t)s.mem_bytes;
    return 1;
}

void gpu_caches(int g, double *sms, double *l1_smem_bytes, double *l2_bytes)
{
    *sms = GPUS[g].sms, *l1_smem_bytes = GPUS[g].l1_smem_bytes, *l2_bytes = GPUS[g].l2_bytes;
}

/* Blocks resident per SM: threads, block slots, registers (allocated per warp in units of 256), shared memory
 * (1 KB per block reserved by the system). */
double gpu_resident_blocks(int g, double threads, double regs, double smem)
{
    const gpu_spec &s = GPUS[g];
    double warps = ceil(threads / 32.0);
    double by_threads = floor(s.threads_per_sm / (warps * 32.0));
    double reg_warp = ceil(std::max(regs, 1.0) * 32.0 / 256.0) * 256.0;
    double by_regs = floor(s.regs_per_sm / (warps * reg_warp));
    double by_smem = smem > 0 ? floor(s.smem_per_sm / (smem + 1024.0)) : s.blocks_per_sm;
    return std::max(0.0, std::min(std::min(by_threads, s.blocks_per_sm), std::min(by_regs, by_smem)));
}

enum { B_ISSUE, B_FP32, B_FP64, B_INT, B_SFU, B_TENSOR, B_MIO, B_LATENCY, B_L2, B_DRAM, B_LAUNCH, NB };
static const char *BOUND_NAMES[NB] = {"issue", "fp32", "fp64", "int", "sfu", "tensor", "shared+L1 (MIO)",
                                      "latency", "L2", "DRAM", "launch"};

} /* namespace emu */

using namespace emu;

extern "C" const char *emu_model_bound_name(int i) { return i >= 0 && i < NB ? BOUND_NAMES[i] : NULL; }
extern "C" const char *emu_model_gpu_name(int i) { return i >= 0 && i < NGPUS ? GPUS[i].name : NULL; }
extern "C" const char *emu_model_gpu_source(int i) { return i >= 0 && i < NGPUS ? GPUS[i].source : NULL; }
extern "C" const char *emu_model_constant(int i, double *v)
{
    if (i < 0 || i >= (int)(sizeof K / sizeof K[0])) return NULL;
    *v = K[i].value;
    return K[i].name;
}

/* ---- wgmma (sm_90a): the tensor pipe's cycles of the launch's wgmma.mma_async (README "wgmma and TMA") ----
 * The emulator counts each warpgroup's operations exactly (emu_hopper.cc): 2 x 64 x N x K FLOP each. The SM's
 * tensor rate is the datasheet's dense peak over the SMs at the model's boost clock: H100 SXM and H200 (the
 * same GH100 compute), 989.4 TFLOP/s bf16/f16 and 494.7 tf32 (the table above rounds them to 989 and 495) /
 * (132 SMs x 1.98 GHz) = 3784 and 1894 FLOP per clock per SM. (989.4 TFLOP/s is also 4096 FLOP per clock per
 * SM at 1.83 GHz: a prediction uses only the time per FLOP, the datasheet's either way.) The operation is
 * asynchronous: this is a throughput term of the SM beside its issue path, the larger of which the formula
 * takes (a max, not a sum). */
static double wgmma_tensor_clk(const emu_model_counts *c, const gpu_spec &s)
{
    double clk = s.sms * s.ghz * 1e9, clk16 = s.mma16_tflops * 1e12 / clk, clk32 = s.tf32_tflops * 1e12 / clk;
    return c->wgmma_flop16 / clk16 + c->wgmma_flop_tf32 / clk32;
}

/* compute_s: the launch's arithmetic at the peaks (FP32 lanes, tensor cores), for the roofline fraction */
static void finish(emu_model_prediction *out, double *b, double launch_s, double compute_s, double dram_bytes,
                   const gpu_spec &s)
{
    b[B_LAUNCH] = launch_s;
    int lim = 0;
    for (int i = 0; i < NB - 1; i++)
        if (b[i] > b[lim]) lim = i;
    out->seconds = b[lim] + launch_s;
    out->limiter = BOUND_NAMES[lim];
    out->nbounds = NB;
    for (int i = 0; i < NB; i++) out->bound_s[i] = b[i];
    double ideal = std::max(compute_s, dram_bytes / (s.dram_gbs * 1e9));
    out->roofline_fraction = out->seconds > 0 ? ideal / out->seconds : 0.0;
}

extern "C" int emu_model_predict(const emu_model_counts *c, const char *gpu, double flops, emu_model_prediction *out)
{
    int g = gpu_index(gpu);
    if (g < 0) return 0;
    const gpu_spec &s = GPUS[g];
    memset(out, 0, sizeof *out);
    double R = std::max(1.0, gpu_resident_blocks(g, c->threads_per_block, c->regs, c->static_smem + c->dynamic_smem));
    double nb = std::max(1.0, c->blocks), n = ceil(nb / s.sms);
    out->resident_blocks = R, out->waves = ceil(nb / (s.sms * R));
    const double *I = c->inst;
    double total = 0.0;
    for (int p = 0; p < EMU_PIPES; p++) total += I[p];
    double per_block = n / nb; /* the busiest SM's share of the grid's work */
    double b[NB] = {0};
    b[B_ISSUE] = per_block * total / (4.0 * K[K_ISSUE].value);
    b[B_FP32] = per_block * I[EMU_PIPE_FP32] / (s.fp32_lanes / 32.0 * K[K_ISSUE].value);
    b[B_FP64] = per_block * I[EMU_PIPE_FP64] / (s.fp64_lanes / 32.0);
    b[B_INT] = per_block * (I[EMU_PIPE_IMAD] + I[EMU_PIPE_ALU]) / (s.int_lanes / 32.0);
    b[B_SFU] = per_block * I[EMU_PIPE_SFU] / (s.sfu_lanes / 32.0);
    /* an HMMA.16816 (f16/bf16) is 4096 FLOP, an HMMA.1684 on tf32 1024, an HMMA.1688 on tf32 2048 (the only
     * shapes emu_sass.cc accepts) */
    double clk_flops16 = s.mma16_tflops * 1e12 / (s.sms * s.ghz * 1e9), clk_flops32 = s.tf32_tflops * 1e12 / (s.sms * s.ghz * 1e9);
    b[B_TENSOR] = per_block * (I[EMU_PIPE_MMA16] * 4096.0 / clk_flops16 +
                               (I[EMU_PIPE_MMA_TF32] * 1024.0 + I[EMU_PIPE_MMA_TF32_K8] * 2048.0) / clk_flops32);
    b[B_TENSOR] += per_block * wgmma_tensor_clk(c, s); /* sm_90a's wgmma (above) */
    /* MIO: shared-memory bank wavefronts, and per global request its L1 wavefronts (128-byte lines), at least
     * the fitted cycles per global request */
    b[B_MIO] = per_block * std::max(I[EMU_PIPE_LSU], c->shared_wavefronts + c->l1_wavefronts +
                                                         std::max(0.0, K[K_GREQ].value - 1.0) * c->global_requests);
    /* one block's own path, not hidden inside the block (its warps meet at barriers): its global-load waits at the
     * latency of where the data is (L1 / L2 / DRAM rates from the simulated caches), and its barriers */
    double loads = c->l1_hit_sectors + c->l2_read_sectors;
    double h1 = loads > 0 ? c->l1_hit_sectors / loads : 1.0;
    double l2_loads = c->l2_read_sectors;
    double dram_share = l2_loads > 0 ? std::min(1.0, std::max(0.0, 1.0 - c->l2_hit_sectors / l2_loads)) : 0.0;
    double lat = h1 * K[K_L1].value + (1.0 - h1) * K[K_L2].value * (1.0 + dram_share);
    double block_wait = (c->global_waits / std::max(1.0, c->warps)) * lat + (c->barriers / nb) * K[K_BAR].value;
    /* a warp's issue path: cycles its own dependences take whatever else the SM runs (0: SASS without control bits) */
    double warp_path = c->warp_path_clk / std::max(1.0, c->warps);
    /* the busiest SM runs n blocks, R at a time: a wave of r blocks takes the longer of r blocks' work on the
     * pipes and one block's own path (the longer of its pipe work and a warp's issue path) plus its waits */
    int lim = B_ISSUE;
    for (int i = B_ISSUE; i <= B_MIO; i++)
        if (b[i] > b[lim]) lim = i;
    double thr_block = b[lim] / n; /* per block */
    double full = floor(n / R), rest = n - full * R;
    double own = std::max(thr_block, warp_path) + block_wait;
    double sm = full * std::max(R * thr_block, own) + (rest > 0 ? std::max(rest * thr_block, own) : 0.0);
    b[B_LATENCY] = sm > b[lim] * 1.000001 ? sm : n * block_wait / R; /* shown: the waits' share when not the limit */
    double clk = s.ghz * 1e9;
    for (int i = 0; i <= B_LATENCY; i++) b[i] /= clk;
    b[B_L2] = (c->l2_read_sectors + c->l2_write_sectors) * 32.0 / (s.l2_bytes_per_clk * clk);
    b[B_DRAM] = c->dram_sectors * 32.0 / (s.dram_gbs * 1e9);
    double compute_s = flops / (2.0 * s.fp32_lanes * s.sms * s.ghz * 1e9) +
                       I[EMU_PIPE_MMA16] * 4096.0 / (s.mma16_tflops * 1e12) +
                       (I[EMU_PIPE_MMA_TF32] * 1024.0 + I[EMU_PIPE_MMA_TF32_K8] * 2048.0) / (s.tf32_tflops * 1e12);
    compute_s += c->wgmma_flop16 / (s.mma16_tflops * 1e12) + c->wgmma_flop_tf32 / (s.tf32_tflops * 1e12);
    finish(out, b, K[K_LAUNCH].value * 1e-6, compute_s, c->dram_sectors * 32.0, s);
    /* the waits decide only in part when a block's pipe work outweighs them: name both, the pipe first */
    static char both[NB][48];
    if (out->limiter == BOUND_NAMES[B_LATENCY] && block_wait < thr_block && warp_path <= thr_block) {
        snprintf(both[lim], sizeof both[lim], "%s+latency", BOUND_NAMES[lim]);
        out->limiter = both[lim];
    }
    return 1;
}

/* cuBLAS: its kernels are not run here (OpenBLAS computes the result), so its time is a stated model: the FP32
 * (or tensor-core) peak times the fitted cuBLAS efficiency, on tiles of 128 x 128 spread in waves over the SMs
 * (one tile per SM at a time: the last wave's idle SMs are lost), or DRAM (A, B read once, C written) if slower.
 * A product too small to give every SM a 128 x 128 tile gets smaller tiles (the edge halved while SMs stay idle,
 * down to cublas_min_tile), as cuBLAS picks smaller-tile kernels for it rather than leave SMs idle. */
extern "C" int emu_model_predict_gemm(const char *gpu, double m, double n, double k, double batch, int elem_bytes,
                                      int tensor, emu_model_prediction *out)
{
    int g = gpu_index(gpu);
    if (g < 0) return 0;
    const gpu_spec &s = GPUS[g];
    memset(out, 0, sizeof *out);
    double flops = 2.0 * m * n * k * batch;
    /* the tile edge: 128, halved while the tiles leave SMs idle, down to cublas_min_tile */
    double edge = 128.0;
    while (edge / 2.0 >= K[K_BLAS_TILE].value && ceil(m / edge) * ceil(n / edge) * batch < s.sms) edge /= 2.0;
    double tiles = ceil(m / edge) * ceil(n / edge) * batch;
    double waves = ceil(tiles / s.sms);
    double peak = tensor ? (elem_bytes == 2 ? s.mma16_tflops : s.tf32_tflops) * 1e12 : 2.0 * s.fp32_lanes * s.sms * s.ghz * 1e9;
    double tile_flops = 2.0 * std::min(m, edge) * std::min(n, edge) * k;
    double b[NB] = {0};
    b[B_FP32] = waves * tile_flops / (peak / s.sms * K[K_BLAS].value);
    double bytes = (m * k + k * n) * elem_bytes * batch + m * n * 4.0 * batch;
    b[B_DRAM] = bytes / (s.dram_gbs * 1e9);
    out->resident_blocks = 1, out->waves = waves;
    finish(out, b, K[K_LAUNCH].value * 1e-6, flops / peak, bytes, s);
    if (tensor) out->limiter = out->limiter == BOUND_NAMES[B_FP32] ? "tensor" : out->limiter;
    return 1;
}
