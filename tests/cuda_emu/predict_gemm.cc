/* predict_gemm.cc - TEST-ONLY: the time model's cuBLAS figure for a list of matrix products (emu_gpu.cc's stated
 * efficiency model, the one every cuBLAS call of a lesson is predicted by), to set a version's own kernels beside
 * the same products through cuBLAS.
 *
 *   predict_gemm H100 8192,128256,4096 8192,4096,128256
 *
 * Each argument after the GPU is one product M,N,K with bf16 operands on the tensor cores; prints each product's
 * time and the sum, in ms, labelled a model. */
#include "emu_model.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: predict_gemm GPU M,N,K [M,N,K ...]\n");
        return 2;
    }
    double total = 0;
    for (int i = 2; i < argc; i++) {
        double m, n, k;
        emu_model_prediction p;
        if (sscanf(argv[i], "%lf,%lf,%lf", &m, &n, &k) != 3 || m < 1 || n < 1 || k < 1) {
            fprintf(stderr, "predict_gemm: '%s': expected M,N,K (positive)\n", argv[i]);
            return 2;
        }
        if (!emu_model_predict_gemm(argv[1], m, n, k, 1, 2, 1, &p)) {
            fprintf(stderr, "predict_gemm: unknown GPU '%s'\n", argv[1]);
            return 2;
        }
        printf("  %s bf16 GEMM m=%.0f n=%.0f k=%.0f: %.3f ms (%s)\n", argv[1], m, n, k, p.seconds * 1e3, p.limiter);
        total += p.seconds;
    }
    printf("%.3f ms in all: cuBLAS by the time model's stated efficiency, a MODEL of %s, not a measurement\n",
           total * 1e3, argv[1]);
    return 0;
}
