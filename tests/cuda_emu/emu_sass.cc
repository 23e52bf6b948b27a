/* emu_sass.cc - TEST-ONLY: nvcc's SASS for the modelled GPU, read from `nvdisasm -gi -c` listings (EMU_SASS, with
 * `nvcc -Xptxas -v` appended for static shared memory), and mapped onto what the emulator saw.
 *
 * The emulator runs g++'s code, whose instructions say nothing about a GPU's; what it does observe exactly is the
 * bytes every source line moves, per lane, in each kind of access. nvcc's line table gives each SASS instruction
 * its source line. So each SASS basic block's warp executions x_b are fitted (least squares, x >= 0, relative
 * to each line's bytes) so that the memory instructions of the blocks move what the emulator saw per line and
 * kind; unrolling, vectorisation (four LDS.32 merged into one LDS.128) and remainder loops are then accounted
 * for by nvcc's own code. A block that moves no memory takes the count of the nearest block that does in the
 * same innermost loop (a loop: a backward branch), or once per warp outside loops. Dynamic instructions per
 * pipe = sum over blocks of x_b times the block's instructions. */
#include "emu_model.h"

#include <algorithm>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace emu {

std::string line_key_of(const std::string &file_line)
{
    size_t slash = file_line.rfind('/');
    return slash == std::string::npos ? file_line : file_line.substr(slash + 1);
}

/* sm_90a's asynchronous layer in SASS, or -1. HGMMA (wgmma.mma_async) takes an issue slot here: its
 * tensor-pipe work is the emulator's exact count of the operations (emu_hopper.cc, priced in emu_gpu.cc), not
 * this instruction's. WARPGROUP.ARRIVE / .DEPBAR (wgmma.fence, wait_group) and FENCE.VIEW.ASYNC
 * (fence.proxy.async): issue slots. SYNCS.* (mbarrier init, arrive, try_wait): shared-memory operations
 * through the MIO. UTMALDG (the TMA) and USETMAXREG are on the uniform datapath (below). */
static int hopper_pipe(const std::string &op)
{
    if (op == "HGMMA" || op == "WARPGROUP" || op == "FENCE") return EMU_PIPE_CTRL;
    if (op == "SYNCS") return EMU_PIPE_LSU;
    return -1;
}

static int pipe_of(const std::string &op, const std::string &full)
{
    int hopper = hopper_pipe(op);
    if (hopper >= 0) return hopper;
    static const char *fp32[] = {"FFMA", "FMUL", "FADD", "FFMA32I", "FMUL32I", "FADD32I", "HFMA2", "HMUL2", "HADD2", NULL};
    static const char *fp64[] = {"DFMA", "DMUL", "DADD", "DSETP", NULL};
    static const char *sfu[] = {"MUFU", "F2F", "F2I", "I2F", "FRND", "I2I", "F2FP", NULL};
    static const char *lsu[] = {"LDG", "STG", "LDS", "STS", "LD", "ST", "LDL", "STL", "LDSM", "LDGSTS", "ATOM", "ATOMS",
                                "ATOMG", "RED", "SHFL", "VOTE", "MATCH", "REDUX", "LDGDEPBAR", "DEPBAR", "ARRIVES",
                                "MEMBAR", "CCTL", "LDC", NULL};
    static const char *ctrl[] = {"BRA", "BRX", "EXIT", "RET", "CALL", "BAR", "BSSY", "BSYNC", "WARPSYNC", "NOP", "S2R",
                                 "CS2R", "S2UR", "YIELD", "BPT", "LEPC", "KILL", "NANOSLEEP", NULL};
    for (const char **p = fp32; *p; p++) if (op == *p) return EMU_PIPE_FP32;
    for (const char **p = fp64; *p; p++) if (op == *p) return EMU_PIPE_FP64;
    for (const char **p = sfu; *p; p++) if (op == *p) return EMU_PIPE_SFU;
    for (const char **p = lsu; *p; p++) if (op == *p) return EMU_PIPE_LSU;
    for (const char **p = ctrl; *p; p++) if (op == *p) return EMU_PIPE_CTRL;
    if (op == "HMMA") {
        /* The tensor bound counts an f16/bf16 HMMA as 4096 FLOP (m16n8k16) and a tf32 one as 1024 (m16n8k4) or
         * 2048 (m16n8k8): the shapes nvcc emits for this project's WMMA and mma.sync on sm_80 and sm_90
         * (HMMA.16816.F32.BF16, HMMA.1684.F32.TF32, HMMA.1688.F32.TF32). Any other shape would be counted wrong:
         * refused. */
        int tf32 = full.find("TF32") != std::string::npos;
        if (tf32 && full.compare(0, 10, "HMMA.1688.") == 0) return EMU_PIPE_MMA_TF32_K8;
        const char *shape = tf32 ? "HMMA.1684." : "HMMA.16816.";
        if (full.compare(0, strlen(shape), shape) != 0) {
            fprintf(stderr, "emu_sass: %s: the time model counts only %s* for %s tensor-core instructions\n",
                    full.c_str(), tf32 ? "HMMA.1684.* and HMMA.1688." : shape, tf32 ? "tf32" : "16-bit");
            abort();
        }
        return tf32 ? EMU_PIPE_MMA_TF32 : EMU_PIPE_MMA16;
    }
    if (op == "IMAD" || op == "IMUL") return full.find(".MOV") != std::string::npos ? EMU_PIPE_ALU : EMU_PIPE_IMAD;
    if (op[0] == 'U') return EMU_PIPE_CTRL; /* the uniform datapath: an issue slot, no vector pipe */
    return EMU_PIPE_ALU;
}

static int lane_bytes_of(const std::string &full)
{
    /* ldmatrix: .x4 (LDSM.16.M88.4, MT88.4 transposed) gives each lane four 32-bit registers, .x2 two, .x1 one */
    if (full.compare(0, 5, "LDSM.") == 0) {
        size_t dot = full.rfind('.');
        int n = atoi(full.c_str() + dot + 1);
        return n == 4 || n == 2 ? 4 * n : 4;
    }
    if (full.find(".128") != std::string::npos) return 16;
    if (full.find(".64") != std::string::npos) return 8;
    if (full.find(".U8") != std::string::npos || full.find(".S8") != std::string::npos) return 1;
    if (full.find(".U16") != std::string::npos || full.find(".S16") != std::string::npos) return 2;
    return 4;
}

struct raw_inst {
    std::string op, full, line;
    std::string target; /* a branch's label */
    int ends_block;
    /* the scheduling control bits nvcc writes beside each instruction (nvdisasm -hex: bits 41-57 of the second
     * 64-bit word): cycles before the warp's next instruction may issue, the scoreboard this instruction
     * releases when its result is written (7: none), and the scoreboards it waits on first (one bit each) */
    int has_ctrl = 0, stall = 1, write_sb = 7, wait_mask = 0;
};

/* The control word's fields (Volta and later): stall bits 41-44, yield 45, write scoreboard 46-48, read
 * scoreboard 49-51, wait mask 52-57, operand reuse 58-61 */
static void decode_control(uint64_t hi, raw_inst *r)
{
    r->has_ctrl = 1;
    r->stall = (int)((hi >> 41) & 0xf);
    r->write_sb = (int)((hi >> 46) & 0x7);
    r->wait_mask = (int)((hi >> 52) & 0x3f);
}

/* Cycles from an instruction's issue until the scoreboard it sets is released, for the results nvcc does not
 * schedule by stall counts: shared memory and the other MIO paths at the L1/shared latency the model uses for a
 * global load that hits L1; global memory at 0 here (its waits are the model's global_waits term, at the latency
 * of where the data is); the rest (MUFU, conversions, S2R) at the stated variable latency. */
static double result_latency(const std::string &op, double l1, double var)
{
    static const char *global[] = {"LDG", "LDGSTS", "ATOMG", "ATOM", "RED", "LDL", "STG", "STL", "ST", NULL};
    static const char *mio[] = {"LDS", "LDSM", "LD", "ATOMS", "SHFL", "LDC", "ULDC", "STS", NULL};
    for (const char **g = global; *g; g++) if (op == *g) return 0.0;
    for (const char **m = mio; *m; m++) if (op == *m) return l1;
    return var;
}

/* One warp's cycles through these instructions in order: each issues once the previous one's stall count has
 * passed and the scoreboards it waits on are released. reps > 1 runs them again with the scoreboards carried
 * (a loop's body): the last repetition's cycles are returned, the loop's steady state. */
static double warp_path(const std::vector<const raw_inst *> &code, int reps, double l1, double var)
{
    double t = 0.0, ready[6] = {0, 0, 0, 0, 0, 0}, last = 0.0;
    for (int rep = 0; rep < reps; rep++) {
        double start = t;
        for (const raw_inst *r : code) {
            double issue = t;
            for (int b = 0; b < 6; b++)
                if (r->wait_mask >> b & 1) issue = std::max(issue, ready[b]);
            if (r->write_sb < 6)
                ready[r->write_sb] = std::max(ready[r->write_sb], issue + result_latency(r->op, l1, var));
            t = issue + std::max(1, r->stall);
        }
        last = t - start;
    }
    return last;
}

/* a header of the CUDA toolkit (CCCL, crt, the intrinsics): /usr/local/cuda[-13.0]/include/..., .../targets/... */
/* the toolkit's headers, and the product's PTX wrappers (kernels/runtime/ptx/): the emulator runs its own shim of
 * those (tests/cuda_emu/include/mma_ptx.h), whose accesses count at the wrapper's call site */
static int toolkit_header(const std::string &path)
{
    if (path.find("kernels/runtime/ptx/") != std::string::npos) return 1;
    return path.find("/include/") != std::string::npos &&
           (path.find("/cuda/") != std::string::npos || path.find("/cuda-") != std::string::npos ||
            path.find("/targets/") != std::string::npos);
}

static std::map<std::string, sass_kernel> &kernels = *new std::map<std::string, sass_kernel>;

static void finish(const std::string &name, std::vector<std::pair<std::string, raw_inst>> &code, int regs)
{
    if (name.empty()) return;
    sass_kernel &k = kernels[name];
    k.regs = regs;
    /* basic blocks: a label some branch jumps to starts one (nvdisasm also prints labels nothing jumps to), a
     * branch or exit ends one */
    std::map<std::string, int> targeted;
    for (auto &c : code)
        if (!c.second.target.empty()) targeted[c.second.target] = 1;
    std::vector<int> start_of; /* instruction index -> block */
    std::map<std::string, int> label_block;
    int b = -1;
    int open = 0;
    for (size_t i = 0; i < code.size(); i++) {
        if ((!code[i].first.empty() && targeted.count(code[i].first)) || !open) b++, open = 1;
        if (!code[i].first.empty()) label_block[code[i].first] = b;
        start_of.push_back(b);
        if (code[i].second.ends_block) open = 0;
    }
    k.blocks.assign((size_t)b + 1, sass_block{});
    for (sass_block &sb : k.blocks) sb.loop_lo = sb.loop_hi = -1;
    std::vector<std::vector<const raw_inst *>> block_code(k.blocks.size());
    int all_ctrl = 1;
    for (size_t i = 0; i < code.size(); i++) {
        const raw_inst &r = code[i].second;
        if (r.op.empty()) continue; /* a label alone */
        sass_block &sb = k.blocks[(size_t)start_of[i]];
        block_code[(size_t)start_of[i]].push_back(&r);
        all_ctrl &= r.has_ctrl;
        if (r.op == "NOP") continue;
        if (sb.first_line.empty()) sb.first_line = r.line;
        sb.lines.insert(r.line);
        sb.inst[pipe_of(r.op, r.full)]++;
        int kinds[2] = {-1, -1};
        if (r.op == "LD" || r.op == "ST") { /* generic: its space is known only once the emulator has run it */
            sb.generic_bytes[r.op == "ST"][r.line] += lane_bytes_of(r.full);
            sb.generic_inst[r.op == "ST"][r.line]++;
        }
        if (r.op == "LDG") kinds[0] = MK_GLD;
        else if (r.op == "STG") kinds[0] = MK_GST;
        else if (r.op == "LDS" || r.op == "LDSM") kinds[0] = MK_SLD;
        else if (r.op == "STS") kinds[0] = MK_SST;
        else if (r.op == "LDGSTS") kinds[0] = MK_GLD, kinds[1] = MK_SST;
        for (int kd : kinds) {
            if (kd < 0) continue;
            sb.lane_bytes[kd][r.line] += lane_bytes_of(r.full);
            sb.mem_inst[kd]++;
            sb.line_inst[kd][r.line]++;
        }
        if (r.op == "LDG") sb.global_loads++; /* LDGSTS (cp.async) is asynchronous: no wait here */
        /* a backward branch closes a loop: blocks [target, this] */
        if (!r.target.empty() && label_block.count(r.target) && label_block[r.target] <= start_of[i]) {
            int lo = label_block[r.target], hi = start_of[i];
            for (int j = lo; j <= hi; j++) {
                sass_block &in = k.blocks[(size_t)j];
                if (in.loop_lo < 0 || (in.loop_hi - in.loop_lo) > hi - lo) in.loop_lo = lo, in.loop_hi = hi;
            }
        }
    }
    /* each block's cycles for one warp: by the control bits where the listing has them (a loop of one block at
     * its steady state), else one instruction per clock */
    k.has_ctrl = all_ctrl;
    for (size_t j = 0; j < k.blocks.size(); j++) {
        sass_block &sb = k.blocks[j];
        int self_loop = sb.loop_lo == (int)j && sb.loop_hi == (int)j;
        int reps = self_loop ? 2 : 1;
        double l1 = model_constant("l1_hit_latency_clk"), var = model_constant("variable_latency_clk");
        sb.path_clk = all_ctrl ? warp_path(block_code[j], reps, l1, var) : (double)block_code[j].size();
        for (int g = 0; g < PATH_GRID; g++)
            sb.path_grid[g] = all_ctrl ? warp_path(block_code[j], reps, PATH_L1[g / PATH_NVAR],
                                                   PATH_VAR[g % PATH_NVAR])
                                       : (double)block_code[j].size();
    }
}

static void load(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cuda-emu: EMU_SASS: cannot read %s\n", path);
        return;
    }
    char buf[4096];
    std::string name, line, label, ptxas_fn;
    std::vector<std::pair<std::string, raw_inst>> code;
    int regs = 0, next_regs = 0; /* SHI_REGISTERS comes in a function's section header, before its label */
    int chain_first = 1, in_toolkit = 0; /* the first location line of a chain; it is in the toolkit's headers */
    while (fgets(buf, sizeof buf, f)) {
        char *s = buf;
        while (*s == ' ' || *s == '\t') s++;
        s[strcspn(s, "\n")] = 0;
        if (strncmp(s, "//## File \"", 11)) chain_first = 1;
        const char *q;
        if (!strncmp(s, ".text._Z", 8) && s[strlen(s) - 1] == ':') {
            finish(name, code, regs);
            code.clear(), label.clear();
            name.assign(s + 6, strlen(s) - 7);
            regs = next_regs;
        } else if ((q = strstr(s, "SHI_REGISTERS="))) {
            next_regs = atoi(q + 14);
        } else if (!strncmp(s, "//## File \"", 11)) {
            /* nvdisasm -gi: an instruction's location, then the chain of call sites it was inlined at, one line
             * each (innermost first). A location inside the toolkit's headers (cuda::memcpy_async's cp.async,
             * intrinsics) or the PTX wrappers (kernels/runtime/ptx/mma_ptx.h, shadowed by the emulator's own) is
             * taken at its first call site outside them: the line the emulator sees, where the shim's call
             * returns to. */
            const char *e = strchr(s + 11, '"');
            const char *ln = e ? strstr(e, ", line ") : NULL;
            if (e && ln && (chain_first || in_toolkit)) {
                std::string file(s + 11, (size_t)(e - s - 11));
                line = line_key_of(file) + ":" + std::to_string(atoi(ln + 7));
                in_toolkit = toolkit_header(file);
            }
            chain_first = 0;
            continue;
        } else if (!strncmp(s, ".L_x_", 5) && s[strlen(s) - 1] == ':') {
            label.assign(s, strlen(s) - 1);
            code.push_back({label, raw_inst{"", "", line, "", 0}});
            label.clear();
        } else if (!strncmp(s, "/* 0x", 5) && !name.empty()) {
            /* nvdisasm -hex: an instruction's second word, on the line after it; the first comes at the end of the
             * instruction's own line */
            if (!code.empty() && !code.back().second.op.empty() && !code.back().second.has_ctrl)
                decode_control(strtoull(s + 3, NULL, 16), &code.back().second);
        } else if (!strncmp(s, "/*", 2) && strstr(s, "*/") && !name.empty()) {
            char *t = strstr(s, "*/") + 2;
            while (*t == ' ') t++;
            if (!strncmp(t, "@!PT ", 5)) continue; /* predicated on never: not executed (nvcc's padding) */
            if (*t == '@') t += strcspn(t, " "); /* the predicate */
            while (*t == ' ') t++;
            std::string full(t, strcspn(t, " ;"));
            std::string op = full.substr(0, full.find('.'));
            raw_inst r{op, full, line, "", 0};
            const char *tg = strstr(t, "`(");
            if (tg) r.target.assign(tg + 2, strcspn(tg + 2, ")"));
            r.ends_block = op == "BRA" || op == "BRX" || op == "EXIT" || op == "RET" || op == "CALL";
            code.push_back({"", r});
        } else if ((q = strstr(s, "Compiling entry function '"))) {
            ptxas_fn.assign(q + 26, strcspn(q + 26, "'"));
        } else if ((q = strstr(s, "registers, ")) && !ptxas_fn.empty()) {
            /* "ptxas info    : Used 255 registers, used 1 barriers[, 98304 bytes smem]": the registers decide how
             * many blocks an SM holds (nvdisasm's listing has no SHI_REGISTERS line in CUDA 13) */
            const char *used = strstr(s, "Used ");
            if (used && used < q) {
                finish(name, code, regs), code.clear(), name.clear();
                kernels[ptxas_fn].regs = atoi(used + 5);
            }
            const char *sm = strstr(q, " bytes smem");
            if (sm) {
                const char *n = sm;
                while (n > q && n[-1] >= '0' && n[-1] <= '9') n--;
                finish(name, code, regs), code.clear(), name.clear();
                kernels[ptxas_fn].static_smem = (size_t)atol(n);
            }
        }
    }
    finish(name, code, regs);
    fclose(f);
}

const sass_kernel *sass_find(const std::string &mangled)
{
    static int loaded;
    if (!loaded++) {
        const char *e = getenv("EMU_SASS");
        std::string all = e ? e : "";
        size_t i = 0;
        while (i < all.size()) {
            size_t j = all.find(' ', i);
            if (j == std::string::npos) j = all.size();
            if (j > i) load(all.substr(i, j - i).c_str());
            i = j + 1;
        }
    }
    auto it = kernels.find(mangled);
    return it == kernels.end() || it->second.blocks.empty() ? NULL : &it->second;
}

sass_kernel sass_resolve_generic(const sass_kernel &k, const std::map<std::string, line_use> &use)
{
    sass_kernel r = k;
    for (sass_block &b : r.blocks)
        for (int st = 0; st < 2; st++)
            for (auto &g : b.generic_bytes[st]) {
                auto u = use.find(g.first);
                int global = st ? MK_GST : MK_GLD, shared = st ? MK_SST : MK_SLD, kd = global;
                if (u != use.end() && u->second.lane_bytes[shared] > 0 && u->second.lane_bytes[global] <= 0) kd = shared;
                double n = b.generic_inst[st].at(g.first);
                b.lane_bytes[kd][g.first] += g.second, b.mem_inst[kd] += n, b.line_inst[kd][g.first] += n;
                if (kd == MK_GLD) b.global_loads += (int)n;
            }
    return r;
}

double sass_bytes_per_inst(const sass_kernel &k, const std::string &line, int kind)
{
    double bytes = 0.0, n = 0.0;
    for (const sass_block &b : k.blocks) {
        auto it = b.lane_bytes[kind].find(line);
        if (it == b.lane_bytes[kind].end()) continue;
        bytes += it->second, n += b.line_inst[kind].at(line);
    }
    return n > 0 ? bytes / n : 0.0;
}

double sass_map(const sass_kernel &k, const std::map<std::string, line_use> &use, double warps, double *inst,
                double *global_waits, const std::map<std::string, double> *line_runs, double *path_clk,
                double *path_grid)
{
    size_t nb = k.blocks.size();
    /* the equations: one per (line, kind) that either side saw */
    struct eq {
        double target;
        std::vector<std::pair<size_t, double>> terms; /* block, lane bytes per execution */
    };
    std::map<std::pair<std::string, int>, eq> eqs;
    for (auto &u : use)
        for (int kd = 0; kd < MK_KINDS; kd++)
            if (u.second.lane_bytes[kd] > 0) eqs[{u.first, kd}].target = u.second.lane_bytes[kd];
    std::vector<int> has_mem(nb, 0);
    for (size_t b = 0; b < nb; b++)
        for (int kd = 0; kd < MK_KINDS; kd++)
            for (auto &lb : k.blocks[b].lane_bytes[kd]) {
                eqs[{lb.first, kd}].terms.push_back({b, lb.second});
                has_mem[b] = 1;
            }
    /* one statement over several lines: g++ may give its accesses the first line, nvcc a later one. A line the
     * emulator saw with no SASS of that kind joins the nearest line after it (up to 4; else before it, up to 2)
     * with SASS of that kind that the emulator did not see. */
    auto split = [](const std::string &key, std::string *file) {
        size_t c = key.rfind(':');
        *file = key.substr(0, c);
        return atoi(key.c_str() + c + 1);
    };
    std::vector<std::pair<std::string, int>> orphans;
    for (auto &e : eqs)
        if (e.second.target > 0 && e.second.terms.empty()) orphans.push_back(e.first);
    for (auto &o : orphans) {
        std::string file;
        int ln = split(o.first, &file);
        int done = 0;
        for (int d : {1, 2, 3, 4, -1, -2}) {
            auto it = eqs.find({file + ":" + std::to_string(ln + d), o.second});
            if (it == eqs.end() || it->second.terms.empty() || it->second.target > 0) continue;
            it->second.target = eqs[o].target;
            eqs.erase(o);
            done = 1;
            break;
        }
        /* g++'s line table may name the including file for a function of a header it included first: the same
         * line number in another file, if only one line of SASS has it */
        std::vector<std::pair<std::string, int>> same;
        for (auto &e : eqs) {
            std::string f2;
            if (!done && e.first.second == o.second && !e.second.terms.empty() && e.second.target <= 0 &&
                split(e.first.first, &f2) == ln && f2 != file)
                same.push_back(e.first);
        }
        if (same.size() == 1) eqs[same[0]].target = eqs[o].target, eqs.erase(o);
    }
    /* the other way round: nvcc may give some of one statement's instructions the line next to it (a vectorised
     * store the line of the value it stores: lesson 3's pipe_load_a, whose 16-byte stores nvcc puts, in some
     * builds, 3 blocks of 4 on the line before). A line with SASS of a kind the emulator did not see there joins
     * the line right after it, else right before it, that the emulator saw that kind on and that has SASS of it
     * too: one statement split, not a path that did not run. */
    std::vector<std::pair<std::string, int>> unseen;
    for (auto &e : eqs)
        if (e.second.target <= 0 && !e.second.terms.empty()) unseen.push_back(e.first);
    for (auto &u : unseen) {
        std::string file;
        int ln = split(u.first, &file);
        for (int d : {1, -1}) {
            auto it = eqs.find({file + ":" + std::to_string(ln + d), u.second});
            if (it == eqs.end() || it->second.terms.empty() || it->second.target <= 0) continue;
            for (auto &t : eqs[u].terms) it->second.terms.push_back(t);
            eqs.erase(u);
            break;
        }
    }
    /* projected coordinate descent on sum of ((seen - sass) / seen)^2; an equation nothing was seen for weighs
     * as if relative to the launch's mean line */
    double mean = 0.0;
    int n = 0;
    for (auto &e : eqs)
        if (e.second.target > 0) mean += e.second.target, n++;
    mean = n ? mean / n : 1.0;
    std::vector<double> x(nb, 0.0);
    /* visited widest first: where the bytes leave the split open (an unrolled loop and its remainder loop on the
     * same lines), the unrolled body takes them, as it does on the GPU for all but the last few iterations */
    std::vector<std::pair<double, size_t>> order;
    for (size_t b = 0; b < nb; b++) {
        double bytes = 0.0;
        for (int kd = 0; kd < MK_KINDS; kd++)
            for (auto &lb : k.blocks[b].lane_bytes[kd]) bytes += lb.second;
        if (has_mem[b]) order.push_back({-bytes, b});
    }
    std::sort(order.begin(), order.end());
    for (int it = 0; it < 300; it++) {
        for (auto &ob : order) {
            size_t b = ob.second;
            double num = 0.0, den = 0.0;
            for (auto &e : eqs) {
                double s = 0.0, mine = 0.0;
                for (auto &t : e.second.terms) {
                    s += x[t.first] * t.second;
                    if (t.first == b) mine += t.second;
                }
                if (mine == 0.0) continue;
                double w = 1.0 / pow(e.second.target > 0 ? e.second.target : mean, 2);
                num += w * mine * (e.second.target - s);
                den += w * mine * mine;
            }
            if (den > 0) x[b] = std::max(0.0, x[b] + num / den);
        }
    }
    double res = 0.0, tot = 0.0;
    static int debug = getenv("EMU_MODEL_DEBUG") ? atoi(getenv("EMU_MODEL_DEBUG")) : 0;
    for (auto &e : eqs) {
        double s = 0.0;
        for (auto &t : e.second.terms) s += x[t.first] * t.second;
        res += fabs(e.second.target - s), tot += e.second.target;
        if (debug)
            fprintf(stderr, "model: line %s kind %d: seen %.4g lane-bytes, SASS %.4g (%zu blocks)\n",
                    e.first.first.c_str(), e.first.second, e.second.target, s, e.second.terms.size());
    }
    /* blocks without memory: the nearest block with memory in the same innermost loop, else once per warp; and
     * no more than, for each source line it has instructions of, the most-run of GCC's basic blocks that start on
     * that line (line_runs, counted by the emulator). The bound is what sees a block that runs less often than its
     * loop (an epilogue under `if (t % 16 == 15)`); it is a bound, not a count, because nvcc splits, merges and
     * unrolls a line's code its own way (UNROLL loops are unrolled by both compilers: runtime/hd.h). */
    std::vector<double> xf(x);
    std::vector<const char *> why(nb, "fitted"); /* which rule gave each block its executions (EMU_MODEL_DEBUG=3) */
    for (size_t b = 0; b < nb; b++) {
        if (has_mem[b]) continue;
        const sass_block &sb = k.blocks[b];
        double best = -1.0;
        size_t dist = (size_t)-1;
        for (size_t c = 0; c < nb; c++) {
            if (!has_mem[c] || k.blocks[c].loop_lo != sb.loop_lo || k.blocks[c].loop_hi != sb.loop_hi) continue;
            size_t d = c > b ? c - b : b - c;
            if (d < dist) dist = d, best = x[c];
        }
        xf[b] = best >= 0.0 ? best : warps;
        why[b] = best >= 0.0 ? "no memory: its loop's nearest block with memory" : "no memory: once per warp";
        for (const std::string &l : sb.lines)
            if (line_runs && line_runs->count(l) && line_runs->at(l) < xf[b])
                xf[b] = line_runs->at(l), why[b] = "no memory: the most-run block of one of its lines, as counted";
    }
    for (int p = 0; p < EMU_PIPES; p++) inst[p] = 0.0;
    *global_waits = 0.0;
    if (path_clk) *path_clk = 0.0;
    if (path_grid)
        for (int g = 0; g < PATH_GRID; g++) path_grid[g] = 0.0;
    for (size_t b = 0; b < nb; b++) {
        for (int p = 0; p < EMU_PIPES; p++) inst[p] += xf[b] * k.blocks[b].inst[p];
        if (k.blocks[b].global_loads) *global_waits += xf[b];
        if (path_clk) *path_clk += xf[b] * k.blocks[b].path_clk;
        if (path_grid)
            for (int g = 0; g < PATH_GRID; g++) path_grid[g] += xf[b] * k.blocks[b].path_grid[g];
        if (debug >= 3) {
            double count = 0.0;
            for (int p = 0; p < EMU_PIPES; p++) count += k.blocks[b].inst[p];
            fprintf(stderr, "model: block %zu at %s: %.0f instructions, %.0f cycles for a warp, x %.4g executions (%s)\n",
                    b, k.blocks[b].first_line.c_str(), count, k.blocks[b].path_clk, xf[b], why[b]);
        }
    }
    return tot > 0 ? res / tot : 0.0;
}

} /* namespace emu */

extern "C" int emu_sass_block_paths(const char *listing, const char *mangled, double *path, double *inst, int max,
                                    int *has_ctrl)
{
    emu::load(listing);
    auto it = emu::kernels.find(mangled);
    if (it == emu::kernels.end()) return 0;
    const emu::sass_kernel &k = it->second;
    *has_ctrl = k.has_ctrl;
    int n = (int)k.blocks.size();
    for (int b = 0; b < n && b < max; b++) {
        path[b] = k.blocks[(size_t)b].path_clk;
        inst[b] = 0.0;
        for (int p = 0; p < EMU_PIPES; p++) inst[b] += k.blocks[(size_t)b].inst[p];
    }
    return n;
}
