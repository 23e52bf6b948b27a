/* emu_profile_report.cc - TEST-ONLY: the profile at exit (EMU_PROFILE=1): a table on stderr, the CSV
 * (EMU_PROFILE_CSV=path) and the check against each kernel's stated target (EMU_PROFILE_TARGETS=path).
 *
 * CSV columns: kernel, location (file:line, or "(kernel)" for the kernel's totals), space (global, shared),
 * access (load, store), requests (warp instructions), requested_bytes, sectors (global), efficiency (global:
 * requested / (sectors * 32)), wavefronts (shared), wavefronts_per_request (shared; on a "(kernel)" row the
 * worst line's), launches and fiber_switches (the kernel's, first pass, on every row).
 *
 * Targets file: one row per kernel, "kernel min_load_efficiency min_store_efficiency max_bank_ways", "-" for
 * no bound, "#" starts a comment. Every kernel that ran must have a row; a miss prints the figure, the target
 * and the row, and the program exits with status 5. */
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

/* "0.8" -> 0.8, "-" -> -1 (no bound) */
static double bound(const char *s) { return strcmp(s, "-") ? atof(s) : -1.0; }

/* 1 if kernel's figures meet its row of the targets file; otherwise prints why. */
static int meets(const char *path, const std::string &kernel, const emu_kernel_profile &p)
{
    FILE *f = fopen(path, "r");
    char row[512], name[128], ld[32], st[32], bw[32];
    int lineno = 0, ok = -1;
    while (f && ok < 0 && fgets(row, sizeof row, f)) {
        lineno++;
        if (sscanf(row, "%127s %31s %31s %31s", name, ld, st, bw) != 4 || name[0] == '#' || kernel != name) continue;
        double l = bound(ld), s = bound(st), b = bound(bw);
        ok = !(l >= 0 && p.load_efficiency >= 0 && p.load_efficiency < l) &&
             !(s >= 0 && p.store_efficiency >= 0 && p.store_efficiency < s) && !(b >= 0 && p.bank_ways > b);
        if (!ok)
            fprintf(stderr, "cuda-emu profile: %s misses its target (%s:%d: load >= %s, store >= %s, bank ways <= %s): "
                    "load %.3f, store %.3f, bank ways %.2f\n", kernel.c_str(), path, lineno, ld, st, bw,
                    p.load_efficiency, p.store_efficiency, p.bank_ways);
    }
    if (f) fclose(f);
    if (ok < 0) fprintf(stderr, "cuda-emu profile: kernel %s has no row in %s: state its target there\n", kernel.c_str(), path);
    return ok == 1;
}

void profile_report(void)
{
    std::map<line_key, line_stats> lines = by_line();
    print_table(stderr, lines);
    const char *csv = getenv("EMU_PROFILE_CSV"), *targets = getenv("EMU_PROFILE_TARGETS");
    if (csv && *csv) write_csv(csv, lines);
    if (!targets || !*targets) return;
    int failed = 0;
    for (auto &kv : runs) failed |= !meets(targets, kv.first, summary(lines, kv.first));
    if (!failed) return;
    fflush(NULL);
    _exit(5);
}

} /* namespace emu */
