/* rng.h - a small deterministic random number generator (xoshiro256**, seeded through splitmix64).
 *
 * Every lesson draws its inputs from --seed, so a run is reproducible bit for bit on any machine, and tests
 * draw fresh random inputs (never zeros, never a constant) from fixed seeds.
 */
#ifndef KERNELS_RNG_H
#define KERNELS_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t s[4];
    int has_spare; /* Box-Muller makes normals in pairs */
    double spare;
} rng;

void rng_seed(rng *r, uint64_t seed);
uint64_t rng_u64(rng *r);
double rng_uniform(rng *r);                      /* [0, 1), 53 random bits */
double rng_normal(rng *r);                       /* mean 0, standard deviation 1 */
void rng_fill_uniform_f32(rng *r, float *p, size_t n, float lo, float hi); /* [lo, hi) */
void rng_fill_normal_f32(rng *r, float *p, size_t n, float mean, float std);
void rng_fill_normal_f64(rng *r, double *p, size_t n, double mean, double std);

#endif
