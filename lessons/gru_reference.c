/* gru_reference.c - float64 forward and backward through time of lesson 4's cell (gru_reference.h). */
#include "gru_reference.h"

#include "../kernels/runtime/track.h"

#include <math.h>
#include <string.h>

enum { R_, U_, N_, ZN, Z_, E_, NSAVE }; /* per step and row, each H wide */

static double sig(double a) { return 1.0 / (1.0 + exp(-a)); }

/* step t forward for row i: h (H) -> hn (H); saves sv (NSAVE*H) */
static void ref_step(const gru_dims *d, const gru_inputs *in, size_t t, size_t i, const double *h, double *hn,
                     double *sv)
{
    size_t H = d->H, X = d->X;
    const float *xt = in->x + (t * d->B + i) * X, *et = in->eps + (t * d->B + i) * H;
    for (size_t j = 0; j < H; j++) {
        double mean = 0, lv = 0;
        for (size_t k = 0; k < H; k++) {
            mean += h[k] * in->W_enc[k * 2 * H + j];
            lv += h[k] * in->W_enc[k * 2 * H + H + j];
        }
        sv[E_ * H + j] = et[j] * exp(0.5 * lv);
        sv[Z_ * H + j] = mean + sv[E_ * H + j];
    }
    for (size_t j = 0; j < H; j++) {
        double a[3] = {0, 0, 0}, b[3] = {0, 0, 0};
        for (size_t g = 0; g < 3; g++) {
            for (size_t k = 0; k < X; k++) a[g] += xt[k] * (double)in->W_ih[k * 3 * H + g * H + j];
            for (size_t k = 0; k < H; k++) b[g] += sv[Z_ * H + k] * in->W_zh[k * 3 * H + g * H + j];
        }
        double r = sig(a[0] + b[0]), u = sig(a[1] + b[1]), n = tanh(a[2] + r * b[2]);
        sv[R_ * H + j] = r, sv[U_ * H + j] = u, sv[N_ * H + j] = n, sv[ZN * H + j] = b[2];
        hn[j] = n + u * (h[j] - n);
    }
}

static void ref_forward(const gru_dims *d, const gru_inputs *in, double *out, double *saved)
{
    size_t B = d->B, H = d->H;
    double *h = host_alloc_array(size_mul(B, H), DT_F64, "reference: h (B,H) f64");
    for (size_t i = 0; i < B * H; i++) h[i] = in->h0[i];
    for (size_t t = 0; t < d->T; t++)
        for (size_t i = 0; i < B; i++) {
            double *hn = out + (t * B + i) * H;
            ref_step(d, in, t, i, h + i * H, hn, saved ? saved + (t * B + i) * NSAVE * H : NULL);
            memcpy(h + i * H, hn, H * sizeof(double));
        }
    host_free(h);
}

typedef struct {
    double *dxp, *dzp, *dpd; /* (3H), (3H), (2H) for one row */
} ref_scratch;

/* Row i of step t backward: dh (H) in: gradient reaching h_t from later steps; out: h_{t-1}'s. */
static void ref_step_backward(const gru_dims *d, const gru_inputs *in, size_t t, size_t i, const double *hprev,
                              const double *sv, double *dh, ref_scratch *s, gru_ref_outputs *o)
{
    size_t H = d->H, X = d->X;
    const float *xt = in->x + (t * d->B + i) * X, *dout = in->dout + (t * d->B + i) * H;
    for (size_t j = 0; j < H; j++) {
        double g = dh[j] + dout[j], r = sv[R_ * H + j], u = sv[U_ * H + j], n = sv[N_ * H + j];
        double dan = g * (1 - u) * (1 - n * n), dau = g * (hprev[j] - n) * u * (1 - u);
        double dar = dan * sv[ZN * H + j] * r * (1 - r);
        s->dxp[j] = s->dzp[j] = dar;
        s->dxp[H + j] = s->dzp[H + j] = dau;
        s->dxp[2 * H + j] = dan;
        s->dzp[2 * H + j] = dan * r;
        dh[j] = g * u;
    }
    for (size_t k = 0; k < X; k++) {
        double acc = 0;
        for (size_t c = 0; c < 3 * H; c++) {
            o->dW_ih[k * 3 * H + c] += xt[k] * s->dxp[c];
            acc += s->dxp[c] * in->W_ih[k * 3 * H + c];
        }
        o->dx[(t * d->B + i) * X + k] = acc;
    }
    for (size_t k = 0; k < H; k++) {
        double dz = 0;
        for (size_t c = 0; c < 3 * H; c++) {
            o->dW_zh[k * 3 * H + c] += sv[Z_ * H + k] * s->dzp[c];
            dz += s->dzp[c] * in->W_zh[k * 3 * H + c];
        }
        s->dpd[k] = dz;                           /* dmean = dz */
        s->dpd[H + k] = 0.5 * dz * sv[E_ * H + k]; /* dlv = dz e / 2 */
    }
    for (size_t k = 0; k < H; k++)
        for (size_t c = 0; c < 2 * H; c++) {
            o->dW_enc[k * 2 * H + c] += hprev[k] * s->dpd[c];
            dh[k] += in->W_enc[k * 2 * H + c] * s->dpd[c];
        }
}

static void ref_backward(const gru_dims *d, const gru_inputs *in, const double *saved, gru_ref_outputs *o)
{
    size_t B = d->B, H = d->H, X = d->X;
    memset(o->dW_enc, 0, gru_wenc_count(d) * sizeof(double));
    memset(o->dW_ih, 0, gru_wih_count(d) * sizeof(double));
    memset(o->dW_zh, 0, gru_wzh_count(d) * sizeof(double));
    memset(o->dh0, 0, B * H * sizeof(double));
    double *buf = host_alloc_array(8 * H + H, DT_F64, "reference: one row's step gradients f64");
    double *h0 = host_alloc_array(B * H, DT_F64, "reference: h0 in f64");
    for (size_t i = 0; i < B * H; i++) h0[i] = in->h0[i];
    ref_scratch s = {buf, buf + 3 * H, buf + 6 * H};
    for (size_t t = d->T; t-- > 0;)
        for (size_t i = 0; i < B; i++) {
            const double *hp = t ? o->out + ((t - 1) * B + i) * H : h0 + i * H;
            ref_step_backward(d, in, t, i, hp, saved + (t * B + i) * NSAVE * H, o->dh0 + i * H, &s, o);
        }
    (void)X;
    host_free(buf);
    host_free(h0);
}

void gru_reference(const gru_dims *d, const gru_inputs *in, gru_ref_outputs *o)
{
    double *saved = host_alloc_array(size_mul(gru_seq_count(d), NSAVE), DT_F64, "reference: saved (T,B,6H) f64");
    ref_forward(d, in, o->out, saved);
    if (o->dx) ref_backward(d, in, saved, o);
    host_free(saved);
}

double gru_reference_loss(const gru_dims *d, const gru_inputs *in)
{
    double *out = host_alloc_array(gru_seq_count(d), DT_F64, "reference: out f64");
    gru_ref_outputs o = {out, NULL, NULL, NULL, NULL, NULL};
    gru_reference(d, in, &o);
    double L = 0;
    for (size_t i = 0; i < gru_seq_count(d); i++) L += out[i] * in->dout[i];
    host_free(out);
    return L;
}
