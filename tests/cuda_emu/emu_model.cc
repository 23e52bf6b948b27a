/* emu_model.cc - TEST-ONLY: what a launch does, observed for the GPU time model (EMU_GPU_MODEL=A6000|A100|H100|H200
 * or emu_model_enable; the formula is emu_gpu.cc's, the SASS mapping emu_sass.cc's).
 *
 * Every load and store the eyes see (emu_access.cc) is grouped into warp requests as the profile does (the k-th
 * execution of one source line's accesses of one kind by the lanes of a warp). Per request: the bytes one lane
 * moved, global memory's 32-byte sectors and 128-byte lines (L1 wavefronts: one per line), shared memory's bank
 * wavefronts and distinct words. Per block, its global requests in program order (a request's place: its
 * lanes' earliest access ordinal, warps interleaved) run through an L1 of the SM's L1 capacity shared by the
 * resident blocks (LRU over 128-byte lines with 32-byte sectors, stores written through), and what misses goes
 * on to the L2. The blocks of the first wave (SMs x resident blocks) are resident together: their L2 streams,
 * interleaved by progress, run through an L2 of the GPU's size, cold at the start of the wave; its misses are
 * the DRAM traffic of a wave, scaled to the grid by blocks.
 *
 * Sampling (EMU_MODEL_SAMPLE=1 / emu_model_enable(gpu, 1)): the blocks run are the first wave, the first block
 * of each edge role (last along x, y or z, and their combinations) and the last block. Each block's figures are
 * weighted by (blocks of its role in the grid) / (blocks of its role run), so every total is extrapolated to
 * the grid; the first wave carries the interior role. The kernel's output is then incomplete. */
#include "emu_model.h"
#include "emu_sched.h"

#include <algorithm>
#include <list>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unordered_map>

namespace emu {

int gpu_index(const char *name);                                           /* emu_gpu.cc */
double gpu_resident_blocks(int gpu, double threads, double regs, double smem); /* emu_gpu.cc */
void gpu_caches(int gpu, double *sms, double *l1_smem_bytes, double *l2_bytes); /* emu_gpu.cc */

struct rec {
    uint32_t warp, lane, k, ord, line;
    uintptr_t addr;
    uint32_t size;
    int kind; /* mem_kind, or MK_KINDS for an atomic */
};

static int model_gpu = -1, sampling; /* sampling: 0 every block, 1 the first wave and the edges, 2 as 1 with
                                        * at most WAVE_SAMPLE blocks of the first wave */
static const int WAVE_SAMPLE = 32;
static std::vector<rec> &recs = *new std::vector<rec>;          /* the ending block's, in model_block_end */
static double hopper_shared_wf; /* the launch's shared wavefronts of TMA writes and wgmma operand reads */
static std::vector<uint32_t> &ordinal = *new std::vector<uint32_t>;
/* Each running block's accesses and barriers until it ends: blocks run one after another, except a cooperative
 * launch's, which are all resident and interleave at grid.sync() (thread ids repeat between blocks). A block the
 * sample leaves out (a cooperative launch runs every block) is not recorded. */
/* a TMA box (model_tma): where it falls in the issuing thread's program order, the 32-byte sectors it reads
 * from global memory, the bytes it writes to shared memory */
struct tma_box {
    uint32_t ord;
    std::vector<uint64_t> sectors;
    double bytes;
};
struct block_state {
    std::vector<rec> recs;
    std::vector<uint32_t> ordinal;
    double barriers = 0.0;
    std::vector<uint64_t> stream; /* its L2 sectors of the segments before the last grid.sync (model_block_park) */
    std::vector<tma_box> tma;     /* its TMA boxes since it began or since its last grid.sync */
};
static std::vector<tma_box> &tma_boxes = *new std::vector<tma_box>; /* the ending block's TMA boxes */
static std::unordered_map<size_t, block_state> &live = *new std::unordered_map<size_t, block_state>;
static size_t live_b = (size_t)-1;
static block_state *live_bs;
static std::unordered_map<void *, uint32_t> &line_id = *new std::unordered_map<void *, uint32_t>;
static std::vector<std::string> &line_names = *new std::vector<std::string>;
static std::map<std::string, line_use> &use = *new std::map<std::string, line_use>;
static std::vector<std::vector<uint64_t>> &wave_streams = *new std::vector<std::vector<uint64_t>>;
static std::unordered_map<size_t, double> &weight_of = *new std::unordered_map<size_t, double>;
static emu_model_counts cur, last;
/* cur's and last's warp paths on the latency grid (emu_model.h) */
static double cur_path_grid[PATH_GRID], last_path_grid[PATH_GRID];
static int have_last;
static double resident, wave_blocks, l1_cap, l2_cap, block_barriers;
static const launch_cfg *running;

/* Thread executions of each basic block of the kernels' code during the launch the model observes, weighted as
 * its block's accesses are (a sampled block stands for its role): -fsanitize-coverage=trace-pc makes GCC call
 * __sanitizer_cov_trace_pc at the start of every basic block of the .cu objects. The SASS fit (sass_map) sees
 * only code that moves memory; these counts bound the code that does not (emu_sass.cc). */
static std::unordered_map<void *, double> &block_runs = *new std::unordered_map<void *, double>;
static size_t runs_b = (size_t)-1;
static double runs_w;

static void read_env(void)
{
    static int done;
    if (done++) return;
    const char *g = getenv("EMU_GPU_MODEL");
    if (g && *g) {
        model_gpu = gpu_index(g);
        if (model_gpu < 0) fprintf(stderr, "cuda-emu: EMU_GPU_MODEL=%s: unknown GPU (A6000, A100, H100, H200)\n", g);
    }
    const char *s = getenv("EMU_MODEL_SAMPLE");
    sampling = s && atoi(s);
}

int model_on(void) { return read_env(), model_gpu >= 0; }

void model_last_path_grid(double *grid)
{
    for (int g = 0; g < PATH_GRID; g++) grid[g] = have_last ? last_path_grid[g] : 0.0;
}

static size_t block_linear(void) { return blockIdx.x + (size_t)gridDim.x * (blockIdx.y + (size_t)gridDim.y * blockIdx.z); }

/* 0..7: last along x (1), y (2), z (4) -- edges are where bounds checks bite */
static int role_of(size_t b, dim3 g)
{
    size_t x = b % g.x, y = b / g.x % g.y, z = b / ((size_t)g.x * g.y);
    return (x == g.x - 1) | (y == g.y - 1) << 1 | (z == g.z - 1) << 2;
}

static double role_count(int r, dim3 g)
{
    return (double)(r & 1 ? 1 : g.x - 1) * (r & 2 ? 1 : g.y - 1) * (r & 4 ? 1 : g.z - 1);
}

/* The blocks a launch runs under the model (all of them without sampling), with their weights. */
std::vector<size_t> model_blocks(const launch_cfg &cfg)
{
    std::vector<size_t> order;
    size_t nb = (size_t)cfg.grid.x * cfg.grid.y * cfg.grid.z;
    weight_of.clear();
    if (!sampling) {
        for (size_t i = 0; i < nb; i++) order.push_back(i), weight_of[i] = 1.0;
        return order;
    }
    std::vector<int> taken(8, 0);
    auto take = [&](size_t b) {
        if (weight_of.count(b)) return;
        order.push_back(b), weight_of[b] = 0.0, taken[role_of(b, cfg.grid)]++;
    };
    /* sampling 2 (the lessons' EMU_PREDICT): at most WAVE_SAMPLE blocks of the first wave, evenly spaced; the L2
     * they see is their share of it (l2_wave) */
    size_t wave = std::min(nb, (size_t)wave_blocks), step_n = sampling == 2 ? std::min(wave, (size_t)WAVE_SAMPLE) : wave;
    for (size_t j = 0; j < step_n; j++) take(j * wave / step_n);
    for (int r = 1; r < 8; r++) { /* the first block of each edge role */
        size_t x0 = r & 1 ? cfg.grid.x - 1 : 0, y0 = r & 2 ? cfg.grid.y - 1 : 0, z0 = r & 4 ? cfg.grid.z - 1 : 0;
        if (role_count(r, cfg.grid) > 0) take(x0 + cfg.grid.x * (y0 + (size_t)cfg.grid.y * z0));
    }
    take(nb - 1);
    for (size_t b : order) weight_of[b] = role_count(role_of(b, cfg.grid), cfg.grid) / taken[role_of(b, cfg.grid)];
    return order;
}

void model_new_launch(const launch_cfg &cfg)
{
    running = &cfg;
    block_runs.clear(), runs_b = (size_t)-1;
    memset(&cur, 0, sizeof cur);
    hopper_shared_wf = 0.0;
    for (double &g : cur_path_grid) g = 0.0;
    snprintf(cur.kernel, sizeof cur.kernel, "%s", cfg.name);
    use.clear(), wave_streams.clear(), live.clear(), live_b = (size_t)-1;
    double threads = (double)cfg.block.x * cfg.block.y * cfg.block.z;
    const sass_kernel *k = sass_find(function_symbol(cfg.kernel));
    cur.found_sass = k != NULL;
    cur.regs = k ? k->regs : 32;
    cur.static_smem = k ? (double)k->static_smem : 0.0;
    cur.dynamic_smem = (double)cfg.smem;
    cur.threads_per_block = threads;
    cur.blocks = (double)cfg.grid.x * cfg.grid.y * cfg.grid.z;
    cur.warps = cur.blocks * ceil(threads / 32.0);
    double sms, l1_smem;
    gpu_caches(model_gpu, &sms, &l1_smem, &l2_cap);
    resident = gpu_resident_blocks(model_gpu, threads, cur.regs, cur.static_smem + cur.dynamic_smem);
    if (resident < 1) resident = 1;
    wave_blocks = sms * resident;
    double smem_used = resident * (cur.static_smem + cur.dynamic_smem);
    l1_cap = std::max(16384.0, l1_smem - smem_used) / resident;
}

void model_access(const access &a, int shared)
{
    size_t b = block_linear();
    if (b != live_b) {
        if (sampling && !weight_of.count(b)) return;
        live_b = b, live_bs = &live[b];
    }
    std::vector<uint32_t> &ord = live_bs->ordinal;
    if (a.tid >= ord.size()) ord.resize(a.tid + 1, 0);
    auto it = line_id.find(a.pc);
    uint32_t id;
    if (it == line_id.end()) {
        id = (uint32_t)line_names.size();
        line_id[a.pc] = id;
        line_names.push_back(""); /* resolved at block end, in one addr2line */
    } else id = it->second;
    int kind = a.kind == ACC_ATOMIC ? MK_KINDS : shared ? (a.kind == ACC_WRITE ? MK_SST : MK_SLD)
                                                        : (a.kind == ACC_WRITE ? MK_GST : MK_GLD);
    if (a.kind == ACC_ATOMIC && shared) return;
    live_bs->recs.push_back(rec{a.tid / 32, a.tid % 32, 0, ord[a.tid]++, id, a.addr, a.size, kind});
}

void model_barrier(void)
{
    size_t b = block_linear();
    if (sampling && !weight_of.count(b)) return;
    live[b].barriers++;
    live_b = (size_t)-1; /* live may have grown */
}

static std::vector<std::string> &names_by_id = *new std::vector<std::string>;
static const std::string &name_string(uint32_t id) { return names_by_id[id]; }

static void resolve_names(void)
{
    std::vector<void *> fresh;
    for (auto &kv : line_id)
        if (line_names[kv.second].empty()) fresh.push_back(kv.first);
    if (fresh.empty()) return;
    resolve_lines(fresh);
    for (void *pc : fresh) line_names[line_id[pc]] = line_key_of(source_line(pc));
}

/* An LRU cache of 128-byte lines holding 32-byte sectors; access() answers hit or miss per sector. */
struct sector_cache {
    double cap_lines;
    std::list<uint64_t> lru;
    struct entry {
        std::list<uint64_t>::iterator pos;
        unsigned valid, dirty;
    };
    std::unordered_map<uint64_t, entry> map;
    unsigned long long evicted_dirty = 0;
    explicit sector_cache(double bytes) : cap_lines(std::max(1.0, bytes / 128.0)) {}
    /* sector: address >> 5; returns 1 on a hit */
    int touch(uint64_t sector, int store)
    {
        uint64_t line = sector >> 2;
        unsigned bit = 1u << (sector & 3);
        auto it = map.find(line);
        if (it != map.end()) {
            lru.splice(lru.begin(), lru, it->second.pos);
            int hit = (it->second.valid & bit) != 0;
            it->second.valid |= bit;
            if (store) it->second.dirty |= bit;
            return hit;
        }
        if ((double)map.size() >= cap_lines) {
            uint64_t old = lru.back();
            evicted_dirty += __builtin_popcount(map[old].dirty);
            map.erase(old), lru.pop_back();
        }
        lru.push_front(line);
        map[line] = entry{lru.begin(), bit, store ? bit : 0u};
        return 0;
    }
    unsigned long long dirty_left(void) const
    {
        unsigned long long n = 0;
        for (auto &kv : map) n += __builtin_popcount(kv.second.dirty);
        return n;
    }
};

static bool same_group(const rec &x, const rec &y) { return x.warp == y.warp && x.line == y.line && x.kind == y.kind; }

struct request {
    uint32_t ord, warp;
    size_t first, n; /* into recs */
    int kind;
};

/* GCC splits a float2 or float4 copy into its fields (the emulator then sees 4-byte accesses), where nvcc loads or
 * stores it with one LDS.64/.128 or STS.64/.128: the bank wavefronts of the split accesses are not the
 * instruction's (a conflict-free 16-byte load of a quarter-warp's 2 rows reads, split, as four 4-way conflicts).
 * So on a line where the running kernel's SASS moves W bytes per lane with each shared-memory instruction and the
 * emulator saw accesses of W / R bytes, each lane's R consecutive accesses there that are contiguous and W-aligned
 * become one of W bytes (wide_bytes), numbered anew (k). rs: sorted by warp, line, kind, k, lane; re-sorted so. */
static void widen_shared(std::vector<rec> &rs)
{
    static const launch_cfg *looked_up;
    static const sass_kernel *sk;
    if (running != looked_up) sk = running ? sass_find(function_symbol(running->kernel)) : NULL, looked_up = running;
    if (!sk) return;
    std::map<std::pair<uint32_t, int>, double> width; /* (line id, kind): SASS bytes per lane and instruction */
    std::vector<rec> out, lane_recs[32];
    out.reserve(rs.size());
    for (size_t i = 0, j; i < rs.size(); i = j) {
        for (j = i + 1; j < rs.size() && rs[j].warp == rs[i].warp && rs[j].line == rs[i].line && rs[j].kind == rs[i].kind;)
            j++;
        int kind = rs[i].kind;
        double wide_bytes = 0.0;
        if (kind == MK_SLD || kind == MK_SST) {
            auto key = std::make_pair(rs[i].line, kind);
            auto it = width.find(key);
            if (it == width.end()) it = width.emplace(key, sass_bytes_per_inst(*sk, name_string(rs[i].line), kind)).first;
            wide_bytes = it->second;
        }
        uint32_t size = rs[i].size, R = wide_bytes > size && size > 0 ? (uint32_t)(wide_bytes / size) : 1;
        bool uniform = R > 1 && R * size == (uint32_t)wide_bytes;
        for (size_t q = i; uniform && q < j; q++) uniform = rs[q].size == size;
        if (!uniform) {
            out.insert(out.end(), rs.begin() + (long)i, rs.begin() + (long)j);
            continue;
        }
        for (auto &l : lane_recs) l.clear();
        for (size_t q = i; q < j; q++) lane_recs[rs[q].lane % 32].push_back(rs[q]); /* each lane's, in k order */
        size_t first = out.size();
        for (auto &l : lane_recs) {
            uint32_t k = 0;
            for (size_t q = 0; q < l.size(); k++) {
                rec m = l[q];
                bool merge = q + R <= l.size() && m.addr % (uintptr_t)wide_bytes == 0;
                for (uint32_t e = 1; merge && e < R; e++) merge = l[q + e].addr == m.addr + (uintptr_t)e * size;
                if (merge) {
                    for (uint32_t e = 1; e < R; e++) m.ord = std::min(m.ord, l[q + e].ord);
                    m.size = (uint32_t)wide_bytes, q += R;
                } else {
                    q++;
                }
                m.k = k;
                out.push_back(m);
            }
        }
        std::sort(out.begin() + (long)first, out.end(),
                  [](const rec &a, const rec &b) { return a.k != b.k ? a.k < b.k : a.lane < b.lane; });
    }
    rs.swap(out);
}

/* ---- sm_90a's asynchronous layer (emu_hopper.cc calls these; README "wgmma and TMA") ---- The emulator
 * executes wgmma and the TMA in its own uninstrumented code, so the eyes see neither: what they do is handed
 * over here, exactly, per operation. A wgmma.mma_async is tensor-pipe work of the SM (its FLOP, priced in
 * emu_gpu.cc at the datasheet's tensor rate) and reads its operands A (64 rows) and B (N rows) of 32 bytes of
 * K each from shared memory: bank wavefronts of 128 bytes, no register traffic. A TMA box is one request of
 * one thread: the sectors of its rows inside the tensor go to the L2 (the TMA does not allocate in L1) in the
 * block's L2 stream, so the L2 and DRAM model sees them as it sees every other global load; the whole box,
 * zero fill included (the bytes complete_tx counts), is written to shared memory. */
static double block_weight(size_t b, int *skip)
{
    auto it = weight_of.find(b);
    *skip = it == weight_of.end() && sampling;
    return it == weight_of.end() ? 1.0 : it->second;
}

void model_wgmma(int tf32, double flop, double smem_bytes)
{
    int skip;
    double w = block_weight(block_linear(), &skip);
    if (skip) return;
    (tf32 ? cur.wgmma_flop_tf32 : cur.wgmma_flop16) += w * flop;
    hopper_shared_wf += w * smem_bytes / 128.0;
}

void model_tma(unsigned tid, double box_bytes, const uintptr_t *lo, const uintptr_t *hi, size_t rows)
{
    size_t b = block_linear();
    if (b != live_b) {
        if (sampling && !weight_of.count(b)) return;
        live_b = b, live_bs = &live[b];
    }
    std::vector<uint32_t> &ord = live_bs->ordinal;
    if (tid >= ord.size()) ord.resize(tid + 1, 0);
    tma_box box{ord[tid]++, {}, box_bytes};
    for (size_t r = 0; r < rows; r++)
        for (uintptr_t s = lo[r] >> 5; hi[r] > lo[r] && s <= (hi[r] - 1) >> 5; s++) box.sectors.push_back(s);
    live_bs->tma.push_back(std::move(box));
}

/* one box of the ending block (weight w) into its L2 stream */
static void tma_to_l2(const tma_box &box, double w, std::vector<uint64_t> &stream)
{
    for (uint64_t s : box.sectors) stream.push_back(s << 1);
    cur.l2_read_sectors += w * (double)box.sectors.size();
    cur.tma_bytes += w * box.bytes;
    hopper_shared_wf += w * box.bytes / 128.0;
}

/* recs and ordinal, the block's accesses since it began or since its last grid.sync, as warp requests: each
 * request's wavefronts into use, its global sectors through an L1 that starts cold, the misses appended to stream
 * (the block's L2 stream); recs and ordinal emptied. w: the block's weight in the sample. */
static void block_requests(double w, std::vector<uint64_t> &stream)
{
    resolve_names();
    /* each access's source line (a line id shared by every pc on it), then k: the lane's how-many-th access of
     * this kind on this line, counted in its program order (recs holds each thread's accesses in order) */
    static std::vector<uint32_t> name_of_pc, counters;
    static std::map<std::string, uint32_t> name_ids;
    for (size_t i = name_of_pc.size(); i < line_names.size(); i++) name_of_pc.push_back(0);
    for (size_t i = 0; i < line_names.size(); i++)
        name_of_pc[i] = name_ids.emplace(line_names[i], (uint32_t)name_ids.size()).first->second;
    names_by_id.resize(name_ids.size());
    for (auto &kv : name_ids) names_by_id[kv.second] = kv.first;
    size_t nthreads = ordinal.size(), nnames = name_ids.size();
    counters.assign(nthreads * nnames * (MK_KINDS + 1), 0);
    struct keyed {
        uint64_t key;
        uint32_t idx;
        bool operator<(const keyed &o) const { return key < o.key; }
    };
    std::vector<keyed> keys(recs.size());
    for (size_t i = 0; i < recs.size(); i++) {
        rec &r = recs[i];
        r.line = name_of_pc[r.line];
        r.k = counters[((size_t)(r.warp * 32 + r.lane) * nnames + r.line) * (MK_KINDS + 1) + (size_t)r.kind]++;
        /* warp 6 bits, line 16, kind 3, k 34, lane 5 */
        keys[i] = keyed{(uint64_t)r.warp << 58 | (uint64_t)(r.line & 0xffff) << 42 | (uint64_t)r.kind << 39 |
                            (uint64_t)(r.k & 0x3ffffffffull) << 5 | r.lane,
                        (uint32_t)i};
    }
    std::sort(keys.begin(), keys.end());
    {
        std::vector<rec> sorted(recs.size());
        for (size_t i = 0; i < keys.size(); i++) sorted[i] = recs[keys[i].idx];
        recs.swap(sorted);
    }
    widen_shared(recs);
    std::vector<request> global;
    std::vector<uint64_t> tmp;
    for (size_t i = 0, j; i < recs.size(); i = j) {
        for (j = i + 1; j < recs.size() && same_group(recs[j], recs[i]) && recs[j].k == recs[i].k;) j++;
        const rec *r = &recs[i];
        size_t n = j - i;
        int kind = r->kind;
        uint32_t ord = r->ord;
        double bytes = 0.0;
        unsigned lanes = 0, prev_lane = 99;
        for (size_t q = 0; q < n; q++) {
            bytes += r[q].size, ord = std::min(ord, r[q].ord);
            if (r[q].lane != prev_lane) lanes++, prev_lane = r[q].lane;
        }
        if (kind == MK_KINDS) { /* an atomic: L2 traffic only */
            global.push_back(request{ord, r->warp, i, n, kind});
            continue;
        }
        line_use &u = use[name_string(r->line)];
        u.lane_bytes[kind] += w * bytes / lanes;
        u.requests[kind] += w;
        if (kind == MK_SLD || kind == MK_SST) {
            /* per phase (whole, half or quarter warp): the most distinct words in one bank; no heap here */
            unsigned per_phase = r->size > 8 ? 8 : r->size > 4 ? 16 : 32;
            double wf = 0.0;
            uint64_t words[32 * 4 + 4]; /* bank << 58 | word, at most 32 lanes x 4 words */
            uint64_t all[32 * 4 + 4];
            size_t na = 0;
            for (unsigned ph = 0; ph < 32 / per_phase; ph++) {
                size_t nw = 0;
                for (size_t q = 0; q < n; q++) {
                    if (r[q].lane / per_phase != ph) continue;
                    for (uintptr_t a = r[q].addr >> 2; a <= (r[q].addr + r[q].size - 1) >> 2 && nw < 128; a++)
                        words[nw++] = (uint64_t)(a % 32) << 58 | (a & ((1ull << 58) - 1)), all[na < 128 ? na++ : na] = a;
                }
                std::sort(words, words + nw);
                size_t most = 0, run = 0;
                for (size_t q = 0; q < nw; q++) {
                    if (q && words[q] == words[q - 1]) continue;
                    run = q && (words[q] >> 58) == (words[q - 1] >> 58) ? run + 1 : 1;
                    most = std::max(most, run);
                }
                wf += (double)most;
            }
            std::sort(all, all + na);
            double uniq = 4.0 * (double)(std::unique(all, all + na) - all);
            u.wavefronts[kind] += w * wf, u.unique_bytes[kind] += w * uniq;
        } else {
            tmp.clear();
            for (size_t q = 0; q < n; q++)
                for (uintptr_t s = r[q].addr >> 7; s <= (r[q].addr + r[q].size - 1) >> 7; s++) tmp.push_back(s);
            std::sort(tmp.begin(), tmp.end());
            double lines = (double)(std::unique(tmp.begin(), tmp.end()) - tmp.begin());
            u.wavefronts[kind] += w * lines;
            global.push_back(request{ord, r->warp, i, n, kind});
        }
    }
    /* L1 per block, requests in program order, warps interleaved */
    std::sort(global.begin(), global.end(), [](const request &x, const request &y) {
        return x.ord != y.ord ? x.ord < y.ord : x.warp < y.warp;
    });
    sector_cache l1(l1_cap);
    double hits = 0, l2r = 0, l2w = 0;
    size_t next_box = 0; /* the block's TMA boxes join its L2 stream in program order (tma_to_l2) */
    std::stable_sort(tma_boxes.begin(), tma_boxes.end(),
                     [](const tma_box &x, const tma_box &y) { return x.ord < y.ord; });
    for (const request &q : global) {
        for (; next_box < tma_boxes.size() && tma_boxes[next_box].ord <= q.ord; next_box++)
            tma_to_l2(tma_boxes[next_box], w, stream);
        tmp.clear();
        for (size_t x = q.first; x < q.first + q.n; x++)
            for (uintptr_t s = recs[x].addr >> 5; s <= (recs[x].addr + recs[x].size - 1) >> 5; s++) tmp.push_back(s);
        std::sort(tmp.begin(), tmp.end());
        tmp.erase(std::unique(tmp.begin(), tmp.end()), tmp.end());
        for (uint64_t s : tmp) {
            if (q.kind == MK_GLD) {
                if (l1.touch(s, 0)) { hits++; continue; }
                l2r++, stream.push_back(s << 1);
            } else l2w++, stream.push_back(s << 1 | 1);
        }
    }
    for (; next_box < tma_boxes.size(); next_box++) tma_to_l2(tma_boxes[next_box], w, stream);
    cur.l1_hit_sectors += w * hits, cur.l2_read_sectors += w * l2r, cur.l2_write_sectors += w * l2w;
    recs.clear(), ordinal.clear(), tma_boxes.clear();
}

void model_block_end(void)
{
    size_t b = block_linear();
    live_b = (size_t)-1;
    if (sampling && !weight_of.count(b)) return;
    std::vector<uint64_t> stream;
    {
        block_state &bs = live[b];
        recs.swap(bs.recs), ordinal.swap(bs.ordinal), stream.swap(bs.stream), block_barriers = bs.barriers;
        tma_boxes.swap(bs.tma);
        live.erase(b);
    }
    double w = weight_of.count(b) ? weight_of[b] : 1.0;
    block_requests(w, stream);
    cur.barriers += w * block_barriers;
    cur.blocks_run++;
    if ((double)b < wave_blocks) wave_streams.push_back(std::move(stream));
    block_barriers = 0;
}

/* A block of a cooperative launch waits at a grid.sync: its accesses so far become requests now, so a persistent
 * kernel's block keeps one segment's records at a time (all T steps of lesson 4's at the medium size outgrew this
 * machine's memory). Its L1 starts cold after the grid.sync, as on the GPU: the grid.sync's GPU-scope fence must
 * make the other SMs' writes visible, which a non-coherent L1 could hold stale copies of. */
void model_block_park(void)
{
    size_t b = block_linear();
    live_b = (size_t)-1;
    if (sampling && !weight_of.count(b)) return;
    block_state &bs = live[b];
    recs.swap(bs.recs), ordinal.swap(bs.ordinal), tma_boxes.swap(bs.tma);
    block_requests(weight_of.count(b) ? weight_of[b] : 1.0, bs.stream);
}

/* The first wave's L2 streams, interleaved by progress, through the L2: DRAM sectors of a wave, to the grid. */
static void l2_wave(void)
{
    double wave = std::min(wave_blocks, cur.blocks);
    sector_cache l2(wave_streams.size() < wave ? l2_cap * (double)wave_streams.size() / wave : l2_cap);
    size_t longest = 0;
    double total = 0;
    for (auto &s : wave_streams) longest = std::max(longest, s.size()), total += (double)s.size();
    if (!longest) return;
    std::vector<size_t> at(wave_streams.size(), 0);
    double misses = 0, hits = 0;
    for (size_t step = 1; step <= longest; step++)
        for (size_t i = 0; i < wave_streams.size(); i++) {
            std::vector<uint64_t> &s = wave_streams[i];
            size_t upto = (size_t)((double)s.size() * step / longest);
            for (; at[i] < upto; at[i]++) {
                uint64_t e = s[at[i]];
                int hit = l2.touch(e >> 1, (int)(e & 1));
                if (!(e & 1)) (hit ? hits : misses)++;
            }
        }
    double written = (double)(l2.evicted_dirty + l2.dirty_left());
    double wave_traffic = cur.l2_read_sectors + cur.l2_write_sectors; /* of the grid */
    double scale = total > 0 ? wave_traffic / total : 0.0;
    cur.dram_sectors = (misses + written) * scale;
    cur.l2_hit_sectors = hits * scale;
}

/* at exit, with EMU_GPU_MODEL set: per kernel, its launches' predicted time on the GPU (a model) */
struct kernel_total {
    unsigned long long launches;
    double seconds, flops;
    std::map<std::string, double> by_limiter;
};
static std::map<std::string, kernel_total> &totals = *new std::map<std::string, kernel_total>;

static void print_totals(void)
{
    if (totals.empty() || model_gpu < 0) return;
    const char *gpu = emu_model_gpu_name(model_gpu);
    fprintf(stderr, "cuda-emu time model on %s (a MODEL, not a measurement; README \"The time model\"):\n", gpu);
    for (auto &kv : totals) {
        const kernel_total &t = kv.second;
        std::string lim;
        double most = -1.0;
        for (auto &l : t.by_limiter)
            if (l.second > most) most = l.second, lim = l.first;
        fprintf(stderr, "  %-40s %6llu launches  %10.3f us predicted  limiter %s  %.1f GFLOP/s (FP32 lanes x 2)\n",
                kv.first.c_str(), t.launches, t.seconds * 1e6, lim.c_str(), t.seconds > 0 ? t.flops / t.seconds / 1e9 : 0.0);
    }
}

/* emu_model_window_begin/end: the predictions of a stretch of host code, summed */
struct window_state {
    int on, gpu;
    emu_model_window w;
    std::map<std::string, double> by_limiter;
    std::map<std::string, emu_model_prediction> seen; /* kernel and configuration -> its prediction */
};
static window_state &win = *new window_state;

/* EMU_MODEL_RECORD=file: the window's events in order -- each launch's counts, each launch predicted again, each
 * cuBLAS call -- written at the window's end (emu_model_record.cc), for predict_extrapolate */
static std::vector<std::string> &recorded = *new std::vector<std::string>;
static std::map<std::string, size_t> &recorded_at = *new std::map<std::string, size_t>; /* config -> event */

static std::string config_key(const launch_cfg &cfg)
{
    char k[96];
    snprintf(k, sizeof k, "|%u,%u,%u|%u,%u,%u|%zu", cfg.grid.x, cfg.grid.y, cfg.grid.z, cfg.block.x, cfg.block.y,
             cfg.block.z, cfg.smem);
    return std::string(cfg.name) + k;
}

static void window_add(const emu_model_prediction &p, int gemm)
{
    win.w.seconds += p.seconds, win.w.ideal_seconds += p.roofline_fraction * p.seconds;
    win.by_limiter[p.limiter] += p.seconds;
    (gemm ? win.w.gemms : win.w.launches)++;
}

int model_window_reuse(const launch_cfg &cfg)
{
    if (!win.on || !sampling) return 0;
    auto it = win.seen.find(config_key(cfg));
    if (it == win.seen.end()) return 0;
    window_add(it->second, 0);
    win.w.reused++;
    recorded.push_back(record_again(recorded_at[config_key(cfg)]));
    return 1;
}

int model_window_one_pass(void) { return win.on && sampling; }
int model_window_on(void) { return win.on; }

void model_gemm(double m, double n, double k, double batch, int elem_bytes, int tensor)
{
    if (model_gpu < 0 || (!win.on && !getenv("EMU_GPU_MODEL"))) return;
    emu_model_prediction p;
    if (!emu_model_predict_gemm(emu_model_gpu_name(model_gpu), m, n, k, batch, elem_bytes, tensor, &p)) return;
    if (win.on) window_add(p, 1), recorded.push_back(record_gemm(m, n, k, batch, elem_bytes, tensor));
    else {
        static int registered;
        if (!registered++) atexit(print_totals);
        kernel_total &t = totals[tensor ? "cuBLAS GEMM (tensor cores, stated efficiency)" : "cuBLAS GEMM (stated efficiency)"];
        t.launches++, t.seconds += p.seconds, t.flops += 2.0 * m * n * k * batch, t.by_limiter[p.limiter] += p.seconds;
    }
}

/* Per source line, the warp executions of the most-run of GCC's basic blocks that start on it (block_runs) */
static std::map<std::string, double> line_runs(double threads_per_block)
{
    std::vector<void *> pcs;
    for (auto &kv : block_runs) pcs.push_back(kv.first);
    resolve_lines(pcs);
    std::map<std::string, double> runs;
    double lanes = std::min(32.0, std::max(1.0, threads_per_block));
    for (auto &kv : block_runs) {
        double &r = runs[line_key_of(source_line(kv.first))];
        r = std::max(r, kv.second / lanes);
    }
    return runs;
}

/* EMU_MODEL_DEBUG=2: each launch's counts (per warp of the grid) and every bound, to see what a kernel spends */
static void debug_launch(const emu_model_counts &c, const emu_model_prediction &p)
{
    static int level = getenv("EMU_MODEL_DEBUG") ? atoi(getenv("EMU_MODEL_DEBUG")) : 0;
    if (level < 2) return;
    static const char *pipes[EMU_PIPES] = {"fp32", "fp64", "imad", "alu", "sfu", "mma16", "tf32", "lsu", "ctrl",
                                           "tf32k8"};
    double w = std::max(1.0, c.warps);
    fprintf(stderr, "model: %s %.0f blocks x %.0f threads, %.0f regs, %.0f B smem, %.0f resident; per warp:",
            c.kernel, c.blocks, c.threads_per_block, c.regs, c.static_smem + c.dynamic_smem, p.resident_blocks);
    for (int i = 0; i < EMU_PIPES; i++)
        if (i != EMU_PIPE_MMA_TF32_K8 || c.inst[i] > 0) /* (the mma.sync pipe only where a kernel has one) */
            fprintf(stderr, " %s %.0f", pipes[i], c.inst[i] / w);
    fprintf(stderr, "; issue path %.0f cycles, waits %.1f, shared wavefronts %.0f, L1 wavefronts %.0f, barriers per "
            "block %.0f\nmodel:   bounds us:", c.warp_path_clk / w, c.global_waits / w, c.shared_wavefronts / w,
            c.l1_wavefronts / w, c.barriers / std::max(1.0, c.blocks));

    for (int i = 0; i < p.nbounds; i++) fprintf(stderr, " %s %.3f", emu_model_bound_name(i), p.bound_s[i] * 1e6);
    fprintf(stderr, "\n");
    if (c.wgmma_flop16 > 0 || c.wgmma_flop_tf32 > 0 || c.tma_bytes > 0)
        fprintf(stderr, "model:   sm_90a: wgmma GFLOP %.4g (16-bit) %.4g (tf32), TMA boxes %.4g MB\n",
                c.wgmma_flop16 / 1e9, c.wgmma_flop_tf32 / 1e9, c.tma_bytes / 1e6);
}

void model_grid_end(void)
{
    if (!running) return;
    l2_wave();
    double l1w = 0.0, smw = 0.0;
    const sass_kernel *found = sass_find(function_symbol(running->kernel));
    sass_kernel resolved;
    if (found) resolved = sass_resolve_generic(*found, use);
    const sass_kernel *k = found ? &resolved : NULL;
    for (auto &u : use) {
        l1w += u.second.wavefronts[MK_GLD] + u.second.wavefronts[MK_GST];
        smw += u.second.wavefronts[MK_SLD] + u.second.wavefronts[MK_SST];
    }
    cur.l1_wavefronts = l1w;
    for (auto &u : use) cur.global_requests += u.second.requests[MK_GLD] + u.second.requests[MK_GST];
    if (k) {
        std::map<std::string, double> runs = line_runs(running->block.x * running->block.y * running->block.z);
        if (!runs.empty()) win.w.counted = 1;
        cur.fit_residual =
            sass_map(*k, use, cur.warps, cur.inst, &cur.global_waits, &runs, &cur.warp_path_clk, cur_path_grid);
        /* shared wavefronts per SASS instruction: where nvcc merged several requests into one wider
         * instruction (4 LDS.32 -> 1 LDS.128), the wider one needs at least its distinct bytes / 128 */
        double merged = 0.0;
        for (auto &u : use)
            for (int kd : {MK_SLD, MK_SST}) {
                const line_use &x = u.second;
                if (x.requests[kd] <= 0) continue;
                double per_req = x.wavefronts[kd] / x.requests[kd], uniq = x.unique_bytes[kd] / x.requests[kd];
                double lane_per_req = x.lane_bytes[kd] / x.requests[kd];
                double sass_lane = sass_bytes_per_inst(*k, u.first, kd), merge = 1.0;
                if (sass_lane > lane_per_req && lane_per_req > 0) merge = sass_lane / lane_per_req;
                /* NVIDIA's rule for wide accesses: 64-bit ones are processed per half-warp, 128-bit ones per
                 * quarter-warp, one wavefront at least per phase */
                double phases = sass_lane > 8 ? 4.0 : sass_lane > 4 ? 2.0 : 1.0;
                merged += x.requests[kd] / merge * std::max(std::max(per_req, phases), merge * uniq / 128.0);
            }
        smw = merged;
    } else {
        for (auto &u : use)
            for (int kd = 0; kd < MK_KINDS; kd++) cur.inst[EMU_PIPE_LSU] += u.second.requests[kd];
    }
    cur.shared_wavefronts = smw + hopper_shared_wf; /* the Hopper layer's (model_wgmma, tma_to_l2) */
    last = cur, have_last = 1;
    for (int g = 0; g < PATH_GRID; g++) last_path_grid[g] = cur_path_grid[g];
    if (win.on) {
        emu_model_prediction p;
        if (emu_model_predict(&cur, emu_model_gpu_name(model_gpu), 64.0 * cur.inst[EMU_PIPE_FP32], &p)) {
            debug_launch(cur, p);
            window_add(p, 0);
            win.seen[config_key(*running)] = p;
            recorded_at[config_key(*running)] = recorded.size();
            recorded.push_back(record_launch(cur, cur_path_grid));
        }
    } else if (!sampling && getenv("EMU_GPU_MODEL")) { /* a whole program under the model: sum its launches */
        static int registered;
        if (!registered++) atexit(print_totals);
        emu_model_prediction p;
        double flops = 64.0 * cur.inst[EMU_PIPE_FP32];
        if (emu_model_predict(&cur, emu_model_gpu_name(model_gpu), flops, &p)) {
            debug_launch(cur, p);
            kernel_total &t = totals[running->name];
            t.launches++, t.seconds += p.seconds, t.flops += flops, t.by_limiter[p.limiter] += p.seconds;
        }
    }
    running = NULL;
}

} /* namespace emu */

extern "C" int emu_model_enable(const char *gpu, int sample)
{
    emu::read_env();
    emu::model_gpu = gpu ? emu::gpu_index(gpu) : -1;
    emu::sampling = sample;
    return emu::model_gpu >= 0 || !gpu;
}

extern "C" int emu_model_last(emu_model_counts *out)
{
    if (!emu::have_last) return 0;
    *out = emu::last;
    return 1;
}

extern "C" int emu_model_window_begin(const char *gpu, int sample)
{
    if (!emu_model_enable(gpu, sample) || !gpu) return 0;
    emu::win.on = 1, emu::win.gpu = emu::model_gpu;
    memset(&emu::win.w, 0, sizeof emu::win.w);
    emu::win.by_limiter.clear(), emu::win.seen.clear();
    emu::recorded.clear(), emu::recorded_at.clear();
    return 1;
}

extern "C" int emu_model_window_end(emu_model_window *out)
{
    if (!emu::win.on) return 0;
    emu::win.on = 0;
    *out = emu::win.w;
    double most = -1.0;
    for (auto &l : emu::win.by_limiter)
        if (l.second > most) most = l.second, snprintf(out->limiter, sizeof out->limiter, "%s", l.first.c_str());
    out->limiter_share = out->seconds > 0 ? most / out->seconds : 0.0;
    const char *path = getenv("EMU_MODEL_RECORD");
    if (path && *path && !emu::record_write(path, emu::win.gpu, emu::recorded))
        fprintf(stderr, "cuda-emu: EMU_MODEL_RECORD=%s: cannot write it\n", path);
    emu_model_enable(NULL, 0);
    return 1;
}

extern "C" void __sanitizer_cov_trace_pc(void)
{
    if (!emu::running) return;
    size_t b = emu::block_linear();
    if (b != emu::runs_b) {
        auto it = emu::weight_of.find(b);
        emu::runs_b = b, emu::runs_w = it != emu::weight_of.end() ? it->second : emu::sampling ? 0.0 : 1.0;
    }
    if (emu::runs_w > 0.0) emu::block_runs[__builtin_return_address(0)] += emu::runs_w;
}
