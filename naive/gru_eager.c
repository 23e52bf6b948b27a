/* gru_eager.c - lesson 4, naive: one tracked allocation per op result, autograd's saved tensors kept until
 * backward (gru_eager.h lists them). Matrices are row-major; a chunk of a (B,3H) result is a view: a pointer
 * and a row stride (ld = 3H), exactly what torch's chunk returns. */
#include "gru_eager.h"

#include "gemm_cpu.h"
#include "track.h"

#include <math.h>
#include <string.h>

typedef struct {
    const float *p;
    size_t ld; /* row stride in floats */
} view;        /* a (B,H) operand: a whole tensor (ld = H) or a chunk of a wider one */

static view whole(const float *p, size_t H) { return (view){p, H}; }
static view chunk(const float *p, size_t H, size_t k, size_t parts) { return (view){p + k * H, parts * H}; }

static float *ten(size_t count, const char *label) { return host_alloc_array(count, DT_F32, label); }

typedef float (*binop)(float a, float b);
static float op_add(float a, float b) { return a + b; }
static float op_sub(float a, float b) { return a - b; }
static float op_mul(float a, float b) { return a * b; }
static float op_half(float a, float b) { (void)b; return 0.5f * a; }
static float op_exp(float a, float b) { (void)b; return expf(a); }
static float op_neg(float a, float b) { (void)b; return -a; }
static float op_sigmoid(float a, float b) { (void)b; return 1.0f / (1.0f + expf(-a)); }
static float op_tanh(float a, float b) { (void)b; return tanhf(a); }
/* sigmoid's backward from its result */
static float op_dsigmoid(float g, float s) { return g * s * (1.0f - s); }
/* tanh's backward from its result */
static float op_dtanh(float g, float n) { return g * (1.0f - n * n); }

/* One elementwise op on (B,H) operands: a new (B,H) tensor, as every torch op without out= returns. */
static float *ew(const gru_dims *d, binop f, view a, view b, const char *label)
{
    float *o = ten(size_mul(d->B, d->H), label);
    for (size_t i = 0; i < d->B; i++)
        for (size_t j = 0; j < d->H; j++)
            o[i * d->H + j] = f(a.p[i * a.ld + j], b.p ? b.p[i * b.ld + j] : 0.0f);
    return o;
}
static float *ew1(const gru_dims *d, binop f, view a, const char *label)
{
    return ew(d, f, a, (view){0, 0}, label);
}

/* torch.mm: a new (M,N) result of op(A) (M,K) . op(B) (K,N), row-major, compact */
static float *mm(int tA, int tB, size_t M, size_t N, size_t K, const float *A, size_t lda, const float *Bm,
                 size_t ldb, const char *label)
{
    float *C = ten(size_mul(M, N), label);
    sgemm_cpu(tA, tB, M, N, K, 1.0f, A, lda, Bm, ldb, 0.0f, C, N);
    return C;
}

static void free_all(float **p, int n)
{
    for (int i = 0; i < n; i++) {
        host_free(p[i]);
        p[i] = NULL;
    }
}

/* One step of the forum's loop; h (B,H) the previous hidden, x_t (B,X), eps_t (B,H). */
static void forward_step(const gru_dims *d, const float *h, const float *x_t, const float *eps_t,
                         const float *W_enc, const float *W_ih, const float *W_zh, gru_eager_step *s)
{
    size_t B = d->B, H = d->H;
    float *pd = mm(0, 0, B, 2 * H, H, h, H, W_enc, 2 * H, "pd = h W_enc (B,2H) temporary");
    float *a = ew1(d, op_half, chunk(pd, H, 1, 2), "0.5 lv (B,H) temporary");
    s->e1 = ew1(d, op_exp, whole(a, H), "e1 = exp(lv/2) (B,H) saved by exp");
    host_free(a);
    float *b = ew(d, op_mul, whole(eps_t, H), whole(s->e1, H), "eps e1 (B,H) temporary");
    s->z = ew(d, op_add, chunk(pd, H, 0, 2), whole(b, H), "z (B,H) saved by mm(z, W_zh)");
    float *tmp[] = {b, pd};
    free_all(tmp, 2);
    float *xres = mm(0, 0, B, 3 * H, d->X, x_t, d->X, W_ih, 3 * H, "x W_ih (B,3H) temporary");
    s->zres = mm(0, 0, B, 3 * H, H, s->z, H, W_zh, 3 * H, "zres = z W_zh (B,3H) kept: mul saved its zn view");
    float *c1 = ew(d, op_add, chunk(xres, H, 1, 3), chunk(s->zres, H, 1, 3), "xu + zu (B,H) temporary");
    s->u = ew1(d, op_sigmoid, whole(c1, H), "u = sigmoid (B,H) saved by sigmoid, mul");
    host_free(c1);
    float *c2 = ew(d, op_add, chunk(xres, H, 0, 3), chunk(s->zres, H, 0, 3), "xr + zr (B,H) temporary");
    s->sr = ew1(d, op_sigmoid, whole(c2, H), "r = sigmoid (B,H) saved by sigmoid, mul");
    host_free(c2);
    float *p = ew(d, op_mul, whole(s->sr, H), chunk(s->zres, H, 2, 3), "r zn (B,H) temporary");
    float *c3 = ew(d, op_add, chunk(xres, H, 2, 3), whole(p, H), "xn + r zn (B,H) temporary");
    float *tmp2[] = {p, xres};
    free_all(tmp2, 2);
    s->n = ew1(d, op_tanh, whole(c3, H), "n = tanh (B,H) saved by tanh");
    host_free(c3);
    s->d = ew(d, op_sub, whole(h, H), whole(s->n, H), "h - n (B,H) saved by mul(u, .)");
    float *q = ew(d, op_mul, whole(s->u, H), whole(s->d, H), "u (h - n) (B,H) temporary");
    s->h = ew(d, op_add, whole(s->n, H), whole(q, H), "h_t (B,H) saved by the next mm, in outputs");
    host_free(q);
}

float *naive_gru_forward(const gru_dims *d, const float *x, const float *h0, const float *eps,
                         const float *W_enc, const float *W_ih, const float *W_zh, gru_eager_saved *sv,
                         const gru_probe *probe)
{
    size_t BH = size_mul(d->B, d->H), BX = size_mul(d->B, d->X);
    gru_probe_call(probe, GRU_FWD_BEGIN, 0);
    sv->steps =
        host_alloc(size_mul(d->T, sizeof(gru_eager_step)), "autograd graph: saved pointers (T steps)");
    const float *h = h0;
    for (size_t t = 0; t < d->T; t++) {
        forward_step(d, h, x + t * BX, eps + t * BH, W_enc, W_ih, W_zh, &sv->steps[t]);
        sv->steps[t].gx = NULL;
        h = sv->steps[t].h;
        gru_probe_call(probe, GRU_FWD_STEP, t);
    }
    float *out = ten(gru_seq_count(d), "out = stack(outputs) (T,B,H) a copy");
    for (size_t t = 0; t < d->T; t++) memcpy(out + t * BH, sv->steps[t].h, BH * sizeof(float));
    return out;
}

/* A weight's gradient op(A)^T-style product for one step: the first step's result becomes autograd's buffer
 * (*acc), later steps make a temporary, add it in and drop it. */
static void weight_grad(float **acc, size_t M, size_t N, size_t K, const float *A, size_t lda, const float *G,
                        size_t ldg, const char *acc_label, const char *tmp_label)
{
    if (!*acc) {
        *acc = mm(1, 0, M, N, K, A, lda, G, ldg, acc_label);
        return;
    }
    float *tmp = mm(1, 0, M, N, K, A, lda, G, ldg, tmp_label);
    for (size_t i = 0; i < M * N; i++) (*acc)[i] += tmp[i];
    host_free(tmp);
}

/* torch.cat of three (B,H) gradients into a new (B,3H): chunk's backward */
static float *cat3(const gru_dims *d, const float *a, const float *b, const float *c, const char *label)
{
    size_t H = d->H;
    float *o = ten(size_mul(d->B, 3 * H), label);
    for (size_t i = 0; i < d->B; i++) {
        memcpy(o + i * 3 * H, a + i * H, H * sizeof(float));
        memcpy(o + i * 3 * H + H, b + i * H, H * sizeof(float));
        memcpy(o + i * 3 * H + 2 * H, c + i * H, H * sizeof(float));
    }
    return o;
}

/* The gate part of step t's backward, from gh (gradient of h_t): frees d, n, sr, u; returns in gxres and
 * gzres the gradients of x W_ih and z W_zh (B,3H) and in *gdd the gradient that reaches h_{t-1} through h -
 * n. */
static void gates_backward(const gru_dims *d, float *gh, int gh_owned, gru_eager_step *s, float **gxres,
                           float **gzres, float **gdd)
{
    size_t H = d->H;
    float *gu = ew(d, op_mul, whole(gh, H), whole(s->d, H), "bwd: grad u (B,H)");
    *gdd = ew(d, op_mul, whole(gh, H), whole(s->u, H), "bwd: grad (h - n) (B,H)");
    host_free(s->d);
    float *gn2 = ew1(d, op_neg, whole(*gdd, H), "bwd: -grad (h - n) (B,H)");
    float *gn = ew(d, op_add, whole(gh, H), whole(gn2, H), "bwd: grad n (B,H)");
    host_free(gn2);
    if (gh_owned) host_free(gh);
    float *gc3 = ew(d, op_dtanh, whole(gn, H), whole(s->n, H), "bwd: grad xn + r zn (B,H)");
    float *tmp[] = {gn, s->n};
    free_all(tmp, 2);
    float *gsr = ew(d, op_mul, whole(gc3, H), chunk(s->zres, H, 2, 3), "bwd: grad r (B,H)");
    float *gzn = ew(d, op_mul, whole(gc3, H), whole(s->sr, H), "bwd: grad zn (B,H)");
    float *gc2 = ew(d, op_dsigmoid, whole(gsr, H), whole(s->sr, H), "bwd: grad xr + zr (B,H)");
    float *tmp2[] = {gsr, s->sr};
    free_all(tmp2, 2);
    float *gc1 = ew(d, op_dsigmoid, whole(gu, H), whole(s->u, H), "bwd: grad xu + zu (B,H)");
    float *tmp3[] = {gu, s->u};
    free_all(tmp3, 2);
    *gxres = cat3(d, gc2, gc1, gc3, "bwd: grad x W_ih (B,3H) cat of chunks");
    *gzres = cat3(d, gc2, gc1, gzn, "bwd: grad z W_zh (B,3H) cat of chunks");
    float *tmp4[] = {gc2, gc1, gc3, gzn};
    free_all(tmp4, 4);
    s->d = s->n = s->sr = s->u = NULL;
}

/* The encoder part: from gz, through z = mean + eps e1, to pd = h W_enc. Frees e1 and gz; returns grad of h
 * through the mm. */
static float *encoder_backward(const gru_dims *d, const float *h, const float *eps_t, const float *W_enc,
                               float *gz, gru_eager_step *s, gru_grads *g)
{
    size_t B = d->B, H = d->H;
    float *ge1 = ew(d, op_mul, whole(gz, H), whole(eps_t, H), "bwd: grad e1 (B,H)");
    float *ga = ew(d, op_mul, whole(ge1, H), whole(s->e1, H), "bwd: grad 0.5 lv (B,H)");
    float *tmp[] = {ge1, s->e1};
    free_all(tmp, 2);
    float *glv = ew1(d, op_half, whole(ga, H), "bwd: grad lv (B,H)");
    host_free(ga);
    float *gpd = ten(size_mul(B, 2 * H), "bwd: grad pd (B,2H) cat of chunks");
    for (size_t i = 0; i < B; i++) {
        memcpy(gpd + i * 2 * H, gz + i * H, H * sizeof(float));
        memcpy(gpd + i * 2 * H + H, glv + i * H, H * sizeof(float));
    }
    float *tmp2[] = {gz, glv};
    free_all(tmp2, 2);
    float *ghb = mm(0, 1, B, H, 2 * H, gpd, 2 * H, W_enc, 2 * H, "bwd: grad h via mm(h, W_enc) (B,H)");
    weight_grad(&g->dW_enc, H, 2 * H, B, h, H, gpd, 2 * H, "dW_enc (H,2H)", "bwd: dW_enc of one step (H,2H)");
    host_free(gpd);
    s->e1 = NULL;
    return ghb;
}

/* Step t's backward: gh is the gradient of h_t (a view of dout for the last step, owned otherwise). Returns
 * the gradient of h_{t-1} (dh0 for t = 0). */
static float *step_backward(const gru_dims *d, size_t t, float *gh, int gh_owned, const float *x,
                            const float *h0, const float *eps, const float *W_enc, const float *W_ih,
                            const float *W_zh, const float *dout, gru_eager_saved *sv, gru_grads *g)
{
    size_t B = d->B, H = d->H, X = d->X, BH = B * H;
    gru_eager_step *s = &sv->steps[t];
    float *gxres, *gzres, *gdd;
    gates_backward(d, gh, gh_owned, s, &gxres, &gzres, &gdd);
    float *gz = mm(0, 1, B, H, 3 * H, gzres, 3 * H, W_zh, 3 * H, "bwd: grad z (B,H)");
    weight_grad(&g->dW_zh, H, 3 * H, B, s->z, H, gzres, 3 * H, "dW_zh (H,3H)",
                "bwd: dW_zh of one step (H,3H)");
    float *tmp[] = {gzres, s->z, s->zres};
    free_all(tmp, 3);
    s->gx = mm(0, 1, B, X, 3 * H, gxres, 3 * H, W_ih, 3 * H,
               "dx_t (B,X) held until unbind's backward stacks them");
    weight_grad(&g->dW_ih, X, 3 * H, B, x + t * B * X, X, gxres, 3 * H, "dW_ih (X,3H)",
                "bwd: dW_ih of one step (X,3H)");
    host_free(gxres);
    const float *h = t ? sv->steps[t - 1].h : h0;
    float *ghb = encoder_backward(d, h, eps + t * BH, W_enc, gz, s, g);
    if (t) { /* h_{t-1}'s last saver (this step's mm) has run */
        host_free(sv->steps[t - 1].h);
        sv->steps[t - 1].h = NULL;
    }
    float *gprev = ten(BH, t ? "bwd: grad h_{t-1} (B,H) = dout + both paths" : "dh0 (B,H)");
    for (size_t i = 0; i < BH; i++) gprev[i] = gdd[i] + ghb[i] + (t ? dout[(t - 1) * BH + i] : 0.0f);
    host_free(gdd);
    host_free(ghb);
    s->z = s->zres = NULL;
    return gprev;
}

void naive_gru_backward(const gru_dims *d, const float *x, const float *h0, const float *eps,
                        const float *W_enc, const float *W_ih, const float *W_zh, const float *dout,
                        gru_eager_saved *sv, gru_grads *g, const gru_probe *probe)
{
    size_t T = d->T, BH = size_mul(d->B, d->H), BX = size_mul(d->B, d->X);
    g->dW_enc = g->dW_ih = g->dW_zh = NULL;
    host_free(sv->steps[T - 1].h); /* the final hidden: returned to the caller, saved by no node */
    sv->steps[T - 1].h = NULL;
    /* the last step's gradient is the stack's backward: a view of dout, no allocation */
    float *gh = (float *)(dout + (T - 1) * BH);
    for (size_t t = T; t-- > 0;) {
        gh = step_backward(d, t, gh, t != T - 1, x, h0, eps, W_enc, W_ih, W_zh, dout, sv, g);
        gru_probe_call(probe, GRU_BWD_STEP, t);
    }
    g->dh0 = gh;
    g->dx = ten(gru_x_count(d), "dx = stack(dx_t) (T,B,X)");
    for (size_t t = 0; t < T; t++) {
        memcpy(g->dx + t * BX, sv->steps[t].gx, BX * sizeof(float));
        host_free(sv->steps[t].gx);
    }
    host_free(sv->steps);
    sv->steps = NULL;
    gru_probe_call(probe, GRU_BWD_END, 0);
}

size_t naive_gru_kept_per_step(const gru_dims *d) { return size_mul(size_mul(10, size_mul(d->B, d->H)), 4); }

/* Peaks, in bytes; v = one (B,H) f32 tensor. Forward: step t's ops reach 12v above the 10v t kept before it
 * (at xn + r zn: x W_ih 3v, r zn, the sum, and the step's 7v kept so far); then out (T v). Backward: the
 * session adds dout; the final hidden is dropped; each step's local maxima (gru_eager.c's op order) are the
 * two cat gradients (7v above the step's start), and each weight's gradient product; the first step's weight
 * gradients are the buffers and stay. Each later step frees 10v and keeps dx_t; dx = stack at the end. */
mem_formula naive_gru_memory(const gru_dims *d)
{
    size_t v = size_mul(4, size_mul(d->B, d->H)), gx = size_mul(4, size_mul(d->B, d->X));
    size_t Wz = size_mul(4, gru_wzh_count(d)), Wi = size_mul(4, gru_wih_count(d)),
           We = size_mul(4, gru_wenc_count(d));
    size_t T = d->T, tape = size_mul(T, sizeof(gru_eager_step));
    size_t base = size_add(gru_input_bytes(d), tape);
    size_t kept = size_mul(size_mul(10, v), T);
    mem_formula m;
    m.forward_live = size_add(size_add(base, kept), size_mul(T, v));
    size_t peak = size_add(size_add(base, size_mul(10, size_mul(T - 1, v))), size_mul(12, v));
    peak = peak > m.forward_live ? peak : m.forward_live;
    /* backward, as signed offsets from L = live at the start of step T-1 (forward_live + dout - v) */
    long long L = (long long)m.forward_live + (long long)size_mul(T, v) - (long long)v;
    long long sv = (long long)v, sgx = (long long)gx, sWz = (long long)Wz, sWi = (long long)Wi,
              sWe = (long long)We;
    long long cand[4] = {7 * sv, 4 * sv + sWz, -3 * sv + sgx + sWz + sWi, -5 * sv + sgx + sWz + sWi + sWe};
    long long best = L;
    for (int i = 0; i < 4; i++) best = L + cand[i] > best ? L + cand[i] : best;
    long long Lnext = L - 9 * sv + sgx + sWz + sWi + sWe; /* start of step T-2 */
    long long step = sgx - 10 * sv;                       /* each later step's net change */
    long long inner[4] = {6 * sv, 3 * sv + sWz, -4 * sv + sgx + sWi, -6 * sv + sgx + sWe};
    long long in_max = inner[0];
    for (int i = 1; i < 4; i++) in_max = inner[i] > in_max ? inner[i] : in_max;
    long long Lend = L - 8 * sv + sgx + sWz + sWi + sWe; /* after step 0 when T = 1 (h0 is not freed) */
    if (T >= 2) {
        long long Lfirst = Lnext, Llast = Lnext + (long long)(T - 2) * step; /* steps T-2 and 0 */
        long long hi = Lfirst > Llast ? Lfirst : Llast;
        best = hi + in_max > best ? hi + in_max : best;
        Lend = Llast + step + sv; /* step 0 does not free h0 */
    }
    long long stacked = Lend + (long long)T * sgx; /* dx = stack(dx_t) while the dx_t are still live */
    best = stacked > best ? stacked : best;
    m.peak = (size_t)best > peak ? (size_t)best : peak;
    m.allocs = size_add(size_mul(39, T), 10); /* 6 inputs, graph, 17/step, out, dout, 22/step, dx */
    return m;
}
