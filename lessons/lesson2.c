/* lesson2.c - the log-space matrix chain: from an out-of-memory tree of matrix products to the forward
 * algorithm.
 *
 * Runs each implementation on the same seeded inputs, measures every tracked byte, compares every output and
 * gradient with a double-precision forward-backward, and prints the table, the per-tensor breakdown, the work
 * of both multiplication orders and the memory formulas next to the tracker. See docs/lesson-2.md.
 *
 *   build/lesson2                      # medium: n=100, t=1, v=40, c=100
 *   build/lesson2 --size forum         # the forum's n=500, v=40, c=200: naive's prediction only
 *   build/lesson2 --help
 */
#include "../kernels/compare.h"
#include "../kernels/rng.h"
#include "../kernels/track.h"
#include "../naive/logchain_tree.h"
#include "../optimized/logchain_forward.h"
#include "cli.h"
#include "impl_gate.h"
#include "logchain_reference.h"
#include "logchain_session.h"
#include "npy.h"
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cli_spec spec = {
    .program = "lesson2",
    .summary = "log-space matrix chain: the forum's tree of (c,c) products vs the forward algorithm\n"
               "  (default size medium: most of its run time is naive's c^3 tree)",
    .ndims = 4,
    .dim_names = {"n", "t", "v", "c"},
    .nsizes = 4,
    .sizes = {{"tiny", {2, 1, 5, 3}},
              {"small", {10, 1, 6, 40}},
              {"medium", {100, 1, 40, 100}},
              {"forum", {500, 1, 40, 200}}},
    .default_size = "medium",
    .nimpls = 3,
    .impl_names = {"naive", "cpu", "cuda"},
};

/* One line per implementation, printed before the runs so the table reads on its own. */
static const char *impl_about[] = {
    "the forum's tree: (n,t,v-1,c,c) log matrices multiplied pairwise, every autograd intermediate kept",
    "forward algorithm: alpha recursion (n x c).(c x c) per step, alphas (n,t,v,c) saved; beta backward",
    "the same recursions as CUDA kernels (log-space vector x matrix with online logsumexp; device memory)",
};

typedef struct {
    float *x, *bulk, *p0, *dout;
} master_inputs;

static int dump_all(const char *dir, const lc_dims *d, const master_inputs *in, lc_outputs *res,
                    const impl_row *rows, int n)
{
    size_t sx[4] = {d->n, d->t, d->v, d->c}, sb[5] = {1, d->t, d->v - 1, d->c, d->c}, sp[3] = {1, d->t, d->c},
           so[2] = {d->n, d->t};
    if (npy_make_dir(dir) != 0) return -1;
    int err = npy_dump(dir, "input", "x", in->x, DT_F32, 4, sx) |
              npy_dump(dir, "input", "bulk", in->bulk, DT_F32, 5, sb) |
              npy_dump(dir, "input", "p0", in->p0, DT_F32, 3, sp) |
              npy_dump(dir, "input", "dout", in->dout, DT_F32, 2, so);
    for (int i = 0; i < n; i++) {
        if (!rows[i].ran) continue;
        err |= npy_dump(dir, rows[i].impl, "out", res[i].out, DT_F32, 2, so) |
               npy_dump(dir, rows[i].impl, "dx", res[i].dx, DT_F32, 4, sx) |
               npy_dump(dir, rows[i].impl, "dbulk", res[i].dbulk, DT_F32, 5, sb) |
               npy_dump(dir, rows[i].impl, "dp0", res[i].dp0, DT_F32, 3, sp);
    }
    return err ? -1 : 0;
}

/* max over out, dx, dbulk and dp0 of max|a - ref| / max|ref| */
static double max_rel_vs(const lc_dims *d, const lc_outputs *a, const lc_ref_result *ref)
{
    double e[4] = {max_rel_err(a->out, DT_F32, ref->out, DT_F64, lc_out_count(d)),
                   max_rel_err(a->dx, DT_F32, ref->dx, DT_F64, lc_x_count(d)),
                   max_rel_err(a->dbulk, DT_F32, ref->dbulk, DT_F64, lc_bulk_count(d)),
                   max_rel_err(a->dp0, DT_F32, ref->dp0, DT_F64, lc_p0_count(d))};
    double m = 0.0;
    for (int i = 0; i < 4; i++) {
        if (isnan(e[i])) return NAN;
        m = fmax(m, e[i]);
    }
    return m;
}

/* max over rows of |logZ - ref| / |ref| (element by element: the target is 1e-5 per chain) */
static double logz_rel_err(const lc_dims *d, const float *out, const double *ref)
{
    double m = 0.0;
    for (size_t r = 0; r < lc_out_count(d); r++) {
        double e = fabs((double)out[r] - ref[r]) / fabs(ref[r]);
        if (isnan(e)) return NAN;
        m = fmax(m, e);
    }
    return m;
}

int main(int argc, char **argv)
{
    cli_options o;
    int rc = cli_parse(&spec, argc, argv, &o);
    if (rc == CLI_HELP) return 0;
    if (rc != CLI_OK) return 2;

    lc_dims d = {(size_t)o.dims[0], (size_t)o.dims[1], (size_t)o.dims[2], (size_t)o.dims[3]};
    char dims[128], lim[32], limh[16];
    cli_format_dims(&spec, o.dims, dims, sizeof dims);
    format_bytes_exact(o.mem_limit, lim, sizeof lim);
    format_bytes_human(o.mem_limit, limh, sizeof limh);
    if (d.v < 2) {
        fprintf(stderr, "lesson2: v=%zu: the chain needs at least 2 variables (v-1 >= 1 transition matrices) "
                        "(try --help)\n", d.v);
        return 2;
    }

    /* The driver itself holds the inputs, one f32 result set per implementation and the f64 reference:
     * refuse before allocating if that alone overflows or is over the limit. */
    size_t io = size_add(size_add(lc_x_count(&d), lc_bulk_count(&d)), size_add(lc_p0_count(&d), lc_out_count(&d)));
    size_t driver_bytes = size_add(size_mul(size_mul(4, io), (size_t)o.nimpl + 1), size_mul(8, io));
    if (driver_bytes == SIZE_MAX || driver_bytes > o.mem_limit) {
        char need[32];
        format_bytes_exact(driver_bytes, need, sizeof need);
        fprintf(stderr, "lesson2: dims %s need %s bytes for the inputs and results alone, over --mem-limit %s\n",
                dims, driver_bytes == SIZE_MAX ? "more than 2^64" : need, lim);
        return 2;
    }

    if (report_prepare_outputs(spec.program, o.csv_path, o.dump_dir) != 0) return 2;

    printf("Lesson 2: log-space matrix chain  log(p0^T D_0 P_0 D_1 P_1 ... P_{v-2} D_{v-1} 1)\n");
    printf("size %s: %s   seed %llu   mem-limit %s (%s)\n", o.size_name, dims, (unsigned long long)o.seed, lim,
           limh);
    for (int i = 0; i < o.nimpl; i++) printf("  %-6s %s\n", spec.impl_names[o.impl[i]], impl_about[o.impl[i]]);
    printf("\n");

    /* Work of the two multiplication orders, in multiply-adds (the ordering argument, docs/lesson-2.md):
     * the tree does v-2 (c x c) . (c x c) products per chain, the forward algorithm v-1 (c) . (c x c). */
    double chains = (double)d.n * (double)d.t, c = (double)d.c;
    double tree_fwd = chains * (double)(d.v - 2) * c * c * c, chain_fwd = chains * (double)(d.v - 1) * c * c;
    printf("forward multiply-adds: tree of matrix products %.4g (n t (v-2) c^3), forward algorithm %.4g "
           "(n t (v-1) c^2), ratio %.1f\n\n",
           tree_fwd, chain_fwd, chain_fwd > 0 ? tree_fwd / chain_fwd : 0.0);

    /* inputs as in the forum: x = randn - 2, bulk and p0 = rand in (0, 1) kept off 0 (log and 1/P stay
     * finite), dout ~ N(0, 1) */
    master_inputs in;
    rng r;
    rng_seed(&r, o.seed);
    in.x = host_alloc_array(lc_x_count(&d), DT_F32, "driver: x");
    in.bulk = host_alloc_array(lc_bulk_count(&d), DT_F32, "driver: bulk");
    in.p0 = host_alloc_array(lc_p0_count(&d), DT_F32, "driver: p0");
    in.dout = host_alloc_array(lc_out_count(&d), DT_F32, "driver: dout");
    rng_fill_normal_f32(&r, in.x, lc_x_count(&d), -2.0f, 1.0f);
    rng_fill_uniform_f32(&r, in.bulk, lc_bulk_count(&d), 1e-3f, 1.0f);
    rng_fill_uniform_f32(&r, in.p0, lc_p0_count(&d), 1e-3f, 1.0f);
    rng_fill_normal_f32(&r, in.dout, lc_out_count(&d), 0.0f, 1.0f);
    lc_inputs inputs = {in.x, in.bulk, in.p0, in.dout};

    impl_row rows[CLI_MAX_IMPLS];
    lc_outputs res[CLI_MAX_IMPLS];
    memset(rows, 0, sizeof rows);
    memset(res, 0, sizeof res);

    for (int i = 0; i < o.nimpl; i++) {
        lc_impl impl = (lc_impl)o.impl[i];
        impl_row *row = &rows[i];
        lc_memory m = lc_predict(impl, &d);
        row->impl = lc_impl_name(impl);
        row->predicted_peak = m.peak;
        row->predicted_forward_live = m.forward_live;
        row->max_rel_err = NAN;

        fflush(stdout); /* impl_gate may explain a skip on stderr: keep it after what stdout said so far */
        if (!impl_gate(spec.program, row, impl == LC_CUDA, m.peak, o.mem_limit)) continue;
        if (impl == LC_CUDA && !cuda_lc_dims_fit(&d)) {
            snprintf(row->note, sizeof row->note, "n or c exceeds the kernels' int indexing or grid limits");
            continue;
        }
        res[i].out = host_alloc_array(lc_out_count(&d), DT_F32, "driver: result out");
        res[i].dx = host_alloc_array(lc_x_count(&d), DT_F32, "driver: result dx");
        res[i].dbulk = host_alloc_array(lc_bulk_count(&d), DT_F32, "driver: result dbulk");
        res[i].dp0 = host_alloc_array(lc_p0_count(&d), DT_F32, "driver: result dp0");
        lc_run(impl, &d, &inputs, &res[i], row, 1);
    }
    printf("\n");

    lc_ref_result ref;
    lc_reference(&d, in.x, in.bulk, in.p0, in.dout, &ref);
    for (int i = 0; i < o.nimpl; i++)
        if (rows[i].ran) rows[i].max_rel_err = max_rel_vs(&d, &res[i], &ref);

    report_table(stdout, rows, o.nimpl, "f64 ref");
    printf("\n\"live after forward\" counts every tracked buffer right after the forward pass, inputs included;\n"
           "\"peak\" adds the backward pass. max rel err = max |impl - ref| / max |ref| over out, dx, dbulk and\n"
           "dp0, against the forward-backward recursions in double precision.\n\n");
    for (int i = 0; i < o.nimpl; i++)
        if (rows[i].ran)
            printf("log Z (out) relative error vs double, worst chain: %-6s %.2e\n", rows[i].impl,
                   logz_rel_err(&d, res[i].out, ref.out));
    /* The forum's zero padding, on the first chain only (a (1,1,v,c) problem: 1/(n t) of naive's memory). */
    int odd_level = 0;
    for (size_t m = d.v - 1; m > 1; m = m / 2 + m % 2) odd_level |= (int)(m % 2);
    if (odd_level) {
        lc_dims d1 = {1, 1, d.v, d.c};
        naive_lc_saved sv;
        float *padded = naive_lc_forward(&d1, in.x, in.bulk, in.p0, LC_ODD_ZERO_PAD, &sv);
        naive_lc_release(&sv);
        printf("\nthe forum's zero padding (v-1 = %zu has odd levels; exp(0) = 1 pads with the all-ones matrix):\n"
               "chain 0 log Z = %.6f padded, %.6f true (f64): off by %.4f\n",
               d.v - 1, (double)padded[0], ref.out[0], (double)padded[0] - ref.out[0]);
        host_free(padded);
    }
    printf("\nMemory formulas (docs/lesson-2.md) against the tracker:\n");
    int mismatches = report_predictions(stdout, rows, o.nimpl);

    /* the two headline ratios, when both host implementations ran */
    int nr = -1, cr = -1;
    for (int i = 0; i < o.nimpl; i++) {
        if (rows[i].ran && o.impl[i] == LC_NAIVE) nr = i;
        if (rows[i].ran && o.impl[i] == LC_CPU) cr = i;
    }
    if (nr >= 0 && cr >= 0)
        printf("\nnaive / cpu: peak %.1fx, live after forward %.1fx, forward + backward time %.1fx\n",
               (double)rows[nr].peak_bytes / (double)rows[cr].peak_bytes,
               (double)rows[nr].forward_live_bytes / (double)rows[cr].forward_live_bytes,
               (rows[nr].forward_ms + rows[nr].backward_ms) / (rows[cr].forward_ms + rows[cr].backward_ms));
    lc_memory nm = naive_lc_memory(&d);
    int naive_asked = 0;
    for (int i = 0; i < o.nimpl; i++) naive_asked |= o.impl[i] == LC_NAIVE;
    if (naive_asked && nr < 0 && cr >= 0 && nm.peak != SIZE_MAX)
        printf("\nnaive / cpu: predicted peak %.1fx (naive not run)\n",
               (double)nm.peak / (double)rows[cr].peak_bytes);

    int status = mismatches || report_nothing_ran(spec.program, rows, o.nimpl) ? 1 : 0;
    if (o.csv_path && report_csv(o.csv_path, 2, o.size_name, dims, rows, o.nimpl) != 0) status = 1;
    if (o.dump_dir) {
        if (dump_all(o.dump_dir, &d, &in, res, rows, o.nimpl) != 0) status = 1;
        else printf("\nwrote .npy files to %s\n", o.dump_dir);
    }

    lc_reference_free(&ref);
    for (int i = 0; i < o.nimpl; i++) {
        host_free(res[i].out);
        host_free(res[i].dx);
        host_free(res[i].dbulk);
        host_free(res[i].dp0);
    }
    host_free(in.x);
    host_free(in.bulk);
    host_free(in.p0);
    host_free(in.dout);
    if (track_report_live(stderr) != 0) status = 1;
    if (mismatches) fprintf(stderr, "lesson2: a memory formula disagrees with the tracker (see MISMATCH above)\n");
    return status;
}
