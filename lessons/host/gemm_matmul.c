/* gemm_matmul.c - oneDNN matmul primitives, created once per shape and cached (see gemm_matmul.h).
 *
 * The memory objects wrap the caller's pointers (no copy): each call only rebinds their data handles. A sum
 * post-op gives beta (dst = alpha acc + beta dst), output scales give alpha. oneDNN's own buffers (its
 * scratchpad, the JIT code) are the library's, like OpenBLAS's packing buffers: not a lesson's memory. */
#include "gemm_matmul.h"

#include <dnnl.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    int used;
    unsigned long long last; /* call counter at the last use: the least recent is replaced */
    gemm_mm_type t;
    int ta, tb;
    size_t M, N, K, lda, ldb, ldc;
    float alpha, beta;
    dnnl_primitive_t prim;
    dnnl_memory_t a, b, c; /* (M, K), (K, N), (M, N) over the caller's pointers */
} mm_entry;

enum { MM_CACHE = 32 }; /* a lesson's CPU version uses a handful of shapes (full and last panels, per pass) */
static mm_entry cache[MM_CACHE];
static unsigned long long calls;
static dnnl_engine_t engine;
static dnnl_stream_t stream;

static int ok(dnnl_status_t s) { return s == dnnl_success; }

static int start(void)
{
    if (engine) return 0;
    if (!ok(dnnl_engine_create(&engine, dnnl_cpu, 0)) ||
        !ok(dnnl_stream_create(&stream, engine, dnnl_stream_default_flags))) {
        fprintf(stderr, "gemm_matmul: oneDNN could not create its CPU engine and stream\n");
        abort();
    }
    return 0;
}

/* The row-major (rows, cols) view of a stored operand: strides {ld, 1}, or {1, ld} for a transposed one. */
static void describe(dnnl_memory_desc_t *md, dnnl_data_type_t dt, size_t rows, size_t cols, int trans,
                     size_t ld)
{
    dnnl_dims_t dims = {(dnnl_dim_t)rows, (dnnl_dim_t)cols};
    dnnl_dims_t strides = {trans ? 1 : (dnnl_dim_t)ld, trans ? (dnnl_dim_t)ld : 1};
    dnnl_memory_desc_init_by_strides(md, 2, dims, dt, strides);
}

static void entry_destroy(mm_entry *e)
{
    if (e->prim) dnnl_primitive_destroy(e->prim);
    if (e->a) dnnl_memory_destroy(e->a);
    if (e->b) dnnl_memory_destroy(e->b);
    if (e->c) dnnl_memory_destroy(e->c);
    *e = (mm_entry){0};
}

/* The primitive descriptor of the product, or NULL when oneDNN has none. */
static dnnl_primitive_desc_t make_pd(const mm_entry *e, dnnl_memory_desc_t *a, dnnl_memory_desc_t *b,
                                     dnnl_memory_desc_t *c)
{
    dnnl_data_type_t dt = e->t == GEMM_MM_BF16 ? dnnl_bf16 : dnnl_f32;
    describe(a, dt, e->M, e->K, e->ta, e->lda);
    describe(b, dt, e->K, e->N, e->tb, e->ldb);
    describe(c, dnnl_f32, e->M, e->N, 0, e->ldc);
    dnnl_matmul_desc_t desc;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t po = NULL;
    dnnl_primitive_desc_t pd = NULL;
    if (!ok(dnnl_matmul_desc_init(&desc, a, b, NULL, c)) || !ok(dnnl_primitive_attr_create(&attr))) goto done;
    if (e->alpha != 1.0f && !ok(dnnl_primitive_attr_set_output_scales(attr, 1, 0, &e->alpha))) goto done;
    if (e->beta != 0.0f) {
        if (!ok(dnnl_post_ops_create(&po)) || !ok(dnnl_post_ops_append_sum(po, e->beta)) ||
            !ok(dnnl_primitive_attr_set_post_ops(attr, po)))
            goto done;
    }
    if (!ok(dnnl_primitive_desc_create(&pd, &desc, attr, engine, NULL))) pd = NULL;
done:
    if (po) dnnl_post_ops_destroy(po);
    if (attr) dnnl_primitive_attr_destroy(attr);
    return pd;
}

static int entry_create(mm_entry *e)
{
    dnnl_memory_desc_t a, b, c;
    dnnl_primitive_desc_t pd = make_pd(e, &a, &b, &c);
    if (!pd) return -1;
    int good = ok(dnnl_primitive_create(&e->prim, pd)) && ok(dnnl_memory_create(&e->a, &a, engine, NULL)) &&
               ok(dnnl_memory_create(&e->b, &b, engine, NULL)) &&
               ok(dnnl_memory_create(&e->c, &c, engine, NULL));
    dnnl_primitive_desc_destroy(pd);
    if (!good) {
        entry_destroy(e);
        return -1;
    }
    e->used = 1;
    return 0;
}

static int same(const mm_entry *e, const mm_entry *k)
{
    return e->used && e->t == k->t && e->ta == k->ta && e->tb == k->tb && e->M == k->M && e->N == k->N &&
           e->K == k->K && e->lda == k->lda && e->ldb == k->ldb && e->ldc == k->ldc && e->alpha == k->alpha &&
           e->beta == k->beta;
}

/* The cached primitive of this shape, created in the least recently used slot when missing; NULL if none. */
static mm_entry *lookup(const mm_entry *key)
{
    mm_entry *victim = &cache[0];
    for (int i = 0; i < MM_CACHE; i++) {
        if (same(&cache[i], key)) return &cache[i];
        if (!cache[i].used || (victim->used && cache[i].last < victim->last)) victim = &cache[i];
    }
    entry_destroy(victim);
    *victim = *key;
    return entry_create(victim) == 0 ? victim : NULL;
}

int gemm_matmul(gemm_mm_type t, int transA, int transB, size_t M, size_t N, size_t K, float alpha,
                const void *A, size_t lda, const void *B, size_t ldb, float beta, float *C, size_t ldc)
{
    start();
    mm_entry key = {.t = t, .ta = !!transA, .tb = !!transB, .M = M, .N = N, .K = K, .lda = lda, .ldb = ldb,
                    .ldc = ldc, .alpha = alpha, .beta = beta};
    mm_entry *e = lookup(&key);
    if (!e) return -1;
    e->last = ++calls;
    dnnl_memory_set_data_handle(e->a, (void *)A);
    dnnl_memory_set_data_handle(e->b, (void *)B);
    dnnl_memory_set_data_handle(e->c, C);
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, e->a}, {DNNL_ARG_WEIGHTS, e->b}, {DNNL_ARG_DST, e->c}};
    if (!ok(dnnl_primitive_execute(e->prim, stream, 3, args)) || !ok(dnnl_stream_wait(stream))) {
        fprintf(stderr, "gemm_matmul: oneDNN failed to run a [%zu, %zu, %zu] matmul\n", M, N, K);
        abort();
    }
    return 0;
}

const char *gemm_matmul_kernel(gemm_mm_type t, int transA, int transB, size_t pad, float beta)
{
    static char name[2][64];
    start();
    size_t ld = 256 + pad;
    mm_entry key = {.t = t, .ta = transA, .tb = transB, .M = 256, .N = 256, .K = 256, .lda = ld, .ldb = ld,
                    .ldc = ld, .alpha = 1.0f, .beta = beta};
    dnnl_memory_desc_t a, b, c;
    dnnl_primitive_desc_t pd = make_pd(&key, &a, &b, &c);
    if (!pd) return NULL;
    const char *impl = NULL;
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    snprintf(name[t], sizeof name[t], "%s", impl ? impl : "?");
    dnnl_primitive_desc_destroy(pd);
    return name[t];
}

const char *gemm_onednn_isa(void)
{
    switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_mic: return "avx512_mic";
    case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    default: return "baseline";
    }
}
