/* lesson1.c - broadcast batched matmul: why torch.matmul keeps 1,107,427,328 bytes alive.
 *
 * Runs each implementation on the same seeded inputs, measures every tracked byte, and prints the table,
 * the per-tensor breakdown and the analytic formulas next to the tracker. See docs/lesson-1.md.
 *
 *   build/lesson1 --size forum --impl naive      # the forum's 1,107,427,328 bytes
 *   build/lesson1 --help
 */
#include "../kernels/compare.h"
#include "../kernels/rng.h"
#include "../kernels/track.h"
#include "bmm_session.h"
#include "cli.h"
#include "impl_gate.h"
#include "npy.h"
#include "report.h"
#include "../optimized/bmm_grouped.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cli_spec spec = {
    .program = "lesson1",
    .summary = "broadcast batched matmul: the expanded weight kept for backward",
    .ndims = 4,
    .dim_names = {"B", "G", "K", "N"},
    .nsizes = 3,
    .sizes = {{"tiny", {3, 2, 4, 5}}, {"small", {512, 8, 64, 64}}, {"forum", {8192, 8, 64, 64}}},
    .default_size = "forum",
    .nimpls = 3,
    .impl_names = {"naive", "cpu", "cuda"},
};

/* One line per implementation, printed before the runs so the table reads on its own. */
static const char *impl_about[] = {
    "torch.matmul's broadcasting path: W expanded and copied to (B*G, K, N), the copy saved for backward",
    "grouped GEMM on strided views (what an einsum runs): out_g = x_g W_g, no copy, no expansion",
    "the same three GEMMs with cublasSgemmStridedBatched on the GPU (tracked device memory)",
};

typedef struct {
    float *x, *W, *dout;
} master_inputs;

static int dump_all(const char *dir, const bmm_dims *d, const master_inputs *in, bmm_outputs *res,
                    const impl_row *rows, int n)
{
    size_t sx[2] = {d->B, d->G * d->K}, sw[3] = {d->G, d->K, d->N}, so[3] = {d->B, d->G, d->N};
    if (npy_make_dir(dir) != 0) return -1;
    int err = npy_dump(dir, "input", "x", in->x, DT_F32, 2, sx) | npy_dump(dir, "input", "W", in->W, DT_F32, 3, sw) |
              npy_dump(dir, "input", "dout", in->dout, DT_F32, 3, so);
    for (int i = 0; i < n; i++) {
        if (!rows[i].ran) continue;
        err |= npy_dump(dir, rows[i].impl, "out", res[i].out, DT_F32, 3, so) |
               npy_dump(dir, rows[i].impl, "dx", res[i].dx, DT_F32, 2, sx) |
               npy_dump(dir, rows[i].impl, "dW", res[i].dW, DT_F32, 3, sw);
    }
    return err ? -1 : 0;
}

/* max over out, dx and dW of max|a - ref| / max|ref| */
static double max_rel_vs(const bmm_dims *d, const bmm_outputs *a, const bmm_outputs *ref)
{
    double e1 = max_rel_err(a->out, DT_F32, ref->out, DT_F32, bmm_out_count(d));
    double e2 = max_rel_err(a->dx, DT_F32, ref->dx, DT_F32, bmm_x_count(d));
    double e3 = max_rel_err(a->dW, DT_F32, ref->dW, DT_F32, bmm_w_count(d));
    if (isnan(e1) || isnan(e2) || isnan(e3)) return NAN;
    return fmax(e1, fmax(e2, e3));
}

int main(int argc, char **argv)
{
    cli_options o;
    int rc = cli_parse(&spec, argc, argv, &o);
    if (rc == CLI_HELP) return 0;
    if (rc != CLI_OK) return 2;

    bmm_dims d = {(size_t)o.dims[0], (size_t)o.dims[1], (size_t)o.dims[2], (size_t)o.dims[3]};
    char dims[128], lim[32], limh[16];
    cli_format_dims(&spec, o.dims, dims, sizeof dims);
    format_bytes_exact(o.mem_limit, lim, sizeof lim);
    format_bytes_human(o.mem_limit, limh, sizeof limh);

    /* The driver itself holds the inputs and one result set per implementation: refuse before allocating if
     * that alone is over the limit (or overflows). */
    size_t io_bytes = size_mul(4, size_add(size_mul(2, size_add(bmm_x_count(&d), bmm_out_count(&d))),
                                           bmm_w_count(&d)));
    size_t driver_bytes = size_mul(io_bytes, (size_t)o.nimpl + 1);
    if (driver_bytes == SIZE_MAX || driver_bytes > o.mem_limit) {
        char need[32];
        format_bytes_exact(driver_bytes, need, sizeof need);
        fprintf(stderr, "lesson1: dims %s need %s bytes for the inputs and results alone, over --mem-limit %s\n",
                dims, driver_bytes == SIZE_MAX ? "more than 2^64" : need, lim);
        return 2;
    }

    if (report_prepare_outputs(spec.program, o.csv_path, o.dump_dir) != 0) return 2;

    printf("Lesson 1: broadcast batched matmul, x (B, G*K) viewed (B, G, 1, K) times W (G, K, N)\n");
    printf("size %s: %s   seed %llu   mem-limit %s (%s)\n", o.size_name, dims, (unsigned long long)o.seed, lim, limh);
    for (int i = 0; i < o.nimpl; i++) printf("  %-6s %s\n", spec.impl_names[o.impl[i]], impl_about[o.impl[i]]);
    printf("\n");

    /* inputs: x ~ N(0, 1), W ~ N(0, 1/K) (a layer's usual scale), dout ~ N(0, 1) */
    master_inputs in;
    rng r;
    rng_seed(&r, o.seed);
    in.x = host_alloc_array(bmm_x_count(&d), DT_F32, "driver: x");
    in.W = host_alloc_array(bmm_w_count(&d), DT_F32, "driver: W");
    in.dout = host_alloc_array(bmm_out_count(&d), DT_F32, "driver: dout");
    rng_fill_normal_f32(&r, in.x, bmm_x_count(&d), 0.0f, 1.0f);
    rng_fill_normal_f32(&r, in.W, bmm_w_count(&d), 0.0f, 1.0f / sqrtf((float)d.K));
    rng_fill_normal_f32(&r, in.dout, bmm_out_count(&d), 0.0f, 1.0f);
    bmm_inputs inputs = {in.x, in.W, in.dout};

    impl_row rows[CLI_MAX_IMPLS];
    bmm_outputs res[CLI_MAX_IMPLS];
    memset(rows, 0, sizeof rows);
    memset(res, 0, sizeof res);
    int naive_row = -1;

    for (int i = 0; i < o.nimpl; i++) {
        bmm_impl impl = (bmm_impl)o.impl[i];
        impl_row *row = &rows[i];
        bmm_memory m = bmm_predict(impl, &d);
        row->impl = bmm_impl_name(impl);
        row->predicted_peak = m.peak;
        row->predicted_forward_live = m.forward_live;
        row->max_rel_err = NAN;

        if (!impl_gate(spec.program, row, impl == BMM_CUDA, m.peak, o.mem_limit)) continue;
        if (impl == BMM_CUDA && !cuda_bmm_dims_fit(&d)) {
            snprintf(row->note, sizeof row->note, "a leading dimension exceeds cuBLAS's int range");
            continue;
        }

        res[i].out = host_alloc_array(bmm_out_count(&d), DT_F32, "driver: result out");
        res[i].dx = host_alloc_array(bmm_x_count(&d), DT_F32, "driver: result dx");
        res[i].dW = host_alloc_array(bmm_w_count(&d), DT_F32, "driver: result dW");
        bmm_run(impl, &d, &inputs, &res[i], row, 1);
        if (impl == BMM_NAIVE) naive_row = i;
    }
    printf("\n");

    for (int i = 0; i < o.nimpl; i++)
        if (rows[i].ran && naive_row >= 0) rows[i].max_rel_err = max_rel_vs(&d, &res[i], &res[naive_row]);

    report_table(stdout, rows, o.nimpl, "naive");
    printf("\n\"live after forward\" counts every tracked buffer right after the forward pass, inputs included\n"
           "(what torch.cuda.memory_allocated() printed in the forum); \"peak\" adds the backward pass.\n"
           "max rel err = max |impl - naive| / max |naive| over out, dx and dW.\n\n");
    printf("Memory formulas (docs/lesson-1.md) against the tracker:\n");
    int mismatches = report_predictions(stdout, rows, o.nimpl);

    int cpu_row = -1;
    for (int i = 0; i < o.nimpl; i++)
        if (rows[i].ran && o.impl[i] == BMM_CPU) cpu_row = i;
    if (naive_row >= 0 && cpu_row >= 0) {
        const impl_row *n = &rows[naive_row], *c = &rows[cpu_row];
        printf("\nnaive / cpu: peak %.1fx, live after forward %.1fx, forward + backward time %.1fx\n",
               (double)n->peak_bytes / (double)c->peak_bytes,
               (double)n->forward_live_bytes / (double)c->forward_live_bytes,
               (n->forward_ms + n->backward_ms) / (c->forward_ms + c->backward_ms));
        char extra[32], wexp[32];
        format_bytes_exact(rows[naive_row].forward_live_bytes - rows[cpu_row].forward_live_bytes, extra, sizeof extra);
        format_bytes_exact(4 * bmm_w_expanded_count(&d), wexp, sizeof wexp);
        printf("After forward, naive holds %s bytes more than cpu: the expanded copy of W, B*G*K*N*4 = %s bytes.\n"
               "Its backward adds a gradient of the same size before summing it over B.\n", extra, wexp);
    }

    int status = mismatches || report_nothing_ran(spec.program, rows, o.nimpl) ? 1 : 0;
    if (o.csv_path && report_csv(o.csv_path, 1, o.size_name, dims, rows, o.nimpl) != 0) status = 1;
    if (o.dump_dir) {
        if (dump_all(o.dump_dir, &d, &in, res, rows, o.nimpl) != 0) status = 1;
        else printf("\nwrote .npy files to %s\n", o.dump_dir);
    }

    for (int i = 0; i < o.nimpl; i++) {
        host_free(res[i].out);
        host_free(res[i].dx);
        host_free(res[i].dW);
    }
    host_free(in.x);
    host_free(in.W);
    host_free(in.dout);
    if (track_report_live(stderr) != 0) status = 1;
    if (mismatches) fprintf(stderr, "lesson1: a memory formula disagrees with the tracker (see MISMATCH above)\n");
    return status;
}
