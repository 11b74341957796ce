/* ssvm::thread_work<W>(): the work memory of a kernel's Python entry, one W per thread, kept from
   call to call.

   The work vectors of a 10^6-row query hold megabytes. Allocated afresh each call, glibc hands
   such blocks back to the system when they are freed (they are mmapped, or trimmed from the top of
   the heap), so the next call faults every 4 KiB page in again and zeroes it: ~2,400 page faults a
   call on the grid path at N = 10^6, a third of its time. numba's kernels kept theirs in the heap
   by chance (numpy's allocation pattern). Kept per thread, a vector that is already large enough is
   not reallocated (resize to a size it had is free; assign still writes its values), so a call
   faults nothing in. The cost: each thread that ran an entry holds the work memory of the largest
   query it solved (about 30 bytes a row on the grid path) until it ends. One per thread, so calls in
   several threads (dask, joblib: the kernels release the GIL) never share it; a kernel never calls
   another entry, so a thread never uses its W twice at once. */
#ifndef SSVM_WORK_MEMORY_H
#define SSVM_WORK_MEMORY_H

namespace ssvm {

template <class W>
W* thread_work() {
    static thread_local W work;
    return &work;
}

}  // namespace ssvm
#endif
