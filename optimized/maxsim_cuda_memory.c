/* maxsim_cuda_memory.c - lesson 3's CUDA versions as the host sees them without nvcc: each version's device
 * memory formula and the fit checks that need no device (the dimensions the kernels' int indices and grids
 * take, K for the versions that keep a[i]'s rows in shared memory). A CPU-only build prints and tests them
 * (--predict); the device's own limits are each version's cuda_fit check in kernels/maxsim_vN.cu. */
#include "maxsim_cuda.h"

#include "../kernels/maxsim_math.h"

#include <limits.h>

mem_formula cuda_ms_memory(const ms_dims *d, int recompute, int deterministic, int staged16)
{
    size_t A = size_mul(ms_a_count(d), 4), B = size_mul(ms_b_count(d), 4), O = size_mul(ms_out_count(d), 4);
    size_t G = size_mul(ms_arg_count(d), 4);
    /* cuda-v5: a and b as 16-bit rows of K rounded up to 8 columns, held while each forward kernel runs */
    size_t K8 = (d->K + 7) / 8 * 8,
           S = staged16 ? size_mul(size_add(ms_rows(d), ms_cols(d)), size_mul(K8, 2)) : 0;
    size_t live = size_add(size_add(A, B), size_add(O, recompute ? 0 : G));
    size_t fwd = size_add(live, S);
    size_t bwd = size_add(size_add(live, O), size_add(A, B));      /* + dout, da, db */
    size_t allocs = 7 + (staged16 ? 2 : 0);                         /* a b | out arg (a16 b16) | dout da db */
    /* arg recomputed into a transient buffer */
    if (recompute) {
        bwd = size_add(bwd, G);
        /* the recompute's 16-bit copies */
        fwd = ms_max_size(fwd, size_add(size_add(live, O), size_add(G, S)));
        allocs += staged16 ? 2 : 0;
    }
    if (deterministic) {
        /* buckets: per m, the rows (i, j) sorted by their argmax n, and where each n's bucket starts */
        size_t list = size_mul(ms_arg_count(d), 4), start = size_mul(size_mul(d->M, d->N + 1), 4);
        bwd = size_add(bwd, size_add(list, start));
        allocs += 2;
    }
    mem_formula f = {ms_max_size(bwd, fwd), live, allocs};
    return f;
}

const char *cuda_ms_unfit(const ms_dims *d)
{
    if (d->N > INT32_MAX) return "N above 2^31-1 does not fit the int32 argmax";
    if (size_mul(d->I, d->M) > (size_t)INT32_MAX)
        return "I*M above 2^31-1 blocks does not fit one grid dimension";
    if (ms_rows(d) > (size_t)INT32_MAX) return "I*J above 2^31-1 rows does not fit the int32 bucket lists";
    if (ms_arg_count(d) / MS_SIMPLE_THREADS >= (size_t)INT32_MAX)
        return "I*J*M above 2^31-1 blocks of --deterministic's histogram does not fit one grid dimension";
    if (ms_cols(d) > (size_t)INT32_MAX)
        return "M*N above 2^31-1 rows of b does not fit int row indices (--deterministic: one block per (m, "
               "n))";
    return NULL;
}

const char *cuda_ms4_unfit(const ms_dims *d)
{
    const char *why = cuda_ms_unfit(d);
    if (why) return why;
    if (d->K > 256)
        return "K above 256: cuda-v4 keeps a[i]'s 64 rows of K floats in shared memory beside the pipeline "
               "(cuda-v3 runs any K)";
    return NULL;
}
