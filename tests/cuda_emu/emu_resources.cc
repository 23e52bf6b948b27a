/* emu_resources.cc - TEST-ONLY: what each kernel costs the SM, from nvcc's own account (`make ptxas` writes
 * build/ptxas.txt: `nvcc -Xptxas -v` for sm_80 and sm_90), checked at every launch and printed as occupancy.
 *
 * EMU_PTXAS=build/ptxas.txt makes every launch of a kernel found there check, for both targets:
 *   registers per thread x threads per block <= 65536 (else cudaErrorLaunchOutOfResources, as on the GPU),
 *   static + dynamic shared memory <= the block's limit (48 KiB static; the opt-in for dynamic);
 * and at exit (with EMU_STATS=1) prints, per kernel and target: registers, spills, static shared memory, the
 * block size launched, resident blocks per SM and warps per SM out of 64. A kernel that spills gets a warning.
 *
 * The figures, from NVIDIA's CUDA C++ Programming Guide, "Compute Capabilities", table "Technical Specifications
 * per Compute Capability" (8.0 and 9.0 alike unless said): 65536 32-bit registers per SM and per block, at most
 * 255 per thread; 2048 resident threads (64 warps) and 32 resident blocks per SM; shared memory per SM 164 KB
 * on 8.0, 228 KB on 9.0, of which 1 KB per resident block is reserved by the system. Register allocation unit:
 * 256 registers per warp (the CUDA Occupancy Calculator's "register allocation unit size"). */
#include "emu_dry.h"
#include "emu_internal.h"

#include <map>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>

namespace emu {

struct arch_limits {
    const char *name;
    size_t smem_per_sm;
};
static const arch_limits ARCHS[2] = {{"sm_80", 164u << 10}, {"sm_90", 228u << 10}};

struct kernel_res {
    int seen[2];
    unsigned regs[2], spill_st[2], spill_ld[2];
    size_t smem[2];
    size_t threads, dyn_smem; /* of the last launch */
};

/* never destroyed: print_occupancy runs from an atexit handler registered before this file's statics exist */
static std::map<std::string, kernel_res> &res = *new std::map<std::string, kernel_res>;
static int loaded = -1;

/* "_Z14lce2_dw_kerneliii..." -> "lce2_dw_kernel" (a kernel in the global namespace, as this project's are) */
static std::string short_name(const char *mangled)
{
    if (strncmp(mangled, "_Z", 2) != 0) return mangled;
    char *end;
    long n = strtol(mangled + 2, &end, 10);
    return n > 0 ? std::string(end, (size_t)n) : std::string(mangled);
}

static void parse(FILE *f)
{
    char line[1024];
    kernel_res *cur = NULL;
    int arch = 0;
    while (fgets(line, sizeof line, f)) {
        char fn[512], sm[16];
        unsigned a, b;
        const char *p;
        if (sscanf(line, "ptxas info : Compiling entry function '%511[^']' for '%15[^']'", fn, sm) == 2) {
            cur = &res[short_name(fn)];
            arch = strcmp(sm, "sm_90") == 0;
            cur->seen[arch] = 1;
        } else if (cur && (p = strstr(line, "bytes spill stores")) && sscanf(line, " %*u bytes stack frame, %u bytes "
                   "spill stores, %u bytes spill loads", &a, &b) == 2) {
            cur->spill_st[arch] = a, cur->spill_ld[arch] = b;
        } else if (cur && (p = strstr(line, "Used ")) && sscanf(p, "Used %u registers", &a) == 1) {
            cur->regs[arch] = a;
            const char *s = strstr(p, "bytes smem");
            if (s) {
                while (s > p && s[-1] == ' ') s--;
                while (s > p && s[-1] >= '0' && s[-1] <= '9') s--;
                cur->smem[arch] = strtoul(s, NULL, 10);
            }
        }
    }
}

static void load(void)
{
    if (loaded >= 0) return;
    loaded = 0;
    const char *path = getenv("EMU_PTXAS");
    if (!path || !*path) return;
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cuda-emu: EMU_PTXAS=%s: cannot read it (make ptxas writes build/ptxas.txt)\n", path);
        return;
    }
    parse(f); /* "ptxas info    : ...": a space in a sscanf pattern matches any run of spaces */
    fclose(f);
    loaded = 1;
}

/* Resident blocks per SM for one target: the least of the register, shared-memory, thread and block limits. */
static unsigned blocks_per_sm(const kernel_res &k, int arch, size_t threads, size_t dyn)
{
    size_t warps = (threads + 31) / 32;
    size_t regs_warp = ((size_t)k.regs[arch] * 32 + 255) / 256 * 256;
    size_t by_regs = regs_warp ? 65536 / (regs_warp * warps) : 32;
    size_t by_smem = ARCHS[arch].smem_per_sm / (k.smem[arch] + dyn + 1024);
    size_t by_threads = 2048 / (warps * 32), b = 32;
    if (by_regs < b) b = by_regs;
    if (by_smem < b) b = by_smem;
    if (by_threads < b) b = by_threads;
    return (unsigned)b;
}

int resources_ok(const launch_cfg &c)
{
    load();
    if (loaded != 1) return 1;
    auto it = res.find(c.name);
    if (it == res.end()) return 1;
    kernel_res &k = it->second;
    size_t threads = (size_t)c.block.x * c.block.y * c.block.z;
    k.threads = threads, k.dyn_smem = c.smem;
    for (int a = 0; a < 2; a++) {
        if (!k.seen[a]) continue;
        if ((size_t)k.regs[a] * threads > 65536) {
            fail(cudaErrorLaunchOutOfResources, "kernel %s (launched at %s:%d): %zu threads x %u registers (%s, "
                 "ptxas) need more than the 65536 registers a block may have", c.name, c.file, c.line, threads,
                 k.regs[a], ARCHS[a].name);
            return 0;
        }
        if (k.smem[a] + c.smem > optin_dyn_smem()) {
            fail(cudaErrorInvalidConfiguration, "kernel %s (launched at %s:%d): %zu bytes of static (%s, ptxas) and "
                 "%zu of dynamic shared memory exceed the %zu a block may have", c.name, c.file, c.line, k.smem[a],
                 ARCHS[a].name, c.smem, optin_dyn_smem());
            return 0;
        }
    }
    return 1;
}

void print_occupancy(void)
{
    if (loaded != 1) return;
    for (auto &kv : res) {
        const kernel_res &k = kv.second;
        if (!k.threads) continue; /* never launched */
        for (int a = 0; a < 2; a++) {
            if (!k.seen[a]) continue;
            unsigned b = blocks_per_sm(k, a, k.threads, k.dyn_smem);
            size_t warps = b * ((k.threads + 31) / 32);
            fprintf(stderr, "cuda-emu occupancy: %-24s %s  %3u registers  %6zu B static smem  %4zu threads/block  "
                    "%2u blocks/SM  %2zu/64 warps/SM (%.0f%%)\n", kv.first.c_str(), ARCHS[a].name, k.regs[a],
                    k.smem[a], k.threads, b, warps, 100.0 * (double)warps / 64.0);
            if (k.spill_st[a] || k.spill_ld[a])
                fprintf(stderr, "cuda-emu: warning: kernel %s spills on %s: %u bytes of spill stores, %u of loads\n",
                        kv.first.c_str(), ARCHS[a].name, k.spill_st[a], k.spill_ld[a]);
        }
    }
}

} /* namespace emu */
