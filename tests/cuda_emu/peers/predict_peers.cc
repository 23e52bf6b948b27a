/* predict_peers.cc - TEST-ONLY: `make predict-peers`. SGEMM_CUDA's kernels 1-12 (sgemm_launch.cu) under the
 * emulator: each is first checked against a float64 CPU GEMM at a small size (every block, full K), then its time
 * at each side in --sizes is predicted on --gpu by the time model (emu_gpu.cc) and written to --csv beside the
 * figure the peer's README publishes (A6000, side 4096 only), with cuBLAS by its stated efficiency model.
 *
 * What the prediction runs, per kernel and side S (M = N = S): the blocks of a sample (the first wave, each edge
 * role, the last block: emu_model.cc) at K = 32 and K = 64 (multiples of every kernel's step, and rows of A of
 * 128 bytes at least, so that a warp touches as many sectors and lines as at full K), and every count is extrapolated linearly in K to
 * K = S (the kernels' work per block is affine in K: one more tile of BK per iteration). --check-sampling S
 * instead predicts at side S both ways, sampled and K-scaled vs every block at full K, and fails above 5%.
 * --max-error F fails when a published figure is missed by more than a factor F either way. */
#include "sgemm_launch.h"

#include <cuda_runtime.h>
#include <emu_api.h>
#include "../emu_model.h" /* the latency grid of the warp paths, the record (--record) */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <string>
#include <vector>

#define CHECK(x)                                                                                  \
    do {                                                                                          \
        cudaError_t e_ = (x);                                                                     \
        if (e_ != cudaSuccess) {                                                                  \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));    \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

static const int KERNELS = 12; /* 12: cp.async (no published figure) */

struct operands {
    float *A, *B, *C; /* device: [M, K], [K, N], [M, N] */
};

static operands make_operands(int M, int N, int K, std::vector<float> *hA, std::vector<float> *hB,
                              std::vector<float> *hC)
{
    operands o;
    std::vector<float> a((size_t)M * K), b((size_t)K * N), c((size_t)M * N);
    unsigned s = 12345;
    auto rnd = [&]() { s = s * 1664525u + 1013904223u; return (float)((s >> 9) & 0xffff) / 65536.0f - 0.5f; };
    for (float &x : a) x = rnd();
    for (float &x : b) x = rnd();
    for (float &x : c) x = rnd();
    CHECK(cudaMalloc((void **)&o.A, a.size() * 4));
    CHECK(cudaMalloc((void **)&o.B, b.size() * 4));
    CHECK(cudaMalloc((void **)&o.C, c.size() * 4));
    CHECK(cudaMemcpy(o.A, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(o.B, b.data(), b.size() * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(o.C, c.data(), c.size() * 4, cudaMemcpyHostToDevice));
    if (hA) *hA = a, *hB = b, *hC = c;
    return o;
}

static void free_operands(operands o)
{
    CHECK(cudaFree(o.A));
    CHECK(cudaFree(o.B));
    CHECK(cudaFree(o.C));
}

/* Every kernel against a float64 GEMM at side n: |c - ref| <= 1e-4 * (sum_k |a b| + |beta c|) (float32 sums of
 * n products: the error bound grows with n times float's epsilon 6e-8; 1e-4 leaves room for any order). */
static int validate(int n)
{
    std::vector<float> a, b, c;
    const float alpha = 0.5f, beta = 3.0f;
    int bad = 0;
    for (int k = 1; k <= KERNELS; k++) {
        operands o = make_operands(n, n, n, &a, &b, &c);
        sgemm_peer_launch(k, n, n, n, alpha, o.A, o.B, beta, o.C);
        CHECK(cudaGetLastError());
        std::vector<float> out((size_t)n * n);
        CHECK(cudaMemcpy(out.data(), o.C, out.size() * 4, cudaMemcpyDeviceToHost));
        double worst = 0.0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double s = 0.0, mag = 0.0;
                for (int q = 0; q < n; q++) {
                    double p = (double)a[(size_t)i * n + q] * b[(size_t)q * n + j];
                    s += p, mag += fabs(p);
                }
                double ref = alpha * s + beta * (double)c[(size_t)i * n + j];
                double tol = 1e-4 * (fabs(alpha) * mag + fabs(beta * c[(size_t)i * n + j])) + 1e-6;
                worst = fmax(worst, fabs(out[(size_t)i * n + j] - ref) / tol);
            }
        printf("kernel %2d at %d: %s (worst error %.3f of the tolerance)\n", k, n, worst <= 1.0 ? "ok" : "WRONG", worst);
        bad += worst > 1.0;
        free_operands(o);
    }
    return bad;
}

/* the counts of one launch of kernel k at M = N = S and the given K (all blocks or a sample) */
static emu_model_counts observe(int k, int S, int K, double *grid)
{
    operands o = make_operands(S, S, K, NULL, NULL, NULL);
    sgemm_peer_launch(k, S, S, K, 0.5f, o.A, o.B, 3.0f, o.C);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) fprintf(stderr, "kernel %d at %d x %d x %d: %s\n", k, S, S, K, emu_last_error_message());
    emu_model_counts c;
    if (!emu_model_last(&c)) memset(&c, 0, sizeof c);
    emu::model_last_path_grid(grid);
    if (getenv("EMU_MODEL_DEBUG"))
        fprintf(stderr, "model: kernel %d S %d K %d: inst fp32 %.4g imad %.4g alu %.4g lsu %.4g ctrl %.4g; waits %.4g; "
                "shared wf %.4g, L1 wf %.4g; L1 hit %.4g, L2 rd %.4g wr %.4g hit %.4g, DRAM %.4g; barriers %.4g\n",
                k, S, K, c.inst[EMU_PIPE_FP32], c.inst[EMU_PIPE_IMAD], c.inst[EMU_PIPE_ALU], c.inst[EMU_PIPE_LSU],
                c.inst[EMU_PIPE_CTRL], c.global_waits, c.shared_wavefronts, c.l1_wavefronts, c.l1_hit_sectors,
                c.l2_read_sectors, c.l2_write_sectors, c.l2_hit_sectors, c.dram_sectors, c.barriers);
    free_operands(o);
    return c;
}

/* c1 at K1, c2 at K2 -> the counts at K: linear in K (every count but the launch's shape) */
static emu_model_counts extrapolate(const emu_model_counts &c1, const emu_model_counts &c2, double K1, double K2,
                                    double K)
{
    emu_model_counts c = c2;
    double t = (K - K1) / (K2 - K1);
    auto lin = [&](double x1, double x2) { return fmax(0.0, x1 + (x2 - x1) * t); };
    for (int p = 0; p < EMU_PIPES; p++) c.inst[p] = lin(c1.inst[p], c2.inst[p]);
    c.global_waits = lin(c1.global_waits, c2.global_waits);
    c.warp_path_clk = lin(c1.warp_path_clk, c2.warp_path_clk);
    c.shared_wavefronts = lin(c1.shared_wavefronts, c2.shared_wavefronts);
    c.l1_wavefronts = lin(c1.l1_wavefronts, c2.l1_wavefronts);
    c.global_requests = lin(c1.global_requests, c2.global_requests);
    c.l1_hit_sectors = lin(c1.l1_hit_sectors, c2.l1_hit_sectors);
    c.l2_read_sectors = lin(c1.l2_read_sectors, c2.l2_read_sectors);
    c.l2_write_sectors = lin(c1.l2_write_sectors, c2.l2_write_sectors);
    c.l2_hit_sectors = lin(c1.l2_hit_sectors, c2.l2_hit_sectors);
    c.dram_sectors = lin(c1.dram_sectors, c2.dram_sectors);
    c.barriers = lin(c1.barriers, c2.barriers);
    c.async_bytes = lin(c1.async_bytes, c2.async_bytes);
    return c;
}

/* the two reduced K: 32 and 64, multiples of every kernel's step (kernel 3: 32; kernel 11: 2 x 16), and rows of A
 * at least 128 bytes long, so that a warp's accesses touch as many sectors and lines as at full K */
static int k_low(int) { return 32; }

/* grid: the warp paths on the latency grid (emu_model.h), extrapolated as warp_path_clk is */
static emu_model_counts counts_at(int k, int S, const char *gpu, int sample, double *grid)
{
    emu_model_enable(gpu, sample);
    int K1 = k_low(k), K2 = 2 * K1;
    if (!sample || S <= K2) return observe(k, S, S, grid);
    double g1[emu::PATH_GRID];
    emu_model_counts c1 = observe(k, S, K1, g1), c2 = observe(k, S, K2, grid);
    for (int g = 0; g < emu::PATH_GRID; g++)
        grid[g] = fmax(0.0, g1[g] + (grid[g] - g1[g]) * ((double)S - K1) / (K2 - K1));
    return extrapolate(c1, c2, K1, K2, S);
}

/* the peer README's table: "| N | `file` | GFLOP/s |", N = 0 for cuBLAS */
static std::vector<double> published(const char *readme)
{
    std::vector<double> g(KERNELS + 1, -1.0);
    FILE *f = readme ? fopen(readme, "r") : NULL;
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        int n;
        char *last = strrchr(line, '|');
        if (sscanf(line, "| %d |", &n) != 1 || n < 0 || n > KERNELS || !last) continue;
        char *p = last - 1;
        while (p > line && *p != '|') p--;
        g[(size_t)n] = atof(p + 1);
    }
    if (f) fclose(f);
    return g;
}

static void print_shares(const emu_model_prediction &p)
{
    for (int i = 0; i < p.nbounds; i++)
        if (p.bound_s[i] > 0.02 * p.seconds) printf(" %s %.0f%%", emu_model_bound_name(i), 100.0 * p.bound_s[i] / p.seconds);
}

int main(int argc, char **argv)
{
    std::string sizes = "4096", gpu = "A6000";
    const char *csv = NULL, *readme = NULL, *record = NULL;
    double max_error = 0.0;
    int check_sampling = 0, validate_n = 256, only = 0;
    std::vector<int> chosen(KERNELS + 1, 1); /* 0: cuBLAS */
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (a == "--sizes" && v) sizes = v, i++;
        else if (a == "--gpu" && v) gpu = v, i++;
        else if (a == "--csv" && v) csv = v, i++;
        else if (a == "--readme" && v) readme = v, i++;
        else if (a == "--record" && v) record = v, i++;
        else if (a == "--max-error" && v) max_error = atof(v), i++;
        else if (a == "--check-sampling" && v) check_sampling = atoi(v), i++;
        else if (a == "--validate" && v) validate_n = atoi(v), i++;
        else if (a == "--kernel" && v) only = atoi(v), i++;
        else if (a == "--kernels" && v) { /* "1 2 ... 11": those predicted (every kernel is validated) */
            chosen.assign(KERNELS + 1, 0);
            for (char *t = strtok(argv[i + 1], " ,"); t; t = strtok(NULL, " ,"))
                if (atoi(t) >= 0 && atoi(t) <= KERNELS) chosen[(size_t)atoi(t)] = 1;
            i++;
        }
        else {
            fprintf(stderr, "usage: %s [--sizes \"512 4096\"] [--gpu A6000|A100|H100|H200] [--csv path] [--readme path] "
                    "[--record DIR] [--max-error F] [--check-sampling S] [--validate N (0: skip)] [--kernel N] [--kernels \"0 1 ...\"]\n", argv[0]);
            return 2;
        }
    }
    if (!emu_model_enable(gpu.c_str(), 0)) {
        fprintf(stderr, "predict_peers: unknown GPU '%s' (A6000, A100, H100, H200)\n", gpu.c_str());
        return 2;
    }
    emu_model_enable(NULL, 0);
    if (validate_n > 0 && validate(validate_n)) return 1;
    int status = 0;
    if (check_sampling) {
        printf("sampling check at side %d on %s: sampled blocks at K = 32 and 64 extrapolated, "
               "vs every block at full K\n", check_sampling, gpu.c_str());
        for (int k = 1; k <= KERNELS; k++) {
            if (only && k != only) continue;
            double f = 2.0 * pow(check_sampling, 3);
            emu_model_prediction ps, pf;
            double grid[emu::PATH_GRID];
            emu_model_counts cs = counts_at(k, check_sampling, gpu.c_str(), 1, grid);
            emu_model_counts cf = counts_at(k, check_sampling, gpu.c_str(), 0, grid);
            emu_model_predict(&cs, gpu.c_str(), f, &ps);
            emu_model_predict(&cf, gpu.c_str(), f, &pf);
            double d = ps.seconds / pf.seconds - 1.0;
            printf("kernel %2d: sampled %.4g s (%.0f blocks run), every block %.4g s (%.0f blocks): %+.1f%%%s\n", k,
                   ps.seconds, cs.blocks_run, pf.seconds, cf.blocks_run, 100.0 * d, fabs(d) > 0.05 ? "  OVER 5%" : "");
            status |= fabs(d) > 0.05;
        }
        return status;
    }
    std::vector<double> pub = published(readme);
    FILE *out = csv ? fopen(csv, "w") : NULL;
    if (csv && !out) {
        fprintf(stderr, "predict_peers: cannot write %s\n", csv);
        return 1;
    }
    if (out) fprintf(out, "kernel,size,gpu,predicted_gflops,published_gflops,limiter\n");
    printf("time model on %s (a model, not a measurement); published: the peer README's A6000 figure at 4096\n",
           gpu.c_str());
    double worst = 1.0;
    for (size_t i = 0; i < sizes.size();) {
        size_t j = sizes.find(' ', i);
        if (j == std::string::npos) j = sizes.size();
        int S = atoi(sizes.substr(i, j - i).c_str());
        i = j + 1;
        if (S <= 0) continue;
        double flops = 2.0 * pow(S, 3);
        for (int k = 0; k <= KERNELS; k++) {
            if ((only && k != only) || !chosen[(size_t)k]) continue;
            emu_model_prediction p;
            emu_model_counts c;
            memset(&c, 0, sizeof c);
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            double grid[emu::PATH_GRID];
            if (k == 0) emu_model_predict_gemm(gpu.c_str(), S, S, S, 1, 4, 0, &p);
            else {
                c = counts_at(k, S, gpu.c_str(), 1, grid);
                emu_model_predict(&c, gpu.c_str(), flops, &p);
            }
            if (record) { /* the counts as a record (emu_model_record.cc), DIR/sgemm_<k>_<S>.rec: model_fit.cc */
                std::string f = std::string(record) + "/sgemm_" + (k ? std::to_string(k) : "cublas") + "_" +
                                std::to_string(S) + ".rec";
                std::vector<std::string> ev{k ? emu::record_launch(c, grid)
                                              : emu::record_gemm(S, S, S, 1, 4, 0)};
                int g = 0;
                while (emu_model_gpu_name(g) && gpu != emu_model_gpu_name(g)) g++;
                if (!emu::record_write(f.c_str(), g, ev))
                    fprintf(stderr, "predict_peers: cannot write %s\n", f.c_str());
            }
            double g = flops / p.seconds / 1e9;
            double ref = S == 4096 && gpu == "A6000" ? pub[(size_t)k] : -1.0;
            printf("%-7s side %5d: %8.1f GFLOP/s predicted", k ? ("kernel " + std::to_string(k)).c_str() : "cuBLAS", S, g);
            if (ref > 0) {
                double r = g / ref;
                worst = fmax(worst, fmax(r, 1.0 / r));
                printf(", published %8.1f (x%.2f)", ref, r);
            }
            printf("  limiter %s:", p.limiter);
            print_shares(p);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            if (k)
                printf(" [%.0f blocks run, %.0f resident/SM, SASS fit residual %.2f, %.1f s]", c.blocks_run,
                       p.resident_blocks, c.fit_residual, (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
            printf("\n");
            if (out) {
                fprintf(out, "%s,%d,%s,%.1f,", k ? std::to_string(k).c_str() : "cublas", S, gpu.c_str(), g);
                if (ref > 0) fprintf(out, "%.1f", ref);
                fprintf(out, ",%s\n", p.limiter);
            }
            fflush(stdout);
        }
    }
    if (out) fclose(out);
    printf("worst calibration error: x%.2f", worst);
    for (int i = 0;; i++) {
        double v;
        const char *n = emu_model_constant(i, &v);
        if (!n) break;
        printf("%s %s = %g", i ? "," : "; constants:", n, v);
    }
    printf("\n");
    if (max_error > 0 && worst > max_error) {
        printf("predict-peers: FAILED: a calibration kernel is off by x%.2f (limit x%.2f)\n", worst, max_error);
        return 1;
    }
    return 0;
}
