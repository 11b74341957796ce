/* The bins of QS's score grid (grid.pyx, step 1): for every sample, b = max(floor(s * 2^-e) - base, 0) when
 * s <= hi, else -1 (above the grid).  s * 2^-e is exact (a power of two), and floor and the subtraction of the
 * grid's base stay in float64 (integers below 2^51: exact) until the bin, clamped at 0, is small enough for an
 * int32; a negative score whose product underflows to -0 floors to -1, as a negative number must.
 *
 * One loop over the scores, compiled for several x86-64 levels by GCC function multi-versioning (the wheel is
 * built for baseline x86-64, where floor is a library call; from SSE4.1 on it is one instruction, and AVX2 /
 * AVX-512 do it four or eight samples at a time); the loader picks the best the CPU has.  Elsewhere it is the
 * plain loop. */
#ifndef SSVM_GRID_BIN_H
#define SSVM_GRID_BIN_H

#include <cstdint>

/* no-trapping-math: the comparisons may be evaluated for every lane (floating-point exception flags are not
 * used by anything here; no result changes), which lets the selects vectorise */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define SSVM_GRID_BIN_CLONES \
    __attribute__((target_clones("avx512f", "avx2", "sse4.1", "default"), optimize("no-trapping-math")))
#elif defined(__GNUC__) && !defined(__clang__)
#define SSVM_GRID_BIN_CLONES __attribute__((optimize("no-trapping-math")))
#else
#define SSVM_GRID_BIN_CLONES
#endif

SSVM_GRID_BIN_CLONES
static void ssvm_grid_bins(const double* scores, int64_t n, double inv_w, int64_t base, double hi, int32_t* bins) {
    const double base_d = (double)base;
    for (int64_t i = 0; i < n; i++) {  /* selects, no branches: the loop vectorises */
        const double s = scores[i];
        const double x = __builtin_floor(s * inv_w);
        const double f = ((s < 0.0) & (x >= 0.0)) ? -1.0 : x;  /* the product underflowed to -0 */
        const double b = f - base_d;
        const double clamped = b > 0.0 ? b : 0.0;               /* bin 0 also holds everything below the grid */
        bins[i] = (int32_t)(s > hi ? -1.0 : clamped);
    }
}

#endif
