/* predict_gemm.cc - TEST-ONLY: the time model's cuBLAS figure for a list of matrix products (emu_gpu.cc's stated
 * efficiency model, the one every cuBLAS call of a lesson is predicted by), to set a version's own kernels beside
 * the same products through cuBLAS.
 *
 *   predict_gemm H100 8192,128256,4096 8192,4096,128256
 *   predict_gemm H100 --fp32 200,200,500,39
 *
 * Each argument after the GPU is one product M,N,K, or a strided batch of BATCH of them M,N,K,BATCH, with bf16
 * operands on the tensor cores, or float32 ones on the FP32 pipes after --fp32 (cublasSgemm*); prints each
 * product's time and the sum, in ms, labelled a model. */
#include "emu_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int fp32 = argc > 2 && !strcmp(argv[2], "--fp32"), first = 2 + fp32;
    if (argc <= first) {
        fprintf(stderr, "usage: predict_gemm GPU [--fp32] M,N,K[,BATCH] [M,N,K[,BATCH] ...]\n");
        return 2;
    }
    double total = 0;
    for (int i = first; i < argc; i++) {
        double m, n, k, batch = 1;
        emu_model_prediction p;
        int got = sscanf(argv[i], "%lf,%lf,%lf,%lf", &m, &n, &k, &batch);
        if (got < 3 || m < 1 || n < 1 || k < 1 || batch < 1) {
            fprintf(stderr, "predict_gemm: '%s': expected M,N,K or M,N,K,BATCH (positive)\n", argv[i]);
            return 2;
        }
        if (!emu_model_predict_gemm(argv[1], m, n, k, batch, fp32 ? 4 : 2, !fp32, &p)) {
            fprintf(stderr, "predict_gemm: unknown GPU '%s'\n", argv[1]);
            return 2;
        }
        printf("  %s %s GEMM m=%.0f n=%.0f k=%.0f", argv[1], fp32 ? "fp32" : "bf16", m, n, k);
        if (batch > 1) printf(" x %.0f", batch);
        printf(": %.3f ms (%s; %.0f tiles of 128 x 128 in %.0f waves)\n", p.seconds * 1e3, p.limiter,
               ceil(m / 128.0) * ceil(n / 128.0) * batch, p.waves);
        total += p.seconds;
    }
    printf("%.3f ms in all: cuBLAS by the time model's stated efficiency, a MODEL of %s, not a measurement\n",
           total * 1e3, argv[1]);
    return 0;
}
