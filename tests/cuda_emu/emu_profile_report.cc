/* emu_profile_report.cc - TEST-ONLY: the profile at exit (EMU_PROFILE=1): a table on stderr, the CSV
 * (EMU_PROFILE_CSV=path) and the check against each kernel's stated target (EMU_PROFILE_TARGETS=path).
 *
 * CSV columns: kernel, location (file:line, or "(kernel)" for the kernel's totals), space (global, shared),
 * access (load, store), requests (warp instructions), requested_bytes, sectors (global), efficiency (global:
 * requested / (sectors * 32)), wavefronts (shared), wavefronts_per_request (shared; on a "(kernel)" row the
 * worst line's), launches and fiber_switches (the kernel's, first pass, on every row).
 *
 * Targets: EMU_PROFILE_TARGETS names the kernel sources (the .cu files of kernels/); each kernel's header
 * comment states the efficiency it is designed for and, where it misses, what it reaches today
 * (emu_profile_design.cc reads them).
 * Every kernel that ran must have one and hold to it (the "Today" figure where stated, which must still be a
 * miss of the design); a miss, a kernel without a statement or a statement not understood prints why and the
 * program exits with status 5. */
#include "emu_profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

namespace emu {

static const char *space_name(const line_key &k) { return k.shared ? "shared" : "global"; }
static const char *access_name(const line_key &k) { return k.store ? "store" : "load"; }

static void print_table(FILE *f, const std::map<line_key, line_stats> &lines)
{
    std::string kernel;
    for (auto &kv : lines) {
        const line_key &k = kv.first;
        const line_stats &s = kv.second;
        if (k.kernel != kernel) {
            kernel = k.kernel;
            emu_kernel_profile p = summary(lines, kernel);
            fprintf(f, "cuda-emu profile: %s: %llu launches, %llu fiber switches; global load efficiency %.3f, "
                    "store efficiency %.3f, worst shared line %.2f wavefronts/request (-1: none)\n", kernel.c_str(),
                    runs[kernel].launches, runs[kernel].switches, p.load_efficiency, p.store_efficiency, p.bank_ways);
            fprintf(f, "  %-40s %-6s %-5s %10s %12s %10s %7s %10s %7s\n", "location", "space", "acc", "requests",
                    "bytes", "sectors", "eff", "wavefronts", "w/req");
        }
        if (k.shared)
            fprintf(f, "  %-40s %-6s %-5s %10llu %12llu %10s %7s %10llu %7.2f\n", k.line.c_str(), space_name(k),
                    access_name(k), s.requests, s.bytes, "", "", s.wavefronts, ways(s));
        else
            fprintf(f, "  %-40s %-6s %-5s %10llu %12llu %10llu %7.3f %10s %7s\n", k.line.c_str(), space_name(k),
                    access_name(k), s.requests, s.bytes, s.sectors, efficiency(s), "", "");
    }
}

static void csv_kernel_rows(FILE *f, const std::map<line_key, line_stats> &lines, const std::string &kernel)
{
    emu_kernel_profile p = summary(lines, kernel);
    const kernel_runs &r = runs[kernel];
    fprintf(f, "%s,(kernel),global,load,,,,%.4f,,,%llu,%llu\n", kernel.c_str(), p.load_efficiency, r.launches,
            r.switches);
    fprintf(f, "%s,(kernel),global,store,,,,%.4f,,,%llu,%llu\n", kernel.c_str(), p.store_efficiency, r.launches,
            r.switches);
    fprintf(f, "%s,(kernel),shared,any,,,,,,%.3f,%llu,%llu\n", kernel.c_str(), p.bank_ways, r.launches, r.switches);
}

static void write_csv(const char *path, const std::map<line_key, line_stats> &lines)
{
    FILE *f = fopen(path, "w");
    if (!f) { perror(path); return; }
    fprintf(f, "kernel,location,space,access,requests,requested_bytes,sectors,efficiency,wavefronts,"
               "wavefronts_per_request,launches,fiber_switches\n");
    std::string kernel;
    for (auto &kv : lines) {
        const line_key &k = kv.first;
        const line_stats &s = kv.second;
        if (k.kernel != kernel) csv_kernel_rows(f, lines, kernel = k.kernel);
        const kernel_runs &r = runs[k.kernel];
        if (k.shared)
            fprintf(f, "%s,%s,shared,%s,%llu,%llu,,,%llu,%.3f,%llu,%llu\n", k.kernel.c_str(), k.line.c_str(),
                    access_name(k), s.requests, s.bytes, s.wavefronts, ways(s), r.launches, r.switches);
        else
            fprintf(f, "%s,%s,global,%s,%llu,%llu,%llu,%.4f,,,%llu,%llu\n", k.kernel.c_str(), k.line.c_str(),
                    access_name(k), s.requests, s.bytes, s.sectors, efficiency(s), r.launches, r.switches);
    }
    fclose(f);
}

static std::string figure(int dim, double v)
{
    char buf[64];
    if (dim < 2) snprintf(buf, sizeof buf, "%.1f%%", 100.0 * v);
    else snprintf(buf, sizeof buf, "%.2f wavefronts per request", v);
    return buf;
}

static bool within(const stated_bound &b, double m)
{
    return b.kind == BOUND_AT_LEAST ? m >= b.value - 1e-9 : m <= b.value + 1e-9;
}

static const char *dim_label[3] = {"global loads", "global stores", "shared memory"};

/* One dimension (0 loads, 1 stores, 2 shared) of a kernel's figure m (-1: no such access) against its header
 * comment: "" if it holds, otherwise why not. */
static std::string miss(const kernel_design &k, int dim, double m)
{
    const stated_bound &today = k.today[dim], &b = today.kind != BOUND_UNSTATED ? today : k.design[dim];
    const char *which = today.kind != BOUND_UNSTATED ? "Today" : "Designed for";
    if (b.kind == BOUND_NONE)
        return m < 0 ? "" : std::string(dim_label[dim]) + " " + figure(dim, m) + ", but \"" + which + "\" says none";
    if (m < 0)
        return std::string("no ") + dim_label[dim] + ", but \"" + which + "\" states " + figure(dim, b.value) +
               ": say \"no " + dim_label[dim] + "\"";
    if (!within(b, m))
        return std::string(dim_label[dim]) + " " + figure(dim, m) + ", \"" + which + "\" " +
               (b.kind == BOUND_AT_LEAST ? ">= " : "<= ") + figure(dim, b.value);
    if (today.kind != BOUND_UNSTATED && within(k.design[dim], m))
        return std::string(dim_label[dim]) + " " + figure(dim, m) + " meets the design now: raise \"Today\" or "
               "delete it";
    return "";
}

/* 1 if kernel's figures hold to the statements of its header comment; otherwise prints why. */
static int meets(const std::map<std::string, kernel_design> &designs, const std::string &kernel,
                 const emu_kernel_profile &p)
{
    auto it = designs.find(kernel);
    if (it == designs.end()) {
        fprintf(stderr, "cuda-emu profile: kernel %s has no stated design: it is not in EMU_PROFILE_TARGETS's "
                "sources; give it a header comment with \"Designed for:\" there\n", kernel.c_str());
        return 0;
    }
    if (!it->second.readable) return 0; /* read_designs said why */
    double measured[3] = {p.load_efficiency, p.store_efficiency, p.bank_ways};
    int ok = 1;
    for (int d = 0; d < 3; d++) {
        std::string why = miss(it->second, d, measured[d]);
        if (why.empty()) continue;
        fprintf(stderr, "cuda-emu profile: %s misses its header comment (%s): %s\n", kernel.c_str(),
                it->second.where.c_str(), why.c_str());
        ok = 0;
    }
    return ok;
}

void profile_report(void)
{
    std::map<line_key, line_stats> lines = by_line();
    print_table(stderr, lines);
    const char *csv = getenv("EMU_PROFILE_CSV"), *targets = getenv("EMU_PROFILE_TARGETS");
    if (csv && *csv) write_csv(csv, lines);
    if (!targets || !*targets) return;
    std::vector<std::string> errors;
    std::map<std::string, kernel_design> designs = read_designs(targets, errors);
    for (const std::string &e : errors) fprintf(stderr, "cuda-emu profile: %s\n", e.c_str());
    int failed = !errors.empty();
    for (auto &kv : runs) failed |= !meets(designs, kv.first, summary(lines, kv.first));
    if (!failed) return;
    fflush(NULL);
    _exit(5);
}

} /* namespace emu */
