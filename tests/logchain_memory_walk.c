/* logchain_memory_walk.c - naive's memory, walked tensor by tensor (see logchain_memory_walk.h).
 * Q is one (c,c) float32 matrix per chain, (n,t,c,c); a level with m matrices makes m/2 pair products
 * ("pairs"); PQ, Pv, Pi are those pairs' (c,c) f32 matrices, (c,) f32 vectors and (c,) int64 vectors. */
#include "logchain_memory_walk.h"

#include <stdint.h>

#define LC_MAX_LEVELS 64


typedef struct {
    size_t live, peak;
    int saturated;
} walk;

static void grow(walk *w, size_t bytes)
{
    if (bytes == SIZE_MAX || w->live > SIZE_MAX - bytes) w->saturated = 1;
    if (w->saturated) return;
    w->live += bytes;
    if (w->live > w->peak) w->peak = w->live;
}

static void shrink(walk *w, size_t bytes)
{
    if (!w->saturated) w->live -= bytes;
}

lc_memory naive_lc_memory_walk(const lc_dims *d)
{
    const size_t F = sizeof(float), I = sizeof(int64_t);
    size_t N = lc_rows(d), c = d->c, V1 = d->v - 1;
    size_t Q = size_mul(F, size_mul(N, size_mul(c, c))); /* one (n,t,c,c) f32 matrix per chain */
    size_t vecF = size_mul(F, size_mul(N, c)), vecI = size_mul(I, size_mul(N, c)); /* (n,t,c) f32 / int64 */
    size_t xb = size_mul(F, lc_x_count(d)), bb = size_mul(F, lc_bulk_count(d)), pb = size_mul(F, lc_p0_count(d));
    size_t ob = size_mul(F, lc_out_count(d));
    walk w = {0, 0, 0};

    /* ---- forward ---- */
    grow(&w, xb);
    grow(&w, bb);
    grow(&w, pb);                       /* the inputs */
    grow(&w, bb);                       /* log(bulk) */
    grow(&w, size_mul(V1, Q));          /* middle */
    shrink(&w, bb);
    size_t m = V1;
    while (m > 1) {
        size_t pairs = m / 2, carry = m % 2;
        size_t PQ = size_mul(pairs, Q), Pv = size_mul(pairs, vecF), Pi = size_mul(pairs, vecI);
        grow(&w, Pv), grow(&w, Pi), grow(&w, Pv), grow(&w, Pi);   /* b1, idx1, b2, idx2 */
        grow(&w, PQ), grow(&w, PQ), shrink(&w, PQ), grow(&w, PQ); /* d1, e1, -d1, s1 */
        grow(&w, PQ), grow(&w, PQ), shrink(&w, PQ), grow(&w, PQ); /* d2, e2, -d2, s2 */
        grow(&w, PQ), grow(&w, PQ), grow(&w, PQ), grow(&w, PQ);   /* mul, b, log(mul), result */
        shrink(&w, Pv), shrink(&w, Pv), shrink(&w, PQ), shrink(&w, PQ); /* b1, b2, b, log(mul) */
        if (carry) grow(&w, size_mul(pairs + 1, Q)), shrink(&w, PQ);  /* cat, -result */
        shrink(&w, size_mul(m, Q));                               /* the old stack */
        m = pairs + carry;
    }
    grow(&w, Q), shrink(&w, Q);                 /* f, -last stack */
    grow(&w, vecF), grow(&w, pb), grow(&w, vecF), shrink(&w, pb); /* g, log(p0), h, -log(p0) */
    grow(&w, ob);                               /* out */
    lc_memory r = {0, 0, 0};
    r.forward_live = w.live;

    /* ---- backward ---- */
    grow(&w, ob);                               /* dout */
    grow(&w, vecF), shrink(&w, vecF);           /* grad h, -h */
    grow(&w, pb), grow(&w, pb), shrink(&w, pb); /* grad log(p0), dp0, -grad log(p0) */
    grow(&w, Q), shrink(&w, vecF), shrink(&w, Q), shrink(&w, vecF); /* grad f, -grad h, -f, -g */
    grow(&w, xb);                               /* dx */
    /* levels in reverse: the sizes of level l depend on m_l, recomputed from V1 */
    size_t ms[LC_MAX_LEVELS];
    int L = 0;
    for (m = V1; m > 1; m = m / 2 + m % 2) ms[L++] = m;
    for (int l = L - 1; l >= 0; l--) {
        m = ms[l];
        size_t pairs = m / 2, carry = m % 2;
        size_t PQ = size_mul(pairs, Q), Pv = size_mul(pairs, vecF), Pi = size_mul(pairs, vecI);
        grow(&w, Pv), grow(&w, Pv);             /* gb1, gb2 */
        grow(&w, PQ), shrink(&w, PQ);           /* gmul, -mul */
        grow(&w, PQ), grow(&w, PQ);             /* gs1, gs2 */
        shrink(&w, PQ), shrink(&w, PQ), shrink(&w, PQ); /* -gmul, -s1, -s2 */
        for (int q = 0; q < 2; q++) {
            grow(&w, PQ), shrink(&w, PQ);       /* ge, -gs */
            grow(&w, PQ), shrink(&w, PQ), shrink(&w, PQ); /* gd, -ge, -e */
        }
        grow(&w, size_mul(m, Q));               /* G_out */
        shrink(&w, PQ), shrink(&w, PQ), shrink(&w, Pv), shrink(&w, Pv); /* gd1, gd2, gb1, gb2 */
        shrink(&w, Pi), shrink(&w, Pi);         /* idx1, idx2 */
        shrink(&w, size_mul(pairs + carry, Q));     /* G_in */
    }
    grow(&w, bb), shrink(&w, size_mul(V1, Q));  /* grad log(bulk), -grad middle */
    grow(&w, bb), shrink(&w, bb);               /* dbulk, -grad log(bulk) */
    r.peak = w.peak;
    if (w.saturated) r.peak = r.forward_live = SIZE_MAX;
    return r;
}
