/* SSVM_KEEP_BRANCH(): keep the if/else it is written in as a jump, where the compiler would turn it
   into conditional moves (GCC's if-conversion at -O2/-O3).

   A conditional move waits for its condition, so in a loop whose next step depends on the choice
   (a bisection: lo or hi moves) every step's latency adds up: the SEARCH bisection's divide,
   compare and move, ~10 steps a negative, ran at 1.8x numba's time.  A jump is predicted instead,
   and where the choices repeat from one iteration of the outer loop to the next (consecutive
   negatives bisect along nearly the same path: opt_j is monotone in j) the CPU runs ahead of the
   arithmetic.  An empty volatile asm statement cannot be executed conditionally without a jump; it
   emits no instruction and changes no result.  Elsewhere than GCC or clang: nothing. */
#ifndef SSVM_BRANCHES_H
#define SSVM_BRANCHES_H
#if defined(__GNUC__)
#define SSVM_KEEP_BRANCH() __asm__ volatile("")
#else
#define SSVM_KEEP_BRANCH() ((void)0)
#endif
#endif
