/* emu_loops.cc - TEST-ONLY build tool of the emulation build: copies the CUDA sources into a mirror tree with the
 * dry run's loop skip added to every loop whose range is data-sized, so no source carries a marker for it.
 *
 *   emu_loops OUT_DIR FILE...   writes OUT_DIR/FILE for each FILE (same relative paths, so "../x.h" includes
 *                               resolve inside the mirror); each starts with #line 1 "FILE", and nothing is added
 *                               or removed on any line but inside a for's condition, so __FILE__, __LINE__ and the
 *                               debug info (addr2line, the profile, the detectors' messages) name the original.
 *
 * A loop is instrumented when its header has the canonical shape
 *   for (T i = FIRST; i < END; i += STEP)     (<, <=, >, >=; i++, ++i, i--, --i, i += S, i -= S)
 *   for (T i = FIRST; i-- > END;)             (counting down, the body sees FIRST - 1 .. END)
 * and END (or, for a loop counting down, FIRST) names something that is not a macro defined in one of the
 * FILEs (a dimension, a count, a member such as d->t, a call): then the condition becomes
 *   (::emu::dry() ? ::emu::dry_skip(i, FIRST, END', STEP) : (void)0), condition
 * with [FIRST, END') the values the condition sees, and in a dry run (EMU_DRY=1) the loop runs its first
 * iteration and its last two (cuda_runtime.h's dry_skip). Loops over a tile (END a macro such as TILE) or a
 * literal are left alone, and so is a loop after UNROLL (a constant trip count, by that macro's contract).
 * Comments, strings and preprocessor lines are copied untouched. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

static std::set<std::string> macros;

static std::string read_file(const char *path)
{
    std::ifstream f(path, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

static std::string trim(const std::string &s)
{
    size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

/* 1 if expression e names an identifier that is neither a macro of the sources nor a keyword */
static bool data_sized(const std::string &e)
{
    static const std::regex ident("[A-Za-z_][A-Za-z_0-9]*");
    for (std::sregex_iterator it(e.begin(), e.end(), ident), end; it != end; ++it) {
        std::string id = it->str();
        size_t p = it->position();
        if (p > 0 && (isdigit((unsigned char)e[p - 1]) || e[p - 1] == '.')) continue; /* 1e9f, a.x's x */
        if (id == "sizeof" || id == "size_t" || id == "int" || id == "long" || id == "unsigned") continue;
        if (!macros.count(id)) return true;
    }
    return false;
}

/* top-level split of a for header at ';' (parentheses, brackets and braces nest) */
static std::vector<std::string> split_header(const std::string &h)
{
    std::vector<std::string> parts(1);
    int depth = 0;
    for (char c : h) {
        if (c == '(' || c == '[' || c == '{') depth++;
        if (c == ')' || c == ']' || c == '}') depth--;
        if (c == ';' && depth == 0) parts.emplace_back();
        else parts.back() += c;
    }
    return parts;
}

static bool has_top_level(const std::string &e, const char *ops)
{
    int depth = 0;
    for (size_t i = 0; i < e.size(); i++) {
        if (e[i] == '(' || e[i] == '[') depth++;
        if (e[i] == ')' || e[i] == ']') depth--;
        if (depth == 0 && strchr(ops, e[i])) return true;
    }
    return false;
}

/* The new condition for header h, or "" when the loop is not instrumented. */
static std::string instrumented_condition(const std::string &h)
{
    std::vector<std::string> p = split_header(h);
    if (p.size() != 3) return "";
    std::smatch m;
    static const std::regex init("^\\s*(?:[A-Za-z_][A-Za-z_0-9 ]*\\s)?\\s*([A-Za-z_][A-Za-z_0-9]*)"
                                 "\\s*=\\s*([^=][\\s\\S]*)$");
    if (!std::regex_match(p[0], m, init) || has_top_level(m[2].str(), ",")) return "";
    std::string var = m[1], first = trim(m[2]), cond = trim(p[1]), incr = trim(p[2]);
    std::string end, step;
    static const std::regex down("^([A-Za-z_][A-Za-z_0-9]*)\\s*--\\s*>\\s*([\\s\\S]+)$");
    static const std::regex cmp("^([A-Za-z_][A-Za-z_0-9]*)\\s*(<=|>=|<|>)\\s*([\\s\\S]+)$");
    if (std::regex_match(cond, m, down)) { /* for (i = FIRST; i-- > END;) */
        if (m[1] != var || !incr.empty() || has_top_level(m[2].str(), "&|?,")) return "";
        end = trim(m[2]);
        step = "-1";
    } else if (std::regex_match(cond, m, cmp)) {
        std::string op = m[2], bound = trim(m[3]);
        if (m[1] != var || has_top_level(bound, "&|?,")) return "";
        end = op == "<" || op == ">" ? bound : "(" + bound + ")" + (op == "<=" ? " + 1" : " - 1");
        std::smatch s;
        static const std::regex inc("^(?:([A-Za-z_][A-Za-z_0-9]*)\\s*(\\+\\+|--)"
                                    "|(\\+\\+|--)\\s*([A-Za-z_][A-Za-z_0-9]*))$");
        static const std::regex add("^([A-Za-z_][A-Za-z_0-9]*)\\s*([+-])=\\s*([\\s\\S]+)$");
        if (std::regex_match(incr, s, inc)) {
            std::string v = s[1].matched ? s[1].str() : s[4].str(), o = s[1].matched ? s[2].str() : s[3].str();
            if (v != var) return "";
            step = o == "++" ? "1" : "-1";
        } else if (std::regex_match(incr, s, add)) {
            if (s[1] != var) return "";
            step = s[2] == "+" ? "(" + trim(s[3]) + ")" : "-(" + trim(s[3]) + ")";
        } else {
            return "";
        }
        if ((step[0] == '-') != (op[0] == '>')) return "";
    } else {
        return "";
    }
    if (!data_sized(end) && !(step[0] == '-' && data_sized(first))) return ""; /* counting down: FIRST sizes it */
    /* FIRST and END are evaluated in a dry run only: elsewhere the loop reads exactly what it reads under nvcc */
    return "(::emu::dry() ? ::emu::dry_skip(" + var + ", " + first + ", " + end + ", " + step + ") : (void)0), " +
           cond;
}

/* Copies src with every instrumentable for's condition rewritten in place. */
static std::string rewrite(const std::string &src)
{
    std::string out;
    size_t i = 0, n = src.size();
    bool line_start = true;
    while (i < n) {
        char c = src[i];
        if (line_start && c == '#') { /* preprocessor line, with its continuations */
            size_t e = i;
            while (e < n && (src[e] != '\n' || src[e - 1] == '\\')) e++;
            out += src.substr(i, e - i);
            i = e;
            continue;
        }
        if (c == '/' && i + 1 < n && (src[i + 1] == '/' || src[i + 1] == '*')) {
            size_t e = src[i + 1] == '/' ? src.find('\n', i) : src.find("*/", i + 2);
            e = e == std::string::npos ? n : (src[i + 1] == '/' ? e : e + 2);
            out += src.substr(i, e - i);
            i = e;
            continue;
        }
        if (c == '"' || c == '\'') {
            size_t e = i + 1;
            while (e < n && src[e] != c) e += src[e] == '\\' ? 2 : 1;
            out += src.substr(i, e + 1 - i);
            i = e + 1;
            continue;
        }
        if (!isspace((unsigned char)c)) line_start = false;
        if (c == '\n') line_start = true;
        auto ident = [](char ch) { return isalnum((unsigned char)ch) || ch == '_'; };
        bool word = src.compare(i, 3, "for") == 0 && (i == 0 || !ident(src[i - 1])) && i + 3 < n && !ident(src[i + 3]);
        if (word) {
            size_t j = i + 3;
            while (j < n && isspace((unsigned char)src[j])) j++;
            if (j < n && src[j] == '(') {
                int depth = 0;
                size_t k = j;
                for (; k < n; k++) {
                    if (src[k] == '(') depth++;
                    if (src[k] == ')' && --depth == 0) break;
                }
                std::string header = src.substr(j + 1, k - j - 1);
                /* a loop after UNROLL has a constant trip count (runtime/hd.h), which the skip would hide from the
                 * compiler's unrolling */
                size_t before = out.find_last_not_of(" \t");
                bool unrolled = before != std::string::npos && before >= 5 && out.compare(before - 5, 6, "UNROLL") == 0;
                std::string cond = !unrolled && header.find("//") == std::string::npos &&
                                           header.find("/*") == std::string::npos
                                       ? instrumented_condition(header) : "";
                if (!cond.empty()) {
                    std::vector<std::string> p = split_header(header);
                    /* keep the condition's own line breaks: replace only its trimmed text */
                    size_t at = p[0].size() + 1;
                    std::string c1 = p[1], t = trim(c1);
                    size_t lead = c1.find(t);
                    header = header.substr(0, at + lead) + cond + header.substr(at + lead + t.size());
                }
                out += src.substr(i, j + 1 - i) + header + ")";
                i = k + 1;
                continue;
            }
        }
        out += c;
        i++;
    }
    return out;
}

static void make_dirs(const std::string &path)
{
    for (size_t p = path.find('/', 1); p != std::string::npos; p = path.find('/', p + 1))
        mkdir(path.substr(0, p).c_str(), 0755);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: emu_loops OUT_DIR FILE...\n");
        return 2;
    }
    static const std::regex define("^[ \\t]*#[ \\t]*define[ \\t]+([A-Za-z_][A-Za-z_0-9]*)");
    for (int a = 2; a < argc; a++) {
        std::istringstream lines(read_file(argv[a]));
        std::smatch m;
        for (std::string line; std::getline(lines, line);)
            if (std::regex_search(line, m, define)) macros.insert(m[1]);
    }
    for (int a = 2; a < argc; a++) {
        std::string out = std::string(argv[1]) + "/" + argv[a], text = rewrite(read_file(argv[a]));
        std::string old = read_file(out.c_str()), now = "#line 1 \"" + std::string(argv[a]) + "\"\n" + text;
        if (old == now) continue; /* unchanged: keep its timestamp, so nothing rebuilds */
        make_dirs(out);
        std::ofstream f(out, std::ios::binary);
        f << now;
        if (!f) {
            fprintf(stderr, "emu_loops: cannot write %s\n", out.c_str());
            return 1;
        }
    }
    return 0;
}
