/* gru_reference.c - float64 forward and backward through time of lesson 4's cell (gru_reference.h).
 *
 * Each step's products over all B rows go through cblas_dgemm (blas_reference.h): the projections h W_enc,
 * x_t W_ih and z W_zh forward; the weight gradients (a sum over B inside the GEMM) and the input gradients
 * backward. The gates and the reparameterisation are plain double loops, one element at a time.
 */
#include "gru_reference.h"

#include "track.h"
#include "blas_reference.h"

#include <math.h>
#include <string.h>

enum { R_, U_, N_, ZN, Z_, E_, NSAVE }; /* per step and row, each H wide: saved row stride NSAVE*H */

static double sig(double a) { return 1.0 / (1.0 + exp(-a)); }

/* The inputs in double and one step's products, all tracked. */
typedef struct {
    const gru_dims *d;
    double *x;                   /* (T, B, X) */
    double *W_enc, *W_ih, *W_zh; /* (H, 2H), (X, 3H), (H, 3H) */
    double *pd;                  /* (B, 2H) h W_enc; backward: dpd */
    double *xp, *zp;             /* (B, 3H) x_t W_ih, z W_zh; backward: dxp, dzp */
    double *dz;                  /* (B, H) backward: dzp W_zh^T */
} gru_ref_ws;

static void ws_open(gru_ref_ws *w, const gru_dims *d, const gru_inputs *in)
{
    size_t B = d->B, H = d->H;
    w->d = d;
    w->x = ref_f64_copy(in->x, gru_x_count(d), 0, "reference: x (T,B,X) f64");
    w->W_enc = ref_f64_copy(in->W_enc, gru_wenc_count(d), 0, "reference: W_enc (H,2H) f64");
    w->W_ih = ref_f64_copy(in->W_ih, gru_wih_count(d), 0, "reference: W_ih (X,3H) f64");
    w->W_zh = ref_f64_copy(in->W_zh, gru_wzh_count(d), 0, "reference: W_zh (H,3H) f64");
    w->pd = host_alloc_array(size_mul(B, 9 * H), DT_F64, "reference: one step's products (B,9H) f64");
    w->xp = w->pd + 2 * B * H;
    w->zp = w->xp + 3 * B * H;
    w->dz = w->zp + 3 * B * H;
}

static void ws_close(gru_ref_ws *w)
{
    host_free(w->x);
    host_free(w->W_enc);
    host_free(w->W_ih);
    host_free(w->W_zh);
    host_free(w->pd);
}

/* z = mean + eps_t exp(lv / 2) per row, saved beside e; sv is step t's saved rows (B, NSAVE*H) */
static void sample_latent(const gru_ref_ws *w, const float *eps_t, double *sv)
{
    size_t B = w->d->B, H = w->d->H;
    for (size_t i = 0; i < B; i++)
        for (size_t j = 0; j < H; j++) {
            double e = eps_t[i * H + j] * exp(0.5 * w->pd[i * 2 * H + H + j]);
            sv[i * NSAVE * H + E_ * H + j] = e;
            sv[i * NSAVE * H + Z_ * H + j] = w->pd[i * 2 * H + j] + e;
        }
}

/* the gates from xp, zp; h (B, H) -> hn (B, H); r, u, n and zn saved */
static void gates(const gru_ref_ws *w, const double *h, double *hn, double *sv)
{
    size_t B = w->d->B, H = w->d->H;
    for (size_t i = 0; i < B; i++)
        for (size_t j = 0; j < H; j++) {
            const double *a = w->xp + i * 3 * H + j, *b = w->zp + i * 3 * H + j;
            double r = sig(a[0] + b[0]), u = sig(a[H] + b[H]), n = tanh(a[2 * H] + r * b[2 * H]);
            double *s = sv + i * NSAVE * H + j;
            s[R_ * H] = r, s[U_ * H] = u, s[N_ * H] = n, s[ZN * H] = b[2 * H];
            hn[i * H + j] = n + u * (h[i * H + j] - n);
        }
}

/* step t: h (B, H) -> hn (B, H), saving sv (B, NSAVE*H) */
static void ref_step(const gru_ref_ws *w, const gru_inputs *in, size_t t, const double *h, double *hn,
                     double *sv)
{
    size_t B = w->d->B, H = w->d->H, X = w->d->X;
    ref_dgemm(REF_N, REF_N, B, 2 * H, H, h, H, w->W_enc, 2 * H, 0.0, w->pd, 2 * H);        /* pd = h W_enc */
    sample_latent(w, in->eps + t * B * H, sv);
    /* x_t W_ih */
    ref_dgemm(REF_N, REF_N, B, 3 * H, X, w->x + t * B * X, X, w->W_ih, 3 * H, 0.0, w->xp, 3 * H);
    /* z sits in the saved rows, row stride NSAVE*H */
    ref_dgemm(REF_N, REF_N, B, 3 * H, H, sv + Z_ * H, NSAVE * H, w->W_zh, 3 * H, 0.0, w->zp, 3 * H);
    gates(w, h, hn, sv);
}

static void ref_forward(const gru_ref_ws *w, const gru_inputs *in, double *out, double *saved)
{
    size_t B = w->d->B, H = w->d->H;
    double *h0 = ref_f64_copy(in->h0, size_mul(B, H), 0, "reference: h0 (B,H) f64");
    for (size_t t = 0; t < w->d->T; t++)
        ref_step(w, in, t, t ? out + (t - 1) * B * H : h0, out + t * B * H, saved + t * B * NSAVE * H);
    host_free(h0);
}

/* Through the gates of step t: dxp, dzp (B, 3H) into xp, zp; dh (B, H) becomes the part through u (g u). */
static void gates_backward(gru_ref_ws *w, const double *hprev, const double *sv, const float *dout_t,
                           double *dh)
{
    size_t B = w->d->B, H = w->d->H;
    for (size_t i = 0; i < B; i++)
        for (size_t j = 0; j < H; j++) {
            const double *s = sv + i * NSAVE * H + j;
            double g = dh[i * H + j] + dout_t[i * H + j], r = s[R_ * H], u = s[U_ * H], n = s[N_ * H];
            double dan = g * (1 - u) * (1 - n * n), dau = g * (hprev[i * H + j] - n) * u * (1 - u);
            double dar = dan * s[ZN * H] * r * (1 - r);
            double *dxp = w->xp + i * 3 * H + j, *dzp = w->zp + i * 3 * H + j;
            dxp[0] = dzp[0] = dar;
            dxp[H] = dzp[H] = dau;
            dxp[2 * H] = dan;
            dzp[2 * H] = dan * r;
            dh[i * H + j] = g * u;
        }
}

/* dpd (B, 2H) from dz: dmean = dz, dlv = dz e / 2 */
static void latent_backward(gru_ref_ws *w, const double *sv)
{
    size_t B = w->d->B, H = w->d->H;
    for (size_t i = 0; i < B; i++)
        for (size_t k = 0; k < H; k++) {
            double dz = w->dz[i * H + k];
            w->pd[i * 2 * H + k] = dz;
            w->pd[i * 2 * H + H + k] = 0.5 * dz * sv[i * NSAVE * H + E_ * H + k];
        }
}

/* Step t backward; dh (B, H) in: the gradient reaching h_t from later steps; out: h_{t-1}'s. Each weight
 * gradient += operand^T (K, B) . d (B, cols): the sum over the batch inside the GEMM; operands stored (B,
 * K). */
static void ref_step_backward(gru_ref_ws *w, const gru_inputs *in, size_t t, const double *hprev,
                              const double *sv, double *dh, gru_ref_outputs *o)
{
    size_t B = w->d->B, H = w->d->H, X = w->d->X;
    gates_backward(w, hprev, sv, in->dout + t * B * H, dh);
    ref_dgemm(REF_T, REF_N, X, 3 * H, B, w->x + t * B * X, X, w->xp, 3 * H, 1.0, o->dW_ih, 3 * H);
    ref_dgemm(REF_N, REF_T, B, X, 3 * H, w->xp, 3 * H, w->W_ih, 3 * H, 0.0, o->dx + t * B * X, X);
    ref_dgemm(REF_T, REF_N, H, 3 * H, B, sv + Z_ * H, NSAVE * H, w->zp, 3 * H, 1.0, o->dW_zh, 3 * H);
    ref_dgemm(REF_N, REF_T, B, H, 3 * H, w->zp, 3 * H, w->W_zh, 3 * H, 0.0, w->dz, H);
    latent_backward(w, sv);
    ref_dgemm(REF_T, REF_N, H, 2 * H, B, hprev, H, w->pd, 2 * H, 1.0, o->dW_enc, 2 * H);
    ref_dgemm(REF_N, REF_T, B, H, 2 * H, w->pd, 2 * H, w->W_enc, 2 * H, 1.0, dh, H); /* dh += dpd W_enc^T */
}

static void ref_backward(gru_ref_ws *w, const gru_inputs *in, const double *saved, gru_ref_outputs *o)
{
    const gru_dims *d = w->d;
    size_t B = d->B, H = d->H;
    memset(o->dW_enc, 0, gru_wenc_count(d) * sizeof(double));
    memset(o->dW_ih, 0, gru_wih_count(d) * sizeof(double));
    memset(o->dW_zh, 0, gru_wzh_count(d) * sizeof(double));
    memset(o->dh0, 0, B * H * sizeof(double));
    double *h0 = ref_f64_copy(in->h0, size_mul(B, H), 0, "reference: h0 (B,H) f64");
    for (size_t t = d->T; t-- > 0;) {
        const double *hp = t ? o->out + (t - 1) * B * H : h0;
        ref_step_backward(w, in, t, hp, saved + t * B * NSAVE * H, o->dh0, o);
    }
    host_free(h0);
}

void gru_reference(const gru_dims *d, const gru_inputs *in, gru_ref_outputs *o)
{
    gru_ref_ws w;
    ws_open(&w, d, in);
    double *saved =
        host_alloc_array(size_mul(gru_seq_count(d), NSAVE), DT_F64, "reference: saved (T,B,6H) f64");
    ref_forward(&w, in, o->out, saved);
    if (o->dx) ref_backward(&w, in, saved, o);
    host_free(saved);
    ws_close(&w);
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
