/* logchain_bruteforce.c - enumerate every path of every chain, in double. */
#include "logchain_bruteforce.h"

#include "track.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void lc_bruteforce(const lc_dims *d, const float *x, const float *bulk, const float *p0, const float *dout,
                   lc_ref_result *res)
{
    size_t t = d->t, v = d->v, c = d->c, C2 = c * c, V1 = v - 1, R = lc_rows(d);
    double paths = pow((double)c, (double)v);
    if (paths > 16777216.0) {
        fprintf(stderr, "lc_bruteforce: c^v = %.0f paths is too many (test sizes only)\n", paths);
        abort();
    }
    size_t np = (size_t)paths;
    res->out = host_alloc_array(lc_out_count(d), DT_F64, "bruteforce: out (n,t) f64");
    res->dx = host_alloc_array(lc_x_count(d), DT_F64, "bruteforce: dx (n,t,v,c) f64");
    res->dbulk = host_alloc_array(lc_bulk_count(d), DT_F64, "bruteforce: dbulk (1,t,v-1,c,c) f64");
    res->dp0 = host_alloc_array(lc_p0_count(d), DT_F64, "bruteforce: dp0 (1,t,c) f64");
    double *lw = host_alloc_array(np, DT_F64, "bruteforce: log weight of every path (c^v) f64");
    size_t *path = host_alloc_array(v, DT_I64, "bruteforce: one path (v)"); /* size_t is 8 bytes here */
    for (size_t e = 0; e < lc_x_count(d); e++) res->dx[e] = 0.0;
    for (size_t e = 0; e < lc_bulk_count(d); e++) res->dbulk[e] = 0.0;
    for (size_t e = 0; e < lc_p0_count(d); e++) res->dp0[e] = 0.0;

    for (size_t r = 0; r < R; r++) {
        size_t s = r % t;
        const float *xr = x + r * v * c, *Ps = bulk + s * V1 * C2;
        double mx = -INFINITY;
        for (size_t q = 0; q < np; q++) { /* path q: j_i is digit i of q in base c */
            size_t rest = q;
            for (size_t i = 0; i < v; i++) {
                path[i] = rest % c;
                rest /= c;
            }
            double l = log((double)p0[s * c + path[0]]);
            for (size_t i = 0; i < v; i++) l += xr[i * c + path[i]];
            for (size_t i = 0; i < V1; i++) l += log((double)Ps[i * C2 + path[i] * c + path[i + 1]]);
            lw[q] = l;
            mx = fmax(mx, l);
        }
        double z = 0.0;
        for (size_t q = 0; q < np; q++) z += exp(lw[q] - mx);
        double lz = mx + log(z), g = dout[r];
        res->out[r] = lz;
        for (size_t q = 0; q < np; q++) {
            double post = exp(lw[q] - lz); /* this path's probability */
            size_t rest = q;
            for (size_t i = 0; i < v; i++) {
                path[i] = rest % c;
                rest /= c;
            }
            for (size_t i = 0; i < v; i++) res->dx[r * v * c + i * c + path[i]] += g * post;
            for (size_t i = 0; i < V1; i++) {
                size_t e = (s * V1 + i) * C2 + path[i] * c + path[i + 1];
                res->dbulk[e] += g * post / (double)bulk[e];
            }
            res->dp0[s * c + path[0]] += g * post / (double)p0[s * c + path[0]];
        }
    }
    host_free(lw);
    host_free(path);
}
