/* emu_symbols.cc - TEST-ONLY: names for the detectors' messages and the profile: a return address as
 * "file.cu:line" (addr2line on this executable, run only when something is printed, cached per address), a
 * static __shared__ address as "variable+offset" (nm), a thread, an allocation.
 *
 * The instrumented code is linked into the executable itself (no shared objects), which is position
 * independent: addr2line and nm want addresses relative to its load base, which dladdr gives. */
#include "emu_eyes.h"
#include "emu_model.h"

#include <algorithm>
#include <dlfcn.h>
#include <map>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace emu {

static std::unordered_map<void *, std::string> lines; /* pc -> "file:line" */

static uintptr_t load_base(void)
{
    Dl_info di;
    if (!dladdr((void *)&load_base, &di)) return 0;
    return (uintptr_t)di.dli_fbase;
}

static const char *exe_path(void)
{
    static char path[4096];
    if (!path[0]) {
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        path[n > 0 ? n : 0] = 0;
    }
    return path;
}

/* "/cwd/dir/f.cu:12 (discriminator 3)" -> "dir/f.cu:12"; "??:0" or "??:?" -> "?" */
static std::string clean_line(char *s)
{
    s[strcspn(s, "\n")] = 0;
    char *d = strstr(s, " (discriminator");
    if (d) *d = 0;
    if (!strncmp(s, "??", 2)) return "?";
    static char cwd[4096];
    if (!cwd[0] && !getcwd(cwd, sizeof cwd - 1)) cwd[0] = 0;
    size_t n = strlen(cwd);
    if (n && !strncmp(s, cwd, n) && s[n] == '/') return s + n + 1; /* relative to the working directory */
    return s;
}

void resolve_lines(const std::vector<void *> &pcs)
{
    std::vector<void *> todo;
    for (void *pc : pcs)
        if (!lines.count(pc)) todo.push_back(pc);
    if (todo.empty()) return;
    char tmp[] = "/tmp/cuda-emu-pcs-XXXXXX";
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    uintptr_t base = load_base();
    for (void *pc : todo)
        if (f) fprintf(f, "0x%lx\n", (unsigned long)((uintptr_t)pc - 1 - base)); /* pc - 1: inside the call */
    if (f) fclose(f);
    std::string cmd = std::string("addr2line -e '") + exe_path() + "' < " + tmp + " 2>/dev/null";
    FILE *p = f ? popen(cmd.c_str(), "r") : NULL;
    char buf[1024];
    for (void *pc : todo) lines[pc] = p && fgets(buf, sizeof buf, p) ? clean_line(buf) : "?";
    if (p) pclose(p);
    unlink(tmp);
}

void *site_pc(const char *file, int line)
{
    static std::map<std::pair<const char *, int>, std::string *> &sites = *new std::map<std::pair<const char *, int>, std::string *>;
    std::string *&s = sites[{file, line}]; /* by the literal's address: __builtin_FILE's, one per source file */
    if (!s) { /* the string's own address is the stand-in: never a code address */
        s = new std::string(std::string(file) + ":" + std::to_string(line));
        char buf[4096];
        snprintf(buf, sizeof buf, "%s", s->c_str());
        lines[(void *)s] = clean_line(buf);
    }
    return (void *)s;
}

const char *source_line(void *pc)
{
    if (!lines.count(pc)) resolve_lines(std::vector<void *>{pc});
    return lines[pc].c_str();
}

struct symbol {
    uintptr_t size;
    std::string name;
};

/* nm's defined symbols of this executable, by link-time address (loaded once, when first needed) */
static const std::map<uintptr_t, symbol> &symbols(void)
{
    static std::map<uintptr_t, symbol> syms;
    static int loaded;
    if (loaded++) return syms;
    std::string cmd = std::string("nm -S -C --defined-only '") + exe_path() + "' 2>/dev/null";
    FILE *p = popen(cmd.c_str(), "r");
    char buf[2048];
    while (p && fgets(buf, sizeof buf, p)) {
        unsigned long addr, size;
        char type;
        int used = 0;
        if (sscanf(buf, "%lx %lx %c %n", &addr, &size, &type, &used) == 3 && used > 0)
            syms[addr] = symbol{size, clean_line(buf + used)};
    }
    if (p) pclose(p);
    return syms;
}

void static_symbol(uintptr_t addr, char *out, size_t cap)
{
    out[0] = 0;
    const std::map<uintptr_t, symbol> &s = symbols();
    uintptr_t rel = addr - load_base();
    auto it = s.upper_bound(rel);
    if (it == s.begin()) return;
    --it;
    if (rel < it->first + it->second.size) snprintf(out, cap, "%s+%lu", it->second.name.c_str(), (unsigned long)(rel - it->first));
}

static std::map<uintptr_t, uintptr_t> &template_vars = *new std::map<uintptr_t, uintptr_t>; /* start -> end */

int template_smem_contains(uintptr_t p)
{
    auto it = template_vars.upper_bound(p);
    if (it == template_vars.begin()) return 0;
    --it;
    return p < it->second;
}

void template_smem_range(uintptr_t *lo, uintptr_t *hi)
{
    static uintptr_t l, h;
    static int loaded;
    if (!loaded++) {
        std::string cmd = std::string("nm -S --defined-only '") + exe_path() + "' 2>/dev/null";
        FILE *p = popen(cmd.c_str(), "r");
        char buf[4096], name[4000];
        unsigned long addr, size;
        char type;
        l = (uintptr_t)-1, h = 0;
        while (p && fgets(buf, sizeof buf, p))
            if (sscanf(buf, "%lx %lx %c %3999s", &addr, &size, &type, name) == 4 && (type == 'u' || type == 'V') &&
                !strncmp(name, "_ZZ", 3) && name[3] >= '0' && name[3] <= '9' && size > 0) {
                l = std::min(l, (uintptr_t)addr), h = std::max(h, (uintptr_t)(addr + size));
                template_vars[addr + load_base()] = addr + size + load_base();
            }
        if (p) pclose(p);
        if (h == 0) l = h = 0;
        else l += load_base(), h += load_base();
    }
    *lo = l, *hi = h;
}

/* the mangled name of a function of this executable (nm without -C), "" if none starts at fn */
std::string function_symbol(const void *fn)
{
    static std::map<uintptr_t, std::string> names;
    static int loaded;
    if (!loaded++) {
        std::string cmd = std::string("nm --defined-only '") + exe_path() + "' 2>/dev/null";
        FILE *p = popen(cmd.c_str(), "r");
        char buf[4096], name[4000];
        unsigned long addr;
        char type;
        while (p && fgets(buf, sizeof buf, p))
            if (sscanf(buf, "%lx %c %3999s", &addr, &type, name) == 3 && (type == 'T' || type == 't' || type == 'W'))
                names[addr] = name;
        if (p) pclose(p);
    }
    auto it = names.find((uintptr_t)fn - load_base());
    return it == names.end() ? std::string() : it->second;
}

void thread_name(unsigned t, char *out, size_t cap)
{
    snprintf(out, cap, "(%u,%u,%u)", t % blockDim.x, t / blockDim.x % blockDim.y, t / (blockDim.x * blockDim.y));
}

void alloc_name(const alloc_info *al, char *out, size_t cap)
{
    if (al->label[0]) snprintf(out, cap, "'%s' (%zu bytes, dev_alloc)", al->label, al->bytes);
    else snprintf(out, cap, "a %zu-byte cudaMalloc (made at %s)", al->bytes, source_line(al->site));
}

} /* namespace emu */
