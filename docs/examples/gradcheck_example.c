/* gradcheck_example.c - hold YOUR forward/backward to a central-difference check, the way the lessons' tests do.
 *
 *     make build/gradcheck_example && ./build/gradcheck_example           # passes
 *     ./build/gradcheck_example --break                                   # a planted backward bug: fails
 *
 * Copy this file, replace my_forward/my_backward by your layer, keep check_param. The layer here is
 *     out (B, N) = tanh(x (B, K) . W (K, N)),   loss = sum(out * dout)   (dout: a fixed random upstream gradient)
 * so dL/dW = x^T (dout * (1 - out^2)) and dL/dx = (dout * (1 - out^2)) W^T. --break forgets the (1 - out^2).
 *
 * The check (tests/gradcheck.h): for each element p_i, numeric_i = (L(p + h e_i) - L(p - h e_i)) / (p_i+ - p_i-),
 * with the loss accumulated in double; element i passes when |analytic_i - numeric_i| <= atol + rtol |numeric_i|.
 * Why these tolerances (the lessons derive theirs the same way, in each test file's header):
 *   truncation: the central difference errs by h^2/6 |L'''|; tanh''' is at most 2 and L''' sums at most
 *     K |x|^3 |dout| such terms per element, so with h = 1e-2, |x|,|dout| <= 1 and K = 8: <= 1e-4/6 * 2 * 8 = 2.7e-4;
 *   rounding: each out is float (relative error ~ K * 2^-24 = 4.8e-7), so L(p +- h) errs by <= sum|out dout| *
 *     4.8e-7 <= B N * 4.8e-7 = 1.4e-5 here (B N = 30), divided by 2h = 0.02: 7.2e-4 at worst.
 *   So atol = 2e-3 (the sum of both bounds, 9.9e-4, doubled) and rtol = 1e-2. Measured: worst 3e-5. A real bug
 *   is off by O(|gradient|): --break is off by up to 1.8, on 85 of the 88 elements.
 */
#include "rng.h"
#include "../../tests/gradcheck.h" /* the checker the lessons' tests use */

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { B = 6, K = 8, N = 5 };

typedef struct {
    float x[B * K], W[K * N], dout[B * N], out[B * N];
    int broken;
} layer;

/* out (B, N) = tanh(x (B, K) . W (K, N)) */
static void my_forward(layer *l)
{
    for (int b = 0; b < B; b++)
        for (int n = 0; n < N; n++) {
            float s = 0.0f;
            for (int k = 0; k < K; k++) s += l->x[b * K + k] * l->W[k * N + n];
            l->out[b * N + n] = tanhf(s);
        }
}

/* dx (B, K), dW (K, N) from dout (B, N) and the saved out (B, N) */
static void my_backward(const layer *l, float *dx, float *dW)
{
    float g[B * N]; /* dL/d(x.W) = dout * tanh'(.) = dout * (1 - out^2) */
    for (int i = 0; i < B * N; i++) g[i] = l->dout[i] * (l->broken ? 1.0f : 1.0f - l->out[i] * l->out[i]);
    for (int b = 0; b < B; b++)
        for (int k = 0; k < K; k++) {
            float s = 0.0f;
            for (int n = 0; n < N; n++) s += g[b * N + n] * l->W[k * N + n];
            dx[b * K + k] = s;
        }
    for (int k = 0; k < K; k++)
        for (int n = 0; n < N; n++) {
            float s = 0.0f;
            for (int b = 0; b < B; b++) s += l->x[b * K + k] * g[b * N + n];
            dW[k * N + n] = s;
        }
}

/* The scalar the check differentiates: sum(out * dout), in double, after a fresh forward. */
static double loss_of(void *ctx)
{
    layer *l = ctx;
    my_forward(l);
    double s = 0.0;
    for (int i = 0; i < B * N; i++) s += (double)l->out[i] * l->dout[i];
    return s;
}

static int check_param(const char *name, layer *l, float *param, const float *analytic, size_t n)
{
    const double h = 1e-2, atol = 2e-3, rtol = 1e-2;
    gradcheck_result r = gradcheck(loss_of, l, param, DT_F32, analytic, DT_F32, n, 1, h, atol, rtol);
    printf("%-3s %zu elements checked, %zu outside atol %g + rtol %g*|numeric|; worst element %zu: analytic "
           "(your backward) %.6g, numeric (central difference) %.6g, |difference| %.3g\n", name, r.checked,
           r.failed, atol, rtol, r.worst, r.worst_analytic, r.worst_numeric, r.max_abs_err);
    return r.failed == 0;
}

int main(int argc, char **argv)
{
    static layer l;
    l.broken = argc > 1 && !strcmp(argv[1], "--break");
    if (argc > 1 && !l.broken) {
        fprintf(stderr, "usage: %s [--break]\n", argv[0]);
        return 2;
    }
    rng r;
    rng_seed(&r, 7); /* fresh random values in [-1, 1), never zeros */
    rng_fill_uniform_f32(&r, l.x, B * K, -1.0f, 1.0f);
    rng_fill_uniform_f32(&r, l.W, K * N, -1.0f, 1.0f);
    rng_fill_uniform_f32(&r, l.dout, B * N, -1.0f, 1.0f);

    float dx[B * K], dW[K * N];
    my_forward(&l);
    my_backward(&l, dx, dW);
    int ok = check_param("dW", &l, l.W, dW, K * N);
    ok &= check_param("dx", &l, l.x, dx, B * K);
    printf("%s\n", ok ? "gradient check passed" : "gradient check FAILED: your backward disagrees with the "
                                                  "central difference of your forward");
    return ok ? 0 : 1;
}
