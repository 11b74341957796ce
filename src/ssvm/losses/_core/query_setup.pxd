# One query's set-up in the compiled batch loops of QS's two paths (grid.pyx's grid_queries and
# sort_walk.pyx's walk_queries), written once: the work vectors grown to the query, its keys packed and
# its positives sorted (Algorithm 1 of Mohapatra et al.), and f_j of the built-in loss (AP or NDCG, log2).

from libc.stdint cimport int64_t, uint64_t
from libcpp.vector cimport vector

from .derivative cimport builtin_scale, make_objective, objective_t
from .sorting cimport positive_keys, query_keys, sort_work_t, unpack


cdef cppclass query_work_t:
    # the work memory both paths' loops use for each query (the paths' own work structs extend it)
    vector[uint64_t] buf   # the query's packed keys: positives (sorted), then negatives
    vector[double] sp      # the positives' scores in (−score, index) order
    vector[int64_t] pos_ids
    vector[int64_t] counts  # the ± pattern
    sort_work_t sort


cdef inline objective_t setup_query(const double* scores, const unsigned char* y, int64_t n, int64_t p, int kind,
                                    bint all_keys, const double* lt, int64_t lt_size, double* table,
                                    int64_t* shift, query_work_t* work) noexcept nogil:
    """The query ``scores[:n]`` (``p`` positives): its keys into ``work.buf`` (``all_keys``: the negatives'
    too, as the walk needs them; else only the positives', as the grid does), the positives sorted into
    ``work.sp`` and ``work.pos_ids``, the key shift into ``shift``; ``table`` (one entry, the caller's)
    gets the loss's scale. Returns the query's objective (``lt``, ``lt_size``: NDCG's 1/log2 table or
    NULL, 0)."""
    if <int64_t>work.buf.size() < n + 2:
        work.buf.resize(n + 2)
    if <int64_t>work.sp.size() < p + 1:
        work.sp.resize(p + 1)
        work.pos_ids.resize(p + 1)
    if <int64_t>work.counts.size() < p + 1:
        work.counts.resize(p + 1)
    if all_keys:
        shift[0] = query_keys(scores, y, n, p, work.buf.data(), &work.sort)
    else:
        shift[0] = positive_keys(scores, y, n, p, work.buf.data(), &work.sort)
    unpack(work.buf.data(), p, scores, shift[0], work.sp.data(), work.pos_ids.data())
    table[0] = builtin_scale(kind, p)
    return make_objective(work.sp.data(), p, n - p, kind, table, lt, lt_size)
