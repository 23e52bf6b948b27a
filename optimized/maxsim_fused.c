/* maxsim_fused.c - MaxSim on the CPU with the max over n fused into tiled GEMMs (see kernels/maxsim.h).
 *
 * Layouts: a is [I*J, K] (row r = i*J + j), b is [M*N, K] (row c = m*N + n), arg is [I*J, M].
 * A tile is rows r0 .. r0+nr of a against the b rows of nm consecutive m's; when N is larger than a tile
 * holds (MS_CPU_COLS), one m at a time in chunks of n. The tile's scores live in the scratch block only until
 * they have been folded into the running max; then the next chunk overwrites them.
 */
#include "../kernels/maxsim.h"

#include "arena.h"
#include "gemm_cpu.h"
#include "timer.h"
#include "track.h"

#include <limits.h>
#include <string.h>

#define L_ARG "arg [I,J,M] int32 (saved for backward)"
#define L_SCRATCH "scratch: scores tile + running max/argmax"

static size_t min2(size_t x, size_t y) { return x < y ? x : y; }

/* Tile shape for this problem: rows of a, n per chunk, m per block (tm > 1 only when a chunk is all of N). */
typedef struct {
    size_t rows, tn, tm;
} tile_shape;

static tile_shape tile_of(const ms_dims *d)
{
    tile_shape t;
    t.rows = min2(MS_CPU_ROWS, ms_rows(d));
    t.tn = min2(d->N, MS_CPU_COLS);
    t.tm = min2(d->M, ms_max_size(1, MS_CPU_COLS / t.tn));
    return t;
}

typedef struct {
    float *s;      /* [rows, tm*tn] scores of the tile */
    float *best;   /* [rows, tm]   running max over n */
    int32_t *barg; /* [rows, tm]   running argmax over n */
} scratch;

/* One carving serves the formula (planning arena) and the run (real arena): they cannot disagree. */
static void scratch_carve(arena *ar, const ms_dims *d, scratch *s)
{
    tile_shape t = tile_of(d);
    size_t cols = t.tm * t.tn;
    s->s = arena_take(ar, t.rows * cols, DT_F32, "scores tile");
    s->best = arena_take(ar, t.rows * t.tm, DT_F32, "running max");
    s->barg = arena_take(ar, t.rows * t.tm, DT_I32, "running argmax");
}

size_t cpu_ms_scratch_bytes(const ms_dims *d)
{
    arena ar;
    scratch s;
    return ARENA_BYTES(ar, scratch_carve(&ar, d, &s));
}

static void *scratch_alloc(const ms_dims *d, scratch *s)
{
    size_t bytes = cpu_ms_scratch_bytes(d);
    void *base = host_alloc(bytes, L_SCRATCH);
    arena ar;
    arena_init(&ar, base, bytes);
    scratch_carve(&ar, d, s);
    return base;
}

/* scores tile [nr, nm*nn] = a rows [r0, r0+nr) . b rows of m in [m0, m0+nm), n in [n0, n0+nn), then folded
 * into best/barg [nr, nm]. The first chunk (n0 == 0) initialises; later ones merge through ms_better. */
static void tile_chunk(const ms_dims *d, const float *a, const float *b, size_t r0, size_t nr, size_t m0,
                       size_t nm, size_t n0, size_t nn, const scratch *sc)
{
    size_t K = d->K, cols = nm * nn;
    /* s [nr, cols] = a rows [nr, K; ld K] . b rows [cols, K; ld K]^T. The b rows (m, n) for m in [m0, m0+nm),
     * n in [n0, n0+nn) are contiguous: nm > 1 only when a chunk is all of N. */
    sgemm_cpu(0, 1, nr, cols, K, 1.0f, a + r0 * K, K, b + (m0 * d->N + n0) * K, K, 0.0f, sc->s, cols);
    for (size_t rr = 0; rr < nr; rr++)
        for (size_t mm = 0; mm < nm; mm++) {
            const float *s = sc->s + rr * cols + mm * nn; /* scores[r0+rr, m0+mm, n0 .. n0+nn) */
            float *bv = sc->best + rr * nm + mm;
            int32_t *bn = sc->barg + rr * nm + mm;
            size_t n = 0;
            if (n0 == 0) {
                *bv = s[0];
                *bn = 0;
                n = 1;
            }
            for (; n < nn; n++)
                if (ms_better_f(s[n], (int)(n0 + n), *bv, *bn)) {
                    *bv = s[n];
                    *bn = (int32_t)(n0 + n);
                }
        }
}

/* Running max and argmax over all n for rows [r0, r0+nr) x m in [m0, m0+nm). */
static void tile_argmax(const ms_dims *d, const float *a, const float *b, size_t r0, size_t nr, size_t m0,
                        size_t nm, const scratch *sc)
{
    size_t tn = tile_of(d).tn;
    for (size_t n0 = 0; n0 < d->N; n0 += tn) tile_chunk(d, a, b, r0, nr, m0, nm, n0, min2(tn, d->N - n0), sc);
}

/* Forward epilogue of a tile: out[i, m] += max (j ascending across tiles), arg saved when kept. */
static void tile_store(const ms_dims *d, size_t r0, size_t nr, size_t m0, size_t nm, const scratch *sc,
                       float *out, int32_t *arg)
{
    size_t J = d->J, M = d->M;
    for (size_t rr = 0; rr < nr; rr++)
        for (size_t mm = 0; mm < nm; mm++) {
            size_t r = r0 + rr, m = m0 + mm;
            out[(r / J) * M + m] += sc->best[rr * nm + mm];
            if (arg) arg[r * M + m] = sc->barg[rr * nm + mm];
        }
}

float *cpu_ms_forward(const ms_dims *d, const float *a, const float *b, int recompute, cpu_ms_saved *saved)
{
    size_t R = ms_rows(d), M = d->M;
    tile_shape t = tile_of(d);
    float *out = host_alloc_array(ms_out_count(d), DT_F32, MS_LABEL_OUT);
    memset(out, 0, ms_out_count(d) * sizeof(float));
    int32_t *arg = recompute ? NULL : host_alloc_array(ms_arg_count(d), DT_I32, L_ARG);
    scratch sc;
    void *block = scratch_alloc(d, &sc);
    for (size_t r0 = 0; r0 < R; r0 += t.rows)
        for (size_t m0 = 0; m0 < M; m0 += t.tm) {
            size_t nr = min2(t.rows, R - r0), nm = min2(t.tm, M - m0);
            tile_argmax(d, a, b, r0, nr, m0, nm, &sc);
            tile_store(d, r0, nr, m0, nm, &sc, out, arg);
        }
    host_free(block);
    saved->arg = arg;
    saved->recompute = recompute;
    return out;
}

/* Backward of a tile: args[rr * ld + mm] is the argmax of row r0+rr at m0+mm. Both modes call this with the
 * same tiles in the same order, so every da and db element sums the same terms in the same order. */
static void tile_grads(const ms_dims *d, const float *a, const float *b, const float *dout, size_t r0,
                       size_t nr, size_t m0, size_t nm, const int32_t *args, size_t ld, float *ga, float *gb)
{
    size_t J = d->J, M = d->M, N = d->N, K = d->K;
    for (size_t rr = 0; rr < nr; rr++)
        for (size_t mm = 0; mm < nm; mm++) {
            size_t r = r0 + rr, m = m0 + mm, n = (size_t)args[rr * ld + mm];
            float w = dout[(r / J) * M + m];
            ms_axpy(w, b + (m * N + n) * K, ga + r * K, (long long)K); /* da[i, j] += dout[i, m] b[m, n] */
            ms_axpy(w, a + r * K, gb + (m * N + n) * K, (long long)K); /* db[m, n] += dout[i, m] a[i, j] */
        }
}

static void grads_walk(const ms_dims *d, const float *a, const float *b, const float *dout,
                       const int32_t *arg, float *ga, float *gb)
{
    size_t R = ms_rows(d), M = d->M;
    tile_shape t = tile_of(d);
    scratch sc;
    void *block = arg ? NULL : scratch_alloc(d, &sc); /* recompute: the forward's tiles, again */
    for (size_t r0 = 0; r0 < R; r0 += t.rows)
        for (size_t m0 = 0; m0 < M; m0 += t.tm) {
            size_t nr = min2(t.rows, R - r0), nm = min2(t.tm, M - m0);
            if (arg) {
                tile_grads(d, a, b, dout, r0, nr, m0, nm, arg + r0 * M + m0, M, ga, gb);
            } else {
                tile_argmax(d, a, b, r0, nr, m0, nm, &sc);
                tile_grads(d, a, b, dout, r0, nr, m0, nm, sc.barg, nm, ga, gb);
            }
        }
    host_free(block);
}

void cpu_ms_backward(const ms_dims *d, const float *a, const float *b, cpu_ms_saved *saved, const float *dout,
                     float **da, float **db)
{
    float *ga = host_alloc_array(ms_a_count(d), DT_F32, MS_LABEL_DA);
    float *gb = host_alloc_array(ms_b_count(d), DT_F32, MS_LABEL_DB);
    memset(ga, 0, ms_a_count(d) * sizeof(float));
    memset(gb, 0, ms_b_count(d) * sizeof(float));
    grads_walk(d, a, b, dout, saved->arg, ga, gb);
    host_free(saved->arg);
    saved->arg = NULL;
    *da = ga;
    *db = gb;
}

mem_formula cpu_ms_memory(const ms_dims *d, int recompute)
{
    size_t A = size_mul(ms_a_count(d), 4), B = size_mul(ms_b_count(d), 4), O = size_mul(ms_out_count(d), 4);
    size_t G = recompute ? 0 : size_mul(ms_arg_count(d), 4); /* int32 argmax */
    size_t W = cpu_ms_scratch_bytes(d);
    size_t live = size_add(size_add(A, B), size_add(O, G));
    size_t fwd = size_add(live, W);                                      /* scratch during forward */
    size_t bwd = size_add(size_add(live, O), size_add(A, B));            /* + dout, da, db */
    if (recompute) bwd = size_add(bwd, W);                               /* + the scratch again */
    mem_formula f = {ms_max_size(fwd, bwd), live, 8}; /* a b | out arg|- scratch | dout da db -|scratch */
    return f;
}

double cpu_ms_work(const ms_dims *d, int recompute)
{
    /* forward: every score once; backward: 2 K-length axpys per (i, j, m), plus every score again when
     * recomputing */
    return ms_gemm_fmas(d) * (recompute ? 2.0 : 1.0) + 2.0 * (double)ms_arg_count(d) * (double)d->K;
}
