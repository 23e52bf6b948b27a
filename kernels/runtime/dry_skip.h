/* dry_skip.h - one line at the top of a long loop's body, for the emulator's dry run (tests/cuda_emu/README.md).
 *
 *   for (int j = first; j < end; j += step) {
 *       EMU_DRY_SKIP(j, first, end, step); // why: this loop runs J times per thread
 *       ...
 *
 * Under nvcc, and in every run that is not a dry run, it does nothing. In the emulator's dry run (EMU_DRY=1),
 * which runs only the boundary blocks of each launch at the forum's or the CLI's largest sizes, it also runs only
 * the boundary iterations of the loop: the first, then (it jumps from the second) the last two. The indices are
 * largest there, so an `int` that wraps at the end of the loop -- or in its last increment -- is still executed,
 * while a loop of 10^9 iterations costs three. Values are meaningless in a dry run anyway (memory reads zeros).
 *
 * Host loops that launch a kernel per step (a chain of v variables, T time steps) take it too: a dry run then
 * launches the kernels of their boundary steps only, whose configurations are the skipped steps' and whose
 * pointer offsets are the smallest and the largest.
 *
 * The jump depends only on (first, end, step): every thread whose loop has the same bounds jumps alike, so a loop
 * with a __syncthreads inside (a block-uniform trip count) keeps its barriers matched; a strided loop
 * (first = threadIdx.x, step = blockDim.x) takes each thread to its own last two iterations.
 */
#ifndef KERNELS_DRY_SKIP_H
#define KERNELS_DRY_SKIP_H

#if defined(CUDA_EMU) && defined(__cplusplus)
namespace emu {
int dry(void); /* tests/cuda_emu/emu_dry.cc: EMU_DRY's mode, 0 outside a dry run */

/* The second iteration of a loop of more than 3 jumps to the last-but-one. step < 0 counts down (end is then
 * the first value not run, e.g. -1). 64-bit arithmetic, so the jump itself never wraps (the loop's own
 * increment still does, where it would on the GPU; a target the variable cannot hold wraps as that increment
 * would have). */
template <class T> inline void dry_skip(T &i, long long first, long long end, long long step)
{
    if (!dry() || step == 0 || (long long)i != first + step) return;
    long long n = (end - first + step - (step > 0 ? 1 : -1)) / step; /* iterations */
    if (n > 3) i = (T)(first + (n - 2) * step);
}
} /* namespace emu */
#define EMU_DRY_SKIP(i, first, end, step) ::emu::dry_skip((i), (first), (end), (step))
#else
#define EMU_DRY_SKIP(i, first, end, step) ((void)0)
#endif

#endif
