/* emu_profile_design.cc - TEST-ONLY: each kernel's designed memory efficiency, read from the data file
 * EMU_PROFILE_DESIGNS names (tests/cuda_emu/design_targets.txt: make emu-profile) and, for a kernel the file does not
 * name, from its header comment (the comment lines right above its `__global__` line) in the sources
 * EMU_PROFILE_TARGETS names. The statements are the one source of truth the profile holds every kernel to
 * (emu_profile_report.cc). In the data file a line `<kernel> <statements>` opens a kernel's entry, lines indented
 * continue it, `#` lines and blank lines are comments:
 *
 *   lc4_forward_kernel Designed for: loads >= 80% of each 32-byte sector used, stores >= 12.5% (log Z: one float
 *       per row), shared memory <= 1 wavefront per request (no bank conflict).
 *   ms_forward_v1 Designed for: ... . Today: loads 29% (why), stores 68% (why).
 *
 * "Designed for:" must state all three: loads and stores as a percentage (the least global load/store efficiency,
 * requested bytes / 32-byte sectors touched) or "no global loads" / "no global stores", shared memory as the most
 * wavefronts per request of its worst line or "no shared memory". "Today:" (only for a kernel that misses its
 * design) states the figures it reaches instead, for the dimensions it misses. A statement ends at the first
 * ". "; text in parentheses is the reader's explanation and is not parsed; clauses are separated by commas. A
 * kernel without a "Designed for:", a kernel stated in both places, an entry of the file that names no kernel of
 * the sources, or a clause not understood here, is an error. */
#include "emu_profile.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace emu {

static std::string trim(const std::string &s)
{
    size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

static bool starts_with(const std::string &s, const char *p) { return s.compare(0, strlen(p), p) == 0; }

static std::vector<std::string> read_lines(const char *path, bool *ok)
{
    std::vector<std::string> lines;
    FILE *f = fopen(path, "r");
    *ok = f != NULL;
    char buf[4096];
    while (f && fgets(buf, sizeof buf, f)) lines.push_back(buf);
    if (f) fclose(f);
    return lines;
}

/* The comment text right above line i (a stack of / * ... * / blocks and // lines, no blank line between),
 * without its comment markers, joined by spaces. */
static std::string header_comment(const std::vector<std::string> &lines, size_t i)
{
    std::vector<std::string> block;
    size_t j = i;
    while (j > 0) {
        std::string t = trim(lines[j - 1]);
        if (starts_with(t, "//")) { block.push_back(t.substr(2)); j--; continue; }
        if (t.size() < 2 || t.compare(t.size() - 2, 2, "*/")) break;
        do block.push_back(lines[--j]); while (j > 0 && lines[j].find("/*") == std::string::npos);
    }
    std::string text;
    for (size_t k = block.size(); k-- > 0;) {
        std::string t = block[k];
        for (const char *mark : {"/*", "*/"})
            for (size_t p; (p = t.find(mark)) != std::string::npos;) t.erase(p, 2);
        t = trim(t);
        while (!t.empty() && t[0] == '*') t = trim(t.substr(1));
        text += t + " ";
    }
    return text;
}

/* The statement after `label` up to its first ". " (outside parentheses), parenthesised text dropped. */
static bool statement(const std::string &text, const char *label, std::string *out)
{
    size_t p = text.find(label);
    if (p == std::string::npos) return false;
    int depth = 0;
    out->clear();
    for (p += strlen(label); p < text.size(); p++) {
        char c = text[p];
        if (c == '(') depth++;
        else if (c == ')') depth -= depth > 0;
        else if (depth == 0 && c == '.' && (p + 1 == text.size() || isspace((unsigned char)text[p + 1]))) break;
        else if (depth == 0) *out += c;
    }
    return true;
}

/* the first number in s, followed by `unit` when unit is given */
static bool number(const std::string &s, const char *unit, double *v)
{
    for (size_t p = 0; p < s.size(); p++) {
        if (!isdigit((unsigned char)s[p])) continue;
        char *end;
        *v = strtod(s.c_str() + p, &end);
        return !unit || starts_with(trim(end), unit);
    }
    return false;
}

/* One clause ("loads >= 80% ...", "no shared memory", ...) into its dimension; false if not understood. */
static bool clause(const std::string &raw, stated_bound b[3])
{
    std::string c = trim(raw);
    for (char &ch : c) ch = (char)tolower((unsigned char)ch);
    static const struct { const char *none, *with; bool percent; } dims[3] = {
        {"no global loads", "loads", true},
        {"no global stores", "stores", true},
        {"no shared memory", "shared memory", false}};
    for (int d = 0; d < 3; d++) {
        if (c == dims[d].none) { b[d] = stated_bound{BOUND_NONE, 0.0}; return true; }
        if (!starts_with(c, dims[d].with)) continue;
        double v;
        if (!number(c, dims[d].percent ? "%" : "wavefront", &v)) return false;
        b[d] = stated_bound{dims[d].percent ? BOUND_AT_LEAST : BOUND_AT_MOST, dims[d].percent ? v / 100.0 : v};
        return true;
    }
    return false;
}

/* A statement's clauses; an error string per clause not understood. */
static void clauses(const std::string &s, stated_bound b[3], const std::string &where, std::vector<std::string> &errors)
{
    size_t from = 0;
    for (size_t p = 0; p <= s.size(); p++) {
        if (p < s.size() && s[p] != ',' && s[p] != ';') continue;
        std::string c = trim(s.substr(from, p - from));
        from = p + 1;
        if (!c.empty() && !clause(c, b)) errors.push_back(where + ": cannot read \"" + c + "\"");
    }
}

static const char *dim_name[3] = {"loads", "stores", "shared memory"};

/* A kernel's two statements, checked for consistency. */
static kernel_design design_of(const std::string &text, const std::string &where, std::vector<std::string> &errors)
{
    kernel_design k;
    k.where = where;
    std::string s;
    size_t errors_before = errors.size();
    if (!statement(text, "Designed for:", &s)) {
        errors.push_back(where + ": no \"Designed for:\" in the kernel's header comment: state the efficiency it "
                                 "is designed for (tests/cuda_emu/emu_profile_design.cc says how)");
        return k;
    }
    k.designed_text = trim(s);
    clauses(s, k.design, where, errors);
    for (int d = 0; d < 3; d++)
        if (k.design[d].kind == BOUND_UNSTATED)
            errors.push_back(where + ": \"Designed for:\" does not state " + dim_name[d]);
    if (statement(text, "Today:", &s)) {
        k.today_text = trim(s);
        clauses(s, k.today, where, errors);
        for (int d = 0; d < 3; d++) {
            const stated_bound &t = k.today[d], &g = k.design[d];
            if (t.kind == BOUND_UNSTATED) continue;
            if (t.kind != g.kind || (t.kind == BOUND_AT_LEAST ? t.value >= g.value : t.value <= g.value))
                errors.push_back(where + ": \"Today:\" " + dim_name[d] + " is no miss of the design: state it only "
                                         "below the design");
        }
    }
    k.readable = errors.size() == errors_before;
    return k;
}

/* a declaration (its signature ends in ';' before any '{'), not the kernel's definition */
static bool declaration_only(const std::vector<std::string> &lines, size_t i)
{
    for (; i < lines.size(); i++) {
        size_t brace = lines[i].find('{'), semi = lines[i].find(';');
        if (brace != std::string::npos || semi != std::string::npos) return semi < brace;
    }
    return true;
}

/* the kernel a `__global__ ... name(` line defines, or "" */
static std::string kernel_name(const std::vector<std::string> &lines, size_t i)
{
    std::string t = trim(lines[i]);
    if (declaration_only(lines, i)) return "";
    if (!starts_with(t, "__global__")) return "";
    size_t paren = t.find('('), e = paren;
    if (paren == std::string::npos) return "";
    while (e > 0 && isspace((unsigned char)t[e - 1])) e--;
    size_t b = e;
    while (b > 0 && (isalnum((unsigned char)t[b - 1]) || t[b - 1] == '_')) b--;
    return t.substr(b, e - b);
}

/* The data file's entries: kernel name -> (its statements, "path:line (name)"). */
static std::map<std::string, std::pair<std::string, std::string>> read_data_file(const char *path,
                                                                            std::vector<std::string> &errors)
{
    std::map<std::string, std::pair<std::string, std::string>> out;
    bool ok;
    std::vector<std::string> lines = read_lines(path, &ok);
    if (!ok) { errors.push_back(std::string(path) + ": cannot read (EMU_PROFILE_DESIGNS)"); return out; }
    std::string name;
    for (size_t i = 0; i < lines.size(); i++) {
        const std::string &l = lines[i];
        std::string t = trim(l);
        if (t.empty() || t[0] == '#') continue;
        if (isspace((unsigned char)l[0])) {
            if (name.empty()) errors.push_back(std::string(path) + ":" + std::to_string(i + 1) + ": a continuation "
                                               "line before any kernel");
            else out[name].first += " " + t;
            continue;
        }
        size_t sp = t.find_first_of(" \t");
        name = t.substr(0, sp);
        if (out.count(name)) errors.push_back(std::string(path) + ":" + std::to_string(i + 1) + ": " + name +
                                              " is stated twice");
        out[name] = {sp == std::string::npos ? "" : trim(t.substr(sp)),
                     std::string(path) + ":" + std::to_string(i + 1) + " (" + name + ")"};
    }
    return out;
}

std::map<std::string, kernel_design> read_designs(const char *paths, std::vector<std::string> &errors)
{
    std::map<std::string, kernel_design> out;
    const char *data_path = getenv("EMU_PROFILE_DESIGNS");
    std::map<std::string, std::pair<std::string, std::string>> data;
    if (data_path && *data_path) data = read_data_file(data_path, errors);
    std::map<std::string, bool> data_used;
    std::string all = paths;
    for (size_t from = 0, p; from < all.size(); from = p + 1) {
        p = all.find_first_of(" \t\n", from);
        if (p == std::string::npos) p = all.size();
        std::string path = all.substr(from, p - from);
        if (path.empty()) continue;
        bool ok;
        std::vector<std::string> lines = read_lines(path.c_str(), &ok);
        if (!ok) { errors.push_back(path + ": cannot read"); continue; }
        int kernels = 0;
        for (size_t i = 0; i < lines.size(); i++) {
            std::string name = kernel_name(lines, i);
            if (name.empty()) continue;
            kernels++;
            std::string where = path + ":" + std::to_string(i + 1) + " (" + name + ")";
            std::string comment = header_comment(lines, i);
            auto d = data.find(name);
            if (d == data.end()) {
                out[name] = design_of(comment, where, errors);
                continue;
            }
            data_used[name] = true;
            if (comment.find("Designed for:") != std::string::npos || comment.find("Today:") != std::string::npos)
                errors.push_back(where + ": its design is stated in " + d->second.second + " and in its header "
                                         "comment: keep one (the data file)");
            out[name] = design_of(d->second.first, d->second.second, errors);
        }
        if (!kernels) errors.push_back(path + ": no __global__ kernel (EMU_PROFILE_TARGETS names the kernel sources)");
    }
    for (auto &kv : data)
        if (!data_used.count(kv.first))
            errors.push_back(kv.second.second + ": names no kernel of the sources EMU_PROFILE_TARGETS names");
    return out;
}

} /* namespace emu */
