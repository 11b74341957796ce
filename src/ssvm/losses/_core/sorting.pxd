# The sorting primitives of QS's walk, the graded kernel, the ranking by score and the dask giant query:
# packed keys, their sorts (radix, bucket), repair and unpack.  See sorting.pyx for the text.

from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.string cimport memcpy
from libcpp.vector cimport vector

cdef enum:
    INSERTION_MAX = 32  # sort_keys sorts up to this many keys by insertion


ctypedef struct buckets_t:
    # what bucket_keys leaves: bucket b ends at ends[b] (b < m); a key's bucket is key_bucket(key, ...)
    const int32_t* ends
    int64_t m
    double s_top
    double scale
    int64_t largest   # keys in the largest bucket


cdef cppclass sort_work_t:
    # work memory of sort_score_keys (reused from query to query)
    vector[int32_t] bucket
    vector[int32_t] ends
    vector[uint64_t] src


cdef inline uint64_t score_bits(double s) noexcept nogil:
    cdef uint64_t u
    memcpy(&u, &s, 8)
    return u


cdef inline double bits_score(uint64_t u) noexcept nogil:
    cdef double s
    memcpy(&s, &u, 8)
    return s


cdef inline uint64_t score_image(uint64_t u) noexcept nogil:
    """An order-preserving image of −score, from the score's bits ``u`` (−0.0 ties with +0.0)."""
    cdef uint64_t sign = (<uint64_t>1) << 63
    if u == sign:
        u = 0
    return ~(u ^ (((<uint64_t>0) - (u >> 63)) | sign))


cdef inline uint64_t pack_key(uint64_t u, uint64_t high, int64_t i) noexcept nogil:
    """The key of sample ``i`` whose score has the bits ``u``: the image of −score in the bits ``high``,
    the index in the others."""
    return (score_image(u) & high) | <uint64_t>i


cdef inline uint64_t low_mask(int64_t shift) noexcept nogil:
    return ((<uint64_t>1) << shift) - 1


cdef inline double key_score(uint64_t key, uint64_t high) noexcept nogil:
    """The score at the upper end of the interval a key's high bits pin (the image inverted, its
    truncated bits set): a non-increasing function of the key."""
    cdef uint64_t sign = (<uint64_t>1) << 63
    cdef uint64_t t = ~(key & high)
    return bits_score(t ^ sign if t & sign else ~t)


cdef inline int64_t key_bucket(uint64_t key, uint64_t high, double s_top, double scale, int64_t m) noexcept nogil:
    """The bucket of a key in bucket_keys (``m`` buckets)."""
    cdef int64_t b = <int64_t>((s_top - key_score(key, high)) * scale)
    return b if b < m - 1 else m - 1


cpdef int64_t index_bits(int64_t n) noexcept nogil
cdef void insertion_sort(uint64_t* keys, int64_t n) noexcept nogil
cdef void sort_keys(uint64_t* keys, int64_t n) noexcept nogil
cdef void radix_sort_high(uint64_t* keys, int64_t n, int64_t shift, uint64_t* work) noexcept nogil
cdef buckets_t bucket_keys(uint64_t* keys, int64_t n, int64_t shift, sort_work_t* work) noexcept nogil
cdef void sort_buckets(uint64_t* keys, int64_t n, const buckets_t* buckets) noexcept nogil
cdef void sort_score_keys(uint64_t* keys, int64_t n, int64_t shift, sort_work_t* work) noexcept nogil
cdef int64_t repair_run(uint64_t* keys, int64_t n, int64_t a, const double* scores, int64_t shift) noexcept nogil
cdef void repair(uint64_t* keys, int64_t n, const double* scores, int64_t shift) noexcept nogil
cdef void unpack(const uint64_t* keys, int64_t n, const double* scores, int64_t shift, double* vals,
                 int64_t* ids) noexcept nogil
cdef void pack_all(const double* scores, int64_t n, int64_t shift, uint64_t* keys) noexcept nogil
cdef void pack(const double* scores, const unsigned char* y, int64_t n, int64_t shift, uint64_t* pos,
               uint64_t* neg) noexcept nogil
cdef int64_t positive_keys(const double* scores, const unsigned char* y, int64_t n, int64_t n_pos, uint64_t* buf,
                           sort_work_t* work) noexcept nogil
cdef int64_t query_keys(const double* scores, const unsigned char* y, int64_t n, int64_t n_pos, uint64_t* buf,
                        sort_work_t* work) noexcept nogil
