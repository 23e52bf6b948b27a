/* snapshot.h - --snapshot FILE: each run's tracked allocations and frees as a PyTorch memory snapshot, the
 * pickle torch.cuda.memory._dump_snapshot writes, so PyTorch's memory viewer (pytorch.org/memory_viz, or
 * torch.cuda._memory_viz.trace_plot) draws the lesson's runs exactly as it draws a learner's own model.
 *
 * The file is a dict {'segments': [...], 'device_traces': [host trace, device trace]}; device 0 in the viewer
 * is the host domain, device 1 the GPU's. Each trace entry is {'action', 'addr', 'size', 'stream', 'frames'}
 * with action 'alloc', 'free_requested' then 'free_completed' (PyTorch's pair for one free), 'segment_alloc'
 * (a segment reserved, just before the allocation that needed it) or 'segment_free'; frames are the
 * allocating call ({'name': the tracker's label, 'filename': its source file, 'line'}) then the run ({'name':
 * "<program> --impl <impl>", 'filename' and 'line': where the driver began it}). Every implementation that
 * runs is appended to the same trace, one after the other.
 * Addresses are the viewer's, not the process's: each block is placed where PyTorch's CUDA caching allocator
 * would place it (snapshot_allocator.h: 512-byte rounding, 2 MiB small-pool and 20 MiB large-pool segments,
 * best fit, splitting, freed blocks reused), and each implementation starts from an empty cache
 * (torch.cuda.empty_cache() before it: segment_free of every segment the previous one left empty). 'segments'
 * is the cache at the end, as torch.cuda.memory._snapshot() lists it: each block 'active_allocated' (its
 * requested_size, its frames) or 'inactive', allocated_size / requested_size their sums. Relabels change no
 * bytes and are not written; the "driver: ..." copies are left out, as in --timeline.
 *
 * open fails with one message (and -1) if the file cannot be written (lessons/runner/output_file.h: a
 * temporary, renamed over the path when the run's outputs are complete); begin/end bracket one implementation
 * and chain to any other observer (--timeline); close writes the pickle (protocol 2: dict, list, str and int
 * opcodes, all of which the viewer's JavaScript unpickler reads). All are no-ops when no snapshot is open. */
#ifndef LESSONS_SNAPSHOT_H
#define LESSONS_SNAPSHOT_H

int snapshot_open(const char *program, const char *path);
/* snapshot_begin(impl): the run's frame is the line that calls it */
#define snapshot_begin(impl) snapshot_begin_at((impl), __FILE__, __LINE__)
void snapshot_begin_at(const char *impl, const char *file, int line);
void snapshot_end(void);
/* keep: writes the pickle; 0, or -1 after printing why the file could not be written. 0: the run's outputs
 * are being discarded, nothing is written or said (output_discard removes the file). Either way the record is
 * freed. */
int snapshot_close(int keep);

#endif
