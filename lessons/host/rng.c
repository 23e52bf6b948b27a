/* rng.c - xoshiro256** (Blackman and Vigna's published algorithm) and Box-Muller normals. */
#include "rng.h"
#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void rng_seed(rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
    r->has_spare = 0;
    r->spare = 0.0;
}

uint64_t rng_u64(rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double rng_uniform(rng *r) { return (double)(rng_u64(r) >> 11) * 0x1.0p-53; }

double rng_normal(rng *r)
{
    if (r->has_spare) {
        r->has_spare = 0;
        return r->spare;
    }
    double u1 = 1.0 - rng_uniform(r); /* (0, 1]: log never sees 0 */
    double u2 = rng_uniform(r);
    double rad = sqrt(-2.0 * log(u1)), ang = 2.0 * 3.14159265358979323846 * u2;
    r->spare = rad * sin(ang);
    r->has_spare = 1;
    return rad * cos(ang);
}

void rng_fill_uniform_f32(rng *r, float *p, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++) p[i] = lo + (hi - lo) * (float)rng_uniform(r);
}

void rng_fill_normal_f32(rng *r, float *p, size_t n, float mean, float std)
{
    for (size_t i = 0; i < n; i++) p[i] = mean + std * (float)rng_normal(r);
}

void rng_fill_normal_f64(rng *r, double *p, size_t n, double mean, double std)
{
    for (size_t i = 0; i < n; i++) p[i] = mean + std * rng_normal(r);
}
