/* lesson.h - a lesson as data.
 *
 * A lesson is a problem (named dimensions and size presets, a list of tensors, a float64 reference) and a
 * table of implementations of it (naive, cpu, cuda, ...). One generic session (session.c) runs any lesson: it
 * draws the inputs, copies them into each implementation's memory (host or device, poisoned), times forward
 * and backward, snapshots the tracker, validates every output and gradient against the float64 reference, and
 * prints the table, the per-tensor memory, the formulas against the tracker, the CSV row and the .npy dumps.
 * lessonN.c is the definition below plus thin typed adapters; naive/ and optimized/ keep their typed
 * functions (so `break cpu_lc_forward` works in gdb) and the adapters call them.
 *
 * Every table of a definition (dimensions, sizes, options, tensors, implementations) is written with
 * designated initializers and ends at its first empty row; lesson_ndims() ... lesson_nimpls() count the rows,
 * so no count is typed.
 *
 * Tensors are one list, indexed by the lesson's own enum (lessonN.h, e.g. { X, W, DOUT, OUT, DX, DW }); a
 * run's slots t[] use the same index:
 *   LT_INPUT     drawn by fill(), copied into the implementation's memory before forward
 *   LT_UPSTREAM  drawn by fill() (dout), copied in after forward and before backward (as autograd does)
 *   LT_OUTPUT    allocated and written by forward
 *   LT_GRAD      allocated and written by backward; grad_of names the input it is the gradient of
 * The session frees every slot after the run; an implementation frees whatever else it allocated.
 */
#ifndef LESSONS_LESSON_H
#define LESSONS_LESSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../../kernels/runtime/dtype.h"
#include "../../kernels/runtime/mem_formula.h"
#include "report.h"

/* CUDA versions, as llm.c's dev/cuda numbers its kernels: a lesson's CUDA implementations are cuda-v1,
 * cuda-v2, ... in the order a learner should read them, and "cuda" is an alias of the fastest one that fits
 * the problem and the device (lesson.cuda_order), printed as such ("cuda = cuda-v2") by --help and the run. A
 * version is one field of one row:
 *     {LESSON_CUDA_VERSION(3), .about = "what v3 adds over v2, and the efficiency it is designed for",
 *      .memory = cuda_memory, .unfit = cuda_unfit, .forward = cuda_forward, .backward = cuda_backward},
 * To add one: write kernels/<name>_vN.cu (its kernels and launcher, declared in kernels/<name>_launch.h;
 * device memory in optimized/<name>.cu) and put it in the doc's reading path; teach the lesson's one CUDA
 * adapter (cuda_forward/cuda_backward in lessonN.c, which read lesson_run.version: a `case 3:` in lessons 2
 * and 5, the version number passed on in lesson 3) to call them; append the row above after the last version
 * (reading order; v is a literal, it is also the name), with its own .memory/.unfit where its bytes or limits
 * differ and a static_assert that its saved struct fits lesson_run.saved; put it in .cuda_order where `make
 * predict` and the GPU reports place it (docs/tools/cuda_order.py prints the order they give; `make
 * check-docs` holds the lessons to it).
 * --help, --impl, the tests (tests/test_lessons.c), `make test-emu` (every version at tiny and small) and the
 * bench (through the alias) pick it up from the table; nothing else lists versions. */
#define LESSON_CUDA_VERSION(v) .name = "cuda-v" #v, .version = (v), .device = 1
#define LESSON_CUDA_ALIAS "cuda"

#define LESSON_MAX_DIMS 8
#define LESSON_MAX_SIZES 8
#define LESSON_MAX_OPTS 4
#define LESSON_MAX_TENSORS 16 /* lesson 4 has 13: six inputs, dout, out, five gradients */
#define LESSON_MAX_RANK 5
#define LESSON_MAX_IMPLS 11 /* lesson 3 has 11: naive, cpu, cuda-v1 .. cuda-v9 */

typedef enum { LT_INPUT, LT_UPSTREAM, LT_OUTPUT, LT_GRAD } lesson_role;

typedef struct {
    const char *name;  /* .npy name: input.<name>.npy, <impl>.<name>.npy; "x", "dW" */
    lesson_role role;
    dtype type;
    const char *label; /* tracker label of an implementation's copy of an input ("x (B,G*K) input") */
    /* Fills shape[0..rank-1] for this problem and returns the rank (<= LESSON_MAX_RANK). */
    int (*shape)(const void *prob, size_t *shape);
    int grad_of;       /* LT_GRAD: index of the input this is the gradient of */
    /* one element that PyTorch holds with shape () (a reduced loss): --dump writes it so */
    int scalar;
} lesson_tensor;

typedef struct {
    const char *name;
    long long dims[LESSON_MAX_DIMS]; /* in the order of lesson.dim_names */
} lesson_size;

/* A lesson's own option: "--recompute" (a flag, value 1 when given) or "--checkpoint K" (an integer). */
typedef struct {
    const char *flag;      /* "--checkpoint" */
    int takes_value;       /* 0: a flag */
    long long def, min, max;
    const char *help;
    /* a value given by name ("--precision fp16"): its index in this NULL-ended list */
    const char *const *names;
} lesson_option;

/* The state one implementation's run carries from forward to backward. */
typedef struct {
    const void *prob;                /* the lesson's problem struct (dimensions and options) */
    /* the implementation's lesson_impl.version (its CUDA version; 0 on the host) */
    int version;
    void *t[LESSON_MAX_TENSORS];     /* tensor slots, in the implementation's memory (host or device) */
    /* what forward saved for backward: the implementation's own struct of pointers, stored here so that no
     * untracked allocation holds it (adapters static_assert that theirs fits) */
    union {
        long double align_;
        unsigned char bytes[8192];
    } saved;
} lesson_run;

typedef struct {
    const char *name;   /* CLI name: "naive", "cpu", "cuda-v1" (LESSON_CUDA_VERSION) */
    /* CUDA implementations: N of cuda-vN, which the lesson's adapter reads; 0 on the host */
    int version;
    const char *about;  /* one line, printed before the runs */
    int device;         /* 0: host memory and host timers; 1: CUDA device memory and GPU timing */
    int uses_cublas;    /* device: the session attaches the tracked cuBLAS workspace around the run */
    /* device: captures CUDA Graphs; the timed run gets the warm-up's buffer addresses (so it replays) */
    int graph;
    mem_formula (*memory)(const void *prob);
    /* NULL when this problem fits the implementation's limits (int indexing, grid sizes), else why not. */
    const char *(*unfit)(const void *prob);
    void (*forward)(lesson_run *r);  /* sets every LT_OUTPUT slot */
    void (*backward)(lesson_run *r); /* sets every LT_GRAD slot; frees what forward saved */
    double tolerance;   /* 0: the lesson's tolerance; otherwise this implementation's own (say why) */
    /* Optional, host implementations: multiply-adds of forward + backward. The session divides it by the
     * measured CPU GEMM rate and skips, with the estimate, a run longer than --time-limit. */
    double (*work)(const void *prob);
} lesson_impl;

typedef struct lesson lesson;

/* One implementation's measured run, after the session: the report row and host copies of its outputs. */
typedef struct {
    impl_row row;
    int impl;                              /* index into lesson.impls */
    int validated;                         /* ran and max_rel_err <= tolerance */
    double tolerance;
    void *result[LESSON_MAX_TENSORS];      /* host copies of LT_OUTPUT and LT_GRAD slots; NULL otherwise */
    char *labels;                          /* the per-tensor memory table of the run (text), printed later */
} lesson_result;

/* What a lesson's epilogue sees after the table. */
typedef struct {
    const lesson *L;
    const void *prob;
    void *const *inputs;       /* host inputs, indexed like tensors (LT_INPUT and LT_UPSTREAM) */
    /* float64 reference of LT_OUTPUT and LT_GRAD; NULL entries if it did not run */
    double *const *ref;
    const lesson_result *res;  /* one per implementation asked for, in --impl order */
    int n;
} lesson_report;

struct lesson {
    int number;                       /* CSV lesson column */
    const char *program;              /* "lesson1" */
    const char *title;                /* first line of the output */
    const char *summary;              /* --help */
    const char *dim_names[LESSON_MAX_DIMS];
    lesson_size sizes[LESSON_MAX_SIZES];
    const char *default_size;
    lesson_option opts[LESSON_MAX_OPTS];

    /* Builds the problem struct (at most sizeof(lesson_problem) bytes) from dims and option values; returns
     * NULL, or one sentence saying why these dimensions are invalid (the CLI prints it and exits 2). */
    const char *(*make_problem)(const long long *dims, const long long *opts, void *prob);
    lesson_tensor tensors[LESSON_MAX_TENSORS];
    /* Draws every LT_INPUT and LT_UPSTREAM slot of t (host buffers) from seed; the distributions are the
     * lesson's (fresh random values, never zeros). */
    void (*fill)(const void *prob, uint64_t seed, void *const *t);
    /* float64 reference: ref[i] (host, count of tensor i) for each LT_OUTPUT and LT_GRAD. */
    void (*reference)(const void *prob, void *const *t, double *const *ref);
    /* NULL when the reference is affordable at this size, else why not (nothing is then validated). */
    const char *(*reference_unfit)(const void *prob);
    double tolerance;                 /* max_rel_err vs float64 that a valid implementation stays under */
    const char *tolerance_why;        /* one sentence, printed under the table */
    /* Optional: the tolerance at this problem's size, where rounding grows with a dimension (lesson 2's chain
     * length); replaces `tolerance` when set. */
    double (*tolerance_of)(const void *prob);

    lesson_impl impls[LESSON_MAX_IMPLS]; /* host ones first, then cuda-v1, cuda-v2, ... in reading order */
    /* The versions fastest first, which "cuda" tries in turn: the time model's order at the forum size
     * (lesson 4: medium) on the GPU docs/tools/cuda_order.py names, except where every GPU that measured two
     * versions ranks them the other way (docs/tools/cuda_order.py derives it from docs/results/; check-docs
     * compares). Every CUDA version once; empty: the lesson has no CUDA. "cuda" runs the first whose unfit()
     * passes (lesson_cuda_pick). */
    int cuda_order[LESSON_MAX_IMPLS];

    /* Optional: the progress notice's smaller problem (lessons/runner/run_estimate.h). dims and opts are the
     * run's, dims[0] already cut; adjust whatever must stay as in prob so the time per multiply-add is the
     * same. */
    void (*calibrate)(const void *prob, long long *dims, long long *opts);

    /* optional: the lesson's model, printed after the verdict */
    void (*preamble)(const void *prob, FILE *f);
    /* optional: lines after the formulas: where the bytes go */
    void (*epilogue)(const lesson_report *r, FILE *f);
    /* optional: under the table, the first screen's answer: the forum's figure beside the run's, the reason,
     * the saving */
    void (*answer)(const lesson_report *r, FILE *f);
    const char *legend;               /* printed under the table: what "peak" and the labels mean here */
};

/* Storage for any lesson's problem struct. */
typedef union {
    long double align_;
    unsigned char bytes[512];
} lesson_problem;

/* --- what a definition says, read (lesson.c) ------------------------------------------------------------ */
int lesson_ndims(const lesson *L);    /* rows of each table, up to its first empty one */
int lesson_nsizes(const lesson *L);
int lesson_nopts(const lesson *L);
int lesson_ntensors(const lesson *L);
int lesson_nimpls(const lesson *L);
int lesson_is_input(lesson_role r);   /* LT_INPUT or LT_UPSTREAM: drawn by fill() */
size_t lesson_tensor_count(const lesson *L, int i, const void *prob); /* elements; SIZE_MAX on overflow */
size_t lesson_tensor_bytes(const lesson *L, int i, const void *prob);
/* The row called name, "cuda" meaning the row of cuda_order's first version; -1 when absent. */
int lesson_find_impl(const lesson *L, const char *name);
/* impl's memory formula at the lesson's preset `size` (options at their defaults): 0, or -1 when the lesson
 * has no such size or implementation (the first screen's forum figure). */
int lesson_size_formula(const lesson *L, const char *size, const char *impl, mem_formula *out);
/* The alias's row before a problem is known: cuda_order's first version (-1 when the lesson has no CUDA). */
int lesson_cuda_alias_impl(const lesson *L);
/* The row "cuda" runs for prob on this device: the first of cuda_order whose unfit(prob) is NULL and whose
 * predicted peak (memory(prob).peak) is at most mem_limit, else the first (whose own note then says why it
 * cannot run). Call it only where a device exists: unfit() may ask the device (lesson 3's v9 runs a probe
 * kernel). *skipped, when not NULL, gets how many versions were passed over. */
int lesson_cuda_pick(const lesson *L, const void *prob, size_t mem_limit, int *skipped);
/* The row of CUDA version v; -1 when the lesson has none. */
int lesson_cuda_version_impl(const lesson *L, int v);
double lesson_tolerance(const lesson *L, const void *prob);           /* tolerance_of, else tolerance */

/* The whole program: parse argv, run, report. Returns the exit status: 0, 1 (a run failed validation or a
 * formula disagreed with the tracker, or nothing ran), 2 (bad input). */
int lesson_main(const lesson *L, int argc, char **argv);

/* 1 in a dry run (a build that runs kernels some other way may run them dry: device_hooks.h): host memory is
 * reserved, not allocated, nothing is filled or poisoned, no reference is computed; only the limits are
 * checked. */
int lesson_dry(void);

/* --- the session, for tests ----------------------------------------------------------------------------- */
/* The one place a report row takes an implementation's memory formula: its name, the formula's peak, live
 * bytes after forward and allocations, max_rel_err NaN (not measured yet). */
void lesson_row_predict(impl_row *row, const char *impl, mem_formula f);
/* Host inputs for prob drawn from seed (tracked, "driver: <name>"); free with lesson_free_slots. */
void lesson_make_inputs(const lesson *L, const void *prob, uint64_t seed, void **t);
void lesson_free_slots(const lesson *L, void **t);
/* Runs implementation impl on the host inputs t and fills res (its row, result copies, labels text). The
 * caller checked the device and the memory limit. The results are freed by lesson_result_free. */
void lesson_run_impl(const lesson *L, const void *prob, int impl, void *const *t, lesson_result *res);
void lesson_result_free(const lesson *L, lesson_result *res);
/* The reference's buffers (tracked f64), or all NULL with reference_unfit's reason; free with
 * lesson_free_ref. */
const char *lesson_make_reference(const lesson *L, const void *prob, void *const *t, double **ref);
void lesson_free_ref(const lesson *L, double **ref);
/* max over every LT_OUTPUT and LT_GRAD of max|x - ref| / max|ref| (NAN on any NaN). */
double lesson_max_rel_err(const lesson *L, const void *prob, const lesson_result *res, double *const *ref);

#endif
