/* lesson_output.h - what a lesson writes besides its table: the .npy dumps and the allocation timeline, each
 * file through lessons/runner/output_file.h (a temporary renamed over the path when the run's outputs are
 * complete). */
#ifndef LESSONS_LESSON_OUTPUT_H
#define LESSONS_LESSON_OUTPUT_H

#include <stdint.h>
#include <stdio.h>

#include "lesson.h"

/* What meta.json records besides the lesson's own names. */
typedef struct {
    uint64_t seed;
    const char *size;          /* preset name, or "custom" */
    const long long *dims;     /* in the order of lesson.dim_names */
    const long long *opts;     /* in the order of lesson.opts */
} lesson_dump_meta;

/* --dump DIR: input.<name>.npy for every input and upstream gradient, <impl>.<name>.npy for every output and
 * gradient of each implementation that ran, loadable into PyTorch's functions as they are: bf16 tensors as
 * float32 values (exact: every bf16 is a float32), int32 as int64 (cross_entropy's target), a scalar tensor
 * (lesson_tensor.scalar: lesson 5's loss and dloss) with shape (). DIR/meta.json records the program and
 * lesson, LESSON_VERSION and the build's git describe, size, dims, options, seed and the implementations
 * written. 0 on success; -1 after one message naming the file that failed (the dump stops there). */
int lesson_dump(const lesson *L, const void *prob, const char *dir, void *const *inputs,
                const lesson_result *res, int n, const lesson_dump_meta *meta);

/* After the dump's files were published: DIR may hold an earlier run's files. Those this run wrote were
 * replaced; every other input.<x>.npy and <impl>.<x>.npy of this lesson's implementations (and the "cuda"
 * alias) is removed, so DIR holds one run; other files are left alone. Prints to report what was written,
 * replaced and removed; -1 (and a message) when a stale file could not be removed. */
int lesson_dump_report(const lesson *L, const char *dir, FILE *report);

/* --timeline FILE: one CSV row per tracked allocation, free or relabel during each implementation's run:
 *   impl,seq,event,domain,label,bytes,live_bytes
 * event is alloc, free, relabel or mark (the session marks "forward done", where backward begins); a
 * relabel's label is "<old label> -> <new label>" (the buffer's bytes move from one to the other);
 * live_bytes is the domain's live total after the event, counted from the run's start (the driver's own
 * buffers, "driver: ..." labels, are neither rows nor in it); seq counts events within the run. The plot
 * scripts stack it by label. Open fails with one message (and -1) if the file cannot be written; begin/end
 * bracket one implementation (no-ops when no timeline is open). */
int lesson_timeline_open(const char *path);
void lesson_timeline_begin(const char *program, const char *impl);
void lesson_timeline_mark(const char *what);
void lesson_timeline_end(void);
/* keep: -1 (and one message) when the file could not be written to the end; 0: the run's outputs are being
 * discarded, nothing is checked or said (output_discard removes the file). */
int lesson_timeline_close(int keep);

#endif
