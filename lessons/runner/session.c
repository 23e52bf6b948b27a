/* session.c - one implementation's measured run, for any lesson (lesson.h).
 *
 * A run: begin a tracker scope; copy every input into the implementation's own memory (host or device, a
 * tracked, labelled allocation, as a user's tensors would be); forward; read the live bytes (inputs, outputs
 * and whatever forward saved); copy the upstream gradient in; backward; read the peak and the allocation
 * count; copy outputs and gradients back to host result buffers; free every slot. Forward and backward times
 * exclude the time spent in the allocators and the poison fill (track_alloc_ms). A device implementation runs
 * twice and reports the second run: the first pays for cuBLAS's kernel selection and module loading.
 * The driver (lesson_main.c) and the tests both call lesson_run_impl, so the numbers the tests assert are the
 * numbers the table prints.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "gpu_model.h"
#include "lesson.h"

#include "compare.h"
#include "gemm_cpu.h"
#include "timer.h"
#include "track.h"
#include "lesson_output.h"
#include "tensor_copy.h"
#ifdef HAVE_CUDA
#include "../../kernels/runtime/cuda_track.h"
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One tracked host buffer per tensor of one kind (inputs: LT_INPUT and LT_UPSTREAM; else LT_OUTPUT and
 * LT_GRAD), labelled "driver: <prefix><name>"; f64: float64 in place of the tensor's dtype (the reference).
 * The tracker keeps the label pointer, so labels must outlive the buffers: each caller passes its own static
 * table. */
static void alloc_host_slots(const lesson *L, const void *prob, int inputs, int f64, const char *prefix,
                             char (*labels)[64], void **slots)
{
    for (int i = 0; i < lesson_ntensors(L); i++) {
        if (lesson_is_input(L->tensors[i].role) != inputs) continue;
        snprintf(labels[i], 64, "driver: %s%s", prefix, L->tensors[i].name);
        slots[i] =
            host_alloc_array(lesson_tensor_count(L, i, prob), f64 ? DT_F64 : L->tensors[i].type, labels[i]);
    }
}

void lesson_make_inputs(const lesson *L, const void *prob, uint64_t seed, void **t)
{
    static char labels[LESSON_MAX_TENSORS][64];
    for (int i = 0; i < LESSON_MAX_TENSORS; i++) t[i] = NULL;
    alloc_host_slots(L, prob, 1, 0, "", labels, t);
    if (!lesson_dry()) L->fill(prob, seed, t); /* a dry run computes nothing: the inputs stay unwritten */
}

void lesson_free_slots(const lesson *L, void **t)
{
    for (int i = 0; i < lesson_ntensors(L); i++) {
        host_free(t[i]);
        t[i] = NULL;
    }
}

void lesson_row_predict(impl_row *row, const char *impl, mem_formula f)
{
    row->impl = impl;
    row->max_rel_err = NAN;
    row->gemm_share = NAN;
    row->predicted_peak = f.peak;
    row->predicted_forward_live = f.forward_live;
    row->predicted_allocs = f.allocs;
}

/* --- where an implementation runs: one operations table per place --------------------------------------- */

/* Everything a run does that depends on where the implementation's tensors live, chosen once per run from
 * lesson_impl.device: the host (malloc'd memory, the host clock) or the CUDA device (device memory, CUDA
 * events on the GPU's own clock, cuBLAS's workspace, the launch counter). */
typedef struct {
    mem_domain domain;
    int runs;                 /* runs per measurement, the last one reported */
    void *(*copy_in)(const void *src_host, size_t count, dtype t, const char *label);
    void (*copy_out)(void *dst_host, const void *src, size_t bytes);
    void (*free)(void *p);
    void (*sync)(void);       /* wait for the queued work */
    void (*timer_begin)(void);
    double (*timer_end_ms)(double host_ms); /* the pass's time, given the host clock's reading of it */
    void (*run_begin)(const lesson_impl *im);
    void (*run_end)(const lesson_impl *im);
    unsigned long long (*launches)(void); /* kernel launches + cuBLAS calls + graph launches so far */
    const char *(*name)(void); /* the row's device column */
    double (*graph_setup_ms)(void); /* CUDA Graph capture + instantiate so far */
    unsigned long long (*graph_captures)(void), (*graph_replays)(void);
    void (*echo_record)(size_t), (*echo_replay)(void), (*echo_end)(void); /* cuda_track.h's cuda_echo_* */
} place_ops;

static void host_copy_out(void *dst, const void *src, size_t bytes) { memcpy(dst, src, bytes); }
static void host_nothing(void) {}
static void host_no_echo(size_t peak) { (void)peak; }
static double host_elapsed_ms(double host_ms) { return host_ms; }
static void host_run_edge(const lesson_impl *im) { (void)im; }
static unsigned long long host_launches(void) { return 0; }
static const char *host_name(void) { return "cpu"; }
static double host_zero_ms(void) { return 0.0; }

static const place_ops host_place = {
    .domain = MEM_HOST, .runs = 1, .copy_in = host_copy, .copy_out = host_copy_out, .free = host_free,
    .sync = host_nothing, .timer_begin = host_nothing, .timer_end_ms = host_elapsed_ms,
    .run_begin = host_run_edge, .run_end = host_run_edge, .launches = host_launches, .name = host_name,
    .graph_setup_ms = host_zero_ms, .graph_captures = host_launches, .graph_replays = host_launches,
    .echo_record = host_no_echo, .echo_replay = host_nothing, .echo_end = host_nothing,
};

#ifdef HAVE_CUDA
static double device_elapsed_ms(double host_ms) { return (void)host_ms, gpu_timer_end_ms(); }
static void device_run_begin(const lesson_impl *im) { if (im->uses_cublas) cublas_workspace_attach(); }
static void device_run_end(const lesson_impl *im) { if (im->uses_cublas) cublas_workspace_detach(); }

/* Two runs: the first pays for cuBLAS's kernel selection and module loading, the second is timed. */
static const place_ops device_place = {
    .domain = MEM_DEVICE,
    .runs = 2,
    .copy_in = dev_copy,
    .copy_out = dev_download,
    .free = dev_free,
    .sync = dev_synchronize,
    .timer_begin = gpu_timer_begin,
    .timer_end_ms = device_elapsed_ms,
    .run_begin = device_run_begin,
    .run_end = device_run_end,
    .launches = cuda_launch_count,
    .name = cuda_device_name,
    .graph_setup_ms = cuda_graph_setup_ms,
    .graph_captures = cuda_graph_captures,
    .graph_replays = cuda_graph_replays,
    .echo_record = cuda_echo_record,
    .echo_replay = cuda_echo_replay,
    .echo_end = cuda_echo_end,
};
static const place_ops *const device = &device_place;
#else
/* a CPU-only build: impl_gate skips every device implementation */
static const place_ops *const device = NULL;
#endif

static const place_ops *place_of(const lesson *L, const lesson_impl *im)
{
    if (!im->device) return &host_place;
    if (!device) {
        fprintf(stderr, "%s: %s runs on a CUDA device and this build has no CUDA\n", L->program, im->name);
        abort();
    }
    return device;
}

/* --- one run ------------------------------------------------------------------------------------------- */

typedef struct {
    const lesson *L;
    const void *prob;
    const place_ops *at;
} run_ctx;

static void copy_role_in(const run_ctx *c, lesson_run *r, void *const *t, lesson_role role)
{
    for (int i = 0; i < lesson_ntensors(c->L); i++) {
        const lesson_tensor *ts = &c->L->tensors[i];
        if (ts->role == role)
            r->t[i] = c->at->copy_in(t[i], lesson_tensor_count(c->L, i, c->prob), ts->type, ts->label);
    }
}

static void check_slots_set(const run_ctx *c, const lesson_run *r, lesson_role role, const char *impl)
{
    for (int i = 0; i < lesson_ntensors(c->L); i++)
        if (c->L->tensors[i].role == role && !r->t[i]) {
            fprintf(stderr, "%s: implementation %s left %s unset\n", c->L->program, impl,
                    c->L->tensors[i].name);
            abort();
        }
}

/* Milliseconds of fn(r), allocator time and set-up excluded, queued work finished, on the place's own clock.
 * Capturing and instantiating CUDA Graphs is set-up, left out of a pass like the allocators' time (a graph
 * version captures once per shape and its passes replay). */
static double timed(const run_ctx *c, void (*fn)(lesson_run *), lesson_run *r)
{
    c->at->sync();
    double a0 = track_alloc_ms() + c->at->graph_setup_ms(), t0 = host_time_ms();
    c->at->timer_begin();
    fn(r);
    c->at->sync();
    double t1 = host_time_ms(), a1 = track_alloc_ms() + c->at->graph_setup_ms();
    double ms = c->at->timer_end_ms(t1 - t0) - (a1 - a0);
    return ms > 0 ? ms : 0;
}

static void labels_text(lesson_result *res, mem_domain d)
{
    free(res->labels);
    res->labels = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&res->labels, &len); /* the report's text, not a tensor: untracked */
    if (!f) return;
    track_print_labels(f, d);
    fclose(f);
}

static void run_once(const run_ctx *c, const lesson_impl *im, void *const *t, lesson_result *res)
{
    mem_domain dom = c->at->domain;
    lesson_run r;
    memset(&r, 0, sizeof r);
    r.prob = c->prob;
    r.version = im->version;
    track_scope scope;
    track_scope_begin(&scope);

    copy_role_in(c, &r, t, LT_INPUT);
    c->at->run_begin(im);
    unsigned long long launches0 = c->at->launches();
    res->row.forward_ms = timed(c, im->forward, &r);
    check_slots_set(c, &r, LT_OUTPUT, im->name);
    res->row.forward_live_bytes = track_scope_read(&scope, dom).live_bytes;
    lesson_timeline_mark("forward done");

    copy_role_in(c, &r, t, LT_UPSTREAM);
    res->row.backward_ms = timed(c, im->backward, &r);
    res->row.launches = c->at->launches() - launches0;
    check_slots_set(c, &r, LT_GRAD, im->name);
    mem_counters m = track_scope_read(&scope, dom);
    res->row.peak_bytes = m.peak_bytes;
    res->row.allocs = m.allocs;
    labels_text(res, dom);

    for (int i = 0; i < lesson_ntensors(c->L); i++) {
        if (res->result[i]) c->at->copy_out(res->result[i], r.t[i], lesson_tensor_bytes(c->L, i, c->prob));
        c->at->free(r.t[i]);
    }
    c->at->run_end(im);
}

void lesson_run_impl(const lesson *L, const void *prob, int impl, void *const *t, lesson_result *res)
{
    const lesson_impl *im = &L->impls[impl];
    run_ctx c = {L, prob, place_of(L, im)};
    static char labels[LESSON_MAX_TENSORS][64];
    memset(res, 0, sizeof *res);
    res->impl = impl;
    res->tolerance = im->tolerance > 0 ? im->tolerance : lesson_tolerance(L, prob);
    lesson_row_predict(&res->row, im->name, im->memory(prob));
    alloc_host_slots(L, prob, 0, 0, "result ", labels, res->result);
    /* A graph version: the warm-up run captures, and the timed (last) run gets the warm-up's buffer addresses
     * (cuda_echo_*), so its graphs replay; the warm-up's captures are reported as set-up. */
    double setup_before = c.at->graph_setup_ms();
    unsigned long long replays0 = 0, captures0 = 0;
    for (int k = 0; k < c.at->runs; k++) {
        int timed_run = k > 0 && k == c.at->runs - 1;
        if (timed_run) {
            res->row.graph_setup_ms = c.at->graph_setup_ms() - setup_before;
            replays0 = c.at->graph_replays();
            captures0 = c.at->graph_captures();
        }
        if (im->graph && timed_run) c.at->echo_replay();
        else if (im->graph) c.at->echo_record(res->row.predicted_peak);
        if (k == c.at->runs - 1) gpu_model_timed_run(1); /* --gpu-model: the pass the table times */
        run_once(&c, im, t, res);
        if (k == c.at->runs - 1) gpu_model_timed_run(0);
        if (im->graph && timed_run) c.at->echo_end();
    }
    if (c.at->runs > 1) {
        res->row.graph_replays = c.at->graph_replays() - replays0;
        res->row.graph_captures = c.at->graph_captures() - captures0;
    }
    snprintf(res->row.device, sizeof res->row.device, "%s", c.at->name());
    res->row.emulated = im->device && gpu_device_emulated();
    res->row.ran = 1;
}

void lesson_result_free(const lesson *L, lesson_result *res)
{
    for (int i = 0; i < lesson_ntensors(L); i++) {
        host_free(res->result[i]);
        res->result[i] = NULL;
    }
    free(res->labels);
    res->labels = NULL;
}

/* --- the float64 reference ------------------------------------------------------------------------------ */

const char *lesson_make_reference(const lesson *L, const void *prob, void *const *t, double **ref)
{
    static char labels[LESSON_MAX_TENSORS][64];
    for (int i = 0; i < LESSON_MAX_TENSORS; i++) ref[i] = NULL;
    const char *why = L->reference_unfit ? L->reference_unfit(prob) : NULL;
    if (lesson_dry()) why = "a dry run checks limits and computes nothing";
    if (why) return why;
    alloc_host_slots(L, prob, 0, 1, "float64 reference ", labels, (void **)ref);
    L->reference(prob, t, ref);
    return NULL;
}

void lesson_free_ref(const lesson *L, double **ref)
{
    for (int i = 0; i < lesson_ntensors(L); i++) {
        host_free(ref[i]);
        ref[i] = NULL;
    }
}

double lesson_max_rel_err(const lesson *L, const void *prob, const lesson_result *res, double *const *ref)
{
    double m = 0.0;
    for (int i = 0; i < lesson_ntensors(L); i++) {
        if (lesson_is_input(L->tensors[i].role)) continue;
        if (!ref[i] || !res->result[i]) return NAN;
        double e =
            max_rel_err(res->result[i], L->tensors[i].type, ref[i], DT_F64, lesson_tensor_count(L, i, prob));
        if (isnan(e)) return NAN;
        m = fmax(m, e);
    }
    return m;
}
