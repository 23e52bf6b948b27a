/* predict_extrapolate.cc - TEST-ONLY: a prediction at a size too long to emulate, from the model's records of runs
 * at reduced sizes (EMU_MODEL_RECORD, emu_model_record.cc). Every count of every launch (instructions by pipe,
 * wavefronts, requests, sectors, barriers, blocks) and every cuBLAS call's m, n, k is taken as affine in each
 * reduced dimension: with two runs per dimension (2^D records for D dimensions) each is extrapolated
 * multilinearly to the target, then the time formula (emu_gpu.cc) runs on the result -- waves, occupancy and
 * tails at the target's grid. Exact where the counts are affine (a loop over the dimension in whole tiles, a grid
 * along it); tests/cuda_emu/README.md "Sizes too long to run" says what is not, and predict_sampling.sh checks it
 * against a direct run.
 *
 *   predict_extrapolate --impl cuda-v3 --at J=2000 J=64:a.rec J=128:b.rec
 *   predict_extrapolate --impl cuda-v2 --at J=2000,N=1990 J=64,N=64:a J=128,N=64:b J=64,N=128:c J=128,N=128:d
 *
 * prints the lesson's EMU_PREDICT line for impl, with the extrapolated predicted time; --record-out FILE also
 * writes the extrapolated counts as a record of the target size (the format of emu_model_record.cc), which
 * model_fit.cc reads as it reads a direct run's. */
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

namespace {

struct event {
    enum { LAUNCH, AGAIN, GEMM } kind;
    std::string name;            /* the kernel, for a launch */
    int found_sass = 0, again = -1, elem = 0, tensor = 0;
    std::vector<double> v;       /* a launch's count fields; a gemm's m, n, k, batch */
};
struct record {
    std::map<std::string, double> at; /* dimension -> value of this run */
    std::string gpu;
    std::vector<event> events;
};

[[noreturn]] void die(const char *fmt, const char *a = "", const char *b = "")
{
    fprintf(stderr, "predict_extrapolate: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n");
    exit(2);
}

/* "J=64,N=128" -> {J: 64, N: 128} */
std::map<std::string, double> parse_dims(const std::string &s)
{
    std::map<std::string, double> out;
    size_t p = 0;
    while (p < s.size()) {
        size_t comma = s.find(',', p), eq = s.find('=', p);
        if (comma == std::string::npos) comma = s.size();
        if (eq == std::string::npos || eq > comma) die("'%s': expected DIM=VALUE[,DIM=VALUE]", s.c_str());
        char *end;
        std::string val = s.substr(eq + 1, comma - eq - 1);
        double v = strtod(val.c_str(), &end);
        if (*end || v <= 0) die("'%s': a dimension's value is a positive number", s.c_str());
        out[s.substr(p, eq - p)] = v;
        p = comma + 1;
    }
    return out;
}

record read_record(const std::string &arg)
{
    size_t colon = arg.find(':');
    if (colon == std::string::npos) die("'%s': expected DIMS:FILE", arg.c_str());
    record r;
    r.at = parse_dims(arg.substr(0, colon));
    std::string path = arg.substr(colon + 1);
    FILE *f = fopen(path.c_str(), "r");
    if (!f) die("cannot read %s", path.c_str());
    char line[8192];
    emu_model_counts c;
    const char *names[64];
    double *field[64];
    int nf = record_fields(&c, names, field, 64), wp = 0;
    while (wp < nf && strcmp(names[wp], "warp_path_clk")) wp++;
    while (fgets(line, sizeof line, f)) {
        char word[16], name[200];
        int used = 0;
        if (sscanf(line, "%15s%n", word, &used) != 1) continue;
        const char *rest = line + used;
        event e;
        if (!strcmp(word, "gpu")) {
            if (sscanf(rest, "%199s", name) == 1) r.gpu = name;
            continue;
        } else if (!strcmp(word, "launch")) {
            e.kind = event::LAUNCH;
            if (sscanf(rest, "%199s %d%n", name, &e.found_sass, &used) != 2) die("%s: a bad launch line", path.c_str());
            e.name = name, rest += used;
            for (int i = 0; i < nf; i++) {
                char *end;
                e.v.push_back(strtod(rest, &end));
                if (end == rest) die("%s: a launch line with too few counts", path.c_str());
                rest = end;
            }
            for (int g = 0; g < PATH_GRID; g++) { /* the paths on the latency grid: the path where absent */
                char *end;
                double x = strtod(rest, &end);
                e.v.push_back(end == rest ? e.v[(size_t)wp] : x);
                rest = end;
            }
            double hopper[8]; /* sm_90a's counts after the grid (zeros where the line has none) */
            int nh = record_hopper_read(rest, hopper, 8);
            for (int i = 0; i < nh; i++) e.v.push_back(hopper[i]);
        } else if (!strcmp(word, "again")) {
            e.kind = event::AGAIN;
            if (sscanf(rest, "%d", &e.again) != 1 || e.again < 0 || e.again >= (int)r.events.size() ||
                r.events[e.again].kind != event::LAUNCH)
                die("%s: a bad again line", path.c_str());
        } else if (!strcmp(word, "gemm")) {
            e.kind = event::GEMM, e.v.resize(4);
            if (sscanf(rest, "%lf %lf %lf %lf %d %d", &e.v[0], &e.v[1], &e.v[2], &e.v[3], &e.elem, &e.tensor) != 6)
                die("%s: a bad gemm line", path.c_str());
        } else {
            die("%s: unknown line '%s'", path.c_str(), word);
        }
        r.events.push_back(e);
    }
    fclose(f);
    if (r.gpu.empty()) die("%s: no gpu line (not a record of EMU_MODEL_RECORD?)", path.c_str());
    return r;
}

} /* namespace */

int main(int argc, char **argv)
{
    std::string impl = "?", at_arg, record_out;
    std::vector<record> recs;
    int verbose = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--impl") && i + 1 < argc) impl = argv[++i];
        else if (!strcmp(argv[i], "--at") && i + 1 < argc) at_arg = argv[++i];
        else if (!strcmp(argv[i], "--verbose")) verbose = 1;
        else if (!strcmp(argv[i], "--record-out") && i + 1 < argc) record_out = argv[++i];
        else if (argv[i][0] == '-') die("unknown option %s (--impl NAME --at DIMS [--verbose] DIMS:FILE ...)", argv[i]);
        else recs.push_back(read_record(argv[i]));
    }
    if (at_arg.empty() || recs.empty()) die("usage: predict_extrapolate --impl NAME --at DIMS DIMS:FILE ...");
    std::map<std::string, double> target = parse_dims(at_arg);
    size_t D = target.size();
    if (recs.size() != (size_t)1 << D) die("%s: needs two runs per dimension, every combination", at_arg.c_str());
    /* per dimension, its two values; every record names every dimension at one of them, each combination once */
    std::map<std::string, std::pair<double, double>> span;
    for (auto &t : target) {
        std::vector<double> vals;
        for (auto &r : recs) {
            if (!r.at.count(t.first)) die("a record without %s", t.first.c_str());
            vals.push_back(r.at[t.first]);
        }
        std::sort(vals.begin(), vals.end());
        vals.erase(std::unique(vals.begin(), vals.end()), vals.end());
        if (vals.size() != 2) die("%s: two distinct reduced values are needed", t.first.c_str());
        span[t.first] = {vals[0], vals[1]};
    }
    std::vector<double> weight;
    std::map<std::vector<double>, int> combos;
    for (auto &r : recs) {
        if (r.at.size() != D) die("a record names a dimension --at does not");
        double w = 1.0;
        std::vector<double> key;
        for (auto &t : target) {
            double lo = span[t.first].first, hi = span[t.first].second, v = r.at[t.first];
            w *= v == hi ? (t.second - lo) / (hi - lo) : (hi - t.second) / (hi - lo);
            key.push_back(v);
        }
        if (combos[key]++) die("two records of the same reduced size");
        weight.push_back(w);
        if (r.gpu != recs[0].gpu) die("records of two GPUs (%s, %s)", r.gpu.c_str(), recs[0].gpu.c_str());
        if (r.events.size() != recs[0].events.size())
            die("the runs launch different sequences (event counts differ): the dimension changes what runs, not "
                "only how much; not extrapolable");
    }
    emu_model_counts c;
    const char *names[64];
    double *field[64];
    int nf = record_fields(&c, names, field, 64);
    const char *invariant[] = {"threads_per_block", "regs", "static_smem", "dynamic_smem"};
    std::vector<emu_model_prediction> pred(recs[0].events.size());
    std::vector<std::string> out_events; /* --record-out */
    double seconds = 0, ideal = 0;
    std::map<std::string, double> by_limiter;
    unsigned long long launches = 0, again = 0, gemms = 0;
    for (size_t e = 0; e < recs[0].events.size(); e++) {
        const event &e0 = recs[0].events[e];
        for (auto &r : recs) {
            const event &x = r.events[e];
            if (x.kind != e0.kind || x.name != e0.name || x.again != e0.again || x.elem != e0.elem ||
                x.tensor != e0.tensor || x.found_sass != e0.found_sass)
                die("event %s differs between the runs: not extrapolable", std::to_string(e).c_str());
        }
        emu_model_prediction p;
        if (e0.kind == event::AGAIN) {
            p = pred[e0.again], again++, launches++;
            out_events.push_back(record_again((size_t)e0.again));
        } else {
            std::vector<double> v(e0.v.size(), 0.0);
            for (size_t r = 0; r < recs.size(); r++)
                for (size_t i = 0; i < v.size(); i++) v[i] += weight[r] * recs[r].events[e].v[i];
            for (double &x : v) x = std::max(0.0, x);
            if (e0.kind == event::GEMM) {
                for (double &x : v) x = std::max(1.0, round(x));
                if (!emu_model_predict_gemm(recs[0].gpu.c_str(), v[0], v[1], v[2], v[3], e0.elem, e0.tensor, &p))
                    die("unknown GPU %s", recs[0].gpu.c_str());
                gemms++;
                out_events.push_back(record_gemm(v[0], v[1], v[2], v[3], e0.elem, e0.tensor));
            } else {
                memset(&c, 0, sizeof c);
                snprintf(c.kernel, sizeof c.kernel, "%s", e0.name.c_str());
                c.found_sass = e0.found_sass;
                for (int i = 0; i < nf; i++) {
                    *field[i] = v[i];
                    for (const char *inv : invariant)
                        for (auto &r : recs)
                            if (!strcmp(names[i], inv) && r.events[e].v[i] != e0.v[i])
                                die("%s: its %s changes with the reduced dimension (occupancy would): not "
                                    "extrapolable", e0.name.c_str(), inv);
                    if (!strcmp(names[i], "blocks")) c.blocks = std::max(1.0, round(v[i]));
                }
                const char *hnames[8];
                double *hfield[8];
                int nh = record_hopper_fields(&c, hnames, hfield, 8);
                for (int i = 0; i < nh; i++) *hfield[i] = v[(size_t)(nf + PATH_GRID + i)];
                if (!emu_model_predict(&c, recs[0].gpu.c_str(), 64.0 * c.inst[EMU_PIPE_FP32], &p))
                    die("unknown GPU %s", recs[0].gpu.c_str());
                launches++;
                out_events.push_back(record_launch(c, &v[(size_t)nf]));
            }
            pred[e] = p;
            if (verbose)
                fprintf(stderr, "  %-40s %12.3f us  limiter %s  %.0f blocks\n",
                        e0.kind == event::GEMM ? "cuBLAS GEMM" : e0.name.c_str(), p.seconds * 1e6, p.limiter,
                        e0.kind == event::GEMM ? 0.0 : c.blocks);
        }
        seconds += p.seconds, ideal += p.roofline_fraction * p.seconds, by_limiter[p.limiter] += p.seconds;
    }
    if (!record_out.empty()) {
        int g = -1;
        for (int i = 0; emu_model_gpu_name(i); i++)
            if (recs[0].gpu == emu_model_gpu_name(i)) g = i;
        if (!record_write(record_out.c_str(), g, out_events)) die("cannot write %s", record_out.c_str());
    }
    std::string lim;
    double most = -1;
    for (auto &l : by_limiter)
        if (l.second > most) most = l.second, lim = l.first;
    std::string from;
    for (auto &t : target)
        from += (from.empty() ? "" : "; ") + t.first + " from " + std::to_string((long long)span[t.first].first) +
                " and " + std::to_string((long long)span[t.first].second);
    printf("Time model on %s, extrapolated (%s): a MODEL of that GPU, not a measurement\n", recs[0].gpu.c_str(),
           from.c_str());
    printf("  %-8s predicted %10.3f ms forward + backward  limiter %s (%.0f%% of the time)  %.1f%% of the roofline  "
           "[%llu launches (%llu predicted again), %llu cuBLAS calls]\n",
           impl.c_str(), seconds * 1e3, lim.c_str(), seconds > 0 ? 100.0 * most / seconds : 0.0,
           seconds > 0 ? 100.0 * ideal / seconds : 0.0, launches, again, gemms);
    return 0;
}
