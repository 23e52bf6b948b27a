/* model_fit.cc - TEST-ONLY: the time model's constants fitted on what the GPUs measured, with
 * leave-one-lesson-out cross-validation (tests/cuda_emu/README.md "Fitted on the GPUs"). Reads the model's
 * records of every measured (lesson, version, size) (make model-record: docs/results/emu/records/), the GPU
 * reports' forward + backward (docs/results/nvidia-*, results.csv then its subfolders' in name order, a row's
 * first figure; the rows retired.csv names for their file's folder left out) and SGEMM_CUDA's published A6000 figures (peers_sgemm.csv,
 * records sgemm_*.rec); no emulation. A fit minimises the mean squared log of predicted / measured over its
 * rows (Nelder-Mead on the constants' logarithms, within stated bounds); the warps' issue paths at trial
 * latencies come from the records' latency grid (emu_model.h). For each lesson: fit on the other lessons and
 * the peer, predict that lesson (held_out 1); then one fit on everything (held_out 0). Writes --csv, prints
 * the README's table.
 *
 *   model_fit --records DIR --reports "docs/results/nvidia-h200 ..." --retired FILE --peers FILE [--csv OUT]
 *             [--no-small] [--check] [--breakdown]   (--no-small: fit without the small sizes; --check: exit 1
 *             if --csv differs from what this run writes; --breakdown: each lesson row's held-out time by
 *             part, its kernels' counts, and the rows that pull barrier_clk up) */
#include "emu_model.h"

#include <algorithm>
#include <map>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <vector>

using namespace emu;

namespace
{

[[noreturn]] void die(const std::string &m)
{
    fprintf(stderr, "model_fit: %s\n", m.c_str());
    exit(2);
}

struct event {
    int kind = 0; /* 0 launch, 1 again, 2 gemm */
    int again = -1, elem = 0, tensor = 0;
    emu_model_counts c;
    double grid[PATH_GRID];
    double g[4]; /* a gemm's m, n, k, batch */
};
typedef std::vector<event> record;

record read_record(const std::string &path)
{
    FILE *f = fopen(path.c_str(), "r");
    if (!f) die("cannot read " + path);
    record r;
    char line[16384];
    const char *names[64];
    double *field[64];
    while (fgets(line, sizeof line, f)) {
        char word[16], name[200];
        int used = 0;
        if (sscanf(line, "%15s%n", word, &used) != 1 || !strcmp(word, "gpu")) continue;
        const char *rest = line + used;
        event e;
        memset(&e.c, 0, sizeof e.c);
        if (!strcmp(word, "launch")) {
            if (sscanf(rest, "%199s %d%n", name, &e.c.found_sass, &used) != 2)
                die(path + ": a bad launch line");
            snprintf(e.c.kernel, sizeof e.c.kernel, "%.127s", name);
            rest += used;
            int nf = record_fields(&e.c, names, field, 64);
            for (int i = 0; i < nf + PATH_GRID; i++) {
                char *end;
                double x = strtod(rest, &end);
                if (end == rest)
                    die(path + ": a launch line with too few counts (a record of before the grid?)");
                if (i < nf)
                    *field[i] = x;
                else
                    e.grid[i - nf] = x;
                rest = end;
            }
        } else if (!strcmp(word, "again")) {
            e.kind = 1;
            if (sscanf(rest, "%d", &e.again) != 1 || e.again < 0 || e.again >= (int)r.size())
                die(path + ": bad again");
        } else if (!strcmp(word, "gemm")) {
            e.kind = 2;
            if (sscanf(rest, "%lf %lf %lf %lf %d %d", &e.g[0], &e.g[1], &e.g[2], &e.g[3], &e.elem,
                       &e.tensor) != 6)
                die(path + ": a bad gemm line");
        } else {
            die(path + ": unknown line " + word);
        }
        r.push_back(e);
    }
    fclose(f);
    if (r.empty()) die(path + ": empty");
    return r;
}

/* the fitted constants: name, bounds. The bounds keep each one a figure of what it stands for (a fit free of
 * them trades one term for another where the rows cannot tell them apart): an issue efficiency and a cuBLAS
 * efficiency of 0.2 to 1; L2 latencies of 150 to 600 cycles (Hopper microbenchmarks report about 250-270);
 * the two latencies of the issue paths within the grid the records carry (emu_model.h); a launch of 1 to 20
 * us. */
struct param {
    const char *name;
    double lo, hi;
};
const param P[] = {
    {"issue_efficiency", 0.2, 1.0},       {"l1_hit_latency_clk", PATH_L1[0], PATH_L1[PATH_NL1 - 1]},
    {"l2_hit_latency_clk", 150.0, 600.0}, {"barrier_clk", 10.0, 1000.0},
    {"cublas_efficiency", 0.2, 1.0},      {"global_request_clk", 1.0, 8.0},
    {"launch_overhead_us", 1.0, 20.0},    {"variable_latency_clk", PATH_VAR[0], PATH_VAR[PATH_NVAR - 1]},
    {"cublas_min_tile", 16.0, 128.0},
};
const int NP = (int)(sizeof P / sizeof P[0]);
typedef std::vector<double> consts; /* values in P's order */

/* the paths summed over warps at (l1, var): bilinear on the grid, clamped to it */
double path_at(const double *grid, double l1, double var)
{
    int i = 0, j = 0;
    while (i < PATH_NL1 - 2 && l1 > PATH_L1[i + 1]) i++;
    while (j < PATH_NVAR - 2 && var > PATH_VAR[j + 1]) j++;
    double a = std::min(1.0, std::max(0.0, (l1 - PATH_L1[i]) / (PATH_L1[i + 1] - PATH_L1[i])));
    double b = std::min(1.0, std::max(0.0, (var - PATH_VAR[j]) / (PATH_VAR[j + 1] - PATH_VAR[j])));
    auto g = [&](int x, int y) { return grid[x * PATH_NVAR + y]; };
    return (1 - a) * ((1 - b) * g(i, j) + b * g(i, j + 1)) +
           a * ((1 - b) * g(i + 1, j) + b * g(i + 1, j + 1));
}

struct row {
    std::string lesson, impl, gpu, size; /* lesson "sgemm" for the peer */
    double measured_ms;
    const record *rec;
};

/* the record's window on gpu with the constants k: milliseconds */
double predict_ms(const row &r, const consts &k)
{
    for (int i = 0; i < NP; i++) model_set_constant(P[i].name, k[(size_t)i]);
    std::vector<double> s(r.rec->size(), 0.0);
    double total = 0.0;
    for (size_t e = 0; e < r.rec->size(); e++) {
        const event &x = (*r.rec)[e];
        emu_model_prediction p;
        if (x.kind == 1)
            s[e] = s[(size_t)x.again];
        else if (x.kind == 2) {
            if (!emu_model_predict_gemm(r.gpu.c_str(), x.g[0], x.g[1], x.g[2], x.g[3], x.elem, x.tensor, &p))
                die("unknown GPU " + r.gpu);
            s[e] = p.seconds;
        } else {
            emu_model_counts c = x.c;
            c.warp_path_clk = path_at(x.grid, k[1], k[7]);
            if (!emu_model_predict(&c, r.gpu.c_str(), 0.0, &p)) die("unknown GPU " + r.gpu);
            s[e] = p.seconds;
        }
        total += s[e];
    }
    return total * 1e3;
}

/* --breakdown: where a row's predicted time goes with the constants k, summed over its events (ms): the cuBLAS
 * calls (with their launches), the kernels' launch overhead, each kernel's limiting term by name, and what the
 * kernels would lose without their barriers, their global-load waits or their issue paths (a marginal, not a
 * share) */
void breakdown(const row &r, const consts &k, double cv_ms)
{
    for (int i = 0; i < NP; i++) model_set_constant(P[i].name, k[(size_t)i]);
    std::map<std::string, double> by;
    double gemm = 0, launch = 0, no_bar = 0, no_wait = 0, no_path = 0, kern = 0;
    int ngemm = 0, nlaunch = 0;
    std::map<std::string, double> kernels;
    for (size_t e = 0; e < r.rec->size(); e++) {
        const event &x = (*r.rec)[e];
        emu_model_prediction p, q;
        if (x.kind == 2) {
            emu_model_predict_gemm(r.gpu.c_str(), x.g[0], x.g[1], x.g[2], x.g[3], x.elem, x.tensor, &p);
            gemm += p.seconds * 1e3, ngemm++;
            continue;
        }
        const event &l = x.kind == 1 ? (*r.rec)[(size_t)x.again] : x;
        emu_model_counts c = l.c;
        c.warp_path_clk = path_at(l.grid, k[1], k[7]);
        emu_model_predict(&c, r.gpu.c_str(), 0.0, &p);
        nlaunch++, launch += p.bound_s[p.nbounds - 1] * 1e3, kern += p.seconds * 1e3;
        by[p.limiter] += (p.seconds - p.bound_s[p.nbounds - 1]) * 1e3;
        if (!kernels.count(c.kernel)) {
            double tot = 0;
            for (int i = 0; i < EMU_PIPES; i++) tot += c.inst[i];
            double w = std::max(1.0, c.warps);
            printf("    [%s] blocks %g, %g threads, R %g, warp inst %.0f, path %.0f clk, global waits %.1f, "
                   "barriers/block %.1f, shared wf/warp %.1f, l1 hit %.2f\n",
                   c.kernel, c.blocks, c.threads_per_block, p.resident_blocks, tot / w, c.warp_path_clk / w,
                   c.global_waits / w, c.barriers / std::max(1.0, c.blocks), c.shared_wavefronts / w,
                   c.l1_hit_sectors / std::max(1.0, c.l1_hit_sectors + c.l2_read_sectors));
        }
        kernels[c.kernel] += p.seconds * 1e3;
        emu_model_counts d = c;
        d.barriers = 0, emu_model_predict(&d, r.gpu.c_str(), 0.0, &q), no_bar += (p.seconds - q.seconds) * 1e3;
        d = c, d.global_waits = 0, emu_model_predict(&d, r.gpu.c_str(), 0.0, &q);
        no_wait += (p.seconds - q.seconds) * 1e3;
        d = c, d.warp_path_clk = 0, emu_model_predict(&d, r.gpu.c_str(), 0.0, &q);
        no_path += (p.seconds - q.seconds) * 1e3;
    }
    printf("%s %s %s %s: measured %.4g ms, held out %.4g (x%.2f) | cuBLAS %d calls %.4g | kernels %d launches "
           "%.4g, of it launch %.4g;",
           r.lesson.c_str(), r.impl.c_str(), r.gpu.c_str(), r.size.c_str(), r.measured_ms, cv_ms,
           cv_ms / r.measured_ms, ngemm, gemm, nlaunch, kern, launch);
    for (auto &b : by) printf(" %s %.4g", b.first.c_str(), b.second);
    printf(" | without barriers -%.4g, without global waits -%.4g, without issue paths -%.4g\n", no_bar, no_wait,
           no_path);
    for (auto &kk : kernels) printf("    %s %.4g\n", kk.first.c_str(), kk.second);
}

double loss(const std::vector<const row *> &rows, const consts &k)
{
    double l = 0.0;
    for (const row *r : rows) {
        double d = log(predict_ms(*r, k) / r->measured_ms);
        l += d * d;
    }
    return rows.empty() ? 0.0 : l / (double)rows.size();
}

/* u in R^NP -> constants within P's bounds (a logistic map of the log-range: smooth, never outside) */
consts to_consts(const std::vector<double> &u)
{
    consts k((size_t)NP);
    for (int i = 0; i < NP; i++) {
        double t = 1.0 / (1.0 + exp(-u[(size_t)i]));
        k[(size_t)i] = exp(log(P[i].lo) + t * (log(P[i].hi) - log(P[i].lo)));
    }
    return k;
}
std::vector<double> to_u(const consts &k)
{
    std::vector<double> u((size_t)NP);
    for (int i = 0; i < NP; i++) {
        double t = (log(k[(size_t)i]) - log(P[i].lo)) / (log(P[i].hi) - log(P[i].lo));
        t = std::min(1.0 - 1e-6, std::max(1e-6, t));
        u[(size_t)i] = log(t / (1.0 - t));
    }
    return u;
}

/* Nelder-Mead from start, restarted from its best point until a restart gains nothing */
consts fit_from(const std::vector<const row *> &rows, const consts &start)
{
    std::vector<double> best = to_u(start);
    double fbest = loss(rows, to_consts(best));
    for (int restart = 0; restart < 8; restart++) {
        std::vector<std::vector<double>> x(NP + 1, best);
        std::vector<double> f((size_t)NP + 1);
        for (int i = 0; i < NP; i++) x[(size_t)i + 1][(size_t)i] += 1.0;
        for (int i = 0; i <= NP; i++) f[(size_t)i] = loss(rows, to_consts(x[(size_t)i]));
        for (int it = 0; it < 3000; it++) {
            std::vector<size_t> o((size_t)NP + 1);
            for (size_t i = 0; i < o.size(); i++) o[i] = i;
            std::sort(o.begin(), o.end(), [&](size_t a, size_t b) { return f[a] < f[b]; });
            size_t lo = o[0], hi = o[(size_t)NP], nh = o[(size_t)NP - 1];
            if (f[hi] - f[lo] < 1e-10) break;
            std::vector<double> c((size_t)NP, 0.0);
            for (size_t i = 0; i <= (size_t)NP; i++)
                if (i != hi)
                    for (int d = 0; d < NP; d++) c[(size_t)d] += x[i][(size_t)d] / NP;
            auto along = [&](double t) {
                std::vector<double> y((size_t)NP);
                for (int d = 0; d < NP; d++)
                    y[(size_t)d] = c[(size_t)d] + t * (x[hi][(size_t)d] - c[(size_t)d]);
                return y;
            };
            std::vector<double> r = along(-1.0);
            double fr = loss(rows, to_consts(r));
            if (fr < f[lo]) {
                std::vector<double> e = along(-2.0);
                double fe = loss(rows, to_consts(e));
                if (fe < fr)
                    x[hi] = e, f[hi] = fe;
                else
                    x[hi] = r, f[hi] = fr;
            } else if (fr < f[nh]) {
                x[hi] = r, f[hi] = fr;
            } else {
                std::vector<double> k = along(fr < f[hi] ? -0.5 : 0.5);
                double fk = loss(rows, to_consts(k));
                if (fk < std::min(fr, f[hi]))
                    x[hi] = k, f[hi] = fk;
                else
                    for (size_t i = 0; i <= (size_t)NP; i++) {
                        if (i == lo) continue;
                        for (int d = 0; d < NP; d++)
                            x[i][(size_t)d] = x[lo][(size_t)d] + 0.5 * (x[i][(size_t)d] - x[lo][(size_t)d]);
                        f[i] = loss(rows, to_consts(x[i]));
                    }
            }
        }
        size_t b = (size_t)(std::min_element(f.begin(), f.end()) - f.begin());
        int gained = f[b] < fbest - 1e-9;
        if (f[b] < fbest) fbest = f[b], best = x[b];
        if (!gained) break;
    }
    return to_consts(best);
}

/* from today's constants and from the middle of every range (a simplex can stall in a corner of the bounds):
 * the better of the two */
consts fit(const std::vector<const row *> &rows, const consts &today)
{
    consts a = fit_from(rows, today), b = fit_from(rows, to_consts(std::vector<double>((size_t)NP, 0.0)));
    return loss(rows, a) <= loss(rows, b) ? a : b;
}

std::vector<std::string> split_csv(const std::string &line)
{
    std::vector<std::string> out(1);
    int quoted = 0;
    for (char ch : line) {
        if (ch == '"')
            quoted = !quoted;
        else if (ch == ',' && !quoted)
            out.emplace_back();
        else if (ch != '\n' && ch != '\r')
            out.back() += ch;
    }
    return out;
}
std::vector<std::vector<std::string>> read_csv(const std::string &path)
{
    std::vector<std::vector<std::string>> rows;
    FILE *f = fopen(path.c_str(), "r");
    if (!f) return rows;
    char line[4096];
    while (fgets(line, sizeof line, f)) rows.push_back(split_csv(line));
    fclose(f);
    return rows;
}
int column(const std::vector<std::string> &head, const char *name, const std::string &path)
{
    for (size_t i = 0; i < head.size(); i++)
        if (head[i] == name) return (int)i;
    die(path + ": no column " + name);
}

double spearman(const std::vector<double> &a, const std::vector<double> &b)
{
    auto ranks = [](const std::vector<double> &v) {
        std::vector<double> r(v.size());
        for (size_t i = 0; i < v.size(); i++) {
            double less = 0, same = 0;
            for (double w : v) less += w < v[i], same += w == v[i];
            r[i] = less + (same + 1) / 2.0;
        }
        return r;
    };
    std::vector<double> x = ranks(a), y = ranks(b);
    double n = (double)x.size(), mx = (n + 1) / 2, sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < x.size(); i++)
        sxy += (x[i] - mx) * (y[i] - mx), sxx += (x[i] - mx) * (x[i] - mx), syy += (y[i] - mx) * (y[i] - mx);
    return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : 0.0;
}

/* per lesson: rows, median factor, share within 1.5x, Spearman per (GPU, size) of 3 versions or more */
struct summary {
    int n = 0;
    double median = 0, within = 0;
    std::string rho;
};
summary summary_of(const std::vector<const row *> &rows, const std::vector<double> &pred)
{
    summary s;
    std::vector<double> f;
    std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> groups;
    for (size_t i = 0; i < rows.size(); i++) {
        double r = pred[i] / rows[i]->measured_ms;
        f.push_back(std::max(r, 1.0 / r));
        s.within += f.back() <= 1.5;
        auto &g = groups[rows[i]->gpu + " " + rows[i]->size];
        g.first.push_back(rows[i]->measured_ms), g.second.push_back(pred[i]);
    }
    s.n = (int)f.size();
    if (!s.n) return s;
    std::sort(f.begin(), f.end());
    s.median = s.n % 2 ? f[(size_t)s.n / 2] : 0.5 * (f[(size_t)s.n / 2 - 1] + f[(size_t)s.n / 2]);
    s.within /= s.n;
    for (auto &g : groups)
        if (g.second.first.size() >= 3) {
            char b[80];
            snprintf(b, sizeof b, "%s%s %.2f", s.rho.empty() ? "" : ", ", g.first.c_str(),
                     spearman(g.second.first, g.second.second));
            s.rho += b;
        }
    if (s.rho.empty()) s.rho = "-";
    return s;
}

std::string fmt(double v)
{
    char b[32];
    snprintf(b, sizeof b, "%.4g", v);
    return b;
}

} /* namespace */

int main(int argc, char **argv)
{
    std::string records, reports, retired, peers, csv;
    int check = 0, fit_small = 1, show = 0; /* --no-small: the fits leave the small sizes' rows out (predicted all the same) */
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (a == "--records" && v)
            records = v, i++;
        else if (a == "--reports" && v)
            reports = v, i++;
        else if (a == "--retired" && v)
            retired = v, i++;
        else if (a == "--peers" && v)
            peers = v, i++;
        else if (a == "--csv" && v)
            csv = v, i++;
        else if (a == "--no-small")
            fit_small = 0;
        else if (a == "--check")
            check = 1;
        else if (a == "--breakdown")
            show = 1;
        else
            die("usage: model_fit --records DIR --reports \"DIR ...\" --retired FILE --peers FILE [--csv "
                "OUT] [--no-small] [--check] [--breakdown]");
    }
    if (records.empty() || reports.empty()) die("--records and --reports are needed");
    consts today((size_t)NP);
    for (int i = 0; i < NP; i++) today[(size_t)i] = model_constant(P[i].name);

    /* the records, and the prediction each one's run printed (index.csv): the check that this tool reads them
     * as the emulator predicted them */
    std::map<std::string, record> recs;
    std::vector<row> rows;
    auto rec_of = [&](const std::string &file) -> const record * {
        if (!recs.count(file)) {
            FILE *f = fopen((records + "/" + file).c_str(), "r");
            if (!f) return NULL;
            fclose(f);
            recs[file] = read_record(records + "/" + file);
        }
        return &recs[file];
    };
    std::vector<std::vector<std::string>> index = read_csv(records + "/index.csv");
    if (index.empty()) die(records + "/index.csv: missing (make model-record)");
    int bad = 0;
    for (size_t i = 1; i < index.size(); i++) {
        const std::vector<std::string> &x = index[i];
        if (x.size() < 7) continue;
        row r{x[0],
              x[1],
              x[x.size() - 2],
              x[2],
              atof(x.back().c_str()),
              rec_of("lesson" + x[0] + "_" + x[1] + "_" + x[2] + ".rec")};
        if (!r.rec) die(records + ": no record for " + x[0] + " " + x[1] + " " + x[2]);
        double ms = predict_ms(r, today);
        if (fabs(ms - r.measured_ms) > 0.0015 + 1e-4 * r.measured_ms) {
            fprintf(stderr, "model_fit: lesson %s %s %s: %.4f ms from the record, %.4f printed by its run\n",
                    x[0].c_str(), x[1].c_str(), x[2].c_str(), ms, r.measured_ms);
            bad = 1;
        }
    }
    if (bad) die("the records do not reproduce their runs' predictions");

    /* the GPU reports: results.csv then its subfolders' in name order; a (lesson, version, size)'s first
     * figure */
    std::vector<std::string> report_dirs;
    for (size_t p = 0; p < reports.size();) {
        size_t q = reports.find(' ', p);
        if (q == std::string::npos) q = reports.size();
        if (q > p) report_dirs.push_back(reports.substr(p, q - p));
        p = q + 1;
    }
    std::vector<std::vector<std::string>> gone = read_csv(retired);
    std::string missing; /* measured rows with no record yet */
    for (const std::string &dir : report_dirs) {
        std::string name = dir.substr(dir.find_last_of('/') + 1);
        std::string gpu = name.find("h200") != std::string::npos   ? "H200"
                          : name.find("h100") != std::string::npos ? "H100"
                                                                   : "";
        if (gpu.empty()) die(dir + ": which GPU (h100, h200 in its name)?");
        std::vector<std::string> files{dir + "/results.csv"};
        std::string ls = "ls -d " + dir + "/*/results.csv 2>/dev/null | LC_ALL=C sort";
        FILE *p = popen(ls.c_str(), "r");
        char buf[1024];
        while (p && fgets(buf, sizeof buf, p)) files.push_back(std::string(buf, strcspn(buf, "\n")));
        if (p) pclose(p);
        std::map<std::string, int> seen;
        for (const std::string &f : files) {
            std::vector<std::vector<std::string>> t = read_csv(f);
            if (t.empty()) continue;
            /* retired.csv's report: the file's folder under docs/results/ (nvidia-h200 for the top-level
             * results.csv, nvidia-h200/issue27-report for a subfolder's) */
            std::string report = name + f.substr(dir.size(), f.size() - dir.size() - strlen("/results.csv"));
            int cl = column(t[0], "lesson", f), ci = column(t[0], "impl", f), cs = column(t[0], "size", f);
            int cf = column(t[0], "forward_ms", f), cb = column(t[0], "backward_ms", f);
            for (size_t i = 1; i < t.size(); i++) {
                const std::vector<std::string> &x = t[i];
                if (x.size() <= (size_t)std::max(cf, cb) || x[(size_t)cf].empty()) continue;
                std::string key = x[(size_t)cl] + " " + x[(size_t)ci] + " " + x[(size_t)cs];
                int is_gone = 0;
                for (const std::vector<std::string> &g : gone)
                    is_gone |=
                        g.size() >= 3 && g[0] == x[(size_t)cl] && g[1] == x[(size_t)ci] && g[2] == report;
                if (is_gone || seen[key]++) continue;
                const record *rec =
                    rec_of("lesson" + x[(size_t)cl] + "_" + x[(size_t)ci] + "_" + x[(size_t)cs] + ".rec");
                if (!rec) { /* left out, and said so under the table */
                    missing += (missing.empty() ? "" : ", ") + gpu + " lesson " + key;
                    continue;
                }
                rows.push_back({x[(size_t)cl], x[(size_t)ci], gpu, x[(size_t)cs],
                                atof(x[(size_t)cf].c_str()) + atof(x[(size_t)cb].c_str()), rec});
            }
        }
    }
    size_t lesson_rows = rows.size();
    /* the peer: published GFLOP/s at side S -> ms */
    std::vector<std::vector<std::string>> pt = read_csv(peers);
    for (size_t i = 1; i < pt.size(); i++) {
        const std::vector<std::string> &x = pt[i];
        if (x.size() < 5 || x[4].empty()) continue;
        const record *rec = rec_of("sgemm_" + x[0] + "_" + x[1] + ".rec");
        if (!rec) {
            missing += (missing.empty() ? "" : ", ") + std::string("SGEMM_CUDA kernel ") + x[0];
            continue;
        }
        double s = atof(x[1].c_str());
        rows.push_back({"sgemm", x[0], x[2], x[1], 2.0 * s * s * s / (atof(x[4].c_str()) * 1e9) * 1e3, rec});
        /* the record against the figure make predict-peers printed with today's constants */
        double g = 2.0 * s * s * s / (predict_ms(rows.back(), today) * 1e-3) / 1e9, want = atof(x[3].c_str());
        if (fabs(g / want - 1.0) > 1e-3)
            die("SGEMM_CUDA's kernel " + x[0] + ": " + fmt(g) + " GFLOP/s from its record, " + x[3] +
                " in " + peers);
    }

    std::vector<std::string> lessons;
    for (size_t i = 0; i < lesson_rows; i++)
        if (std::find(lessons.begin(), lessons.end(), rows[i].lesson) == lessons.end())
            lessons.push_back(rows[i].lesson);
    std::sort(lessons.begin(), lessons.end());
    std::vector<double> cv(rows.size(), 0.0), all(rows.size(), 0.0);
    std::vector<consts> folds;
    for (const std::string &l : lessons) {
        std::vector<const row *> train;
        for (const row &r : rows)
            if (r.lesson != l && (fit_small || r.size != "small")) train.push_back(&r);
        consts k = fit(train, today);
        folds.push_back(k);
        for (size_t i = 0; i < rows.size(); i++)
            if (rows[i].lesson == l) cv[i] = predict_ms(rows[i], k);
    }
    if (show)
        for (size_t f = 0; f < lessons.size(); f++)
            for (size_t i = 0; i < lesson_rows; i++)
                if (rows[i].lesson == lessons[f]) breakdown(rows[i], folds[f], cv[i]);
    std::vector<const row *> every;
    for (const row &r : rows)
        if (fit_small || r.size != "small") every.push_back(&r);
    consts kall = fit(every, today);
    for (size_t i = 0; i < rows.size(); i++) all[i] = predict_ms(rows[i], kall);
    if (show) { /* the rows that pull barrier_clk up: each row's squared log error at the fitted barrier cost
                 * and at a __syncthreads' own cost (40 clk, today's), the others as fitted */
        consts k40 = kall;
        k40[3] = 40.0;
        printf("\nbarrier_clk %.4g (all rows' fit) against 40: the rows whose error it changes\n", kall[3]);
        for (const row *r : every) {
            double a = log(predict_ms(*r, kall) / r->measured_ms), b = log(predict_ms(*r, k40) / r->measured_ms);
            if (fabs(a * a - b * b) > 0.01)
                printf("  %s %s %s %s: x%.2f at %.4g, x%.2f at 40 (squared log error %+.3f)\n", r->lesson.c_str(),
                       r->impl.c_str(), r->gpu.c_str(), r->size.c_str(), exp(a), kall[3], exp(b), a * a - b * b);
        }
    }

    std::string out = "lesson,impl,gpu,size,measured_ms,predicted_ms,held_out\n";
    char b[256];
    for (size_t i = 0; i < lesson_rows; i++) {
        const row &r = rows[i];
        snprintf(b, sizeof b, "%s,%s,%s,%s,%.4f,%.4f,1\n", r.lesson.c_str(), r.impl.c_str(), r.gpu.c_str(),
                 r.size.c_str(), r.measured_ms, cv[i]);
        out += b;
    }
    for (size_t i = 0; i < rows.size(); i++) {
        const row &r = rows[i];
        snprintf(b, sizeof b, "%s,%s,%s,%s,%.4f,%.4f,0\n", r.lesson.c_str(), r.impl.c_str(), r.gpu.c_str(),
                 r.size.c_str(), r.measured_ms, all[i]);
        out += b;
    }

    /* the table: per lesson at forum and medium sizes (the bar), then every size */
    printf("Cross-validated (each lesson predicted by constants fitted on the others and SGEMM_CUDA's "
           "figures%s; a MODEL, not a measurement):\n\n",
           fit_small ? "" : ", the fits on the forum and medium rows: the small ones predicted, not fitted");
    printf("| lesson | rows (forum, medium) | median error | within 1.5x | Spearman (GPU size: rho) | rows "
           "(all sizes) "
           "| median error | within 1.5x | constants of today: median, within 1.5x (forum, medium) "
           "| fitted on all rows (in sample): median, within 1.5x (forum, medium) |\n");
    printf("|---|---:|---:|---:|---|---:|---:|---:|---|---|\n");
    std::vector<std::string> groups = lessons;
    groups.push_back("all");
    for (const std::string &l : groups) {
        std::vector<const row *> big, any;
        std::vector<double> pb, pa, tb, ab;
        for (size_t i = 0; i < lesson_rows; i++) {
            if (l != "all" && rows[i].lesson != l) continue;
            any.push_back(&rows[i]), pa.push_back(cv[i]);
            if (rows[i].size != "small")
                big.push_back(&rows[i]), pb.push_back(cv[i]), tb.push_back(predict_ms(rows[i], today)),
                    ab.push_back(all[i]);
        }
        summary s = summary_of(big, pb), t = summary_of(any, pa), d = summary_of(big, tb), f = summary_of(big, ab);
        auto med = [](const summary &x) {
            return x.n ? "x" + fmt(round(x.median * 100) / 100) : std::string("-");
        };
        auto share = [](const summary &x) {
            return x.n ? fmt(round(100 * x.within)) + "%" : std::string("-");
        };
        printf("| %s | %d | %s | %s | %s | %d | %s | %s | %s, %s | %s, %s |\n",
               l == "all" ? "all" : ("lesson " + l).c_str(), s.n, med(s).c_str(), share(s).c_str(),
               l == "all" ? "" : s.rho.c_str(), t.n, med(t).c_str(), share(t).c_str(), med(d).c_str(),
               share(d).c_str(), med(f).c_str(), share(f).c_str());
    }
    printf("\nThe constants (today's in emu_gpu.cc; each fold's fitted without its lesson; the last on every "
           "row, "
           "peer included: %zu lesson rows, %zu of the peer):\n\n| constant | today |",
           lesson_rows, rows.size() - lesson_rows);
    for (const std::string &l : lessons) printf(" without lesson %s |", l.c_str());
    printf(" all rows |\n|---|---:|");
    for (size_t i = 0; i <= lessons.size(); i++) printf("---:|");
    printf("\n");
    for (int i = 0; i < NP; i++) {
        printf("| `%s` | %s |", P[i].name, fmt(today[(size_t)i]).c_str());
        for (const consts &k : folds) printf(" %s |", fmt(k[(size_t)i]).c_str());
        printf(" %s |\n", fmt(kall[(size_t)i]).c_str());
    }
    printf("| mean squared log error (its training rows) | %.3f |", loss(every, today));
    for (size_t f = 0; f < folds.size(); f++) {
        std::vector<const row *> train;
        for (const row &r : rows)
            if (r.lesson != lessons[f] && (fit_small || r.size != "small")) train.push_back(&r);
        printf(" %.3f |", loss(train, folds[f]));
    }
    printf(" %.3f |\n", loss(every, kall));
    if (!missing.empty())
        printf("\nMeasured, with no record yet (make model-record), so left out: %s\n", missing.c_str());

    if (!csv.empty()) {
        if (check) {
            std::string old;
            FILE *f = fopen(csv.c_str(), "r");
            if (f) {
                char buf[4096];
                size_t n;
                while ((n = fread(buf, 1, sizeof buf, f)) > 0) old.append(buf, n);
                fclose(f);
            }
            if (old != out) {
                fprintf(stderr,
                        "model_fit: %s is stale against the records and the GPU reports: make model-cv\n",
                        csv.c_str());
                return 1;
            }
            printf("\nmodel_fit: %s is up to date\n", csv.c_str());
        } else {
            FILE *f = fopen(csv.c_str(), "w");
            if (!f || fputs(out.c_str(), f) < 0 || fclose(f) != 0) die("cannot write " + csv);
            printf("\nmodel_fit: wrote %s\n", csv.c_str());
        }
    }
    return 0;
}
