/* emu_profile.cc - TEST-ONLY: the memory-efficiency profile (EMU_PROFILE=1), what Nsight Compute's memory
 * tables would say about the access pattern -- not about time.
 *
 * A warp instruction is the k-th execution of one source line's accesses of one kind (global or shared, read or
 * write) by the lanes of one warp: accesses are grouped by (warp, line, kind, k) per block, k counted per lane in
 * the lane's program order. By source line, not by machine instruction: g++ may copy a store into both arms of a
 * branch (`s[i] = c ? x : y`), and lanes that took different arms would then be split into two requests whose
 * k-th executions belong to different iterations; nvcc predicates such code into one instruction, which the
 * line stands for. (A line whose lanes run different numbers of one kind of access, e.g. a load in one arm of a
 * ?: only, is grouped by order, which is what the lanes' predicated instruction would do too.) For each group:
 *   global memory: requested bytes (the lanes' sizes summed) and the distinct 32-byte sectors they touch;
 *                  efficiency = requested / (sectors * 32), so 1.0 is fully coalesced, 0.125 one float per
 *                  sector, and a broadcast (every lane the same word) counts above 1;
 *   shared memory: bank wavefronts, 32 banks of 4 bytes: per bank the distinct 4-byte words the group touches
 *                  (the same word twice is a broadcast, free); the wavefronts are the largest count over the
 *                  banks. 8-byte accesses are processed per half-warp and 16-byte ones per quarter-warp
 *                  (NVIDIA's rule for 64- and 128-bit accesses), each phase counted the same way and summed.
 *                  wavefronts / request: 1 is conflict-free, 32 a 32-way conflict.
 * Atomics are not counted. Summed per kernel and source line; printed at exit as a table (stderr), written as
 * CSV to EMU_PROFILE_CSV, and checked against the designs stated in the header comments of the kernel sources
 * EMU_PROFILE_TARGETS names (emu_profile_design.cc): a kernel that misses its design (or its stated "Today"
 * figure), or states none, makes the program exit with status 5. */
#include "emu_profile.h"
#include "emu_sched.h"
#include "include/emu_api.h"

#include <algorithm>
#include <map>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace emu {

struct record {
    uint32_t warp, k;
    void *pc;
    uintptr_t addr;
    uint32_t lane, size;
    int kind, shared;
};

struct site_key {
    std::string kernel;
    void *pc;
    int shared, store;
    bool operator<(const site_key &o) const
    {
        if (kernel != o.kernel) return kernel < o.kernel;
        if (pc != o.pc) return pc < o.pc;
        return shared != o.shared ? shared < o.shared : store < o.store;
    }
};

static int enabled = -1;
/* Never destroyed: profile_report runs from atexit, and a C++ static's destructor may run before it (the order
 * depends on which was first constructed or registered, which a constructor in another file can change). */
static std::vector<record> &block_recs = *new std::vector<record>;
/* return address -> the first return address seen on its source line (the line's representative) */
static std::unordered_map<void *, void *> &line_of_pc = *new std::unordered_map<void *, void *>;
static std::map<std::string, void *> &pc_of_line = *new std::map<std::string, void *>;
static std::map<site_key, line_stats> &sites = *new std::map<site_key, line_stats>;
std::map<std::string, kernel_runs> &runs = *new std::map<std::string, kernel_runs>;
static std::string &running = *new std::string;
static unsigned long long resumes_seen;

int profile_on(void)
{
    if (enabled < 0) {
        const char *e = getenv("EMU_PROFILE");
        enabled = e && atoi(e);
        if (enabled) atexit(profile_report);
    }
    return enabled;
}

/* read EMU_PROFILE at start-up, so a program that launches no kernel still writes its (empty) CSV */
__attribute__((constructor)) static void profile_at_start(void) { (void)profile_on(); }

void profile_new_launch(const launch_cfg &cfg)
{
    if (!profile_on()) return;
    running = cfg.name;
    runs[running].launches++;
}

void profile_access(const access &a, int shared)
{
    if (a.kind == ACC_ATOMIC) return;
    block_recs.push_back(record{a.tid / 32, 0, a.pc, a.addr, a.tid % 32, a.size, a.kind, shared}); /* k: at block end */
}

/* distinct 32-byte sectors of a group's accesses */
static unsigned long long sectors_of(const record *r, size_t n)
{
    std::vector<uintptr_t> s;
    for (size_t i = 0; i < n; i++)
        for (uintptr_t x = r[i].addr >> 5; x <= (r[i].addr + r[i].size - 1) >> 5; x++) s.push_back(x);
    std::sort(s.begin(), s.end());
    return (unsigned long long)(std::unique(s.begin(), s.end()) - s.begin());
}

/* bank wavefronts of a group: per phase (whole, half or quarter warp), the most distinct words in one bank */
static unsigned long long wavefronts_of(const record *r, size_t n)
{
    unsigned lanes_per_phase = r[0].size > 8 ? 8 : r[0].size > 4 ? 16 : 32;
    unsigned long long total = 0;
    for (unsigned ph = 0; ph < 32 / lanes_per_phase; ph++) {
        std::vector<uintptr_t> words[32];
        for (size_t i = 0; i < n; i++) {
            if (r[i].lane / lanes_per_phase != ph) continue;
            for (uintptr_t w = r[i].addr >> 2; w <= (r[i].addr + r[i].size - 1) >> 2; w++) words[w % 32].push_back(w);
        }
        size_t most = 0;
        for (std::vector<uintptr_t> &b : words) {
            std::sort(b.begin(), b.end());
            most = std::max(most, (size_t)(std::unique(b.begin(), b.end()) - b.begin()));
        }
        total += most;
    }
    return total;
}

static void add_group(const record *r, size_t n)
{
    line_stats &s = sites[site_key{running, r[0].pc, r[0].shared, r[0].kind == ACC_WRITE}];
    s.requests++;
    for (size_t i = 0; i < n; i++) s.bytes += r[i].size;
    if (r[0].shared) s.wavefronts += wavefronts_of(r, n);
    else s.sectors += sectors_of(r, n);
}

/* Each record's pc becomes its source line's representative pc (addr2line once per new pc, in one batch; a pc
 * with no line information stays its own). */
static void pcs_to_lines(void)
{
    std::vector<void *> fresh;
    for (const record &r : block_recs)
        if (!line_of_pc.count(r.pc)) fresh.push_back(r.pc), line_of_pc[r.pc] = r.pc;
    resolve_lines(fresh);
    for (void *pc : fresh) {
        std::string line = source_line(pc);
        if (line == "?") continue;
        auto it = pc_of_line.emplace(line, pc).first;
        line_of_pc[pc] = it->second;
    }
    for (record &r : block_recs) r.pc = line_of_pc[r.pc];
}

static bool same_access(const record &x, const record &y)
{
    return x.warp == y.warp && x.pc == y.pc && x.shared == y.shared && x.kind == y.kind;
}

static bool access_before(const record &x, const record &y)
{
    if (x.warp != y.warp) return x.warp < y.warp;
    if (x.pc != y.pc) return x.pc < y.pc;
    if (x.shared != y.shared) return x.shared < y.shared;
    return x.kind < y.kind;
}

void profile_block_end(void)
{
    if (!profile_on()) return;
    runs[running].switches += stats.resumes - resumes_seen;
    resumes_seen = stats.resumes;
    pcs_to_lines();
    /* k: the lane's how-many-th access of this kind on this line. block_recs holds each thread's accesses in its
     * program order, which a stable sort keeps within (warp, line, kind, lane). */
    std::stable_sort(block_recs.begin(), block_recs.end(), [](const record &x, const record &y) {
        return access_before(x, y) || (!access_before(y, x) && x.lane < y.lane);
    });
    for (size_t i = 0; i < block_recs.size(); i++)
        block_recs[i].k = i && same_access(block_recs[i], block_recs[i - 1]) && block_recs[i].lane == block_recs[i - 1].lane
                              ? block_recs[i - 1].k + 1 : 0;
    std::sort(block_recs.begin(), block_recs.end(), [](const record &x, const record &y) {
        if (access_before(x, y) || access_before(y, x)) return access_before(x, y);
        return x.k != y.k ? x.k < y.k : x.lane < y.lane;
    });
    for (size_t i = 0, j; i < block_recs.size(); i = j) {
        for (j = i + 1; j < block_recs.size() && same_access(block_recs[j], block_recs[i]) && block_recs[j].k == block_recs[i].k;)
            j++;
        add_group(&block_recs[i], j - i);
    }
    block_recs.clear();
}

/* ---- per source line and per kernel ---------------------------------------------------------------------- */

std::map<line_key, line_stats> by_line(void)
{
    std::vector<void *> pcs;
    for (auto &kv : sites) pcs.push_back(kv.first.pc);
    resolve_lines(pcs);
    std::map<line_key, line_stats> out;
    for (auto &kv : sites) {
        line_stats &s = out[line_key{kv.first.kernel, source_line(kv.first.pc), kv.first.shared, kv.first.store}];
        s.requests += kv.second.requests, s.bytes += kv.second.bytes;
        s.sectors += kv.second.sectors, s.wavefronts += kv.second.wavefronts;
    }
    return out;
}

double efficiency(const line_stats &s) { return s.sectors ? (double)s.bytes / (32.0 * s.sectors) : -1.0; }
double ways(const line_stats &s) { return s.requests ? (double)s.wavefronts / s.requests : -1.0; }

/* A kernel's figures: efficiencies over all its lines, bank ways of its worst line; -1 where none. */
emu_kernel_profile summary(const std::map<line_key, line_stats> &lines, const std::string &kernel)
{
    line_stats ld{0, 0, 0, 0}, st{0, 0, 0, 0};
    double worst = -1.0;
    for (auto &kv : lines) {
        if (kv.first.kernel != kernel) continue;
        if (kv.first.shared) { worst = std::max(worst, ways(kv.second)); continue; }
        line_stats &t = kv.first.store ? st : ld;
        t.bytes += kv.second.bytes, t.sectors += kv.second.sectors;
    }
    return emu_kernel_profile{efficiency(ld), efficiency(st), worst, runs.count(kernel) ? runs[kernel].launches : 0};
}

} /* namespace emu */

extern "C" void emu_profile_enable(int on)
{
    static int registered;
    if (on && !registered++) atexit(emu::profile_report);
    emu::enabled = on;
}

extern "C" int emu_profile_kernel(const char *kernel, emu_kernel_profile *out)
{
    if (!emu::runs.count(kernel)) return 0;
    *out = emu::summary(emu::by_line(), kernel);
    return 1;
}
