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
#include "device_hooks.h"
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

/* --- where an implementation runs: the host or the CUDA device ------------------------------------------ */

typedef struct {
    const lesson *L;
    const void *prob;
    /* 0: the host (malloc'd memory, the host clock); 1: the CUDA device (device memory, CUDA events on the
     * GPU's own clock, cuBLAS's workspace, the launch counter, CUDA Graphs) */
    int device;
} run_ctx;

/* Each step of a run that depends on where the tensors live, in both places. A CPU-only build never reaches a
 * device branch: place_check refuses a device implementation first (impl_gate skips them before that). */
#ifdef HAVE_CUDA
#define ON_DEVICE(c) ((c)->device)
#else
#define ON_DEVICE(c) ((void)(c), 0)
#endif

static void place_check(const lesson *L, const lesson_impl *im)
{
#ifndef HAVE_CUDA
    if (im->device) {
        fprintf(stderr, "%s: %s runs on a CUDA device and this build has no CUDA\n", L->program, im->name);
        abort();
    }
#else
    (void)L, (void)im;
#endif
}

static mem_domain place_domain(const run_ctx *c) { return ON_DEVICE(c) ? MEM_DEVICE : MEM_HOST; }

/* runs per measurement, the last one reported: on the device the first pays for cuBLAS's kernel selection and
 * module loading */
static int place_runs(const run_ctx *c) { return ON_DEVICE(c) ? 2 : 1; }

static void *place_copy_in(const run_ctx *c, const void *src, size_t count, dtype t, const char *label)
{
#ifdef HAVE_CUDA
    if (c->device) return dev_copy(src, count, t, label);
#endif
    (void)c;
    return host_copy(src, count, t, label);
}

static void place_copy_out_and_free(const run_ctx *c, void *dst_host, void *src, size_t bytes)
{
#ifdef HAVE_CUDA
    if (c->device) {
        if (dst_host) dev_download(dst_host, src, bytes);
        dev_free(src);
        return;
    }
#endif
    (void)c;
    if (dst_host) memcpy(dst_host, src, bytes);
    host_free(src);
}

/* wait for the queued work */
static void place_sync(const run_ctx *c)
{
#ifdef HAVE_CUDA
    if (c->device) dev_synchronize();
#endif
    (void)c;
}

static void place_timer_begin(const run_ctx *c)
{
#ifdef HAVE_CUDA
    if (c->device) gpu_timer_begin();
#endif
    (void)c;
}

/* the pass's time, given the host clock's reading of it */
static double place_timer_end_ms(const run_ctx *c, double host_ms)
{
#ifdef HAVE_CUDA
    if (c->device) return gpu_timer_end_ms();
#endif
    (void)c;
    return host_ms;
}

/* the tracked cuBLAS workspace around a device run that uses cuBLAS */
static void place_run_edge(const run_ctx *c, const lesson_impl *im, int begin)
{
#ifdef HAVE_CUDA
    if (c->device && im->uses_cublas) begin ? cublas_workspace_attach() : cublas_workspace_detach();
#endif
    (void)c, (void)im, (void)begin;
}

/* The device's counters so far: kernel launches + cuBLAS calls + graph launches, CUDA Graph capture and
 * instantiation time, captures and replays; all zero on the host. */
typedef struct {
    unsigned long long launches, captures, replays;
    double graph_setup_ms;
} place_counts;

static place_counts place_counters(const run_ctx *c)
{
    place_counts n = {0, 0, 0, 0.0};
#ifdef HAVE_CUDA
    if (c->device) {
        n.launches = cuda_launch_count(), n.captures = cuda_graph_captures(),
        n.replays = cuda_graph_replays();
        n.graph_setup_ms = cuda_graph_setup_ms();
    }
#endif
    (void)c;
    return n;
}

/* A graph version on the device: the warm-up run records its buffers' addresses (cuda_echo_record), the timed
 * run gets them back (cuda_echo_replay), so its graphs replay; cuda_echo_end frees what it did not take. */
enum { ECHO_RECORD, ECHO_REPLAY, ECHO_END };
static void place_echo(const run_ctx *c, const lesson_impl *im, int what, size_t peak)
{
#ifdef HAVE_CUDA
    if (c->device && im->graph) {
        if (what == ECHO_RECORD) cuda_echo_record(peak);
        else if (what == ECHO_REPLAY) cuda_echo_replay();
        else cuda_echo_end();
    }
#endif
    (void)c, (void)im, (void)what, (void)peak;
}

/* the row's device column */
static const char *place_name(const run_ctx *c)
{
#ifdef HAVE_CUDA
    if (c->device) return cuda_device_name();
#endif
    (void)c;
    return "cpu";
}

/* --- one run ------------------------------------------------------------------------------------------- */

static void copy_role_in(const run_ctx *c, lesson_run *r, void *const *t, lesson_role role)
{
    for (int i = 0; i < lesson_ntensors(c->L); i++) {
        const lesson_tensor *ts = &c->L->tensors[i];
        if (ts->role == role)
            r->t[i] = place_copy_in(c, t[i], lesson_tensor_count(c->L, i, c->prob), ts->type, ts->label);
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

/* Milliseconds of forward (or backward) of im, allocator time and set-up excluded, queued work finished, on
 * the place's own clock. Capturing and instantiating CUDA Graphs is set-up, left out of a pass like the
 * allocators' time (a graph version captures once per shape and its passes replay). */
static double timed(const run_ctx *c, const lesson_impl *im, int backward, lesson_run *r)
{
    place_sync(c);
    double a0 = track_alloc_ms() + place_counters(c).graph_setup_ms, t0 = host_time_ms();
    place_timer_begin(c);
    if (backward) im->backward(r);
    else im->forward(r);
    place_sync(c);
    double t1 = host_time_ms(), a1 = track_alloc_ms() + place_counters(c).graph_setup_ms;
    double ms = place_timer_end_ms(c, t1 - t0) - (a1 - a0);
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
    mem_domain dom = place_domain(c);
    lesson_run r;
    memset(&r, 0, sizeof r);
    r.prob = c->prob;
    r.version = im->version;
    track_scope scope;
    track_scope_begin(&scope);

    copy_role_in(c, &r, t, LT_INPUT);
    place_run_edge(c, im, 1);
    unsigned long long launches0 = place_counters(c).launches;
    res->row.forward_ms = timed(c, im, 0, &r);
    check_slots_set(c, &r, LT_OUTPUT, im->name);
    res->row.forward_live_bytes = track_scope_read(&scope, dom).live_bytes;
    lesson_timeline_mark("forward done");

    copy_role_in(c, &r, t, LT_UPSTREAM);
    res->row.backward_ms = timed(c, im, 1, &r);
    res->row.launches = place_counters(c).launches - launches0;
    check_slots_set(c, &r, LT_GRAD, im->name);
    mem_counters m = track_scope_read(&scope, dom);
    res->row.peak_bytes = m.peak_bytes;
    res->row.allocs = m.allocs;
    labels_text(res, dom);

    for (int i = 0; i < lesson_ntensors(c->L); i++)
        place_copy_out_and_free(c, res->result[i], r.t[i], lesson_tensor_bytes(c->L, i, c->prob));
    place_run_edge(c, im, 0);
}

void lesson_run_impl(const lesson *L, const void *prob, int impl, void *const *t, lesson_result *res)
{
    const lesson_impl *im = &L->impls[impl];
    place_check(L, im);
    run_ctx c = {L, prob, im->device};
    static char labels[LESSON_MAX_TENSORS][64];
    memset(res, 0, sizeof *res);
    res->impl = impl;
    res->tolerance = im->tolerance > 0 ? im->tolerance : lesson_tolerance(L, prob);
    lesson_row_predict(&res->row, im->name, im->memory(prob));
    alloc_host_slots(L, prob, 0, 0, "result ", labels, res->result);
    /* A graph version: the warm-up run captures, and the timed (last) run gets the warm-up's buffer addresses
     * (place_echo), so its graphs replay; the warm-up's captures are reported as set-up. */
    place_counts before = place_counters(&c), at_timed = before;
    int runs = place_runs(&c);
    for (int k = 0; k < runs; k++) {
        int timed_run = k > 0 && k == runs - 1;
        if (timed_run) {
            at_timed = place_counters(&c);
            res->row.graph_setup_ms = at_timed.graph_setup_ms - before.graph_setup_ms;
        }
        place_echo(&c, im, timed_run ? ECHO_REPLAY : ECHO_RECORD, res->row.predicted_peak);
        if (k == runs - 1) device_timed_pass(1);
        run_once(&c, im, t, res);
        if (k == runs - 1) device_timed_pass(0);
        if (timed_run) place_echo(&c, im, ECHO_END, 0);
    }
    if (runs > 1) {
        place_counts after = place_counters(&c);
        res->row.graph_replays = after.replays - at_timed.replays;
        res->row.graph_captures = after.captures - at_timed.captures;
    }
    snprintf(res->row.device, sizeof res->row.device, "%s", place_name(&c));
    res->row.emulated = im->device && device_emulated();
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
