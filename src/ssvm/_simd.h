/* SSVM_CLONES: compile a loop of a kernel for AVX-512, AVX2 and the baseline, the version picked
   once per process for the CPU (GCC's function multi-versioning, on x86-64 Linux; elsewhere the
   baseline only). The kernels are compiled with -ffp-contract=off and write their sums' order
   down, so every version gives the same bits: only the registers are wider. */
#ifndef SSVM_SIMD_H
#define SSVM_SIMD_H
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define SSVM_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SSVM_CLONES
#endif
#endif
