/* emu_model_record.cc - TEST-ONLY: the model window's record (EMU_MODEL_RECORD=file), one text line per event,
 * read back by predict_extrapolate.cc. A run at the forum's size can be too long to emulate (a block's own loops
 * are the forum's length); runs at reduced sizes are recorded instead and every count extrapolated to the
 * forum's (tests/cuda_emu/README.md "Sizes too long to run"). The format:
 *
 *   gpu H100
 *   launch <kernel> <found_sass> <count> <count> ...    the counts of record_fields, in that order, then the
 *                                                       warps' paths at each point of the latency grid
 *                                                       (PATH_GRID values, emu_model.h), then, for a launch
 *                                                       with wgmma or TMA work, "hopper" and the counts of
 *                                                       record_hopper_fields
 *   again <event>                                       a launch the window had seen: event's counts again
 *   gemm <m> <n> <k> <batch> <bytes per element> <tensor>
 */
#include "emu_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace emu {

int record_fields(emu_model_counts *c, const char **name, double **field, int max)
{
    struct {
        const char *n;
        double *f;
    } all[] = {
        {"blocks", &c->blocks}, {"threads_per_block", &c->threads_per_block}, {"regs", &c->regs},
        {"static_smem", &c->static_smem}, {"dynamic_smem", &c->dynamic_smem}, {"warps", &c->warps},
        {"inst_fp32", &c->inst[EMU_PIPE_FP32]}, {"inst_fp64", &c->inst[EMU_PIPE_FP64]},
        {"inst_imad", &c->inst[EMU_PIPE_IMAD]}, {"inst_alu", &c->inst[EMU_PIPE_ALU]},
        {"inst_sfu", &c->inst[EMU_PIPE_SFU]}, {"inst_mma16", &c->inst[EMU_PIPE_MMA16]},
        {"inst_mma_tf32", &c->inst[EMU_PIPE_MMA_TF32]}, {"inst_lsu", &c->inst[EMU_PIPE_LSU]},
        {"inst_ctrl", &c->inst[EMU_PIPE_CTRL]}, {"inst_mma_tf32_k8", &c->inst[EMU_PIPE_MMA_TF32_K8]}, {"global_waits", &c->global_waits},
        {"warp_path_clk", &c->warp_path_clk},
        {"shared_wavefronts", &c->shared_wavefronts}, {"l1_wavefronts", &c->l1_wavefronts},
        {"global_requests", &c->global_requests}, {"l1_hit_sectors", &c->l1_hit_sectors},
        {"l2_read_sectors", &c->l2_read_sectors}, {"l2_write_sectors", &c->l2_write_sectors},
        {"l2_hit_sectors", &c->l2_hit_sectors}, {"dram_sectors", &c->dram_sectors}, {"barriers", &c->barriers},
        {"async_bytes", &c->async_bytes}, {"fit_residual", &c->fit_residual}, {"blocks_run", &c->blocks_run},
    };
    static_assert(EMU_PIPES == 10, "a pipe added to emu_api.h needs its field here");
    int n = (int)(sizeof all / sizeof all[0]);
    for (int i = 0; i < n && i < max; i++) name[i] = all[i].n, field[i] = all[i].f;
    return n;
}

std::string record_launch(const emu_model_counts &c, const double *path_grid)
{
    emu_model_counts copy = c;
    const char *name[64];
    double *field[64];
    int n = record_fields(&copy, name, field, 64);
    std::string kernel(c.kernel);
    for (char &ch : kernel)
        if (ch == ' ' || ch == '\t' || ch == '\n') ch = '_';
    std::string line = "launch " + kernel + " " + std::to_string(c.found_sass);
    char v[40];
    for (int i = 0; i < n; i++) snprintf(v, sizeof v, " %.17g", *field[i]), line += v;
    for (int g = 0; g < PATH_GRID; g++)
        snprintf(v, sizeof v, " %.17g", path_grid ? path_grid[g] : c.warp_path_clk), line += v;
    int nh = record_hopper_fields(&copy, name, field, 64), any = 0;
    for (int i = 0; i < nh; i++) any |= *field[i] != 0.0;
    if (any) {
        line += " hopper";
        for (int i = 0; i < nh; i++) snprintf(v, sizeof v, " %.17g", *field[i]), line += v;
    }
    return line;
}

/* ---- sm_90a's counts: the tail after the grid ---- */
int record_hopper_fields(emu_model_counts *c, const char **name, double **field, int max)
{
    struct {
        const char *n;
        double *f;
    } all[] = {{"wgmma_flop16", &c->wgmma_flop16}, {"wgmma_flop_tf32", &c->wgmma_flop_tf32},
               {"tma_bytes", &c->tma_bytes}};
    int n = (int)(sizeof all / sizeof all[0]);
    for (int i = 0; i < n && i < max; i++) name[i] = all[i].n, field[i] = all[i].f;
    return n;
}

int record_hopper_read(const char *rest, double *out, int max)
{
    emu_model_counts c;
    const char *name[8];
    double *field[8];
    int n = record_hopper_fields(&c, name, field, 8);
    for (int i = 0; i < n && i < max; i++) out[i] = 0.0;
    while (*rest == ' ') rest++;
    if (strncmp(rest, "hopper", 6)) return n;
    rest += 6;
    for (int i = 0; i < n && i < max; i++) {
        char *end;
        out[i] = strtod(rest, &end);
        if (end == rest) out[i] = 0.0;
        rest = end;
    }
    return n;
}

std::string record_again(size_t launch_event) { return "again " + std::to_string(launch_event); }

std::string record_gemm(double m, double n, double k, double batch, int elem_bytes, int tensor)
{
    char line[200];
    snprintf(line, sizeof line, "gemm %.17g %.17g %.17g %.17g %d %d", m, n, k, batch, elem_bytes, tensor);
    return line;
}

int record_write(const char *path, int gpu, const std::vector<std::string> &events)
{
    FILE *f = fopen(path, "w");
    if (!f) return 0;
    fprintf(f, "gpu %s\n", emu_model_gpu_name(gpu));
    for (const std::string &e : events) fprintf(f, "%s\n", e.c_str());
    return fclose(f) == 0;
}

} /* namespace emu */
