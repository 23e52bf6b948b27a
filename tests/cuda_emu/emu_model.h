/* emu_model.h - TEST-ONLY: the GPU time model's parts, shared by emu_model.cc (what a launch does, observed),
 * emu_sass.cc (nvcc's SASS for the target and its line table) and emu_gpu.cc (the GPUs and the time formula). */
#ifndef CUDA_EMU_MODEL_H
#define CUDA_EMU_MODEL_H

#include "emu_eyes.h"
#include "include/emu_api.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace emu {

/* A warp's issue path depends on two of the fitted constants (a shared-memory result's latency,
 * l1_hit_latency_clk; a MUFU/conversion/S2R result's, variable_latency_clk): each SASS block's path is also
 * replayed at every point of this grid, and a launch's record carries the summed paths there, so that a fit
 * of those constants (model_fit.cc) needs no emulation. Point (i, j): PATH_L1[i], PATH_VAR[j], at index
 * i * PATH_NVAR + j. */
enum { PATH_NL1 = 7, PATH_NVAR = 3, PATH_GRID = PATH_NL1 * PATH_NVAR };
static const double PATH_L1[PATH_NL1] = {20, 25, 30, 35, 40, 50, 60};
static const double PATH_VAR[PATH_NVAR] = {10, 20, 40};

/* What one source line did in a launch, per kind of access (global/shared x load/store), summed over the warps:
 * lane_bytes = sum over warp requests of (bytes / active lanes), i.e. what one lane moved per warp execution. */
enum mem_kind { MK_GLD, MK_GST, MK_SLD, MK_SST, MK_KINDS };
struct line_use {
    double lane_bytes[MK_KINDS], requests[MK_KINDS], wavefronts[MK_KINDS], unique_bytes[MK_KINDS];
};

/* The SASS of one kernel for one architecture (emu_sass.cc). */
struct sass_block {
    double inst[EMU_PIPES];                /* instructions per pipe in this basic block */
    std::map<std::string, double> lane_bytes[MK_KINDS]; /* per "file.cu:line": bytes one lane moves per execution */
    double mem_inst[MK_KINDS];
    std::map<std::string, double> line_inst[MK_KINDS];   /* per line: memory instructions */
    int global_loads;                      /* LDG-like instructions: a wait for global memory follows */
    /* generic LD (0) and ST (1) per line: global or shared is what the emulator saw there (sass_resolve_generic) */
    std::map<std::string, double> generic_bytes[2], generic_inst[2];
    int loop_lo, loop_hi;                  /* the innermost loop holding it: blocks [lo, hi]; -1 if none */
    std::string first_line;                /* "file:line" of its first instruction (EMU_MODEL_DEBUG=3) */
    std::set<std::string> lines;           /* every instruction's "file:line" */
    double path_clk;                       /* one warp's cycles through it: the compiler's stall counts and the
                                            * scoreboard waits on shared-memory and special-function results
                                            * (a one-block loop at its steady state); global-load waits apart */
    double path_grid[PATH_GRID];           /* path_clk at each point of the latency grid above */
};
struct sass_kernel {
    std::vector<sass_block> blocks;
    int regs = 0;
    size_t static_smem = 0;
    int has_ctrl = 0;                      /* the listing carried the control bits (nvdisasm -hex) */
};
/* The kernel with this mangled name in the SASS files of EMU_SASS ("a.sass b.sass"), or NULL. */
const sass_kernel *sass_find(const std::string &mangled);

/* k with its generic loads and stores (LD, ST: nvcc emits them where it cannot prove a pointer's space, e.g.
 * a shared tile passed to wmma::load_matrix_sync through a function's parameter) given the space the emulator saw
 * on their line: shared if only shared memory was accessed there, else global. */
sass_kernel sass_resolve_generic(const sass_kernel &k, const std::map<std::string, line_use> &use);
/* Dynamic warp instructions by pipe, global-load waits and the warps' issue paths in cycles (path_clk) from a launch's per-line use: the warp
 * executions of each basic block are fitted so that its memory instructions move the bytes the emulator saw
 * on each line (emu_sass.cc). Returns the relative residual of that fit. */
double sass_map(const sass_kernel &k, const std::map<std::string, line_use> &use, double warps, double *inst,
                double *global_waits, const std::map<std::string, double> *line_runs = nullptr,
                double *path_clk = nullptr, double *path_grid = nullptr);
/* a constant of the time model by name (emu_gpu.cc's table); aborts on an unknown name */
double model_constant(const char *name);
/* sets one (a fit's trial values: model_fit.cc); 0 if there is no such constant. The warps' issue paths,
 * replayed when a listing is read, keep the latencies they were replayed at: a fit reads them off the grid. */
int model_set_constant(const char *name, double value);

/* the bytes one lane moves per SASS memory instruction of this line and kind (0 if none) */
double sass_bytes_per_inst(const sass_kernel &k, const std::string &line, int kind);

/* "file.cu:123" with the directory dropped: the key both line tables share */
std::string line_key_of(const std::string &file_line);
void resolve_lines(const std::vector<void *> &pcs); /* emu_symbols.cc: one addr2line for all */
/* the collection's hooks (emu_access.cc, emu_hazard.cc, emu_launch.cc) */
int model_on(void);
/* the last launch's warp paths on the latency grid (the launch of emu_model_last) */
void model_last_path_grid(double *grid);
std::vector<size_t> model_blocks(const launch_cfg &cfg);
void model_new_launch(const launch_cfg &cfg);
void model_access(const access &a, int shared);
void model_barrier(void);
void model_block_end(void);
void model_block_park(void); /* a cooperative block waits at a grid.sync */
void model_grid_end(void);
/* A launch the model's window (emu_model_window_begin with sampling) has already seen with this configuration:
 * its prediction is counted again and 1 returned (the launch is not run). */
int model_window_reuse(const launch_cfg &cfg);
int model_window_one_pass(void); /* a sampled window runs every launch once */
int model_window_on(void);
/* sm_90a's layer (emu_hopper.cc), counted for the running launch's block: one wgmma.mma_async of a warpgroup
 * (tf32 or 16-bit operands, its FLOP, the operand bytes it reads from shared memory), and one TMA box issued
 * by thread tid: its bytes in shared memory, and the global byte ranges [lo[i], hi[i]) it reads (its rows
 * inside the tensor). README "wgmma and TMA". */
void model_wgmma(int tf32, double flop, double smem_bytes);
void model_tma(unsigned tid, double box_bytes, const uintptr_t *lo, const uintptr_t *hi, size_t rows);
/* cuBLAS (cublas_shim.cc): m, n, k, batch, bytes per element of A and B, tensor cores */
void model_gemm(double m, double n, double k, double batch, int elem_bytes, int tensor);
/* A window's record (EMU_MODEL_RECORD; emu_model_record.cc): one text line per event. A launch carries its
 * counts and its warp paths on the latency grid (PATH_GRID values; NULL: the path at every point), "again" the
 * index of the launch it repeats, "gemm" a cuBLAS call's shape. */
std::string record_launch(const emu_model_counts &c, const double *path_grid);
std::string record_again(size_t launch_event);
std::string record_gemm(double m, double n, double k, double batch, int elem_bytes, int tensor);
int record_write(const char *path, int gpu, const std::vector<std::string> &events); /* 0 if it cannot */
/* the count fields of a launch line, in their order: name[i] and a pointer into c; returns how many */
int record_fields(emu_model_counts *c, const char **name, double **field, int max);
/* sm_90a's counts (wgmma FLOP, TMA bytes): written after a launch line's latency grid as "hopper v1 v2 ...",
 * only where one is not 0, so that older readers (and older records) see the line they know.
 * record_hopper_fields: their names and pointers into c, in order; record_hopper_read: the values after the
 * grid in rest into out (zeros if absent), the number of fields */
int record_hopper_fields(emu_model_counts *c, const char **name, double **field, int max);
int record_hopper_read(const char *rest, double *out, int max);
/* the mangled name of a kernel function (nm), "" if unknown (emu_symbols.cc) */
std::string function_symbol(const void *fn);

} /* namespace emu */

#endif
