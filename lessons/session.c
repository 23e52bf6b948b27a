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
#include "lesson.h"

#include "../kernels/runtime/compare.h"
#include "../kernels/runtime/timer.h"
#include "../kernels/runtime/track.h"
#include "lesson_output.h"
#include "tensor_copy.h"
#ifdef HAVE_CUDA
#include "../kernels/runtime/cuda_track.h"
#endif
#ifdef CUDA_EMU
#include <emu_api.h>
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One tracked host buffer per tensor of one kind (inputs: LT_INPUT and LT_UPSTREAM; else LT_OUTPUT and LT_GRAD),
 * labelled "driver: <prefix><name>"; f64: float64 in place of the tensor's dtype (the reference). The tracker
 * keeps the label pointer, so labels must outlive the buffers: each caller passes its own static table. */
static void alloc_host_slots(const lesson *L, const void *prob, int inputs, int f64, const char *prefix,
                             char (*labels)[64], void **slots)
{
    for (int i = 0; i < lesson_ntensors(L); i++) {
        if (lesson_is_input(L->tensors[i].role) != inputs) continue;
        snprintf(labels[i], 64, "driver: %s%s", prefix, L->tensors[i].name);
        slots[i] = host_alloc_array(lesson_tensor_count(L, i, prob), f64 ? DT_F64 : L->tensors[i].type, labels[i]);
    }
}

int lesson_dry(void)
{
#ifdef CUDA_EMU
    return emu_dry();
#else
    return 0;
#endif
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

/* --- one run ------------------------------------------------------------------------------------------- */

typedef struct {
    const lesson *L;
    const void *prob;
    int device;
} run_ctx;

static void *copy_in(const run_ctx *c, int i, const void *src)
{
    const lesson_tensor *ts = &c->L->tensors[i];
    size_t n = lesson_tensor_count(c->L, i, c->prob);
#ifdef HAVE_CUDA
    if (c->device) return dev_copy(src, n, ts->type, ts->label);
#endif
    return host_copy(src, n, ts->type, ts->label);
}

static void copy_out(const run_ctx *c, void *dst, const void *src, int i)
{
    size_t bytes = lesson_tensor_bytes(c->L, i, c->prob);
#ifdef HAVE_CUDA
    if (c->device) {
        dev_download(dst, src, bytes);
        return;
    }
#endif
    memcpy(dst, src, bytes);
}

static void free_slot(const run_ctx *c, void *p)
{
    (void)c;
#ifdef HAVE_CUDA
    if (c->device) {
        dev_free(p);
        return;
    }
#endif
    host_free(p);
}

static void sync_device(const run_ctx *c)
{
#ifdef HAVE_CUDA
    if (c->device) dev_synchronize();
#else
    (void)c;
#endif
}

static void copy_role_in(const run_ctx *c, lesson_run *r, void *const *t, lesson_role role)
{
    for (int i = 0; i < lesson_ntensors(c->L); i++)
        if (c->L->tensors[i].role == role) r->t[i] = copy_in(c, i, t[i]);
}

static void check_slots_set(const run_ctx *c, const lesson_run *r, lesson_role role, const char *impl)
{
    for (int i = 0; i < lesson_ntensors(c->L); i++)
        if (c->L->tensors[i].role == role && !r->t[i]) {
            fprintf(stderr, "%s: implementation %s left %s unset\n", c->L->program, impl, c->L->tensors[i].name);
            abort();
        }
}

/* Milliseconds of fn(r), allocator time excluded, device work finished. A device run is timed by CUDA events on
 * the GPU's own clock (cuda_track.h's gpu_timer), a host run by the host clock. */
/* Milliseconds spent capturing and instantiating CUDA Graphs so far: set-up, left out of a pass like the
 * allocators' time (a graph version captures once per shape and its passes replay). */
static double graph_setup_ms(const run_ctx *c)
{
#ifdef HAVE_CUDA
    if (c->device) return cuda_graph_setup_ms();
#endif
    (void)c;
    return 0.0;
}

static double timed(const run_ctx *c, void (*fn)(lesson_run *), lesson_run *r)
{
    sync_device(c);
    double a0 = track_alloc_ms() + graph_setup_ms(c), t0 = host_time_ms();
#ifdef HAVE_CUDA
    if (c->device) gpu_timer_begin();
#endif
    fn(r);
    sync_device(c);
    double t1 = host_time_ms(), a1 = track_alloc_ms() + graph_setup_ms(c);
#ifdef HAVE_CUDA
    if (c->device) t1 = t0 + gpu_timer_end_ms();
#endif
    double ms = (t1 - t0) - (a1 - a0);
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
    mem_domain dom = c->device ? MEM_DEVICE : MEM_HOST;
    lesson_run r;
    memset(&r, 0, sizeof r);
    r.prob = c->prob;
    r.version = im->version;
    track_scope scope;
    track_scope_begin(&scope);

    copy_role_in(c, &r, t, LT_INPUT);
#ifdef HAVE_CUDA
    unsigned long long launches0 = 0;
    if (c->device && im->uses_cublas) cublas_workspace_attach();
    if (c->device) launches0 = cuda_launch_count();
#endif
    res->row.forward_ms = timed(c, im->forward, &r);
    check_slots_set(c, &r, LT_OUTPUT, im->name);
    res->row.forward_live_bytes = track_scope_read(&scope, dom).live_bytes;
    lesson_timeline_mark("forward done");

    copy_role_in(c, &r, t, LT_UPSTREAM);
    res->row.backward_ms = timed(c, im->backward, &r);
#ifdef HAVE_CUDA
    if (c->device) res->row.launches = cuda_launch_count() - launches0;
#endif
    check_slots_set(c, &r, LT_GRAD, im->name);
    mem_counters m = track_scope_read(&scope, dom);
    res->row.peak_bytes = m.peak_bytes;
    res->row.allocs = m.allocs;
    labels_text(res, dom);

    for (int i = 0; i < lesson_ntensors(c->L); i++) {
        if (res->result[i]) copy_out(c, res->result[i], r.t[i], i);
        free_slot(c, r.t[i]);
    }
#ifdef HAVE_CUDA
    if (c->device && im->uses_cublas) cublas_workspace_detach();
#endif
}

void lesson_run_impl(const lesson *L, const void *prob, int impl, void *const *t, lesson_result *res)
{
    const lesson_impl *im = &L->impls[impl];
    run_ctx c = {L, prob, im->device};
    static char labels[LESSON_MAX_TENSORS][64];
    memset(res, 0, sizeof *res);
    res->impl = impl;
    res->tolerance = im->tolerance > 0 ? im->tolerance : lesson_tolerance(L, prob);
    lesson_row_predict(&res->row, im->name, im->memory(prob));
    alloc_host_slots(L, prob, 0, 0, "result ", labels, res->result);
#ifdef HAVE_CUDA
    double setup_before = im->device ? cuda_graph_setup_ms() : 0.0;
    if (im->device && im->graph) cuda_echo_record(); /* the timed run gets these addresses: its graphs replay */
#endif
    run_once(&c, im, t, res);
    if (im->device) {
#ifdef HAVE_CUDA
        res->row.graph_setup_ms = cuda_graph_setup_ms() - setup_before; /* the warm-up run's captures */
        unsigned long long replays0 = cuda_graph_replays(), captures0 = cuda_graph_captures();
        if (im->graph) cuda_echo_replay();
        run_once(&c, im, t, res); /* the timed run; the first paid for cuBLAS setup, module loading, graph capture */
        if (im->graph) cuda_echo_end();
        res->row.graph_replays = cuda_graph_replays() - replays0;
        res->row.graph_captures = cuda_graph_captures() - captures0;
        snprintf(res->row.device, sizeof res->row.device, "%s", cuda_device_name());
#ifdef CUDA_EMU
        res->row.emulated = 1;
#endif
#endif
    } else {
        snprintf(res->row.device, sizeof res->row.device, "cpu");
    }
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
    if (lesson_dry()) why = "a dry run (EMU_DRY=1) checks limits and computes nothing";
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
        double e = max_rel_err(res->result[i], L->tensors[i].type, ref[i], DT_F64, lesson_tensor_count(L, i, prob));
        if (isnan(e)) return NAN;
        m = fmax(m, e);
    }
    return m;
}
