/* emu_profile.h - TEST-ONLY: the profile's figures, shared by emu_profile.cc (collection) and
 * emu_profile_report.cc (table, CSV, targets). */
#ifndef CUDA_EMU_PROFILE_H
#define CUDA_EMU_PROFILE_H

#include "emu_eyes.h"
#include "include/emu_api.h"

#include <map>
#include <string>
#include <vector>

namespace emu {

struct line_stats {
    unsigned long long requests, bytes, sectors, wavefronts;
};

struct kernel_runs {
    unsigned long long launches, switches;
};

struct line_key {
    std::string kernel, line;
    int shared, store;
    bool operator<(const line_key &o) const
    {
        if (kernel != o.kernel) return kernel < o.kernel;
        if (line != o.line) return line < o.line;
        return shared != o.shared ? shared < o.shared : store < o.store;
    }
};

/* A stated figure of a kernel's header comment (emu_profile_design.cc): loads and stores at least a fraction,
 * shared memory at most so many wavefronts per request, or none of that kind of access at all. */
enum bound_kind { BOUND_UNSTATED, BOUND_NONE, BOUND_AT_LEAST, BOUND_AT_MOST };
struct stated_bound {
    bound_kind kind;
    double value;
};
struct kernel_design {
    std::string where;                       /* file:line (kernel) */
    std::string designed_text, today_text;   /* the statements as written, without their explanations */
    stated_bound design[3] = {}, today[3] = {}; /* loads, stores, shared memory; today: only where it misses */
    bool readable = false;                   /* stated in full and understood (otherwise an error was reported) */
};
/* Every __global__ kernel of the source files in paths (separated by spaces) and its stated design; one
 * message per kernel without a statement or with one not understood. */
std::map<std::string, kernel_design> read_designs(const char *paths, std::vector<std::string> &errors);

extern std::map<std::string, kernel_runs> &runs; /* per kernel name */
/* Every kernel's accesses per source line (addr2line resolved), load and store, global and shared. */
std::map<line_key, line_stats> by_line(void);
emu_kernel_profile summary(const std::map<line_key, line_stats> &lines, const std::string &kernel);
double efficiency(const line_stats &s); /* requested / (sectors * 32); -1 without sectors */
double ways(const line_stats &s);       /* wavefronts per request; -1 without requests */
void resolve_lines(const std::vector<void *> &pcs); /* emu_symbols.cc: one addr2line for all */
void profile_report(void);                           /* at exit: table, CSV, targets */

} /* namespace emu */

#endif
