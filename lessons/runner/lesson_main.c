/* lesson_main.c - the program every lesson is: parse, run each implementation, validate, report.
 *
 * Order of the output: what a learner came for first (issue 26: within the first screen) - the problem (the
 * title) and size, the table (FAIL where an implementation is over the lesson's tolerance against float64),
 * the saving (ratios between validated implementations) and the verdict (PASS or FAIL, and the exit status);
 * then what each row is and the lesson's model (preamble), what the columns mean, each run's memory by
 * tensor, the formulas against the tracker, and the lesson's own epilogue (where the bytes go).
 */
#define _POSIX_C_SOURCE 200809L /* pthread_cond_timedwait, clock_gettime, isatty, fileno: the run's notice */
#include "lesson.h"

#include "gemm_cpu.h"
#include "timer.h"
#include "track.h"
#include "cli.h"
#include "impl_gate.h"
#include "lesson_output.h"
#include "output_file.h"
#include "run_estimate.h"
#include "snapshot.h"
#include "time_spread.h"
#ifdef HAVE_CUDA
#include "../../kernels/runtime/cuda_fit.h"
#include "../../kernels/runtime/cuda_track.h"
#endif

#include "device_hooks.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    const lesson *L;
    const void *prob;
    cli_options o;
    char dims[160];
    void *t[LESSON_MAX_TENSORS];
    double *ref[LESSON_MAX_TENSORS];
    const char *ref_why;
    /* validation's own time: the float64 reference, then every comparison with it */
    double ref_ms, compare_ms;
    lesson_result res[LESSON_MAX_IMPLS];
    /* --repeat: every timed run's ms per implementation (the median goes into the row) */
    double fwd_ms[LESSON_MAX_IMPLS][CLI_MAX_REPEAT], bwd_ms[LESSON_MAX_IMPLS][CLI_MAX_REPEAT];
    int unstable; /* repeated runs whose memory differed from the first run's */
    int no_device[LESSON_MAX_IMPLS]; /* skipped for want of a CUDA device (one stderr line names them all) */
    int alias_skipped; /* how many faster versions "cuda" passed over because they do not fit (pick_alias) */
} driver;

/* The report is flushed before each long step and before stderr speaks; the first failure's errno is kept for
 * check_stdout's message (a later flush of an emptied buffer succeeds and says nothing). */
static int stdout_errno;
static void flush_stdout(void)
{
    errno = 0;
    if (fflush(stdout) != 0 && !stdout_errno) stdout_errno = errno;
}

/* The driver holds the inputs, one result set per implementation that will run and the float64 reference:
 * refuse before allocating anything if that alone overflows or is over the limit. An implementation the gate
 * or its fit check will skip (no device, over --mem-limit) holds no result set: at the forum's size the skips
 * are the answer (what would not fit, with its bytes), not a refusal of the whole run. */
static int check_driver_bytes(const driver *dv)
{
    size_t in = 0, out = 0, out_f64 = 0;
    for (int i = 0; i < lesson_ntensors(dv->L); i++) {
        size_t b = lesson_tensor_bytes(dv->L, i, dv->prob);
        lesson_role r = dv->L->tensors[i].role;
        if (r == LT_INPUT || r == LT_UPSTREAM) in = size_add(in, b);
        else {
            out = size_add(out, b);
            out_f64 = size_add(out_f64, size_mul(8, lesson_tensor_count(dv->L, i, dv->prob)));
        }
    }
    /* not made */
    if ((dv->L->reference_unfit && dv->L->reference_unfit(dv->prob)) || lesson_dry()) out_f64 = 0;
    size_t sets = 0;
    for (int k = 0; k < dv->o.nimpl; k++) {
        const lesson_impl *im = &dv->L->impls[dv->o.impl[k]];
        impl_row scratch;
        memset(&scratch, 0, sizeof scratch);
        if (impl_gate(&scratch, im->device, im->memory(dv->prob).peak, dv->o.mem_limit) == GATE_RUN &&
            !(im->unfit && im->unfit(dv->prob)))
            sets++;
    }
    sets += sets && dv->o.repeat > 1; /* --repeat holds one more result set */
    size_t need = size_add(size_add(in, size_mul(out, sets)), out_f64);
    if (need != SIZE_MAX && need <= dv->o.mem_limit) return 0;
    char n[32], lim[32];
    format_bytes_exact(need, n, sizeof n);
    format_bytes_exact(dv->o.mem_limit, lim, sizeof lim);
    fprintf(stderr,
            "%s: dims %s need %s bytes for the inputs, results and reference alone, over --mem-limit %s\n",
            dv->L->program, dv->dims, need == SIZE_MAX ? "more than 2^64" : n, lim);
    return -1;
}

/* The GPU the CUDA versions run on, with the limits their fit checks read (kernels/runtime/cuda_fit.h):
 * printed when a CUDA version was asked for and a device exists (CUDA_VISIBLE_DEVICES chooses it, as for any
 * CUDA program) */
static void print_gpu(const driver *dv)
{
#ifdef HAVE_CUDA
    int wants = 0;
    for (int k = 0; k < dv->o.nimpl; k++) wants |= dv->L->impls[dv->o.impl[k]].device;
    const cuda_device_info *g = wants ? cuda_device_info_get() : NULL;
    if (!g) return;
    char mem[16], smem[32];
    format_bytes_human(g->total_mem, mem, sizeof mem);
    format_bytes_exact(g->smem_optin, smem, sizeof smem);
    printf("GPU: %s, compute capability %d.%d, %d SM%s, %s, %s bytes of shared memory per block\n", g->name,
           g->cc / 10, g->cc % 10, g->sms, g->sms == 1 ? "" : "s", mem, smem);
#else
    (void)dv;
#endif
}

static void print_header(const driver *dv)
{
    const lesson *L = dv->L;
    char lim[32], limh[16];
    format_bytes_exact(dv->o.mem_limit, lim, sizeof lim);
    format_bytes_human(dv->o.mem_limit, limh, sizeof limh);
    printf("%s\n", L->title);
    if (dv->o.repeat > 1) printf("times: the median of %d runs after one warm-up run\n", dv->o.repeat);
    printf("size %s: %s", dv->o.size_name, dv->dims);
    for (int k = 0; k < lesson_nopts(L); k++)
        if (L->opts[k].names) /* a named value prints its name, not its index */
            printf("  %s %s", L->opts[k].flag, L->opts[k].names[dv->o.opts[k]]);
        else if (dv->o.opts[k] != L->opts[k].def || L->opts[k].takes_value)
            printf("  %s%s%lld", L->opts[k].flag, L->opts[k].takes_value ? " " : "=", dv->o.opts[k]);
    printf("   seed %llu   mem-limit %s (%s)\n", (unsigned long long)dv->o.seed, lim, limh);
    print_gpu(dv);
    flush_stdout();
}

/* A notice on a terminal when a run is still working NOTICE_S seconds after it started (the forum sizes
 * take minutes on a loaded machine): a thread waits on a condition the run signals when its table is ready,
 * and says once, on stderr, what the run is doing then. Only where stderr is a terminal: a pipe's reader
 * (make docs, the tests) reads the output, not the wait. */
#define NOTICE_S 2
static struct {
    pthread_mutex_t m;
    pthread_cond_t done_cond;
    int done, started, said; /* said: a line on stdout already says what the run waits for (a trial, a run) */
    char what[160];
    const char *program;
    pthread_t thread;
} notice = {.m = PTHREAD_MUTEX_INITIALIZER, .done_cond = PTHREAD_COND_INITIALIZER};

static void *notice_wait(void *arg)
{
    (void)arg;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += NOTICE_S;
    pthread_mutex_lock(&notice.m);
    int rc = 0;
    while (!notice.done && rc != ETIMEDOUT) rc = pthread_cond_timedwait(&notice.done_cond, &notice.m, &until);
    if (!notice.done && !notice.said)
        fprintf(stderr,
                "%s: still working after %d s: %s (the table follows when every implementation has run)\n",
                notice.program, NOTICE_S, notice.what);
    pthread_mutex_unlock(&notice.m);
    return NULL;
}

static void notice_doing(const char *what, const char *name)
{
    pthread_mutex_lock(&notice.m);
    snprintf(notice.what, sizeof notice.what, "%s%s", what, name);
    pthread_mutex_unlock(&notice.m);
}

static void notice_start(const char *program)
{
    notice.program = program;
    notice.done = notice.said = 0;
    notice_doing("preparing the inputs", "");
    notice.started = isatty(fileno(stderr)) && pthread_create(&notice.thread, NULL, notice_wait, NULL) == 0;
}

static void notice_said(int said)
{
    pthread_mutex_lock(&notice.m);
    notice.said = said;
    pthread_mutex_unlock(&notice.m);
}

/* A time estimate's trial run (run_estimate.h: a smaller problem, seconds on a loaded machine) comes before
 * the estimate's line: a terminal is told at once what it waits for, on a line the estimate then replaces (a
 * pipe sees only the estimate's own line). Returns 1 when the line is showing. */
static int trial_notice(const char *name)
{
    notice_doing("timing a smaller problem for the estimate of ", name);
    if (!isatty(fileno(stdout))) return 0;
    printf("%s: timing a smaller problem first, to estimate its time ...", name);
    flush_stdout();
    notice_said(1);
    return 1;
}

static void trial_notice_end(int shown)
{
    if (!shown) return;
    printf("\r\033[K"); /* back to the line's start, erased to its end */
    flush_stdout();
    notice_said(0);
}

static void notice_stop(void)
{
    pthread_mutex_lock(&notice.m);
    notice.done = 1;
    pthread_cond_signal(&notice.done_cond);
    pthread_mutex_unlock(&notice.m);
    if (notice.started) pthread_join(notice.thread, NULL);
    notice.started = 0;
}

/* The 1-minute load average against the cores this process may use: above them, other work shares the cores
 * and a time measures the sharing as much as the code (a run says so in its header). */
static void warn_if_loaded(void)
{
    double load = 0.0;
    FILE *f = fopen("/proc/loadavg", "r");
    int got = f && fscanf(f, "%lf", &load) == 1;
    if (f) fclose(f);
    int cores = gemm_cpu_cores_available();
    if (got && load > (double)cores)
        printf("warning: load average %.2f over %d core%s when this run started: times unreliable\n", load,
               cores, cores == 1 ? "" : "s");
}

/* What each row is and the lesson's model of it: after the verdict, before the details. */
static void print_about(const driver *dv)
{
    const lesson *L = dv->L;
    printf("\nCPU GEMMs: %s\nCPU GEMM rates (measured, for the time estimates; they choose nothing): %s\n",
           gemm_cpu_library(), gemm_cpu_rates());
    for (int i = 0; i < dv->o.nimpl; i++) {
        const lesson_impl *im = &L->impls[dv->o.impl[i]];
        if (strcmp(dv->o.impl_name[i], im->name) != 0 &&
            dv->alias_skipped) { /* "cuda", past faster versions */
            const lesson_impl *fastest = &L->impls[lesson_cuda_alias_impl(L)];
            const char *why = fastest->unfit ? fastest->unfit(dv->prob) : NULL;
            printf("  %-8s = %s, the fastest that fits (%s, faster, does not: %s): %s\n", dv->o.impl_name[i],
                   im->name, fastest->name, why ? why : "its predicted peak is over --mem-limit", im->about);
        } else if (strcmp(dv->o.impl_name[i], im->name) != 0) /* the alias: "cuda = cuda-v2" */
            printf("  %-8s = %s: %s\n", dv->o.impl_name[i], im->name, im->about);
        else printf("  %-8s %s\n", im->name, im->about);
    }
    if (L->preamble) L->preamble(dv->prob, stdout);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
    double s[CLI_MAX_REPEAT];
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* --repeat N: the run already in res was the warm-up (its memory, results and timeline are what the report
 * shows); N more runs are timed and their median becomes the row's time. Each run's memory must equal the
 * first's: the tracker is exact, so a difference is a bug worth a non-zero exit. With N = 1 the single run is
 * the sample. */
static void repeat_runs(driver *dv, int k)
{
    lesson_result *res = &dv->res[k];
    int n = dv->o.repeat;
    if (n == 1) {
        dv->fwd_ms[k][0] = res->row.forward_ms;
        dv->bwd_ms[k][0] = res->row.backward_ms;
        return;
    }
    for (int r = 0; r < n; r++) {
        lesson_result tmp;
        if (!dv->L->impls[res->impl].device) { /* the GEMM share: the timed runs' calls, per run */
            if (r == 0) gemm_cpu_record_begin();
            else gemm_cpu_record_again();
        }
        lesson_run_impl(dv->L, dv->prob, res->impl, dv->t, &tmp);
        gemm_cpu_record_end();
        dv->fwd_ms[k][r] = tmp.row.forward_ms;
        dv->bwd_ms[k][r] = tmp.row.backward_ms;
        if (tmp.row.peak_bytes != res->row.peak_bytes ||
            tmp.row.forward_live_bytes != res->row.forward_live_bytes || tmp.row.allocs != res->row.allocs) {
            fprintf(stderr,
                    "%s: %s: run %d of --repeat measured peak %zu, live %zu, allocs %zu; the first run %zu, "
                    "%zu, %zu\n",
                    dv->L->program, res->row.impl, r + 1, tmp.row.peak_bytes, tmp.row.forward_live_bytes,
                    tmp.row.allocs, res->row.peak_bytes, res->row.forward_live_bytes, res->row.allocs);
            dv->unstable++;
        }
        lesson_result_free(dv->L, &tmp);
    }
    res->row.forward_ms = median(dv->fwd_ms[k], n);
    res->row.backward_ms = median(dv->bwd_ms[k], n);
}

/* A host implementation whose multiply-adds, at this machine's measured GEMM rate, exceed --time-limit is
 * skipped with the estimate (lesson 3's cpu at the forum's size would run for hours). It is a floor: what
 * else the implementation does (lesson 5's naive: three passes over [V,H] a chunk) is not counted. */
static int too_slow(const driver *dv, const lesson_impl *im, impl_row *row)
{
    if (im->device || !im->work) return 0;
    double fmas = im->work(dv->prob);
    if (fmas < 1e10) return 0; /* a few seconds at most: not worth timing the GEMM */
    double s = fmas / gemm_cpu_fmas_per_second();
    if (s <= dv->o.time_limit) return 0;
    char est[32];
    format_duration(s, est, sizeof est);
    snprintf(row->note, sizeof row->note,
             "estimated %s or more (%.3g multiply-adds at this machine's measured GEMM rate, nothing"
             " else counted), over --time-limit %.0f s",
             est, fmas, dv->o.time_limit);
    return 1;
}

/* Before a host implementation that will take LONG_RUN_S or more, one line says so with the time it will
 * take, measured on a smaller problem (run_estimate.h); where none can be built, the GEMM-rate floor ("at
 * least"). Implementations that would be quick even at MIN_GEMM_SHARE of GEMM speed (the slowest here: lesson
 * 1's naive at 2%) are not measured, so a small run - every gdb walk in docs/gdb - runs each implementation
 * once only. */
#define LONG_RUN_S 2.0
#define MIN_GEMM_SHARE 0.02
static void announce_long(const driver *dv, int k)
{
    const lesson_impl *im = &dv->L->impls[dv->o.impl[k]];
    if (im->device || !im->work || lesson_dry()) return;
    double fmas = im->work(dv->prob), s = fmas / gemm_cpu_fmas_per_second();
    if (s / MIN_GEMM_SHARE < LONG_RUN_S) return;
    char how[160], est[32];
    int shown = trial_notice(dv->o.impl_name[k]);
    double measured = run_estimate_seconds(dv->L, dv->prob, dv->o.dims, dv->o.opts, dv->o.seed, dv->o.impl[k],
                                           0, how, sizeof how);
    trial_notice_end(shown);
    notice_doing("running ", dv->o.impl_name[k]);
    if (measured < 0.0)
        snprintf(how, sizeof how, "at least: %.3g multiply-adds at this machine's GEMM rate", fmas);
    else s = measured;
    int runs = dv->o.repeat > 1 ? dv->o.repeat + 1 : 1;
    if (s * runs < LONG_RUN_S) return;
    format_duration(s, est, sizeof est);
    if (runs > 1) printf("%s: about %s a run, %d runs (%s); running it\n", im->name, est, runs, how);
    else printf("%s: about %s (%s); running it\n", im->name, est, how);
    flush_stdout();
    notice_said(1);
}

/* The share of the GEMM provider's peak a host implementation reached: the time its GEMMs take when each of
 * its shapes runs alone at the provider's best (replayed after its run, gemm_cpu.h), over its forward +
 * backward time. An implementation without GEMMs (the toy lesson) is held to its multiply-adds at the
 * calibration rate. */
static double gemm_share(const driver *dv, const lesson_impl *im, const impl_row *row, double peak_s)
{
    double s = (row->forward_ms + row->backward_ms) * 1e-3;
    if (im->device || !im->work || !(s > 0.0)) return NAN;
    return peak_s > 0.0 ? peak_s / s : im->work(dv->prob) / s / gemm_cpu_fmas_per_second();
}

/* Whether stdout and stderr are one file (a terminal, or 2>&1): its reader already has stdout's line. */
static int same_stream(void)
{
    struct stat o, e;
    return fstat(1, &o) == 0 && fstat(2, &e) == 0 && o.st_dev == e.st_dev && o.st_ino == e.st_ino;
}

/* The CUDA versions a CPU-only machine skips, where nothing else ran: one line on stderr for all of them, the
 * reason for the exit status, for a reader of stderr alone (the table's one skip row says it on stdout). */
static void say_device_skips(const driver *dv)
{
    char names[256] = "";
    const char *why = NULL;
    for (int k = 0; k < dv->o.nimpl; k++) {
        const impl_row *r = &dv->res[k].row;
        if (!dv->no_device[k]) continue;
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", r->impl);
        why = r->note;
    }
    int ran = 0;
    for (int k = 0; k < dv->o.nimpl; k++) ran |= dv->res[k].row.ran;
    if (!why || ran || same_stream()) return;
    flush_stdout();
    fprintf(stderr, "%s: skipped %s: %s\n", dv->L->program, names, why);
}

/* "cuda" is the fastest version that fits (lesson.cuda_order): where a device exists, each "cuda" of --impl
 * becomes the first version whose unfit() passes for this problem on it. Without one it stays the first,
 * skipped as every CUDA row is. */
static void pick_alias(driver *dv)
{
    impl_row probe;
    memset(&probe, 0, sizeof probe);
    for (int k = 0; k < dv->o.nimpl; k++) {
        if (strcmp(dv->o.impl_name[k], LESSON_CUDA_ALIAS) != 0) continue;
        if (impl_gate(&probe, 1, 0, SIZE_MAX) != GATE_RUN) return;
        dv->o.impl[k] = lesson_cuda_pick(dv->L, dv->prob, dv->o.mem_limit, &dv->alias_skipped);
    }
}

static void run_all(driver *dv)
{
    const lesson *L = dv->L;
    for (int k = 0; k < dv->o.nimpl; k++) {
        const lesson_impl *im = &L->impls[dv->o.impl[k]];
        lesson_result *res = &dv->res[k];
        memset(res, 0, sizeof *res);
        res->impl = dv->o.impl[k];
        mem_formula f = im->memory(dv->prob);
        f.allocs = 0; /* a row that does not run shows the bytes it would take, not the count */
        lesson_row_predict(&res->row, dv->o.impl_name[k], f);
        impl_gate_verdict gate = impl_gate(&res->row, im->device, f.peak, dv->o.mem_limit);
        dv->no_device[k] = gate == GATE_NO_DEVICE;
        if (gate != GATE_RUN) continue;
        const char *why = im->unfit ? im->unfit(dv->prob) : NULL;
        if (why) {
            snprintf(res->row.note, sizeof res->row.note, "%s", why);
            continue;
        }
        if (too_slow(dv, im, &res->row)) continue;
        notice_doing("running ", dv->o.impl_name[k]);
        announce_long(dv, k);
        lesson_timeline_begin(L->program, dv->o.impl_name[k]);
        snapshot_begin(dv->o.impl_name[k]);
        if (!im->device) gemm_cpu_record_begin();
        lesson_run_impl(L, dv->prob, dv->o.impl[k], dv->t, res);
        gemm_cpu_record_end();
        snapshot_end();
        res->row.impl = dv->o.impl_name[k]; /* the name asked for: "cuda" stays "cuda" */
        lesson_timeline_end();
        repeat_runs(dv, k);
        if (im->device) device_after_run(L, dv->prob, dv->o.impl[k], dv->t);
        res->row.gemm_share =
            gemm_share(dv, im, &res->row, im->device ? 0.0 : gemm_cpu_peak_seconds(im->name));
    }
    say_device_skips(dv);
}

/* Validation's float64 reference can take as long as the runs (lesson 5 at medium: 19 s against naive's 25 s
 * on a busy machine): the same notice, measured the same way, scaled by the first host implementation's
 * work. */
static void announce_reference(const driver *dv)
{
    const lesson *L = dv->L;
    if (lesson_dry() || (L->reference_unfit && L->reference_unfit(dv->prob))) return;
    for (int i = 0; i < lesson_nimpls(L); i++) {
        const lesson_impl *im = &L->impls[i];
        if (im->device || !im->work || (im->unfit && im->unfit(dv->prob))) continue;
        if (im->work(dv->prob) / gemm_cpu_fmas_per_second() / MIN_GEMM_SHARE < LONG_RUN_S) return;
        char how[160], est[32];
        int shown = trial_notice("validation");
        double s =
            run_estimate_seconds(L, dv->prob, dv->o.dims, dv->o.opts, dv->o.seed, i, 1, how, sizeof how);
        trial_notice_end(shown);
        if (s < LONG_RUN_S) return;
        format_duration(s, est, sizeof est);
        printf("validation: about %s for the float64 reference (%s); running it\n", est, how);
        flush_stdout();
        notice_said(1);
        return;
    }
}

/* Validation: every implementation against float64, before any ratio is printed. Returns the failures. */
static int validate(driver *dv)
{
    int failures = 0, ran = 0;
    for (int k = 0; k < dv->o.nimpl; k++) ran += dv->res[k].row.ran;
    if (!ran) {
        dv->ref_why = "no implementation ran";
        return 0;
    }
    announce_reference(dv);
    notice_doing("the float64 reference, to validate every implementation against", "");
    double t0 = host_time_ms();
    dv->ref_why = lesson_make_reference(dv->L, dv->prob, dv->t, dv->ref);
    double t1 = host_time_ms();
    for (int k = 0; k < dv->o.nimpl; k++) {
        lesson_result *res = &dv->res[k];
        if (!res->row.ran || dv->ref_why) continue;
        res->row.max_rel_err = lesson_max_rel_err(dv->L, dv->prob, res, dv->ref);
        res->validated = res->row.max_rel_err <= res->tolerance; /* NaN fails */
        res->row.failed = !res->validated;
        failures += res->row.failed;
    }
    dv->ref_ms = t1 - t0;
    dv->compare_ms = host_time_ms() - t1;
    return failures;
}

/* The saving: every validated implementation against the first validated host one (naive, where it ran). */
static void print_ratios(const driver *dv)
{
    const lesson_result *base = NULL;
    for (int k = 0; k < dv->o.nimpl; k++)
        if (dv->res[k].validated && !dv->L->impls[dv->res[k].impl].device) {
            base = &dv->res[k];
            break;
        }
    if (!base) return;
    int printed = 0;
    for (int k = 0; k < dv->o.nimpl; k++) {
        const lesson_result *r = &dv->res[k];
        if (r == base || !r->validated || r->row.emulated) continue;
        if (!printed++)
            printf("\nRatios between validated implementations (above 1: %s uses more):\n", base->row.impl);
        printf("  %s / %s: peak %.1fx, live after forward %.1fx, forward + backward time %.2fx\n",
               base->row.impl, r->row.impl, (double)base->row.peak_bytes / (double)r->row.peak_bytes,
               (double)base->row.forward_live_bytes / (double)r->row.forward_live_bytes,
               (base->row.forward_ms + base->row.backward_ms) / (r->row.forward_ms + r->row.backward_ms));
    }
}

/* The tolerance an implementation is held to: its own where it has one (lesson_impl.tolerance), else the
 * lesson's. */
static double impl_tolerance(const driver *dv, int k)
{
    const lesson_impl *im = &dv->L->impls[dv->res[k].impl];
    return im->tolerance > 0 ? im->tolerance : lesson_tolerance(dv->L, dv->prob);
}

/* The implementations that ran with (failed) or without a FAIL, and their tolerance: one figure where they
 * share it ("naive, cpu within 7.8e-03"), else each its own ("naive within 6.2e-02, cpu within 7.8e-03"). */
static void list_with_tolerance(const driver *dv, int failed, const char *word, char *buf, size_t len)
{
    int n = 0, shared = 1;
    double tol = 0.0;
    for (int k = 0; k < dv->o.nimpl; k++) {
        const impl_row *r = &dv->res[k].row;
        if (!r->ran || r->failed != failed) continue;
        if (n++ && impl_tolerance(dv, k) != tol) shared = 0;
        tol = impl_tolerance(dv, k);
    }
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0, i = 0; k < dv->o.nimpl && used < len; k++) {
        const impl_row *r = &dv->res[k].row;
        if (!r->ran || r->failed != failed) continue;
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i++ ? ", " : "", r->impl);
        if (!shared && used < len)
            used += (size_t)snprintf(buf + used, len - used, " %s %.1e", word, impl_tolerance(dv, k));
    }
    if (shared && used < len) snprintf(buf + used, len - used, " %s %.1e", word, tol);
}

/* One line a learner can stop at: PASS or FAIL, why, and the exit status it gives. */
static int print_verdict(const driver *dv, int failures, int mismatches)
{
    int nran = 0, nskipped = 0;
    for (int k = 0; k < dv->o.nimpl; k++) {
        if (dv->res[k].row.ran) nran++;
        else nskipped++;
    }
    char skipped[48] = "";
    if (nskipped) snprintf(skipped, sizeof skipped, "; %d skipped (see the table)", nskipped);
    int status = EXIT_PASS;
    printf("\n");
    if (!nran) {
        printf("NOTHING RAN: every implementation was skipped (see the table); exit status %d\n",
               EXIT_NOTHING_RAN);
        return EXIT_NOTHING_RAN;
    }
    if (failures || mismatches || dv->unstable) {
        status = EXIT_FAILED;
        printf("FAIL:");
        if (failures) {
            char list[400];
            list_with_tolerance(dv, 1, "over the tolerance", list, sizeof list);
            printf(" %s against float64;", list);
        }
        if (mismatches)
            printf(" %d memory formula%s disagree%s with the tracker (MISMATCH below);", mismatches,
                   mismatches == 1 ? "" : "s", mismatches == 1 ? "s" : "");
        if (dv->unstable) printf(" --repeat runs measured different memory;");
        printf(" exit status %d\n", status);
    } else if (dv->ref_why) {
        printf("PASS (memory only): every memory formula equals the tracker; errors not measured (%s)%s\n",
               dv->ref_why, skipped);
    } else {
        char list[400];
        list_with_tolerance(dv, 0, "within", list, sizeof list);
        printf("PASS: %s of the float64 reference, every memory formula equal to the tracker%s\n", list,
               skipped);
    }
    return status;
}

/* cublasCreate allocates device memory of its own that no tracked allocator sees: say how much, once. */
static void print_untracked(const driver *dv)
{
#ifdef HAVE_CUDA
    for (int k = 0; k < dv->o.nimpl; k++) {
        const lesson_impl *im = &dv->L->impls[dv->res[k].impl];
        if (!dv->res[k].row.ran || !im->device || !im->uses_cublas) continue;
        char b[32];
        format_bytes_exact(cublas_untracked_bytes(), b, sizeof b);
        printf("untracked: the cuBLAS handle's own device memory, measured with cudaMemGetInfo around "
               "cublasCreate: "
               "%s bytes (not in the table: no allocator of ours made it)\n",
               b);
        return;
    }
#else
    (void)dv;
#endif
}

/* The first screen: the table, the saving and the verdict. Returns the verdict's exit status. */
static int print_summary(const driver *dv, int failures)
{
    impl_row rows[LESSON_MAX_IMPLS];
    for (int k = 0; k < dv->o.nimpl; k++) rows[k] = dv->res[k].row;
    printf("\n");
    report_table(stdout, rows, dv->o.nimpl);
    if (dv->L->answer) {
        lesson_report rep = {dv->L, dv->prob, dv->t, dv->ref, dv->res, dv->o.nimpl};
        dv->L->answer(&rep, stdout);
    }
    device_report(stdout);
    print_ratios(dv);
    return print_verdict(dv, failures, report_predictions(NULL, rows, dv->o.nimpl));
}

static void print_details(const driver *dv)
{
    const lesson *L = dv->L;
    impl_row rows[LESSON_MAX_IMPLS];
    for (int k = 0; k < dv->o.nimpl; k++) rows[k] = dv->res[k].row;
    report_time_spread(stdout, rows, dv->o.nimpl, (const double(*)[CLI_MAX_REPEAT])dv->fwd_ms,
                       (const double(*)[CLI_MAX_REPEAT])dv->bwd_ms, dv->o.repeat);
    print_about(dv);
    printf("\n");
    report_launches(stdout, rows, dv->o.nimpl);
    report_graphs(stdout, rows, dv->o.nimpl);
    printf(
        "\"live after forward\" counts every tracked buffer right after the forward pass, inputs included;\n"
        "\"peak\" adds the backward pass (the upstream gradient, the gradients, backward's temporaries).\n");
    if (L->legend) printf("%s\n", L->legend);
    if (dv->ref_why)
        printf("max rel err: not measured (%s), so nothing is validated and no ratio is printed.\n",
               dv->ref_why);
    else {
        char own[200] = ""; /* the implementations held to a tolerance of their own */
        for (int k = 0; k < dv->o.nimpl; k++) {
            size_t used = strlen(own);
            if (dv->res[k].row.ran && impl_tolerance(dv, k) != lesson_tolerance(L, dv->prob))
                snprintf(own + used, sizeof own - used, ", %s's own %.1e", rows[k].impl,
                         impl_tolerance(dv, k));
        }
        printf("max rel err = max |impl - ref| / max |ref| over every output and gradient against a float64\n"
               "reference; FAIL above %.1e%s (%s).\n", lesson_tolerance(L, dv->prob), own, L->tolerance_why);
    }
    if (!dv->ref_why) /* where a run's time goes besides the implementations: on the CPU, not in any row */
        printf("validation took %.2f s: the float64 reference %.2f s (cblas_dgemm), the comparisons %.2f s\n",
               (dv->ref_ms + dv->compare_ms) * 1e-3, dv->ref_ms * 1e-3, dv->compare_ms * 1e-3);
    print_untracked(dv);
    for (int k = 0; k < dv->o.nimpl; k++) {
        if (!dv->res[k].row.ran) continue;
        printf("\n%s: memory by tensor (%s; peak = the most bytes that label held at once)\n", rows[k].impl,
               L->impls[dv->res[k].impl].device ? "device" : "host");
        fputs(dv->res[k].labels ? dv->res[k].labels : "", stdout);
    }
    printf("\nMemory formulas (docs/lesson-%d.md) against the tracker:\n", L->number);
    report_predictions(stdout, rows, dv->o.nimpl);
    if (L->epilogue) {
        lesson_report rep = {L, dv->prob, dv->t, dv->ref, dv->res, dv->o.nimpl};
        printf("\n");
        L->epilogue(&rep, stdout);
    }
}

/* The files a run writes after its report, all or none (output_file.h): each is written to a temporary and
 * checked to the end; the first that fails is named, every temporary is removed and each path keeps what it
 * held (EXIT_WRITE_FAILED); else all are renamed over their paths, and a --dump directory loses an earlier
 * run's files that this run did not write. */
static int write_outputs(driver *dv)
{
    const lesson *L = dv->L;
    impl_row rows[LESSON_MAX_IMPLS];
    for (int k = 0; k < dv->o.nimpl; k++) rows[k] = dv->res[k].row;
    /* the one written as the run went: where a full disk shows first */
    int failed = lesson_timeline_close(1) != 0;
    failed = snapshot_close(!failed) != 0 || failed;
    if (!failed && dv->o.csv_path) {
        output_file *f = output_open("--csv", dv->o.csv_path, 1);
        if (f) report_csv(output_stream(f), L->number, dv->o.size_name, dv->dims, rows, dv->o.nimpl);
        failed = !f || output_close(f) != 0;
    }
    if (!failed && dv->o.times_path) {
        output_file *f = output_open("--times", dv->o.times_path, 1);
        for (int k = 0; k < dv->o.nimpl && f; k++)
            if (rows[k].ran)
                report_times_csv(output_stream(f), L->number, dv->o.size_name, dv->dims, &rows[k],
                                 dv->fwd_ms[k], dv->bwd_ms[k], dv->o.repeat);
        failed = !f || output_close(f) != 0;
    }
    if (!failed && dv->o.dump_dir) {
        lesson_dump_meta meta = {dv->o.seed, dv->o.size_name, dv->o.dims, dv->o.opts};
        failed = lesson_dump(L, dv->prob, dv->o.dump_dir, dv->t, dv->res, dv->o.nimpl, &meta) != 0;
    }
    if (failed || output_publish() != 0) {
        output_discard();
        return EXIT_WRITE_FAILED;
    }
    if (dv->o.dump_dir && lesson_dump_report(L, dv->o.dump_dir, stdout) != 0) return EXIT_WRITE_FAILED;
    return 0;
}

/* Two outputs naming one file would leave only the last one written: refused before anything runs, as is a
 * file output inside the --dump directory under a name the dump writes or clears (meta.json, *.npy). */
static int check_distinct_outputs(const driver *dv)
{
    const char *what[] = {"--csv", "--times", "--timeline", "--snapshot"};
    const char *path[] = {dv->o.csv_path, dv->o.times_path, dv->o.timeline_path, dv->o.snapshot_path};
    for (int i = 0; i < 4; i++) {
        if (!path[i]) continue;
        for (int j = i + 1; j < 4; j++)
            if (path[j] && output_same_path(path[i], path[j]))
                return cli_fail(dv->L, "%s %s and %s %s name the same file: each output needs its own",
                                what[i], path[i], what[j], path[j]);
        const char *slash = strrchr(path[i], '/'), *base = slash ? slash + 1 : path[i];
        size_t blen = strlen(base);
        char dir[4096];
        int dirlen = slash ? (int)(slash - path[i]) + (slash == path[i]) : 1;
        snprintf(dir, sizeof dir, "%.*s", dirlen, slash ? path[i] : ".");
        if (dv->o.dump_dir && output_same_path(dir, dv->o.dump_dir) &&
            (strcmp(base, "meta.json") == 0 || (blen > 4 && strcmp(base + blen - 4, ".npy") == 0)))
            return cli_fail(dv->L, "%s %s is a file --dump %s writes or clears: each output needs its own",
                            what[i], path[i], dv->o.dump_dir);
    }
    return CLI_OK;
}

/* stdout is an output too (`> /dev/full`, a closed pipe): a report that did not reach it is one message, exit
 * 5. */
static int check_stdout(const lesson *L)
{
    flush_stdout();
    if (!ferror(stdout)) return 0;
    fprintf(stderr, "%s: writing the report to stdout failed: %s\n", L->program,
            stdout_errno ? strerror(stdout_errno) : "a write did not complete");
    return EXIT_WRITE_FAILED;
}

/* --predict: nothing runs and nothing is allocated; each implementation's formula is printed and, with --csv,
 * written as a row with device "predicted" (how the bench records a point that is over the memory limit or
 * too slow to run here). */
static int predict_only(driver *dv)
{
    const lesson *L = dv->L;
    if (dv->o.dump_dir || dv->o.timeline_path || dv->o.snapshot_path || dv->o.times_path || dv->o.repeat > 1)
        return cli_fail(
            L, "--predict runs nothing: --dump, --timeline, --snapshot, --times and --repeat do not apply");
    if (report_prepare_outputs(L->program, dv->o.csv_path, NULL) != 0) return EXIT_BAD_INPUT;
    output_init(L->program);
    print_header(dv);
    print_about(dv);
    printf("\n");
    impl_row rows[LESSON_MAX_IMPLS];
    for (int k = 0; k < dv->o.nimpl; k++) {
        const lesson_impl *im = &L->impls[dv->o.impl[k]];
        memset(&rows[k], 0, sizeof rows[k]);
        lesson_row_predict(&rows[k], dv->o.impl_name[k], im->memory(dv->prob));
        rows[k].predicted = 1;
    }
    printf("--predict: nothing runs. Memory formulas (docs/lesson-%d.md):\n", L->number);
    report_predictions(stdout, rows, dv->o.nimpl);
    if (dv->o.csv_path) {
        output_file *f = output_open("--csv", dv->o.csv_path, 1);
        if (f) report_csv(output_stream(f), L->number, dv->o.size_name, dv->dims, rows, dv->o.nimpl);
        if (!f || output_close(f) != 0 || output_publish() != 0) {
            output_discard();
            return EXIT_WRITE_FAILED;
        }
    }
    return check_stdout(L);
}

int lesson_main(const lesson *L, int argc, char **argv)
{
    static driver dv; /* large (result rows, label texts): static, not on the stack */
    lesson_problem prob;
    memset(&dv, 0, sizeof dv);
    dv.L = L;
    stdout_errno = 0;
    int rc = cli_parse(L, argc, argv, &dv.o);
    if (rc == CLI_HELP) return check_stdout(L);
    if (rc != CLI_OK) return EXIT_BAD_INPUT;
    cli_format_dims(L, dv.o.dims, dv.dims, sizeof dv.dims);
    const char *bad = L->make_problem(dv.o.dims, dv.o.opts, &prob);
    if (bad) return cli_fail(L, "%s: %s", dv.dims, bad);
    dv.prob = &prob;
    if (dv.o.predict) return predict_only(&dv);
    if (check_driver_bytes(&dv) != 0) return EXIT_BAD_INPUT;
    pick_alias(&dv);
    if (check_distinct_outputs(&dv) != CLI_OK) return EXIT_BAD_INPUT;
    output_init(L->program); /* from here a signal or an exit removes what the run has begun to write */
    if (report_prepare_outputs(L->program, dv.o.csv_path, dv.o.dump_dir) != 0 ||
        report_prepare_times(L->program, dv.o.times_path) != 0 ||
        (dv.o.timeline_path && lesson_timeline_open(dv.o.timeline_path) != 0) ||
        (dv.o.snapshot_path && snapshot_open(L->program, dv.o.snapshot_path) != 0)) {
        lesson_timeline_close(0);
        snapshot_close(0);
        output_discard();
        return EXIT_BAD_INPUT;
    }

    if (lesson_dry()) { /* a dry run: address space only, nothing filled (lesson.h) */
        track_set_lazy_host(1);
        track_set_poison(0);
    }
    if (dv.o.threads) gemm_cpu_set_threads(dv.o.threads);
    print_header(&dv);
    warn_if_loaded();
    notice_start(L->program);
    gemm_cpu_warm_up();
    lesson_make_inputs(L, dv.prob, dv.o.seed, dv.t);
    run_all(&dv);
    int failures = validate(&dv);
    notice_stop();
    int status = print_summary(&dv, failures);
    print_details(&dv);
    flush_stdout();
    if (status == EXIT_NOTHING_RAN)
        fprintf(stderr, "%s: no implementation ran (each was skipped: see the table)\n", L->program);
    if (failures)
        fprintf(stderr, "%s: %d implementation(s) FAILED validation against float64 (see the table)\n",
                L->program, failures);
    if (status == EXIT_FAILED && !failures && !dv.unstable)
        fprintf(stderr, "%s: a memory formula disagrees with the tracker (see MISMATCH above)\n", L->program);
    int written = write_outputs(&dv);
    if (written && status == EXIT_PASS) status = written;

    lesson_free_ref(L, dv.ref);
    for (int k = 0; k < dv.o.nimpl; k++) lesson_result_free(L, &dv.res[k]);
    lesson_free_slots(L, dv.t);
    if (track_report_live(stderr) != 0) status = EXIT_FAILED;
    int out = check_stdout(L);
    return status ? status : out;
}
